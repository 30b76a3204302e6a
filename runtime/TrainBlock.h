//===- TrainBlock.h - the datasets, optimizers and schedules a train block names
//
// A `.tf` train block names a dataset, an optimizer and a schedule, each with
// settings: the parser checks the names and settings, tf-autodiff's train
// step builds the optimizer and schedule, the runtime makes the dataset.
// This is the one list all three read. Plain C++17, like runtime/Abi.h.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TRAINBLOCK_H
#define TFC_RUNTIME_TRAINBLOCK_H

#include <array>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

namespace tfc::train {

/// `name(setting: value, ...)`.
struct CallKind {
  std::string_view name;
  std::array<std::string_view, 6> settings{}; // the ones it takes ("" ends the list)
  bool anySettings = false; // a dataset's settings are checked where it is made

  bool takes(std::string_view setting) const {
    if (anySettings)
      return true;
    for (std::string_view s : settings)
      if (!s.empty() && s == setting)
        return true;
    return false;
  }
  std::vector<std::string> settingNames() const {
    std::vector<std::string> names;
    for (std::string_view s : settings)
      if (!s.empty())
        names.emplace_back(s);
    return names;
  }
};

/// runtime/Datasets.cpp makes each.
inline constexpr CallKind kDatasets[] = {
    {"reverse_sequences", {}, true}, {"set_anomaly", {}, true},
    {"fleuret_sequences", {}, true}, {"square_corners", {}, true},
    {"text_bytes", {}, true},        {"masked_tokens", {}, true},
    {"synthetic_images", {}, true},  {"npy", {"dir"}}};
/// compiler/transforms/TrainStep.cpp builds each (AdamW's weight decay
/// defaults to 0.01, Adam's to 0: PyTorch's defaults).
inline constexpr CallKind kOptimizers[] = {
    {"adam", {"lr", "beta1", "beta2", "eps", "weight_decay"}},
    {"adamw", {"lr", "beta1", "beta2", "eps", "weight_decay", "decay_all"}},
    {"sgd", {"lr", "momentum", "weight_decay"}}};
/// The learning rate's factor over the run's total steps (TrainStep.cpp).
inline constexpr CallKind kSchedules[] = {
    {"constant", {}}, {"cosine", {}}, {"cosine_warmup", {"warmup"}}, {"linear_warmup", {"warmup"}}};
/// The settings of the block itself: the keys of the `tf.train` attribute
/// the front ends build, tf-autodiff reads and the manifest carries.
namespace key {
inline constexpr const char *kModel = "model";
inline constexpr const char *kData = "data";
inline constexpr const char *kBatch = "batch";
inline constexpr const char *kEpochs = "epochs";
inline constexpr const char *kOptimizer = "optimizer";
inline constexpr const char *kSchedule = "schedule";
inline constexpr const char *kClipGradNorm = "clip_grad_norm";
inline constexpr const char *kSeed = "seed";
/// Which validation score picks best.safetensors: "NAME", "min:NAME" or
/// "max:NAME" (`best accuracy`, `best min(rmse)`).
inline constexpr const char *kBest = "best";
/// A dataset's, optimizer's or schedule's {name, args}.
inline constexpr const char *kName = "name";
inline constexpr const char *kArgs = "args";
} // namespace key
inline constexpr std::string_view kTrainKeys[] = {key::kData,     key::kBatch,    key::kEpochs,
                                                  key::kOptimizer, key::kSchedule, key::kClipGradNorm,
                                                  key::kSeed,     key::kBest};

/// A `best` setting ("NAME", "min:NAME" or "max:NAME"): the score's name
/// and, when given, whether lower is better.
struct BestSpec {
  std::string_view name;
  std::optional<bool> lower;
};
inline BestSpec parseBest(std::string_view spec) {
  if (spec.size() > 4 && (spec.substr(0, 4) == "min:" || spec.substr(0, 4) == "max:"))
    return {spec.substr(4), spec[1] == 'i'};
  return {spec, std::nullopt};
}

template <size_t N> const CallKind *find(const CallKind (&kinds)[N], std::string_view name) {
  for (const CallKind &k : kinds)
    if (k.name == name)
      return &k;
  return nullptr;
}

/// "adam, adamw or sgd".
template <size_t N> std::string listNames(const CallKind (&kinds)[N]) {
  std::string text;
  for (size_t i = 0; i < N; ++i)
    text += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(kinds[i].name);
  return text;
}

} // namespace tfc::train

#endif // TFC_RUNTIME_TRAINBLOCK_H
