# A GPT-style byte-level language model (issue 29's example): the bytes of
# the licence texts every Debian system has (/usr/share/common-licenses),
# three pre-norm blocks of causal self-attention with GELU, learned
# positions, and the output projection tied to the byte embedding. It
# generates text: ./gpt_bytes generate --prompt "..." (docs/generation.md).
model gpt_bytes {
  param seq = 128
  param dim = 128
  param heads = 4
  param layers = 3

  input tokens: i32[batch, seq]
  input targets: i32[batch, seq]

  # One table of 256 byte embeddings, read by the input and by the output.
  let wte = parameter([256, dim], init: normal(0.02), name: "wte", decay: false)
  let x = embedding(tokens, 256, dim, table: wte)
  x = x + embedding(arange(seq), seq, dim, init: normal(0.02), name: "wpe")
  x = dropout(x, 0.1)
  x = encoder(x, layers: layers, heads: heads, ffn: 4 * dim, dropout: 0.1, norm: "pre",
              mask: causal_mask(seq), activation: "gelu")
  let logits = x @ transpose(wte, [1, 0])

  loss cross_entropy(logits, targets)
  # The loss is nats a byte: in bits, the number compression is measured in.
  metric bits_per_byte = cross_entropy(logits, targets) / 0.6931471805599453
  output logits
  generate logits from tokens
}

train gpt_bytes {
  data text_bytes(seq: 128)
  batch 32
  epochs 20
  optimizer adamw(lr: 2e-3, weight_decay: 0.1)
  schedule cosine_warmup(warmup: 100)
  clip_grad_norm 1.0
  best min(bits_per_byte)
  seed 1
}
