# The feed-forward nonlinearity of encoder and decoder blocks: ReLU by
# default, GELU (the erf form) with activation: "gelu", between linear1 and
# linear2 of every block.
# RUN: tfc compile %s --emit=mlir --batch 2 | FileCheck %s
# RUN: sed 's/, activation: "gelu"//g' %s | tfc compile - --emit=mlir --batch 2 2>&1 | FileCheck %s --check-prefix=RELU
# RUN: sed 's/activation: "gelu"/activation: "swish"/' %s > %t.tf
# RUN: not tfc compile %t.tf --emit=mlir 2>&1 | FileCheck %s --check-prefix=ERR
# CHECK-COUNT-3: tf.gelu
# CHECK-NOT: tf.gelu
# RELU-NOT: tf.gelu
# RELU: tf.relu
# ERR: error: argument 'activation' of 'encoder' must be "relu" or "gelu", got "swish"
model blocks {
  input x: f32[batch, 4, 8]
  let m = encoder(x, layers: 2, heads: 2, activation: "gelu")
  output y = decoder(x, m, heads: 2, activation: "gelu")
}
