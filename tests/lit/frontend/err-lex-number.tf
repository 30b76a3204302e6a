# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  # CHECK: err-lex-number.tf:[[@LINE+1]]:13: error: invalid number '12abc'
  param n = 12abc
}
