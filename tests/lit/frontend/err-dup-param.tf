# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  # CHECK: err-dup-param.tf:[[@LINE+3]]:9: error: param 'dim' is already defined
  # CHECK: err-dup-param.tf:[[@LINE+1]]:9: note: the first definition is here
  param dim = 32
  param dim = 64
}
