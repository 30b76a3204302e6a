// RUN: tf-opt %s --split-input-file --tf-merge-launches | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-merge-launches=grid-chains=true | FileCheck %s --check-prefix=GRID
// RUN: tf-opt %s --split-input-file --tf-merge-launches=tails=false | FileCheck %s --check-prefix=OFF --implicit-check-not=tfc_last_block

// With grid chains (persistent kernels) there are no tails: no ticket.
// GRID-NOT: tfc_last_block

// A split reduction: 4 blocks of partial sums, then one block that finishes
// them (it reads what the first writes): one launch of the first's grid and
// block. Every block runs its block of the first, then takes a ticket; the
// last runs the second, its block index from a loop over its one block,
// on its 32 threads, its own sizes made in its phase.
// With tails=false (tfc's --no-launch-tails) the two stay launches of their own.
// OFF-LABEL: func.func @one_member
// OFF-COUNT-2: gpu.launch blocks
// CHECK-LABEL: func.func @one_member
// CHECK: gpu.launch blocks(%[[B:[^,]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c4{{.*}}, %{{.+}}) threads(%[[T:[^,]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c64{{.*}}, %{{.+}})
// CHECK-NEXT:   %[[C4:.+]] = arith.constant 4 : index
// CHECK-NEXT:   %[[C64:.+]] = arith.constant 64 : index
// CHECK-NEXT:   %[[BASE:.+]] = arith.muli %[[B]], %[[C64]]
// CHECK-NEXT:   %[[I:.+]] = arith.addi %[[BASE]], %[[T]]
// CHECK-NEXT:   %[[X:.+]] = memref.load %{{.+}}[%[[I]]] : memref<256xf32>
// CHECK-NEXT:   memref.store %[[X]], %{{.+}}[%[[I]]] : memref<256xf32>
// CHECK-NEXT:   %[[LAST:.+]] = func.call @tfc_last_block() : () -> i1
// CHECK-NEXT:   scf.if %[[LAST]] {
// CHECK-NEXT:     %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:     %[[STEP:.+]] = arith.constant 1 : index
// CHECK-NEXT:     scf.for %[[V:.+]] = %[[ZERO]] to %[[ONE]] step %[[STEP]] {
// CHECK-NEXT:       %[[N:.+]] = arith.constant 32 : index
// CHECK-NEXT:       %[[MINE:.+]] = arith.cmpi ult, %[[T]], %[[N]] : index
// CHECK-NEXT:       scf.if %[[MINE]] {
// CHECK-NEXT:         arith.constant 1 : index
// CHECK-NEXT:         %[[S:.+]] = arith.constant 32 : index
// CHECK-NEXT:         %[[VB:.+]] = arith.muli %[[V]], %[[S]]
// CHECK-NEXT:         %[[J:.+]] = arith.addi %[[VB]], %[[T]]
// CHECK-NEXT:         memref.load %{{.+}}[%[[J]]] : memref<256xf32>
// CHECK:              memref.store {{.*}} : memref<32xf32>
// CHECK-NOT: gpu.barrier
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
// CHECK: func.func private @tfc_last_block() -> i1
func.func @one_member(%x: memref<256xf32>, %y: memref<32xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %p = memref.view %arena[%c0][] : memref<?xi8> to memref<256xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<256xf32>
    memref.store %v, %p[%i] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %p[%i] : memref<256xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// A gradient norm's chain: 8 blocks of partial sums, 2 blocks that sum
// those, one block of the total. Both finishing launches are the tail, in
// order, a barrier between them (the second reads the first's writes), each
// member's blocks a loop of its own; a view between the launches (pure)
// stays before the merged launch.
// CHECK-LABEL: func.func @two_members
// CHECK: memref.view
// CHECK: memref.view
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c8{{.*}}, %{{.+}}) threads(%[[T:[^,]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256{{.*}}, %{{.+}})
// CHECK:   memref.store {{.*}} : memref<2048xf32>
// CHECK:   %[[LAST:.+]] = func.call @tfc_last_block() : () -> i1
// CHECK:   scf.if %[[LAST]] {
// CHECK:     %[[N1:.+]] = arith.constant 2 : index
// CHECK:     scf.for %{{.+}} = %{{.+}} to %[[N1]] step
// CHECK:       arith.cmpi ult, %[[T]], %c32
// CHECK:       memref.load {{.*}} : memref<2048xf32>
// CHECK:       memref.store {{.*}} : memref<64xf32>
// CHECK:     gpu.barrier
// CHECK:     %[[N2:.+]] = arith.constant 1 : index
// CHECK:     scf.for %{{.+}} = %{{.+}} to %[[N2]] step
// CHECK:       arith.cmpi ult, %[[T]], %c64
// CHECK:       memref.load {{.*}} : memref<64xf32>
// CHECK:       memref.store {{.*}} : memref<64xf32>
// CHECK-NOT: gpu.barrier
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @two_members(%x: memref<2048xf32>, %out: memref<64xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c8192 = arith.constant 8192 : index
  %p = memref.view %arena[%c0][] : memref<?xi8> to memref<2048xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<2048xf32>
    memref.store %v, %p[%i] : memref<2048xf32>
    gpu.terminator
  }
  %q = memref.view %arena[%c8192][] : memref<?xi8> to memref<64xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %p[%i] : memref<2048xf32>
    memref.store %v, %q[%i] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %q[%t] : memref<64xf32>
    memref.store %v, %out[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// The limits: a member of 16 blocks of 256 threads (4,096 in all) is a
// tail; one of 17 blocks, or of 5 blocks of 1,024 threads (5,120), is not:
// each begins a launch of its own (the first of 17 blocks could take a
// tail, but the next is too large), three launches, one ticket.
// CHECK-LABEL: func.func @limits
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c8{{.*}}, %{{.+}}) threads(%{{.+}}) in (%{{.+}} = %c256{{.*}}, %{{.+}})
// CHECK:   func.call @tfc_last_block()
// CHECK:   arith.constant 16 : index
// CHECK:   gpu.terminator
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c17{{.*}}, %{{.+}}) threads(%{{.+}}) in (%{{.+}} = %c32{{.*}}, %{{.+}})
// CHECK-NOT: tfc_last_block
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c5{{.*}}, %{{.+}}) threads(%{{.+}}) in (%{{.+}} = %c1024{{.*}}, %{{.+}})
// CHECK-NOT: tfc_last_block
// CHECK: return
func.func @limits(%x: memref<8192xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c17 = arith.constant 17 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<8192xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<8192xf32>
    memref.store %v, %a[%i] : memref<8192xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %a[%i] : memref<8192xf32>
    memref.store %v, %x[%i] : memref<8192xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c17, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<8192xf32>
    memref.store %v, %a[%i] : memref<8192xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c5, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c1024, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %a[%i] : memref<8192xf32>
    memref.store %v, %x[%i] : memref<8192xf32>
    gpu.terminator
  }
  return
}

