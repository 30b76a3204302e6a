# --persistent-kernels (issue 28): each entry one persistent kernel whose
# phases are the step's loop nests (GEMMs, attention, layer norm and
# cross-entropy in generated code), grid barriers between them. Checked
# where there is no GPU, with every seed model compiled so for cuda-emulated
# (each phase a parallel loop over the grid's blocks and threads, one after
# another) against the CPU build, with the GPU tolerances and train_step
# twice the same bytes (tools/gpu/parity.py).
# RUN: rm -rf %t && mkdir -p %t
# RUN: for m in reverse set_anomaly fleuret_cnn fleuret_attention encoder_decoder; do \
# RUN:   tfc compile %models/$m.tf --batch 4 -o %t/$m.cpu && \
# RUN:   tfc compile %models/$m.tf --batch 4 --target=cuda-emulated --persistent-kernels -o %t/$m.persistent && \
# RUN:   %python %S/../../../tools/gpu/parity.py --cpu %t/$m.cpu --cuda %t/$m.persistent --work %t/$m --repeat || exit 1; \
# RUN: done | FileCheck %s
# CHECK-COUNT-20: PASS {{.*}}
# CHECK-NOT: FAIL
# The decomposed layers without grid chains (--no-runtime-kernels): a train
# step's loss read the log-softmax before it was written when tf-group-loops
# missed the load in cross-entropy's body.
# RUN: tfc compile %models/reverse.tf --batch 4 --target=cuda-emulated --no-runtime-kernels -o %t/reverse.decomposed
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/reverse.cpu --cuda %t/reverse.decomposed --work %t/decomposed \
# RUN:   | FileCheck %s --check-prefix=DECOMPOSED
# DECOMPOSED: PASS reverse train_step GPU vs CPU
# DECOMPOSED-NOT: FAIL
# For the GPU, every entry is one cooperative launch of a kernel with grid
# barriers, no GEMM or layer call; the barrier defined once in the module.
# RUN: tfc compile %models/reverse.tf --target=cuda --persistent-kernels --emit=gpu -o %t/reverse.gpu.mlir
# RUN: FileCheck %s --check-prefix=GPU < %t/reverse.gpu.mlir
# GPU-LABEL: func.func @train_step(
# GPU-NOT: call @tfc_cuda
# GPU: gpu.launch_func  @tfc_kernels::@tfc_k0 blocks in (%c264, %c1, %c1) threads in (%c256, %c1, %c1) {{.*}} {tfc.cooperative}
# GPU-NOT: gpu.launch_func
# GPU-NOT: call @tfc_cuda
# GPU: return
# GPU: gpu.module @tfc_kernels {
# GPU-NEXT: llvm.mlir.global internal @tfc_grid_state
# GPU: func.func private @tfc_grid_sync() {
# GPU-NEXT: gpu.barrier
# GPU-NOT: @tfc_grid_state(
# GPU-LABEL: func.func @grad_step(
# Usage errors: a GPU mode, and fp32 only (no cuBLASLt to take TF32).
# RUN: not tfc compile %models/reverse.tf --persistent-kernels -o %t/x 2>&1 | FileCheck %s --check-prefix=CPU
# CPU: tfc: error: --persistent-kernels is a GPU mode: it needs --target=cuda (or cuda-emulated)
# RUN: not tfc compile %models/reverse.tf --target=cuda --persistent-kernels --precision tf32 -o %t/x 2>&1 \
# RUN:   | FileCheck %s --check-prefix=PRECISION
# PRECISION: tfc: error: --persistent-kernels computes every GEMM in generated fp32 code (no cuBLASLt): --precision tf32 needs the default, graph-replayed step
