# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[batch, 4]
  # CHECK: err-unknown-function.tf:[[@LINE+1]]:11: error: unknown function 'layernorm'; did you mean 'layer_norm'?
  let y = layernorm(x)
}
