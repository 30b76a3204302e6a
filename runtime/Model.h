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

/// A tensor that stays on a device whose memory is not the host's between
/// entries (a parameter, an optimizer buffer): its device buffer, a spare that
/// a training step writes the next value into unless it writes over the
/// buffer (the two then swap, so nothing is copied), and which of the host's
/// and the device's copies is current.
/// Each side gets a copy only when it needs one.
struct DeviceCopy {
  void *current = nullptr, *spare = nullptr;
  bool onHost = true;    // the host's tensor holds the value
  bool onDevice = false; // `current` holds it
};

/// A non-parameter argument kept on the device by Model::runStep: the host's
/// tensor (its shape, and its value when `copy->onHost`) and its device copy.
struct KeptValue {
  Tensor *host = nullptr;
  DeviceCopy *copy = nullptr;
};

/// Rows of device memory that an argument is gathered from (Device.h's
/// BatchGather): its row i is row order[*first + i] of `rows`, rowBytes
/// long; `order` (device memory) holds int64 row numbers.
struct RowGather {
  const void *rows = nullptr;
  size_t rowBytes = 0;
  const int64_t *order = nullptr;
};

/// A batch gathered on the device as part of an entry's call: its inputs'
/// rows by feed key or name, and the order's first row for this call in
/// device memory (`first`), which the call advances by `advance` for the
/// next (so a GPU's graph replays the gathers unchanged).
struct DeviceBatch {
  std::map<std::string, RowGather> inputs;
  int64_t *first = nullptr;
  int64_t advance = 0;
};

/// Device memory that Model::runStep's caller holds for some of an entry's
/// values, by feed key ("kind:name"; an input also by its name). An argument
/// in `batch` is gathered from there on the device (the batch, from the
/// training samples on the device by the epoch's order); one in `readAt` is
/// read there in place, nothing copied (the averaged gradients of a
/// data-parallel step); a result in `writeAt` is written there instead of
/// into a result slot (grad_step's gradients, loss and metrics, into the one
/// buffer the ranks average).
struct DevicePlacement {
  DeviceBatch batch;
  std::map<std::string, const void *> readAt;
  std::map<std::string, void *> writeAt;
};

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

  /// Parameters in manifest order, the host's copies: empty tensors until
  /// initParams or loadParams fills them. On a device whose memory is not the
  /// host's the parameters stay on the device between entries and a training
  /// step (runStep) updates them there; this copies out what changed, so the
  /// host's copies are current, and lets the caller change them: they are
  /// copied in again before the next entry runs.
  std::vector<Tensor> &params();
  /// Makes the host's copies current (copies out what a step changed) and
  /// keeps the device's: for a checkpoint. False with `error` set when a
  /// copy failed.
  bool syncParams(std::string &error);
  /// The host's copies as they are: current after syncParams.
  const std::vector<Tensor> &hostParams() const { return params_; }
  /// Draws every parameter with its initialiser: a pure function of the
  /// seed and the parameter's name (Philox4x32), so adding a layer does not
  /// change the others' draws.
  void initParams(uint64_t seed);
  /// Loads every parameter by name; a missing name, a wrong dtype or shape
  /// is an error naming it. Tensors the model does not use are ignored.
  bool loadParams(const std::string &path, std::string &error);
  /// Writes the parameters (synced from the device first).
  bool saveParams(const std::string &path, std::string &error);

  /// Runs `entry` on exactly one compiled batch. `feeds` holds the entry's
  /// non-parameter arguments by "kind:name" or by name (shapes are checked
  /// here); parameters come from params(). Results are in entry order;
  /// `results` is reused when its tensors already have the right shapes.
  /// On a device whose memory is not the host's, an argument in `batch`
  /// (by feed key or name) is gathered there as part of the call (an
  /// evaluation batch from its split's samples on the device) instead of
  /// copied in; its feed gives only its shape.
  bool run(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
           std::vector<Tensor> &results, std::string &error,
           const DeviceBatch *batch = nullptr);

  /// The step that a training loop or `bench` runs over and over, on a
  /// device whose memory is not the host's (never called on host memory:
  /// StepFeeds swaps host tensors there). Parameters and the arguments in
  /// `kept` (by feed key: the optimizer state) are read on the device, copied
  /// in only when the host changed them; a parameter or state result, named
  /// as an argument, is written over it where the entry says so
  /// (TensorSpec::inPlaceOf), else into that argument's spare, which then
  /// becomes its current copy (the swap: nothing is copied). Every other
  /// argument comes from `feeds` and is copied in (the batch, the step, the
  /// seed: a few bytes besides the batch). Every other result stays on the
  /// device in result slot `slot` until readSlot copies it out. The entry
  /// may still be running when this returns (a GPU's stream): nothing waits
  /// for it until something is copied out. Values in `placed` are read or
  /// written in the caller's device memory (DevicePlacement): an argument
  /// gathered from there takes only its shape from its feed; one read there
  /// in place needs no feed at all (the caller vouches for its size).
  bool runStep(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
               const std::map<std::string, KeptValue> &kept, size_t slot, std::string &error,
               const DevicePlacement &placed = {});
  /// runStep but the launch: the entry as a device operation (`step`, its
  /// batch's gathers in `gathers`, which must outlive it), for the caller to
  /// queue with others (Device::enqueueSequence: a data-parallel step). Its
  /// arguments are copied in now, and its kept results' swaps done, so a
  /// prepareStep after it reads this step's results, as after runStep.
  bool prepareStep(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
                   const std::map<std::string, KeptValue> &kept, size_t slot, BatchGather &gathers,
                   DeviceOp &step, std::string &error, const DevicePlacement &placed = {});
  /// Copies out the results runStep left in `slot` (waiting for the step):
  /// `results` in entry order, the ones runStep swapped or placed (in the
  /// caller's memory) empty tensors.
  bool readSlot(const EntrySpec &entry, size_t slot, std::vector<Tensor> &results,
                std::string &error) {
    return readSlots(entry, {slot}, {&results}, error, /*oneCopy=*/false);
  }
  /// The same for several slots at once (results[i] slot slots[i]'s). With
  /// oneCopy, one copy and one wait for all where their buffers lie within
  /// kSlotsOneCopyBytes of each other, as a step's scalars do, so that a
  /// readBack of many steps waits once, not once a result a step (bytes
  /// between them are read too); else each result on its own.
  bool readSlots(const EntrySpec &entry, const std::vector<size_t> &slots,
                 const std::vector<std::vector<Tensor> *> &results, std::string &error,
                 bool oneCopy);
  static constexpr size_t kSlotsOneCopyBytes = 64 << 10;
  /// A kept value's device copy: allocated, and copied in unless current.
  bool toDevice(const Tensor &host, DeviceCopy &copy, std::string &error);
  /// Copies a kept value out unless the host's copy is current (waits for
  /// the device); failures are reported by the device's takeError.
  void toHost(Tensor &host, DeviceCopy &copy);
  /// Gives a kept value's device memory back.
  void release(DeviceCopy &copy);

  /// The device entries run on (load() creates it, unopened).
  Device &device() { return *device_; }
  /// Opens the device for this model, once (run() does it when needed): a
  /// GPU's driver, device and kernels. The first answer stands.
  bool openDevice(std::string &error);

