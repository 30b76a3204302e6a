# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2]
  output y = relu(x)
  # CHECK: err-dup-output.tf:[[@LINE+1]]:10: error: 'y' is already an output, metric or loss
  output y = tanh(x)
}
