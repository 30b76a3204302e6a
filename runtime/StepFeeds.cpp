//===- StepFeeds.cpp - what a step is fed besides its batch and parameters ===//

#include "runtime/StepFeeds.h"
#include "runtime/Distributed.h"
#include "runtime/Philox.h"

#include <algorithm>
#include <cstdlib>

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
                     double lr, double totalSteps, uint64_t seed, bool alone)
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
    else if (a.kind == abi::ValueKind::SampleOffset) // rank r's rows: r*b .. (r+1)*b - 1
      setScalar(t, double(int64_t(dist::world().rank) * m.batch));
    std::string key = a.feedKey();
    owned_[key] = std::move(t);
    feeds_[key] = &owned_[key];
    // What no step changes (masks, hyperparameters, the rank's sample
    // offset) stays on the device, copied in once, and so does the step
    // counter: the entry's `step + 1` result swaps in as the state's do
    // (setStep copies it in only where that would not be the step's). The
    // dropout seed is copied in a step.
    if (!hostMemory_ && a.kind != abi::ValueKind::Seed)
      kept_[key] = {&owned_[key], &deviceCopies_[key]};
  }
  results_.resize(slots_);
  if (alone) { // one rank: nothing to exchange with anyone
    ranks_.broadcast = [](void *, size_t, std::string &) { return true; };
    ranks_.agreeMax = [](int &, std::string &) { return true; };
    ranks_.hostMean = [](float *, size_t, std::string &) { return true; };
  } else {
    ranks_ = {dist::world().rank, dist::world().size, dist::broadcast, dist::allreduceMax,
              dist::allreduceMean};
  }
  bool dataParallel = false;
  if (!dist::dataParallel(dataParallel, parallelError_))
    return; // run() reports it
  if (alone && dist::parallel()) { // several ranks, but this one steps alone
    const char *on = std::getenv(dist::kDataParallelSwitch);
    dataParallel = on && *on; // (its one value, checked above)
  }
  if (dataParallel && entry.name == abi::kTrainStep) {
    gradEntry_ = m.entry(abi::kGradStep);
    applyEntry_ = m.entry(abi::kApplyStep);
    if (!gradEntry_ || !applyEntry_)
      parallelError_ = "this model has no grad_step and apply_step entries, which "
                       "data-parallel training needs: recompile it with this version of tfc";
  }
}

bool StepFeeds::runParallel(std::vector<Tensor> &results, std::string &error) {
  if (!model_.run(*gradEntry_, feeds_, gradResults_, error))
    return false;
  // The gradients, the loss and the metrics averaged over the ranks, in one
  // exchange.
  auto exchanged = [](abi::ValueKind kind) {
    return kind == abi::ValueKind::Grad || kind == abi::ValueKind::Loss ||
           kind == abi::ValueKind::Metric;
  };
  hostExchange_.clear();
  for (size_t r = 0; r < gradResults_.size(); ++r)
    if (exchanged(gradEntry_->results[r].kind)) {
      const float *v = gradResults_[r].f32();
      hostExchange_.insert(hostExchange_.end(), v, v + gradResults_[r].numel());
    }
  if (!ranks_.hostMean(hostExchange_.data(), hostExchange_.size(), error))
    return false;
  size_t at = 0;
  for (size_t r = 0; r < gradResults_.size(); ++r) {
    const TensorSpec &spec = gradEntry_->results[r];
    if (!exchanged(spec.kind))
      continue;
    std::copy_n(hostExchange_.data() + at, gradResults_[r].numel(), gradResults_[r].f32());
    at += size_t(gradResults_[r].numel());
    if (spec.kind == abi::ValueKind::Grad)
      feeds_[spec.feedKey()] = &gradResults_[r];
  }
  if (!model_.run(*applyEntry_, feeds_, applyResults_, error))
    return false;
  // train_step's results: the loss and metrics of grad_step, the rest of
  // apply_step.
  results.resize(entry_.results.size());
  auto take = [](const EntrySpec &from, std::vector<Tensor> &values, const TensorSpec &want,
                 Tensor &out) {
    for (size_t r = 0; r < from.results.size(); ++r)
      if (from.results[r].kind == want.kind && from.results[r].name == want.name) {
        std::swap(out, values[r]); // sizes kept both ways: no allocation a step
        return true;
      }
    return false;
  };
  for (size_t r = 0; r < entry_.results.size(); ++r) {
    const TensorSpec &want = entry_.results[r];
    if (!take(*gradEntry_, gradResults_, want, results[r]) &&
        !take(*applyEntry_, applyResults_, want, results[r])) {
      error = "data-parallel step: neither grad_step nor apply_step returns train_step's " +
              want.feedKey();
      return false;
    }
  }
  return true;
}

