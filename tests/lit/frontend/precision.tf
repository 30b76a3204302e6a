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
# EMULATED-BF16: tfc: error: bf16 is a GPU precision: --precision bf16 needs --target=cuda (--target=cuda-emulated runs the CPU's fp32 GEMMs; --bf16-operands=all rounds their operands to bf16 as the GPU does)
# --bf16-operands (tf-bf16-gemm-operands): large, all or none; for the GPU's
# GEMMs only, and on --target=cuda with --precision bf16 only (it is bf16
# arithmetic); cuda-emulated takes it alone, to check the copies on the CPU;
# persistent kernels have no cuBLASLt to read them.
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda-emulated --bf16-operands=half | FileCheck %s --check-prefix=OPERANDS
# OPERANDS: tfc: error: --bf16-operands must be large, all or none, got 'half'
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --bf16-operands=all | FileCheck %s --check-prefix=OPERANDS-CPU
# OPERANDS-CPU: tfc: error: --bf16-operands=all is for the GPU's GEMMs: it needs --target=cuda (or cuda-emulated)
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda-emulated --persistent-kernels --bf16-operands=large | FileCheck %s --check-prefix=OPERANDS-PERSISTENT
# OPERANDS-PERSISTENT: tfc: error: --persistent-kernels computes every GEMM in generated fp32 code (no cuBLASLt): --bf16-operands=large needs the default, graph-replayed step
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda-emulated --bf16-keep-activation-copies | FileCheck %s --check-prefix=KEEP-NONE
# KEEP-NONE: tfc: error: --bf16-keep-activation-copies keeps the bf16 copies of --bf16-operands: it needs --precision bf16 (or --bf16-operands=large|all on cuda-emulated)
# RUN: %python %S/Inputs/exit_status.py 0 tfc compile %s --target=cuda-emulated --bf16-operands=all --bf16-keep-activation-copies --emit=buffers
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda --no-bf16-activations | FileCheck %s --check-prefix=ACTIVATIONS-NONE
# ACTIVATIONS-NONE: tfc: error: --no-bf16-activations keeps fp32 activations beside the bf16 copies of --bf16-operands: it needs --precision bf16 (or --bf16-operands=large|all on cuda-emulated)
# RUN: %python %S/Inputs/exit_status.py 0 tfc compile %s --target=cuda-emulated --bf16-operands=all --no-bf16-activations --emit=buffers
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda --precision tf32 --no-bf16-attention-outputs | FileCheck %s --check-prefix=ATTENTION-NONE
# ATTENTION-NONE: tfc: error: --no-bf16-attention-outputs leaves the attention outputs' bf16 copies of --bf16-operands to loop nests: it needs --precision bf16 (or --bf16-operands=large|all on cuda-emulated)
# RUN: %python %S/Inputs/exit_status.py 0 tfc compile %s --target=cuda-emulated --bf16-operands=all --no-bf16-attention-outputs --emit=buffers
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --target=cuda --no-bf16-gemm-results | FileCheck %s --check-prefix=RESULTS-NONE
# RESULTS-NONE: tfc: error: --no-bf16-gemm-results keeps the products of --bf16-operands' copies in fp32: it needs --precision bf16 (or --bf16-operands=large|all on cuda-emulated)
# RUN: %python %S/Inputs/exit_status.py 0 tfc compile %s --target=cuda-emulated --bf16-operands=all --no-bf16-gemm-results --emit=buffers
# RUN: %python %S/Inputs/exit_status.py 0 tfc compile %s --target=cuda-emulated --bf16-operands=all --emit=buffers
# RUN: %python %S/Inputs/exit_status.py 0 tfc compile %s --bf16-operands=none --emit=linalg
model m {
  input x: f32[batch, 4]
  output y = relu(x)
}
