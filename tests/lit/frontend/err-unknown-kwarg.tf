# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[batch, 4]
  # CHECK: err-unknown-kwarg.tf:[[@LINE+1]]:24: error: 'linear' has no argument 'bais'; did you mean 'bias'? (arguments: x, out, bias, name, init, decay, weight)
  let y = linear(x, 8, bais: false)
}
