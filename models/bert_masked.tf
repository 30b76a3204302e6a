# A BERT-style masked-token model (issue 29's example): a post-norm encoder
# with GELU reads sequences of which 15% of the tokens are masked and
# predicts the masked ones. The sequences (masked_tokens) count, copy or
# mirror, so a masked token is known from its context; the labels are -100
# where nothing is masked, and the loss and accuracy count only the rest.
model bert_masked {
  param vocab = 32
  param seq = 32
  param dim = 64

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  let x = embedding(tokens, vocab, dim, init: normal(0.02))
  x = x + embedding(arange(seq), seq, dim, init: normal(0.02), name: "positions")
  x = layer_norm(x, eps: 1e-12, name: "embed_norm")
  x = encoder(x, layers: 3, heads: 4, ffn: 4 * dim, dropout: 0.1, norm: "post",
              activation: "gelu")
  # The masked-LM head: a dense layer with GELU and a norm, then the vocabulary.
  let h = layer_norm(gelu(linear(x, dim, name: "mlm_dense")), eps: 1e-12, name: "mlm_norm")
  let logits = linear(h, vocab, name: "mlm_output")

  loss cross_entropy(logits, labels, ignore_index: -100)
  let masked = float(labels >= 0)
  metric masked_accuracy = sum(float(argmax(logits, axis: -1) == labels) * masked) / maximum(sum(masked), 1.0)
  output logits
}

train bert_masked {
  data masked_tokens(vocab: 32, seq: 32, mask_rate: 0.15, train: 20000, val: 1000, test: 1000)
  batch 64
  epochs 12
  optimizer adamw(lr: 1e-3, weight_decay: 0.01)
  schedule cosine_warmup(warmup: 200)
  clip_grad_norm 1.0
  seed 1
}
