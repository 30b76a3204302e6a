// RUN: tf-opt %s --split-input-file --verify-diagnostics --tf-map-to-gpu | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An elementwise loop nest: 300 iterations on 2 blocks of 256 threads, the
// last dim fastest (thread t of block b computes element b * 256 + t), the
// threads past the end doing nothing; the result stored once, never loaded
// (the body does not read it).
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.+]]: memref<3x100xf32>, %[[Y:.+]]: memref<3x100xf32>)
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C2]], %{{.+}} = %c1{{.*}}, %{{.+}} = %c1{{.*}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C256]],
// CHECK:   %[[BASE:.+]] = arith.muli %[[B]], %{{.+}}
// CHECK:   %[[L:.+]] = arith.addi %[[BASE]], %[[T]]
// CHECK:   %[[IN:.+]] = arith.cmpi ult, %[[L]], %{{.+}}
// CHECK:   scf.if %[[IN]] {
// CHECK:     %[[J:.+]] = arith.remui %[[L]], %{{.+}}
// CHECK:     %[[I:.+]] = arith.divui %[[L]], %{{.+}}
// CHECK-NOT: memref.load %[[Y]]
// CHECK:     %[[A:.+]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK:     %[[E:.+]] = math.exp %[[A]]
// CHECK:     memref.store %[[E]], %[[Y]][%[[I]], %[[J]]]
// CHECK:   gpu.terminator
// CHECK-NOT: linalg.generic
func.func @elementwise(%x: memref<3x100xf32>, %y: memref<3x100xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x100xf32>) outs(%y : memref<3x100xf32>) {
  ^bb0(%a: f32, %c: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A row reduction: a thread a row (4 rows: one block of 32 threads), the
// accumulator an iter_arg loaded once and stored once, the additions in
// order.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[X:.+]]: memref<4x64xf32>, %[[Y:.+]]: memref<4xf32>)
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %[[C32]],
// CHECK:   scf.if
// CHECK:     %[[INIT:.+]] = memref.load %[[Y]][%[[I:.+]]]
// CHECK:     %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK:       %[[A:.+]] = memref.load %[[X]][%[[I]], %[[K]]]
// CHECK:       %[[NEXT:.+]] = arith.addf %[[ACC]], %[[A]] : f32
// CHECK:       scf.yield %[[NEXT]]
// CHECK:     memref.store %[[SUM]], %[[Y]][%[[I]]]
func.func @row_sum(%x: memref<4x64xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A reduction right after a constant fill of its result: the fill folds
// into the reduction's kernel (the accumulator starts at the constant, the
// result is never loaded): one launch, not two.
// CHECK-LABEL: func.func @fill_folded
// CHECK-SAME: (%[[X:.+]]: memref<4x64xf32>, %[[Y:.+]]: memref<4xf32>)
// CHECK-COUNT-1: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-NOT: memref.load %[[Y]]
// CHECK: %[[INIT:.+]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[INIT]]) -> (f32)
// CHECK: memref.store %{{.+}}, %[[Y]]
func.func @fill_folded(%x: memref<4x64xf32>, %y: memref<4xf32>) {
  %lowest = arith.constant 0xFF800000 : f32
  linalg.fill ins(%lowest : f32) outs(%y : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %m = arith.maximumf %c, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An argmax: both results (value and index) filled right before, in either
// order, both fills fold in; neither result is loaded. A fill of another
// buffer in between stops the fold: that reduction's first result (filled
// before it) is loaded.
// CHECK-LABEL: func.func @fills_folded
// CHECK-SAME: (%[[X:.+]]: memref<4x64xf32>, %[[V:.+]]: memref<4xf32>, %[[I:.+]]: memref<4xi32>, %[[W:.+]]: memref<4xf32>, %[[J:.+]]: memref<4xi32>, %[[O:.+]]: memref<8xf32>)
// CHECK: gpu.launch
// CHECK-NOT: memref.load %[[V]]
// CHECK-NOT: memref.load %[[I]]
// CHECK-DAG: %[[LOW:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[LOW]], %{{.+}} = %[[ZERO]]) -> (f32, i32)
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: %[[W0:.+]] = memref.load %[[W]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[W0]], %{{.+}} = %{{.+}}) -> (f32, i32)
// CHECK-NOT: gpu.launch
func.func @fills_folded(%x: memref<4x64xf32>, %v: memref<4xf32>, %i: memref<4xi32>, %w: memref<4xf32>, %j: memref<4xi32>, %o: memref<8xf32>) {
  %lowest = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : i32) outs(%i : memref<4xi32>)
  linalg.fill ins(%lowest : f32) outs(%v : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%v, %i : memref<4xf32>, memref<4xi32>) {
  ^bb0(%a: f32, %best: f32, %at: i32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %better = arith.cmpf ogt, %a, %best : f32
    %m = arith.select %better, %a, %best : f32
    %n = arith.select %better, %ki, %at : i32
    linalg.yield %m, %n : f32, i32
  }
  linalg.fill ins(%lowest : f32) outs(%w : memref<4xf32>)
  linalg.fill ins(%one : f32) outs(%o : memref<8xf32>)
  linalg.fill ins(%zero : i32) outs(%j : memref<4xi32>)
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%w, %j : memref<4xf32>, memref<4xi32>) {
  ^bb0(%a: f32, %best: f32, %at: i32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %better = arith.cmpf ogt, %a, %best : f32
    %m = arith.select %better, %a, %best : f32
    %n = arith.select %better, %ki, %at : i32
    linalg.yield %m, %n : f32, i32
  }
  return
}

// -----

// A full reduction (a loss): one thread, every dim a loop, the 0-d result
// loaded and stored once.
// CHECK-LABEL: func.func @full_sum
// CHECK: gpu.launch
// CHECK:   scf.if
// CHECK:     memref.load %{{.+}}[] : memref<f32>
// CHECK:     scf.for
// CHECK:       scf.for
// CHECK:     memref.store %{{.+}}, %{{.+}}[] : memref<f32>
func.func @full_sum(%x: memref<8x16xf32>, %y: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<8x16xf32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Fills and copies are kernels too; a transposed read and linalg.index map
// through the loop indices.
// CHECK-LABEL: func.func @fill_copy_index
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT: linalg.
// CHECK-NOT: memref.copy
func.func @fill_copy_index(%x: memref<4x8xf32>, %y: memref<8x4xf32>, %z: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<8x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<8x4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %i = linalg.index 1 : index
    %f = arith.index_cast %i : index to i32
    %g = arith.sitofp %f : i32 to f32
    %s = arith.addf %a, %g : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  }
  memref.copy %y, %z : memref<8x4xf32> to memref<8x4xf32>
  return
}

// -----

// A constant table is read inside the kernel (outlining then moves the
// global into the GPU module), not passed from the host.
// CHECK-LABEL: func.func @constant_table
// CHECK: gpu.launch
// CHECK:   memref.get_global @table
// CHECK:   memref.collapse_shape
memref.global "private" constant @table : memref<2x4xf32> = dense<1.0>
func.func @constant_table(%y: memref<8xf32>) {
  %t = memref.get_global @table : memref<2x4xf32>
  %flat = memref.collapse_shape %t [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%flat : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// A result that two threads would write is refused.
func.func @result_not_per_thread(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{cannot map this loop nest to the GPU: a result not indexed by exactly the parallel dims}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  }
  return
}
