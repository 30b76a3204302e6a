// RUN: tf-opt %s --split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  // CHECK: %[[R:.+]] = tf.reshape %[[X]] : tensor<2x3x4xf32> to tensor<4x6xf32>
  // CHECK-NEXT: return %[[R]]
  %0 = tf.reshape %x : tensor<2x3x4xf32> to tensor<6x4xf32>
  %1 = tf.reshape %0 : tensor<6x4xf32> to tensor<24xf32>
  %2 = tf.reshape %1 : tensor<24xf32> to tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: return %[[X]]
  %0 = tf.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  %1 = tf.reshape %0 : tensor<6xf32> to tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
func.func @identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>) {
  // CHECK: %[[T:.+]] = tf.transpose %[[X]] [1, 0]
  // CHECK-NEXT: return %[[X]], %[[X]], %[[T]]
  %0 = tf.broadcast_in_dim %x [0, 1] : tensor<2x3xf32> to tensor<2x3xf32>
  %1 = tf.transpose %x [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = tf.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// A broadcast that changes the shape stays.
// CHECK-LABEL: func.func @real_broadcast
func.func @real_broadcast(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: tf.broadcast_in_dim
  %0 = tf.broadcast_in_dim %x [1] : tensor<3xf32> to tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
