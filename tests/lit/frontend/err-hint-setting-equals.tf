# `lr=1e-3` in a train block's call: the error says how a setting is written.
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2, 4]
  output x
}
train m {
  # CHECK: err-hint-setting-equals.tf:[[@LINE+1]]:20: error: expected ':' after 'lr', got '='; settings are written 'lr: 1e-3'
  optimizer adam(lr=1e-3, beta1 = 0.8)
}