bool StepFeeds::prepareExchange(std::string &error) {
  Device &device = model_.device();
  DeviceExchange &x = exchange_;
  if (!model_.openDevice(error) || !exchangeLayout(*gradEntry_, x, error) ||
      !device.joinRanks(ranks_, error))
    return false;
  x.device = device.allocate(std::max<size_t>(1, x.floats) * sizeof(float));
  x.scoreSlots = x.device ? device.allocate(std::max<size_t>(1, slots_ * x.scoreSlotBytes))
                          : nullptr;
  if (!x.device || !x.scoreSlots) {
    std::string why;
    error = "cannot allocate the data-parallel exchange's " +
            withThousands(int64_t(x.floats * sizeof(float))) + " bytes on device '" +
            device.name() + "'" + (device.takeError(why) ? "" : " (" + why + ")");
    return false;
  }
  // The padding between gradients is averaged too, and never read: zeros.
  std::vector<float> zeros(x.floats, 0.0f);
  device.copyIn(x.device, zeros.data(), zeros.size() * sizeof(float));
  auto address = [&](size_t floats) { return static_cast<float *>(x.device) + floats; };
  for (auto &[key, offset] : x.scoreAt)
    placed_.writeAt[key] = address(offset);
  for (auto &[key, offset] : x.gradAt) {
    placed_.writeAt[key] = address(offset);
    x.apply.readAt[key] = address(offset);
  }
  return device.takeError(error);
}

bool StepFeeds::runParallelOnDevice(size_t slot, std::string &error) {
  DeviceExchange &x = exchange_;
  if (!x.device && !prepareExchange(error))
    return false;
  // One sequence, which nothing here waits for: grad_step, the mean of
  // its exchange buffer, the scores' copy into the step's result slot,
  // apply_step (a GPU replays the four as one graph).
  BatchGather gradGathers, applyGathers;
  std::vector<DeviceOp> ops(4);
  if (!model_.prepareStep(*gradEntry_, feeds_, kept_, slot, gradGathers, ops[0], error, placed_) ||
      !model_.prepareStep(*applyEntry_, feeds_, kept_, slot, applyGathers, ops[3], error, x.apply))
    return false;
  ops[1].kind = DeviceOp::Kind::AllreduceMean;
  ops[1].to = x.device;
  ops[1].bytes = x.floats * sizeof(float);
  ops[2].kind = DeviceOp::Kind::CopyWithin;
  ops[2].to = static_cast<char *>(x.scoreSlots) + slot * x.scoreSlotBytes;
  ops[2].from = x.device;
  ops[2].bytes = x.scores * sizeof(float);
  return model_.device().enqueueSequence(ops, error);
}

