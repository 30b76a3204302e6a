# Rows of 10 classes vectorise: LLVM's loop vectoriser leaves loops under 16
# iterations scalar unless told otherwise, and tfc lowers its threshold to 8,
# so the softmax's normalising loop (exp of each element of a row of 10,
# divided by the row's sum) runs 8 lanes at a time, 2 after.
# RUN: tfc compile %s --emit=llvm | FileCheck %s

# CHECK-LABEL: define {{.*}}@predict_parallel4
# CHECK: fdiv <8 x float>
# CHECK: fdiv float
# CHECK-LABEL: define {{.*}}@predict_parallel3
model m {
  input x: f32[64, 10]
  output y = softmax(x * 3.0)
}
