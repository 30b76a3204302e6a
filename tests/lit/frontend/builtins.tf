# Every built-in once, mapped 1:1 to the DSL; the IR must verify in tf-opt.
# RUN: tfc compile %s --emit=mlir --batch 2 | tf-opt | FileCheck %s

# CHECK: tf.param = "embedding.weight"
# CHECK-SAME: tf.param = "enc.0.self_attn.qkv.weight"
# CHECK-SAME: tf.seed
# CHECK-SAME: tf.param = "enc.norm.weight"
# CHECK-SAME: tf.param = "decoder.0.cross_attn.kv.weight"
# CHECK-SAME: tf.param = "decoder.0.norm3.weight"
# CHECK-SAME: tf.param = "mha.q.weight"
# CHECK-SAME: tf.param = "self_attn.qkv.weight"
# CHECK-SAME: tf.param = "ln.weight"
# CHECK-SAME: tf.param = "conv1d.weight"
# CHECK-NOT: tf.param = "conv1d.bias"
# CHECK-SAME: tf.param = "linear.weight"
# CHECK-NOT: tf.param = "linear.bias"
# CHECK: tf.gather
# CHECK: tf.dropout
# CHECK: tf.gelu
# CHECK: tf.tanh
# CHECK: tf.exp
# CHECK: tf.rsqrt
# CHECK: tf.sqrt
# CHECK: tf.log
# CHECK: tf.log_softmax {{.*}} axis 2
# CHECK: tf.reduce_sum {{.*}} [1, 2] : tensor<2x6x8xf32> -> tensor<2xf32>
# CHECK: tf.reduce_max {{.*}} [2] : tensor<2x6x8xf32> -> tensor<2x6xf32>
# CHECK: tf.reduce_mean {{.*}} [0, 1, 2] : tensor<2x6x8xf32> -> tensor<f32>
# CHECK: tf.concat {{.*}} axis 2 : tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x6x16xf32>
# CHECK: tf.cast {{.*}} : tensor<2x6xi32> to tensor<2x6xf32>
# CHECK: tf.slice
# CHECK: tf.or
# CHECK: tf.and
# CHECK: tf.not
# CHECK: tf.select
# CHECK: tf.min
# CHECK: tf.max
# CHECK: tf.cross_entropy
# CHECK: tf.mse

model builtins {
  param vocab = 11
  param seq = 6
  param dim = 8
  input ids: i32[batch, seq]
  input target: i32[batch, seq]

  let e = embedding(ids, vocab, dim) + positional_encoding(seq, dim)
  let m = encoder(e, layers: 1, heads: 2, ffn: 16, dropout: 0.1, norm: "pre",
                  mask: causal_mask(seq), name: "enc")
  let d = decoder(e, m, layers: 1, heads: 2, ffn: 16, dropout: 0.0, norm: "post",
                  mask: causal_mask(seq), memory_mask: causal_mask(seq))
  let c = multi_head_attention(d, heads: 4, memory: m, mask: causal_mask(seq), name: "mha")
  c = multi_head_attention(c, heads: 1)
  c = layer_norm(c, eps: 1e-6, name: "ln")
  let conv = transpose(conv1d(transpose(c, [0, 2, 1]), dim, kernel: 3, padding: 1, bias: false), [0, 2, 1])
  let h = linear(dropout(conv, 0.5), dim, bias: false)
  h = gelu(h) + tanh(h) + exp(h) + log(sqrt(rsqrt(exp(h))))
  h = softmax(h, axis: -1) + log_softmax(h)
  let s = sum(h, axis: [1, 2])
  let mx = max(h, axis: -1)
  let avg = mean(h)
  let r = reshape(h, [batch, -1])
  r = squeeze(unsqueeze(r, axis: 0), axis: 0)
  let cat = concat([h, h], axis: -1)
  let f = float(target)
  let sl = slice(cat, -1, 0, dim)
  let sel = where(logical_not(logical_and(h > 0.0, logical_or(h < 1.0, h >= 0.5))), h, sl)
  sel = maximum(sel, minimum(h, 0.0))
  let logits = linear(sel, vocab)

  loss cross_entropy(logits, target) + mse(f, float(argmax(logits)))
  metric total = avg + mean(s) + mean(mx) + mean(r) + mean(sel)
  metric accuracy = mean(argmax(logits, axis: -1) == target)
  output logits
}
