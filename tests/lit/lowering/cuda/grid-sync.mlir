// RUN: tf-opt %s --split-input-file --tf-grid-sync | FileCheck %s

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

// -----

// A kernel with a tail (tf-merge-launches) calls @tfc_last_block: it gets
// its body in the kernels' module (every thread fences; a block barrier;
// thread 0 fences and draws a ticket at @tfc_last_block_ticket, the last if
// it drew the grid's size less one, and then stores 0 back; the barrier
// that ors thread 0's answer over the block; a fence in each thread of the
// last block; the answer), the ticket is a zeroed i32 in global memory, the
// kernel keeps its known grid size and its ordinary launch, and the host's
// declaration goes.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @train_step
// CHECK: gpu.launch_func @tfc_kernels::@tfc_k0
// CHECK-NOT: tfc.cooperative
// CHECK: gpu.module @tfc_kernels
// CHECK: llvm.mlir.global internal @tfc_last_block_ticket(0 : i32) {addr_space = 1 : i32, alignment = 4 : i64} : i32
// CHECK: gpu.func @tfc_k0() kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 22, 1, 1>} {
// CHECK: func.func private @tfc_last_block() -> i1 attributes {llvm.linkage = #llvm.linkage<internal>} {
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "membar.gl;", "~{memory}"
// CHECK-NEXT: gpu.barrier
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[T]], %{{.+}} : index
// CHECK: %[[DREW:.+]] = scf.if %[[FIRST]] -> (i32) {
// CHECK:   %[[TICKET:.+]] = llvm.mlir.addressof @tfc_last_block_ticket : !llvm.ptr<1>
// CHECK:   %[[MINE:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "{{.*}}membar.gl;\0Aatom.global.add.u32 %tfc_ticket, [$1], 1;\0Amov.u32 %tfc_blocks, %nctaid.x;\0Asub.u32 %tfc_blocks, %tfc_blocks, 1;\0Asetp.eq.u32 %tfc_drew_last, %tfc_ticket, %tfc_blocks;\0A@%tfc_drew_last st.volatile.global.u32 [$1], 0;\0Aselp.u32 $0, 1, 0, %tfc_drew_last;\0A}", "=r,l,~{memory}" %[[TICKET]] : (!llvm.ptr<1>) -> i32
// CHECK:   scf.yield %[[MINE]] : i32
// CHECK: } else {
// CHECK:   %[[NONE:.+]] = arith.constant 0 : i32
// CHECK:   scf.yield %[[NONE]] : i32
// CHECK: }
// CHECK-NEXT: %[[ANY:.+]] = llvm.call_intrinsic "llvm.nvvm.barrier0.or"(%[[DREW]]) : (i32) -> i32
// CHECK: %[[LAST:.+]] = arith.cmpi ne, %[[ANY]], %{{.+}} : i32
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT:   llvm.inline_asm has_side_effects asm_dialect = att "membar.gl;", "~{memory}"
// CHECK-NEXT: }
// CHECK-NEXT: return %[[LAST]] : i1
// CHECK-NOT: func.func private @tfc_last_block
module attributes {gpu.container_module} {
  func.func @train_step() {
    %c1 = arith.constant 1 : index
    %c22 = arith.constant 22 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @tfc_kernels::@tfc_k0 blocks in (%c22, %c1, %c1) threads in (%c64, %c1, %c1)
    return
  }
  gpu.module @tfc_kernels {
    gpu.func @tfc_k0() kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 22, 1, 1>} {
      %last = func.call @tfc_last_block() : () -> i1
      gpu.return
    }
    func.func private @tfc_last_block() -> i1
  }
  func.func private @tfc_last_block() -> i1
}
