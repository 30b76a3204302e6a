# RUN: not tfc compile %s 2>&1 | FileCheck %s
def f(x) {
  # CHECK: err-recursion-self.tf:[[@LINE+1]]:14: error: recursive call: 'f' -> 'f'
  return x + f(x)
}
model m {
  input x: f32[2]
  output y = f(x)
}
