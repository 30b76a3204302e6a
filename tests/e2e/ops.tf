# Every built-in, each reaching an output, so that compiled code can be
# compared with the reference interpreter op by op (CompiledModelTest).
# Outputs lead with the batch, so predict also exercises batching.
model ops {
  param vocab = 11
  param seq = 6
  param dim = 8
  input ids: i32[batch, seq]
  input x: f32[batch, seq, dim]
  input mask: bool[batch, seq]

  let e = embedding(ids, vocab, dim) + positional_encoding(seq, dim)
  output encoded = encoder(e, layers: 1, heads: 2, ffn: 16, dropout: 0.1, norm: "pre",
                           mask: causal_mask(seq), name: "enc")
  output decoded = decoder(x, encoded, layers: 1, heads: 2, ffn: 16, dropout: 0.0, norm: "post",
                           mask: causal_mask(seq), memory_mask: causal_mask(seq))
  output attended = multi_head_attention(decoded, heads: 4, memory: encoded, name: "mha")
  let values, weights = scaled_dot_product(x, x, x, mask: causal_mask(seq))
  output values = values
  output weights = weights
  output normed = layer_norm(x, eps: 1e-6, name: "ln")
  output conv = conv1d(transpose(x, [0, 2, 1]), 4, kernel: 3, padding: 1, name: "conv")
  output unary = gelu(x) + tanh(x) + exp(x) - x * 2.0 / 3.0 + relu(-x)
  output logs = log(sqrt(exp(x) + 1.0)) + rsqrt(exp(x))
  output soft = softmax(x, axis: 1)
  output log_soft = log_softmax(x)
  output sums = sum(x, axis: [1, 2])
  output maxes = max(x, axis: -1)
  output means = mean(x, axis: 1)
  output best = argmax(x, axis: -1)
  output flat = squeeze(unsqueeze(reshape(x, [batch, -1]), axis: 0), axis: 0)
  output cat = concat([x, slice(x, -1, 2, 5)], axis: -1)
  output hot = one_hot(ids, vocab) * 2.0 + unsqueeze(float(ids), axis: -1)
  output picked = where(logical_not(logical_and(x > 0.0, logical_or(x < 1.0, x >= 0.5))),
                        x, maximum(x, minimum(x, 0.25)))
  output masked = where(mask, float(ids), -1.0)
  output dropped = dropout(x, 0.5)
}

# Scalar results: loss-like reductions over the whole batch.
model scalars {
  input x: f32[batch, 5]
  input y: f32[batch, 5]
  input labels: i32[batch]
  output total = mean(x)
  output error = mse(x, y)
  output xent = cross_entropy(x, labels)
  output accuracy = mean(argmax(x, axis: -1) == labels)
}
