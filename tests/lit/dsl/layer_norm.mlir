// RUN: tfc-dsl-examples --model layer_norm | FileCheck %s

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x5x8xf32>
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<8xf32> {tf.init = #tf.init<ones>, tf.param = "layer_norm.weight"}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<8xf32> {tf.init = #tf.init<zeros>, tf.param = "layer_norm.bias"}
// CHECK: tf.layer_norm %[[X]], %[[G]], %[[B]] {epsilon = 9.99999997E-7 : f32} : tensor<2x5x8xf32>, tensor<8xf32>
