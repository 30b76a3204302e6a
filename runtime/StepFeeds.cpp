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
    : model_(model), entry_(entry), state_(state), seed_(seed),
      hostMemory_(model.device().hostMemory()), slots_(hostMemory_ ? 1 : kResultSlots) {
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
      if (!hostMemory_)
        kept_[a.feedKey()] = {&state_[a.name], &stateCopies_[a.name]};
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
  results_.resize(slots_);
}

StepFeeds::~StepFeeds() {
  for (auto &[name, copy] : stateCopies_)
    model_.release(copy);
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

bool StepFeeds::run(int64_t step, std::string &error) {
  if (full()) {
    error = "StepFeeds::run: the results of " + std::to_string(pending_.size()) +
            " steps are still to be read";
    return false;
  }
  setStep(step);
  size_t slot = nextSlot_;
  if (hostMemory_) {
    if (!model_.run(entry_, feeds_, results_[slot], error))
      return false;
    takeResults(results_[slot]);
  } else if (!model_.runStep(entry_, feeds_, kept_, slot, error)) {
    return false;
  }
  pending_.push_back({step, slot});
  nextSlot_ = (slot + 1) % slots_;
  return true;
}

bool StepFeeds::readBack(std::vector<StepResults> &steps, std::string &error) {
  steps.clear();
  for (auto [step, slot] : pending_) {
    if (!hostMemory_ && !model_.readSlot(entry_, slot, results_[slot], error))
      return false;
    steps.push_back({step, &results_[slot]});
  }
  pending_.clear();
  return true;
}

bool StepFeeds::syncToHost(std::string &error) {
  if (!model_.syncParams(error))
    return false;
  for (auto &[name, copy] : stateCopies_)
    model_.toHost(state_.at(name), copy);
  return model_.device().takeError(error);
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
