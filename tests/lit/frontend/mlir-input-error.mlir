// RUN: not tfc compile %s 2>&1 | FileCheck %s
// An invalid .mlir input is reported by the verifier, with its location.

func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x3xf32>) -> tensor<2x3xf32> {
  // CHECK: mlir-input-error.mlir:[[@LINE+1]]:8: error: 'tf.add' op
  %0 = tf.add %x, %y : tensor<2x3xf32>, tensor<3x3xf32>
  return %0 : tensor<2x3xf32>
}
