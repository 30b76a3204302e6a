// RUN: tf-opt %s --split-input-file --tf-graph-dependencies --canonicalize | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-graph-dependencies="lanes=0 reorder=true" | FileCheck %s --check-prefix=REORDER
// The runtime keeps two lanes: any other number folds two onto one.
// RUN: not tf-opt %s --split-input-file --tf-graph-dependencies="lanes=3" 2>&1 | FileCheck %s --check-prefix=LANES
// LANES: error: tf-graph-dependencies: lanes=3, but the runtime keeps 2

// Each op waits for the earlier ones whose bytes it touches where one of
// the two writes, directly only: b and c of a (each waits for op 0 alone,
// not for each other); the product of b and c for both; the product of a by
// a (its pointers the arena's, so it reads [0, 64), the buffer there) for
// op 0 alone; a's next value for every reader of the old one (op 0 through
// them). The last call waits for what nothing waits for (ops 3 and 5). The
// first GEMM takes lane 0; the second, not after it, lane 1.
// CHECK: memref.global "private" constant @tfc_graph_deps_train_step : memref<10xi32> = dense<[0, 0, 1, 2, 0, 1, 2, 4, 3, 5]>
// CHECK: func.func private @tfc_cuda_graph_node(index, index, index, index)
// CHECK-LABEL: func.func @train_step
// CHECK: %[[TABLE:.+]] = memref.get_global @tfc_graph_deps_train_step
// CHECK: %[[BASE:.+]] = memref.extract_aligned_pointer_as_index %[[TABLE]]
// CHECK: call @tfc_cuda_graph_node(%c0, %c-1, %[[BASE]], %c0)
// CHECK-NEXT: gpu.launch_func {{.*}} {tfc.test_op = 0 : i64}
// CHECK: call @tfc_cuda_graph_node(%c1, %c-1, %[[BASE]], %c1)
// CHECK-NEXT: gpu.launch_func {{.*}} {tfc.test_op = 1 : i64}
// CHECK: %[[P2:.+]] = arith.addi %[[BASE]], %c4
// CHECK: call @tfc_cuda_graph_node(%c2, %c-1, %[[P2]], %c1)
// CHECK-NEXT: gpu.launch_func {{.*}} {tfc.test_op = 2 : i64}
// CHECK: %[[P3:.+]] = arith.addi %[[BASE]], %c8
// CHECK: call @tfc_cuda_graph_node(%c3, %c0, %[[P3]], %c2)
// CHECK-NEXT: call @tfc_cuda_sgemm({{.*}}) {tfc.test_op = 3 : i64}
// CHECK: %[[P4:.+]] = arith.addi %[[BASE]], %c16
// CHECK: call @tfc_cuda_graph_node(%c4, %c1, %[[P4]], %c1)
// CHECK-NEXT: call @tfc_cuda_sgemm({{.*}}) {tfc.test_op = 4 : i64}
// CHECK: %[[P5:.+]] = arith.addi %[[BASE]], %c20
// CHECK: call @tfc_cuda_graph_node(%c5, %c-1, %[[P5]], %c3)
// CHECK-NEXT: gpu.launch_func {{.*}} {tfc.test_op = 5 : i64}
// CHECK: %[[P6:.+]] = arith.addi %[[BASE]], %c32
// CHECK: call @tfc_cuda_graph_node(%c6, %c-1, %[[P6]], %c2)
// CHECK-NEXT: return

