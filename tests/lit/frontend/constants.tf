# Constant arithmetic on params, with the usual precedence; the values show
# up as the input shapes.
# RUN: tfc compile %s --emit=mlir | FileCheck %s

# CHECK: func.func @constants(%{{.*}}: tensor<7x1x9x4x16x2x3x5xf32> {tf.input = "x"}
# CHECK-SAME: tensor<4x2xf32> {tf.input = "y"}

model constants {
  param dim = 32
  param heads = 8
  param ffn = 2 * dim             # 64
  param head_dim = dim / heads    # an exact quotient stays an integer: 4
  param half = float(dim) / 64    # 0.5, a number
  param flag = 1 + 2 * 3 == 7     # comparisons bind loosest
  param name = "enc"
  input x: f32[1 + 2 * 3, (1 + 2) / 3, 3 * 3, head_dim, ffn / 4, -(-2), 10 - 4 - 3, 2 - -3]
  input y: f32[head_dim, 2]
  output x
}
