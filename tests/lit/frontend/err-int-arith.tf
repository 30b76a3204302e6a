# RUN: not tfc compile %s 2>&1 | FileCheck %s
# Integer tensors enter arithmetic only through float(), one_hot() or embedding().
model m {
  input tokens: i32[batch, 4]
  # CHECK: err-int-arith.tf:[[@LINE+1]]:18: error: '*' needs f32 operands, got i32 [1, 4] (integer and bool tensors enter arithmetic only through float(), one_hot() or embedding())
  let y = tokens * 2.0
}
