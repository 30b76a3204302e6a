//===- StepFeeds.h - what a step is fed besides its batch and parameters -===//
//
// The training loop and `bench` call an entry step after step: both feed it
// the optimizer state, the step counter, the learning rate, the run's total
// steps, the step's dropout seed and a sample mask, and both hand a step's
// updated parameters and state to the next. This is the one implementation.
//
// On host memory (the CPU) a step's results are host tensors, swapped with
// the parameters and the state after each step and read at once. On a device
// whose memory is not the host's, parameters and state stay on the device
// (a CUDA build's step writes them in place, else Model::runStep swaps
// device buffers; nothing is copied), so do the small
// arguments no step changes (copied in once: masks, hyperparameters, the
// rank's sample offset) and the step counter (the entry's step + 1 swaps
// in, as the state does); only the dropout seed is copied in a step, and
// the batch too unless it is gathered on the device (bindDeviceBatch), and
// the other results (loss,
// metrics, lr) wait on the device, in one of slots() result slots, until the
// host reads them with readBack: one wait for up to slots() steps.
//
// Started as several ranks (runtime/Distributed.h; or as one with
// TFC_DATA_PARALLEL=nccl), a step is grad_step on this rank's share of the
// batch, the gradients, loss and metrics averaged across the ranks, then
// apply_step: the same results, in train_step's order, as one process with
// the whole batch gives. On host memory the average is taken on the host
// (dist::allreduceMean). On another device everything stays there:
// grad_step writes its loss, metrics and gradients into one device buffer
// (runtime/ExchangeLayout.h), the device's collective
// averages it in place (Device::allreduceMean: NCCL on a GPU), apply_step
// reads the gradients there and updates parameters and state in place (the
// swap, as train_step's), and the loss and metrics are copied on the device
// into the step's result slot, read only by readBack. The four are queued
// as one sequence (Device::enqueueSequence), which a GPU replays as one
// graph, the collective inside it. The sample offset
// (rank * batch, 0 in one process) makes the rank's dropout masks those of
// its rows of the whole batch.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_STEPFEEDS_H
#define TFC_RUNTIME_STEPFEEDS_H

#include "runtime/ExchangeLayout.h"
#include "runtime/Model.h"

#include <map>
#include <string>
#include <vector>

namespace tfc::rt {

/// The dropout seed of step `step` of a run seeded `seed`: Philox of
/// (seed, step), 31 bits.
int32_t stepSeed(uint64_t seed, int64_t step);

/// One step's results as readBack gives them: the step's number, and its
/// results in entry order (the parameters' and the state's are not given:
/// they are the model's and the state's; read those with syncToHost).
struct StepResults {
  int64_t step;
  const std::vector<Tensor> *results;
};

class StepFeeds {
public:
  /// Feeds for `entry`: `state` (by name, zero-filled here when empty) is
  /// the optimizer state the entry reads and its results replace; `lr` and
  /// `totalSteps` the schedule's hyperparameters; masks select every sample.
  /// `alone`: this process steps by itself whatever the ranks (`bench`, rank
  /// 0's alone under mpirun): train_step, or one rank's data-parallel step
  /// with TFC_DATA_PARALLEL=nccl.
  StepFeeds(Model &model, const EntrySpec &entry, std::map<std::string, Tensor> &state,
            double lr, double totalSteps, uint64_t seed, bool alone = false);
  /// Gives the state's device memory back.
  ~StepFeeds();
  StepFeeds(const StepFeeds &) = delete;
  StepFeeds &operator=(const StepFeeds &) = delete;

