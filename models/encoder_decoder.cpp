// The step-by-step book's norm-first encoder-decoder Transformer on the
// square-corners task: from the first two corners of a square (x, y points)
// predict the last two. d_model 6, 3 heads, feed-forward 10, 2 + 2 layers,
// dropout 0.1, one Linear(2 -> 6) projection shared by source and target,
// the book's positional encoding (x * sqrt(d_model) + PE), a causal mask on
// the decoder, Linear(6 -> 2) out, MSE. The decoder input is the target
// shifted right by one, starting from the last source corner (teacher
// forcing, as the book trains).
// Twin of models/encoder_decoder.tf.
#include "compiler/dsl/ModelRegistry.h"

#include <cmath>

using namespace tfc;

TFC_MODEL(encoder_decoder, 16) {
  const int64_t points = 2, features = 2, dim = 6;
  Tensor source = b.input("source", DType::f32, {b.batch(), points, features});
  Tensor target = b.input("target", DType::f32, {b.batch(), points, features});

  Tensor shifted = concat({slice(source, 1, points - 1, points),
                           slice(target, 1, 0, points - 1)},
                          1);
  // One projection for both sequences (the book's self.proj): project them
  // stacked along the batch, then split.
  Tensor projected = linear(concat({source, shifted}, 0), dim, {.name = "proj"}) *
                     std::sqrt(double(dim));
  Tensor both = projected + positional_encoding(b, points, dim);
  // Statement order follows models/encoder_decoder.tf, so the twins build
  // identical IR.
  Tensor memory = encoder(slice(both, 0, 0, b.batch()),
                          {.layers = 2, .heads = 3, .ffn = 10, .dropout = 0.1,
                           .norm = NormPlacement::pre});
  Tensor tgt = slice(both, 0, b.batch(), 2 * b.batch());
  Tensor causal = causal_mask(b, points);
  Tensor states = decoder(tgt, memory,
                          {.layers = 2, .heads = 3, .ffn = 10, .dropout = 0.1,
                           .norm = NormPlacement::pre, .mask = causal});
  Tensor prediction = linear(states, features, {.name = "linear"});

  b.loss(mse(prediction, target));
  b.output("prediction", prediction);

  b.train({.data = TrainCall{"square_corners", {{"train", int64_t{256}}, {"val", int64_t{128}}}},
           .batch = 16,
           .epochs = 50,
           .optimizer = TrainCall{"adam", {{"lr", 0.01}}},
           .seed = 42});
}
