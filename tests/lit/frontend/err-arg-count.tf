# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input ids: i32[batch, 4]
  # CHECK: err-arg-count.tf:[[@LINE+1]]:28: error: 'one_hot' takes 2 positional arguments, got 4 (arguments: ids, n)
  let y = one_hot(ids, 10, 3, 4)
}
