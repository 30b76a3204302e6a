# Reverse a sequence of 8 digits with a 2-layer pre-norm encoder: the .tf twin
# of reverse8.cpp (both build the same IR; tests/cmake checks it).

# A user layer: its parameters are named under the call (classifier.*).
def classifier(x, hidden, classes) {
  let h = gelu(linear(layer_norm(x), hidden))
  return linear(h, classes, name: "out")
}

model reverse8 {
  param classes = 10
  param seq = 8
  param dim = 32

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  # reverse8.cpp writes this embedding out with a raw parameter (b.param).
  let x = embedding(tokens, classes, dim, name: "embed") + positional_encoding(seq, dim)
  x = encoder(x, layers: 2, heads: 2, ffn: 64, norm: "pre")
  let logits = classifier(x, 64, classes)

  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
}

train reverse8 {
  data reverse_sequences(classes: 10, seq: 8, train: 10000, val: 500, test: 1000)
  batch 64
  epochs 3
  optimizer adam(lr: 2e-3)
  schedule cosine_warmup(warmup: 50)
  seed 1
}
