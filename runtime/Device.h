//===- Device.h - where a compiled model's entries run -------------------===//
//
// The host part of the runtime (command line, training loop, datasets,
// files) keeps tensors in host memory; a device holds what an entry reads
// and writes and runs it. runtime/cpu/ is the device whose memory is the
// host's, so tensors pass in place, never copied; runtime/cuda/ (issue 26)
// copies them in and out. A binary links exactly one device, which
// createDevice() returns. A device is created unopened: nothing is loaded
// (no driver, no GPU needed) until open(), which Model calls before the first
// entry runs, so `info` and `init` work on any machine.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_DEVICE_H
#define TFC_RUNTIME_DEVICE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tfc::rt {

struct Manifest;

/// `tfc_entry_E(void **buffers)`: the entry's arguments, then its results,
/// then its arena, each a device pointer (runtime/Abi.h).
using EntryFn = void (*)(void **);

/// What the command line chooses of a device (a CUDA binary's --device and
/// --no-graph; the CPU has no choices).
struct DeviceOptions {
  int index = 0;             // which GPU
  bool graphs = true;        // replay each entry as a captured CUDA graph
  bool indexGiven = false;   // --device or TFC_CUDA_DEVICE; else a data-parallel
  int localRank = 0;         // rank takes its local rank (on its node) modulo
                             // the node's GPUs
  bool dataParallel = false; // training runs grad_step and apply_step (what
                             // device memory is planned for)
  bool tuned = true;         // open() applies the settings `tune` chose for
                             // this model on this device (runtime/Tune.h)
};

/// The ranks of a data-parallel run as a device's collective joins them:
/// this rank, and the host's exchanges with the others (runtime/
/// Distributed.h's, over MPI; with one rank they do nothing). Devices know
/// nothing of MPI: StepFeeds fills this.
struct RankGroup {
  int rank = 0, size = 1;
  /// `bytes` at `data` from rank 0 to every rank.
  std::function<bool(void *data, size_t bytes, std::string &error)> broadcast;
  /// `value` replaced by the largest of the ranks' values.
  std::function<bool(int &value, std::string &error)> agreeMax;
  /// `n` floats of host memory replaced by their mean over the ranks.
  std::function<bool(float *data, size_t n, std::string &error)> hostMean;
};

/// An entry's batch gathered on the device as part of its call (Device::run,
/// enqueue), from rows in device memory by an order there: before the
/// entry, row i of each input's `to` becomes row order[*first + i] of its
/// `rows` (`rowBytes` long) for i < count; then *first += advance. `first`
/// is device memory too, so the host never says which rows: a GPU captures
/// the gathers and the advance in the entry's graph, and each replay reads
/// the next batch (the training samples by the epoch's order; the host sets
/// *first only when the order starts over). Indices are the caller's
/// promise: inside `rows`.
struct BatchGather {
  struct Input {
    void *to = nullptr; // the entry's argument buffer
    const void *rows = nullptr;
    size_t rowBytes = 0;
    const int64_t *order = nullptr;
    size_t count = 0; // rows of `to`
  };
  std::vector<Input> inputs;
  int64_t *first = nullptr;
  int64_t advance = 0;
};

/// One operation of a sequence that Device::enqueueSequence queues as a
/// whole (a data-parallel step: grad_step, the ranks' mean of its exchange
/// buffer, a copy of its scores, apply_step): an entry on its buffers and
/// batch (enqueue's), a mean of `bytes` / 4 floats in place at `to`
/// (allreduceMean's), or a copy of `bytes` from `from` to `to` within device
/// memory (copyWithin's).
struct DeviceOp {
  enum class Kind { Entry, AllreduceMean, CopyWithin };
  Kind kind = Kind::Entry;
  EntryFn entry = nullptr;
  std::vector<void *> buffers;
  const BatchGather *batch = nullptr;
  void *to = nullptr;
  const void *from = nullptr;
  size_t bytes = 0;
};

