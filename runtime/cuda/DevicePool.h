//===- DevicePool.h - a model's device memory as one allocation ----------===//
//
// A GPU model's memory is known before it runs: its parameters, optimizer
// state, each entry's arguments and results, the arena the entries share
// (the static memory plan, runtime/Manifest.h) and the cuBLASLt workspace. CudaDevice makes one
// device allocation of that size when it opens and serves allocate() from it
// through this pool; what does not fit (an epoch's samples, more than the
// plan) gets an allocation of its own. Blocks are 256-byte aligned, as
// cuMemAlloc's, found first-fit, and merged with free neighbours when given
// back. The pool only does the arithmetic of offsets: no device calls.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_DEVICEPOOL_H
#define TFC_RUNTIME_CUDA_DEVICEPOOL_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

namespace tfc::rt::cuda {

class DevicePool {
public:
  /// Every block's alignment and granularity.
  static constexpr size_t kAlignment = 256;
  static size_t rounded(size_t bytes) {
    return ((bytes ? bytes : 1) + (kAlignment - 1)) & ~(kAlignment - 1);
  }

  /// Manages [base, base + bytes), all free.
  void reset(uintptr_t base, size_t bytes);
  uintptr_t base() const { return base_; }
  size_t bytes() const { return bytes_; }
  /// Whether `address` lies in the pool's memory.
  bool contains(uintptr_t address) const {
    return bytes_ && address >= base_ && address < base_ + bytes_;
  }
  /// A block of at least `bytes`: its address, or nullopt when none is free.
  std::optional<uintptr_t> take(size_t bytes);
  /// Gives back the block at `address`; false when no block starts there.
  bool give(uintptr_t address);
  /// Bytes in blocks taken and not given back.
  size_t inUse() const { return inUse_; }

private:
  uintptr_t base_ = 0;
  size_t bytes_ = 0, inUse_ = 0;
  std::map<size_t, size_t> free_, used_; // offset -> bytes
};

} // namespace tfc::rt::cuda

#endif // TFC_RUNTIME_CUDA_DEVICEPOOL_H
