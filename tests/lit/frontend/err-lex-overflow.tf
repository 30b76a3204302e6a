# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  # CHECK: err-lex-overflow.tf:[[@LINE+1]]:13: error: integer literal is too large (the largest is 9223372036854775807)
  param n = 9223372036854775808
}
