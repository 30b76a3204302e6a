# `param dim: 32`: params are bound with '=' (inputs are the ones with ':').
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  # CHECK: err-hint-param-colon.tf:[[@LINE+1]]:12: error: expected '=' after the param's name, got ':'; params are written 'param dim = 32'
  param dim: 32
  input x: f32[2, dim]
  output x
}
