# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  param dim = 4
  # CHECK: err-rebind-param.tf:[[@LINE+1]]:3: error: 'dim' is a param, a constant: it cannot be rebound
  dim = 8
}
