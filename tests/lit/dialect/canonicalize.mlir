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

// -----

// A transpose of a matmul operand's matrix dims becomes the matmul's
// transpose flag (attention's q^T k); other permutations stay ops.
// CHECK-LABEL: func.func @matmul_of_transpose
// CHECK-SAME: (%[[A:.+]]: tensor<2x4x3xf32>, %[[B:.+]]: tensor<2x5x4xf32>, %[[C:.+]]: tensor<4x2x3xf32>)
func.func @matmul_of_transpose(%a: tensor<2x4x3xf32>, %b: tensor<2x5x4xf32>, %c: tensor<4x2x3xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  // CHECK: %[[M:.+]] = tf.matmul %[[A]], %[[B]] transpose_lhs transpose_rhs : tensor<2x4x3xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  // CHECK: %[[T:.+]] = tf.transpose %[[C]] [1, 2, 0]
  // CHECK: %[[N:.+]] = tf.matmul %[[T]], %[[B]] transpose_rhs
  // CHECK: return %[[M]], %[[N]]
  %at = tf.transpose %a [0, 2, 1] : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
  %bt = tf.transpose %b [0, 2, 1] : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
  %0 = tf.matmul %at, %bt : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  %ct = tf.transpose %c [1, 2, 0] : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  %1 = tf.matmul %ct, %b transpose_rhs : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  return %0, %1 : tensor<2x3x5xf32>, tensor<2x3x5xf32>
}

// -----

// (a b)^T = b^T a^T: the transposed product is one matmul with the operands
// swapped and their flags flipped; a product read elsewhere too keeps its
// transpose.
// CHECK-LABEL: func.func @transpose_of_matmul
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4xf32>, %[[B:.+]]: tensor<2x5x4xf32>)
func.func @transpose_of_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> (tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<2x3x5xf32>) {
  // CHECK: %[[P:.+]] = tf.matmul %[[B]], %[[A]] transpose_rhs : tensor<2x5x4xf32>, tensor<2x3x4xf32> -> tensor<2x5x3xf32>
  // CHECK: %[[Q:.+]] = tf.matmul %[[A]], %[[B]] transpose_rhs : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  // CHECK: %[[QT:.+]] = tf.transpose %[[Q]] [0, 2, 1]
  // CHECK: return %[[P]], %[[QT]], %[[Q]]
  %0 = tf.matmul %a, %b transpose_rhs : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  %1 = tf.transpose %0 [0, 2, 1] : tensor<2x3x5xf32> -> tensor<2x5x3xf32>
  %2 = tf.matmul %a, %b transpose_rhs : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  %3 = tf.transpose %2 [0, 2, 1] : tensor<2x3x5xf32> -> tensor<2x5x3xf32>
  return %1, %3, %2 : tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<2x3x5xf32>
}

// -----

// one_hot(ids) @ W is a lookup: W's rows (W^T's columns, transpose_rhs: a
// linear layer's weight) at ids, in the ids' shape, reshaped to the rows.
// CHECK-LABEL: func.func @matmul_of_one_hot
// CHECK-SAME: (%[[IDS:.+]]: tensor<4x3xi32>, %[[W:.+]]: tensor<8x5xf32>, %[[V:.+]]: tensor<5x8xf32>, %[[FLAT:.+]]: tensor<6xi32>)
func.func @matmul_of_one_hot(%ids: tensor<4x3xi32>, %w: tensor<8x5xf32>, %v: tensor<5x8xf32>, %flat: tensor<6xi32>) -> (tensor<12x8xf32>, tensor<6x8xf32>) {
  // CHECK-DAG: %[[G:.+]] = tf.gather %[[W]], %[[IDS]] columns : tensor<8x5xf32>, tensor<4x3xi32> -> tensor<4x3x8xf32>
  // CHECK-DAG: %[[R:.+]] = tf.reshape %[[G]] : tensor<4x3x8xf32> to tensor<12x8xf32>
  // CHECK-DAG: %[[H:.+]] = tf.gather %[[V]], %[[FLAT]] : tensor<5x8xf32>, tensor<6xi32> -> tensor<6x8xf32>
  // CHECK-NOT: tf.matmul
  // CHECK-NOT: tf.one_hot
  // CHECK: return %[[R]], %[[H]]
  %hot = tf.one_hot %ids depth 5 : tensor<4x3xi32> -> tensor<4x3x5xf32>
  %rows = tf.reshape %hot : tensor<4x3x5xf32> to tensor<12x5xf32>
  %0 = tf.matmul %rows, %w transpose_rhs : tensor<12x5xf32>, tensor<8x5xf32> -> tensor<12x8xf32>
  %flat_hot = tf.one_hot %flat depth 5 : tensor<6xi32> -> tensor<6x5xf32>
  %1 = tf.matmul %flat_hot, %v : tensor<6x5xf32>, tensor<5x8xf32> -> tensor<6x8xf32>
  return %0, %1 : tensor<12x8xf32>, tensor<6x8xf32>
}

// -----

// Not a lookup: the one-hot read transposed (a weight gradient's product), and
// a reshape that does not keep the classes last.
// CHECK-LABEL: func.func @matmul_of_one_hot_kept
func.func @matmul_of_one_hot_kept(%ids: tensor<6xi32>, %g: tensor<6x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x8xf32>, tensor<12x8xf32>) {
  // CHECK: tf.matmul
  // CHECK: tf.matmul
  %hot = tf.one_hot %ids depth 4 : tensor<6xi32> -> tensor<6x4xf32>
  %0 = tf.matmul %hot, %g transpose_lhs : tensor<6x4xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %odd = tf.reshape %hot : tensor<6x4xf32> to tensor<12x2xf32>
  %w2 = tf.reshape %w : tensor<8x3xf32> to tensor<2x12xf32>
  %1 = tf.matmul %odd, %w2 : tensor<12x2xf32>, tensor<2x12xf32> -> tensor<12x12xf32>
  %2 = tf.slice %1 start [0, 0] limit [12, 8] stride [1, 1] : tensor<12x12xf32> -> tensor<12x8xf32>
  return %0, %2 : tensor<4x8xf32>, tensor<12x8xf32>
}
