// RUN: tf-opt %s --tf-gemm-to-runtime --canonicalize --split-input-file | FileCheck %s
// The GEMM-and-epilogue regions, which canonicalize would inline:
// RUN: tf-opt %s --tf-gemm-to-runtime --split-input-file | FileCheck %s --check-prefix=PAIR
// Convolutions of 5 taps by the windows GEMM instead of F(4, 5):
// RUN: tf-opt %s --tf-gemm-to-runtime=winograd=false --split-input-file | FileCheck %s --check-prefix=DIRECT

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhsT = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>

// x[8, 3] @ w[4, 3]^T: B transposed; the adjacent zero fill is dropped and
// the GEMM overwrites C.
// CHECK-LABEL: func.func private @tfc_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: call @tfc_sgemm(%[[C1]], %[[C8]], %[[C4]], %[[C3]], %{{.*}}, %[[C3]], %[[C0]], %[[C0]], %{{.*}}, %[[C3]], %[[C0]], %[[C1]], %{{.*}}, %[[C4]], %[[C0]], %[[C0]])
// CHECK-NOT: linalg.generic
func.func @linear(%x: memref<8x3xf32>, %w: memref<4x3xf32>, %y: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhsT, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x3xf32>, memref<4x3xf32>) outs(%y : memref<8x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// A batched product reading a column slice of a wider buffer (the q/k/v
// split of a fused projection): the slice's offset and row pitch become the
// pointer offset (32 floats = 128 bytes) and lda; no fill, so C accumulates.
// CHECK-LABEL: func.func @sliced
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C96:.*]] = arith.constant 96 : index
// CHECK-DAG: %[[C1536:.*]] = arith.constant 1536 : index
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<2x16x32xf32, strided<[1536, 96, 1], offset: 32>>
// CHECK: %[[A:.*]] = arith.addi %[[BASE]], %[[C128]]
// CHECK: call @tfc_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[A]], %[[C96]], %[[C1536]], %{{.*}}, {{.*}}, %[[C1]])
func.func @sliced(%qkv: memref<2x16x96xf32>, %v: memref<2x32x8xf32>, %out: memref<2x16x8xf32>) {
  %q = memref.subview %qkv[0, 0, 32] [2, 16, 32] [1, 1, 1] : memref<2x16x96xf32> to memref<2x16x32xf32, strided<[1536, 96, 1], offset: 32>>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %v : memref<2x16x32xf32, strided<[1536, 96, 1], offset: 32>>, memref<2x32x8xf32>) outs(%out : memref<2x16x8xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#tap = affine_map<(b, m, n, k) -> (m, k)>
#window = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>

// A convolution tap: A (the tap's weights) indexes no batch loop, so the
// batch shares it (strideA 0); B is a window of the padded input starting
// at column 2 (8 bytes), rows 7 apart, samples 14 apart; C accumulates.
// CHECK-LABEL: func.func @shared_lhs
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C14:.*]] = arith.constant 14 : index
// CHECK-DAG: %[[C20:.*]] = arith.constant 20 : index
// CHECK: %[[WB:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<4x2xf32>
// CHECK: %[[XB:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<3x2x5xf32, strided<[14, 7, 1], offset: 2>>
// CHECK: %[[X:.*]] = arith.addi %[[XB]], %[[C8]]
// CHECK: call @tfc_sgemm(%[[C3]], %[[C4]], %[[C5]], %[[C2]], %[[WB]], %[[C2]], %[[C0]], %[[C0]], %[[X]], %[[C7]], %[[C14]], %[[C0]], %{{.*}}, %[[C5]], %[[C20]], %[[C1]])
func.func @shared_lhs(%w: memref<4x2xf32>, %xpad: memref<3x2x7xf32>, %y: memref<3x4x5xf32>) {
  %x = memref.subview %xpad[0, 0, 2] [3, 2, 5] [1, 1, 1] : memref<3x2x7xf32> to memref<3x2x5xf32, strided<[14, 7, 1], offset: 2>>
  linalg.generic {indexing_maps = [#tap, #window, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %x : memref<4x2xf32>, memref<3x2x5xf32, strided<[14, 7, 1], offset: 2>>) outs(%y : memref<3x4x5xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#window = affine_map<(c, m, n, k) -> (m, c, k)>
#weight = affine_map<(c, m, n, k) -> (n, c, k)>
#out = affine_map<(c, m, n, k) -> (m, n)>

// A batch reduction (a weight gradient's output position): the batch loop c
// is a reduction C does not index, so strideC is 0 and tfc_sgemm sums the
// products; A and B index c in their middle dim (strides 7 and 6), B is
// read transposed (its k is innermost); the zero fill goes (accumulate 0).
// CHECK-LABEL: func.func @batch_reduction
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C18:.*]] = arith.constant 18 : index
// CHECK-DAG: %[[C21:.*]] = arith.constant 21 : index
// CHECK: call @tfc_sgemm(%[[C3]], %[[C2]], %[[C4]], %[[C6]], %{{.*}}, %[[C21]], %[[C7]], %[[C0]], %{{.*}}, %[[C18]], %[[C6]], %[[C1]], %{{.*}}, %[[C4]], %[[C0]], %[[C0]])
func.func @batch_reduction(%x: memref<2x3x6xf32, strided<[21, 7, 1], offset: 1>>, %w: memref<4x3x6xf32>, %y: memref<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4xf32>)
  linalg.generic {indexing_maps = [#window, #weight, #out], iterator_types = ["reduction", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x6xf32, strided<[21, 7, 1], offset: 1>>, memref<4x3x6xf32>) outs(%y : memref<2x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#window = affine_map<(c, m, n, k) -> (m, c, k)>
#weight = affine_map<(c, m, n, k) -> (n, c, k)>
#out = affine_map<(c, m, n, k) -> (m, n)>

// A C that indexes no batch loop while they are parallel is not a GEMM the
// runtime runs (it would race): it stays a loop nest.
// CHECK-LABEL: func.func @parallel_batch_without_c
// CHECK-NOT: call @tfc_sgemm
// CHECK: linalg.generic
func.func @parallel_batch_without_c(%x: memref<2x3x6xf32>, %w: memref<4x3x6xf32>, %y: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#window, #weight, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x6xf32>, memref<4x3x6xf32>) outs(%y : memref<2x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>

// Unmarked contractions, and marked ones on tensors, stay as they are.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: call @tfc_sgemm
// CHECK: linalg.generic
func.func @unmarked(%x: memref<8x3xf32>, %w: memref<3x4xf32>, %y: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x3xf32>, memref<3x4xf32>) outs(%y : memref<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhsT = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// The epilogue of a tf.fusion "gemm" (bias and relu) goes with the GEMM
// into one region, the GEMM moving down past the allocation between them.
// PAIR-LABEL: func.func @linear_relu
// PAIR: memref.alloc() : memref<8x4xf32>
// PAIR: %[[T:.*]] = memref.alloc() : memref<8x4xf32>
// PAIR-NEXT: scf.execute_region {
// PAIR-NEXT: call @tfc_sgemm(
// PAIR-NEXT: linalg.generic
// PAIR-SAME: outs(%[[T]] : memref<8x4xf32>)
// PAIR-SAME: tfc.gemm_epilogue
// PAIR: scf.yield
// PAIR-NEXT: } {tfc.gemm_epilogue}
// PAIR-NEXT: memref.copy %[[T]]
func.func @linear_relu(%x: memref<8x3xf32>, %w: memref<4x3xf32>, %b: memref<4xf32>, %y: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhsT, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x3xf32>, memref<4x3xf32>) outs(%c : memref<8x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %bb: f32, %cc: f32):
    %p = arith.mulf %a, %bb : f32
    %s = arith.addf %cc, %p : f32
    linalg.yield %s : f32
  }
  %t = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<8x4xf32>, memref<4xf32>) outs(%t : memref<8x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%a: f32, %bias: f32, %o: f32):
    %s = arith.addf %a, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %t, %y : memref<8x4xf32> to memref<8x4xf32>
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>

// Not paired when the epilogue reads C at another element (a row the GEMM
// may not have finished), writes a buffer the GEMM reads, or something
// between them touches memory: the epilogue stays a loop after the GEMM.
// PAIR-LABEL: func.func @unpaired
// PAIR-NOT: scf.execute_region
// PAIR: return
func.func @unpaired(%x: memref<4x4xf32>, %w: memref<4x4xf32>, %y: memref<4x4xf32>, %z: memref<4x4xf32>) {
  %c = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %cc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %cc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x4xf32>) outs(%y : memref<4x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %c2 = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x4xf32>, memref<4x4xf32>) outs(%c2 : memref<4x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %cc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %cc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2 : memref<4x4xf32>) outs(%x : memref<4x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %c3 = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x4xf32>, memref<4x4xf32>) outs(%c3 : memref<4x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %cc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %cc, %p : f32
    linalg.yield %s : f32
  }
  memref.copy %c3, %z : memref<4x4xf32> to memref<4x4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c3 : memref<4x4xf32>) outs(%y : memref<4x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#wgt = affine_map<(n, o, t, c, j) -> (o, c, j)>
#win = affine_map<(n, o, t, c, j) -> (n, c, t + j)>
#out = affine_map<(n, o, t, c, j) -> (n, o, t)>

// A convolution's GEMM over windows (loops n, o, t, c, j): one
// tfc_sgemm_windows call, per sample C (4 x 5) = W (4 x 2*3, the weight as it
// lies) times B whose row (c, j) starts at xpad[n, c, j] (channel pitch 7,
// taps 1 apart); batch 2, the weight shared, the sample pitch 14.
// CHECK-LABEL: func.func private @tfc_sgemm_windows(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @conv_windows
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C14:.*]] = arith.constant 14 : index
// CHECK-DAG: %[[C20:.*]] = arith.constant 20 : index
// CHECK: call @tfc_sgemm_windows(%[[C2]], %[[C4]], %[[C5]], %[[C6]], %{{.*}}, %[[C6]], %[[C0]], %[[C0]], %{{.*}}, %[[C7]], %[[C14]], %[[C0]], %{{.*}}, %[[C5]], %[[C20]], %[[C0]], %[[C3]], %[[C1]], %[[C0]], %[[C0]])
// CHECK-NOT: linalg.generic
func.func @conv_windows(%w: memref<4x2x3xf32>, %x: memref<2x2x7xf32>, %y: memref<2x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x5xf32>)
  linalg.generic {indexing_maps = [#wgt, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w, %x : memref<4x2x3xf32>, memref<2x2x7xf32>) outs(%y : memref<2x4x5xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#wgt = affine_map<(n, o, t, c, j) -> (o, c, j)>
#win = affine_map<(n, o, t, c, j) -> (n, c, t + j)>
#out = affine_map<(n, o, t, c, j) -> (n, o, t)>
#id3 = affine_map<(n, o, t) -> (n, o, t)>
#t3 = affine_map<(n, o, t) -> (n, t, o)>

// A convolution's epilogue (its relu, written over the product) loops over
// the samples, rows and columns: it goes with the tfc_sgemm_windows call,
// which runs it on each sample's rows. One that reads C transposed stays a
// loop after the GEMM.
// CHECK-LABEL: func.func @conv_relu
// PAIR-LABEL: func.func @conv_relu
// PAIR: scf.execute_region {
// PAIR-NEXT: call @tfc_sgemm_windows(
// PAIR-NEXT: linalg.generic
// PAIR-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// PAIR-SAME: outs(%{{.+}} : memref<2x4x5xf32>)
// PAIR-SAME: tfc.gemm_epilogue
// PAIR: scf.yield
// PAIR-NEXT: } {tfc.gemm_epilogue}
// PAIR: call @tfc_sgemm_windows(
// PAIR-NOT: scf.execute_region
// PAIR: return
func.func @conv_relu(%w: memref<4x2x3xf32>, %x: memref<2x2x7xf32>, %y: memref<2x4x5xf32>, %z: memref<2x5x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x5xf32>)
  linalg.generic {indexing_maps = [#wgt, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w, %x : memref<4x2x3xf32>, memref<2x2x7xf32>) outs(%y : memref<2x4x5xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%y : memref<2x4x5xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%o: f32):
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  %c = memref.alloc() : memref<2x4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4x5xf32>)
  linalg.generic {indexing_maps = [#wgt, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w, %x : memref<4x2x3xf32>, memref<2x2x7xf32>) outs(%c : memref<2x4x5xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %cc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %cc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#t3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : memref<2x4x5xf32>) outs(%z : memref<2x5x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#wgt = affine_map<(n, o, t, c, j) -> (o, c, j)>
#win = affine_map<(n, o, t, c, j) -> (n, c, t + j)>
#out = affine_map<(n, o, t, c, j) -> (n, o, t)>

// The input zero-padded by 1 on each side (a fresh buffer, zero-filled,
// the input copied into its middle): the GEMM reads the input itself, the
// padding made up as it packs (pad 1, width 5); the padded copy is gone.
// CHECK-LABEL: func.func @conv_padded
// CHECK-SAME: (%[[W:.+]]: memref<4x2x3xf32>, %[[X:.+]]: memref<2x2x5xf32>, %[[Y:.+]]: memref<2x4x5xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.copy
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C10:.*]] = arith.constant 10 : index
// CHECK: %[[XP:.+]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: call @tfc_sgemm_windows(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C5]], %[[C10]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C3]], %[[C1]], %[[C1]], %[[C5]])
// CHECK-NOT: memref.copy
func.func @conv_padded(%w: memref<4x2x3xf32>, %x: memref<2x2x5xf32>, %y: memref<2x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x2x7xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x2x7xf32>)
  %middle = memref.subview %padded[0, 0, 1] [2, 2, 5] [1, 1, 1] : memref<2x2x7xf32> to memref<2x2x5xf32, strided<[14, 7, 1], offset: 1>>
  memref.copy %x, %middle : memref<2x2x5xf32> to memref<2x2x5xf32, strided<[14, 7, 1], offset: 1>>
  linalg.generic {indexing_maps = [#wgt, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w, %padded : memref<4x2x3xf32>, memref<2x2x7xf32>) outs(%y : memref<2x4x5xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#wgt = affine_map<(n, o, t, c, j) -> (o, c, j)>
#win = affine_map<(n, o, t, c, j) -> (n, c, t + j)>
#out = affine_map<(n, o, t, c, j) -> (n, o, t)>

// Not when something writes the input between the copy and the GEMM: the
// padded copy stays, and the GEMM reads it.
// CHECK-LABEL: func.func @conv_padded_overwritten
// CHECK: memref.copy
// CHECK: memref.copy
// CHECK: call @tfc_sgemm_windows(
func.func @conv_padded_overwritten(%w: memref<4x2x3xf32>, %x: memref<2x2x5xf32>, %z: memref<2x2x5xf32>, %y: memref<2x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x2x7xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x2x7xf32>)
  %middle = memref.subview %padded[0, 0, 1] [2, 2, 5] [1, 1, 1] : memref<2x2x7xf32> to memref<2x2x5xf32, strided<[14, 7, 1], offset: 1>>
  memref.copy %x, %middle : memref<2x2x5xf32> to memref<2x2x5xf32, strided<[14, 7, 1], offset: 1>>
  memref.copy %z, %x : memref<2x2x5xf32> to memref<2x2x5xf32>
  linalg.generic {indexing_maps = [#wgt, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w, %padded : memref<4x2x3xf32>, memref<2x2x7xf32>) outs(%y : memref<2x4x5xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(n, j, c, o, t) -> (n, c, j + t)>
#dy = affine_map<(n, j, c, o, t) -> (n, o, t)>
#out = affine_map<(n, j, c, o, t) -> (j, c, o)>

// A weight gradient over all its taps (loops n, j, c, o, t; the samples n
// and positions t summed): one tfc_sgemm_taps call, M = 3 taps x 2 channels
// whose row (j, c) starts at xpad[n, c, j] (channel pitch 7, taps 1 apart),
// B = dy[n] read transposed (pitch 5, sample pitch 20), C the 6 x 4 matrix
// out summed over the 2 samples.
// CHECK-LABEL: func.func private @tfc_sgemm_taps(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @conv_weight_gradient_taps
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C14:.*]] = arith.constant 14 : index
// CHECK-DAG: %[[C20:.*]] = arith.constant 20 : index
// CHECK: call @tfc_sgemm_taps(%[[C2]], %[[C6]], %[[C4]], %[[C5]], %{{.*}}, %[[C7]], %[[C14]], %[[C0]], %{{.*}}, %[[C5]], %[[C20]], %[[C1]], %{{.*}}, %[[C4]], %[[C0]], %[[C0]], %[[C2]], %[[C1]], %[[C0]], %[[C0]])
// CHECK-NOT: linalg.generic
func.func @conv_weight_gradient_taps(%xpad: memref<2x2x7xf32>, %dy: memref<2x4x5xf32>, %out: memref<3x2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<3x2x4xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #out], iterator_types = ["reduction", "parallel", "parallel", "parallel", "reduction"]}
      ins(%xpad, %dy : memref<2x2x7xf32>, memref<2x4x5xf32>) outs(%out : memref<3x2x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(n, j, c, o, t) -> (n, c, j + t)>
#dy = affine_map<(n, j, c, o, t) -> (n, o, t)>
#out = affine_map<(n, j, c, o, t) -> (j, c, o)>

// The same taps over x zero-padded by 1 on each side (a fresh buffer,
// zero-filled, x copied into the middle): the call reads x itself (channel
// pitch 5, sample pitch 10) with pad 1 and width 5, and the padded copy is
// gone.
// CHECK-LABEL: func.func @conv_weight_gradient_taps_padded
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C10:.*]] = arith.constant 10 : index
// CHECK: call @tfc_sgemm_taps(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C5]], %[[C10]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C1]], %[[C1]], %[[C5]])
// CHECK-NOT: memref.copy
func.func @conv_weight_gradient_taps_padded(%x: memref<2x2x5xf32>, %dy: memref<2x4x5xf32>, %out: memref<3x2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x2x7xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x2x7xf32>)
  %middle = memref.subview %padded[0, 0, 1] [2, 2, 5] [1, 1, 1] : memref<2x2x7xf32> to memref<2x2x5xf32, strided<[14, 7, 1], offset: 1>>
  memref.copy %x, %middle : memref<2x2x5xf32> to memref<2x2x5xf32, strided<[14, 7, 1], offset: 1>>
  linalg.fill ins(%zero : f32) outs(%out : memref<3x2x4xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #out], iterator_types = ["reduction", "parallel", "parallel", "parallel", "reduction"]}
      ins(%padded, %dy : memref<2x2x7xf32>, memref<2x4x5xf32>) outs(%out : memref<3x2x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(n, j, c, o, t) -> (n, c, j + t)>
#dy = affine_map<(n, j, c, o, t) -> (n, o, t)>
#out = affine_map<(n, j, c, o, t) -> (c, j, o)>

// Taps whose output rows are not (j, c) in one level stay loops.
// CHECK-LABEL: func.func @conv_weight_gradient_taps_other_layout
// CHECK-NOT: call @tfc_sgemm
// CHECK: linalg.generic
func.func @conv_weight_gradient_taps_other_layout(%xpad: memref<2x2x7xf32>, %dy: memref<2x4x5xf32>, %out: memref<2x3x4xf32>) {
  linalg.generic {indexing_maps = [#x, #dy, #out], iterator_types = ["reduction", "parallel", "parallel", "parallel", "reduction"]}
      ins(%xpad, %dy : memref<2x2x7xf32>, memref<2x4x5xf32>) outs(%out : memref<2x3x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// Two small products in a row, neither touching what the other writes (a
// backward pass's dW and dx): one tfc_sgemm_pair call with the arguments of
// both, in order. A third that reads the second's output stays its own call.
// CHECK-LABEL: func.func private @tfc_sgemm_pair(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @independent_products
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK: call @tfc_sgemm_pair(%{{.*}}, %[[C4]], %[[C5]], %[[C6]], {{.*}}, %{{.*}}, %[[C7]], %[[C5]], %[[C6]],
// CHECK-NOT: call @tfc_sgemm_pair
// CHECK: call @tfc_sgemm(
func.func @independent_products(%x: memref<4x6xf32>, %w: memref<6x5xf32>, %y: memref<4x5xf32>,
                                %u: memref<7x6xf32>, %v: memref<7x5xf32>, %z: memref<5x5xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x6xf32>, memref<6x5xf32>) outs(%y : memref<4x5xf32>) attrs = {tfc.matmul} {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%u, %w : memref<7x6xf32>, memref<6x5xf32>) outs(%v : memref<7x5xf32>) attrs = {tfc.matmul} {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  %vt = memref.subview %v[0, 0] [4, 5] [1, 1] : memref<7x5xf32> to memref<4x5xf32, strided<[5, 1]>>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%vt, %z : memref<4x5xf32, strided<[5, 1]>>, memref<5x5xf32>) outs(%y : memref<4x5xf32>) attrs = {tfc.matmul} {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#wgt = affine_map<(n, o, t, c, j) -> (o, c, j)>
#win = affine_map<(n, o, t, c, j) -> (n, c, t + j)>
#out = affine_map<(n, o, t, c, j) -> (n, o, t)>

// Five taps over 16 channels in and out, 20 outputs a row: Winograd's
// F(4, 5) (tfc_conv1d_winograd, the windows call's arguments: here pad 2,
// width 20). With 15 input channels the transforms would not pay: the
// windows GEMM. winograd=false keeps the windows GEMM for both.
// CHECK-LABEL: func.func private @tfc_conv1d_winograd(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @conv_five_taps
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C20:.*]] = arith.constant 20 : index
// CHECK-DAG: %[[C80:.*]] = arith.constant 80 : index
// CHECK: call @tfc_conv1d_winograd(%[[C2]], %[[C16]], %[[C20]], %[[C80]], %{{.*}}, %[[C80]], %{{.*}}, %{{.*}}, %{{.*}}, %[[C20]], %{{.*}}, %{{.*}}, %{{.*}}, %[[C20]], %{{.*}}, %{{.*}}, %[[C5]], %{{.*}}, %[[C2]], %[[C20]])
// CHECK: call @tfc_sgemm_windows(
// DIRECT-LABEL: func.func @conv_five_taps
// DIRECT-NOT: tfc_conv1d_winograd
// DIRECT: call @tfc_sgemm_windows(
// DIRECT: call @tfc_sgemm_windows(
// DIRECT-NOT: tfc_conv1d_winograd
func.func @conv_five_taps(%w: memref<16x16x5xf32>, %x: memref<2x16x20xf32>, %y: memref<2x16x20xf32>,
                          %w15: memref<16x15x5xf32>, %x15: memref<2x15x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x16x24xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x16x24xf32>)
  %middle = memref.subview %padded[0, 0, 2] [2, 16, 20] [1, 1, 1] : memref<2x16x24xf32> to memref<2x16x20xf32, strided<[384, 24, 1], offset: 2>>
  memref.copy %x, %middle : memref<2x16x20xf32> to memref<2x16x20xf32, strided<[384, 24, 1], offset: 2>>
  linalg.generic {indexing_maps = [#wgt, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w, %padded : memref<16x16x5xf32>, memref<2x16x24xf32>) outs(%y : memref<2x16x20xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#wgt, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w15, %x15 : memref<16x15x5xf32>, memref<2x15x24xf32>) outs(%y : memref<2x16x20xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(n, j, c, o, t) -> (n, c, j + t)>
#dy = affine_map<(n, j, c, o, t) -> (n, o, t)>
#out = affine_map<(n, j, c, o, t) -> (j, c, o)>

// A weight gradient of 5 taps over 16 channels each way and 20 positions,
// dy's rows along t: Winograd's F(5, 4) (tfc_conv1d_winograd_taps, the taps
// call's arguments: 80 rows (j, c), channel pitch 24, sample pitch 384, dy
// transposed, 16 channels a tap, taps 1 apart). winograd=false: the taps
// GEMM.
// CHECK-LABEL: func.func private @tfc_conv1d_winograd_taps(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func @conv_weight_gradient_five_taps
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C20:.*]] = arith.constant 20 : index
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK-DAG: %[[C80:.*]] = arith.constant 80 : index
// CHECK-DAG: %[[C320:.*]] = arith.constant 320 : index
// CHECK-DAG: %[[C384:.*]] = arith.constant 384 : index
// CHECK: call @tfc_conv1d_winograd_taps(%[[C2]], %[[C80]], %[[C16]], %[[C20]], %{{.*}}, %[[C24]], %[[C384]], %[[C0]], %{{.*}}, %[[C20]], %[[C320]], %[[C1]], %{{.*}}, %[[C16]], %[[C0]], %[[C0]], %[[C16]], %[[C1]], %[[C0]], %[[C0]])
// DIRECT-LABEL: func.func @conv_weight_gradient_five_taps
// DIRECT-NOT: tfc_conv1d_winograd_taps
// DIRECT: call @tfc_sgemm_taps(
func.func @conv_weight_gradient_five_taps(%xpad: memref<2x16x24xf32>, %dy: memref<2x16x20xf32>, %out: memref<5x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<5x16x16xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #out], iterator_types = ["reduction", "parallel", "parallel", "parallel", "reduction"]}
      ins(%xpad, %dy : memref<2x16x24xf32>, memref<2x16x20xf32>) outs(%out : memref<5x16x16xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}