// Another order they allow, the latest ready op first.
// REORDER-LABEL: func.func @train_step
// REORDER-NOT: tfc_cuda_graph_node
// REORDER: {tfc.test_op = 0 : i64}
// REORDER-NEXT: {tfc.test_op = 4 : i64}
// REORDER-NEXT: {tfc.test_op = 2 : i64}
// REORDER-NEXT: {tfc.test_op = 1 : i64}
// REORDER-NEXT: {tfc.test_op = 5 : i64}
// REORDER-NEXT: {tfc.test_op = 3 : i64}
// REORDER-NEXT: return
module attributes {gpu.container_module} {
  func.func private @tfc_cuda_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
  func.func @train_step(%x: memref<16xf32>, %arena: memref<?xi8>) attributes {tfc.entry = "train_step", tfc.arena_bytes = 320 : i64, tfc.arena_buffers = array<i64: 0, 64, 0, 99, 64, 128, 0, 99, 128, 192, 0, 99, 192, 256, 0, 99, 256, 320, 0, 99>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c192 = arith.constant 192 : index
    %c256 = arith.constant 256 : index
    %a = memref.view %arena[%c0][] : memref<?xi8> to memref<16xf32>
    %b = memref.view %arena[%c64][] : memref<?xi8> to memref<16xf32>
    %c = memref.view %arena[%c128][] : memref<?xi8> to memref<16xf32>
    gpu.launch_func @tfc_kernels::@copy blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%x : memref<16xf32>, %a : memref<16xf32>) {tfc.test_op = 0}
    gpu.launch_func @tfc_kernels::@copy blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%a : memref<16xf32>, %b : memref<16xf32>) {tfc.test_op = 1}
    gpu.launch_func @tfc_kernels::@copy blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%a : memref<16xf32>, %c : memref<16xf32>) {tfc.test_op = 2}
    %base = memref.extract_aligned_pointer_as_index %arena : memref<?xi8> -> index
    %pb = arith.addi %base, %c64 : index
    %pc = arith.addi %base, %c128 : index
    %pd = arith.addi %base, %c192 : index
    %pe = arith.addi %base, %c256 : index
    call @tfc_cuda_sgemm(%c1, %c4, %c4, %c4, %pb, %c4, %c0, %c0, %pc, %c4, %c0, %c0, %pd, %c4, %c0, %c0) {tfc.test_op = 3} : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
    call @tfc_cuda_sgemm(%c1, %c4, %c4, %c4, %base, %c4, %c0, %c0, %base, %c4, %c0, %c0, %pe, %c4, %c0, %c0) {tfc.test_op = 4} : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
    gpu.launch_func @tfc_kernels::@copy blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%x : memref<16xf32>, %a : memref<16xf32>) {tfc.test_op = 5}
    return
  }
  gpu.module @tfc_kernels {
    gpu.func @copy(%from: memref<16xf32>, %to: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %from[%i] : memref<16xf32>
      memref.store %v, %to[%i] : memref<16xf32>
      gpu.return
    }
  }
}

// -----

