// RUN: tf-opt %s --tf-grid-sync | FileCheck %s

// The barrier gets its body in the kernels' module (a block barrier; thread
// 0 counts its block in at @tfc_grid_state and waits for the generation to
// move: PTX with membar.gl on both sides; a block barrier), the state is a
// global of two zeroed words in global memory, the kernel that calls it
// loses its known grid size (the runtime launches what the GPU holds), its
// launch is marked cooperative, and the host's declaration goes. A kernel
// without grid barriers keeps its grid and its ordinary launch.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @train_step
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k0 {{.*}} {tfc.cooperative}
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k1
// CHECK-NOT: tfc.cooperative
// CHECK: gpu.module @tfc_kernels
// CHECK: llvm.mlir.global internal @tfc_grid_state(dense<0> : tensor<2xi32>) {addr_space = 1 : i32, alignment = 8 : i64} : !llvm.array<2 x i32>
// CHECK: gpu.func @tfc_k0() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
// CHECK: gpu.func @tfc_k1() kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 4, 1, 1>} {
// CHECK: func.func private @tfc_grid_sync() {
// CHECK-NEXT: gpu.barrier
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[T]], %{{.+}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK:   %[[STATE:.+]] = llvm.mlir.addressof @tfc_grid_state : !llvm.ptr<1>
// CHECK:   llvm.inline_asm has_side_effects asm_dialect = att "{{.*}}ld.volatile.global.u32 %tfc_gen, [$0+4];\0Amembar.gl;\0Aatom.global.add.u32 %tfc_count, [$0], 1;{{.*}}membar.gl;\0A}", "l,~{memory}" %[[STATE]] : (!llvm.ptr<1>) -> ()
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: return
// CHECK-NOT: func.func private @tfc_grid_sync
module attributes {gpu.container_module} {
  func.func @train_step() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %c264 = arith.constant 264 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c264, %c1, %c1) threads in (%c256, %c1, %c1)
    gpu.launch_func @tfc_kernels::@tfc_k1 blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1)
    return
  }
  gpu.module @tfc_kernels {
    gpu.func @tfc_k0() kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 264, 1, 1>} {
      func.call @tfc_grid_sync() : () -> ()
      gpu.return
    }
    gpu.func @tfc_k1() kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 4, 1, 1>} {
      gpu.return
    }
    func.func private @tfc_grid_sync()
  }
  func.func private @tfc_grid_sync()
}
