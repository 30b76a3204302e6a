// RUN: tf-opt %s --split-input-file --tf-merge-launches | FileCheck %s

// Two launches on disjoint bytes of the arena: one launch of 4 + 1 blocks of
// 256 threads; block b < 4 runs the first as its block b, the others (block
// 4) the second as its block 0, and only on the second's 96 threads. Each
// member's grid and block sizes are its own constants inside it.
// CHECK-LABEL: func.func @disjoint
// CHECK: %[[C5:.+]] = arith.constant 5 : index
// CHECK: gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C5]], %{{.+}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256{{.*}}, %{{.+}})
// CHECK:   %[[IN0:.+]] = arith.cmpi ult, %[[B]], %c4
// CHECK:   scf.if %[[IN0]] {
// CHECK:     %[[L0:.+]] = arith.subi %[[B]], %c0
// CHECK:     %[[S0:.+]] = arith.constant 256 : index
// CHECK:     arith.muli %[[L0]], %[[S0]]
// CHECK:     memref.store {{.*}} : memref<1024xf32>
// CHECK:   } else {
// CHECK:     %[[L1:.+]] = arith.subi %[[B]], %c4
// CHECK:     %[[T1:.+]] = arith.cmpi ult, %[[T]], %c96
// CHECK:     scf.if %[[T1]] {
// CHECK:       %[[S1:.+]] = arith.constant 96 : index
// CHECK:       arith.muli %[[L1]], %[[S1]]
// CHECK:       memref.store {{.*}} : memref<96xf32>
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
// views), and the first has two blocks (no chain): not side by side, but
// the second is small, so it is the first's tail, run after every block of
// the first (merge-launches-tails.mlir).
// CHECK-LABEL: func.func @overlap
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c2{{.*}}, %{{.+}}) threads(%{{.+}}) in (%{{.+}} = %c64{{.*}}, %{{.+}})
// CHECK: memref.store
// CHECK: func.call @tfc_last_block()
// CHECK: scf.if
// CHECK: memref.load
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @overlap(%y: memref<64xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 1.0 : f32
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<64xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    memref.store %cst, %a[%i] : memref<64xf32>
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
// argument the other reads keeps them apart (the third): not side by side,
// but after both, as the tail of their launch.
// CHECK-LABEL: func.func @arguments
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c2{{.*}}
// CHECK: scf.if
// CHECK: } else {
// CHECK-NOT: scf.if
// CHECK: func.call @tfc_last_block()
// CHECK: scf.if
// CHECK: memref.store {{.*}} %arg0[%{{.+}}] : memref<64xf32>
// CHECK: gpu.terminator
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

// -----

// A one-block launch reads what the one before wrote (a sum, then a mean):
// one block of the wider's 64 threads, the first's body, a barrier, then the
// second's on its 32 threads. Each member's block size is its own constant,
// made in its phase.
// CHECK-LABEL: func.func @chain_of_two
// CHECK: gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[ONE:.+]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C64:.+]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]])
// CHECK-NEXT:   arith.constant 64 : index
// CHECK-NEXT:   memref.load %{{.+}}[%[[T]]]
// CHECK-NEXT:   memref.store %{{.+}}, %{{.+}}[%[[T]]] : memref<64xf32>
// CHECK-NEXT:   gpu.barrier
// CHECK-NEXT:   %[[N1:.+]] = arith.constant 32 : index
// CHECK-NEXT:   %[[IN1:.+]] = arith.cmpi ult, %[[T]], %[[N1]]
// CHECK-NEXT:   scf.if %[[IN1]] {
// CHECK-NEXT:     %[[S1:.+]] = arith.constant 32 : index
// CHECK-NEXT:     arith.addi %[[T]], %[[S1]]
// CHECK-NEXT:     memref.load
// CHECK-NEXT:     memref.store
// CHECK-NEXT:   }
// CHECK-NEXT:   gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @chain_of_two(%x: memref<64xf32>, %y: memref<32xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<64xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %a[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.addi %t, %sx : index
    %v = memref.load %a[%i] : memref<64xf32>
    memref.store %v, %y[%t] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// Three, each reading the one before's result, the widest in the middle;
// a view between them is pure and stays before the merged launch.
// CHECK-LABEL: func.func @chain_of_three
// CHECK: memref.view
// CHECK: memref.view
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %[[ONE:.+]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c128{{.*}}, %{{.+}})
// CHECK:   arith.cmpi ult, %[[T]], %{{.+}}
// CHECK:   scf.if
// CHECK:     arith.constant 16 : index
// CHECK:     memref.store {{.*}} : memref<16xf32>
// CHECK:   gpu.barrier
// CHECK-NOT: scf.if
// CHECK:   arith.constant 128 : index
// CHECK:   memref.load {{.*}} : memref<16xf32>
// CHECK:   memref.store {{.*}} : memref<128xf32>
// CHECK:   gpu.barrier
// CHECK:   arith.cmpi ult, %[[T]], %{{.+}}
// CHECK:   scf.if
// CHECK:     arith.constant 1 : index
// CHECK:     memref.load {{.*}} : memref<128xf32>
// CHECK:     memref.store {{.*}} : memref<1xf32>
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @chain_of_three(%x: memref<16xf32>, %out: memref<1xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %c1024 = arith.constant 1024 : index
  %p = memref.view %arena[%c0][] : memref<?xi8> to memref<16xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<16xf32>
    memref.store %v, %p[%t] : memref<16xf32>
    gpu.terminator
  }
  %q = memref.view %arena[%c1024][] : memref<?xi8> to memref<128xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %i = arith.remui %t, %sx : index
    %j = arith.remui %i, %c16 : index
    %v = memref.load %p[%j] : memref<16xf32>
    memref.store %v, %q[%t] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %q[%t] : memref<128xf32>
    memref.store %v, %out[%t] : memref<1xf32>
    gpu.terminator
  }
  return
}

