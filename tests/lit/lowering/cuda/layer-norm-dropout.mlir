// A post-norm layer's dropout gradient: a training tf.dropout of a
// tf.layer_norm_grad's dx is stored by the layer norm backward's kernel as
// it writes dx (runtime/Abi.h's layer_norm_backward: the dropout's buffer,
// f32, the seed, the sample offset and size, the key, the threshold
// ceil(rate 2^32) and 1 - rate), not by a loop nest after it; dx is stored
// only where another op reads it. The CPU's kernels, the pass's default and
// a dropout outside training keep the loop.
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg="kernels=cuda layer-norm-dropout=true" | FileCheck %s
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg="kernels=cuda" | FileCheck %s --check-prefix=OFF
// RUN: tf-opt %s --split-input-file --tf-lower-to-linalg | FileCheck %s --check-prefix=CPU

// dx read by the residual path too: stored, and its dropout beside it.
// 0.1 rounds to the f32 0.100000001 (1 - it: 0.899999976); ceil(0.100000001
// x 2^32) = 429496736.
// CHECK-LABEL: func.func @residual
// CHECK: %[[DX:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[DXP:.+]] = memref.extract_aligned_pointer_as_index %[[DX]]
// CHECK: %[[DROP:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[DROPP:.+]] = memref.extract_aligned_pointer_as_index %[[DROP]]
// CHECK: %[[SEED:.+]] = memref.extract_aligned_pointer_as_index %{{.+}} : memref<i32>
// CHECK: %[[OFFSET:.+]] = memref.extract_aligned_pointer_as_index %{{.+}} : memref<i32>
// CHECK: %[[KEEP:.+]] = arith.constant 0.899999976 : f32
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[DXP]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[DROPP]], %c0{{(_[0-9]+)?}}, %[[SEED]], %[[OFFSET]], %c8{{(_[0-9]+)?}}, %c17{{(_[0-9]+)?}}, %c429496736{{(_[0-9]+)?}}, %[[KEEP]], %c0{{(_[0-9]+)?}})
// CHECK: bufferization.to_tensor %[[DROP]]
// CHECK-NOT: linalg.generic
// CHECK: return
// OFF-LABEL: func.func @residual
// OFF: call @tfc_cuda_layer_norm_backward(
// OFF: linalg.generic
// OFF: arith.mului_extended
// CPU-LABEL: func.func @residual
// CPU: call @tfc_layer_norm_backward(
// CPU: call @tfc_dropout_mask(
func.func @residual(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>, %g: tensor<4x8xf32>, %seed: tensor<i32>, %offset: tensor<i32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dgamma, %dbeta = tf.layer_norm_grad %x, %gamma grad %g : tensor<4x8xf32>, tensor<8xf32>
  %drop = tf.dropout %dx, %seed sample_offset %offset sample_size 8 rate 0.1 key 17 training : tensor<4x8xf32>
  return %dx, %drop, %dgamma, %dbeta : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// dx read by its dropout alone: not stored (0), and no sample offset (0, 0);
// ceil(0.25 x 2^32) = 2^30.
// CHECK-LABEL: func.func @dropout_alone
// CHECK: %[[DROP:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[DROPP:.+]] = memref.extract_aligned_pointer_as_index %[[DROP]]
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[DROPP]], %c0{{(_[0-9]+)?}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}, %c1073741824{{(_[0-9]+)?}},
// CHECK-NOT: linalg.generic
// CHECK: bufferization.to_tensor %[[DROP]]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dropout_alone(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>, %g: tensor<4x8xf32>, %seed: tensor<i32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dgamma, %dbeta = tf.layer_norm_grad %x, %gamma grad %g : tensor<4x8xf32>, tensor<8xf32>
  %drop = tf.dropout %dx, %seed rate 0.25 key 3 training : tensor<4x8xf32>
  return %drop, %dgamma, %dbeta : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Outside training a dropout is the identity: nothing to store.
// CHECK-LABEL: func.func @not_training
// CHECK: %[[DX:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: call @tfc_cuda_layer_norm_backward(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c0{{(_[0-9]+)?}},
// CHECK: bufferization.to_tensor %[[DX]]
func.func @not_training(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>, %g: tensor<4x8xf32>, %seed: tensor<i32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dgamma, %dbeta = tf.layer_norm_grad %x, %gamma grad %g : tensor<4x8xf32>, tensor<8xf32>
  %drop = tf.dropout %dx, %seed rate 0.25 key 3 : tensor<4x8xf32>
  return %drop, %dgamma, %dbeta : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}
