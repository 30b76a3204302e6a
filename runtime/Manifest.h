//===- Manifest.h - what a compiled model says about itself ---------------===//
//
// tf-pack-entry-abi embeds `tfc_manifest`, a JSON string, in every compiled
// model: the model's name and batch, its parameters (with initialisers), its
// inputs, and for each entry its C symbol, arguments, results and arena size.
// The runtime is generic; this is all it knows of a model.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_MANIFEST_H
#define TFC_RUNTIME_MANIFEST_H

#include "runtime/Abi.h"
#include "runtime/Tensor.h"

#include <map>
#include <algorithm>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tfc::rt {

/// "KIND:NAME", how feeds name an entry argument ("state:w.exp_avg").
inline std::string feedKey(abi::ValueKind kind, const std::string &name) {
  return std::string(abi::kindName(kind)) + ":" + name;
}

struct TensorSpec {
  abi::ValueKind kind = abi::ValueKind::Input; // what the entry argument or result is
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Model inputs some op indexes with (embedding ids, one_hot tokens,
  /// cross_entropy labels): every value must lie in [0, indexBound). 0: any.
  int64_t indexBound = 0;
  /// A result the entry writes over argument `inPlaceOf` (its index; -1:
  /// a buffer of its own): the caller passes that argument's buffer as the
  /// result's too, and reads the result there (tf-updates-in-place).
  int64_t inPlaceOf = -1;
  int64_t numel() const;
  std::string feedKey() const { return rt::feedKey(kind, name); }
};

struct InitSpec {
  std::string kind = "zeros"; // zeros|ones|uniform|normal
  double scale = 0;           // uniform(-scale, scale), normal(0, scale)
};

struct ParamSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  InitSpec init;
  int64_t numel() const;
};

struct EntrySpec {
  std::string name, symbol;
  int64_t arenaBytes = 0;
  std::vector<TensorSpec> args, results;
  /// What tf-graph-dependencies found: the entry's device ops and the most
  /// on one path of ops that wait for each other (0: none found).
  int64_t graphOps = 0, graphLongestPath = 0;
  /// The arena as a device allocates it: at least 64 bytes, a multiple of 64.
  size_t arenaAllocation() const {
    return size_t(arenaBytes < 64 ? 64 : (arenaBytes + 63) / 64 * 64);
  }
};

/// A constant of the .tf file's `train` block.
using TrainValue = std::variant<int64_t, double, bool, std::string>;

/// `name(key: value, ...)`: a dataset, optimizer or schedule.
struct TrainCallSpec {
  std::string name;
  std::map<std::string, TrainValue> args;
  /// A numeric argument, or `fallback` when absent.
  double number(const std::string &key, double fallback) const;
};

/// The `train` block as compiled in (what `train` uses unless flags override).
struct TrainSpec {
  std::optional<TrainCallSpec> data, optimizer, schedule;
  std::optional<int64_t> batch, epochs, seed;
  std::optional<double> clipGradNorm;
  std::optional<std::string> best; // "NAME", "min:NAME" or "max:NAME"
};

/// What `tfc compile --cpu` compiled for (runtime/CpuCheck.h checks it).
struct CpuSpec {
  std::string name;                  // the --cpu value: "native" or an LLVM CPU name
  std::string target;                // the CPU LLVM compiled for
  std::vector<std::string> features; // what the generated code may use
};

/// A CUDA model's kernels (tfc compile --target=cuda): tfc_cuda_launch's
/// kernel indices name them.
struct CudaSpec {
  std::vector<std::string> archs;   // the GPUs it has SASS for, "sm_90" (none: PTX only)
  std::string image;                // tfc_cuda_image's format: "fatbin" or "ptx"
  std::vector<std::string> kernels; // kernel i's name in the image
  /// Kernel i's source ("train_step: reverse.tf:12,14"), or none (a model
  /// compiled before they were recorded).
  std::vector<std::string> kernelSources;
  /// The GEMMs' precision (tfc compile --precision): "fp32" or "tf32"
  /// (cuBLASLt on TF32 tensor cores); every other kernel is fp32.
  std::string precision = abi::key::kPrecisionFp32;
  /// Each entry one persistent kernel (tfc compile --persistent-kernels):
  /// every GEMM and layer generated code, no cuBLASLt call.
  bool persistent = false;
  /// The archs whose SASS starts every kernel by waiting for the kernel
  /// before it (tf-await-previous-kernel): programmatic dependent launch.
  std::vector<std::string> dependentLaunch;
};

struct Manifest {
  std::string model;
  int64_t batch = 1;
  std::vector<ParamSpec> params;
  std::vector<TensorSpec> inputs;
  std::vector<EntrySpec> entries;
  TrainSpec train;
  std::optional<CpuSpec> cpu; // absent when no `tfc compile` made it (tf-opt)
  std::string device = abi::key::kDeviceCpu; // where the entries run: "cpu" or "cuda"
  std::optional<CudaSpec> cuda;              // present exactly when device is "cuda"
  /// FNV-1a of the manifest's JSON text: which compiled model this is, for
  /// what is kept about it outside the binary (runtime/Tune.h).
  uint64_t digest = 0;

  const EntrySpec *entry(std::string_view name) const;
  const ParamSpec *param(const std::string &name) const;
  /// The arena every entry shares (entries never run at once, and an arena
  /// holds only an entry's intermediates): the largest entry's allocation.
  size_t sharedArenaAllocation() const {
    size_t bytes = 64;
    for (const EntrySpec &e : entries)
      bytes = std::max(bytes, e.arenaAllocation());
    return bytes;
  }
  /// The model input `name` (with its index bound), or null.
  const TensorSpec *input(const std::string &name) const;
};

/// Parses the embedded manifest; false with `error` set when it is malformed
/// (a compiler/runtime mismatch, never a user error).
bool parseManifest(const char *json, Manifest &out, std::string &error);

} // namespace tfc::rt

#endif // TFC_RUNTIME_MANIFEST_H
