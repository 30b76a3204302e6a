// RUN: tf-opt %s --tf-autodiff | FileCheck %s
// RUN: sed 's/weight_decay = 5.000000e-01 : f64}/weight_decay = 5.000000e-01 : f64, decay_all = true}/' %s | tf-opt --tf-autodiff | FileCheck %s
// RUN: sed 's/name = "adamw"/name = "sgd"/' %s | tf-opt --tf-autodiff | FileCheck %s --check-prefix=SGD
// A parameter's explicit tf.decay (the DSL's `decay:`) wins over the default
// rule and over decay_all: the embedding table (tf.no_decay by default) and
// the bias (a vector) marked tf.decay = true decay, the matrix marked
// tf.decay = false does not, with or without decay_all. It is a parameter
// group of its own for any optimizer: SGD's L2 term leaves it out too.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: tf.mul %arg3, %{{[0-9]+}} : tensor<2x3xf32>
// CHECK: tf.mul %arg2, %{{[0-9]+}} : tensor<5x3xf32>
// CHECK-NOT: tf.mul %arg3, %{{[0-9]+}} : tensor<2x3xf32>
// CHECK: tf.mul %arg4, %{{[0-9]+}} : tensor<2xf32>
// CHECK-NOT: tf.mul %arg3, %{{[0-9]+}} : tensor<2x3xf32>
// CHECK-LABEL: func.func @
// SGD-LABEL: func.func @train_step
// SGD-NOT: tf.mul %{{[0-9]+}}, %arg3 : tensor<2x3xf32>
// SGD: tf.mul %{{[0-9]+}}, %arg2 : tensor<5x3xf32>
// SGD-NOT: tf.mul %{{[0-9]+}}, %arg3 : tensor<2x3xf32>
// SGD: tf.mul %{{[0-9]+}}, %arg4 : tensor<2xf32>
// SGD-NOT: tf.mul %{{[0-9]+}}, %arg3 : tensor<2x3xf32>
// SGD-LABEL: func.func @
module attributes {tf.train = {batch = 4 : i64, model = "m", optimizer = {args = {lr = 1.000000e-01 : f64, weight_decay = 5.000000e-01 : f64}, name = "adamw"}}} {
  func.func @m(%arg0: tensor<4xi32> {tf.input = "ids"}, %arg1: tensor<4x2xf32> {tf.input = "y"}, %arg2: tensor<5x3xf32> {tf.decay = true, tf.init = #tf.init<normal, 1.0>, tf.no_decay, tf.param = "embedding.weight"}, %arg3: tensor<2x3xf32> {tf.decay = false, tf.init = #tf.init<uniform, 0.5>, tf.param = "fc.weight"}, %arg4: tensor<2xf32> {tf.decay = true, tf.init = #tf.init<uniform, 0.5>, tf.param = "fc.bias"}) -> (tensor<f32> {tf.loss}) attributes {tf.batch = 4 : i64} {
    %e = tf.gather %arg2, %arg0 : tensor<5x3xf32>, tensor<4xi32> -> tensor<4x3xf32>
    %0 = tf.matmul %e, %arg3 transpose_rhs : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
    %b = tf.broadcast_in_dim %arg4 [1] : tensor<2xf32> to tensor<4x2xf32>
    %1 = tf.add %0, %b : tensor<4x2xf32>
    %2 = tf.mse %1, %arg1 : tensor<4x2xf32>
    return %2 : tensor<f32>
  }
}
