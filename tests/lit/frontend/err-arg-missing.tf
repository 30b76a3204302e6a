# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input ids: i32[batch, 4]
  # CHECK: err-arg-missing.tf:[[@LINE+1]]:11: error: 'one_hot' is missing its argument 'n' (arguments: ids, n)
  let y = one_hot(ids)
}
