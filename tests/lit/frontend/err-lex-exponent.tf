# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  # CHECK: err-lex-exponent.tf:[[@LINE+1]]:14: error: invalid number '1.5e': expected digits in the exponent
  param lr = 1.5e
}
