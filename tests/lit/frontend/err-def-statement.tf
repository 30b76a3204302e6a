# RUN: not tfc compile %s 2>&1 | FileCheck %s
def f(x) {
  # CHECK: err-def-statement.tf:[[@LINE+1]]:3: error: 'input' belongs in a model, not in a def
  input y: f32[2]
  return x
}
model m {
  input x: f32[2]
  output x
}
