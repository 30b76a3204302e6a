// RUN: tfc compile %s --emit=mlir | FileCheck %s
// RUN: tfc compile %s --emit=mlir --dump-ir=%t && FileCheck %s --input-file=%t/00-mlir.mlir
// A .mlir input in the tf dialect is parsed, verified and goes through the
// same pipeline.

// CHECK: func.func @f(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: tf.relu %arg0 : tensor<2x3xf32>
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tf.relu %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