bool StepFeeds::readParallelSlot(size_t slot, std::vector<Tensor> &results, std::string &error) {
  DeviceExchange &x = exchange_;
  if (!model_.readSlot(*applyEntry_, slot, applyResults_, error))
    return false;
  x.scoresRead.resize(x.scores);
  model_.device().copyOut(x.scoresRead.data(),
                          static_cast<const char *>(x.scoreSlots) + slot * x.scoreSlotBytes,
                          x.scores * sizeof(float));
  if (!model_.device().takeError(error))
    return false;
  results.resize(entry_.results.size());
  for (size_t r = 0; r < entry_.results.size(); ++r) {
    const TensorSpec &want = entry_.results[r];
    if (want.kind == abi::ValueKind::Loss || want.kind == abi::ValueKind::Metric) {
      auto score = std::find_if(x.scoreAt.begin(), x.scoreAt.end(),
                                [&](auto &s) { return s.first == want.feedKey(); });
      if (score != x.scoreAt.end()) {
        if (results[r].dtype != want.dtype || results[r].shape != want.shape ||
            results[r].bytes.empty())
          results[r] = Tensor(want.dtype, want.shape);
        std::copy_n(x.scoresRead.data() + score->second, results[r].numel(), results[r].f32());
        continue;
      }
    } else {
      bool found = false;
      for (size_t a = 0; a < applyEntry_->results.size() && !found; ++a) {
        const TensorSpec &have = applyEntry_->results[a];
        if (have.kind == want.kind && have.name == want.name) {
          std::swap(results[r], applyResults_[a]);
          found = true;
        }
      }
      if (found)
        continue;
    }
    error = "data-parallel step: neither grad_step nor apply_step returns train_step's " +
            want.feedKey();
    return false;
  }
  return true;
}

StepFeeds::~StepFeeds() {
  for (auto &[name, copy] : stateCopies_)
    model_.release(copy);
  for (auto &[key, copy] : deviceCopies_)
    model_.release(copy);
  model_.device().release(exchange_.device);
  model_.device().release(exchange_.scoreSlots);
}

void StepFeeds::bindBatch(const std::vector<Tensor> &batch) {
  const Manifest &m = model_.manifest();
  for (size_t i = 0; i < m.inputs.size() && i < batch.size(); ++i)
    feeds_[m.inputs[i].name] = &batch[i];
  placed_.batch = {};
}

void StepFeeds::bindDeviceBatch(const std::vector<Tensor> &shapes,
                                const std::vector<RowGather> &inputs, int64_t *first,
                                int64_t advance) {
  bindBatch(shapes);
  const Manifest &m = model_.manifest();
  for (size_t i = 0; i < m.inputs.size() && i < inputs.size(); ++i)
    placed_.batch.inputs[m.inputs[i].name] = inputs[i];
  placed_.batch.first = first;
  placed_.batch.advance = advance;
}

void StepFeeds::setStep(int64_t step) {
  const std::string stepKey = feedKey(abi::ValueKind::Step, "step");
  if (auto it = owned_.find(stepKey); it != owned_.end()) {
    setScalar(it->second, double(step));
    // On the device the last step's `step + 1` (f32) is this step's counter
    // when this step follows it and the sum is exact (below 2^24, where
    // float(step) is too); else the host's value is copied in.
    if (auto copy = deviceCopies_.find(stepKey); copy != deviceCopies_.end()) {
      if (step != deviceStep_ || step >= (int64_t(1) << 24))
        copy->second.onDevice = false;
      deviceStep_ = step + 1;
    }
  }
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
  if (!parallelError_.empty()) {
    error = parallelError_;
    return false;
  }
  size_t slot = nextSlot_;
  if (gradEntry_ && !hostMemory_) {
    if (!runParallelOnDevice(slot, error))
      return false;
  } else if (hostMemory_) {
    if (!(gradEntry_ ? runParallel(results_[slot], error)
                     : model_.run(entry_, feeds_, results_[slot], error)))
      return false;
    takeResults(results_[slot]);
  } else if (!model_.runStep(entry_, feeds_, kept_, slot, error, placed_)) {
    return false;
  }
  pending_.push_back({step, slot});
  nextSlot_ = (slot + 1) % slots_;
  return true;
}

bool StepFeeds::readBack(std::vector<StepResults> &steps, std::string &error) {
  steps.clear();
  // A device's slots all at once: one wait for every pending step.
  if (!hostMemory_ && !gradEntry_ && !pending_.empty()) {
    std::vector<size_t> slots;
    std::vector<std::vector<Tensor> *> results;
    for (auto [step, slot] : pending_) {
      slots.push_back(slot);
      results.push_back(&results_[slot]);
    }
    if (!model_.readSlots(entry_, slots, results, error, /*oneCopy=*/true))
      return false;
  }
  for (auto [step, slot] : pending_) {
    if (!hostMemory_ && gradEntry_ && !readParallelSlot(slot, results_[slot], error))
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
