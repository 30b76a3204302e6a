# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2]
  let y = relu(x)
  # CHECK: err-dup-let.tf:[[@LINE+1]]:7: error: 'y' is already bound; rebind it with 'y = ...'
  let y = tanh(x)
}
