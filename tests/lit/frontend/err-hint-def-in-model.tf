# `def` to bind a value inside a model: it is 'let'.
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2, 4]
  # CHECK: err-hint-def-in-model.tf:[[@LINE+1]]:3: error: 'def' defines a layer at the top level of the file, not in a model; to bind a value, write 'let x = ...'
  def y = relu(x)
  output y
}
