# RUN: not tfc compile %s 2>&1 | FileCheck %s
# A shape error from the DSL names both shapes.
model m {
  input x: f32[batch, 4]
  input y: f32[batch, 5]
  # CHECK: err-shape.tf:[[@LINE+1]]:13: error: '+': shapes [3, 4] and [3, 5] cannot be broadcast together
  let z = x + y
}
train m {
  batch 3
}
