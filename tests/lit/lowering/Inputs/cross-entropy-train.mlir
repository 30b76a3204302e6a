// A loss of cross_entropy over the last axis of a parameter-scaled input:
// its train step holds tf.cross_entropy_grad (cross-entropy-grad.mlir).
module attributes {tf.train = {batch = 2 : i64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64}, name = "sgd"}}} {
  func.func @m(%arg0: tensor<2x3x5xf32> {tf.input = "x"}, %arg1: tensor<2x3xi32> {tf.input = "y"}, %arg2: tensor<2x3x5xf32> {tf.init = #tf.init<ones>, tf.param = "p"}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 2 : i64} {
    %0 = tf.mul %arg0, %arg2 : tensor<2x3x5xf32>
    %1 = tf.cross_entropy %0, %arg1 axis 2 : tensor<2x3x5xf32>, tensor<2x3xi32>
    return %1 : tensor<f32>
  }
}
