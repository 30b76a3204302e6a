// RUN: tf-opt %s --split-input-file --tf-group-loops | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-group-loops --tf-plan-memory | FileCheck %s --check-prefix=PLAN
// RUN: tf-opt %s --split-input-file --tf-plan-memory | FileCheck %s --check-prefix=UNGROUPED

#id1 = affine_map<(d0) -> (d0)>
#rows = affine_map<(d0, d1) -> (d0, d1)>
#first = affine_map<(d0, d1) -> (d0)>
#none = affine_map<(d0) -> ()>

// Two gradients' squared norms, each split in partial sums and a final
// (tf-split-reductions): the second's partials move up beside the first's,
// each fill with its reduction, the views and allocations before them;
// then both finals. Two groups.
// CHECK-LABEL: func.func @norms
// CHECK-SAME: (%[[G0:.+]]: memref<64xf32>, %[[G1:.+]]: memref<64xf32>, %[[N0:.+]]: memref<f32>, %[[N1:.+]]: memref<f32>)
// CHECK: %[[P0:.+]] = memref.alloc() : memref<8xf32>
// CHECK: %[[V0:.+]] = memref.expand_shape %[[G0]]
// CHECK: %[[P1:.+]] = memref.alloc() : memref<8xf32>
// CHECK: %[[V1:.+]] = memref.expand_shape %[[G1]]
// CHECK-NEXT: linalg.fill {tfc.launch_group = [[A:[0-9]+]] : i64} {{.*}} outs(%[[P0]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[V0]] {{.*}} outs(%[[P0]] {{.*}} attrs = {tfc.launch_group = [[A]] : i64}
// CHECK: linalg.fill {tfc.launch_group = [[A]] : i64} {{.*}} outs(%[[P1]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[V1]] {{.*}} outs(%[[P1]] {{.*}} attrs = {tfc.launch_group = [[A]] : i64}
// CHECK: linalg.fill {tfc.launch_group = [[B:[0-9]+]] : i64} {{.*}} outs(%[[N0]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[P0]] {{.*}} outs(%[[N0]] {{.*}} attrs = {tfc.launch_group = [[B]] : i64}
// CHECK: linalg.fill {tfc.launch_group = [[B]] : i64} {{.*}} outs(%[[N1]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[P1]] {{.*}} outs(%[[N1]] {{.*}} attrs = {tfc.launch_group = [[B]] : i64}
// CHECK-NOT: linalg.generic
// CHECK: return
// The plan keeps the grouped partials apart (both live at the group);
// in the original order the second reused the first's bytes.
// PLAN-LABEL: func.func @norms
// PLAN: memref.view %{{.+}}[%c0{{.*}}][] : memref<?xi8> to memref<8xf32>
// PLAN: memref.view %{{.+}}[%c64{{.*}}][] : memref<?xi8> to memref<8xf32>
// UNGROUPED-LABEL: func.func @norms
// UNGROUPED: memref.view %{{.+}}[%c0{{.*}}][] : memref<?xi8> to memref<8xf32>
// UNGROUPED: memref.view %{{.+}}[%c0{{.*}}][] : memref<?xi8> to memref<8xf32>
func.func @norms(%g0: memref<64xf32>, %g1: memref<64xf32>, %n0: memref<f32>, %n1: memref<f32>) attributes {tfc.entry = "train_step"} {
  %zero = arith.constant 0.0 : f32
  %p0 = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%p0 : memref<8xf32>)
  %g0v = memref.expand_shape %g0 [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
  linalg.generic {indexing_maps = [#rows, #first], iterator_types = ["parallel", "reduction"]}
      ins(%g0v : memref<8x8xf32>) outs(%p0 : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%n0 : memref<f32>)
  linalg.generic {indexing_maps = [#id1, #none], iterator_types = ["reduction"]}
      ins(%p0 : memref<8xf32>) outs(%n0 : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  %p1 = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%p1 : memref<8xf32>)
  %g1v = memref.expand_shape %g1 [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
  linalg.generic {indexing_maps = [#rows, #first], iterator_types = ["parallel", "reduction"]}
      ins(%g1v : memref<8x8xf32>) outs(%p1 : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%n1 : memref<f32>)
  linalg.generic {indexing_maps = [#id1, #none], iterator_types = ["reduction"]}
      ins(%p1 : memref<8xf32>) outs(%n1 : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// A nest that reads a buffer in its body (cross-entropy's load of the
// labelled class) depends on the nest that writes it, though the buffer is
// none of its operands: no group, the order kept. (Grouped, the load ran
// before the write: a train step's loss was 0.)
// CHECK-LABEL: func.func @body_load
// CHECK-NOT: tfc.launch_group
// CHECK: outs(%[[T:.+]] : memref<16xf32>)
// CHECK: memref.load %[[T]]
func.func @body_load(%x: memref<16xf32>, %i: memref<16xindex>, %y: memref<16xf32>) attributes {tfc.entry = "predict"} {
  %t = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%t : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%i : memref<16xindex>) outs(%y : memref<16xf32>) {
  ^bb0(%k: index, %o: f32):
    %v = memref.load %t[%k] : memref<16xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// A chain (each reads what the one before wrote) keeps its order, no group.
// CHECK-LABEL: func.func @chain
// CHECK-NOT: tfc.launch_group
// CHECK: ins(%arg0 {{.*}} outs(%[[T:.+]] :
// CHECK: ins(%[[T]] {{.*}} outs(%arg1 :
func.func @chain(%x: memref<16xf32>, %y: memref<16xf32>) attributes {tfc.entry = "predict"} {
  %t = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%t : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%t : memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// Only small nests move up: %big (128 KiB) does not join the first, which
// its neighbour depends on, but stands beside that neighbour where it is.
// CHECK-LABEL: func.func @big
// CHECK: linalg.generic {{.*}} outs(%[[S:.+]] : memref<16xf32>) {
// CHECK-NOT: tfc.launch_group
// CHECK: linalg.generic {{.*}} ins(%[[S]] {{.*}} outs(%arg1 : memref<16xf32>) attrs = {tfc.launch_group = [[G:[0-9]+]] : i64}
// CHECK: linalg.generic {{.*}} outs(%arg3 : memref<32768xf32>) attrs = {tfc.launch_group = [[G]] : i64}
func.func @big(%x: memref<16xf32>, %y: memref<16xf32>, %u: memref<32768xf32>, %v: memref<32768xf32>) attributes {tfc.entry = "predict"} {
  %s = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s : memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%u : memref<32768xf32>) outs(%v : memref<32768xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// The third writes %x, which the second reads: it cannot move up beside the
// first past the second. Three launches, in order.
// CHECK-LABEL: func.func @antidependence
// CHECK-NOT: tfc.launch_group
// CHECK: outs(%[[S:.+]] : memref<16xf32>)
// CHECK: ins(%[[S]], %arg0 : memref<16xf32>, memref<16xf32>) outs(%arg1
// CHECK: ins(%arg2 : memref<16xf32>) outs(%arg0
func.func @antidependence(%x: memref<16xf32>, %y: memref<16xf32>, %z: memref<16xf32>, %w: memref<16xf32>) attributes {tfc.entry = "predict"} {
  %s = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%w : memref<16xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%s, %x : memref<16xf32>, memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %e = arith.addf %a, %b : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%z : memref<16xf32>) outs(%x : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// A runtime call ends a run: nests on either side of it stay on their side.
// CHECK-LABEL: func.func @call
// CHECK-NOT: tfc.launch_group
// CHECK: outs(%arg1
// CHECK: call @tfc_cuda_sgemm
// CHECK: outs(%arg2
func.func private @tfc_cuda_sgemm(memref<16xf32>)
func.func @call(%x: memref<16xf32>, %y: memref<16xf32>, %z: memref<16xf32>) attributes {tfc.entry = "predict"} {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  func.call @tfc_cuda_sgemm(%x) : (memref<16xf32>) -> ()
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%z : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

#id1 = affine_map<(d0) -> (d0)>

// A nest whose every write is an entry's result (an Adam update, without
// clipping: right after the GEMM computing its gradient) sinks past the
// calls and nests that do not touch what it touches, to the step's end:
// the two updates meet there, in their order, and group. A nest writing a
// buffer of the step (t) keeps its place, and an update stops before a call
// that reads its result (n2).
// CHECK-LABEL: func.func @updates
// CHECK-SAME: (%[[X:.+]]: memref<16xf32>, %[[W0:.+]]: memref<16xf32>, %[[W1:.+]]: memref<16xf32>, %[[W2:.+]]: memref<16xf32>, %[[N0:.+]]: memref<16xf32>, %[[N1:.+]]: memref<16xf32>, %[[N2:.+]]: memref<16xf32>, %[[D:.+]]: memref<16xf32>)
// CHECK: call @tfc_cuda_sgemm
// CHECK: outs(%[[N2]]
// CHECK-NOT: tfc.launch_group
// CHECK-SAME: {
// CHECK: call @tfc_cuda_sgemm
// CHECK: call @tfc_cuda_sgemm
// CHECK: outs(%[[T:.+]] : memref<16xf32>) {
// CHECK: call @tfc_cuda_sgemm
// CHECK: ins(%[[W0]], %{{.+}} : {{.*}}) outs(%[[N0]] : memref<16xf32>) attrs = {tfc.launch_group = [[G:[0-9]+]] : i64}
// CHECK: ins(%[[W1]], %{{.+}} : {{.*}}) outs(%[[N1]] : memref<16xf32>) attrs = {tfc.launch_group = [[G]] : i64}
// CHECK-NEXT: ^bb0
// CHECK-NOT: linalg.generic
// CHECK: return
func.func private @tfc_cuda_sgemm(index, index)
func.func @updates(%x: memref<16xf32>, %w0: memref<16xf32>, %w1: memref<16xf32>, %w2: memref<16xf32>,
                   %n0: memref<16xf32>, %n1: memref<16xf32>, %n2: memref<16xf32>, %d: memref<16xf32>)
    attributes {tfc.entry = "train_step"} {
  %c0 = arith.constant 0 : index
  %px = memref.extract_aligned_pointer_as_index %x : memref<16xf32> -> index
  %g2 = memref.alloc() : memref<16xf32>
  %pg2 = memref.extract_aligned_pointer_as_index %g2 : memref<16xf32> -> index
  func.call @tfc_cuda_sgemm(%px, %pg2) : (index, index) -> ()
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w2, %g2 : memref<16xf32>, memref<16xf32>) outs(%n2 : memref<16xf32>) {
  ^bb0(%w: f32, %g: f32, %o: f32):
    %s = arith.subf %w, %g : f32
    linalg.yield %s : f32
  }
  %pn2 = memref.extract_aligned_pointer_as_index %n2 : memref<16xf32> -> index
  func.call @tfc_cuda_sgemm(%pn2, %px) : (index, index) -> ()
  %g0 = memref.alloc() : memref<16xf32>
  %pg0 = memref.extract_aligned_pointer_as_index %g0 : memref<16xf32> -> index
  %pg0off = arith.addi %pg0, %c0 : index
  func.call @tfc_cuda_sgemm(%px, %pg0off) : (index, index) -> ()
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w0, %g0 : memref<16xf32>, memref<16xf32>) outs(%n0 : memref<16xf32>) {
  ^bb0(%w: f32, %g: f32, %o: f32):
    %s = arith.subf %w, %g : f32
    linalg.yield %s : f32
  }
  %g1 = memref.alloc() : memref<16xf32>
  %pg1 = memref.extract_aligned_pointer_as_index %g1 : memref<16xf32> -> index
  func.call @tfc_cuda_sgemm(%px, %pg1) : (index, index) -> ()
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w1, %g1 : memref<16xf32>, memref<16xf32>) outs(%n1 : memref<16xf32>) {
  ^bb0(%w: f32, %g: f32, %o: f32):
    %s = arith.subf %w, %g : f32
    linalg.yield %s : f32
  }
  %t = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<16xf32>) outs(%t : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  %pt = memref.extract_aligned_pointer_as_index %t : memref<16xf32> -> index
  %pd = memref.extract_aligned_pointer_as_index %d : memref<16xf32> -> index
  func.call @tfc_cuda_sgemm(%pt, %pd) : (index, index) -> ()
  return
}
