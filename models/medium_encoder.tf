# Issue 28's medium encoder: the size where a GPU step is decided by its
# kernels, not by its launches (about 1.07 TFLOP a train step, 20.2 M
# parameters). Tokens of a 1,000-word vocabulary, sequence 256, model dim 512,
# 8 heads, 6 post-norm layers, FFN 2,048, dropout 0.1, sinusoidal positions, a
# per-position classifier over the vocabulary (the output net of reverse.tf:
# Linear, LayerNorm, ReLU, Linear); the input is reverse.tf's too (a one-hot
# vector through a linear layer, as the issue's peers measured it).
#
# Task: the reverse task of reverse.tf at this size (the built-in
# reverse_sequences dataset with classes 1000 and seq 256): every position's
# label is the token at the mirrored position, so each position must attend
# to another one far away.
model medium_encoder {
  param classes = 1000
  param seq = 256
  param dim = 512

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  let x = linear(one_hot(tokens, classes), dim, name: "input_net")
  x = x + positional_encoding(seq, dim)
  x = encoder(x, layers: 6, heads: 8, ffn: 2048, dropout: 0.1, norm: "post")
  x = relu(layer_norm(linear(x, dim)))
  let logits = linear(x, classes, name: "output")

  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
}

train medium_encoder {
  data reverse_sequences(classes: 1000, seq: 256, train: 32000, val: 1000, test: 2000)
  batch 32
  epochs 5
  optimizer adam(lr: 2e-4)
  schedule cosine_warmup(warmup: 400)
  clip_grad_norm 5.0
  seed 42
}
