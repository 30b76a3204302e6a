# init: on every layer that owns weight matrices sets theirs (biases and
# norms keep PyTorch's defaults); an initialiser is a value: bare zeros, ones,
# xavier, kaiming, or normal(std), uniform(bound), and may be passed to a def.
# Without init: the IR is the PyTorch defaults' (the seed models' IR is
# unchanged; tests/lit/models/twins.mlir).
# RUN: tfc compile %s --model layers --emit=mlir | FileCheck %s
# RUN: not tfc compile %s --model typo 2>&1 | FileCheck %s --check-prefix=TYPO
# RUN: not tfc compile %s --model unknown_call 2>&1 | FileCheck %s --check-prefix=CALL
# RUN: not tfc compile %s --model bare_normal 2>&1 | FileCheck %s --check-prefix=BARE
# RUN: not tfc compile %s --model called 2>&1 | FileCheck %s --check-prefix=CALLED
# RUN: not tfc compile %s --model quoted 2>&1 | FileCheck %s --check-prefix=QUOTED
# RUN: not tfc compile %s --model number 2>&1 | FileCheck %s --check-prefix=NUMBER
# RUN: not tfc compile %s --model arithmetic 2>&1 | FileCheck %s --check-prefix=ARITH

# CHECK-LABEL: func.func @layers(
# CHECK-SAME: tensor<7x4xf32> {tf.init = #tf.init<uniform, 5.000000e-01>, tf.no_decay, tf.param = "embedding.weight"}
# A [4, 4, 3] kernel: fan_in = fan_out = 12; xavier sqrt(6 / 24), the bias as PyTorch's, 1 / sqrt(12):
# CHECK-SAME: tensor<4x4x3xf32> {tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "conv1d.weight"}
# CHECK-SAME: tensor<4xf32> {tf.init = #tf.init<uniform, 0.28867513459481292>, tf.param = "conv1d.bias"}
# kaiming: 1 / sqrt(4); the biases zeros, as the tutorial's attention:
# CHECK-SAME: tensor<12x4xf32> {tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "self_attn.qkv.weight"}
# CHECK-SAME: tensor<12xf32> {tf.init = #tf.init<zeros>, tf.param = "self_attn.qkv.bias"}
# CHECK-SAME: tensor<4x4xf32> {tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "self_attn.out.weight"}
# CHECK-SAME: tensor<12x4xf32> {tf.init = #tf.init<normal, 3.000000e-01>, tf.param = "encoder.0.self_attn.qkv.weight"}
# CHECK-SAME: tensor<4x4xf32> {tf.init = #tf.init<normal, 3.000000e-01>, tf.param = "encoder.0.self_attn.out.weight"}
# CHECK-SAME: tensor<4xf32> {tf.init = #tf.init<ones>, tf.param = "encoder.0.norm1.weight"}
# CHECK-SAME: tensor<6x4xf32> {tf.init = #tf.init<normal, 3.000000e-01>, tf.param = "encoder.0.linear1.weight"}
# CHECK-SAME: tensor<6xf32> {tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "encoder.0.linear1.bias"}
# CHECK-SAME: tensor<4x6xf32> {tf.init = #tf.init<normal, 3.000000e-01>, tf.param = "encoder.0.linear2.weight"}
# CHECK-SAME: tensor<12x4xf32> {tf.init = #tf.init<zeros>, tf.param = "decoder.0.self_attn.qkv.weight"}
# CHECK-SAME: tensor<4x4xf32> {tf.init = #tf.init<zeros>, tf.param = "decoder.0.cross_attn.q.weight"}
# CHECK-SAME: tensor<8x4xf32> {tf.init = #tf.init<zeros>, tf.param = "decoder.0.cross_attn.kv.weight"}
# CHECK-SAME: tensor<6x4xf32> {tf.init = #tf.init<zeros>, tf.param = "decoder.0.linear1.weight"}
# Through a def's argument:
# CHECK-SAME: tensor<7x4xf32> {tf.init = #tf.init<normal, 2.000000e-02>, tf.param = "out.linear.weight"}
# CHECK-SAME: tensor<7xf32> {tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "out.linear.bias"}
# And without init:, PyTorch's kaiming-uniform, 1 / sqrt(4):
# CHECK-SAME: tensor<7x4xf32> {tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "plain.weight"}
def out(x, init) {
  return linear(x, 7, init: init)
}

model layers {
  input ids: i32[2, 6]
  let x = embedding(ids, 7, 4, init: uniform(0.5))
  x = x + transpose(conv1d(transpose(x, [0, 2, 1]), 4, kernel: 3, padding: 1, init: xavier), [0, 2, 1])
  x = multi_head_attention(x, heads: 2, init: kaiming)
  x = encoder(x, heads: 2, ffn: 6, init: normal(0.3))
  let std = normal(0.02)
  x = decoder(x, x, heads: 2, ffn: 6, init: zeros)
  output y = out(x, std)
  output z = linear(x, 7, name: "plain")
}

model typo {
  input x: f32[2, 4]
  # TYPO: initialisers.tf:[[@LINE+1]]:33: error: unknown initialiser 'xavir'; did you mean 'xavier'? (initialisers: zeros, ones, normal(std), uniform(bound), xavier, kaiming)
  output y = linear(x, 3, init: xavir)
}

model unknown_call {
  input x: f32[2, 4]
  # CALL: initialisers.tf:[[@LINE+1]]:33: error: unknown initialiser 'gaussian' (initialisers: zeros, ones, normal(std), uniform(bound), xavier, kaiming)
  output y = linear(x, 3, init: gaussian(0.1))
}

model bare_normal {
  input x: f32[2, 4]
  # BARE: initialisers.tf:[[@LINE+1]]:33: error: initialiser 'normal' takes its std: normal(0.02)
  output y = linear(x, 3, init: normal)
}

model called {
  input x: f32[2, 4]
  # CALLED: initialisers.tf:[[@LINE+1]]:33: error: initialiser 'kaiming' takes no arguments: write init: kaiming
  output y = linear(x, 3, init: kaiming())
}

model quoted {
  input x: f32[2, 4]
  # QUOTED: initialisers.tf:[[@LINE+1]]:33: error: argument 'init' of 'linear' must be an initialiser, written without quotes (init: xavier), got "xavier"
  output y = linear(x, 3, init: "xavier")
}

model number {
  input ids: i32[2, 4]
  # NUMBER: initialisers.tf:[[@LINE+1]]:41: error: argument 'init' of 'embedding' must be an initialiser (zeros, ones, normal(std), uniform(bound), xavier, kaiming), got the number 0.02
  output y = embedding(ids, 5, 3, init: 0.02)
}

model arithmetic {
  input x: f32[2, 4]
  # ARITH: initialisers.tf:[[@LINE+1]]:16: error: cannot apply '+' to a tensor f32[2, 4] and the initialiser uniform(0.5) (an initialiser is an argument, as in init: xavier)
  output y = x + uniform(0.5)
}
