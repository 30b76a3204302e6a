# The plain CNN of the blog post on François Fleuret's toy sequences:
# get_model_cnn(ks=5), five Conv1d layers of kernel 5 and 64 channels.
model fleuret_cnn {
  param length = 100
  param channels = 64

  input input: f32[batch, 1, length]
  input target: f32[batch, 1, length]

  let h = relu(conv1d(input, channels, kernel: 5, padding: 2))
  h = relu(conv1d(h, channels, kernel: 5, padding: 2))
  h = relu(conv1d(h, channels, kernel: 5, padding: 2))
  h = relu(conv1d(h, channels, kernel: 5, padding: 2))
  let prediction = conv1d(h, 1, kernel: 5, padding: 2)

  loss mse(prediction, target)
  output prediction
}

train fleuret_cnn {
  # 25,000 generated sequences, 20% of them held out for validation (the
  # blog's RandomSplitter), 1,000 for test; normalised by the training mean
  # and standard deviation.
  data fleuret_sequences(train: 20000, val: 5000, test: 1000)
  batch 128
  epochs 50
  optimizer adam(lr: 1e-3)
  seed 42
}
