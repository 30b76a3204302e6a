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
  // Not on the training path here (the host fills batches in place), but
  // defined as on every device: a memcpy a row.
  void gatherRows(void *to, const void *rows, size_t rowBytes, const int64_t *indices,
                  size_t count) override {
    for (size_t i = 0; i < count; ++i)
      std::memcpy(static_cast<char *>(to) + i * rowBytes,
                  static_cast<const char *>(rows) + size_t(indices[i]) * rowBytes, rowBytes);
  }
  bool run(EntryFn entry, void **buffers, size_t, std::string &) override {
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
  // The indices are read from this device's own memory, as a GPU's kernel
  // reads them from its: the host's side of the gather (which rows, where
  // the order starts, a rank's share) is checked here bit for bit.
  void gatherRows(void *to, const void *rows, size_t rowBytes, const int64_t *indices,
                  size_t count) override {
    cpu_.gatherRows(to, rows, rowBytes, indices, count);
  }
  bool run(EntryFn entry, void **buffers, size_t count, std::string &error) override {
    return cpu_.run(entry, buffers, count, error);
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
