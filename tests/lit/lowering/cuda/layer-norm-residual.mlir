// A post-norm layer's residual sum made by the layer norm forward's kernel:
// where a "gemm" fusion's epilogue ends residual + training tf.dropout and
// a tf.layer_norm reads its result (behind reshapes), the call goes right
// after the fusion with the residual, a buffer for the sum (pre), the seed,
// the sample offset and size, the key, the threshold ceil(rate 2^32) and
// 1 - rate (runtime/Abi.h's layer_norm); the fusion stops before the
// dropout, and every other reader of its result (the backward's x, a
// pre-norm stream) reads the sum. A product with nothing left after it
// leaves its fusion. Without the option, on the CPU's kernels, outside
// training or with a residual made inside the body: as it was.
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg="kernels=cuda layer-norm-residual=true" | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg="kernels=cuda" | FileCheck %s --check-prefix=OFF
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg | FileCheck %s --check-prefix=CPU

// 0.1 rounds to the f32 0.100000001 (1 - it: 0.899999976); ceil(0.100000001
// x 2^32) = 429496736.
// CHECK-LABEL: func.func @post_norm
// CHECK: %[[Z:.+]] = linalg.generic {{.*}} attrs =  {tfc.gemm_epilogue}
// CHECK-NOT: arith.mului_extended
// CHECK: %[[ZM:.+]] = bufferization.to_memref %[[Z]]
// CHECK: %[[ZP:.+]] = memref.extract_aligned_pointer_as_index %[[ZM]]
// CHECK: %[[Y:.+]] = memref.alloc() : memref<2x2x8xf32>
// CHECK: %[[YP:.+]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: %[[RM:.+]] = bufferization.to_memref %arg3
// CHECK: %[[RP:.+]] = memref.extract_aligned_pointer_as_index %[[RM]]
// CHECK: %[[PRE:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[PREP:.+]] = memref.extract_aligned_pointer_as_index %[[PRE]]
// CHECK: %[[SEED:.+]] = memref.extract_aligned_pointer_as_index %{{.+}} : memref<i32>
// CHECK: %[[OFFSET:.+]] = memref.extract_aligned_pointer_as_index %{{.+}} : memref<i32>
// CHECK: %[[KEEP:.+]] = arith.constant 0.899999976 : f32
// CHECK: call @tfc_cuda_layer_norm_forward(%c4, %c8, %{{[^,]+}}, %[[ZP]], %{{[^,]+}}, %{{[^,]+}}, %[[YP]], %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %[[RP]], %[[PREP]], %[[SEED]], %[[OFFSET]], %c32{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c429496736{{(_[0-9]+)?}}, %[[KEEP]])
// CHECK: %[[SUM:.+]] = bufferization.to_tensor %[[PRE]]
// CHECK: %[[NORM:.+]] = bufferization.to_tensor %[[Y]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[NORM]], %[[SUM]]
// OFF-LABEL: func.func @post_norm
// OFF: arith.mului_extended
// OFF: call @tfc_cuda_layer_norm_forward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0
// CPU-LABEL: func.func @post_norm
// CPU: call @tfc_dropout_mask(
// CPU-NOT: call @tfc_cuda_layer_norm_forward
func.func @post_norm(%a: tensor<4x8xf32>, %w: tensor<8x8xf32>, %bias: tensor<8xf32>, %res: tensor<4x8xf32>, %seed: tensor<i32>, %offset: tensor<i32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x2x8xf32>, tensor<4x8xf32>) {
  %f = tf.fusion "gemm" : tensor<4x8xf32> {
    %p = tf.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %bb = tf.broadcast_in_dim %bias [1] : tensor<8xf32> to tensor<4x8xf32>
    %z = tf.add %p, %bb : tensor<4x8xf32>
    %d = tf.dropout %z, %seed sample_offset %offset sample_size 32 rate 0.1 key 3 training : tensor<4x8xf32>
    %s = tf.add %res, %d : tensor<4x8xf32>
    tf.yield %s : tensor<4x8xf32>
  }
  %x = tf.reshape %f : tensor<4x8xf32> to tensor<2x2x8xf32>
  %y = tf.layer_norm %x, %g, %b : tensor<2x2x8xf32>, tensor<8xf32>
  return %y, %f : tensor<2x2x8xf32>, tensor<4x8xf32>
}

