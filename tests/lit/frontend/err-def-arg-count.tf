# RUN: not tfc compile %s 2>&1 | FileCheck %s
def block(x) {
  return relu(x)
}
model m {
  input x: f32[batch, 4]
  # CHECK: err-def-arg-count.tf:[[@LINE+2]]:23: error: 'block' takes 1 argument, got 2 (arguments: x)
  # CHECK: err-def-arg-count.tf:2:5: note: the def is here
  output y = block(x, x)
}
