//===- Datasets.h - the built-in datasets of `train` and batching ---------===//
//
// A train block's `data name(key: value, ...)` names one of these datasets:
//
//   reverse_sequences  the UvA tutorial's reverse task (tokens -> reversed)
//   set_anomaly        the UvA tutorial's set anomaly detection, on synthetic
//                      class features (or real ones from `dir:`)
//   fleuret_sequences  François Fleuret's triangles and boxes (the blog post)
//   square_corners     the step-by-step book's corners of a square
//   npy                DIR/{train,val,test}/INPUT.npy
//
// Every generated sample is a pure function of (seed, dataset, split, sample
// index): each split draws from its own Philox stream, so the test set does
// not change when `train:` does, and a sample is made only when a batch
// needs it. A dataset's arrays feed the model's inputs in order: the first
// input is the data, the second the labels or target.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_DATASETS_H
#define TFC_RUNTIME_DATASETS_H

#include "runtime/Manifest.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace tfc::rt {

using DataValue = std::variant<int64_t, double, bool, std::string>;
/// The train block's `data name(key: value, ...)` arguments.
using DataArgs = std::map<std::string, DataValue>;

/// One split. Samples are produced on demand (fill) so large synthetic sets
/// need not be held in memory; array-backed splits just copy rows. fill
/// writes sample `index` of this split into row `row` of each tensor of
/// `batch` (one tensor per model input, in the model's input order, leading
/// dim = batch size). A pure function of (dataset seed, split, index): same
/// call, same bytes; safe to call from several threads at once.
struct Split {
  int64_t samples = 0; // 0: the split is absent
  std::function<void(int64_t index, std::vector<Tensor> &batch, int64_t row)> fill;
};

struct Dataset {
  Split train, val, test;
  std::vector<std::string> notices; // e.g. "no test split in DIR: skipped"
};

/// The splits a caller needs (a bit mask): `eval` needs no training split.
enum SplitMask : unsigned { kTrainSplit = 1, kValSplit = 2, kTestSplit = 4, kAllSplits = 7 };

/// Builds dataset `name` with `args` for a model whose inputs are `inputs`
/// (manifest order, batch dim first). Checks that the dataset's arrays match
/// the inputs (count, dtype, per-sample shape) and says which and how (naming
/// both shapes) when not. Returns false with a one-line `error` on any
/// problem (unknown dataset, unknown or ill-typed argument, missing file...).
/// Splits read from files (npy, set_anomaly's dir:) are read only when in
/// `splits`, and only a needed training split must exist; the others stay
/// absent (samples 0). Generated splits cost nothing until used: all are made.
bool makeDataset(const std::string &name, const DataArgs &args, uint64_t seed,
                 const std::vector<TensorSpec> &inputs, Dataset &out, std::string &error,
                 unsigned splits = kAllSplits);

/// The sample order of training epoch `epoch`: a permutation of [0, n), a
/// pure function of (seed, epoch).
std::vector<int64_t> epochOrder(int64_t n, uint64_t seed, int64_t epoch);

/// Fills `batch` (allocated here with the inputs' shapes) with samples
/// order[begin .. begin+count) (order == nullptr: the identity), zero rows
/// after `count`. Returns the number of real rows: `count`, less where the
/// batch, the order or the split ends first.
int64_t fillBatch(const Split &split, const std::vector<TensorSpec> &inputs,
                  const std::vector<int64_t> *order, int64_t begin, int64_t count,
                  std::vector<Tensor> &batch);

//===----------------------------------------------------------------------===//
// Fleuret's sequences, exposed for tests and plots
//===----------------------------------------------------------------------===//

struct FleuretShape {
  double position = 0, height = 0, width = 0;
};

/// One sample before normalisation: the shapes as drawn, and the sequences.
struct FleuretSample {
  FleuretShape triangles[2], boxes[2];
  std::vector<double> input;  // profile of the shapes + uniform noise
  std::vector<double> target; // profile with each kind's mean height + noise
};

/// Sample `index` of split `split` ("train", "val" or "test") of
/// fleuret_sequences under `seed`, for sequences of `length`; the noise is
/// uniform in [-noise/2, noise/2).
FleuretSample fleuretSample(uint64_t seed, const std::string &split, int64_t index,
                            int64_t length, double noise);

/// The noise-free sequence of the shapes (the blog's positions_to_sequences):
/// at each step the largest of the triangles' and boxes' values.
std::vector<double> fleuretProfile(const FleuretShape (&triangles)[2],
                                   const FleuretShape (&boxes)[2], int64_t length);

} // namespace tfc::rt

#endif // TFC_RUNTIME_DATASETS_H
