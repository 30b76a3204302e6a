// RUN: tfc-dsl-examples --model embedding | FileCheck %s

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<2x7xi32> {tf.input = "ids"}
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<11x4xf32> {tf.init = #tf.init<normal, 1.000000e+00>, tf.no_decay, tf.param = "embedding.weight"}
// CHECK: tf.gather %[[T]], %[[IDS]] : tensor<11x4xf32>, tensor<2x7xi32> -> tensor<2x7x4xf32>
