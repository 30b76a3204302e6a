# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[batch, 2]
  output x
}
train m {
  # CHECK: err-train-optimizer.tf:[[@LINE+1]]:18: error: 'adam' has no setting 'learning_rate' (known: lr, beta1, beta2, eps, weight_decay)
  optimizer adam(learning_rate: 1e-3)
}
