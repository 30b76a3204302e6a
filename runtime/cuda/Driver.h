//===- Driver.h - the CUDA driver API, loaded at run time -----------------===//
//
// tfc's CUDA runtime (issue 26) reaches the GPU through the driver API only,
// and never links libcuda: CudaDriver dlopen()s it when first asked, so a
// binary starts, and `info`/`init` work, on a machine with no GPU or driver.
// The library is $TFC_CUDA_DRIVER when set (tests point it at a fake driver),
// else libcuda.so.1 by the loader's search path, then where NVIDIA's packages
// and containers put it. Entry points come from cuGetProcAddress_v2 (CUDA 12+;
// cuGetProcAddress for 11.3+), each asked for the ABI version of the typedef
// tfc calls it through, with dlsym of the exported versioned name as the
// fallback.
//
// Every driver call goes through check(): a CUresult other than CUDA_SUCCESS
// becomes a one-line message naming the call and the error, e.g.
// `cuMemAlloc(1.2 GiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory`. Nothing
// here throws, and nothing runs before load() is called.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_DRIVER_H
#define TFC_RUNTIME_CUDA_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tfc::rt::cuda {

/// The oldest driver tfc runs on (CUDA 12.0: PTX 8.0, sm_90).
constexpr int kMinDriverVersion = 12000;

