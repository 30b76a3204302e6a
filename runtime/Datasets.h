//===- Datasets.h - the built-in datasets of `train` and batching ---------===//
//
// A train block's `data name(key: value, ...)` names one of these datasets:
//
//   reverse_sequences  the UvA tutorial's reverse task (tokens -> reversed)
//   set_anomaly        the UvA tutorial's set anomaly detection, on synthetic
//                      class features (or real ones from `dir:`)
//   fleuret_sequences  François Fleuret's triangles and boxes (the blog post)
//   square_corners     the step-by-step book's corners of a square
//   text_bytes         byte-level language modelling on text files (by
//                      default the licences every Debian system has)
//   masked_tokens      BERT-style masked tokens of structured sequences
//   synthetic_images   shapes in noise, to classify (a small ViT's task)
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
/// absent (samples 0). Generated splits cost nothing until used: all are made
/// (text_bytes reads its whole corpus: its splits are parts of it).
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

//===----------------------------------------------------------------------===//
// The example models' datasets (issue 29), exposed for tests and tools
//===----------------------------------------------------------------------===//

/// text_bytes' default source: the licence texts that base-files installs on
/// every Debian system (237,320 bytes in 14 files on Debian 12).
inline constexpr const char *kDefaultTextCorpus = "/usr/share/common-licenses";

/// A text corpus: its files in the order read, their bytes concatenated.
struct TextCorpus {
  std::vector<std::string> files;
  std::string bytes;
};

/// Reads `source`: a file, a directory (its files, not its subdirectories')
/// or a glob pattern (`*`, `?`, `[...]`, `{a,b}`). Files are read in the byte
/// order of their paths; a symbolic link to a file read already is skipped
/// (GPL -> GPL-3). False with a one-line `error` naming the path where there
/// is no such path, no file, an unreadable file, or no byte at all.
bool readTextCorpus(const std::string &source, TextCorpus &out, std::string &error);

/// Where text_bytes' splits lie in a corpus of `bytes` bytes: train
/// [0, valBegin), val [valBegin, testBegin), test [testBegin, bytes); val and
/// test are the last 5% each (bytes / 20, rounded down).
struct TextSplits {
  int64_t valBegin = 0, testBegin = 0;
};
TextSplits textSplits(int64_t bytes);

/// masked_tokens' rules, one per sequence (MaskedTokens.cpp says which).
enum class MaskedRule { Count, Copy, Mirror };

/// One sample of masked_tokens before it is written into a batch.
struct MaskedSample {
  MaskedRule rule = MaskedRule::Count;
  std::vector<int32_t> original; // the sequence
  std::vector<int32_t> tokens;   // the sequence, mask id at the masked positions
  std::vector<int32_t> labels;   // the original token where masked, -100 elsewhere
};

/// Sample `index` of split `split` of masked_tokens under `seed`.
MaskedSample maskedTokensSample(uint64_t seed, const std::string &split, int64_t index,
                                int64_t vocab, int64_t seq, double maskRate, int64_t maskId);

/// synthetic_images' classes, in order: `classes: k` takes the first k.
inline constexpr const char *kImageShapes[] = {
    "horizontal bar", "vertical bar", "diagonal", "antidiagonal", "plus",
    "x",              "square",       "ring",     "corner",       "filled square"};

/// Image `index` of split `split` of synthetic_images under `seed`:
/// [channels, size, size] floats, row-major; its class in `label`.
std::vector<float> syntheticImage(uint64_t seed, const std::string &split, int64_t index,
                                  int64_t classes, int64_t channels, int64_t size, double noise,
                                  int32_t &label);

} // namespace tfc::rt

#endif // TFC_RUNTIME_DATASETS_H
