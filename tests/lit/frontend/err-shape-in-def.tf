# RUN: not tfc compile %s 2>&1 | FileCheck %s
# An error inside an inlined def points into the def, then at each call.
# CHECK: err-shape-in-def.tf:[[@LINE+4]]:12: error: '+': shapes [2, 8] and [2, 4] cannot be broadcast together
# CHECK: err-shape-in-def.tf:[[@LINE+8]]:14: note: called from
def residual(x, width) {
  let h = linear(x, width)
  return h + x
}
model m {
  input x: f32[batch, 4]
  let y = residual(x, 4)
  output z = residual(y, 8)
}
train m {
  batch 2
}
