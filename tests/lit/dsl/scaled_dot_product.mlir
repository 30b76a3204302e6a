// RUN: tfc-dsl-examples --model sdpa_mask | FileCheck %s

// scale = 1/sqrt(d_k) = 1/sqrt(8); a 2-d mask broadcasts over the batch.
// CHECK-LABEL: func.func @sdpa_mask
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x8xf32>
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<4x4xi1>
// CHECK: %[[MB:.+]] = tf.broadcast_in_dim %[[M]] [1, 2] : tensor<4x4xi1> to tensor<2x4x4xi1>
// CHECK: %[[V:.+]], %[[W:.+]] = tf.attention %[[Q]], %[[Q]], %[[Q]] mask %[[MB]] scale 0.353553385 with_weights
// CHECK: return %[[V]], %[[W]] : tensor<2x4x8xf32>, tensor<2x4x4xf32>
