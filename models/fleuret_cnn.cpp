// The plain CNN of the blog post on François Fleuret's toy sequences
// (get_model_cnn(ks=5)): five Conv1d layers of kernel 5, 64 channels, ReLU
// between them, mapping a noisy sequence [1 x 100] to its target.
// Twin of models/fleuret_cnn.tf.
#include "compiler/dsl/ModelRegistry.h"

using namespace tfc;

TFC_MODEL(fleuret_cnn, 128) {
  const int64_t length = 100, channels = 64, kernel = 5;
  Tensor x = b.input("input", DType::f32, {b.batch(), 1, length});
  Tensor target = b.input("target", DType::f32, {b.batch(), 1, length});

  Conv1dOptions conv{.kernel = kernel, .padding = kernel / 2};
  Tensor h = relu(conv1d(x, channels, conv));
  for (int i = 0; i < 3; ++i)
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
