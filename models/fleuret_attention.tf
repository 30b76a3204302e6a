# The CNN+attention model of the blog post: the CNN with its third
# convolution replaced by François Fleuret's attention layer.
def attention_layer(x, out, key) {          # x: [batch, channels, time]
  let q = conv1d(x, key, kernel: 1, bias: false)
  let k = conv1d(x, key, kernel: 1, bias: false)
  let v = conv1d(x, out, kernel: 1, bias: false)
  let a = softmax(transpose(q, [0, 2, 1]) @ k, axis: -1)
  return transpose(a @ transpose(v, [0, 2, 1]), [0, 2, 1])
}

model fleuret_attention {
  param length = 100
  param channels = 64

  input input: f32[batch, 1, length]
  input target: f32[batch, 1, length]

  let h = relu(conv1d(input, channels, kernel: 5, padding: 2))
  h = relu(conv1d(h, channels, kernel: 5, padding: 2))
  h = relu(attention_layer(h, channels, 96))
  h = relu(conv1d(h, channels, kernel: 5, padding: 2))
  let prediction = conv1d(h, 1, kernel: 5, padding: 2)

  loss mse(prediction, target)
  output prediction
}

train fleuret_attention {
  # 25,000 generated sequences, 20% of them held out for validation (the
  # blog's RandomSplitter), 1,000 for test; normalised by the training mean
  # and standard deviation.
  data fleuret_sequences(train: 20000, val: 5000, test: 1000)
  batch 128
  epochs 50
  optimizer adam(lr: 1e-3)
  seed 42
}
