// RUN: tf-opt %s --tf-gemm-to-runtime=device=cuda --cse --split-input-file | FileCheck %s
// cuBLASLt's epilogues: a product's marked epilogue of bias, ReLU and one
// other matrix goes into the GEMM call (tfc_cuda_sgemm_fused: the GEMM
// arguments, then the activation, bias, residual, its row pitch, and no ReLU
// mask); any other stays a
// loop nest after a plain tfc_cuda_sgemm.

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhsT = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>

// relu(x w^T + b) written over the product: RELU_BIAS, C the product.
// CHECK-LABEL: func.func @linear_relu
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[Y:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK-DAG: %[[B:.*]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK-DAG: %[[YP:.*]] = arith.addi %[[Y]], %[[C0]]
// CHECK-DAG: %[[BP:.*]] = arith.addi %[[B]], %[[C0]]
// CHECK: call @tfc_cuda_sgemm_fused({{.*}}, %[[YP]], %[[C4]], %[[C0]], %[[C0]], %[[C1]], %[[BP]], %[[C0]], %[[C0]], %[[C0]], %[[C0]])
// CHECK-NOT: linalg.generic
func.func @linear_relu(%x: memref<8x3xf32>, %w: memref<4x3xf32>, %bias: memref<4xf32>, %y: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhsT, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x3xf32>, memref<4x3xf32>) outs(%y : memref<8x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<4xf32>) outs(%y : memref<8x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%b: f32, %p: f32):
    %s = arith.addf %p, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhsT = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>

// A residual and a bias into a fresh buffer: the GEMM writes the result
// there (the product's buffer, read by nothing else, goes), the residual is
// cuBLASLt's C (beta = 1).
// CHECK-LABEL: func.func @residual
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[Y:.*]] = memref.extract_aligned_pointer_as_index %arg4
// CHECK-DAG: %[[R:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK-DAG: %[[YP:.*]] = arith.addi %[[Y]], %[[C0]]
// CHECK-DAG: %[[RP:.*]] = arith.addi %[[R]], %[[C0]]
// CHECK: call @tfc_cuda_sgemm_fused({{.*}}, %[[YP]], %[[C4]], %[[C0]], %[[C0]], %[[C0]], %{{.*}}, %[[RP]], %[[C4]], %[[C0]], %[[C0]])
// CHECK-NOT: linalg.generic
func.func @residual(%x: memref<8x3xf32>, %w: memref<4x3xf32>, %bias: memref<4xf32>, %r: memref<8x4xf32>, %y: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %product = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%product : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhsT, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x3xf32>, memref<4x3xf32>) outs(%product : memref<8x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias, %product : memref<8x4xf32>, memref<4xf32>, memref<8x4xf32>) outs(%y : memref<8x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%res: f32, %b: f32, %p: f32, %o: f32):
    %s = arith.addf %p, %b : f32
    %t = arith.addf %res, %s : f32
    linalg.yield %t : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhsT = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>

// What cuBLASLt cannot compute stays a loop: a product that another op
// reads too (its buffer must hold it), a scaled sum, an accumulating GEMM.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tfc_cuda_sgemm_fused
// CHECK: call @tfc_cuda_sgemm(
// CHECK: linalg.generic
// CHECK: linalg.copy
// CHECK: call @tfc_cuda_sgemm(
// CHECK: linalg.generic
// CHECK: call @tfc_cuda_sgemm(
// CHECK: linalg.generic
func.func @kept(%x: memref<8x3xf32>, %w: memref<4x3xf32>, %bias: memref<4xf32>, %y: memref<8x4xf32>, %z: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %product = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%product : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhsT, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x3xf32>, memref<4x3xf32>) outs(%product : memref<8x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %product : memref<4xf32>, memref<8x4xf32>) outs(%y : memref<8x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%b: f32, %p: f32, %o: f32):
    %s = arith.addf %p, %b : f32
    linalg.yield %s : f32
  }
  linalg.copy ins(%product : memref<8x4xf32>) outs(%z : memref<8x4xf32>)
  linalg.fill ins(%zero : f32) outs(%y : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhsT, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x3xf32>, memref<4x3xf32>) outs(%y : memref<8x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<4xf32>) outs(%y : memref<8x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%b: f32, %p: f32):
    %s = arith.addf %p, %b : f32
    %t = arith.mulf %s, %two : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#lhs, #rhsT, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x3xf32>, memref<4x3xf32>) outs(%z : memref<8x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<4xf32>) outs(%z : memref<8x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%b: f32, %p: f32):
    %s = arith.addf %p, %b : f32
    linalg.yield %s : f32
  }
  return
}
