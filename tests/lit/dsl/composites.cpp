// Tiny models, one per DSL composite, whose IR the lit tests in this folder
// check with FileCheck: `tfc-dsl-examples --model NAME`.
#include "compiler/dsl/ModelRegistry.h"

using namespace tfc;

TFC_MODEL(linear_rank3, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 5, 8});
  b.output("y", linear(x, 4));
  b.output("z", linear(x, 3, {.bias = false, .name = "proj"}));
}

TFC_MODEL(linear_rank2, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 8});
  b.output("y", linear(x, 4));
}

TFC_MODEL(layer_norm, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 5, 8});
  b.output("y", layer_norm(x, {.epsilon = 1e-6}));
}

TFC_MODEL(conv1d, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 3, 20});
  b.output("y", conv1d(x, 4, {.kernel = 5, .padding = 2}));
  b.output("z", conv1d(x, 6, {.kernel = 1, .bias = false, .name = "pointwise"}));
}

TFC_MODEL(embedding, 2) {
  Tensor ids = b.input("ids", DType::i32, {b.batch(), 7});
  b.output("y", embedding(ids, 11, 4));
}

TFC_MODEL(positional_encoding, 1) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 3, 4});
  b.output("y", x + positional_encoding(b, 3, 4));
}

TFC_MODEL(sdpa_mask, 2) {
  Tensor q = b.input("q", DType::f32, {b.batch(), 4, 8});
  Tensor mask = b.input("mask", DType::boolean, {4, 4});
  Attention a = scaled_dot_product(q, q, q, mask);
  b.output("values", a.values);
  b.output("weights", a.weights);
}

TFC_MODEL(mha_self, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 5, 8});
  Tensor weights;
  b.output("y", multi_head_attention(x, {.heads = 2, .weights = &weights}));
  b.output("weights", weights);
}

TFC_MODEL(mha_self_causal, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 4, 8});
  b.output("y", multi_head_attention(x, {.heads = 2, .mask = causal_mask(b, 4)}));
}

TFC_MODEL(mha_cross_masks, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 3, 8});
  Tensor m = b.input("m", DType::f32, {b.batch(), 5, 8});
  Tensor mask2 = b.input("mask2", DType::boolean, {3, 5});
  Tensor mask3 = b.input("mask3", DType::boolean, {b.batch(), 3, 5});
  Tensor mask4 = b.input("mask4", DType::boolean, {b.batch(), 1, 3, 5});
  b.output("y2", multi_head_attention(x, {.heads = 2, .memory = m, .mask = mask2, .name = "a2"}));
  b.output("y3", multi_head_attention(x, {.heads = 2, .memory = m, .mask = mask3, .name = "a3"}));
  Tensor weights;
  b.output("y4", multi_head_attention(x, {.heads = 2, .memory = m, .mask = mask4, .name = "a4",
                                          .weights = &weights}));
  b.output("weights", weights);
}

TFC_MODEL(encoder_post, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 5, 8});
  b.output("y", encoder(x, {.layers = 2, .heads = 2, .ffn = 16}));
}

TFC_MODEL(encoder_pre, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 5, 8});
  b.output("y", encoder(x, {.layers = 1, .heads = 2, .dropout = 0.1,
                            .norm = NormPlacement::pre}));
}

TFC_MODEL(decoder, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 4, 8});
  Tensor m = b.input("memory", DType::f32, {b.batch(), 6, 8});
  b.output("y", decoder(x, m, {.layers = 1, .heads = 2, .ffn = 16,
                               .mask = causal_mask(b, 4)}));
}

TFC_MODEL(causal_mask, 1) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 3, 3});
  b.output("mask", causal_mask(b, 3));
  b.output("masked", where(causal_mask(b, 3), x, b.fill(0.0, {3, 3})));
}

TFC_MODEL(dropout, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 6});
  b.output("y", dropout(dropout(x, 0.25), 0.5));
  b.output("same", dropout(x, 0.0));
}

TFC_MODEL(functions, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 3});
  Tensor y = b.input("y", DType::f32, {3});
  Tensor labels = b.input("labels", DType::i32, {b.batch()});
  b.output("sum", x + y);
  b.output("scaled", 2.0 * x);
  b.metric("accuracy", mean(argmax(x, -1) == labels));
  b.output("less", x < y);
}

// A build that fails: the program reports the diagnostic and exits 1.
TFC_MODEL(bad_heads, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 5, 6});
  b.output("y", multi_head_attention(x, {.heads = 4}));
}

TFC_MODEL(bad_broadcast, 2) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 3});
  Tensor y = b.input("y", DType::f32, {4});
  b.output("y", x + y);
}

// A causal language model that generates (Builder::generate): the module
// holds its prefill and decode functions too.
TFC_MODEL(causal_lm, 2) {
  Tensor tokens = b.input("tokens", DType::i32, {b.batch(), 5});
  Tensor x = embedding(tokens, 7, 4) + positional_encoding(b, 5, 4);
  x = encoder(x, {.heads = 2, .norm = NormPlacement::pre, .mask = causal_mask(b, 5)});
  Tensor logits = linear(x, 7);
  b.output("logits", logits);
  b.generate(logits, tokens);
}
