// The reverse task of the UvA tutorial 6: reverse a sequence of 16 digits.
// Twin of models/reverse.tf.
#include "compiler/dsl/ModelRegistry.h"

using namespace tfc;

TFC_MODEL(reverse, 128) {
  const int64_t classes = 10, seq = 16, dim = 32;
  Tensor tokens = b.input("tokens", DType::i32, {b.batch(), seq});
  Tensor labels = b.input("labels", DType::i32, {b.batch(), seq});

  Tensor x = linear(one_hot(tokens, classes), dim, {.name = "input_net"});
  x = x + positional_encoding(b, seq, dim);
  x = encoder(x, {.layers = 1, .heads = 1, .ffn = 2 * dim, .dropout = 0.0,
                  .norm = NormPlacement::post});
  x = relu(layer_norm(linear(x, dim)));
  Tensor logits = linear(x, classes, {.name = "output"});

  b.loss(cross_entropy(logits, labels));
  b.metric("accuracy", mean(argmax(logits, -1) == labels));
  b.output("logits", logits);

  b.train({.data = TrainCall{"reverse_sequences", {{"classes", int64_t{10}}, {"seq", int64_t{16}},
                                                 {"train", int64_t{50000}}, {"val", int64_t{1000}},
                                                 {"test", int64_t{10000}}}},
           .batch = 128,
           .epochs = 10,
           .optimizer = TrainCall{"adam", {{"lr", 5e-4}}},
           .schedule = TrainCall{"cosine_warmup", {{"warmup", int64_t{50}}}},
           .clipGradNorm = 5.0,
           .seed = 42});
}
