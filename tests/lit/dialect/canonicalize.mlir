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

// -----

// The adjoints of three slices of one tensor (each padded with zeros by a
// concat) add up to one concat of the three; a gap both sides leave zero
// stays a zero constant.
// CHECK-LABEL: func.func @add_of_disjoint_concats
// CHECK-DAG: %[[Z:.+]] = tf.constant dense<0.000000e+00> : tensor<2x1xf32>
// CHECK: %[[C:.+]] = tf.concat %arg0, %arg1, %[[Z]], %arg2 axis 1 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x2xf32> -> tensor<2x7xf32>
// CHECK-NOT: tf.add
// CHECK: return %[[C]]
func.func @add_of_disjoint_concats(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>, %c: tensor<2x2xf32>) -> tensor<2x7xf32> {
  %z5 = tf.constant dense<0.0> : tensor<2x5xf32>
  %z2 = tf.constant dense<0.0> : tensor<2x2xf32>
  %z3 = tf.constant dense<0.0> : tensor<2x3xf32>
  %pa = tf.concat %a, %z5 axis 1 : tensor<2x2xf32>, tensor<2x5xf32> -> tensor<2x7xf32>
  %pb = tf.concat %z2, %b, %z3 axis 1 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32> -> tensor<2x7xf32>
  %pc = tf.concat %z5, %c axis 1 : tensor<2x5xf32>, tensor<2x2xf32> -> tensor<2x7xf32>
  %s = tf.add %pa, %pb : tensor<2x7xf32>
  %t = tf.add %s, %pc : tensor<2x7xf32>
  return %t : tensor<2x7xf32>
}

// -----

// Overlapping non-zero pieces really add: left alone.
// CHECK-LABEL: func.func @add_of_overlapping_concats
// CHECK: tf.add
func.func @add_of_overlapping_concats(%a: tensor<2x2xf32>, %b: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %z3 = tf.constant dense<0.0> : tensor<2x3xf32>
  %z2 = tf.constant dense<0.0> : tensor<2x2xf32>
  %pa = tf.concat %a, %z3 axis 1 : tensor<2x2xf32>, tensor<2x3xf32> -> tensor<2x5xf32>
  %pb = tf.concat %z2, %b axis 1 : tensor<2x2xf32>, tensor<2x3xf32> -> tensor<2x5xf32>
  %pa2 = tf.concat %b, %a axis 1 : tensor<2x3xf32>, tensor<2x2xf32> -> tensor<2x5xf32>
  %s = tf.add %pa2, %pb : tensor<2x5xf32>
  return %s : tensor<2x5xf32>
}
