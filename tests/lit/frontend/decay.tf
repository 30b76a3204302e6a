# decay: on a layer or a parameter is an explicit choice for every parameter
# it makes (tf.decay), which wins over AdamW's default rule (matrices decay;
# vectors and embedding tables, marked tf.no_decay, do not) and over
# decay_all; unset, nothing changes (tests/lit/transforms/adamw-decay*.mlir
# check the optimizer's side).
# RUN: tfc compile %s --emit=mlir | FileCheck %s
# RUN: tfc compile %s --emit=grad | FileCheck %s --check-prefix=GRAD

# CHECK-LABEL: func.func @decay(
# CHECK-SAME: {tf.init = #tf.init<normal, 1.000000e+00>, tf.no_decay, tf.param = "embedding.weight"}
# CHECK-SAME: {tf.decay = true, tf.init = #tf.init<normal, 1.000000e+00>, tf.param = "tok.weight"}
# CHECK-SAME: {tf.decay = false, tf.init = #tf.init<normal, 1.000000e+00>, tf.param = "pos.weight"}
# CHECK-SAME: {tf.decay = false, tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "frozen.weight"}
# CHECK-SAME: {tf.decay = false, tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "frozen.bias"}
# CHECK-SAME: {tf.decay = true, tf.init = #tf.init<ones>, tf.param = "layer_norm.weight"}
# CHECK-SAME: {tf.decay = true, tf.init = #tf.init<zeros>, tf.param = "layer_norm.bias"}
# Every parameter of the encoder, its norms and biases too:
# CHECK-SAME: {tf.decay = true, {{.*}}tf.param = "encoder.0.self_attn.qkv.weight"}
# CHECK-SAME: {tf.decay = true, {{.*}}tf.param = "encoder.0.norm2.bias"}
# CHECK-SAME: {tf.decay = false, tf.init = #tf.init<uniform, 0.8660254037844386>, tf.param = "gate"}
# CHECK-SAME: {tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "head.weight"}
# CHECK-SAME: {tf.init = #tf.init<uniform, 5.000000e-01>, tf.param = "head.bias"}
# CHECK-SAME: -> (
# AdamW's p *= 1 - lr wd: for tok.weight (an embedding, decay: true), the
# layer_norm and every encoder parameter (decay: true) and head.weight (a
# matrix, the default); not for embedding.weight (the default), pos, frozen
# and gate (decay: false), nor head.bias (a vector, the default).
# GRAD-LABEL: func.func @train_step(
# GRAD-NOT: tf.mul %arg2, %{{[0-9]+}} :
# GRAD: tf.mul %arg3, %{{[0-9]+}} : tensor<5x4xf32>
# GRAD-NOT: tf.mul %arg{{[456]}}, %{{[0-9]+}} :
# GRAD: tf.mul %arg7, %{{[0-9]+}} : tensor<4xf32>
# GRAD: tf.mul %arg9, %{{[0-9]+}} : tensor<12x4xf32>
# GRAD: tf.mul %arg20, %{{[0-9]+}} : tensor<4xf32>
# GRAD-NOT: tf.mul %arg21, %{{[0-9]+}} :
# GRAD: tf.mul %arg22, %{{[0-9]+}} : tensor<5x4xf32>
# GRAD-NOT: tf.mul %arg23, %{{[0-9]+}} :
# GRAD-LABEL: func.func @grad_step(
model decay {
  input ids: i32[2, 3]
  input labels: i32[2, 3]
  let x = embedding(ids, 5, 4) + embedding(ids, 5, 4, name: "tok", decay: true)
  x = x + embedding(ids, 5, 4, name: "pos", decay: false)
  x = linear(x, 4, name: "frozen", decay: false)
  x = layer_norm(x, decay: true)
  x = encoder(x, heads: 2, ffn: 4, decay: true)
  x = x @ parameter([4, 4], init: xavier, name: "gate", decay: false)
  loss cross_entropy(linear(x, 5, name: "head"), labels)
}

train decay {
  optimizer adamw(lr: 1e-3)
}
