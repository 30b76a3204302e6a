# A dropout on a batch of samples (its leading dimension the batch) counts its
# elements from the batch's first sample in the global batch: the model gets
# a tf.sample_offset argument, made with the seed, and the op the elements of
# a sample (3). A dropout whose leading dimension is not the batch has no
# offset: every rank of a data-parallel run draws the same mask for it.
# RUN: tfc compile %s --emit=mlir --batch 4 | tf-opt | FileCheck %s

# CHECK-LABEL: func.func @m
# CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x3xf32> {tf.input = "x"}
# CHECK-SAME: %[[SEED:[a-z0-9]+]]: tensor<i32> {tf.seed}
# CHECK-SAME: %[[OFFSET:[a-z0-9]+]]: tensor<i32> {tf.sample_offset}
# CHECK: tf.dropout %[[X]], %[[SEED]] sample_offset %[[OFFSET]] sample_size 3 rate 5.000000e-01 key 0 training : tensor<4x3xf32>
# CHECK: %[[T:.+]] = tf.transpose %[[X]]
# CHECK: tf.dropout %[[T]], %[[SEED]] rate 2.500000e-01 key 1 training : tensor<3x4xf32>
model m {
  input x: f32[batch, 3]
  let a = dropout(x, 0.5)
  let b = dropout(transpose(x, [1, 0]), 0.25)
  output a
  output b
}
