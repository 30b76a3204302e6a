# RUN: not tfc compile %s 2>&1 | FileCheck %s
model reverse {
  input x: f32[batch, 2]
  output x
}
# CHECK: err-train-model.tf:[[@LINE+1]]:7: error: train block for an unknown model 'revrse'; did you mean 'reverse'?
train revrse {
  batch 4
}
