# The feed-forward nonlinearity of encoder and decoder blocks: ReLU by
# default, GELU (the erf form) with activation: "gelu", between linear1 and
# linear2 of every block; SwiGLU with activation: "swiglu": linear1 makes
# twice the width (ffn 16 -> 32 features), silu of the first half (built of
# tanh) gates the second.
# RUN: tfc compile %s --emit=mlir --batch 2 | FileCheck %s
# RUN: sed 's/, activation: "gelu"//g' %s | tfc compile - --emit=mlir --batch 2 2>&1 | FileCheck %s --check-prefix=RELU
# RUN: sed 's/activation: "gelu"/activation: "swiglu"/g' %s | tfc compile - --emit=mlir --batch 2 2>&1 | FileCheck %s --check-prefix=SWIGLU
# RUN: sed 's/activation: "gelu"/activation: "swish"/' %s > %t.tf
# RUN: not tfc compile %t.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=ERR
# CHECK-COUNT-3: tf.gelu
# CHECK-NOT: tf.gelu
# RELU-NOT: tf.gelu
# RELU: tf.relu
# SWIGLU: tensor<32x8xf32> {{.*}}tf.param = "encoder.0.linear1.weight"
# SWIGLU-SAME: tensor<8x16xf32> {{.*}}tf.param = "encoder.0.linear2.weight"
# SWIGLU-NOT: tf.relu
# SWIGLU-NOT: tf.gelu
# SWIGLU: tf.slice %{{.*}} start [0, 0, 0] limit [2, 4, 16] {{.*}}: tensor<2x4x32xf32> -> tensor<2x4x16xf32>
# SWIGLU: tf.slice %{{.*}} start [0, 0, 16] limit [2, 4, 32] {{.*}}: tensor<2x4x32xf32> -> tensor<2x4x16xf32>
# SWIGLU: tf.tanh
# ERR: error: argument 'activation' of 'encoder' must be "relu", "gelu" or "swiglu", got "swish"
model blocks {
  input x: f32[batch, 4, 8]
  let m = encoder(x, layers: 2, heads: 2, activation: "gelu")
  output y = decoder(x, m, heads: 2, activation: "gelu")
}
