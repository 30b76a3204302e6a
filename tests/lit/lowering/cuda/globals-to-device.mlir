// RUN: tf-opt %s --tf-globals-to-device | FileCheck %s

// A constant table whose pointer a runtime call takes (a hand-written
// attention kernel's mask) is copied into a buffer of the entry (the copy a
// kernel, the buffer planned in the arena), and the call reads the buffer; a
// table only loop nests read stays (it moves into the GPU module with their
// kernels).
// CHECK-LABEL: func.func @tables
// CHECK: %[[MASK:.+]] = memref.get_global @mask : memref<4x4xi1>
// CHECK: %[[COPY:.+]] = memref.alloc() : memref<4x4xi1>
// CHECK: memref.copy %[[MASK]], %[[COPY]]
// CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[COPY]]
// CHECK: call @use(%[[P]])
// CHECK: %[[PE:.+]] = memref.get_global @pe : memref<4xf32>
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[PE]] : memref<4xf32>)
memref.global "private" constant @mask : memref<4x4xi1> = dense<true>
memref.global "private" constant @pe : memref<4xf32> = dense<1.0>
func.func private @use(index)
func.func @tables(%out: memref<4xf32>) {
  %mask = memref.get_global @mask : memref<4x4xi1>
  %p = memref.extract_aligned_pointer_as_index %mask : memref<4x4xi1> -> index
  call @use(%p) : (index) -> ()
  %pe = memref.get_global @pe : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%pe : memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}
