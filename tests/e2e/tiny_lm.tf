# A small causal language model that generates (GenerateTest): embeddings
# and sinusoidal positions, two pre-norm blocks of causal self-attention.
model tiny_lm {
  param vocab = 16
  param seq = 8
  param dim = 16

  input tokens: i32[batch, seq]
  input targets: i32[batch, seq]

  let x = embedding(tokens, vocab, dim) + positional_encoding(seq, dim)
  x = encoder(x, layers: 2, heads: 2, ffn: 32, norm: "pre", mask: causal_mask(seq),
              activation: "gelu")
  let logits = linear(x, vocab, name: "head")

  loss cross_entropy(logits, targets)
  output logits
  generate logits from tokens
}

train tiny_lm {
  data reverse_sequences(classes: 16, seq: 8, train: 256, val: 64, test: 64)
  batch 4
  epochs 1
  optimizer adam(lr: 1e-3)
}
