# Rows of 10 classes vectorise: LLVM's loop vectoriser leaves loops under 16
# iterations scalar unless told otherwise, and tfc lowers its threshold to 8;
# a loop of a few iterations that whole vectors of 8 do not cover is marked
# for the vectoriser to fold its tail into masked operations, so the
# softmax's normalising loop (exp of each element of a row of 10, divided by
# the row's sum) is one masked vector of 16 lanes with AVX-512 (two of 8
# with AVX2), not 8 lanes and 2 scalar iterations after them. (The scalar
# loop left is the fallback for operands that overlap.)
# RUN: tfc compile %s --emit=llvm | FileCheck %s

# CHECK-LABEL: define {{.*}}@predict_parallel4
# CHECK: @llvm.masked.load.v{{8|16}}f32
# CHECK: fdiv <{{8|16}} x float>
# CHECK: @llvm.masked.store.v{{8|16}}f32
# CHECK-LABEL: define {{.*}}@predict_parallel3
model m {
  input x: f32[64, 10]
  output y = softmax(x * 3.0)
}
