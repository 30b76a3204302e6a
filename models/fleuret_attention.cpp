// The CNN+attention model of the blog post (get_model_attention(ks=5)): the
// CNN with its third convolution replaced by François Fleuret's attention
// layer (1x1 convolutions for Q, K (96 channels) and V (64), no biases,
// softmax over keys, no scaling, no residual).
// Twin of models/fleuret_attention.tf.
#include "compiler/dsl/ModelRegistry.h"

using namespace tfc;

/// The blog's AttentionLayer on x [batch, channels, time].
static Tensor attentionLayer(Tensor x, int64_t out, int64_t key) {
  Builder &b = x.builder();
  Builder::Scope scope(b, b.layerName("attention_layer", ""));
  Tensor q = conv1d(x, key, {.kernel = 1, .bias = false});
  Tensor k = conv1d(x, key, {.kernel = 1, .bias = false});
  Tensor v = conv1d(x, out, {.kernel = 1, .bias = false});
  Tensor a = softmax(matmul(transpose(q, {0, 2, 1}), k), -1);
  return transpose(matmul(a, transpose(v, {0, 2, 1})), {0, 2, 1});
}

TFC_MODEL(fleuret_attention, 128) {
  const int64_t length = 100, channels = 64, kernel = 5;
  Tensor x = b.input("input", DType::f32, {b.batch(), 1, length});
  Tensor target = b.input("target", DType::f32, {b.batch(), 1, length});

  Conv1dOptions conv{.kernel = kernel, .padding = kernel / 2};
  Tensor h = relu(conv1d(x, channels, conv));
  h = relu(conv1d(h, channels, conv));
  h = relu(attentionLayer(h, channels, 96));
  h = relu(conv1d(h, channels, conv));
  Tensor prediction = conv1d(h, 1, conv);

  b.loss(mse(prediction, target));
  b.output("prediction", prediction);

  b.train({.data = TrainCall{"fleuret_sequences", {{"train", int64_t{20000}}, {"val", int64_t{5000}},
                                                 {"test", int64_t{1000}}}},
           .batch = 128,
           .epochs = 50,
           .optimizer = TrainCall{"adam", {{"lr", 1e-3}}},
           .seed = 42});
}
