// RUN: tfc-dsl-examples --model encoder_post | FileCheck %s
// RUN: tfc-dsl-examples --model encoder_pre | FileCheck %s --check-prefix=PRE

// Post-norm (the UvA tutorial): x = norm1(x + attn(x)); x = norm2(x + ffn(x)).
// CHECK-LABEL: func.func @encoder_post
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x5x8xf32>
// CHECK-SAME: tf.param = "encoder.0.self_attn.qkv.weight"
// CHECK-SAME: tf.param = "encoder.0.norm1.weight"
// CHECK-SAME: tensor<16x8xf32> {{.*}}tf.param = "encoder.0.linear1.weight"
// CHECK-SAME: tensor<8x16xf32> {{.*}}tf.param = "encoder.0.linear2.weight"
// CHECK-SAME: tf.param = "encoder.0.norm2.weight"
// CHECK-SAME: tf.param = "encoder.1.self_attn.qkv.weight"
// CHECK-SAME: tf.param = "encoder.1.norm2.bias"
// CHECK-NOT: tf.param = "encoder.norm
// CHECK: tf.attention
// CHECK: %[[R1:.+]] = tf.add %[[X]], %{{.+}} : tensor<2x5x8xf32>
// CHECK: %[[N1:.+]] = tf.layer_norm %[[R1]]
// CHECK: tf.relu
// CHECK: %[[R2:.+]] = tf.add %[[N1]], %{{.+}} : tensor<2x5x8xf32>
// CHECK: tf.layer_norm %[[R2]]
// CHECK: tf.attention
// CHECK-NOT: tf.dropout

// Pre-norm (the step-by-step book): x = x + attn(norm1(x)); x = x + ffn(norm2(x));
// a final norm; dropout in training mode, one key per dropout op.
// PRE-LABEL: func.func @encoder_pre
// PRE-SAME: %[[X:[a-z0-9]+]]: tensor<2x5x8xf32>
// PRE-SAME: %[[SEED:[a-z0-9]+]]: tensor<i32> {tf.seed}
// PRE-SAME: %[[OFFSET:[a-z0-9]+]]: tensor<i32> {tf.sample_offset}
// PRE-SAME: tf.param = "encoder.norm.weight"
// PRE: %[[N1:.+]] = tf.layer_norm %[[X]]
// PRE: tf.attention
// PRE: %[[D0:.+]] = tf.dropout %{{.+}}, %[[SEED]] sample_offset %[[OFFSET]] sample_size 40 rate 1.000000e-01 key 0 training
// PRE: %[[R1:.+]] = tf.add %[[X]], %[[D0]]
// PRE: tf.layer_norm %[[R1]]
// PRE: tf.dropout %{{.+}}, %[[SEED]] sample_offset %[[OFFSET]] sample_size 80 rate 1.000000e-01 key 1 training : tensor<2x5x16xf32>
// PRE: tf.relu
// PRE: tf.dropout %{{.+}}, %[[SEED]] sample_offset %[[OFFSET]] sample_size 40 rate 1.000000e-01 key 2 training
// PRE: %[[R2:.+]] = tf.add %[[R1]], %{{.+}}
// PRE: %[[OUT:.+]] = tf.layer_norm %[[R2]]
// PRE: return %[[OUT]]
