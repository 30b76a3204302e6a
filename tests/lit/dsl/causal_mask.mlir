// RUN: tfc-dsl-examples --model causal_mask | FileCheck %s

// causal_mask(n): a bool constant, true on and below the diagonal (attend to
// oneself and the past); as a `where` condition it broadcasts like any operand.
// CHECK-LABEL: func.func @causal_mask
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x3x3xf32>
// CHECK-SAME: -> (tensor<3x3xi1> {tf.output = "mask"}, tensor<1x3x3xf32> {tf.output = "masked"})
// CHECK: %[[M:.+]] = tf.constant dense<{{\[\[}}true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
// CHECK: %[[M2:.+]] = tf.constant dense<{{\[\[}}true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
// CHECK: %[[MB:.+]] = tf.broadcast_in_dim %[[M2]] [1, 2] : tensor<3x3xi1> to tensor<1x3x3xi1>
// CHECK: %[[S:.+]] = tf.select %[[MB]], %[[X]], %{{.+}} : tensor<1x3x3xi1>, tensor<1x3x3xf32>
// CHECK: return %[[M]], %[[S]]