// -----

// A dependent one-block launch after one of four blocks (no chain: a tail,
// merge-launches-tails.mlir), and one after a store between launches (a
// memory effect): two launches, no barrier.
// CHECK-LABEL: func.func @no_chain
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c4
// CHECK-NOT: gpu.barrier
// CHECK: func.call @tfc_last_block()
// CHECK-NOT: gpu.barrier
// CHECK: memref.store
// CHECK-NOT: gpu.barrier
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c1
// CHECK-NOT: gpu.barrier
// CHECK-NOT: tfc_last_block
// CHECK: return
func.func @no_chain(%x: memref<256xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.0 : f32
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    memref.store %cst, %x[%i] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<256xf32>
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  memref.store %cst, %z[%c0] : memref<64xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %y[%t] : memref<64xf32>
    memref.store %v, %z[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Five independent launches of 2, 1, 1, 1 and 1 blocks (first blocks 0, 2,
// 3, 4, 5): a block finds its member by a binary search, the middle
// member's first block at each level, not by a test a member.
// CHECK-LABEL: func.func @search
// CHECK: gpu.launch blocks(%[[B:[a-z0-9_]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c6
// CHECK:   arith.cmpi ult, %[[B]], %c3
// CHECK:   scf.if
// CHECK:     arith.cmpi ult, %[[B]], %c2
// CHECK:     scf.if
// CHECK:       memref.store {{.*}} %arg0
// CHECK:     } else {
// CHECK:       memref.store {{.*}} %arg1
// CHECK:   } else {
// CHECK:     arith.cmpi ult, %[[B]], %c4
// CHECK:     scf.if
// CHECK:       memref.store {{.*}} %arg2
// CHECK:     } else {
// CHECK:       arith.cmpi ult, %[[B]], %c5
// CHECK:       scf.if
// CHECK:         memref.store {{.*}} %arg3
// CHECK:       } else {
// CHECK:         memref.store {{.*}} %arg4
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
func.func @search(%a: memref<128xf32>, %b: memref<64xf32>, %c: memref<64xf32>,
                  %d: memref<64xf32>, %e: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %t : index
    memref.store %cst, %a[%i] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %b[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %c[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %d[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    memref.store %cst, %e[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}
