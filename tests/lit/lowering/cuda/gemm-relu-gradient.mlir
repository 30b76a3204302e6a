// RUN: tf-opt %s --tf-gemm-to-runtime=device=cuda --cse --split-input-file | FileCheck %s
// RUN: tf-opt %s --tf-gemm-to-runtime="device=cuda gradient-epilogues=false" --split-input-file | FileCheck %s --check-prefix=OFF
// ReLU's gradient select(y > 0, g, 0) after the GEMM computing g, where
// cuBLASLt computed y = relu(x w^T + b): the forward call writes ReLU's
// bit-mask (a buffer of its own, ld 128 bits a row: 8 rows x 16 bytes) and
// the backward's call applies it (tfc_cuda_sgemm_fused's activation 2,
// kReluGrad), so y is not read again.

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhsT = affine_map<(m, n, k) -> (n, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>

// OFF-LABEL: func.func @relu_and_gradient
// OFF-NOT: xi8>
// OFF: arith.select
// CHECK-LABEL: func.func @relu_and_gradient
// CHECK: %[[MASK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK: %[[M:.*]] = memref.extract_aligned_pointer_as_index %[[MASK]]
// CHECK: %[[MP:.*]] = arith.addi %[[M]]
// CHECK: call @tfc_cuda_sgemm_fused({{.*}}, %c1, %{{.*}}, %c0, %c0, %[[MP]], %c128)
// CHECK: call @tfc_cuda_sgemm_fused({{.*}}, %c2, %c0, %c0, %c0, %[[MP]], %c128)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @relu_and_gradient(%x: memref<8x3xf32>, %w: memref<4x3xf32>, %bias: memref<4xf32>, %y: memref<8x4xf32>,
                             %dz: memref<8x2xf32>, %v: memref<2x4xf32>, %g: memref<8x4xf32>) {
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
  linalg.fill ins(%zero : f32) outs(%g : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dz, %v : memref<8x2xf32>, memref<2x4xf32>) outs(%g : memref<8x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<8x4xf32>) outs(%g : memref<8x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%in: f32, %out: f32):
    %positive = arith.cmpf ogt, %in, %zero : f32
    %r = arith.select %positive, %out, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhsT = affine_map<(m, n, k) -> (n, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>

// y written between the forward and the gradient: its mask is stale, so the
// select stays and reads y.
// CHECK-LABEL: func.func @y_written_between
// CHECK-NOT: xi8>
// CHECK: arith.select
func.func @y_written_between(%x: memref<8x3xf32>, %w: memref<4x3xf32>, %bias: memref<4xf32>, %y: memref<8x4xf32>,
                             %dz: memref<8x2xf32>, %v: memref<2x4xf32>, %g: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
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
  linalg.fill ins(%one : f32) outs(%y : memref<8x4xf32>)
  linalg.fill ins(%zero : f32) outs(%g : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dz, %v : memref<8x2xf32>, memref<2x4xf32>) outs(%g : memref<8x4xf32>) attrs = {tfc.matmul} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<8x4xf32>) outs(%g : memref<8x4xf32>) attrs = {tfc.gemm_epilogue} {
  ^bb0(%in: f32, %out: f32):
    %positive = arith.cmpf ogt, %in, %zero : f32
    %r = arith.select %positive, %out, %zero : f32
    linalg.yield %r : f32
  }
  return
}
