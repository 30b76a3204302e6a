# `generate logits from tokens` builds the model twice more from its code, at
# batch 1: the prefill (the whole sequence, returning each self-attention's
# key and value caches) and the decode step (one token at a position: the
# positional encoding's row, the causal mask's row, the caches written at
# the position and attended over). tf-entry-points makes them the entries
# `prefill` and `decode`; `tfc compile -o` links them (`MODEL generate`).
# RUN: tfc compile %s --emit=mlir | FileCheck %s
# RUN: tfc compile %s --emit=mlir | tf-opt --tf-entry-points | FileCheck %s --check-prefix=ENTRY
# RUN: rm -f %t.exe && tfc compile %s -o %t.exe && %t.exe info | FileCheck %s --check-prefix=INFO

# CHECK: func.func @lm(%{{.*}}: tensor<4x6xi32> {tf.input = "tokens"}
# CHECK-SAME: attributes {tf.batch = 4 : i64}
# CHECK: func.func @lm_prefill(%{{.*}}: tensor<1x6xi32> {tf.input = "tokens"}
# CHECK-SAME: -> (tensor<1x2x6x4xf32> {tf.kv_cache = "encoder.0.self_attn.k"}, tensor<1x2x6x4xf32> {tf.kv_cache = "encoder.0.self_attn.v"}, tensor<1x6x11xf32> {tf.output = "logits"})
# CHECK-SAME: attributes {tf.generation = "prefill"}
# CHECK: func.func @lm_decode(%{{.*}}: tensor<1x1xi32> {tf.input = "tokens"}
# CHECK-SAME: tensor<i32> {tf.position}
# CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<1x2x6x4xf32> {tf.kv_cache = "encoder.0.self_attn.k"}
# CHECK-SAME: -> (tensor<1x2x6x4xf32> {tf.kv_cache = "encoder.0.self_attn.k"}, tensor<1x2x6x4xf32> {tf.kv_cache = "encoder.0.self_attn.v"}, tensor<1x1x11xf32> {tf.output = "logits"})
# CHECK-SAME: attributes {tf.generation = "decode"}
# The positional encoding's row at the position:
# CHECK: tf.gather %{{.*}}, %{{.*}} : tensor<6x8xf32>, tensor<1xi32> -> tensor<1x8xf32>
# The new key goes to the position's row of the cache:
# The causal mask's row: key positions up to the position.
# CHECK: tf.compare le, %{{.*}}, %{{.*}} : tensor<6xi32>
# CHECK: tf.compare eq, %{{.*}}, %{{.*}} : tensor<6xi32>
# CHECK: tf.select %{{.*}}, %{{.*}}, %[[K]] : tensor<1x2x6x4xi1>, tensor<1x2x6x4xf32>

# ENTRY: func.func @prefill(
# ENTRY-SAME: tfc.abi = {args = [{kind = "input", name = "tokens"}, {kind = "param", name = "embedding.weight"}
# ENTRY-SAME: results = [{kind = "kv_cache", name = "encoder.0.self_attn.k"}, {kind = "kv_cache", name = "encoder.0.self_attn.v"}, {kind = "output", name = "logits"}]
# ENTRY: func.func @decode(
# ENTRY-SAME: tfc.abi = {args = [{kind = "input", name = "tokens"}, {kind = "param", name = "embedding.weight"}, {kind = "position", name = "position"}
# ENTRY-SAME: {kind = "kv_cache", name = "encoder.0.self_attn.k"}
# ENTRY-SAME: results = [{kind = "kv_cache", name = "encoder.0.self_attn.k"}, {kind = "kv_cache", name = "encoder.0.self_attn.v"}, {kind = "output", name = "logits"}]
# The labels only feed the loss: neither entry reads them.
# ENTRY-NOT: name = "labels"{{.*}}tfc.entry = "decode"

# INFO: generates: from 'tokens', up to 6 tokens, with 2 key and value caches (`generate --prompt ...`)
# INFO: prefill: peak of intermediate buffers
# INFO: decode: peak of intermediate buffers

model lm {
  input tokens: i32[batch, 6]
  input labels: i32[batch, 6]
  let x = embedding(tokens, 11, 8) + positional_encoding(6, 8)
  x = encoder(x, heads: 2, norm: "pre", mask: causal_mask(6))
  let logits = linear(x, 11)
  loss cross_entropy(logits, labels)
  output logits
  generate logits from tokens
}

train lm {
  batch 4
}
