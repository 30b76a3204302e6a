// RUN: tf-opt %s | tf-opt | FileCheck %s

// CHECK-LABEL: func.func @smoke
func.func @smoke(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: tf.relu %{{.*}} : tensor<2x3xf32>
  %0 = tf.relu %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
