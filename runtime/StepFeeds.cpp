//===- StepFeeds.cpp - what a step is fed besides its batch and parameters ===//

#include "runtime/StepFeeds.h"
#include "runtime/Philox.h"

#include <algorithm>

namespace tfc::rt {

int32_t stepSeed(uint64_t seed, int64_t step) {
  auto r = philox4x32({uint32_t(step), uint32_t(uint64_t(step) >> 32), 0x5EED, 0},
                      {uint32_t(seed), uint32_t(seed >> 32)});
  return int32_t(r[0] & 0x7fffffffu);
}

namespace {

void setScalar(Tensor &t, double v) {
  if (t.dtype == DType::F32)
    t.f32()[0] = float(v);
  else if (t.dtype == DType::I32)
    t.i32()[0] = int32_t(v);
}

} // namespace

StepFeeds::StepFeeds(Model &model, const EntrySpec &entry, std::map<std::string, Tensor> &state,
                     double lr, double totalSteps, uint64_t seed)
    : model_(model), entry_(entry), state_(state), seed_(seed) {
  const Manifest &m = model.manifest();
  for (size_t i = 0; i < m.params.size(); ++i)
    paramIndex_[m.params[i].name] = i;
  for (const TensorSpec &a : entry.args) {
    if (a.kind == abi::ValueKind::Param || a.kind == abi::ValueKind::Input)
      continue;
    if (a.kind == abi::ValueKind::State) {
      if (!state_.count(a.name))
        state_[a.name] = Tensor(a.dtype, a.shape);
      feeds_[a.feedKey()] = &state_[a.name];
      continue;
    }
    Tensor t(a.dtype, a.shape);
    if (a.kind == abi::ValueKind::Mask) // every sample of the batch is real
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (t.dtype == DType::F32)
          t.f32()[i] = 1.0f;
        else if (t.dtype == DType::I32)
          t.i32()[i] = 1;
        else
          t.bytes[size_t(i)] = 1;
      }
    else if (a.kind == abi::ValueKind::Hyper && a.name == abi::kLrName)
      setScalar(t, lr);
    else if (a.kind == abi::ValueKind::Hyper && a.name == abi::kTotalStepsName)
      setScalar(t, totalSteps);
    std::string key = a.feedKey();
    owned_[key] = std::move(t);
    feeds_[key] = &owned_[key];
  }
}

void StepFeeds::bindBatch(const std::vector<Tensor> &batch) {
  const Manifest &m = model_.manifest();
  for (size_t i = 0; i < m.inputs.size() && i < batch.size(); ++i)
    feeds_[m.inputs[i].name] = &batch[i];
}

void StepFeeds::setStep(int64_t step) {
  if (auto it = owned_.find(feedKey(abi::ValueKind::Step, "step")); it != owned_.end())
    setScalar(it->second, double(step));
  if (auto it = owned_.find(feedKey(abi::ValueKind::Seed, "seed")); it != owned_.end())
    setScalar(it->second, double(stepSeed(seed_, step)));
}

void StepFeeds::takeResults(std::vector<Tensor> &results) {
  for (size_t r = 0; r < results.size(); ++r) {
    const TensorSpec &spec = entry_.results[r];
    if (spec.kind == abi::ValueKind::Param)
      std::swap(model_.params()[paramIndex_.at(spec.name)], results[r]);
    else if (spec.kind == abi::ValueKind::State)
      std::swap(state_.at(spec.name), results[r]);
  }
}

} // namespace tfc::rt
