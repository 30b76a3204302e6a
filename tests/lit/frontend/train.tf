# The train block, attached to the module as the tf.train dictionary.
# RUN: tfc compile %s --emit=mlir | FileCheck %s
# RUN: tfc compile %s --emit=mlir | tf-opt | FileCheck %s

# CHECK: module attributes {tf.train = {batch = 32 : i64, clip_grad_norm = 1.000000e+00 : f64,
# CHECK-SAME: data = {args = {dir = "data/sets"}, name = "npy"}, epochs = 3 : i64, model = "m",
# CHECK-SAME: optimizer = {args = {lr = 1.000000e-03 : f64, weight_decay = 0.000000e+00 : f64}, name = "adamw"},
# CHECK-SAME: schedule = {args = {}, name = "constant"}, seed = 0 : i64}}

model m {
  input x: f32[batch, 2]
  output x
}

train m {
  # keys in any order; values are constants
  seed 0
  data npy(dir: "data/sets")
  epochs 3
  batch 2 * 16
  optimizer adamw(lr: 1e-3, weight_decay: 0.0)
  schedule constant
  clip_grad_norm 1
}
