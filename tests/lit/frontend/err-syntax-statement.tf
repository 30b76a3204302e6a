# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2]
  # CHECK: err-syntax-statement.tf:[[@LINE+1]]:3: error: expected a statement, got the name 'outputs'; did you mean 'output'?
  outputs x
}
