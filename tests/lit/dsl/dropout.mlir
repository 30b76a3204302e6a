// RUN: tfc-dsl-examples --model dropout | FileCheck %s

// Dropout in training mode: one tf.dropout per call, reading the model's one
// seed argument (tf.seed, made on first use) with its own key, 0, 1, ... in
// build order; a rate of 0 is the identity and builds no op. The operand's
// leading dimension is the batch (2), so each reads the sample offset too
// (tf.sample_offset, made with the seed) and counts its elements from
// offset * 6, the elements of a sample.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x6xf32> {tf.input = "x"}
// CHECK-SAME: %[[SEED:[a-z0-9]+]]: tensor<i32> {tf.seed}
// CHECK-SAME: %[[OFFSET:[a-z0-9]+]]: tensor<i32> {tf.sample_offset}
// CHECK: %[[D0:.+]] = tf.dropout %[[X]], %[[SEED]] sample_offset %[[OFFSET]] sample_size 6 rate 2.500000e-01 key 0 training : tensor<2x6xf32>
// CHECK: %[[D1:.+]] = tf.dropout %[[D0]], %[[SEED]] sample_offset %[[OFFSET]] sample_size 6 rate 5.000000e-01 key 1 training : tensor<2x6xf32>
// CHECK-NOT: tf.dropout
// CHECK: return %[[D1]], %[[X]]
