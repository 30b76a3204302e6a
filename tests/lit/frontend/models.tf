# A file may hold several models: the first is the default, --model picks.
# RUN: tfc compile %s --emit=mlir --batch 1 | FileCheck %s --check-prefix=FIRST
# RUN: tfc compile %s --emit=mlir --batch 1 --model second | FileCheck %s --check-prefix=SECOND

# FIRST: func.func @first(
# FIRST-NOT: func.func
# SECOND-NOT: tf.train
# SECOND: func.func @second(%{{.*}}: tensor<1x3xf32>
# SECOND-NOT: func.func

model first {
  input x: f32[batch, 2]
  output x
}

model second {
  input x: f32[batch, 3]
  output y = tanh(x)
}

train first {
  batch 5
}
