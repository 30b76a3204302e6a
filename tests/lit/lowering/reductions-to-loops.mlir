// RUN: tf-opt %s --split-input-file --tf-reductions-to-loops | FileCheck %s

#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A row reduction (softmax's denominator): the rows are an scf.parallel, the
// accumulator an iter_arg loaded and stored once per row, and the combining
// add may reassociate (so LLVM sums in lanes).
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[X:.+]]: memref<4x64xf32>, %[[Y:.+]]: memref<4xf32>)
// CHECK: scf.parallel (%[[I:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK:   %[[INIT:.+]] = memref.load %[[Y]][%[[I]]]
// CHECK:   %[[SUM:.+]] = scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK:     %[[A:.+]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK:     %[[E:.+]] = math.exp %[[A]]
// CHECK:     %[[NEXT:.+]] = arith.addf %[[ACC]], %[[E]] fastmath<reassoc>
// CHECK:     scf.yield %[[NEXT]]
// CHECK:   memref.store %[[SUM]], %[[Y]][%[[I]]]
// CHECK-NOT: linalg.generic
func.func @row_sum(%x: memref<4x64xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %e = math.exp %a : f32
    %s = arith.addf %c, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A short row (16 or fewer: a 10-class softmax) is unrolled whole, the chain
// in order (no fast-math), so that the loop around it is the innermost and
// LLVM may run it across rows.
// CHECK-LABEL: func.func @short_row_unrolled
// CHECK-SAME: (%[[X:.+]]: memref<4x3xf32>, %[[Y:.+]]: memref<4xf32>)
// CHECK: scf.parallel (%[[I:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK-NOT: scf.for
// CHECK:   %[[INIT:.+]] = memref.load %[[Y]][%[[I]]]
// CHECK:   %[[A0:.+]] = memref.load %[[X]][%[[I]], %{{.+}}]
// CHECK:   %[[S0:.+]] = arith.addf %[[INIT]], %{{.+}} : f32
// CHECK:   %[[A1:.+]] = memref.load %[[X]][%[[I]], %{{.+}}]
// CHECK:   %[[S1:.+]] = arith.addf %[[S0]], %{{.+}} : f32
// CHECK:   %[[A2:.+]] = memref.load %[[X]][%[[I]], %{{.+}}]
// CHECK:   %[[S2:.+]] = arith.addf %[[S1]], %{{.+}} : f32
// CHECK:   memref.store %[[S2]], %[[Y]][%[[I]]]
func.func @short_row_unrolled(%x: memref<4x3xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x3xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %e = math.exp %a : f32
    %s = arith.addf %c, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A column reduction (a bias gradient): the columns' sums are the iter_args
// of the loop over the rows (loaded and stored once, not once a row), the
// body cloned once per column so that the loads of a row are consecutive;
// each column's sum keeps its order (its own chain, no fast-math); a
// one-trip scf.parallel holds the nest.
// CHECK-LABEL: func.func @column_sum
// CHECK-SAME: (%[[X:.+]]: memref<8x4xf32>, %[[Y:.+]]: memref<4xf32>)
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%{{.+}}) step
// CHECK-COUNT-4: memref.load %[[Y]][%{{.+}}] : memref<4xf32>
// CHECK: %[[SUMS:.+]]:4 = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A0:.+]] = %{{.+}}, %[[A1:.+]] = %{{.+}}, %[[A2:.+]] = %{{.+}}, %[[A3:.+]] = %{{.+}}) -> (f32, f32, f32, f32) {
// CHECK:   %[[X0:.+]] = memref.load %[[X]][%[[I]], %{{.+}}]
// CHECK:   %[[S0:.+]] = arith.addf %[[A0]], %[[X0]] : f32
// CHECK:   arith.addf %[[A1]], %{{.+}} : f32
// CHECK:   arith.addf %[[A2]], %{{.+}} : f32
// CHECK:   %[[X3:.+]] = memref.load %[[X]][%[[I]], %{{.+}}]
// CHECK:   %[[S3:.+]] = arith.addf %[[A3]], %[[X3]] : f32
// CHECK:   scf.yield %[[S0]], %{{.+}}, %{{.+}}, %[[S3]]
// CHECK: memref.store %[[SUMS]]#0, %[[Y]]
// CHECK: memref.store %[[SUMS]]#3, %[[Y]]
func.func @column_sum(%x: memref<8x4xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<8x4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mid = affine_map<(d0, d1, d2) -> (d1)>

// Reductions around a parallel dim (a conv bias gradient over [N, O, T]):
// n and o are serial loops, t accumulates in registers per (n, o).
// CHECK-LABEL: func.func @outer_and_inner_reduction
// CHECK: scf.parallel
// CHECK:   scf.for %[[N:.+]] =
// CHECK:     scf.for %[[O:.+]] =
// CHECK:       %[[INIT:.+]] = memref.load %{{.+}}[%[[O]]]
// CHECK:       %[[SUM:.+]] = scf.for %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK:         arith.addf %[[ACC]], %{{.+}} fastmath<reassoc>
// CHECK:       memref.store %[[SUM]], %{{.+}}[%[[O]]]
func.func @outer_and_inner_reduction(%g: memref<2x3x40xf32>, %db: memref<3xf32>) {
  linalg.generic {indexing_maps = [#in, #mid], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%g : memref<2x3x40xf32>) outs(%db : memref<3xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Two outputs and linalg.index in the body (an argmax-like reduction): both
// accumulators are iter_args; the index is the loop's iv; a maximum is not
// an add, so it gets no fast-math flag.
// CHECK-LABEL: func.func @two_outputs
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK:   %{{.+}}:2 = scf.for %[[J:.+]] = %{{.+}} iter_args(%[[M:.+]] = %{{.+}}, %[[K:.+]] = %{{.+}}) -> (f32, i32) {
// CHECK:     %[[JI:.+]] = arith.index_cast %[[J]] : index to i32
// CHECK:     arith.maximumf %[[M]], %{{.+}} : f32
// CHECK:     arith.select %{{.+}}, %[[JI]], %[[K]] : i32
// CHECK-NOT: fastmath
func.func @two_outputs(%x: memref<4x32xf32>, %m: memref<4xf32>, %k: memref<4xi32>) {
  linalg.generic {indexing_maps = [#in, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x32xf32>) outs(%m, %k : memref<4xf32>, memref<4xi32>) {
  ^bb0(%a: f32, %best: f32, %at: i32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpf ogt, %a, %best : f32
    %nm = arith.maximumf %best, %a : f32
    %nk = arith.select %gt, %ji, %at : i32
    linalg.yield %nm, %nk : f32, i32
  }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0, d1)>

// Elementwise generics are not this pass's: they stay for linalg-to-loops.
// CHECK-LABEL: func.func @elementwise
// CHECK: linalg.generic
func.func @elementwise(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  }
  return
}
