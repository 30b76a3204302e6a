// RUN: tf-opt %s --split-input-file --verify-diagnostics | FileCheck %s
// tf.decay, a parameter's explicit weight-decay choice, is a bool on a
// parameter.

// CHECK: tf.decay = false
// CHECK-SAME: tf.decay = true
func.func @f(%w: tensor<2x2xf32> {tf.param = "w", tf.decay = false}, %v: tensor<2xf32> {tf.param = "v", tf.decay = true}) {
  return
}

// -----

// expected-error @+1 {{tf.decay is a bool attribute of a parameter}}
func.func @f(%x: tensor<2xf32> {tf.input = "x", tf.decay = true}) {
  return
}

// -----

// expected-error @+1 {{tf.decay is a bool attribute of a parameter}}
func.func @f(%w: tensor<2xf32> {tf.param = "w", tf.decay}) {
  return
}
