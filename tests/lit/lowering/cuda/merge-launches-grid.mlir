// RUN: tf-opt %s --split-input-file --tf-merge-launches=grid-chains=true | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-merge-launches | FileCheck %s --check-prefix=PLAIN

// A step of dependent launches of any grid (a producer of 600 blocks, its
// consumer of 2 blocks of 64 threads): one persistent kernel, its grid the
// largest member's but at most 264 blocks, its block the widest; each phase
// loops over its member's blocks by the grid launched (the runtime may
// launch fewer), the narrower one on its first threads; a grid barrier
// (a call of @tfc_grid_sync) between them. Without grid chains the second
// (2 blocks of 64 threads: small) is the first's tail, no grid barrier.
// CHECK-LABEL: func.func @step
// CHECK: %[[C264:.+]] = arith.constant 264 : index
// CHECK: gpu.launch blocks(%[[B:[^,]+]], %{{.+}}, %{{.+}}) in (%[[G:[^ ]+]] = %[[C264]], %{{.+}}) threads(%[[T:[^,]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256{{.*}}, %{{.+}})
// CHECK:   %[[N0:.+]] = arith.constant 600 : index
// CHECK:   scf.for %[[V0:.+]] = %[[B]] to %[[N0]] step %[[G]] {
// CHECK:     arith.muli %[[V0]]
// CHECK:     memref.store {{.*}} : memref<153600xf32>
// CHECK:   func.call @tfc_grid_sync() : () -> ()
// CHECK:   %[[N1:.+]] = arith.constant 2 : index
// CHECK:   scf.for %[[V1:.+]] = %[[B]] to %[[N1]] step %[[G]] {
// CHECK:     %[[IN:.+]] = arith.cmpi ult, %[[T]], %{{.+}} : index
// CHECK:     scf.if %[[IN]] {
// CHECK:       memref.load {{.*}} : memref<153600xf32>
// CHECK:       memref.store {{.*}} : memref<128xf32>
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
// CHECK: func.func private @tfc_grid_sync()
// PLAIN-LABEL: func.func @step
// PLAIN: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c600{{.*}}, %{{.+}})
// PLAIN: func.call @tfc_last_block()
// PLAIN-NOT: gpu.launch
// PLAIN-NOT: tfc_grid_sync
// PLAIN: return
func.func @step(%x: memref<153600xf32>, %y: memref<128xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c600 = arith.constant 600 : index
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<153600xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c600, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<153600xf32>
    memref.store %v, %a[%i] : memref<153600xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %a[%i] : memref<153600xf32>
    memref.store %v, %y[%i] : memref<128xf32>
    gpu.terminator
  }
  return
}

// -----

// A lone launch is not a chain: it stays as it is, no barrier declared.
// CHECK-LABEL: func.func @alone
// CHECK: gpu.launch blocks({{.*}}) in (%{{.+}} = %c3{{.*}}, %{{.+}})
// CHECK-NOT: scf.for
// CHECK-NOT: tfc_grid_sync
func.func @alone(%x: memref<768xf32>) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c3, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<768xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<768xf32>
    gpu.terminator
  }
  return
}
