# Python's `name=value` in a call: the error says how a keyword argument is written.
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2, 4]
  # CHECK: err-hint-keyword-equals.tf:[[@LINE+1]]:26: error: expected ')' or ',' in the arguments of 'softmax' (opened at [[@LINE+1]]:18), got '='; keyword arguments are written 'axis: -1'
  let y = softmax(x, axis=-1)
  output y
}
