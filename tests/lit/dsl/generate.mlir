// RUN: tfc-dsl-examples --model causal_lm | FileCheck %s

// A C++ model's b.generate(logits, tokens) gives what the .tf statement
// gives: the model, then its prefill and decode functions at batch 1.
// CHECK-LABEL: func.func @causal_lm(%{{.*}}: tensor<2x5xi32> {tf.input = "tokens"}
// CHECK-SAME: attributes {tf.batch = 2 : i64}
// CHECK-LABEL: func.func @causal_lm_prefill(%{{.*}}: tensor<1x5xi32> {tf.input = "tokens"}
// CHECK-SAME: -> (tensor<1x2x5x2xf32> {tf.kv_cache = "encoder.0.self_attn.k"}, tensor<1x2x5x2xf32> {tf.kv_cache = "encoder.0.self_attn.v"}, tensor<1x5x7xf32> {tf.output = "logits"})
// CHECK-SAME: attributes {tf.generation = "prefill"}
// CHECK-LABEL: func.func @causal_lm_decode(%{{.*}}: tensor<1x1xi32> {tf.input = "tokens"}
// CHECK-SAME: tensor<i32> {tf.position}
// CHECK-SAME: tensor<1x2x5x2xf32> {tf.kv_cache = "encoder.0.self_attn.k"}
// CHECK-SAME: -> (tensor<1x2x5x2xf32> {tf.kv_cache = "encoder.0.self_attn.k"}, tensor<1x2x5x2xf32> {tf.kv_cache = "encoder.0.self_attn.v"}, tensor<1x1x7xf32> {tf.output = "logits"})
// CHECK-SAME: attributes {tf.generation = "decode"}
