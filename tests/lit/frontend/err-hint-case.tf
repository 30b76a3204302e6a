# A name that differs only in case is the one meant (not the closest by edits:
# `AdamW` is one edit from `adam`, and means `adamw`).
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input x: f32[2, 4]
  output x
}
train m {
  # CHECK: err-hint-case.tf:[[@LINE+1]]:13: error: unknown optimizer 'AdamW'; did you mean 'adamw'? (known: adam, adamw, sgd)
  optimizer AdamW(lr: 1e-3)
}
