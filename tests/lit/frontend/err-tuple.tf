# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input q: f32[2, 4, 8]
  # CHECK: err-tuple.tf:[[@LINE+1]]:11: error: this gives 2 values; bind them with 'let a, b = ...'
  let v = scaled_dot_product(q, q, q)
}
