# Operators broadcast as numpy does, with explicit tf.broadcast_in_dim, and
# literals next to tensors become scalars of the tensor's dtype.
# RUN: tfc compile %s --emit=mlir | FileCheck %s

# CHECK: func.func @broadcast(%[[X:.*]]: tensor<3x4xf32> {tf.input = "x"}, %[[B:.*]]: tensor<4xf32> {tf.input = "b"}, %[[L:.*]]: tensor<3xi32> {tf.input = "labels"}, %[[C:.*]]: tensor<3x1xf32> {tf.input = "c"})
# CHECK: %[[BB:.*]] = tf.broadcast_in_dim %[[B]] [1] : tensor<4xf32> to tensor<3x4xf32>
# CHECK: tf.add %[[X]], %[[BB]] : tensor<3x4xf32>
# [3, 1] - [4] broadcasts both sides to [3, 4].
# CHECK: tf.broadcast_in_dim %[[C]] [0, 1] : tensor<3x1xf32> to tensor<3x4xf32>
# CHECK: tf.broadcast_in_dim %[[B]] [1] : tensor<4xf32> to tensor<3x4xf32>
# CHECK: tf.sub
# x * 2: a scalar f32 constant, broadcast.
# CHECK: tf.constant dense<2.000000e+00> : tensor<f32>
# CHECK: tf.mul
# labels == 0: an i32 zero, so no conversion is needed.
# CHECK: tf.constant dense<0> : tensor<i32>
# CHECK: tf.compare eq, %[[L]], %{{.*}} : tensor<3xi32>
# CHECK: tf.matmul %{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
# CHECK: tf.neg

model broadcast {
  input x: f32[3, 4]
  input b: f32[4]
  input labels: i32[3]
  input c: f32[3, 1]
  output y = x + b
  output d = c - b
  output s = x * 2
  output z = labels == 0
  output g = -(x @ transpose(x, [1, 0]))
}
