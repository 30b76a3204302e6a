# let, rebinding, tuple binding, and `output NAME = expr`.
# RUN: tfc compile %s --emit=mlir | FileCheck %s

# CHECK: func.func @bindings(%[[Q:.*]]: tensor<2x4x8xf32> {tf.input = "q"})
# CHECK-SAME: -> (tensor<2x4x8xf32> {tf.output = "values"}, tensor<2x4x4xf32> {tf.output = "weights"}, tensor<2x4x8xf32> {tf.output = "z"}, tensor<f32> {tf.metric = "m"})
# CHECK: %[[MASK:.*]] = tf.constant dense<{{\[\[}}true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
# CHECK: %[[B:.*]] = tf.broadcast_in_dim %[[MASK]] [1, 2] : tensor<4x4xi1> to tensor<2x4x4xi1>
# CHECK: %[[V:.*]], %[[W:.*]] = tf.attention %[[Q]], %[[Q]], %[[Q]] mask %[[B]] scale {{.*}} with_weights
# x = x * 2.0 rebinds x: the second product reads the first.
# CHECK: %[[X1:.*]] = tf.mul %[[V]], %{{.*}} : tensor<2x4x8xf32>
# CHECK: %[[X2:.*]] = tf.mul %[[X1]], %{{.*}} : tensor<2x4x8xf32>
# CHECK: %[[Z:.*]] = tf.relu %[[X2]]
# CHECK: %[[M:.*]] = tf.reduce_mean %[[Z]]
# CHECK: return %[[V]], %[[W]], %[[Z]], %[[M]]

def pair(a) {
  return a, relu(a)
}

model bindings {
  input q: f32[2, 4, 8]
  let values, w = scaled_dot_product(q, q, q, mask: causal_mask(4))
  output values
  output weights = w
  let x = values
  x = x * 2.0
  x = x * 2.0
  let ignored, r = pair(x)
  output z = r
  metric m = mean(z)
}
