// RUN: tf-opt %s --tf-results-in-place --split-input-file | FileCheck %s

// The new parameter is computed in its out-param: the allocation and the
// copy are gone, the loop writes %out.
// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[P:[a-z0-9]+]]: memref<4xf32>, %[[G:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]], %[[G]] : memref<4xf32>, memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
#id = affine_map<(i) -> (i)>
func.func @update(%p: memref<4xf32>, %g: memref<4xf32>, %out: memref<4xf32>) attributes {tfc.entry = "train_step"} {
  %new = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%new : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  memref.copy %new, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Copies stay where the out-param cannot take the buffer's place: an
// argument returned as it is, a view (another type), a buffer read after
// its copy; and outside entries. A buffer returned twice is computed in the
// last out-param and copied from there into the first.
// CHECK-LABEL: func.func @kept
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4xf32>, %[[O1:[a-z0-9]+]]: memref<4xf32>, %[[O2:[a-z0-9]+]]: memref<2x2xf32>, %[[O3:[a-z0-9]+]]: memref<4xf32>, %[[O4:[a-z0-9]+]]: memref<4xf32>, %[[O5:[a-z0-9]+]]: memref<4xf32>
// CHECK: %[[B:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[V:.+]] = memref.expand_shape %[[B]]
// CHECK: %[[R:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NOT: memref.alloc
// CHECK: memref.copy %[[X]], %[[O1]]
// CHECK: memref.copy %[[V]], %[[O2]]
// CHECK: memref.copy %[[O4]], %[[O3]]
// CHECK: memref.copy %[[R]], %[[O5]]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[R]] : memref<4xf32>) outs(%[[X]] : memref<4xf32>)
#id = affine_map<(i) -> (i)>
func.func @kept(%x: memref<4xf32>, %o1: memref<4xf32>, %o2: memref<2x2xf32>, %o3: memref<4xf32>, %o4: memref<4xf32>, %o5: memref<4xf32>) attributes {tfc.entry = "predict"} {
  %b = memref.alloc() : memref<4xf32>
  %v = memref.expand_shape %b [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  %t = memref.alloc() : memref<4xf32>
  %r = memref.alloc() : memref<4xf32>
  memref.copy %x, %o1 : memref<4xf32> to memref<4xf32>
  memref.copy %v, %o2 : memref<2x2xf32> to memref<2x2xf32>
  memref.copy %t, %o3 : memref<4xf32> to memref<4xf32>
  memref.copy %t, %o4 : memref<4xf32> to memref<4xf32>
  memref.copy %r, %o5 : memref<4xf32> to memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%r : memref<4xf32>) outs(%x : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @not_an_entry
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @not_an_entry(%out: memref<4xf32>) {
  %b = memref.alloc() : memref<4xf32>
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  return
}
