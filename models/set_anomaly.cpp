// Set anomaly detection of the UvA tutorial 6: which of 10 feature vectors
// (ResNet34 features of CIFAR-100 images, 512 wide) belongs to another class.
// No positional encoding: the model is permutation-equivariant over the set.
// Twin of models/set_anomaly.tf.
#include "compiler/dsl/ModelRegistry.h"

using namespace tfc;

TFC_MODEL(set_anomaly, 64) {
  const int64_t set = 10, features = 512, dim = 256;
  Tensor x = b.input("features", DType::f32, {b.batch(), set, features});
  Tensor labels = b.input("labels", DType::i32, {b.batch()});

  // input_net: Dropout(input_dropout) then Linear(512 -> 256).
  x = linear(dropout(x, 0.1), dim, {.name = "input_net"});
  x = encoder(x, {.layers = 4, .heads = 4, .ffn = 2 * dim, .dropout = 0.1,
                  .norm = NormPlacement::post});
  // output_net: Linear, LayerNorm, ReLU, Dropout, Linear(256 -> 1).
  x = dropout(relu(layer_norm(linear(x, dim))), 0.1);
  Tensor logits = squeeze(linear(x, 1, {.name = "output"}), -1);

  b.loss(cross_entropy(logits, labels));
  b.metric("accuracy", mean(argmax(logits, -1) == labels));
  b.output("logits", logits);

  b.train({.data = TrainCall{"set_anomaly", {{"classes", int64_t{100}}, {"features", int64_t{512}},
                                           {"set", int64_t{10}}, {"train", int64_t{45000}},
                                           {"val", int64_t{5000}}, {"test", int64_t{10000}}}},
           .batch = 64,
           .epochs = 100,
           .optimizer = TrainCall{"adam", {{"lr", 5e-4}}},
           .schedule = TrainCall{"cosine_warmup", {{"warmup", int64_t{100}}}},
           .clipGradNorm = 2.0,
           .seed = 42});
}
