// RUN: tf-opt %s --tf-entry-points --split-input-file | FileCheck %s
// RUN: tf-opt %s --tf-entry-points --split-input-file | FileCheck %s --check-prefix=MODULE

// predict keeps the outputs, drops the loss and metrics, and reads only
// what they need: no labels. The model is described on the module.
// MODULE: module attributes
// MODULE-SAME: tfc.batch = 2 : i64
// MODULE-SAME: tfc.inputs = [{name = "x", type = tensor<2x3xf32>}, {name = "labels", type = tensor<2xi32>}]
// MODULE-SAME: tfc.model = "m"
// MODULE-SAME: tfc.params = [{init = #tf.init<uniform, 5.000000e-01>, name = "w", type = tensor<4x3xf32>}]
// MODULE-NOT: func.func @m(
// CHECK-LABEL: func.func @predict(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32>, %[[W:[a-z0-9]+]]: tensor<4x3xf32>) -> tensor<2x4xf32>
// CHECK-SAME: tfc.abi = {args = [{kind = "input", name = "x"}, {kind = "param", name = "w"}], results = [{kind = "output", name = "y"}]}
// CHECK-SAME: tfc.entry = "predict"
// CHECK-NOT: tf.cross_entropy
// CHECK: %[[Y:[a-z0-9]+]] = tf.matmul %[[X]], %[[W]] transpose_rhs
// CHECK: return %[[Y]]
func.func @m(%x: tensor<2x3xf32> {tf.input = "x"}, %labels: tensor<2xi32> {tf.input = "labels"},
             %w: tensor<4x3xf32> {tf.param = "w", tf.init = #tf.init<uniform, 0.5>})
    -> (tensor<f32> {tf.loss}, tensor<2x4xf32> {tf.output = "y"}) attributes {tf.batch = 2 : i64} {
  %y = tf.matmul %x, %w transpose_rhs : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %l = tf.cross_entropy %y, %labels axis 1 : tensor<2x4xf32>, tensor<2xi32>
  return %l, %y : tensor<f32>, tensor<2x4xf32>
}

// -----

// predict is eval mode: dropout is the identity and the seed is not read.
// CHECK-LABEL: func.func @predict(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-SAME: tfc.abi = {args = [{kind = "input", name = "x"}], results = [{kind = "output", name = "y"}]}
// CHECK-NOT: tf.dropout
// CHECK: return %[[X]]
func.func @m(%x: tensor<2x3xf32> {tf.input = "x"}, %seed: tensor<i32> {tf.seed})
    -> (tensor<2x3xf32> {tf.output = "y"}) attributes {tf.batch = 2 : i64} {
  %y = tf.dropout %x, %seed rate 5.000000e-01 key 1 training : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Attention maps are predict results too, by their names.
// CHECK-LABEL: func.func @predict(
// CHECK-SAME: results = [{kind = "output", name = "y"}, {kind = "attention", name = "layer0"}]
func.func @m(%x: tensor<2x3xf32> {tf.input = "x"})
    -> (tensor<2x3xf32> {tf.output = "y"}, tensor<2x3xf32> {tf.attention = "layer0"}) attributes {tf.batch = 2 : i64} {
  %y = tf.exp %x : tensor<2x3xf32>
  return %y, %x : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Functions that are not models (no tf.batch) are left alone.
// CHECK-LABEL: func.func @helper
// CHECK-NOT: func.func @predict
func.func @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
