// RUN: tfc-dsl-examples --model decoder | FileCheck %s

// Masked self-attention (causal: true on and below the diagonal), then
// cross-attention to the memory, then the feed-forward net; post-norm.
// CHECK-LABEL: func.func @decoder
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4x8xf32>
// CHECK-SAME: %[[MEM:[a-z0-9]+]]: tensor<2x6x8xf32>
// CHECK-SAME: tf.param = "decoder.0.self_attn.qkv.weight"
// CHECK-SAME: tf.param = "decoder.0.norm1.weight"
// CHECK-SAME: tf.param = "decoder.0.cross_attn.q.weight"
// CHECK-SAME: tf.param = "decoder.0.cross_attn.kv.weight"
// CHECK-SAME: tf.param = "decoder.0.norm2.weight"
// CHECK-SAME: tf.param = "decoder.0.linear1.weight"
// CHECK-SAME: tf.param = "decoder.0.norm3.weight"
// CHECK: %[[CAUSAL:.+]] = tf.constant dense<{{\[\[}}true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
// CHECK: %[[MB:.+]] = tf.broadcast_in_dim %[[CAUSAL]] [2, 3] : tensor<4x4xi1> to tensor<2x2x4x4xi1>
// CHECK: tf.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[MB]] {{.*}} -> tensor<2x2x4x4xf32>
// CHECK: %[[N1:.+]] = tf.layer_norm
// CHECK: tf.reshape %[[MEM]] : tensor<2x6x8xf32> to tensor<12x8xf32>
// CHECK: tf.attention %{{.+}}, %{{.+}}, %{{.+}} scale {{.*}} : tensor<2x2x4x4xf32>, tensor<2x2x6x4xf32>, tensor<2x2x6x4xf32> -> tensor<2x2x4x4xf32>
// CHECK: tf.layer_norm
// CHECK: tf.relu
// CHECK: tf.layer_norm
