//===- Device.h - where a compiled model's entries run -------------------===//
//
// The host part of the runtime (command line, training loop, datasets,
// files) keeps tensors in host memory; a device holds what an entry reads
// and writes and runs it. runtime/cpu/ is the device whose memory is the
// host's, so tensors pass in place, never copied; runtime/cuda/ (issue 26)
// will copy them in and out. A binary links exactly one device, which
// createDevice() returns.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_DEVICE_H
#define TFC_RUNTIME_DEVICE_H

#include <cstddef>
#include <memory>
#include <string>

namespace tfc::rt {

/// `tfc_entry_E(void **buffers)`: the entry's arguments, then its results,
/// then its arena, each a device pointer (runtime/Abi.h).
using EntryFn = void (*)(void **);

class Device {
public:
  virtual ~Device() = default;
  /// "cpu", "cuda:0": for messages and `info`.
  virtual std::string name() const = 0;
  /// Whether device memory is host memory: then the host's tensors are the
  /// entry's buffers, and nothing is allocated or copied for them.
  virtual bool hostMemory() const = 0;
  /// `bytes` of device memory aligned for any tensor, or null.
  virtual void *allocate(size_t bytes) = 0;
  virtual void release(void *memory) = 0;
  virtual void copyIn(void *device, const void *host, size_t bytes) = 0;
  virtual void copyOut(void *host, const void *device, size_t bytes) = 0;
  /// Runs `entry` on device `buffers`; false with `error` set on failure.
  virtual bool run(EntryFn entry, void **buffers, std::string &error) = 0;
  /// Subnormal floats flushed to zero (the default) or kept (IEEE 754).
  virtual void setFlushDenormals(bool flush) = 0;
};

/// The device this binary was built for.
std::unique_ptr<Device> createDevice();

} // namespace tfc::rt

#endif // TFC_RUNTIME_DEVICE_H
