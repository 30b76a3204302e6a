# A Python-style `def f(x):`: a def's body is in braces.
# RUN: not tfc compile %s 2>&1 | FileCheck %s
# CHECK: err-hint-def-colon.tf:[[@LINE+1]]:13: error: expected '{' to open the body of 'block', got ':'; a def's body is in braces: def block(x) { ... return y }
def block(x):
  return relu(x)

model m {
  input x: f32[2, 4]
  output y = block(x)
}
