# tfc compile --target=cuda --emit=gpu: the entries after tf-map-to-gpu,
# outlining and tf-merge-gpu-modules. The GEMM calls the runtime's
# tfc_cuda_sgemm on device memory; every other loop nest is one launch of a
# kernel of the one module @tfc_kernels, numbered in launch order; the host
# code touches no memory itself (no load or store outside a kernel). Needs
# no toolkit: nothing is assembled yet.
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --emit=gpu --cuda-path=%t.no-cuda | FileCheck %s

# CHECK: module attributes {gpu.container_module
# CHECK: func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
# CHECK-LABEL: func.func @predict
# CHECK-SAME: (%[[X:.+]]: memref<2x4xf32>, %[[W:.+]]: memref<3x4xf32>, %[[B:.+]]: memref<3xf32>, %[[Y:.+]]: memref<2x3xf32>, %[[Z:.+]]: memref<2x4xf32>, %[[ARENA:.+]]: memref<?xi8>)
# CHECK-NOT: memref.load
# CHECK-NOT: memref.store
# CHECK: call @tfc_cuda_sgemm(
# The row max (a fill, then a thread a row), the row sum the same way, the
# normalised output, then tanh's loop: six kernels, each launched once.
# CHECK-NEXT: %{{.+}} = memref.view %[[ARENA]]
# CHECK-NEXT: gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%{{.+}} : memref<2xf32>)
# CHECK-NEXT: gpu.launch_func @tfc_kernels::@tfc_k1 {{.*}} args(%{{.+}} : memref<2xf32>, %{{.+}} : memref<2x3xf32>, %[[B]] : memref<3xf32>)
# CHECK: gpu.launch_func @tfc_kernels::@tfc_k2
# CHECK-NEXT: gpu.launch_func @tfc_kernels::@tfc_k3
# CHECK-NEXT: gpu.launch_func @tfc_kernels::@tfc_k4 {{.*}} %[[Y]] : memref<2x3xf32>)
# CHECK-NEXT: gpu.launch_func @tfc_kernels::@tfc_k5 {{.*}} args(%[[X]] : memref<2x4xf32>, %[[Z]] : memref<2x4xf32>)
# CHECK-NOT: memref.load
# CHECK-NOT: memref.store
# CHECK: return
# CHECK: gpu.module @tfc_kernels {
# CHECK: gpu.func @tfc_k0(%{{.+}}: memref<2xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
# CHECK: gpu.func @tfc_k1(
# The max over a row: a serial loop in the thread, its accumulator in a register.
# CHECK: scf.for {{.*}} iter_args
# CHECK: arith.maximumf
# CHECK: gpu.func @tfc_k2(
# CHECK: gpu.func @tfc_k3(
# CHECK: gpu.func @tfc_k4(
# CHECK: gpu.func @tfc_k5(
# CHECK-NOT: gpu.func
# CHECK-NOT: gpu.module