/// X(field, name, PFN type, ABI version, exported symbol): every driver entry
/// point tfc uses. `name` is what cuGetProcAddress is asked for and what
/// messages say; `symbol` is the versioned name libcuda exports (dlsym).
#define TFC_CUDA_DRIVER_FUNCTIONS(X)                                                  \
  X(getErrorName, "cuGetErrorName", PFN_cuGetErrorName_v6000, 6000, "cuGetErrorName")  \
  X(getErrorString, "cuGetErrorString", PFN_cuGetErrorString_v6000, 6000,              \
    "cuGetErrorString")                                                                \
  X(init, "cuInit", PFN_cuInit_v2000, 2000, "cuInit")                                  \
  X(driverGetVersion, "cuDriverGetVersion", PFN_cuDriverGetVersion_v2020, 2020,        \
    "cuDriverGetVersion")                                                              \
  X(deviceGetCount, "cuDeviceGetCount", PFN_cuDeviceGetCount_v2000, 2000,              \
    "cuDeviceGetCount")                                                                \
  X(deviceGet, "cuDeviceGet", PFN_cuDeviceGet_v2000, 2000, "cuDeviceGet")              \
  X(deviceGetName, "cuDeviceGetName", PFN_cuDeviceGetName_v2000, 2000,                 \
    "cuDeviceGetName")                                                                 \
  X(deviceTotalMem, "cuDeviceTotalMem", PFN_cuDeviceTotalMem_v3020, 3020,              \
    "cuDeviceTotalMem_v2")                                                             \
  X(deviceGetAttribute, "cuDeviceGetAttribute", PFN_cuDeviceGetAttribute_v2000, 2000,  \
    "cuDeviceGetAttribute")                                                            \
  X(devicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",                                \
    PFN_cuDevicePrimaryCtxRetain_v7000, 7000, "cuDevicePrimaryCtxRetain")              \
  X(devicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease",                              \
    PFN_cuDevicePrimaryCtxRelease_v11000, 11000, "cuDevicePrimaryCtxRelease_v2")       \
  X(ctxSetCurrent, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000, 4000,                 \
    "cuCtxSetCurrent")                                                                 \
  X(ctxSynchronize, "cuCtxSynchronize", PFN_cuCtxSynchronize_v2000, 2000,              \
    "cuCtxSynchronize")                                                                \
  X(memGetInfo, "cuMemGetInfo", PFN_cuMemGetInfo_v3020, 3020, "cuMemGetInfo_v2")       \
  X(memAlloc, "cuMemAlloc", PFN_cuMemAlloc_v3020, 3020, "cuMemAlloc_v2")               \
  X(memFree, "cuMemFree", PFN_cuMemFree_v3020, 3020, "cuMemFree_v2")                   \
  X(memcpyHtoD, "cuMemcpyHtoD", PFN_cuMemcpyHtoD_v3020, 3020, "cuMemcpyHtoD_v2")       \
  X(memcpyDtoH, "cuMemcpyDtoH", PFN_cuMemcpyDtoH_v3020, 3020, "cuMemcpyDtoH_v2")       \
  X(memcpyHtoDAsync, "cuMemcpyHtoDAsync", PFN_cuMemcpyHtoDAsync_v3020, 3020,           \
    "cuMemcpyHtoDAsync_v2")                                                            \
  X(memcpyDtoHAsync, "cuMemcpyDtoHAsync", PFN_cuMemcpyDtoHAsync_v3020, 3020,           \
    "cuMemcpyDtoHAsync_v2")                                                            \
  X(memcpyDtoDAsync, "cuMemcpyDtoDAsync", PFN_cuMemcpyDtoDAsync_v3020, 3020,           \
    "cuMemcpyDtoDAsync_v2")                                                            \
  X(memsetD8, "cuMemsetD8", PFN_cuMemsetD8_v3020, 3020, "cuMemsetD8_v2")               \
  X(moduleLoadData, "cuModuleLoadData", PFN_cuModuleLoadData_v2000, 2000,              \
    "cuModuleLoadData")                                                                \
  X(moduleUnload, "cuModuleUnload", PFN_cuModuleUnload_v2000, 2000, "cuModuleUnload")  \
  X(moduleGetFunction, "cuModuleGetFunction", PFN_cuModuleGetFunction_v2000, 2000,     \
    "cuModuleGetFunction")                                                             \
  X(launchKernel, "cuLaunchKernel", PFN_cuLaunchKernel_v4000, 4000, "cuLaunchKernel")  \
  /* persistent kernels: launched cooperatively, as many blocks as fit */              \
  X(launchKernelEx, "cuLaunchKernelEx", PFN_cuLaunchKernelEx_v11060, 11060,            \
    "cuLaunchKernelEx")                                                                \
  X(occupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", \
    PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050, 6050,                       \
    "cuOccupancyMaxActiveBlocksPerMultiprocessor")                                     \
  X(streamCreate, "cuStreamCreate", PFN_cuStreamCreate_v2000, 2000, "cuStreamCreate")  \
  X(streamDestroy, "cuStreamDestroy", PFN_cuStreamDestroy_v4000, 4000,                 \
    "cuStreamDestroy_v2")                                                              \
  X(streamSynchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize_v2000, 2000,     \
    "cuStreamSynchronize")                                                             \
  X(funcSetAttribute, "cuFuncSetAttribute", PFN_cuFuncSetAttribute_v9000, 9000,        \
    "cuFuncSetAttribute")                                                              \
  X(streamBeginCapture, "cuStreamBeginCapture", PFN_cuStreamBeginCapture_v10010, 10010, \
    "cuStreamBeginCapture_v2")                                                         \
  X(streamEndCapture, "cuStreamEndCapture", PFN_cuStreamEndCapture_v10000, 10000,      \
    "cuStreamEndCapture")                                                              \
  /* graph dependencies: a captured node waits for the ops it depends on */            \
  X(streamGetCaptureInfo, "cuStreamGetCaptureInfo", PFN_cuStreamGetCaptureInfo_v11030, \
    11030, "cuStreamGetCaptureInfo_v2")                                                \
  X(streamUpdateCaptureDependencies, "cuStreamUpdateCaptureDependencies",              \
    PFN_cuStreamUpdateCaptureDependencies_v11030, 11030,                               \
    "cuStreamUpdateCaptureDependencies")                                               \
  X(graphInstantiate, "cuGraphInstantiateWithFlags",                                   \
    PFN_cuGraphInstantiateWithFlags_v11040, 11040, "cuGraphInstantiateWithFlags")      \
  X(graphLaunch, "cuGraphLaunch", PFN_cuGraphLaunch_v10000, 10000, "cuGraphLaunch")    \
  X(graphExecDestroy, "cuGraphExecDestroy", PFN_cuGraphExecDestroy_v10000, 10000,      \
    "cuGraphExecDestroy")                                                              \
  X(graphDestroy, "cuGraphDestroy", PFN_cuGraphDestroy_v10000, 10000, "cuGraphDestroy") \
  X(eventCreate, "cuEventCreate", PFN_cuEventCreate_v2000, 2000, "cuEventCreate")     \
  X(eventRecord, "cuEventRecord", PFN_cuEventRecord_v2000, 2000, "cuEventRecord")     \
  X(eventSynchronize, "cuEventSynchronize", PFN_cuEventSynchronize_v2000, 2000,        \
    "cuEventSynchronize")                                                              \
  X(eventElapsedTime, "cuEventElapsedTime", PFN_cuEventElapsedTime_v2000, 2000,        \
    "cuEventElapsedTime")                                                              \
  X(eventDestroy, "cuEventDestroy", PFN_cuEventDestroy_v4000, 4000, "cuEventDestroy_v2")

/// The resolved entry points, called as `driver.api().memAlloc(&p, n)`.
struct DriverApi {
#define TFC_CUDA_FIELD(field, name, type, version, symbol) type field = nullptr;
  TFC_CUDA_DRIVER_FUNCTIONS(TFC_CUDA_FIELD)
#undef TFC_CUDA_FIELD
};

/// "512 B", "3.0 KiB", "1.2 GiB": sizes in messages.
std::string formatBytes(size_t bytes);

/// The libraries load() tries, in order, when $TFC_CUDA_DRIVER is unset.
const std::vector<std::string> &defaultDriverCandidates();

/// dlopen()s the first of `candidates` that loads (RTLD_NOW | RTLD_LOCAL):
/// its handle, with `path` set; or null, with `tried` listing every
/// candidate and, for a failure other than a missing file (wrong ELF
/// class, a missing dependency), dlerror()'s reason. The driver, cuBLASLt
/// and NCCL are all loaded this way.
void *openFirstLibrary(const std::vector<std::string> &candidates, std::string &path,
                       std::string &tried);

class CudaDriver {
public:
  /// Loads the driver and resolves every entry point (cuInit is not called).
  /// Null with `error` set when the library is not found or lacks an entry
  /// point: "no CUDA driver: tried libcuda.so.1 (...), ...; running on a GPU
  /// needs the NVIDIA driver", "the CUDA driver /x/libcuda.so.1 has no
  /// cuLaunchKernel: it is too old (...)".
  static std::unique_ptr<CudaDriver> load(std::string &error);
  /// The same from an explicit list of names or paths, tried in order;
  /// `source` follows the list in the message (" (from TFC_CUDA_DRIVER)").
  static std::unique_ptr<CudaDriver> loadFrom(const std::vector<std::string> &candidates,
                                              std::string &error, const char *source = "");
  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  /// cuInit(0) and the driver version check, once; later calls return the
  /// first result. "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is
  /// detected (no GPU is visible: see nvidia-smi and CUDA_VISIBLE_DEVICES)".
  bool init(std::string &error);
  bool initialized() const { return initialized_; }

  const DriverApi &api() const { return api_; }
  /// The library that was loaded, as dlopen() was given it.
  const std::string &path() const { return path_; }
  /// How the entry points were found: "cuGetProcAddress_v2",
  /// "cuGetProcAddress" or "dlsym".
  const std::string &resolver() const { return resolver_; }
  /// cuDriverGetVersion's answer (e.g. 13000), after init(); 0 before.
  int version() const { return version_; }

  /// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" (the driver's own name and
  /// text; "CUresult 12345" for a code it does not know).
  std::string describe(CUresult result) const;
  /// True on CUDA_SUCCESS; otherwise false with `error` set to
  /// "<call>: <describe(result)>", where `call` names it: "cuMemAlloc(1.2 GiB)".
  bool check(CUresult result, const std::string &call, std::string &error) const;
  /// The same, building the call's name only on failure.
  template <typename CallName>
  bool checkWith(CUresult result, std::string &error, CallName &&callName) const {
    return result == CUDA_SUCCESS || check(result, callName(), error);
  }

  /// Convenience over api() with check() (after init()).
  bool deviceCount(int &count, std::string &error) const;
  /// Device `index`, with a range check: "CUDA device 3 does not exist: the
  /// driver sees 1 device (index 0)".
  bool device(int index, CUdevice &device, std::string &error) const;
  bool deviceName(CUdevice device, std::string &name, std::string &error) const;
  bool deviceMemory(CUdevice device, size_t &bytes, std::string &error) const;
  bool computeCapability(CUdevice device, int &major, int &minor, std::string &error) const;

private:
  CudaDriver() = default;
  bool resolve(std::string &error);

  void *handle_ = nullptr;
  std::string path_;
  std::string resolver_;
  DriverApi api_;
  int version_ = 0;
  bool initTried_ = false;
  bool initialized_ = false;
  std::string initError_;
};

/// A driver, a device's primary context made current, and a stream: what a
/// CUDA device of the runtime holds. Released in reverse on destruction.
class CudaContext {
public:
  /// Loads and initialises `driver` if needed, then retains device `index`'s
  /// primary context and creates a stream. Null with `error` set on failure.
  static std::unique_ptr<CudaContext> open(CudaDriver &driver, int index, std::string &error);
  ~CudaContext();
  CudaContext(const CudaContext &) = delete;
  CudaContext &operator=(const CudaContext &) = delete;

  CudaDriver &driver() const { return driver_; }
  CUdevice device() const { return device_; }
  int index() const { return index_; }
  CUstream stream() const { return stream_; }
  /// Makes this context current on the calling thread.
  bool makeCurrent(std::string &error) const;

private:
  explicit CudaContext(CudaDriver &driver) : driver_(driver) {}
  CudaDriver &driver_;
  int index_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
};

} // namespace tfc::rt::cuda

#endif // TFC_RUNTIME_CUDA_DRIVER_H
