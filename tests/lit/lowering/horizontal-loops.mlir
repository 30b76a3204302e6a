// RUN: tf-opt %s --tf-horizontal-loops --split-input-file | FileCheck %s

#id2 = affine_map<(i, j) -> (i, j)>
#scalar2 = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#scalar1 = affine_map<(i) -> ()>

// Two parameters' updates, 8x4 and 5000 elements: one parallel loop over
// their 1 + 2 chunks of 4096 elements. A chunk finds its member by its
// index (the second member starts at chunk 1) and runs that member's body
// over its elements, on 1-d views; the scalar is loaded once per chunk.
// CHECK-LABEL: func.func @sgd
// CHECK-SAME: (%[[W:[a-z0-9]+]]: memref<8x4xf32>, %[[GW:[a-z0-9]+]]: memref<8x4xf32>, %[[B:[a-z0-9]+]]: memref<5000xf32>, %[[GB:[a-z0-9]+]]: memref<5000xf32>, %[[LR:[a-z0-9]+]]: memref<f32>, %[[NW:[a-z0-9]+]]: memref<8x4xf32>, %[[NB:[a-z0-9]+]]: memref<5000xf32>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[FW:.+]] = memref.collapse_shape %[[W]] {{\[}}[0, 1]] : memref<8x4xf32> into memref<32xf32>
// CHECK-DAG: %[[FGW:.+]] = memref.collapse_shape %[[GW]]
// CHECK-DAG: %[[FNW:.+]] = memref.collapse_shape %[[NW]]
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK: scf.parallel (%[[CHUNK:.+]]) = (%[[C0]]) to (%[[C3]])
// CHECK: %[[STARTED:.+]] = arith.cmpi sge, %[[CHUNK]], %{{.+}} : index
// CHECK: %[[MEMBER:.+]] = arith.addi
// CHECK: scf.index_switch %[[MEMBER]]
// CHECK: case 0 {
// CHECK: %[[S0:.+]] = memref.load %[[LR]][]
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK: memref.load %[[FW]][%[[I]]]
// CHECK: memref.load %[[FGW]][%[[I]]]
// CHECK: arith.mulf %{{.+}}, %[[S0]]
// CHECK: memref.store %{{.+}}, %[[FNW]][%[[I]]]
// CHECK: case 1 {
// CHECK: arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: scf.for
// CHECK: memref.load %[[B]]
// CHECK: memref.store %{{.+}}, %[[NB]]
// CHECK: default {
// CHECK: } {tfc.work_per_iteration = {{[0-9]+}} : i64}
// CHECK-NOT: linalg.generic
func.func @sgd(%w: memref<8x4xf32>, %gw: memref<8x4xf32>, %b: memref<5000xf32>, %gb: memref<5000xf32>, %lr: memref<f32>, %nw: memref<8x4xf32>, %nb: memref<5000xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2, #scalar2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %gw, %lr : memref<8x4xf32>, memref<8x4xf32>, memref<f32>) outs(%nw : memref<8x4xf32>) attrs = {tfc.horizontal = 0 : i64} {
  ^bb0(%p: f32, %g: f32, %l: f32, %o: f32):
    %s = arith.mulf %g, %l : f32
    %n = arith.subf %p, %s : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1, #scalar1, #id1], iterator_types = ["parallel"]}
      ins(%b, %gb, %lr : memref<5000xf32>, memref<5000xf32>, memref<f32>) outs(%nb : memref<5000xf32>) attrs = {tfc.horizontal = 0 : i64} {
  ^bb0(%p: f32, %g: f32, %l: f32, %o: f32):
    %s = arith.mulf %g, %l : f32
    %n = arith.subf %p, %s : f32
    linalg.yield %n : f32
  }
  return
}

// -----

#id1 = affine_map<(i) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// A member that reads a broadcast keeps its own loop (its elements are not
// walked in flat order), as do members of another fusion, and members with
// a write between them; the mark is dropped.
// CHECK-LABEL: func.func @apart
// CHECK-NOT: scf.parallel
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: tfc.horizontal
// CHECK-NOT: scf.parallel
func.func @apart(%a: memref<4xf32>, %m: memref<8x4xf32>, %x: memref<4xf32>, %y: memref<4xf32>, %z: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4xf32>) outs(%z : memref<8x4xf32>) attrs = {tfc.horizontal = 0 : i64} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%x : memref<4xf32>) attrs = {tfc.horizontal = 0 : i64} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%y : memref<4xf32>) attrs = {tfc.horizontal = 1 : i64} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%x : memref<4xf32>) attrs = {tfc.horizontal = 0 : i64} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) attrs = {tfc.horizontal = 1 : i64} {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}
