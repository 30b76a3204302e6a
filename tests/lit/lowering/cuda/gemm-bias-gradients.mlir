// RUN: tf-opt %s --tf-gemm-to-runtime=device=cuda --cse --split-input-file | FileCheck %s
// RUN: tf-opt %s --tf-gemm-to-runtime="device=cuda gradient-epilogues=false" --split-input-file | FileCheck %s --check-prefix=OFF
// A linear layer's backward sums the output gradient dY's rows (its bias
// gradient) and multiplies dY into the weight gradient: cuBLASLt does both
// in one call (tfc_cuda_sgemm_bias_grad: the GEMM arguments, then which
// operand is summed, 0 A or 1 B, and where the sums go) when dY is the
// product's A transposed (BGRADB) or its B (BGRADA) and the sum reads dY
// as stored, overwriting a zero-filled vector.

#dyT = affine_map<(m, n, k) -> (k, m)>
#x = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(p, j) -> (p, j)>
#col = affine_map<(p, j) -> (j)>

// dW = dY^T X (weights stored out x in), db = the sum of dY's rows.
// OFF-LABEL: func.func @weight_and_bias
// OFF: linalg.generic
// OFF: call @tfc_cuda_sgemm(
// CHECK-LABEL: func.func @weight_and_bias
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[DB:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK-DAG: %[[DBP:.*]] = arith.addi %[[DB]], %[[C0]]
// CHECK-NOT: linalg
// CHECK: call @tfc_cuda_sgemm_bias_grad({{.*}}, %[[C0]], %[[DBP]])
// CHECK-NOT: linalg
// CHECK: return
func.func @weight_and_bias(%dy: memref<8x4xf32>, %x: memref<8x3xf32>, %dw: memref<4x3xf32>, %db: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%db : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<8x4xf32>) outs(%db : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  %t = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<4x3xf32>)
  linalg.generic {indexing_maps = [#dyT, #x, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : memref<8x4xf32>, memref<8x3xf32>) outs(%dw : memref<4x3xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#xT = affine_map<(m, n, k) -> (k, m)>
#dy = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(p, j) -> (p, j)>
#col = affine_map<(p, j) -> (j)>

// dW = X^T dY (weights stored in x out): dY is B, summed by BGRADA.
// CHECK-LABEL: func.func @b_summed
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[DB:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: call @tfc_cuda_sgemm_bias_grad({{.*}}, %[[C1]], %{{.*}})
// CHECK-NOT: linalg
func.func @b_summed(%dy: memref<8x4xf32>, %x: memref<8x3xf32>, %dw: memref<3x4xf32>, %db: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%db : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<8x4xf32>) outs(%db : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dw : memref<3x4xf32>)
  linalg.generic {indexing_maps = [#xT, #dy, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<8x3xf32>, memref<8x4xf32>) outs(%dw : memref<3x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#dyT = affine_map<(m, n, k) -> (k, m)>
#x = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(p, j) -> (p, j)>
#col = affine_map<(p, j) -> (j)>

// A sum into a vector not zero-filled accumulates (a shared bias's second
// use): cuBLASLt would overwrite it, so it stays a loop nest.
// CHECK-LABEL: func.func @accumulating
// CHECK: linalg.generic
// CHECK: call @tfc_cuda_sgemm(
// CHECK-NOT: tfc_cuda_sgemm_bias_grad
func.func @accumulating(%dy: memref<8x4xf32>, %x: memref<8x3xf32>, %dw: memref<4x3xf32>, %db: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<8x4xf32>) outs(%db : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dw : memref<4x3xf32>)
  linalg.generic {indexing_maps = [#dyT, #x, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : memref<8x4xf32>, memref<8x3xf32>) outs(%dw : memref<4x3xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#dyT = affine_map<(m, n, k) -> (k, m)>
#x = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(p, j) -> (p, j)>
#col = affine_map<(p, j) -> (j)>

// dY changes between the sum and the GEMM: the sum may not move down.
// CHECK-LABEL: func.func @operand_written_between
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: call @tfc_cuda_sgemm(
// CHECK-NOT: tfc_cuda_sgemm_bias_grad
func.func @operand_written_between(%dy: memref<8x4xf32>, %x: memref<8x3xf32>, %dw: memref<4x3xf32>, %db: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  linalg.fill ins(%zero : f32) outs(%db : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<8x4xf32>) outs(%db : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%dy : memref<8x4xf32>) {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %two : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dw : memref<4x3xf32>)
  linalg.generic {indexing_maps = [#dyT, #x, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : memref<8x4xf32>, memref<8x3xf32>) outs(%dw : memref<4x3xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(p, j) -> (p, j)>
#col = affine_map<(p, j) -> (j)>

// A square A read untransposed: summing its stored rows is a sum over m,
// not over k, which no cuBLASLt epilogue computes.
// CHECK-LABEL: func.func @untransposed_a
// CHECK: linalg.generic
// CHECK: call @tfc_cuda_sgemm(
// CHECK-NOT: tfc_cuda_sgemm_bias_grad
func.func @untransposed_a(%g: memref<4x4xf32>, %w: memref<4x3xf32>, %y: memref<4x3xf32>, %db: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%db : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<4x4xf32>) outs(%db : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%y : memref<4x3xf32>)
  linalg.generic {indexing_maps = [#lhs, #w, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%g, %w : memref<4x4xf32>, memref<4x3xf32>) outs(%y : memref<4x3xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}
