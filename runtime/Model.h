//===- Model.h - a compiled model: its manifest, parameters and entries ---===//
//
// The generated object defines `tfc_manifest` and one `tfc_entry_E(void **)`
// per entry; this class binds them to tensors. Every shape is checked here,
// once, so generated code can trust its static shapes.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_MODEL_H
#define TFC_RUNTIME_MODEL_H

#include "runtime/Device.h"
#include "runtime/Manifest.h"
#include "runtime/Tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tfc::rt {

class Model {
public:
  Model() = default;
  /// Gives the entries' device memory back (a GPU's before its context goes).
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  /// Reads the manifest linked into this binary.
  bool load(std::string &error);
  const Manifest &manifest() const { return manifest_; }

  /// Parameters in manifest order: empty tensors until initParams or
  /// loadParams fills them.
  std::vector<Tensor> &params() { return params_; }
  /// Draws every parameter with its initialiser: a pure function of the
  /// seed and the parameter's name (Philox4x32), so adding a layer does not
  /// change the others' draws.
  void initParams(uint64_t seed);
  /// Loads every parameter by name; a missing name, a wrong dtype or shape
  /// is an error naming it. Tensors the model does not use are ignored.
  bool loadParams(const std::string &path, std::string &error);
  bool saveParams(const std::string &path, std::string &error) const;

  /// Runs `entry` on exactly one compiled batch. `feeds` holds the entry's
  /// non-parameter arguments by "kind:name" or by name (shapes are checked
  /// here); parameters come from params(). Results are in entry order;
  /// `results` is reused when its tensors already have the right shapes.
  bool run(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
           std::vector<Tensor> &results, std::string &error);

  /// The device entries run on (load() creates it, unopened).
  Device &device() { return *device_; }
  /// Opens the device for this model, once (run() does it when needed): a
  /// GPU's driver, device and kernels. The first answer stands.
  bool openDevice(std::string &error);

private:
  /// An entry's device memory: its arena last, and before it (on a device
  /// whose memory is not the host's) a buffer per argument and result.
  struct EntryMemory {
    std::vector<void *> buffers;
  };
  Manifest manifest_;
  std::vector<Tensor> params_;
  std::unique_ptr<Device> device_;
  bool deviceOpened_ = false, deviceOpenTried_ = false;
  std::string deviceError_;
  std::map<std::string, EntryMemory> memory_; // by entry name
};

/// "1,234,567".
std::string withThousands(int64_t n);

} // namespace tfc::rt

#endif // TFC_RUNTIME_MODEL_H
