# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2, 3, 4]
  # CHECK: err-shape-matmul.tf:[[@LINE+1]]:13: error: '@' contracts [2, 3, 4] with [2, 3, 4]: 4 != 3
  let z = x @ x
}
