// RUN: tf-opt %s --split-input-file --tf-merge-launches | FileCheck %s

// Two launches on disjoint bytes of the arena: one launch of 4 + 1 blocks of
// 256 threads; block b < 4 runs the first as its block b, block 4 the
// second as its block 0, and only on the second's 96 threads. Each member's
// grid and block sizes are its own constants inside it.
// CHECK-LABEL: func.func @disjoint
// CHECK: %[[C5:.+]] = arith.constant 5 : index
// CHECK: gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C5]], %{{.+}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256{{.*}}, %{{.+}})
// CHECK:   %[[L0:.+]] = arith.subi %[[B]], %c0
// CHECK:   %[[IN0:.+]] = arith.cmpi ult, %[[L0]], %c4
// CHECK:   scf.if %[[IN0]] {
// CHECK:     %[[S0:.+]] = arith.constant 256 : index
// CHECK:     arith.muli %[[L0]], %[[S0]]
// CHECK:     memref.store {{.*}} : memref<1024xf32>
// CHECK:   %[[L1:.+]] = arith.subi %[[B]], %c4
// CHECK:   %[[IN1:.+]] = arith.cmpi ult, %[[L1]], %c1
// CHECK:   %[[T1:.+]] = arith.cmpi ult, %[[T]], %c96
// CHECK:   %[[BOTH:.+]] = arith.andi %[[IN1]], %[[T1]]
// CHECK:   scf.if %[[BOTH]] {
// CHECK:     %[[S1:.+]] = arith.constant 96 : index
// CHECK:     arith.muli %[[L1]], %[[S1]]
// CHECK:     memref.store {{.*}} : memref<96xf32>
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @disjoint(%x: memref<1024xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c96 = arith.constant 96 : index
  %c256 = arith.constant 256 : index
  %c4096 = arith.constant 4096 : index
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<1024xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<1024xf32>
    memref.store %v, %a[%i] : memref<1024xf32>
    gpu.terminator
  }
  %d = memref.view %arena[%c4096][] : memref<?xi8> to memref<96xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c96, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<1024xf32>
    memref.store %v, %d[%i] : memref<96xf32>
    gpu.terminator
  }
  return
}

// -----

// The second reads bytes the first writes (an overlap of the arena's
// views): two launches, in order.
// CHECK-LABEL: func.func @overlap
// CHECK: gpu.launch
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.load
func.func @overlap(%y: memref<64xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 1.0 : f32
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<64xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %a[%t] : memref<64xf32>
    gpu.terminator
  }
  %c = memref.view %arena[%c128][] : memref<?xi8> to memref<32xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %c[%t] : memref<32xf32>
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Both read one argument and write others: one launch. Writing an
// argument the other reads keeps them apart (the third).
// CHECK-LABEL: func.func @arguments
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c2{{.*}}
// CHECK-COUNT-2: scf.if
// CHECK: gpu.terminator
// CHECK: gpu.launch blocks
// CHECK: memref.store {{.*}} %[[X:.+]][%{{.+}}] : memref<64xf32>
// CHECK-NOT: gpu.launch
func.func @arguments(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %z[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %y[%t] : memref<64xf32>
    memref.store %v, %x[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A kernel whose threads cooperate (a barrier) and a call between launches
// keep every launch apart.
// CHECK-LABEL: func.func @apart
// CHECK-COUNT-3: gpu.launch blocks
// CHECK-NOT: gpu.launch blocks
func.func private @tfc_cuda_sgemm(memref<64xf32>)
func.func @apart(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>, %w: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    gpu.barrier
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %z[%t] : memref<64xf32>
    gpu.terminator
  }
  func.call @tfc_cuda_sgemm(%y) : (memref<64xf32>) -> ()
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %w[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}
