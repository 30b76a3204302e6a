//===- CudaDevice.cpp - a CUDA GPU as the runtime's Device ----------------===//

#include "runtime/cuda/CudaDevice.h"

#include <cstdint>

namespace tfc::rt::cuda {

namespace {
CUdeviceptr devicePointer(const void *memory) { return CUdeviceptr(uintptr_t(memory)); }
} // namespace

std::unique_ptr<CudaDevice> CudaDevice::open(int index, std::string &error) {
  std::unique_ptr<CudaDevice> device(new CudaDevice());
  device->driver_ = CudaDriver::load(error);
  if (!device->driver_)
    return nullptr;
  device->context_ = CudaContext::open(*device->driver_, index, error);
  if (!device->context_)
    return nullptr;
  return device;
}

CudaDevice::~CudaDevice() = default;

std::string CudaDevice::name() const { return "cuda:" + std::to_string(context_->index()); }

void CudaDevice::fail(const std::string &message) {
  if (pendingError_.empty())
    pendingError_ = message;
}

void *CudaDevice::allocate(size_t bytes) {
  std::string error;
  if (!context_->makeCurrent(error)) {
    fail(error);
    return nullptr;
  }
  CUdeviceptr memory = 0;
  // cuMemAlloc's memory is aligned to at least 256 bytes: enough for any tensor.
  if (!driver_->checkWith(driver_->api().memAlloc(&memory, bytes ? bytes : 1), error,
                          [&] { return "cuMemAlloc(" + formatBytes(bytes) + ")"; })) {
    fail(error);
    return nullptr;
  }
  ++liveAllocations_;
  return reinterpret_cast<void *>(uintptr_t(memory));
}

void CudaDevice::release(void *memory) {
  if (!memory)
    return;
  std::string error;
  if (!context_->makeCurrent(error) ||
      !driver_->check(driver_->api().memFree(devicePointer(memory)), "cuMemFree", error)) {
    fail(error);
    return;
  }
  --liveAllocations_;
}

void CudaDevice::copyIn(void *device, const void *host, size_t bytes) {
  std::string error;
  const DriverApi &api = driver_->api();
  // On the context's stream, and waited for: a later launch there sees it,
  // and the host may reuse `host` at once.
  if (!context_->makeCurrent(error) ||
      !driver_->checkWith(api.memcpyHtoDAsync(devicePointer(device), host, bytes,
                                              context_->stream()),
                          error, [&] { return "cuMemcpyHtoDAsync(" + formatBytes(bytes) + ")"; }) ||
      !driver_->check(api.streamSynchronize(context_->stream()), "cuStreamSynchronize", error))
    fail(error);
}

void CudaDevice::copyOut(void *host, const void *device, size_t bytes) {
  std::string error;
  const DriverApi &api = driver_->api();
  if (!context_->makeCurrent(error) ||
      !driver_->checkWith(api.memcpyDtoHAsync(host, devicePointer(device), bytes,
                                              context_->stream()),
                          error, [&] { return "cuMemcpyDtoHAsync(" + formatBytes(bytes) + ")"; }) ||
      !driver_->check(api.streamSynchronize(context_->stream()), "cuStreamSynchronize", error))
    fail(error);
}

bool CudaDevice::run(EntryFn entry, void **buffers, std::string &error) {
  if (!pendingError_.empty()) {
    error = pendingError_;
    pendingError_.clear();
    return false;
  }
  if (!context_->makeCurrent(error))
    return false;
  entry(buffers);
  return driver_->check(driver_->api().streamSynchronize(context_->stream()),
                        "cuStreamSynchronize (after the entry's launches)", error);
}

} // namespace tfc::rt::cuda
