# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  input tokens: i32[batch, 4]
  # CHECK: err-unknown-name.tf:[[@LINE+1]]:17: error: unknown name 'tokns'; did you mean 'tokens'?
  let x = float(tokns)
}