/// A setting of a device that changes how an entry computes, never what it
/// computes but for rounding (a GPU's TFC_* switches: which kernel, how many
/// launches), and which `tune` may choose (runtime/Tune.h): its name, the
/// environment variable that sets it; the values it takes; the one in effect
/// and where that came from; whether it changes anything now (a switch of a
/// kind of operation no entry has called, or one that needs another on,
/// does not).
struct DeviceSetting {
  enum class Source { Default, Tuned, Environment };
  std::string name;
  std::vector<std::string> values;
  std::string value;
  Source source = Source::Default;
  bool applies = true;
};

/// One kind of operation of an entry as `bench --profile` timed it (a GPU:
/// each kernel, library call and copy between two events on its stream):
/// what it is, which kind (generated, hand-written, cuBLASLt, copy,
/// collective), how many calls and their device time together.
struct ProfiledOp {
  std::string name, kind;
  int64_t calls = 0;
  double ms = 0;
};

class Device {
public:
  virtual ~Device() = default;
  /// "cpu", "cuda:0": for messages and `info`.
  virtual std::string name() const = 0;
  /// Before open(): which device, and how entries run.
  virtual void configure(const DeviceOptions &) {}
  /// Gets ready to run `manifest`'s entries (a GPU: the driver, the device,
  /// the model's kernels); false with `error` set, e.g. "no CUDA driver:
  /// tried ...". Called once, before anything is allocated.
  virtual bool open(const Manifest &, std::string &) { return true; }
  /// Lines for `info` about the device and what it would use, without
  /// opening it (a GPU's name and memory, or why there is none); empty for
  /// the CPU.
  virtual std::vector<std::string> describe(const Manifest &) { return {}; }
  /// Whether device memory is host memory: then the host's tensors are the
  /// entry's buffers, and nothing is allocated or copied for them.
  virtual bool hostMemory() const = 0;
  /// `bytes` of device memory aligned for any tensor, or null.
  virtual void *allocate(size_t bytes) = 0;
  /// The same for memory the model's plan does not count (an epoch's
  /// samples): a GPU serves it from the plan's allocation only while that
  /// leaves room for the rest of the plan.
  virtual void *allocateOutsidePlan(size_t bytes) { return allocate(bytes); }
  virtual void release(void *memory) = 0;
  virtual void copyIn(void *device, const void *host, size_t bytes) = 0;
  virtual void copyOut(void *host, const void *device, size_t bytes) = 0;
  /// Whether [device, device + bytes) lies in one allocation, so that one
  /// copyOut may read it whole (Model's copies of several results at once);
  /// false where the device cannot tell.
  virtual bool oneAllocation(const void *device, size_t bytes) const {
    (void)device, (void)bytes;
    return false;
  }
  /// Copies `bytes` from device memory to device memory, after what was
  /// enqueued before (a GPU's stream); a failure as copyIn's.
  virtual void copyWithin(void *to, const void *from, size_t bytes) = 0;
  /// Whether run and enqueue can gather a batch (BatchGather) after open()
  /// (a GPU: its gather kernels were built into this runtime and loaded);
  /// without, the host fills batches.
  virtual bool canGatherRows() const { return true; }
  /// Runs `entry` on its `count` device `buffers`; false with `error` set on
  /// failure (also one of allocate, copyIn or copyOut before it). With
  /// `batch`, its gathers and advance first, as part of the same call (a
  /// GPU captures and replays them in the entry's graph).
  virtual bool run(EntryFn entry, void **buffers, size_t count, std::string &error,
                   const BatchGather *batch = nullptr) = 0;
  /// Like run, but may return before the entry finishes (a GPU's stream):
  /// what follows on the device (a copy in, the next entry) runs after it,
  /// and copyOut waits for it. A failure while it runs is reported by the
  /// next copyOut's takeError or the next run. By default, run.
  virtual bool enqueue(EntryFn entry, void **buffers, size_t count, std::string &error,
                       const BatchGather *batch = nullptr) {
    return run(entry, buffers, count, error, batch);
  }
  /// The first failure of allocate, release, copyIn or copyOut not yet
  /// reported, which those calls cannot return: false with `error` set.
  virtual bool takeError(std::string &) { return true; }
  /// Subnormal floats flushed to zero (the default) or kept (IEEE 754).
  virtual void setFlushDenormals(bool flush) = 0;