  /// The batch (one tensor per model input, in the model's order), as
  /// fillBatch fills it.
  void bindBatch(const std::vector<Tensor> &batch);
  /// The batch gathered on the device (a device whose memory is not the
  /// host's) as part of each step's call: model input i's batch from
  /// `inputs[i]`'s rows, starting at the order's row *first (device
  /// memory), which each step advances by `advance` (Model's DeviceBatch);
  /// `shapes` give the inputs' shapes (their values unused). Bound once: the
  /// steps after it gather the order's next rows.
  void bindDeviceBatch(const std::vector<Tensor> &shapes, const std::vector<RowGather> &inputs,
                       int64_t *first, int64_t advance);
  /// Runs step `step` on the bound batch (its counter and dropout seed set
  /// here): the next step starts from its parameters and state. Its other
  /// results wait for readBack; full() says when readBack must come first.
  bool run(int64_t step, std::string &error);
  /// How many steps' results may wait: 1 on host memory (read after every
  /// step), kResultSlots on another device.
  size_t slots() const { return slots_; }
  /// Whether the steps run since the last readBack fill every slot.
  bool full() const { return pending_.size() == slots_; }
  /// The results of the steps run since the last readBack, in step order
  /// (on a device whose memory is not the host's, copied out: one wait).
  /// They stay valid until the next run.
  bool readBack(std::vector<StepResults> &steps, std::string &error);
  /// Makes the host's parameters and `state` current (copied out if steps
  /// changed them on the device; they stay there too): before a checkpoint.
  bool syncToHost(std::string &error);

  /// Result slots on a device whose memory is not the host's. Each step's
  /// buffers differ from the last's (the swapped step counter, and the
  /// parameters and state a step does not update in place, alternate between
  /// two buffers; the slots cycle), so a GPU keeps a graph
  /// for each of lcm(2, kResultSlots) buffer sets: runtime/cuda keeps up to
  /// kGraphsPerEntry, at least that.
  static constexpr size_t kResultSlots = 4;

  /// The data-parallel step's one device buffer (a device whose memory is
  /// not the host's): its address and size in floats, null and 0 before the
  /// first step. For tests and messages.
  const void *exchangeBuffer() const { return exchange_.device; }
  size_t exchangeFloats() const { return exchange_.floats; }

private:
  void setStep(int64_t step);
  /// One data-parallel step into `results` (train_step's order), on the host.
  bool runParallel(std::vector<Tensor> &results, std::string &error);
  /// One data-parallel step on the device, its results into slot `slot`.
  bool runParallelOnDevice(size_t slot, std::string &error);
  /// Joins the ranks' collective and lays out the exchange's buffer, once.
  bool prepareExchange(std::string &error);
  /// The results a device step left in `slot`, in train_step's order.
  bool readParallelSlot(size_t slot, std::vector<Tensor> &results, std::string &error);
  /// The host's swaps (host memory): the step's updated parameters go to
  /// the model and its state to `state`.
  void takeResults(std::vector<Tensor> &results);

  Model &model_;
  const EntrySpec &entry_;
  std::map<std::string, Tensor> &state_;
  uint64_t seed_;
  bool hostMemory_;
  size_t slots_;
  std::map<std::string, Tensor> owned_; // counters, hyperparameters, masks
  std::map<std::string, const Tensor *> feeds_;
  std::map<std::string, size_t> paramIndex_;
  std::map<std::string, DeviceCopy> stateCopies_; // by state name
  std::map<std::string, DeviceCopy> deviceCopies_; // by feed key: owned_ but the seed
  int64_t deviceStep_ = -1; // the step counter the device holds after the last step
  std::map<std::string, KeptValue> kept_;         // by feed key
  DevicePlacement placed_; // batch: the batch's inputs on the device, by name
  std::vector<std::vector<Tensor>> results_;      // per slot
  std::vector<std::pair<int64_t, size_t>> pending_; // (step, slot), in order
  size_t nextSlot_ = 0;
  // Data-parallel steps: the two halves, their results, why not possible.
  const EntrySpec *gradEntry_ = nullptr, *applyEntry_ = nullptr;
  std::vector<Tensor> gradResults_, applyResults_;
  std::vector<float> hostExchange_;
  RankGroup ranks_; // the ranks averaged over: dist::world()'s, or this one
  std::string parallelError_;
  /// The device's exchange (runtime/ExchangeLayout.h) and each slot's copy
  /// of its scores.
  struct DeviceExchange : ExchangeLayout {
    void *device = nullptr;
    void *scoreSlots = nullptr; // slots() * scoreSlotBytes
    DevicePlacement apply;      // readAt: the gradients
    std::vector<float> scoresRead;
  } exchange_;
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_STEPFEEDS_H
