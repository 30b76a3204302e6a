# tfc compile --target=cuda --emit=gpu: the entries after tf-map-to-gpu,
# outlining and tf-merge-gpu-modules. The GEMM calls the runtime's
# tfc_cuda_sgemm on device memory; every other loop nest is one launch of a
# kernel of the one module @tfc_kernels, numbered in launch order; the host
# code touches no memory itself (no load or store outside a kernel). Needs
# no toolkit: nothing is assembled yet.
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --emit=gpu --cuda-path=%t.no-cuda | FileCheck %s
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --emit=gpu --cuda-path=%t.no-cuda | FileCheck %s --check-prefix=MAX
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --emit=gpu --no-merge-launches --cuda-path=%t.no-cuda | FileCheck %s --check-prefix=SEPARATE
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --emit=gpu --no-launch-tails --cuda-path=%t.no-cuda | FileCheck %s --check-prefix=NO-TAILS --implicit-check-not=tfc_last_block

# The max over a row, in some kernel: a serial loop in the thread, its
# accumulator in a register.
# MAX: gpu.module @tfc_kernels
# MAX: scf.for {{.*}} iter_args
# MAX-NEXT: memref.load
# MAX: arith.maximumf

# CHECK: module attributes {gpu.container_module
# CHECK: func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
# CHECK-LABEL: func.func @predict
# CHECK-SAME: (%[[X:.+]]: memref<2x4xf32>, %[[W:.+]]: memref<3x4xf32>, %[[B:.+]]: memref<3xf32>, %[[Y:.+]]: memref<2x3xf32>, %[[Z:.+]]: memref<2x4xf32>, %[[ARENA:.+]]: memref<?xi8>)
# CHECK-NOT: memref.load
# CHECK-NOT: memref.store
# CHECK: call @tfc_cuda_sgemm(
# Softmax's row max beside z's elementwise loop (independent: one launch of
# two blocks, tf-merge-launches), then its sum and its normalised output into
# y: small launches that read the row max, so the tail of that launch (the
# block that finishes last runs them), the sum on its first two threads, a
# barrier, then the six outputs. One kernel, launched once.
# CHECK: gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1) args({{.*}}%[[X]] : memref<2x4xf32>, %[[Z]] : memref<2x4xf32>, {{.*}}%[[Y]] : memref<2x3xf32>)
# CHECK-NOT: memref.load
# CHECK-NOT: memref.store
# CHECK-NOT: gpu.launch_func
# CHECK: return
# CHECK: gpu.module @tfc_kernels {
# CHECK: llvm.mlir.global internal @tfc_last_block_ticket(0 : i32)
# CHECK: gpu.func @tfc_k0(%{{.+}}: memref<{{.+}}) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 2, 1, 1>}
# CHECK-NOT: gpu.barrier
# CHECK: %[[LAST:.+]] = func.call @tfc_last_block() : () -> i1
# CHECK-NEXT: scf.if %[[LAST]] {
# CHECK-NEXT: arith.cmpi ult, %thread_id_x, %c2
# CHECK: memref.store
# CHECK-NEXT: }
# CHECK-NEXT: gpu.barrier
# CHECK-NEXT: arith.cmpi ult, %thread_id_x, %c6
# CHECK: arith.divf
# CHECK-NOT: gpu.barrier
# CHECK-NOT: gpu.func
# The ticket's definition (tf-grid-sync).
# CHECK: func.func private @tfc_last_block() -> i1
# CHECK-NOT: gpu.func
# CHECK-NOT: gpu.module

# --no-launch-tails: the max beside z's loop one launch, then the sum and the
# outputs one block (a chain), no ticket.
# NO-TAILS-LABEL: func.func @predict
# NO-TAILS: gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c2, %c1, %c1)
# NO-TAILS: gpu.launch_func @tfc_kernels::@tfc_k1 blocks in (%c1, %c1, %c1)
# NO-TAILS-NOT: gpu.launch_func

# --no-merge-launches: a launch each loop nest, z's last (each launch after its
# tfc_cuda_graph_node: tf-graph-dependencies).
# SEPARATE: gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(
# SEPARATE: gpu.launch_func @tfc_kernels::@tfc_k1 blocks
# SEPARATE: gpu.launch_func @tfc_kernels::@tfc_k{{[0-9]+}} {{.*}}, %[[Y:.+]] : memref<2x3xf32>)
# SEPARATE-NOT: gpu.launch_func
# SEPARATE: call @tfc_cuda_graph_node(
# SEPARATE-NEXT: gpu.launch_func @tfc_kernels::@tfc_k[[LAST:[0-9]+]] {{.*}} args(%[[X:.+]] : memref<2x4xf32>, %[[Z:.+]] : memref<2x4xf32>)
# SEPARATE-NOT: gpu.launch_func
# SEPARATE: gpu.func @tfc_k[[LAST]](%{{.+}}: memref<2x4xf32>, %{{.+}}: memref<2x4xf32>) kernel
