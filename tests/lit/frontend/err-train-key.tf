# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[batch, 2]
  output x
}
train m {
  # CHECK: err-train-key.tf:[[@LINE+1]]:3: error: unknown train setting 'epoch'; did you mean 'epochs'? (known: data, batch, epochs, optimizer, schedule, clip_grad_norm, seed, best)
  epoch 10
}
