# There is no x[i]: the error names slice and squeeze.
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2, 4]
  # CHECK: err-hint-indexing.tf:[[@LINE+1]]:12: error: there is no indexing with '[...]': take elements with slice(x, axis, start, limit), and drop an axis of size 1 with squeeze(x, axis)
  let y = x[0]
  output y
}
