# Another framework's dtype name gets this one's.
# RUN: not tfc compile %s 2>&1 | FileCheck %s
model m {
  # CHECK: err-hint-input-dtype.tf:[[@LINE+1]]:12: error: unknown dtype 'float32'; did you mean 'f32'? (inputs are f32, i32 or bool)
  input x: float32[2, 4]
  output x
}
