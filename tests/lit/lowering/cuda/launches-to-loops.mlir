// RUN: tf-opt %s --split-input-file --verify-diagnostics --tf-launches-to-loops | FileCheck %s

// A kernel without barriers: one parallel loop over its blocks and threads.
// CHECK-LABEL: func.func @independent
// CHECK: scf.parallel (%{{.+}}, %{{.+}}, %{{.+}}, %[[T:.+]], %{{.+}}, %{{.+}}) =
// CHECK:   memref.load %{{.+}}[%[[T]]]
// CHECK:   memref.store
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @independent(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A chain (tf-merge-launches): each block runs its phases in order, each a
// parallel loop over the threads; the phases' constants come first, once a
// block.
// CHECK-LABEL: func.func @phases
// CHECK: scf.parallel (%{{[^,]+}}, %{{[^,]+}}, %{{[^)]+}}) = (%{{.+}}) to (%[[C1:[^,]+]], %{{.+}}) step
// CHECK-NEXT: %[[N:.+]] = arith.constant 32 : index
// CHECK-NEXT: scf.parallel (%[[T0:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) = (%{{.+}}) to (%c64{{.*}}, %{{.+}}) step
// CHECK-NEXT:   memref.load %{{.+}}[%[[T0]]]
// CHECK-NEXT:   memref.store %{{.+}}, %{{.+}}[%[[T0]]] : memref<64xf32>
// CHECK:      scf.parallel (%[[T1:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) = (%{{.+}}) to (%c64{{.*}}, %{{.+}}) step
// CHECK-NEXT:   %[[IN:.+]] = arith.cmpi ult, %[[T1]], %[[N]]
// CHECK-NEXT:   scf.if %[[IN]] {
// CHECK-NEXT:     memref.load %{{.+}}[%[[T1]]] : memref<64xf32>
// CHECK-NEXT:     memref.store
// CHECK-NOT: gpu.
// CHECK: return
func.func @phases(%x: memref<64xf32>, %a: memref<64xf32>, %y: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %n = arith.constant 32 : index
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %a[%t] : memref<64xf32>
    gpu.barrier
    %in = arith.cmpi ult, %t, %n : index
    scf.if %in {
      %w = memref.load %a[%t] : memref<64xf32>
      memref.store %w, %y[%t] : memref<32xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A barrier under control flow: its threads cooperate in ways no loop runs.
func.func @nested_barrier(%x: memref<64xf32>, %y: memref<64xf32>, %p: i1) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{the kernel's threads cooperate}}
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    scf.if %p {
      gpu.barrier
    }
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A value computed before a barrier and used after it (not an id, not a
// constant): each phase is its own loop, so it is refused.
func.func @crossing(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{a value crosses a barrier}}
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    gpu.barrier
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A persistent kernel (tf-merge-launches' grid chains): every block ends a
// phase before any begins the next, so each phase is a parallel loop over
// the blocks and the threads, one after the other, and the barrier's
// declaration goes with its last call.
// CHECK-LABEL: func.func @grid_phases
// CHECK: scf.parallel (%[[B0:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %[[T0:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) = (%{{.+}}) to (%c2{{.*}}, %c1{{.*}}, %c1{{.*}}, %c64{{.*}}, %c1{{.*}}, %c1{{.*}}) step
// CHECK:   scf.for %[[V:.+]] = %[[B0]] to %{{.+}} step %c2
// CHECK:     memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<320xf32>
// CHECK: scf.parallel (%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[T1:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) = (%{{.+}}) to (%c2{{.*}}, %c1{{.*}}, %c1{{.*}}, %c64{{.*}}, %c1{{.*}}, %c1{{.*}}) step
// CHECK:   memref.load %{{.+}}[%{{.+}}] : memref<320xf32>
// CHECK-NOT: gpu.
// CHECK-NOT: tfc_grid_sync
func.func private @tfc_grid_sync()
func.func @grid_phases(%x: memref<320xf32>, %a: memref<320xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %n = arith.constant 5 : index
    %w = arith.constant 64 : index
    scf.for %v = %b to %n step %gx {
      %base = arith.muli %v, %w : index
      %i = arith.addi %base, %t : index
      %e = memref.load %x[%i] : memref<320xf32>
      memref.store %e, %a[%i] : memref<320xf32>
    }
    func.call @tfc_grid_sync() : () -> ()
    %z = arith.constant 0 : index
    %first = arith.cmpi eq, %b, %z : index
    scf.if %first {
      %s = arith.constant 256 : index
      %j = arith.addi %s, %t : index
      %e = memref.load %a[%j] : memref<320xf32>
      memref.store %e, %y[%t] : memref<64xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A grid barrier under control flow cannot be a phase boundary: refused.
func.func private @tfc_grid_sync()
func.func @nested_grid_sync(%x: memref<64xf32>, %y: memref<64xf32>, %p: i1) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{the kernel's threads cooperate}}
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    scf.if %p {
      func.call @tfc_grid_sync() : () -> ()
    }
    %v = memref.load %x[%t] : memref<64xf32>
    memref.store %v, %y[%t] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A kernel with a tail (tf-merge-launches): the grid's work is a parallel
// loop over its 4 blocks and 64 threads, without the ticket; then the tail
// once, after the whole grid (whichever block drew the last ticket), each
// of its phases a parallel loop over the threads, the members' block loops
// inside; the constants before all of them, and the ticket's declaration
// goes with its last call.
// CHECK-LABEL: func.func @tail
// CHECK: scf.parallel (%[[B:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %[[T:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) = (%{{.+}}) to (%c4{{.*}}, %c1{{.*}}, %c1{{.*}}, %c64{{.*}}, %c1{{.*}}, %c1{{.*}}) step
// CHECK-NEXT:   %[[BASE:.+]] = arith.muli %[[B]], %c64
// CHECK-NEXT:   %[[I:.+]] = arith.addi %[[BASE]], %[[T]]
// CHECK-NEXT:   memref.load %{{.+}}[%[[I]]] : memref<256xf32>
// CHECK-NEXT:   memref.store %{{.+}}, %{{.+}}[%[[I]]] : memref<256xf32>
// CHECK-NEXT:   scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: scf.parallel (%[[T1:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) = (%{{.+}}) to (%c64{{.*}}, %c1{{.*}}, %c1{{.*}}) step
// CHECK-NEXT:   scf.for %[[V:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NEXT:     %[[N:.+]] = arith.constant 32 : index
// CHECK-NEXT:     %[[IN:.+]] = arith.cmpi ult, %[[T1]], %[[N]]
// CHECK-NEXT:     scf.if %[[IN]] {
// CHECK-NEXT:       %[[S:.+]] = arith.constant 32 : index
// CHECK-NEXT:       %[[VB:.+]] = arith.muli %[[V]], %[[S]]
// CHECK-NEXT:       %[[J:.+]] = arith.addi %[[VB]], %[[T1]]
// CHECK-NEXT:       memref.load %{{.+}}[%[[J]]] : memref<256xf32>
// CHECK-NEXT:       memref.store %{{.+}}, %{{.+}}[%[[J]]] : memref<64xf32>
// CHECK:      scf.parallel (%[[T2:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) = (%{{.+}}) to (%c64{{.*}}, %c1{{.*}}, %c1{{.*}}) step
// CHECK-NEXT:   scf.for
// CHECK:          memref.load %{{.+}}[%[[T2]]] : memref<64xf32>
// CHECK-NEXT:     memref.store %{{.+}}, %{{.+}}[%[[T2]]] : memref<64xf32>
// CHECK-NOT: scf.parallel
// CHECK-NOT: gpu.
// CHECK: return
// CHECK-NOT: tfc_last_block
func.func private @tfc_last_block() -> i1
func.func @tail(%x: memref<256xf32>, %a: memref<256xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %base = arith.muli %b, %sx : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<256xf32>
    memref.store %v, %a[%i] : memref<256xf32>
    %last = func.call @tfc_last_block() : () -> i1
    scf.if %last {
      %lo = arith.constant 0 : index
      %two = arith.constant 2 : index
      %one = arith.constant 1 : index
      scf.for %u = %lo to %two step %one {
        %n = arith.constant 32 : index
        %in = arith.cmpi ult, %t, %n : index
        scf.if %in {
          %s = arith.constant 32 : index
          %ub = arith.muli %u, %s : index
          %j = arith.addi %ub, %t : index
          %w = memref.load %a[%j] : memref<256xf32>
          memref.store %w, %y[%j] : memref<64xf32>
        }
      }
      gpu.barrier
      %lo1 = arith.constant 0 : index
      %one1 = arith.constant 1 : index
      scf.for %u = %lo1 to %one1 step %one1 {
        %w = memref.load %y[%t] : memref<64xf32>
        memref.store %w, %z[%t] : memref<64xf32>
      }
    }
    gpu.terminator
  }
  return
}

// -----

// The tail takes a value of the grid's work (each runs as its own loop):
// refused.
func.func private @tfc_last_block() -> i1
func.func @tail_takes_a_value(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{the tail takes a value of the grid's work}}
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%t] : memref<64xf32>
    %last = func.call @tfc_last_block() : () -> i1
    scf.if %last {
      memref.store %v, %y[%t] : memref<64xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// The ticket's answer used otherwise than as the condition of the tail: a
// shape the emulation does not know, refused.
func.func private @tfc_last_block() -> i1
func.func @tail_with_else(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{a kernel with a tail must be}}
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %last = func.call @tfc_last_block() : () -> i1
    scf.if %last {
      %v = memref.load %x[%t] : memref<64xf32>
      memref.store %v, %y[%t] : memref<64xf32>
    } else {
      %v = memref.load %y[%t] : memref<64xf32>
      memref.store %v, %x[%t] : memref<64xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A barrier inside a member of the tail (under its block loop), not
// between phases: refused.
func.func private @tfc_last_block() -> i1
func.func @tail_nested_barrier(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{a gpu op in the tail other than barriers between phases}}
  gpu.launch blocks(%b, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %last = func.call @tfc_last_block() : () -> i1
    scf.if %last {
      %lo = arith.constant 0 : index
      %one = arith.constant 1 : index
      scf.for %u = %lo to %one step %one {
        %v = memref.load %x[%t] : memref<64xf32>
        gpu.barrier
        memref.store %v, %y[%t] : memref<64xf32>
      }
    }
    gpu.terminator
  }
  return
}
