# `x.shape`, `x.sum()`: values have no attributes or methods.
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2, 4]
  # CHECK: err-hint-attribute.tf:[[@LINE+1]]:12: error: unexpected character '.'; values have no attributes or methods: shapes are fixed when the model is built, and functions are called as sum(x), not x.sum()
  let n = x.shape
  output x
}
