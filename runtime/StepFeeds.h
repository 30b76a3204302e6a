//===- StepFeeds.h - what a step is fed besides its batch and parameters -===//
//
// The training loop and `bench` call an entry step after step: both feed it
// the optimizer state, the step counter, the learning rate, the run's total
// steps, the step's dropout seed and a sample mask, and both hand a step's
// updated parameters and state to the next. This is the one implementation.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_STEPFEEDS_H
#define TFC_RUNTIME_STEPFEEDS_H

#include "runtime/Model.h"

#include <map>
#include <string>
#include <vector>

namespace tfc::rt {

/// The dropout seed of step `step` of a run seeded `seed`: Philox of
/// (seed, step), 31 bits.
int32_t stepSeed(uint64_t seed, int64_t step);

class StepFeeds {
public:
  /// Feeds for `entry`: `state` (by name, zero-filled here when empty) is
  /// the optimizer state the entry reads and its results replace; `lr` and
  /// `totalSteps` the schedule's hyperparameters; masks select every sample.
  StepFeeds(Model &model, const EntrySpec &entry, std::map<std::string, Tensor> &state,
            double lr, double totalSteps, uint64_t seed);

  /// The batch (one tensor per model input, in the model's order), as
  /// fillBatch fills it.
  void bindBatch(const std::vector<Tensor> &batch);
  /// Step `step`: its counter and its dropout seed.
  void setStep(int64_t step);
  const std::map<std::string, const Tensor *> &feeds() const { return feeds_; }
  /// The loop's swaps: the step's updated parameters go to the model and its
  /// state to `state`, so the next step starts from them (`results` gets the
  /// old buffers, reused by the next call).
  void takeResults(std::vector<Tensor> &results);

private:
  Model &model_;
  const EntrySpec &entry_;
  std::map<std::string, Tensor> &state_;
  uint64_t seed_;
  std::map<std::string, Tensor> owned_; // counters, hyperparameters, masks
  std::map<std::string, const Tensor *> feeds_;
  std::map<std::string, size_t> paramIndex_;
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_STEPFEEDS_H
