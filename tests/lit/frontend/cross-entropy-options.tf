# cross_entropy with PyTorch's ignore_index, label_smoothing and weight: built
# of log_softmax, one_hot and sums (no tf.cross_entropy), the ignored labels
# replaced before one_hot, so labels get no index bound (a -100 passes the
# runtime's input checks).
# RUN: tfc compile %s --emit=mlir --batch 2 | FileCheck %s
# RUN: tfc compile %s --emit=mlir --batch 2 | tf-opt --tf-entry-points | FileCheck %s --check-prefix=BOUND
# RUN: tfc compile %s -o %t && %t info | FileCheck %s --check-prefix=INFO
# Errors, each at its call:
# RUN: sed 's/label_smoothing: 0.1/label_smoothing: 1.5/' %s > %t.smooth.tf
# RUN: not tfc compile %t.smooth.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=SMOOTH
# RUN: sed 's/weight: w)/weight: w, axis: 0)/' %s > %t.axis.tf
# RUN: not tfc compile %t.axis.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=AXIS
# RUN: sed 's/positional_encoding(classes, 2)/positional_encoding(3, 2)/' %s > %t.weight.tf
# RUN: not tfc compile %t.weight.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=WEIGHT

# CHECK: func.func @tagger
# CHECK-NOT: tf.cross_entropy
# CHECK: tf.log_softmax
# CHECK: tf.one_hot
# CHECK-NOT: tf.cross_entropy
# CHECK: tf.max
# CHECK: tf.div
# BOUND: tfc.inputs = [{index_bound = 7 : i64, name = "tokens", type = tensor<2x6xi32>}, {name = "labels", type = tensor<2x6xi32>}]
# INFO: parameters
# SMOOTH: error: cross_entropy: label_smoothing must be in [0, 1), got 1.5
# AXIS: error: cross_entropy: ignore_index, label_smoothing and weight need the classes on the last axis
# WEIGHT: error: cross_entropy: weight must be f32[5] (one per class), got f32 [3]
model tagger {
  param classes = 5
  input tokens: i32[batch, 6]
  input labels: i32[batch, 6]
  # Class weights from a constant table (the language has no tensor constants yet).
  let w = sum(positional_encoding(classes, 2), axis: -1) + 2.0
  let logits = linear(one_hot(tokens, 7), classes)
  loss cross_entropy(logits, labels, ignore_index: -100, label_smoothing: 0.1, weight: w)
}
