# --attention-maps returns each attention layer's weights, named by the layer.
# RUN: tfc compile %s --emit=mlir --attention-maps | FileCheck %s
# RUN: tfc compile %s --emit=mlir | FileCheck %s --check-prefix=PLAIN

# CHECK: -> (tensor<3x2x5x5xf32> {tf.attention = "enc.0.self_attn"}, tensor<3x1x5x5xf32> {tf.attention = "mha"}, tensor<3x5x8xf32> {tf.output = "y"})
# PLAIN: -> (tensor<3x5x8xf32> {tf.output = "y"})
model m {
  input x: f32[3, 5, 8]
  let h = encoder(x, heads: 2, name: "enc")
  output y = multi_head_attention(h, name: "mha")
}
