# A small GPT-style model that generates (GenerateTest): learned positions
# indexed by arange(seq), and the output projection tied to the token
# embedding (one parameter, used twice).
model tiny_gpt {
  param vocab = 16
  param seq = 8
  param dim = 16

  input tokens: i32[batch, seq]
  input targets: i32[batch, seq]

  let wte = parameter([vocab, dim], init: normal(0.02), name: "wte", decay: false)
  let x = embedding(tokens, vocab, dim, table: wte) + embedding(arange(seq), seq, dim, name: "wpe")
  x = encoder(x, layers: 2, heads: 2, ffn: 32, norm: "pre", mask: causal_mask(seq),
              activation: "gelu")
  let logits = x @ transpose(wte, [1, 0])

  loss cross_entropy(logits, targets)
  output logits
  generate logits from tokens
}

train tiny_gpt {
  batch 4
}
