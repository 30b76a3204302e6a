# RUN: not tfc compile %s 2>&1 | FileCheck %s
# Mutual recursion is reported as the cycle, not a stack overflow.
# CHECK: err-recursion.tf:[[@LINE+6]]:10: error: recursive call: 'even' -> 'odd' -> 'even' (defs are inlined, so they cannot call themselves)
# CHECK: err-recursion.tf:[[@LINE+2]]:10: note: called from
def even(x) {
  return odd(x)
}
def odd(x) {
  return even(x)
}
model m {
  input x: f32[2]
  output y = even(x)
}
