# A def call is inlined under a parameter scope named after the def (then
# def_1, def_2, ...) or its name: argument; defs may call defs.
# RUN: tfc compile %s --emit=mlir --batch 2 | FileCheck %s
# RUN: tfc compile %s --emit=mlir --batch 2 | tf-opt | FileCheck %s

# CHECK-LABEL: func.func @fleuret(
# CHECK-SAME: tf.param = "conv1d.weight"
# CHECK-SAME: tensor<8x16x1xf32> {{{.*}}tf.param = "attention_layer.conv1d.weight"}
# CHECK-SAME: tensor<8x16x1xf32> {{{.*}}tf.param = "attention_layer.conv1d_1.weight"}
# CHECK-SAME: tensor<16x16x1xf32> {{{.*}}tf.param = "attention_layer.conv1d_2.weight"}
# CHECK-SAME: tf.param = "attention_layer_1.conv1d.weight"
# CHECK-SAME: tf.param = "attn.conv1d.weight"
# CHECK-SAME: tf.param = "block.inner.linear.weight"
# CHECK-SAME: tf.param = "block.inner.layer_norm.weight"
# CHECK-SAME: tf.param = "block.inner_1.linear.weight"
# CHECK-SAME: tf.param = "conv1d_1.weight"
# The def's body: q^T k, a softmax over the last axis, and the transposes.
# CHECK: tf.conv1d
# CHECK: tf.transpose %{{.*}} [0, 2, 1] : tensor<2x8x20xf32> -> tensor<2x20x8xf32>
# CHECK: tf.matmul %{{.*}}, %{{.*}} : tensor<2x20x8xf32>, tensor<2x8x20xf32> -> tensor<2x20x20xf32>
# CHECK: tf.softmax %{{.*}} axis 2 : tensor<2x20x20xf32>

def attention_layer(x, out, key) {          # x: [batch, channels, time]
  let q = conv1d(x, key, kernel: 1, bias: false)
  let k = conv1d(x, key, kernel: 1, bias: false)
  let v = conv1d(x, out, kernel: 1, bias: false)
  let a = softmax(transpose(q, [0, 2, 1]) @ k, axis: -1)
  return transpose(a @ transpose(v, [0, 2, 1]), [0, 2, 1])
}

# Defs may come after their use, and call each other.
model fleuret {
  input x: f32[batch, 1, 20]
  input y: f32[batch, 1, 20]
  let h = relu(conv1d(x, 16, kernel: 5, padding: 2))
  h = h + attention_layer(h, 16, 8)
  h = h + attention_layer(h, 16, 8)
  h = h + attention_layer(h, key: 8, out: 16, name: "attn")
  h = transpose(block(transpose(h, [0, 2, 1])), [0, 2, 1])
  let p = conv1d(h, 1, kernel: 5, padding: 2)
  loss mse(p, y)
  output p
}

def inner(x) {
  return layer_norm(linear(x, 16))
}

def block(x) {
  let y = inner(x)
  return inner(y)
}
