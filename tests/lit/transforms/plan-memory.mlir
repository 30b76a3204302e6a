// RUN: tf-opt %s --tf-plan-memory --canonicalize --split-input-file | FileCheck %s

// A chain a -> b -> c: a and c are never live together, so c reuses a's
// bytes; b overlaps both and sits elsewhere. The arena is a new argument.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<?xi8>
// CHECK-SAME: tfc.arena_bytes = 128 : i64
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%[[C0]]][] : memref<?xi8> to memref<16xf32>
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%[[C64]]][] : memref<?xi8> to memref<16xf32>
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<?xi8> to memref<16xf32>
// CHECK: linalg.copy ins(%[[B]] : memref<16xf32>) outs(%[[C]] : memref<16xf32>)
func.func @chain(%in: memref<16xf32>, %out: memref<16xf32>) attributes {tfc.entry = "predict"} {
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%in : memref<16xf32>) outs(%a : memref<16xf32>)
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%a : memref<16xf32>) outs(%b : memref<16xf32>)
  %c = memref.alloc() : memref<16xf32>
  linalg.copy ins(%b : memref<16xf32>) outs(%c : memref<16xf32>)
  linalg.copy ins(%c : memref<16xf32>) outs(%out : memref<16xf32>)
  return
}

// -----

// A use through a view (here a reshape) keeps the buffer alive: b is
// allocated while a is still read through its view, so they do not alias.
// CHECK-LABEL: func.func @view_extends_life
// CHECK-SAME: tfc.arena_bytes = 128 : i64
// CHECK: memref.view %{{.*}}[%[[OA:.*]]][] : memref<?xi8> to memref<4x4xf32>
// CHECK: memref.view %{{.*}}[%[[OB:.*]]][] : memref<?xi8> to memref<16xf32>
func.func @view_extends_life(%in: memref<4x4xf32>, %out: memref<16xf32>) attributes {tfc.entry = "predict"} {
  %a = memref.alloc() : memref<4x4xf32>
  linalg.copy ins(%in : memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%flat : memref<16xf32>) outs(%b : memref<16xf32>)
  linalg.copy ins(%b : memref<16xf32>) outs(%out : memref<16xf32>)
  return
}

// -----

// A pointer taken from a planned buffer is the arena's plus its offset.
// CHECK-LABEL: func.func @pointer
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<?xi8>
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[P:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK: call @use(%[[P]])
func.func private @use(index)
func.func @pointer(%in: memref<4x4xf32>) attributes {tfc.entry = "predict"} {
  %a = memref.alloc() : memref<4x4xf32>
  %b = memref.alloc() : memref<4x4xf32>
  linalg.copy ins(%in : memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  linalg.copy ins(%a : memref<4x4xf32>) outs(%b : memref<4x4xf32>)
  %sub = memref.subview %b[1, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 4>>
  %p = memref.extract_aligned_pointer_as_index %sub : memref<2x4xf32, strided<[4, 1], offset: 4>> -> index
  call @use(%p) : (index) -> ()
  return
}

// -----

// Functions that are not entries keep their allocations.
// CHECK-LABEL: func.func @not_an_entry
// CHECK: memref.alloc
func.func @not_an_entry(%in: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%a : memref<4xf32>)
  return
}
