//===- TrainConfig.h - a model's `train` settings -----------------------===//
//
//   train reverse {
//     data reverse_sequences(classes: 10, seq: 16, train: 50000)
//     batch 128
//     epochs 10
//     optimizer adam(lr: 5e-4)
//     schedule cosine_warmup(warmup: 50)
//     clip_grad_norm 5.0
//     seed 42
//   }
//
// Plain data: no MLIR, so the runtime side may use it too. Unset keys stay
// empty; their defaults belong to whoever runs the training. Both front ends
// hand it to Builder::train, which attaches it to the module as the
// `tf.train` dictionary.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_DSL_TRAINCONFIG_H
#define TFC_COMPILER_DSL_TRAINCONFIG_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tfc {

/// A constant in a train block: integer, number, bool or string.
using TrainValue = std::variant<int64_t, double, bool, std::string>;

/// `name(key: value, ...)`, e.g. `adam(lr: 5e-4)`; arguments in source order.
struct TrainCall {
  std::string name;
  std::vector<std::pair<std::string, TrainValue>> args;

  const TrainValue *get(const std::string &key) const {
    for (const auto &[k, v] : args)
      if (k == key)
        return &v;
    return nullptr;
  }
};

struct TrainConfig {
  std::string model;                 // `train NAME`
  std::optional<TrainCall> data;     // a built-in dataset or npy(dir: ...)
  std::optional<int64_t> batch;      // before any --batch override
  std::optional<int64_t> epochs;
  std::optional<TrainCall> optimizer; // adam, adamw, sgd
  std::optional<TrainCall> schedule;  // constant, cosine, cosine_warmup, ...
  std::optional<double> clipGradNorm;
  std::optional<int64_t> seed;
  /// "NAME", "min:NAME" or "max:NAME": the validation score best.safetensors
  /// is chosen by (default: the first metric, higher is better, else the loss).
  std::optional<std::string> best;
};

} // namespace tfc

#endif // TFC_COMPILER_DSL_TRAINCONFIG_H
