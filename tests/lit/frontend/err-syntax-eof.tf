# RUN: not tfc compile %s 2>&1 | FileCheck %s
# CHECK: err-syntax-eof.tf:[[@LINE+3]]:1: error: expected '}' to close model 'm' opened at [[@LINE+1]]:9
model m {
  input x: f32[2]
