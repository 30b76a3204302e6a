// RUN: tf-opt %s --tf-horizontal-loops --split-input-file | FileCheck %s

#id2 = affine_map<(i, j) -> (i, j)>
#scalar2 = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#scalar1 = affine_map<(i) -> ()>

// Two parameters' updates, 8x4 and 5000 elements, of one kind (the same
// body): one parallel loop over their 1 + 2 chunks of 4096 elements. A
// chunk finds its member by its index (the second member starts at chunk
// 1); a switch yields that member's first chunk, element count and 1-d
// views as memref<?xf32>, and one element loop runs the shared body on
// them; the scalar is loaded once per chunk.
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
// CHECK: %[[PICK:.+]]:6 = scf.index_switch %[[MEMBER]] -> index, index, memref<?xf32>, memref<?xf32>, memref<f32>, memref<?xf32>
// CHECK: case 0 {
// CHECK-DAG: %[[F0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[N0:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[VW:.+]] = memref.cast %[[FW]] : memref<32xf32> to memref<?xf32>
// CHECK-DAG: %[[VGW:.+]] = memref.cast %[[FGW]]
// CHECK-DAG: %[[VNW:.+]] = memref.cast %[[FNW]]
// CHECK: scf.yield %[[F0]], %[[N0]], %[[VW]], %[[VGW]], %[[LR]], %[[VNW]]
// CHECK: case 1 {
// CHECK-DAG: %[[F1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[N1:.+]] = arith.constant 5000 : index
// CHECK-DAG: %[[VB:.+]] = memref.cast %[[B]] : memref<5000xf32> to memref<?xf32>
// CHECK: scf.yield %[[F1]], %[[N1]], %[[VB]]
// CHECK: default {
// CHECK: %[[DELTA:.+]] = arith.subi %[[CHUNK]], %[[PICK]]#0 : index
// CHECK: %[[LO:.+]] = arith.muli %[[DELTA]]
// CHECK: %[[HI:.+]] = arith.minsi %{{.+}}, %[[PICK]]#1 : index
// CHECK: %[[S0:.+]] = memref.load %[[PICK]]#4[]
// CHECK: scf.for %[[I:.+]] = %[[LO]] to %[[HI]] step
// CHECK: memref.load %[[PICK]]#2[%[[I]]]
// CHECK: memref.load %[[PICK]]#3[%[[I]]]
// CHECK: arith.mulf %{{.+}}, %[[S0]]
// CHECK: memref.store %{{.+}}, %[[PICK]]#5[%[[I]]]
// CHECK-NOT: scf.for
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

// -----

#id1 = affine_map<(i) -> (i)>

// Members of two kinds: the kinds' chunks one after the other, in the order
// of their first members (so the third member, of the first kind, runs
// before the second), a switch over the kinds, and in each kind its element
// loop: the first kind's two members share one through a switch, the
// second kind's one member keeps its static views.
// CHECK-LABEL: func.func @kinds
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<100xf32>, %[[B:[a-z0-9]+]]: memref<5000xf32>, %[[C:[a-z0-9]+]]: memref<10xf32>, %[[X:[a-z0-9]+]]: memref<100xf32>, %[[Y:[a-z0-9]+]]: memref<5000xf32>, %[[Z:[a-z0-9]+]]: memref<10xf32>)
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.parallel (%[[CHUNK:.+]]) = (%{{.+}}) to (%[[C4]])
// CHECK: %[[KIND:.+]] = arith.addi
// CHECK: scf.index_switch %[[KIND]]
// CHECK: case 0 {
// CHECK: %[[PICK:.+]]:4 = scf.index_switch %{{.+}} -> index, index, memref<?xf32>, memref<?xf32>
// CHECK: memref.cast %[[A]]
// CHECK: memref.cast %[[C]]
// CHECK: default {
// CHECK: scf.for %[[I:.+]] =
// CHECK: %[[V:.+]] = memref.load %[[PICK]]#2[%[[I]]]
// CHECK: arith.addf %[[V]], %[[V]]
// CHECK: case 1 {
// CHECK-NOT: scf.index_switch
// CHECK: scf.for %[[J:.+]] =
// CHECK: %[[W:.+]] = memref.load %[[B]][%[[J]]] : memref<5000xf32>
// CHECK: arith.mulf %[[W]], %[[W]]
// CHECK: memref.store %{{.+}}, %[[Y]][%[[J]]] : memref<5000xf32>
func.func @kinds(%a: memref<100xf32>, %b: memref<5000xf32>, %c: memref<10xf32>, %x: memref<100xf32>, %y: memref<5000xf32>, %z: memref<10xf32>) {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : memref<100xf32>) outs(%x : memref<100xf32>) attrs = {tfc.horizontal = 0 : i64} {
  ^bb0(%v: f32, %o: f32):
    %d = arith.addf %v, %v : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%b : memref<5000xf32>) outs(%y : memref<5000xf32>) attrs = {tfc.horizontal = 0 : i64} {
  ^bb0(%v: f32, %o: f32):
    %d = arith.mulf %v, %v : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%c : memref<10xf32>) outs(%z : memref<10xf32>) attrs = {tfc.horizontal = 0 : i64} {
  ^bb0(%v: f32, %o: f32):
    %d = arith.addf %v, %v : f32
    linalg.yield %d : f32
  }
  return
}
