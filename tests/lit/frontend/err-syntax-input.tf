# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  # CHECK: err-syntax-input.tf:[[@LINE+1]]:11: error: expected ':' after the input's name (as in 'input x: f32[batch, 8]'), got '['
  input x [2]
}
