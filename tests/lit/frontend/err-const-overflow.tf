# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  param big = 9223372036854775807
  # CHECK: err-const-overflow.tf:[[@LINE+1]]:23: error: integer overflow in '*' (9223372036854775807 * 2)
  param n = big + big * 2
}