private:
  /// A result to copy out: its host bytes, its device buffer.
  struct OutPiece {
    unsigned char *host;
    const unsigned char *device;
    size_t bytes;
  };
  /// Copies `pieces` out, with oneCopy as one copy of their span where it
  /// is at most kSlotsOneCopyBytes (readSlots, run).
  void copyOut(const std::vector<OutPiece> &pieces, bool oneCopy);
  /// An entry's device memory, each buffer allocated at its first use: on a
  /// device whose memory is not the host's, a buffer per argument copied in
  /// (not the kept ones) and per result and result slot (not the swapped
  /// ones). The arena is the model's one (arena_).
  struct EntryMemory {
    std::vector<void *> args;
    std::vector<std::vector<void *>> slots; // [slot][result]
    std::vector<bool> swapped; // per result: runStep's into a kept value or placed: no slot
  };
  /// The entry's arguments, found and shape-checked: `feeds` by "kind:name"
  /// or name, parameters from params(), and `kept` first when given; null
  /// for an argument that `readAt` holds on the device.
  bool bindArgs(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
                const std::map<std::string, KeptValue> *kept, std::vector<const Tensor *> &args,
                std::string &error, const std::map<std::string, const void *> *readAt = nullptr);
  /// `*buffer`, allocated with `bytes` at its first use; false with `error`.
  bool deviceBuffer(void *&buffer, size_t bytes, const EntrySpec &entry, std::string &error);
  /// Argument `arg`'s `bytes` into its device buffer `to`: gathered by
  /// `batch`'s entry for it (added to `gathers`, which the call launches
  /// before the entry), else copied in from `host`.
  bool fillArgument(const TensorSpec &arg, void *to, const Tensor &host, const DeviceBatch *batch,
                    BatchGather &gathers, std::string &error);
  EntryMemory &memoryFor(const EntrySpec &entry, size_t slots);
  /// The arena every entry runs in, allocated at the first entry's call with
  /// the largest entry's size (Manifest::sharedArenaAllocation): entries run
  /// one after another, on a GPU in one stream, and keep nothing there.
  bool sharedArena(const EntrySpec &entry, void *&arena, std::string &error);

  Manifest manifest_;
  std::vector<Tensor> params_;
  std::vector<DeviceCopy> paramCopies_; // on a device whose memory is not the host's
  std::unique_ptr<Device> device_;
  bool deviceOpened_ = false, deviceOpenTried_ = false;
  std::string deviceError_;
  std::map<std::string, EntryMemory> memory_; // by entry name
  void *arena_ = nullptr;                     // every entry's (sharedArena)
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_MODEL_H
