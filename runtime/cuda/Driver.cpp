//===- Driver.cpp - the CUDA driver API, loaded at run time ---------------===//

#include "runtime/cuda/Driver.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

namespace tfc::rt::cuda {

std::string formatBytes(size_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

const std::vector<std::string> &defaultDriverCandidates() {
  // The loader's search path first (LD_LIBRARY_PATH, ld.so.cache), then the
  // places NVIDIA's containers and distribution packages use, which are not
  // always on it (CUDA.md: /usr/local/nvidia/lib64 on the GPU machines).
  static const std::vector<std::string> candidates = {
      "libcuda.so.1",
      "/usr/local/nvidia/lib64/libcuda.so.1",
      "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
      "/usr/lib64/libcuda.so.1",
      "/usr/lib/wsl/lib/libcuda.so.1",
  };
  return candidates;
}

namespace {

std::string versionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// Why the driver said no, in a few words a user can act on.
const char *hint(CUresult result) {
  switch (result) {
  case CUDA_ERROR_NO_DEVICE:
    return "no GPU is visible: see nvidia-smi and CUDA_VISIBLE_DEVICES";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    return "libcuda and the loaded NVIDIA kernel module are different versions";
  case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    return "the CUDA forward-compatibility driver does not support this GPU";
  case CUDA_ERROR_SYSTEM_NOT_READY:
    return "the driver is not ready: is the NVIDIA fabric manager running?";
  case CUDA_ERROR_INVALID_DEVICE:
    return "no such device";
  default:
    return nullptr;
  }
}

} // namespace

std::unique_ptr<CudaDriver> CudaDriver::load(std::string &error) {
  const char *overridePath = std::getenv("TFC_CUDA_DRIVER");
  if (overridePath && *overridePath) {
    return loadFrom({overridePath}, error, " (from TFC_CUDA_DRIVER)");
  }
  return loadFrom(defaultDriverCandidates(), error);
}

void *openFirstLibrary(const std::vector<std::string> &candidates, std::string &path,
                       std::string &tried) {
  for (const std::string &candidate : candidates) {
    if (void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = candidate;
      return handle;
    }
    const char *why = dlerror();
    if (!tried.empty())
      tried += ", ";
    tried += candidate;
    // "cannot open shared object file" says nothing new; anything else
    // (wrong ELF class, missing dependency, bad symbol) is worth keeping.
    std::string reason = why ? why : "";
    if (!reason.empty() && reason.find("No such file or directory") == std::string::npos)
      tried += " (" + reason + ")";
  }
  return nullptr;
}

std::unique_ptr<CudaDriver> CudaDriver::loadFrom(const std::vector<std::string> &candidates,
                                                 std::string &error, const char *source) {
  std::string tried, path;
  if (void *handle = openFirstLibrary(candidates, path, tried)) {
    std::unique_ptr<CudaDriver> driver(new CudaDriver());
    driver->handle_ = handle;
    driver->path_ = path;
    if (!driver->resolve(error))
      return nullptr;
    return driver;
  }
  error = "no CUDA driver: tried " + (tried.empty() ? std::string("nothing") : tried) + source +
          "; running on a GPU needs the NVIDIA driver (libcuda.so.1)";
  return nullptr;
}

CudaDriver::~CudaDriver() {
  if (handle_)
    dlclose(handle_);
}

bool CudaDriver::resolve(std::string &error) {
  using GetProcV2 = PFN_cuGetProcAddress_v12000;
  using GetProcV1 = PFN_cuGetProcAddress_v11030;
  dlerror();
  auto getProcV2 = reinterpret_cast<GetProcV2>(dlsym(handle_, "cuGetProcAddress_v2"));
  auto getProcV1 =
      getProcV2 ? nullptr : reinterpret_cast<GetProcV1>(dlsym(handle_, "cuGetProcAddress"));
  resolver_ = getProcV2 ? "cuGetProcAddress_v2" : getProcV1 ? "cuGetProcAddress" : "dlsym";

  auto find = [&](const char *name, int version, const char *symbol) -> void * {
    void *fn = nullptr;
    if (getProcV2) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      if (getProcV2(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) ==
              CUDA_SUCCESS &&
          status == CU_GET_PROC_ADDRESS_SUCCESS && fn)
        return fn;
    } else if (getProcV1) {
      if (getProcV1(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM) == CUDA_SUCCESS && fn)
        return fn;
    }
    return dlsym(handle_, symbol);
  };

  std::string missing;
#define TFC_CUDA_RESOLVE(field, name, type, version, symbol)                                       \
  api_.field = reinterpret_cast<type>(find(name, version, symbol));                                \
  if (!api_.field)                                                                                 \
    missing += missing.empty() ? name : std::string(", ") + name;
  TFC_CUDA_DRIVER_FUNCTIONS(TFC_CUDA_RESOLVE)
#undef TFC_CUDA_RESOLVE
  if (missing.empty())
    return true;

  std::string have;
  int version = 0;
  if (api_.driverGetVersion && api_.driverGetVersion(&version) == CUDA_SUCCESS && version > 0)
    have = "it reports CUDA " + versionText(version) + "; ";
  error = "the CUDA driver " + path_ + " has no " + missing + " (looked up by " + resolver_ +
          "): it is too old or not NVIDIA's (" + have + "tfc needs CUDA " +
          versionText(kMinDriverVersion) + " or newer)";
  return false;
}

bool CudaDriver::init(std::string &error) {
  if (initTried_) {
    if (!initialized_)
      error = initError_;
    return initialized_;
  }
  initTried_ = true;
  if (!check(api_.init(0), "cuInit", initError_)) {
    error = initError_;
    return false;
  }
  int version = 0;
  if (!check(api_.driverGetVersion(&version), "cuDriverGetVersion", initError_)) {
    error = initError_;
    return false;
  }
  version_ = version;
  if (version < kMinDriverVersion) {
    initError_ = "the CUDA driver " + path_ + " is CUDA " + versionText(version) +
                 ": tfc needs CUDA " + versionText(kMinDriverVersion) +
                 " or newer (update the NVIDIA driver)";
    error = initError_;
    return false;
  }
  initialized_ = true;
  return true;
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr;
  const char *text = nullptr;
  if (!api_.getErrorName || api_.getErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = nullptr;
  if (!api_.getErrorString || api_.getErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = nullptr;
  std::string out = name ? std::string(name) : "CUresult " + std::to_string(int(result));
  if (text)
    out += std::string(": ") + text;
  if (const char *why = hint(result))
    out += std::string(" (") + why + ")";
  return out;
}

bool CudaDriver::check(CUresult result, const std::string &call, std::string &error) const {
  if (result == CUDA_SUCCESS)
    return true;
  error = call + ": " + describe(result);
  return false;
}

bool CudaDriver::deviceCount(int &count, std::string &error) const {
  count = 0;
  return check(api_.deviceGetCount(&count), "cuDeviceGetCount", error);
}

bool CudaDriver::device(int index, CUdevice &device, std::string &error) const {
  int count = 0;
  if (!deviceCount(count, error))
    return false;
  if (index < 0 || index >= count) {
    error = "CUDA device " + std::to_string(index) + " does not exist: the driver sees " +
            std::to_string(count) + (count == 1 ? " device" : " devices");
    if (count == 1)
      error += " (index 0)";
    else if (count > 1)
      error += " (indices 0 to " + std::to_string(count - 1) + ")";
    return false;
  }
  return checkWith(api_.deviceGet(&device, index), error,
                   [&] { return "cuDeviceGet(" + std::to_string(index) + ")"; });
}

bool CudaDriver::deviceName(CUdevice device, std::string &name, std::string &error) const {
  char text[256] = {};
  if (!check(api_.deviceGetName(text, sizeof text - 1, device), "cuDeviceGetName", error))
    return false;
  name = text;
  return true;
}

bool CudaDriver::deviceMemory(CUdevice device, size_t &bytes, std::string &error) const {
  bytes = 0;
  return check(api_.deviceTotalMem(&bytes, device), "cuDeviceTotalMem", error);
}

bool CudaDriver::computeCapability(CUdevice device, int &major, int &minor,
                                   std::string &error) const {
  return check(api_.deviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                       device),
               "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", error) &&
         check(api_.deviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                       device),
               "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", error);
}

//===- CudaContext --------------------------------------------------------===//

std::unique_ptr<CudaContext> CudaContext::open(CudaDriver &driver, int index,
                                               std::string &error) {
  if (!driver.init(error))
    return nullptr;
  std::unique_ptr<CudaContext> context(new CudaContext(driver));
  context->index_ = index;
  const DriverApi &api = driver.api();
  if (!driver.device(index, context->device_, error))
    return nullptr;
  CUcontext primary = nullptr;
  if (!driver.checkWith(api.devicePrimaryCtxRetain(&primary, context->device_), error,
                        [&] { return "cuDevicePrimaryCtxRetain(" + std::to_string(index) + ")"; }))
    return nullptr;
  context->context_ = primary;
  if (!context->makeCurrent(error))
    return nullptr;
  CUstream stream = nullptr;
  if (!driver.check(api.streamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", error))
    return nullptr;
  context->stream_ = stream;
  return context;
}

bool CudaContext::makeCurrent(std::string &error) const {
  return driver_.check(driver_.api().ctxSetCurrent(context_), "cuCtxSetCurrent", error);
}

CudaContext::~CudaContext() {
  // Errors here have no one to go to; the process is ending or the device
  // is being given up either way.
  const DriverApi &api = driver_.api();
  if (stream_)
    api.streamDestroy(stream_);
  if (context_) {
    api.ctxSetCurrent(nullptr);
    api.devicePrimaryCtxRelease(device_);
  }
}

} // namespace tfc::rt::cuda
