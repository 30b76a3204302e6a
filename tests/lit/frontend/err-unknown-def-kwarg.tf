# RUN: not tfc compile %s 2>&1 | FileCheck %s
# CHECK: err-unknown-def-kwarg.tf:[[@LINE+7]]:23: error: 'block' has no parameter 'widht'; did you mean 'width'? (arguments: x, width)
# CHECK: err-unknown-def-kwarg.tf:[[@LINE+1]]:5: note: the def is here
def block(x, width) {
  return linear(x, width)
}
model m {
  input x: f32[batch, 4]
  output y = block(x, widht: 8)
}
