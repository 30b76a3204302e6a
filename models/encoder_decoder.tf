# The step-by-step book's norm-first encoder-decoder on the square-corners
# task: from the first two corners of a square predict the last two.
model encoder_decoder {
  param points = 2
  param features = 2
  param dim = 6
  param sqrt_dim = 2.449489742783178   # sqrt(dim)

  input source: f32[batch, points, features]
  input target: f32[batch, points, features]

  # Teacher forcing: the decoder reads the target shifted right by one,
  # starting from the last source corner.
  let shifted = concat([slice(source, 1, points - 1, points), slice(target, 1, 0, points - 1)], axis: 1)
  # One projection for both sequences (the book's self.proj), then the
  # book's positional encoding: x * sqrt(d_model) + PE.
  let both = linear(concat([source, shifted], axis: 0), dim, name: "proj") * sqrt_dim + positional_encoding(points, dim)
  let memory = encoder(slice(both, 0, 0, batch), layers: 2, heads: 3, ffn: 10, dropout: 0.1, norm: "pre")
  let states = decoder(slice(both, 0, batch, 2 * batch), memory, layers: 2, heads: 3, ffn: 10, dropout: 0.1, norm: "pre", mask: causal_mask(points))
  let prediction = linear(states, features, name: "linear")

  loss mse(prediction, target)
  output prediction
}

train encoder_decoder {
  # The book: 256 training squares (seed 13), 128 for validation (seed 19).
  data square_corners(train: 256, val: 128)
  batch 16
  epochs 50
  optimizer adam(lr: 0.01)
  seed 42
}