// The arguments are one buffer (a parameter and the result written over
// it): the update waits for both readers of the parameter, and for c. Two kernels reading one constant
// table are independent; two drawing tickets from one counter are not.
// CHECK: memref.global "private" constant @tfc_graph_deps_step : memref<6xi32> = dense<[2, 0, 1, 2, 3, 4]>
// CHECK-LABEL: func.func @step
// CHECK: call @tfc_cuda_graph_node(%c0, %c-1, %{{.+}}, %c0)
// CHECK: call @tfc_cuda_graph_node(%c1, %c-1, %{{.+}}, %c0)
// CHECK: call @tfc_cuda_graph_node(%c2, %c-1, %{{.+}}, %c0)
// CHECK: call @tfc_cuda_graph_node(%c3, %c-1, %{{.+}}, %c1)
// CHECK: call @tfc_cuda_graph_node(%c4, %c-1, %{{.+}}, %c3)
// CHECK: call @tfc_cuda_graph_node(%c5, %c-1, %{{.+}}, %c2)
// CHECK-NEXT: return
// REORDER-LABEL: func.func @step
// REORDER: {tfc.test_op = 2 : i64}
// REORDER-NEXT: {tfc.test_op = 3 : i64}
// REORDER-NEXT: {tfc.test_op = 1 : i64}
// REORDER-NEXT: {tfc.test_op = 0 : i64}
// REORDER-NEXT: {tfc.test_op = 4 : i64}
module attributes {gpu.container_module} {
  func.func @step(%p: memref<16xf32>, %out: memref<16xf32>, %arena: memref<?xi8>) attributes {tfc.entry = "step", tfc.arena_bytes = 256 : i64, tfc.arena_buffers = array<i64: 0, 64, 0, 99, 64, 128, 0, 99, 128, 192, 0, 99, 192, 256, 0, 99>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c192 = arith.constant 192 : index
    %a = memref.view %arena[%c0][] : memref<?xi8> to memref<16xf32>
    %b = memref.view %arena[%c64][] : memref<?xi8> to memref<16xf32>
    %c = memref.view %arena[%c128][] : memref<?xi8> to memref<16xf32>
    %d = memref.view %arena[%c192][] : memref<?xi8> to memref<16xf32>
    gpu.launch_func @tfc_kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%p : memref<16xf32>, %a : memref<16xf32>) {tfc.test_op = 0}
    gpu.launch_func @tfc_kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%p : memref<16xf32>, %b : memref<16xf32>) {tfc.test_op = 1}
    gpu.launch_func @tfc_kernels::@ticket blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%c : memref<16xf32>) {tfc.test_op = 2}
    gpu.launch_func @tfc_kernels::@ticket blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%d : memref<16xf32>) {tfc.test_op = 3}
    gpu.launch_func @tfc_kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%c : memref<16xf32>, %out : memref<16xf32>) {tfc.test_op = 4}
    return
  }
  gpu.module @tfc_kernels {
    memref.global "private" constant @table : memref<16xf32> = dense<2.0>
    llvm.mlir.global internal @counter(0 : i32) {addr_space = 1 : i32} : i32
    gpu.func @scale(%from: memref<16xf32>, %to: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %t = memref.get_global @table : memref<16xf32>
      %s = memref.load %t[%i] : memref<16xf32>
      %v = memref.load %from[%i] : memref<16xf32>
      %w = arith.mulf %s, %v : f32
      memref.store %w, %to[%i] : memref<16xf32>
      gpu.return
    }
    gpu.func @ticket(%to: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %counter = llvm.mlir.addressof @counter : !llvm.ptr<1>
      %one = llvm.mlir.constant(1 : i32) : i32
      %n = llvm.atomicrmw add %counter, %one monotonic : !llvm.ptr<1>, i32
      %f = arith.sitofp %n : i32 to f32
      memref.store %f, %to[%i] : memref<16xf32>
      gpu.return
    }
  }
}

// -----

// A launch in a loop: the entry stays a chain (no calls).
// CHECK-LABEL: func.func @looped
// CHECK-NOT: tfc_cuda_graph_node
// CHECK: return
// REORDER-LABEL: func.func @looped
// REORDER-NOT: tfc.graph_reordered
module attributes {gpu.container_module} {
  func.func @looped(%x: memref<16xf32>, %arena: memref<?xi8>) attributes {tfc.entry = "looped", tfc.arena_bytes = 64 : i64, tfc.arena_buffers = array<i64: 0, 64, 0, 99>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %a = memref.view %arena[%c0][] : memref<?xi8> to memref<16xf32>
    scf.for %i = %c0 to %c2 step %c1 {
      gpu.launch_func @tfc_kernels::@copy blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%x : memref<16xf32>, %a : memref<16xf32>)
    }
    return
  }
  gpu.module @tfc_kernels {
    gpu.func @copy(%from: memref<16xf32>, %to: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %from[%i] : memref<16xf32>
      memref.store %v, %to[%i] : memref<16xf32>
      gpu.return
    }
  }
}

// -----

