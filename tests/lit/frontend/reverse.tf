# The contract example of DESIGN.md, verbatim below the RUN lines: it must
# compile, and its IR must parse and verify in tf-opt.
# RUN: tfc compile %s --emit=mlir | FileCheck %s
# RUN: tfc compile %s --emit=mlir | tf-opt | FileCheck %s
# RUN: tfc compile %s --emit=mlir 2>&1 | FileCheck %s --check-prefix=QUIET

# The train block's batch (128) sizes the inputs; the block is on the module.
# CHECK: module attributes {tf.train = {batch = 128 : i64, clip_grad_norm = 5.000000e+00 : f64,
# CHECK-SAME: data = {args = {classes = 10 : i64, seq = 16 : i64, test = 10000 : i64, train = 50000 : i64, val = 1000 : i64}, name = "reverse_sequences"},
# CHECK-SAME: epochs = 10 : i64, model = "reverse", optimizer = {args = {lr = 5.000000e-04 : f64}, name = "adam"},
# CHECK-SAME: schedule = {args = {warmup = 50 : i64}, name = "cosine_warmup"}, seed = 42 : i64}}
# CHECK: func.func @reverse(%{{.*}}: tensor<128x16xi32> {tf.input = "tokens"}, %{{.*}}: tensor<128x16xi32> {tf.input = "labels"},
# CHECK-SAME: tensor<32x10xf32> {{{.*}}tf.param = "input_net.weight"}, %{{.*}}: tensor<32xf32> {{{.*}}tf.param = "input_net.bias"}
# CHECK-SAME: tensor<96x32xf32> {{{.*}}tf.param = "encoder.0.self_attn.qkv.weight"}
# CHECK-SAME: tf.param = "encoder.0.linear1.weight"
# CHECK-SAME: tensor<32x32xf32> {{{.*}}tf.param = "linear.weight"}
# CHECK-SAME: tf.param = "layer_norm.weight"
# CHECK-SAME: tensor<10x32xf32> {{{.*}}tf.param = "output.weight"}
# CHECK-SAME: -> (tensor<f32> {tf.loss}, tensor<f32> {tf.metric = "accuracy"}, tensor<128x16x10xf32> {tf.output = "logits"})
# CHECK: tf.one_hot %{{.*}} depth 10 : tensor<128x16xi32> -> tensor<128x16x10xf32>
# The positional encoding [16, 32] broadcasts explicitly over the batch.
# CHECK: tf.broadcast_in_dim %{{.*}} [1, 2] : tensor<16x32xf32> to tensor<128x16x32xf32>
# CHECK: tf.cross_entropy
# CHECK: tf.compare eq, %{{.*}}, %{{.*}} : tensor<128x16xi32>
# CHECK: tf.reduce_mean %{{.*}} [0, 1] : tensor<128x16xf32> -> tensor<f32>
# QUIET-NOT: note:
# QUIET-NOT: error:

# The reverse task of the UvA tutorial: reverse a sequence of digits.
model reverse {
  param classes = 10
  param seq = 16
  param dim = 32

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  let x = linear(one_hot(tokens, classes), dim, name: "input_net")
  x = x + positional_encoding(seq, dim)
  x = encoder(x, layers: 1, heads: 1, ffn: 2 * dim, dropout: 0.0, norm: "post")
  x = relu(layer_norm(linear(x, dim)))
  let logits = linear(x, classes, name: "output")

  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
}

train reverse {
  data reverse_sequences(classes: 10, seq: 16, train: 50000, val: 1000, test: 10000)
  batch 128
  epochs 10
  optimizer adam(lr: 5e-4)
  schedule cosine_warmup(warmup: 50)
  clip_grad_norm 5.0
  seed 42
}
