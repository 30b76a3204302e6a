//===- CudaDevice.h - a CUDA GPU as the runtime's Device -------------------===//
//
// runtime/Device.h on the driver API (Driver.h): device memory from
// cuMemAlloc, copies on the context's stream, an entry run on the host (its
// launches go to the stream) and then waited for. Not yet what
// createDevice() returns: the compiled entries' launches (tfc_cuda_launch)
// and the single-arena, CUDA-graph plan of issue 26 come later.
//
// Device's allocate/copyIn/copyOut have no error channel: a failure there is
// kept (the first one) and returned by the next run(), and by error().
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_CUDADEVICE_H
#define TFC_RUNTIME_CUDA_CUDADEVICE_H

#include "runtime/Device.h"
#include "runtime/cuda/Driver.h"

#include <memory>
#include <string>

namespace tfc::rt::cuda {

class CudaDevice final : public Device {
public:
  /// Loads the driver (Driver.h's search), initialises it and opens device
  /// `index`; null with `error` set on any failure ("no CUDA driver: ...",
  /// "cuInit: ...", "CUDA device 3 does not exist: ...").
  static std::unique_ptr<CudaDevice> open(int index, std::string &error);
  ~CudaDevice() override;

  std::string name() const override;
  bool hostMemory() const override { return false; }
  void *allocate(size_t bytes) override;
  void release(void *memory) override;
  void copyIn(void *device, const void *host, size_t bytes) override;
  void copyOut(void *host, const void *device, size_t bytes) override;
  bool run(EntryFn entry, void **buffers, std::string &error) override;
  /// Kept for the kernels to come; GPU code keeps subnormals today.
  void setFlushDenormals(bool flush) override { flushDenormals_ = flush; }
  bool flushDenormals() const { return flushDenormals_; }

  /// The first failure of allocate/release/copyIn/copyOut not yet reported
  /// by run(), or "".
  const std::string &error() const { return pendingError_; }
  /// Allocations not yet released.
  size_t liveAllocations() const { return liveAllocations_; }
  CudaDriver &driver() const { return *driver_; }
  CudaContext &context() const { return *context_; }

private:
  CudaDevice() = default;
  void fail(const std::string &message);

  std::unique_ptr<CudaDriver> driver_;
  std::unique_ptr<CudaContext> context_; // destroyed before driver_
  std::string pendingError_;
  size_t liveAllocations_ = 0;
  bool flushDenormals_ = true;
};

} // namespace tfc::rt::cuda

#endif // TFC_RUNTIME_CUDA_CUDADEVICE_H
