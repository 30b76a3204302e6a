# tfc compile --precision (issue 28): fp32 everywhere (the default), tf32
# and bf16 only for --target=cuda, where cuBLASLt runs the GEMMs; tests/lit/
# lowering/cuda/precision.tf checks what their manifests say. A value that is
# no precision, or tf32/bf16 for a CPU target, is a usage error (2).
# RUN: %python %S/Inputs/exit_status.py 0 tfc compile %s --emit=linalg --precision fp32
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --precision fp16 | FileCheck %s --check-prefix=UNKNOWN
# UNKNOWN: tfc: error: --precision must be fp32, tf32 or bf16, got 'fp16'
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --precision tf32 | FileCheck %s --check-prefix=CPU
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cpu --precision tf32 | FileCheck %s --check-prefix=CPU
# CPU: tfc: error: TF32 is a GPU precision: --precision tf32 needs --target=cuda{{$}}
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --precision bf16 | FileCheck %s --check-prefix=CPU-BF16
# CPU-BF16: tfc: error: bf16 is a GPU precision: --precision bf16 needs --target=cuda{{$}}
# The emulated target runs the CPU's fp32 sgemm: TF32 or bf16 there would be
# a promise it does not keep (and parity with the CPU build its purpose).
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda-emulated --precision tf32 | FileCheck %s --check-prefix=EMULATED
# EMULATED: tfc: error: TF32 is a GPU precision: --precision tf32 needs --target=cuda (--target=cuda-emulated runs the CPU's fp32 GEMMs)
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda-emulated --precision bf16 | FileCheck %s --check-prefix=EMULATED-BF16
# EMULATED-BF16: tfc: error: bf16 is a GPU precision: --precision bf16 needs --target=cuda (--target=cuda-emulated runs the CPU's fp32 GEMMs)
model m {
  input x: f32[batch, 4]
  output y = relu(x)
}
