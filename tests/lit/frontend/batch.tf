# `batch` comes from --batch, else the train block, else 1 with a note.
# RUN: tfc compile %s --emit=mlir 2>&1 | FileCheck %s --check-prefix=DEFAULT
# RUN: tfc compile %s --emit=mlir --batch 8 2>&1 | FileCheck %s --check-prefix=FLAG
# RUN: tfc compile %s --emit=mlir --model with_train 2>&1 | FileCheck %s --check-prefix=TRAIN
# RUN: tfc compile %s --emit=mlir --model with_train --batch=3 2>&1 | FileCheck %s --check-prefix=BOTH

# DEFAULT: batch.tf:[[@LINE+4]]:7: note: batch is 1 for model 'no_train': no train block sets 'batch' and no --batch is given
# DEFAULT: func.func @no_train(%{{.*}}: tensor<1x4xf32> {tf.input = "x"}) -> (tensor<1x4x2xf32> {tf.output = "y"})
# FLAG-NOT: note:
# FLAG: func.func @no_train(%{{.*}}: tensor<8x4xf32> {tf.input = "x"}) -> (tensor<8x4x2xf32> {tf.output = "y"})
model no_train {
  input x: f32[batch, 4]
  output y = reshape(concat([x, x], axis: 0), [batch, 4, 2])
}

# TRAIN-NOT: note:
# TRAIN: tf.train = {batch = 64 : i64, model = "with_train"}
# TRAIN: func.func @with_train(%{{.*}}: tensor<64x2xf32>
# BOTH: tf.train = {batch = 3 : i64, model = "with_train"}
# BOTH: func.func @with_train(%{{.*}}: tensor<3x2xf32>
model with_train {
  input x: f32[batch, 2]
  output x
}

train with_train {
  batch 64
}
