# RUN: not tfc compile %s --model revers 2>&1 | FileCheck %s
# CHECK: err-model-name.tf:[[@LINE+1]]:7: error: no model named 'revers' in this file; did you mean 'reverse'? (models: reverse)
model reverse {
  input x: f32[2]
  output x
}
