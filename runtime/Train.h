//===- Train.h - training and evaluation of a compiled model --------------===//
//
//   MODEL train [--epochs N] [--lr X] [--seed N] [--run-dir DIR] [--resume]
//   MODEL eval --checkpoint FILE [--split val|test|all]
//
// A run directory belongs to one `train` at a time (RUN_DIR/.lock, flock).
//
// The loop is thin: the compiled `train_step` does forward, backward,
// clipping, the schedule and the optimizer; the loop feeds batches, swaps
// parameter and state buffers, reports and checkpoints.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TRAIN_H
#define TFC_RUNTIME_TRAIN_H

#include "runtime/Model.h"

#include <optional>
#include <string>

namespace tfc::rt {

struct TrainOptions {
  std::optional<int64_t> epochs, seed, batch;
  std::optional<double> lr;
  std::string runDir;  // default: runs/MODEL
  std::string dataDir; // --data DIR: npy(dir: DIR) instead of the file's data
  bool resume = false;
  int64_t stopAfter = 0; // stop (as Ctrl-C would) after this many epochs of this run
  std::string best;      // --best: "NAME", "min:NAME" or "max:NAME" (default: the train block's)
};

struct EvalOptions {
  std::string checkpoint;
  std::string split = "all"; // val | test | all
  std::string dataDir;
  std::optional<int64_t> seed;
};

/// Exit codes: 0 done, 1 error (another `train` holds the run directory, a
/// NaN or infinity stopped the run: nothing non-finite is ever saved, and the
/// message names the last good checkpoint), 130 stopped by SIGINT (Ctrl-C)
/// and 143 by SIGTERM, in a step or an evaluation, a checkpoint saved first.
/// (2, a usage error, comes from the command line before this is called.)
int train(Model &model, const TrainOptions &options);
/// Exit codes: 0 done, 1 error. Reads only the splits it evaluates.
int evaluate(Model &model, const EvalOptions &options);

} // namespace tfc::rt

#endif // TFC_RUNTIME_TRAIN_H