// -----

// No bias: the product leaves its fusion and the call reads it; the sum
// (the dropout's operand first, no sample offset: 0 and size 0) is what a
// later op reads. rate 0.5: threshold 2^31.
// CHECK-LABEL: func.func @product_alone
// CHECK: %[[P:.+]] = linalg.generic {{.*}} attrs =  {tfc.matmul}
// CHECK-NOT: tfc.gemm_epilogue
// CHECK: %[[PM:.+]] = bufferization.to_memref %[[P]]
// CHECK: %[[PP:.+]] = memref.extract_aligned_pointer_as_index %[[PM]]
// CHECK: %[[PRE:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: call @tfc_cuda_layer_norm_forward(%c4, %c8, %{{[^,]+}}, %[[PP]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c7{{(_[0-9]+)?}}, %c2147483648{{(_[0-9]+)?}}, %{{[^,]+}})
// CHECK: %[[SUM:.+]] = bufferization.to_tensor %[[PRE]]
// CHECK: %[[NORM:.+]] = bufferization.to_tensor
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[NORM]]
func.func @product_alone(%a: tensor<4x8xf32>, %w: tensor<8x8xf32>, %res: tensor<4x8xf32>, %seed: tensor<i32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %f = tf.fusion "gemm" : tensor<4x8xf32> {
    %p = tf.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %d = tf.dropout %p, %seed rate 0.5 key 7 training : tensor<4x8xf32>
    %s = tf.add %d, %res : tensor<4x8xf32>
    tf.yield %s : tensor<4x8xf32>
  }
  %y = tf.layer_norm %f, %g, %b : tensor<4x8xf32>, tensor<8xf32>
  %n = tf.add %f, %y : tensor<4x8xf32>
  return %y, %n : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Outside training the dropout is no dropout: the fusion stays (its
// epilogue, the bias and the residual, goes with its GEMM), the call makes
// no sum.
// CHECK-LABEL: func.func @not_training
// CHECK: call @tfc_cuda_layer_norm_forward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0
func.func @not_training(%a: tensor<4x8xf32>, %w: tensor<8x8xf32>, %bias: tensor<8xf32>, %res: tensor<4x8xf32>, %seed: tensor<i32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %f = tf.fusion "gemm" : tensor<4x8xf32> {
    %p = tf.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %bb = tf.broadcast_in_dim %bias [1] : tensor<8xf32> to tensor<4x8xf32>
    %z = tf.add %p, %bb : tensor<4x8xf32>
    %d = tf.dropout %z, %seed rate 0.1 key 3 : tensor<4x8xf32>
    %s = tf.add %res, %d : tensor<4x8xf32>
    tf.yield %s : tensor<4x8xf32>
  }
  %y = tf.layer_norm %f, %g, %b : tensor<4x8xf32>, tensor<8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The residual made inside the body (a relu there): not a value the call
// can read before the fusion's loop; the dropout stays in code.
// CHECK-LABEL: func.func @residual_inside
// CHECK: arith.mului_extended
// CHECK: call @tfc_cuda_layer_norm_forward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0
func.func @residual_inside(%a: tensor<4x8xf32>, %w: tensor<8x8xf32>, %bias: tensor<8xf32>, %res: tensor<4x8xf32>, %seed: tensor<i32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %f = tf.fusion "gemm" : tensor<4x8xf32> {
    %p = tf.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %bb = tf.broadcast_in_dim %bias [1] : tensor<8xf32> to tensor<4x8xf32>
    %z = tf.add %p, %bb : tensor<4x8xf32>
    %d = tf.dropout %z, %seed rate 0.1 key 3 training : tensor<4x8xf32>
    %r = tf.relu %res : tensor<4x8xf32>
    %s = tf.add %r, %d : tensor<4x8xf32>
    tf.yield %s : tensor<4x8xf32>
  }
  %y = tf.layer_norm %f, %g, %b : tensor<4x8xf32>, tensor<8xf32>
  return %y : tensor<4x8xf32>
}
