//===- Bench.h - time the entries of a compiled model ---------------------===//
//
//   MODEL bench [--steps N] [--warmup N] [--min-seconds S]
//               [--entry train_step|predict|evaluate|all] [--save-batch DIR]
//               [--profile]
//
// Calls an entry repeatedly on one valid batch (from the train block's
// dataset, else synthetic) and prints one machine-readable line per entry:
//
//   bench train_step median_ms=1.234 min_ms=1.200 mean_ms=1.250 steps=30 warmup=5
//         threads=2 arena_bytes=5326272 max_rss_kib=12345
//
// train_step is timed in its steady state: parameters and optimizer state are
// swapped with its results after every call, as the training loop does.
// With --min-seconds, timed calls go on past --steps until they add up to S
// seconds (a millisecond step is otherwise timed for a few tens of
// milliseconds, which one busy moment of a shared machine spoils); the loss
// printed is still the one after `warmup + steps` calls, comparable across
// runs and with the peers. --save-batch writes the batch's inputs as
// DIR/NAME.npy first, so that tools/bench's peers time the same data.
// --profile (a GPU binary): then `steps` more calls run eagerly with each
// operation on the GPU timed alone (runtime/cuda/KernelProfile.h), and a
// table follows the line: each kernel, cuBLASLt call and copy by name, its
// share of the entry's device time, its time and calls a call; above it the
// shares by kind (generated, hand-written, cuBLASLt, copy, collective).
// Timing lives here and in tools/bench, never in a test.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_BENCH_H
#define TFC_RUNTIME_BENCH_H

#include "runtime/Model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tfc::rt {

struct BenchOptions {
  int64_t steps = 30;
  int64_t warmup = 5;
  double minSeconds = 0; // time at least this long, past `steps` if need be
  std::string entry = "all"; // train_step | predict | evaluate | all
  std::string saveBatch;     // a directory for the batch's inputs (.npy), or ""
  bool profile = false;      // then time each operation of a GPU entry
};

/// The batch bench times (and tune, runtime/Tune.h): the first samples of
/// the train block's dataset's training split (`trainSamples` of them in
/// the split), else, with a note on stderr where the model names a dataset,
/// synthetic inputs (`trainSamples` 0); `source` says which. False with
/// `error` set where the dataset's values do not fit the model's inputs.
bool benchBatch(const Manifest &m, std::vector<Tensor> &batch, std::string &source,
                int64_t &trainSamples, std::string &error);

/// What the training loop feeds bench's and tune's steps besides the batch
/// and the parameters: the optimizer's rate and the run's total steps (the
/// train block's epochs of `trainSamples`, a batch a step), which schedules
/// such as cosine warm-up read.
struct BenchSchedule {
  double lr = 1e-3;
  double totalSteps = 1;
};
BenchSchedule benchSchedule(const Manifest &m, int64_t trainSamples);

/// The median of `v` (NaN for none).
double median(std::vector<double> v);

/// Registers the `bench` subcommand (its options fill `options`).
CLI::App *addBenchCommand(CLI::App &app, BenchOptions &options);

/// Exit codes: 0 done, 1 error (a bad option is a usage error, 2, before this).
int bench(Model &model, const BenchOptions &options);

} // namespace tfc::rt

#endif // TFC_RUNTIME_BENCH_H
