# The reverse task of the UvA tutorial: reverse a sequence of digits.
model reverse {
  param classes = 10
  param seq = 16
  param dim = 32

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  let x = linear(one_hot(tokens, classes), dim, name: "input_net")
  x = x + positional_encoding(seq, dim)
  x = encoder(x, layers: 1, heads: 1, ffn: 2 * dim, dropout: 0.0, norm: "post")
  x = relu(layer_norm(linear(x, dim)))
  let logits = linear(x, classes, name: "output")

  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
}

train reverse {
  data reverse_sequences(classes: 10, seq: 16, train: 50000, val: 1000, test: 10000)
  batch 128
  epochs 10
  optimizer adam(lr: 5e-4)
  schedule cosine_warmup(warmup: 50)
  clip_grad_norm 5.0
  seed 42
}
