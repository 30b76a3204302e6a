//===- CpuDevice.cpp - the CPU as a device: host memory, entries in place -===//

#include "runtime/cpu/CpuDevice.h"
#include "runtime/FloatMode.h"

#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

namespace tfc::rt {

void *allocateArena(size_t bytes) {
  constexpr size_t kHugePage = size_t(2) << 20;
  if (bytes < kHugePage)
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void *p = std::aligned_alloc(kHugePage, rounded);
  if (p)
    madvise(p, rounded, MADV_HUGEPAGE); // a hint: without THP it changes nothing
  return p;
}

namespace {

/// A BatchGather in memory the host can read (the CPU's; cpu-copied's own):
/// a memcpy a row, the order and its first row read there as a GPU's
/// kernels read them in its memory, then the advance. Not on the CPU's
/// training path (the host fills batches in place), but defined as on every
/// device.
void gather(const BatchGather &batch) {
  const int64_t first = *batch.first;
  for (const BatchGather::Input &in : batch.inputs)
    for (size_t i = 0; i < in.count; ++i)
      std::memcpy(static_cast<char *>(in.to) + i * in.rowBytes,
                  static_cast<const char *>(in.rows) +
                      size_t(in.order[first + int64_t(i)]) * in.rowBytes,
                  in.rowBytes);
  *batch.first += batch.advance;
}

class CpuDevice final : public Device {
public:
  std::string name() const override { return "cpu"; }
  bool hostMemory() const override { return true; }
  void *allocate(size_t bytes) override { return allocateArena(bytes); }
  void release(void *memory) override { std::free(memory); }
  void copyIn(void *device, const void *host, size_t bytes) override {
    std::memcpy(device, host, bytes);
  }
  void copyOut(void *host, const void *device, size_t bytes) override {
    std::memcpy(host, device, bytes);
  }
  void copyWithin(void *to, const void *from, size_t bytes) override {
    std::memcpy(to, from, bytes);
  }
  bool run(EntryFn entry, void **buffers, size_t, std::string &,
           const BatchGather *batch) override {
    if (batch)
      gather(*batch);
    ScopedFloatMode floatMode(flushDenormals_);
    entry(buffers);
    return true;
  }
  void setFlushDenormals(bool flush) override { flushDenormals_ = flush; }
  // Its memory is the host's: the ranks' collective is the host's (MPI's),
  // on it (an entry has finished when run returns).
  bool joinRanks(const RankGroup &ranks, std::string &) override {
    hostMean_ = ranks.hostMean;
    return true;
  }
  bool allreduceMean(float *data, size_t n, std::string &error) override {
    if (!hostMean_)
      return Device::allreduceMean(data, n, error);
    return hostMean_(data, n, error);
  }

private:
  bool flushDenormals_ = true;
  std::function<bool(float *, size_t, std::string &)> hostMean_;
};

/// The CPU as if its memory were not the host's: every argument and result
/// is copied into memory of its own and back, as a GPU's are. It checks the
/// host side of that contract (Model::run's copies) on any machine; chosen
/// by TFC_DEVICE=cpu-copied.
class CopiedCpuDevice final : public Device {
public:
  std::string name() const override { return "cpu-copied"; }
  bool hostMemory() const override { return false; }
  void *allocate(size_t bytes) override { return cpu_.allocate(bytes); }
  void release(void *memory) override { cpu_.release(memory); }
  void copyIn(void *device, const void *host, size_t bytes) override {
    cpu_.copyIn(device, host, bytes);
  }
  void copyOut(void *host, const void *device, size_t bytes) override {
    cpu_.copyOut(host, device, bytes);
  }
  void copyWithin(void *to, const void *from, size_t bytes) override {
    cpu_.copyWithin(to, from, bytes);
  }
  // The order and its first row are read from this device's own memory, as
  // a GPU's kernels read them from its: the host's side of the gather (which
  // rows, where the order starts, a rank's share, the advance a call) is
  // checked here bit for bit.
  bool run(EntryFn entry, void **buffers, size_t count, std::string &error,
           const BatchGather *batch) override {
    return cpu_.run(entry, buffers, count, error, batch);
  }
  void setFlushDenormals(bool flush) override { cpu_.setFlushDenormals(flush); }
  // "Device" memory that is host memory underneath: the data-parallel
  // exchange is MPI's on it, as the CPU's, so the device path of a
  // data-parallel step (one buffer averaged in place) runs here numerically.
  bool joinRanks(const RankGroup &ranks, std::string &error) override {
    return cpu_.joinRanks(ranks, error);
  }
  bool allreduceMean(float *data, size_t n, std::string &error) override {
    return cpu_.allreduceMean(data, n, error);
  }

private:
  CpuDevice cpu_;
};

} // namespace

std::unique_ptr<Device> createCpuDevice() {
  const char *choice = std::getenv("TFC_DEVICE");
  if (choice && std::string(choice) == "cpu-copied")
    return std::make_unique<CopiedCpuDevice>();
  return std::make_unique<CpuDevice>();
}

// A CPU binary's device (a CUDA binary links runtime/cuda/'s instead).
std::unique_ptr<Device> createDevice() { return createCpuDevice(); }

} // namespace tfc::rt
