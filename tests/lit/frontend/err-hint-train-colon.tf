# `batch: 32` in a train block (its settings take no ':' or '=').
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2, 4]
  output x
}
train m {
  # CHECK: err-hint-train-colon.tf:[[@LINE+1]]:8: error: expected the value of 'batch', got ':'; train settings are written without it: 'batch 32'
  batch: 32
}
