# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[batch, 4]
  # CHECK: err-arg-type.tf:[[@LINE+1]]:38: error: argument 'norm' of 'encoder' must be "post" or "pre", got "middle"
  let y = encoder(x, heads: 2, norm: "middle")
}
