# Weight tying: linear(x, out, weight: W) and embedding(ids, vocab, dim,
# table: T) use a tensor of the layer's shape instead of making a parameter;
# a parameter so used twice is one argument, whose gradient autodiff sums
# (tests/unit/GradientTest.cpp checks the sum). A plain x @ transpose(W, [1, 0])
# ties as well; any f32 tensor of the right shape may be given.
# RUN: tfc compile %s --model gpt --emit=mlir | FileCheck %s
# RUN: not tfc compile %s --model wrong_shape 2>&1 | FileCheck %s --check-prefix=SHAPE
# RUN: not tfc compile %s --model wrong_table 2>&1 | FileCheck %s --check-prefix=TABLE
# RUN: not tfc compile %s --model wrong_dtype 2>&1 | FileCheck %s --check-prefix=DTYPE

# The one table, not marked tf.no_decay (its owner decides), and no
# embedding.weight or linear.weight:
# CHECK-LABEL: func.func @gpt(
# CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<2x5xi32> {tf.input = "ids"}
# CHECK-SAME: %[[WTE:[a-z0-9]+]]: tensor<11x4xf32> {tf.init = #tf.init<normal, 2.000000e-02>, tf.param = "wte"}
# CHECK-NOT: tf.param = "embedding
# CHECK-NOT: tf.param = "linear.weight
# CHECK-SAME: tf.param = "linear.bias"
# CHECK-NOT: tf.param
# CHECK-SAME: -> (
# CHECK: tf.gather %[[WTE]], %[[IDS]]
# linear's x @ W^T:
# CHECK: tf.matmul %{{.+}}, %[[WTE]] transpose_rhs : tensor<10x4xf32>, tensor<11x4xf32> -> tensor<10x11xf32>
# x @ transpose(wte, [1, 0]):
# CHECK: %[[T:.+]] = tf.transpose %[[WTE]] [1, 0] : tensor<11x4xf32> -> tensor<4x11xf32>
# CHECK: tf.matmul %{{.+}}, %[[T]]
# Any f32 tensor of the shape: here 2 * wte.
# CHECK: %[[DOUBLED:.+]] = tf.mul %[[WTE]], %{{.+}} : tensor<11x4xf32>
# CHECK: tf.matmul %{{.+}}, %[[DOUBLED]] transpose_rhs
model gpt {
  input ids: i32[2, 5]
  input labels: i32[2, 5]
  let wte = parameter([11, 4], init: normal(0.02), name: "wte")
  let x = embedding(ids, 11, 4, table: wte)
  let logits = linear(x, 11, weight: wte)
  logits = logits + x @ transpose(wte, [1, 0])
  logits = logits + linear(x, 11, weight: wte * 2.0, bias: false, name: "doubled")
  loss cross_entropy(logits, labels)
}

model wrong_shape {
  input x: f32[2, 4]
  let w = parameter([4, 11], name: "w")
  # SHAPE: weight-tying.tf:[[@LINE+1]]:14: error: linear: weight: is f32 [4, 11], but the layer needs f32 [11, 4] ([out, in])
  output y = linear(x, 11, weight: w)
}

model wrong_table {
  input ids: i32[2, 5]
  let w = parameter([11, 4], name: "w")
  # TABLE: weight-tying.tf:[[@LINE+1]]:14: error: embedding: table: is f32 [11, 4], but the layer needs f32 [12, 4] ([vocab, dim])
  output y = embedding(ids, 12, 4, table: w)
}

model wrong_dtype {
  input ids: i32[11, 4]
  # DTYPE: weight-tying.tf:[[@LINE+1]]:14: error: embedding: table: is i32 [11, 4], but the layer needs f32 [11, 4] ([vocab, dim])
  output y = embedding(ids, 11, 4, table: ids)
}