  /// Data-parallel training on a device whose memory is not the host's
  /// (runtime/Distributed.h; the host's memory is averaged on the host):
  /// joins `ranks` in a collective of this device, once (a GPU's NCCL
  /// communicator). Every rank calls it, after open(); false with `error`
  /// set, e.g. "no NCCL: tried ...". By default the device has none.
  virtual bool joinRanks(const RankGroup &, std::string &error) {
    error = "data-parallel training on device '" + name() + "' is not supported";
    return false;
  }
  /// Replaces `n` floats of device memory at `data` with their mean over
  /// the ranks, after what was enqueued before; what is enqueued after sees
  /// the mean (it may return before it is done, as enqueue). The same bits
  /// on every rank, and run to run with the same ranks on the same devices.
  /// After joinRanks.
  virtual bool allreduceMean(float *, size_t, std::string &error) {
    error = "device '" + name() + "' has no collective (joinRanks first)";
    return false;
  }

  /// Queues `ops` in order, each as enqueue, allreduceMean or copyWithin
  /// would (which is what this default does), may return before they
  /// finish; false with `error` set on the first failure. A GPU replays the
  /// whole sequence as one captured graph, the collective inside it, as it
  /// replays an entry's (CudaDevice.h).
  virtual bool enqueueSequence(const std::vector<DeviceOp> &ops, std::string &error) {
    for (const DeviceOp &op : ops) {
      switch (op.kind) {
      case DeviceOp::Kind::Entry:
        if (!enqueue(op.entry, const_cast<void **>(op.buffers.data()), op.buffers.size(), error,
                     op.batch))
          return false;
        break;
      case DeviceOp::Kind::AllreduceMean:
        if (!allreduceMean(static_cast<float *>(op.to), op.bytes / sizeof(float), error))
          return false;
        break;
      case DeviceOp::Kind::CopyWithin:
        copyWithin(op.to, op.from, op.bytes);
        if (!takeError(error))
          return false;
        break;
      }
    }
    return true;
  }

  /// The device's settings in the order they are applied (none: the CPU).
  virtual std::vector<DeviceSetting> settings() { return {}; }
  /// Sets `name` to `value`, as its environment variable would at open(),
  /// marked as coming from `source`; what is captured (a GPU's graphs) is
  /// made again. False with `error` for a name or value the device lacks.
  virtual bool applySetting(const std::string &name, const std::string &value,
                            DeviceSetting::Source source, std::string &error) {
    (void)value, (void)source;
    error = "device '" + this->name() + "' has no setting " + name;
    return false;
  }
  /// What a tuned choice of settings holds for: this kind of device with
  /// its driver and libraries, and the model opened on it (its manifest and
  /// kernels); "" where there is nothing to tune. After open().
  virtual std::string tuningKey() const { return ""; }

  /// `bench --profile`: from here on the entries run eagerly (no graph
  /// replay) with every operation timed on the device by itself, until
  /// stopProfile gives them, grouped by name in the order of their first
  /// call. False with `error` where the device cannot (the CPU: an entry
  /// is one host function).
  virtual bool startProfile(std::string &error) {
    error = "bench --profile times each kernel of a GPU binary; device '" + name() +
            "' runs an entry as one host function (compile with --target=cuda)";
    return false;
  }
  virtual bool stopProfile(std::vector<ProfiledOp> &, std::string &error) {
    error = "no profile was started";
    return false;
  }
  /// After stopProfile: the operations on each call's longest path of ones
  /// that wait for each other (tf-graph-dependencies), in ms a call; what a
  /// graph running the others beside them could take at best. Negative
  /// where the entries named no dependencies.
  virtual double profiledLongestPathMs() const { return -1; }
};

/// The device this binary was built for.
std::unique_ptr<Device> createDevice();

} // namespace tfc::rt

#endif // TFC_RUNTIME_DEVICE_H
