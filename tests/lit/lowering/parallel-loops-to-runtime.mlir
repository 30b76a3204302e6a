// RUN: tf-opt %s --tf-parallel-loops-to-runtime --split-input-file | FileCheck %s
// RUN: tf-opt %s --tf-parallel-loops-to-runtime="min-work=0 min-chunk-work=0" --split-input-file | FileCheck %s --check-prefix=FORCED

// Both dims parallel: threads share the outer dim, the inner one stays a
// serial loop in each iteration. The captured buffers travel in a stack
// struct; the constant is recreated in the body.
// CHECK-LABEL: func.func @relu_2d
// CHECK-SAME: (%[[IN:[a-z0-9]+]]: memref<256x128xf32>, %[[OUT:[a-z0-9]+]]: memref<256x128xf32>)
// A memref of static layout travels as its aligned pointer alone.
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr)>
// CHECK: %[[IN_D:.*]] = builtin.unrealized_conversion_cast %[[IN]] : memref<256x128xf32> to !llvm.struct
// CHECK: %[[IN_P:.*]] = llvm.extractvalue %[[IN_D]][1]
// CHECK: %[[CTX0:.*]] = llvm.insertvalue %[[IN_P]], %{{.*}}[0]
// CHECK: %[[OUT_D:.*]] = builtin.unrealized_conversion_cast %[[OUT]]
// CHECK: %[[OUT_P:.*]] = llvm.extractvalue %[[OUT_D]][1]
// CHECK: %[[CTX1:.*]] = llvm.insertvalue %[[OUT_P]], %[[CTX0]][1]
// CHECK: llvm.store %[[CTX1]], %[[SLOT]]
// CHECK: %[[F:.*]] = constant @relu_2d_parallel0 : (!llvm.ptr, i64, i64) -> ()
// CHECK-DAG: %[[N:.*]] = arith.constant 256 : i64
// CHECK-DAG: %[[GRAIN:.*]] = arith.constant 16 : i64
// CHECK: call @tfc_parallel_for(%[[F]], %[[SLOT]], %[[N]], %[[GRAIN]])
// CHECK-NOT: scf.parallel
// CHECK: return
// CHECK-LABEL: func.func private @relu_2d_parallel0
// CHECK-SAME: (%[[CTX:[a-z0-9]+]]: !llvm.ptr, %[[BEGIN:[a-z0-9]+]]: i64, %[[END:[a-z0-9]+]]: i64)
// CHECK: %[[FIELDS:.*]] = llvm.load %[[CTX]]
// The body rebuilds each descriptor: the pointer, offset 0, sizes and strides.
// CHECK: %[[PA:.*]] = llvm.extractvalue %[[FIELDS]][0]
// CHECK: llvm.insertvalue %[[PA]], %{{.*}}[1]
// CHECK: llvm.mlir.constant(256 : index)
// CHECK: %[[A:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<256x128xf32>
// CHECK: %[[B:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<256x128xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[LO:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK-DAG: %[[HI:.*]] = arith.index_cast %[[END]] : i64 to index
// CHECK: scf.for %[[I:.*]] = %[[LO]] to %[[HI]]
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}}
// CHECK: %[[X:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
// CHECK: %[[Y:.*]] = arith.maximumf %[[X]], %[[ZERO]]
// CHECK: memref.store %[[Y]], %[[B]][%[[I]], %[[J]]]
// CHECK-LABEL: func.func private @tfc_parallel_for((!llvm.ptr, i64, i64) -> (), !llvm.ptr, i64, i64)
func.func @relu_2d(%in: memref<256x128xf32>, %out: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c128) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<256x128xf32>
    %y = arith.maximumf %x, %zero : f32
    memref.store %y, %out[%i, %j] : memref<256x128xf32>
    scf.reduce
  }
  return
}

// -----

// A 3-d nest: the two outer dims flatten into one range of 8 * 64 and are
// recovered by div/rem; a captured f32 travels as itself.
// CHECK-LABEL: func.func @scale_3d
// CHECK: llvm.insertvalue %{{.*}}[1] : !llvm.struct<(ptr, f32, ptr)>
// CHECK: %[[N3:.*]] = arith.constant 512 : i64
// CHECK: call @tfc_parallel_for(%{{.*}}, %{{.*}}, %[[N3]], %{{.*}})
// CHECK-LABEL: func.func private @scale_3d_parallel0
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[S:.*]] = llvm.extractvalue %{{.*}}[1]
// CHECK: scf.for %[[FLAT:.*]] =
// CHECK-DAG: %[[I:.*]] = arith.remui %[[FLAT]], %[[C64]]
// CHECK-DAG: %[[B:.*]] = arith.divui %[[FLAT]], %[[C64]]
// CHECK: scf.for %[[J:.*]] =
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%[[B]], %[[I]], %[[J]]]
// CHECK: arith.mulf %[[X]], %[[S]]
func.func @scale_3d(%in: memref<8x64x64xf32>, %s: f32, %out: memref<8x64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%b, %i, %j) = (%c0, %c0, %c0) to (%c8, %c64, %c64) step (%c1, %c1, %c1) {
    %x = memref.load %in[%b, %i, %j] : memref<8x64x64xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %out[%b, %i, %j] : memref<8x64x64xf32>
    scf.reduce
  }
  return
}

