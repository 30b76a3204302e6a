// RUN: tfc-dsl-examples --model mha_self | FileCheck %s
// RUN: tfc-dsl-examples --model mha_self_causal | FileCheck %s --check-prefix=CAUSAL
// RUN: tfc-dsl-examples --model mha_cross_masks | FileCheck %s --check-prefix=CROSS

// One fused qkv projection (xavier-uniform: sqrt(6 / (8 + 24)) = 0.433,
// zero bias); each head takes a contiguous [q | k | v] chunk of it, as the
// tutorial's reshape(B, T, H, 3 * hd) + chunk.
// CHECK-LABEL: func.func @mha_self
// CHECK-SAME: tensor<24x8xf32> {tf.init = #tf.init<uniform, 0.4330127018922193>, tf.param = "self_attn.qkv.weight"}
// CHECK-SAME: tensor<24xf32> {tf.init = #tf.init<zeros>, tf.param = "self_attn.qkv.bias"}
// CHECK-SAME: tensor<8x8xf32> {tf.init = #tf.init<uniform, 0.61237243569579447>, tf.param = "self_attn.out.weight"}
// CHECK-SAME: tensor<8xf32> {tf.init = #tf.init<zeros>, tf.param = "self_attn.out.bias"}
// CHECK: tf.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<10x8xf32>, tensor<24x8xf32> -> tensor<10x24xf32>
// CHECK: %[[HEADS:.+]] = tf.reshape %{{.+}} : tensor<2x5x24xf32> to tensor<2x5x2x12xf32>
// CHECK: %[[T:.+]] = tf.transpose %[[HEADS]] [0, 2, 1, 3] : tensor<2x5x2x12xf32> -> tensor<2x2x5x12xf32>
// CHECK: %[[Q:.+]] = tf.slice %[[T]] start [0, 0, 0, 0] limit [2, 2, 5, 4]
// CHECK: %[[K:.+]] = tf.slice %[[T]] start [0, 0, 0, 4] limit [2, 2, 5, 8]
// CHECK: %[[V:.+]] = tf.slice %[[T]] start [0, 0, 0, 8] limit [2, 2, 5, 12]
// CHECK: %[[O:.+]], %[[W:.+]] = tf.attention %[[Q]], %[[K]], %[[V]] scale 5.000000e-01 with_weights
// CHECK: %[[M:.+]] = tf.transpose %[[O]] [0, 2, 1, 3] : tensor<2x2x5x4xf32> -> tensor<2x5x2x4xf32>
// CHECK: tf.reshape %[[M]] : tensor<2x5x2x4xf32> to tensor<2x5x8xf32>
// CHECK: tf.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<10x8xf32>, tensor<8x8xf32> -> tensor<10x8xf32>
// CHECK: return %{{.+}}, %[[W]] : tensor<2x5x8xf32>, tensor<2x2x5x5xf32>

// Self-attention under a 2-d causal mask: broadcast over batch and heads;
// no weights asked for, so none are returned.
// CAUSAL-LABEL: func.func @mha_self_causal
// CAUSAL: %[[C:.+]] = tf.constant dense<{{\[\[}}true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
// CAUSAL: %[[CB:.+]] = tf.broadcast_in_dim %[[C]] [2, 3] : tensor<4x4xi1> to tensor<2x2x4x4xi1>
// CAUSAL: tf.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[CB]] scale 5.000000e-01 : {{.*}} -> tensor<2x2x4x4xf32>
// CAUSAL-NOT: with_weights
// CAUSAL: return %{{.+}} : tensor<2x4x8xf32>

// Cross-attention: q from x, a fused kv projection of the memory; masks of
// 2, 3 (over heads, at dim 1) and 4 dims broadcast to [B, H, Tq, Tk].
// CROSS-LABEL: func.func @mha_cross_masks
// CROSS-SAME: %[[MASK2:[a-z0-9]+]]: tensor<3x5xi1> {tf.input = "mask2"}
// CROSS-SAME: %[[MASK3:[a-z0-9]+]]: tensor<2x3x5xi1> {tf.input = "mask3"}
// CROSS-SAME: %[[MASK4:[a-z0-9]+]]: tensor<2x1x3x5xi1> {tf.input = "mask4"}
// CROSS-SAME: tf.param = "a2.q.weight"
// CROSS-SAME: tensor<16x8xf32> {{.*}}tf.param = "a2.kv.weight"
// CROSS-SAME: tf.param = "a2.out.weight"
// CROSS: tf.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<10x8xf32>, tensor<16x8xf32> -> tensor<10x16xf32>
// CROSS: %[[B2:.+]] = tf.broadcast_in_dim %[[MASK2]] [2, 3] : tensor<3x5xi1> to tensor<2x2x3x5xi1>
// CROSS: tf.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[B2]] scale 5.000000e-01 : tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x3x5xi1> -> tensor<2x2x3x4xf32>
// CROSS: %[[U3:.+]] = tf.reshape %[[MASK3]] : tensor<2x3x5xi1> to tensor<2x1x3x5xi1>
// CROSS: %[[B3:.+]] = tf.broadcast_in_dim %[[U3]] [0, 1, 2, 3] : tensor<2x1x3x5xi1> to tensor<2x2x3x5xi1>
// CROSS: tf.attention %{{.+}} mask %[[B3]]
// CROSS: %[[B4:.+]] = tf.broadcast_in_dim %[[MASK4]] [0, 1, 2, 3] : tensor<2x1x3x5xi1> to tensor<2x2x3x5xi1>
// CROSS: %{{.+}}, %[[W4:.+]] = tf.attention %{{.+}} mask %[[B4]] scale 5.000000e-01 with_weights : {{.*}} -> tensor<2x2x3x4xf32>, tensor<2x2x3x5xf32>
// CROSS: return %{{.+}}, %{{.+}}, %{{.+}}, %[[W4]] : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x2x3x5xf32>
