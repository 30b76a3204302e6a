# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2]
  # CHECK: err-syntax.tf:[[@LINE+1]]:23: error: expected ')' or ',' in the arguments of 'linear' (opened at [[@LINE+1]]:17), got 'let'
  let y = linear(x, 2 let
}
