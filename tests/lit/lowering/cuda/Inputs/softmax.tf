# A GEMM, row reductions (softmax's max and sum) and elementwise math
# (exp, tanh, log): what tfc compile --target=cuda makes of each, for
# emit-gpu.tf and emit-ptx.tf.
model softmax {
  input x: f32[batch, 4]
  output y = softmax(linear(x, 3, name: "l"))
  output z = log(exp(tanh(x)) + 1.0)
}
