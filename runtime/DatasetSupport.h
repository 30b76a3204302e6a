//===- DatasetSupport.h - what every built-in dataset uses ----------------===//
//
// Internal to the datasets (runtime/Datasets.cpp and the files of the
// datasets beside it): the random draws of a sample, the checking of a
// `data` call's arguments, and the matching of a dataset's arrays with the
// model's inputs. Callers outside include Datasets.h.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_DATASETSUPPORT_H
#define TFC_RUNTIME_DATASETSUPPORT_H

#include "runtime/Datasets.h"
#include "runtime/Philox.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt::datasets {

//===----------------------------------------------------------------------===//
// Random draws
//===----------------------------------------------------------------------===//

/// FNV-1a: a stream's number from its name.
inline uint32_t streamId(const std::string &name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name)
    h = (h ^ c) * 16777619u;
  return h;
}

/// The draws of one sample: Philox4x32 with key = seed and counter =
/// {index lo, index hi, stream, block}, four words per block, in order.
class Draws {
public:
  Draws(uint64_t seed, uint32_t stream, uint64_t index)
      : key{uint32_t(seed), uint32_t(seed >> 32)}, stream(stream), index(index) {}

  uint32_t bits() {
    if (used == 4) {
      words = philox4x32({uint32_t(index), uint32_t(index >> 32), stream, block++}, key);
      used = 0;
    }
    return words[used++];
  }
  uint64_t bits64() {
    uint64_t hi = bits();
    return hi << 32 | bits();
  }
  /// Uniform in [0, n), n >= 1 (multiply-shift on 64 bits: bias < n / 2^64).
  uint64_t below(uint64_t n) {
    return uint64_t(static_cast<unsigned __int128>(bits64()) * n >> 64);
  }
  /// Uniform in [0, 1), 53 bits.
  double uniform() { return double(bits64() >> 11) * 0x1p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Standard normal: Box-Muller on 32-bit uniforms, both values used.
  double normal() {
    if (spare) {
      spare = false;
      return spareValue;
    }
    double u1 = (bits() + 0.5) * 0x1p-32, u2 = bits() * 0x1p-32;
    double r = std::sqrt(-2.0 * std::log(u1)), a = 2.0 * M_PI * u2;
    spare = true;
    spareValue = r * std::sin(a);
    return r * std::cos(a);
  }

private:
  std::array<uint32_t, 2> key;
  uint32_t stream;
  uint64_t index;
  uint32_t block = 0;
  std::array<uint32_t, 4> words{};
  int used = 4;
  bool spare = false;
  double spareValue = 0;
};

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

enum class ArgKind { Count, Positive, Real, Text }; // Count >= 0, Positive >= 1, Real >= 0

struct ArgSpec {
  const char *key;
  ArgKind kind;
};

/// Checks every argument against what dataset `name` accepts; an unknown
/// one is an error that lists the accepted keys.
bool checkArgs(const std::string &name, const DataArgs &args, const std::vector<ArgSpec> &accepted,
               std::string &error);

// Accessors for checked arguments.
int64_t intArg(const DataArgs &args, const std::string &key, int64_t fallback);
double realArg(const DataArgs &args, const std::string &key, double fallback);
std::string textArg(const DataArgs &args, const std::string &key);

//===----------------------------------------------------------------------===//
// Matching a dataset's arrays with the model's inputs
//===----------------------------------------------------------------------===//

/// One array of a dataset: what it is, and one sample's dtype and shape.
struct ArraySpec {
  std::string what;
  DType dtype;
  std::vector<int64_t> shape;
};

std::string arrayText(DType dtype, const std::vector<int64_t> &shape);

/// Whether the arrays match the inputs (count, dtype, per-sample shape); when
/// not, `error` names which and both shapes.
bool checkInputs(const std::string &name, const std::vector<ArraySpec> &arrays,
                 const std::vector<TensorSpec> &inputs, std::string &error);

/// Axis `axis` of one sample of input `i`, or `fallback` where it has none.
int64_t sampleDim(const std::vector<TensorSpec> &inputs, size_t i, size_t axis, int64_t fallback);

//===----------------------------------------------------------------------===//
// Splits
//===----------------------------------------------------------------------===//

inline const char *const kSplitNames[] = {"train", "val", "test"};

inline Split *splitNamed(Dataset &d, int k) {
  return k == 0 ? &d.train : k == 1 ? &d.val : &d.test;
}

/// Per-split sample counts: `train`, `val`, `test` or their defaults.
bool splitSizes(const std::string &name, const DataArgs &args, const int64_t (&defaults)[3],
                int64_t (&sizes)[3], std::string &error);

/// "237,320": thousands separated, for notices.
std::string groupedNumber(int64_t n);

//===----------------------------------------------------------------------===//
// The datasets made in files of their own
//===----------------------------------------------------------------------===//

bool makeTextBytes(const DataArgs &args, uint64_t seed, const std::vector<TensorSpec> &inputs,
                   Dataset &out, std::string &error);      // TextBytes.cpp
bool makeMaskedTokens(const DataArgs &args, uint64_t seed, const std::vector<TensorSpec> &inputs,
                      Dataset &out, std::string &error);   // MaskedTokens.cpp
bool makeSyntheticImages(const DataArgs &args, uint64_t seed,
                         const std::vector<TensorSpec> &inputs, Dataset &out,
                         std::string &error);              // SyntheticImages.cpp

} // namespace tfc::rt::datasets

#endif // TFC_RUNTIME_DATASETSUPPORT_H