// -----

// A parallel loop inside a serial one (a reduction dim outermost): the
// serial loop's index is captured as an i64; the stack slot is made once,
// at the top of the function, not per iteration.
// CHECK-LABEL: func.func @column_sums
// CHECK: llvm.alloca
// CHECK: scf.for %[[K:.*]] =
// CHECK-NOT: llvm.alloca
// CHECK: %[[K64:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK: llvm.insertvalue %[[K64]]
// CHECK: call @tfc_parallel_for
// CHECK-LABEL: func.func private @column_sums_parallel0
// CHECK: %[[K_FIELD:[0-9]+]] = llvm.extractvalue %{{[0-9]+}}[1]
// CHECK: arith.index_cast %[[K_FIELD]] : i64 to index
func.func @column_sums(%in: memref<64x8192xf32>, %out: memref<8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c8192 = arith.constant 8192 : index
  scf.for %k = %c0 to %c64 step %c1 {
    scf.parallel (%j) = (%c0) to (%c8192) step (%c1) {
      %x = memref.load %in[%k, %j] : memref<64x8192xf32>
      %acc = memref.load %out[%j] : memref<8192xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %out[%j] : memref<8192xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Too little work to be worth waking the pool: outlined all the same (one
// small function per loop nest keeps LLVM's time linear), its body called
// directly over the whole range and kept out of line; min-work=0 puts it on
// the pool.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 4 : i64
// CHECK: call @small_parallel0(%{{.*}}, %[[ZERO]], %[[N]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK-NOT: tfc_parallel_for
// CHECK-LABEL: func.func private @small_parallel0
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: scf.for
// FORCED-LABEL: func.func @small
// FORCED-NOT: scf.parallel
// FORCED: call @tfc_parallel_for
func.func @small(%in: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<4x8xf32>
    memref.store %x, %out[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// A loop with a reduction result is left alone (it would need a combine).
// CHECK-LABEL: func.func @total
// CHECK: scf.parallel
// CHECK-NOT: tfc_parallel_for
// FORCED-LABEL: func.func @total
// FORCED: scf.parallel
// FORCED-NOT: tfc_parallel_for
func.func @total(%in: memref<65536xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %x = memref.load %in[%i] : memref<65536xf32>
    scf.reduce(%x : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}

// -----

// A memref whose layout is not all constants keeps its whole descriptor in
// the context; a static one next to it is a pointer.
// CHECK-LABEL: func.func @dynamic_layout
// FORCED-LABEL: func.func @dynamic_layout
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, ptr)>
// CHECK-LABEL: func.func private @dynamic_layout_parallel0
// CHECK: %[[F:.*]] = llvm.load
// CHECK: %[[D:.*]] = llvm.extractvalue %[[F]][0] : !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, ptr)>
// CHECK: builtin.unrealized_conversion_cast %[[D]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<256x128xf32, strided<[?, 1], offset: ?>>
func.func @dynamic_layout(%in: memref<256x128xf32, strided<[?, 1], offset: ?>>, %out: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c128) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<256x128xf32, strided<[?, 1], offset: ?>>
    %y = arith.maximumf %x, %zero : f32
    memref.store %y, %out[%i, %j] : memref<256x128xf32>
    scf.reduce
  }
  return
}

// -----

// Layers repeat loop nests on other buffers: the same body is outlined once
// and every loop calls it with its own context (here two loops on other
// buffers, and a third that maximises instead, which gets its own body).
// CHECK-LABEL: func.func @repeated_layers
// CHECK: %[[F0:.*]] = constant @repeated_layers_parallel0
// CHECK: call @tfc_parallel_for(%[[F0]]
// CHECK: %[[F1:.*]] = constant @repeated_layers_parallel0
// CHECK: call @tfc_parallel_for(%[[F1]]
// CHECK: %[[F2:.*]] = constant @repeated_layers_parallel2
// CHECK: call @tfc_parallel_for(%[[F2]]
// CHECK: return
// CHECK: func.func private @repeated_layers_parallel2
// CHECK: arith.maximumf
// CHECK-NOT: func.func private @repeated_layers_parallel1
// CHECK: func.func private @repeated_layers_parallel0
// CHECK: arith.addf
// CHECK-NOT: func.func private @repeated_layers_parallel1
func.func @repeated_layers(%a: memref<256x128xf32>, %b: memref<256x128xf32>,
                           %c: memref<256x128xf32>, %d: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c128) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<256x128xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i, %j] : memref<256x128xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c128) step (%c1, %c1) {
    %x = memref.load %c[%i, %j] : memref<256x128xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %d[%i, %j] : memref<256x128xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c128) step (%c1, %c1) {
    %x = memref.load %c[%i, %j] : memref<256x128xf32>
    %y = arith.maximumf %x, %x : f32
    memref.store %y, %d[%i, %j] : memref<256x128xf32>
    scf.reduce
  }
  return
}

// -----

// Two dropouts differ only in their 32-bit key: the key travels in the
// context (0 and 1 are recreated in the body), so both share one body.
// CHECK-LABEL: func.func @keyed_loops
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(ptr, i32, ptr)>
// CHECK: %[[F0:.*]] = constant @keyed_loops_parallel0
// CHECK: call @tfc_parallel_for(%[[F0]]
// CHECK: %[[F1:.*]] = constant @keyed_loops_parallel0
// CHECK: call @tfc_parallel_for(%[[F1]]
// CHECK: func.func private @keyed_loops_parallel0
// CHECK: %[[KEY:.*]] = llvm.extractvalue %{{.*}}[1]
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: arith.xori %{{.*}}, %[[KEY]] : i32
// CHECK: arith.addi %{{.*}}, %[[ONE]] : i32
// CHECK-NOT: func.func private @keyed_loops_parallel1
func.func @keyed_loops(%a: memref<256x128xi32>, %b: memref<256x128xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1 : i32
  %key0 = arith.constant 1993301259 : i32
  %key1 = arith.constant 1993301261 : i32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c128) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<256x128xi32>
    %y = arith.xori %x, %key0 : i32
    %z = arith.addi %y, %one : i32
    memref.store %z, %b[%i, %j] : memref<256x128xi32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c128) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<256x128xi32>
    %y = arith.xori %x, %key1 : i32
    %z = arith.addi %y, %one : i32
    memref.store %z, %b[%i, %j] : memref<256x128xi32>
    scf.reduce
  }
  return
}