// An address only compared (tf-map-to-gpu's alignment check) and an
// alignment assumed read nothing: the two copies from x are independent. A
// buffer passed on by a select and stored to is written: the reader of c
// waits for it. A cooperative launch (a grid barrier needs all its blocks
// resident) waits for every op before it.
// CHECK: memref.global "private" constant @tfc_graph_deps_checks : memref<5xi32> = dense<[0, 2, 1, 3, 4]>
// CHECK-LABEL: func.func @checks
// CHECK: call @tfc_cuda_graph_node(%c0, %c-1, %{{.+}}, %c0)
// CHECK: call @tfc_cuda_graph_node(%c1, %c-1, %{{.+}}, %c0)
// CHECK: call @tfc_cuda_graph_node(%c2, %c-1, %{{.+}}, %c1)
// CHECK: call @tfc_cuda_graph_node(%c3, %c-1, %{{.+}}, %c1)
// CHECK: call @tfc_cuda_graph_node(%c4, %c-1, %{{.+}}, %c2)
// CHECK: call @tfc_cuda_graph_node(%c5, %c-1, %{{.+}}, %c1)
// CHECK-NEXT: return
// REORDER-LABEL: func.func @checks
// REORDER: {tfc.test_op = 1 : i64}
// REORDER-NEXT: {tfc.test_op = 0 : i64}
// REORDER-NEXT: {tfc.test_op = 2 : i64}
// REORDER-NEXT: {tfc.test_op = 3 : i64}
// REORDER-NEXT: tfc.cooperative, tfc.test_op = 4 : i64}
module attributes {gpu.container_module} {
  func.func @checks(%x: memref<16xf32>, %arena: memref<?xi8>) attributes {tfc.entry = "checks", tfc.arena_bytes = 256 : i64, tfc.arena_buffers = array<i64: 0, 64, 0, 99, 64, 128, 0, 99, 128, 192, 0, 99, 192, 256, 0, 99>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c192 = arith.constant 192 : index
    %a = memref.view %arena[%c0][] : memref<?xi8> to memref<16xf32>
    %b = memref.view %arena[%c64][] : memref<?xi8> to memref<16xf32>
    %c = memref.view %arena[%c128][] : memref<?xi8> to memref<16xf32>
    %d = memref.view %arena[%c192][] : memref<?xi8> to memref<16xf32>
    gpu.launch_func @tfc_kernels::@aligned blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%x : memref<16xf32>, %a : memref<16xf32>) {tfc.test_op = 0}
    gpu.launch_func @tfc_kernels::@aligned blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%x : memref<16xf32>, %b : memref<16xf32>) {tfc.test_op = 1}
    gpu.launch_func @tfc_kernels::@selected blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%a : memref<16xf32>, %c : memref<16xf32>) {tfc.test_op = 2}
    gpu.launch_func @tfc_kernels::@aligned blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%c : memref<16xf32>, %d : memref<16xf32>) {tfc.test_op = 3}
    gpu.launch_func @tfc_kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%b : memref<16xf32>) {tfc.cooperative, tfc.test_op = 4}
    return
  }
  gpu.module @tfc_kernels {
    gpu.func @aligned(%from: memref<16xf32>, %to: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c15 = arith.constant 15 : index
      %p = memref.extract_aligned_pointer_as_index %from : memref<16xf32> -> index
      %low = arith.andi %p, %c15 : index
      %ok = arith.cmpi eq, %low, %c0 : index
      scf.if %ok {
        memref.assume_alignment %from, 16 : memref<16xf32>
        %v = memref.load %from[%i] : memref<16xf32>
        memref.store %v, %to[%i] : memref<16xf32>
      }
      gpu.return
    }
    gpu.func @selected(%from: memref<16xf32>, %to: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %i, %c0 : index
      %into = arith.select %first, %to, %to : memref<16xf32>
      %v = memref.load %from[%i] : memref<16xf32>
      memref.store %v, %into[%i] : memref<16xf32>
      gpu.return
    }
    gpu.func @fill(%to: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %to[%i] : memref<16xf32>
      gpu.return
    }
  }
}