// -----

// A first launch narrower than its tail (4 blocks of 32 threads, then one
// of 128): the launch's block is the wider, the first runs on its first 32
// threads, before the ticket (which every thread takes), the tail on all.
// CHECK-LABEL: func.func @narrow_head
// CHECK: gpu.launch blocks(%{{.+}}) in (%{{.+}} = %c4{{.*}}, %{{.+}}) threads(%[[T:[^,]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c128{{.*}}, %{{.+}})
// CHECK-NEXT:   %[[N:.+]] = arith.constant 32 : index
// CHECK-NEXT:   %[[MINE:.+]] = arith.cmpi ult, %[[T]], %[[N]] : index
// CHECK-NEXT:   scf.if %[[MINE]] {
// CHECK:          memref.store {{.*}} : memref<128xf32>
// CHECK:        }
// CHECK-NEXT:   %[[LAST:.+]] = func.call @tfc_last_block() : () -> i1
// CHECK-NEXT:   scf.if %[[LAST]] {
// CHECK:          scf.for
// CHECK-NOT:        arith.cmpi
// CHECK:            memref.load {{.*}} : memref<128xf32>
// CHECK:            memref.store {{.*}} : memref<128xf32>
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
func.func @narrow_head(%x: memref<128xf32>, %y: memref<128xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<128xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<128xf32>
    memref.store %v, %a[%i] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%t] : memref<128xf32>
    memref.store %v, %y[%t] : memref<128xf32>
    gpu.terminator
  }
  return
}

// -----

// One-block launches only (a loss's mean, then its division): a chain, as
// before, with no ticket; and a small launch after one that the pass leaves
// alone (a barrier in it) is no tail either.
// CHECK-LABEL: func.func @no_tail
// CHECK: gpu.launch blocks
// CHECK-NOT: tfc_last_block
// CHECK: gpu.barrier
// CHECK: gpu.launch blocks
// CHECK: gpu.barrier
// CHECK: gpu.launch blocks
// CHECK-NOT: tfc_last_block
// CHECK-NOT: gpu.launch blocks
// CHECK: return
// CHECK-NOT: tfc_last_block
func.func @no_tail(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %y[%t] : memref<64xf32>
    memref.store %v, %z[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %z[%t] : memref<64xf32>
    gpu.barrier
    memref.store %v, %x[%t] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A member wider than a head of many blocks (64 blocks of 32 threads, then
// one of 128) would idle 96 threads in each of the head's 64 blocks: no tail.
// CHECK-LABEL: func.func @wide_member_many_blocks
// CHECK-NOT: tfc_last_block
// CHECK-COUNT-2: gpu.launch blocks
// CHECK-NOT: tfc_last_block
func.func @wide_member_many_blocks(%x: memref<2048xf32>, %y: memref<128xf32>, %arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<2048xf32>
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c64, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<2048xf32>
    memref.store %v, %a[%i] : memref<2048xf32>
    gpu.terminator
  }
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%t] : memref<2048xf32>
    memref.store %v, %y[%t] : memref<128xf32>
    gpu.terminator
  }
  return
}