// -----

// A GEMM's epilogue region: the loop over C's rows is outlined as any other
// (rows are the outer dim) and handed to tfc_sgemm_epilogue with the GEMM's
// arguments, however little work it has; the region is gone.
// CHECK-LABEL: func.func @gemm_epilogue
// CHECK: %[[SLOT:.*]] = llvm.alloca
// CHECK-NOT: scf.execute_region
// CHECK: llvm.store %{{.*}}, %[[SLOT]]
// CHECK: %[[F:.*]] = constant @gemm_epilogue_parallel0 : (!llvm.ptr, i64, i64) -> ()
// CHECK: call @tfc_sgemm_epilogue(%{{.*}}, %[[F]], %[[SLOT]]) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, (!llvm.ptr, i64, i64) -> (), !llvm.ptr) -> ()
// CHECK-NOT: call @tfc_sgemm(
// CHECK-NOT: tfc_parallel_for
// CHECK: return
// CHECK-LABEL: func.func private @gemm_epilogue_parallel0
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK-LABEL: func.func private @tfc_sgemm_epilogue
func.func private @tfc_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func @gemm_epilogue(%c: memref<8x4xf32>, %out: memref<8x4xf32>, %p: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.execute_region {
    func.call @tfc_sgemm(%c1, %c8, %c4, %c4, %p, %c4, %c0, %c0, %p, %c4, %c0, %c0, %p, %c4, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
    scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
      %x = memref.load %c[%i, %j] : memref<8x4xf32>
      %y = arith.maximumf %x, %zero : f32
      memref.store %y, %out[%i, %j] : memref<8x4xf32>
      scf.reduce
    }
    scf.yield
  } {tfc.gemm_epilogue}
  return
}

// -----

// A convolution's epilogue region: samples and rows flattened into the
// outlined body's range (row n * 4 + o), handed to tfc_sgemm_windows_epilogue
// with the GEMM's twenty arguments.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK-NOT: scf.execute_region
// CHECK: %[[F:.*]] = constant @conv_epilogue_parallel0 : (!llvm.ptr, i64, i64) -> ()
// CHECK: call @tfc_sgemm_windows_epilogue(%{{.*}}, %[[F]], %{{.*}}) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, (!llvm.ptr, i64, i64) -> (), !llvm.ptr) -> ()
// CHECK-NOT: call @tfc_sgemm_windows(
// CHECK: return
// CHECK-LABEL: func.func private @conv_epilogue_parallel0
// CHECK: scf.for
// CHECK: arith.remui %{{.*}}, %{{.*}} : index
// CHECK: arith.divui
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK-LABEL: func.func private @tfc_sgemm_windows_epilogue
func.func private @tfc_sgemm_windows(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func @conv_epilogue(%c: memref<2x4x5xf32>, %p: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  scf.execute_region {
    func.call @tfc_sgemm_windows(%c2, %c4, %c5, %c4, %p, %c4, %c0, %c0, %p, %c5, %c5, %c0, %p, %c5, %c5, %c0, %c1, %c1, %c0, %c0) : (index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index) -> ()
    scf.parallel (%n, %o, %t) = (%c0, %c0, %c0) to (%c2, %c4, %c5) step (%c1, %c1, %c1) {
      %x = memref.load %c[%n, %o, %t] : memref<2x4x5xf32>
      %y = arith.maximumf %x, %zero : f32
      memref.store %y, %c[%n, %o, %t] : memref<2x4x5xf32>
      scf.reduce
    }
    scf.yield
  } {tfc.gemm_epilogue}
  return
}
