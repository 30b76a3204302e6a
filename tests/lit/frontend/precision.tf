# tfc compile --precision (issue 28): fp32 everywhere (the default), tf32
# only for --target=cuda, where cuBLASLt runs the GEMMs; tests/lit/lowering/
# cuda/precision.tf checks what a tf32 model's manifest says. bf16 is known
# and not built yet (exit status 1, like a target this tfc cannot build); a
# value that is no precision, or tf32 for a CPU target, is a usage error (2).
# RUN: %python %S/Inputs/exit_status.py 0 tfc compile %s --emit=linalg --precision fp32
# RUN: %python %S/Inputs/exit_status.py 1 tfc compile %s --precision bf16 | FileCheck %s --check-prefix=BF16
# BF16: tfc: error: --precision bf16 is not implemented yet (issue 28); use fp32 or tf32
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --precision fp16 | FileCheck %s --check-prefix=UNKNOWN
# UNKNOWN: tfc: error: --precision must be fp32 or tf32, got 'fp16'
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --precision tf32 | FileCheck %s --check-prefix=CPU
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cpu --precision tf32 | FileCheck %s --check-prefix=CPU
# CPU: tfc: error: TF32 is a GPU precision: --precision tf32 needs --target=cuda{{$}}
# The emulated target runs the CPU's fp32 sgemm: TF32 there would be a
# promise it does not keep (and parity with the CPU build its purpose).
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda-emulated --precision tf32 | FileCheck %s --check-prefix=EMULATED
# EMULATED: tfc: error: TF32 is a GPU precision: --precision tf32 needs --target=cuda (--target=cuda-emulated runs the CPU's fp32 GEMMs)
# Nothing is compiled before the check: no toolkit is needed to be told.
# RUN: %python %S/Inputs/exit_status.py 1 tfc compile %s --target=cuda --precision bf16 --cuda-path=%t.no-toolkit | FileCheck %s --check-prefix=BF16
model m {
  input x: f32[batch, 4]
  output y = relu(x)
}
