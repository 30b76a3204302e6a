//===- FakeCudaDriver.cpp - a CUDA driver without a GPU, for tests --------===//
//
// A shared library that CudaDriver loads through TFC_CUDA_DRIVER in place of
// libcuda.so.1. Device memory is host memory (a CUdeviceptr is a malloc()ed
// address), modules are text naming their kernels, launches and every other
// call are recorded in a log, and failures are chosen by environment
// variables read at each call:
//   TFC_FAKE_CUDA_INIT_ERROR=N      cuInit returns CUresult N
//   TFC_FAKE_CUDA_DEVICES=N         the number of devices (default 1)
//   TFC_FAKE_CUDA_VERSION=N         cuDriverGetVersion's answer (default 13000)
//   TFC_FAKE_CUDA_ALLOC_LIMIT=N     cuMemAlloc of more than N bytes fails
//                                   with CUDA_ERROR_OUT_OF_MEMORY
//   TFC_FAKE_CUDA_MISSING=cuXxx     cuGetProcAddress does not know cuXxx
// Built twice: exporting only cuGetProcAddress(_v2) (the default), and with
// TFC_FAKE_CUDA_PLAIN exporting only the plain versioned symbols (the dlsym
// fallback). tfcFakeCudaLog()/tfcFakeCudaReset() are exported by both.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>
// cuda.h maps cuGetProcAddress to cuGetProcAddress_v2; the fake defines both.
#undef cuGetProcAddress

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))
#ifdef TFC_FAKE_CUDA_PLAIN
#define FAKE(symbol) FAKE_EXPORT CUresult symbol
#define FAKE_FN(symbol) symbol
#else
#define FAKE(symbol) static CUresult fake_##symbol
#define FAKE_FN(symbol) fake_##symbol
#endif

namespace {

struct State {
  bool initialized = false;
  std::string log;
  std::map<uintptr_t, size_t> allocations;
  std::map<uintptr_t, std::string> modules;   // handle -> image text
  std::map<uintptr_t, std::string> functions; // handle -> kernel name
  uintptr_t nextHandle = 0x1000;
  int streams = 0;
};

State &state() {
  static State s; // gone, with the allocations' records, when unloaded
  return s;
}

long envNumber(const char *name, long fallback) {
  const char *text = std::getenv(name);
  return text && *text ? std::strtol(text, nullptr, 0) : fallback;
}

void record(const std::string &call) {
  state().log += call;
  state().log += '\n';
}

int deviceCount() { return int(envNumber("TFC_FAKE_CUDA_DEVICES", 1)); }

struct ErrorText {
  CUresult code;
  const char *name;
  const char *text;
};
const ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
};

const ErrorText *findError(CUresult code) {
  for (const ErrorText &e : kErrors)
    if (e.code == code)
      return &e;
  return nullptr;
}

#define REQUIRE_INIT()                                                                            \
  if (!state().initialized)                                                                       \
  return CUDA_ERROR_NOT_INITIALIZED

std::string hex(uintptr_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", (unsigned long long)value);
  return text;
}

} // namespace

FAKE(cuGetErrorName)(CUresult error, const char **out) {
  const ErrorText *e = findError(error);
  *out = e ? e->name : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
FAKE(cuGetErrorString)(CUresult error, const char **out) {
  const ErrorText *e = findError(error);
  *out = e ? e->text : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
FAKE(cuInit)(unsigned int flags) {
  record("cuInit(" + std::to_string(flags) + ")");
  if (long error = envNumber("TFC_FAKE_CUDA_INIT_ERROR", 0))
    return CUresult(error);
  state().initialized = true;
  return CUDA_SUCCESS;
}
FAKE(cuDriverGetVersion)(int *version) {
  *version = int(envNumber("TFC_FAKE_CUDA_VERSION", 13000));
  return CUDA_SUCCESS;
}
FAKE(cuDeviceGetCount)(int *count) {
  REQUIRE_INIT();
  *count = deviceCount();
  return CUDA_SUCCESS;
}
FAKE(cuDeviceGet)(CUdevice *device, int ordinal) {
  REQUIRE_INIT();
  if (ordinal < 0 || ordinal >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}
FAKE(cuDeviceGetName)(char *name, int length, CUdevice device) {
  REQUIRE_INIT();
  if (device < 0 || device >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(name, size_t(length), "Fake CUDA Device %d", int(device));
  return CUDA_SUCCESS;
}
FAKE(cuDeviceTotalMem_v2)(size_t *bytes, CUdevice device) {
  REQUIRE_INIT();
  if (device < 0 || device >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}
FAKE(cuDeviceGetAttribute)(int *value, CUdevice_attribute attribute, CUdevice device) {
  REQUIRE_INIT();
  if (device < 0 || device >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = 9;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *value = 0;
  else
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}
FAKE(cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device) {
  REQUIRE_INIT();
  if (device < 0 || device >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  record("cuDevicePrimaryCtxRetain(" + std::to_string(device) + ")");
  *context = reinterpret_cast<CUcontext>(uintptr_t(0xC0 + device));
  return CUDA_SUCCESS;
}
FAKE(cuDevicePrimaryCtxRelease_v2)(CUdevice device) {
  REQUIRE_INIT();
  record("cuDevicePrimaryCtxRelease(" + std::to_string(device) + ")");
  return CUDA_SUCCESS;
}
FAKE(cuCtxSetCurrent)(CUcontext context) {
  REQUIRE_INIT();
  record("cuCtxSetCurrent(" + hex(uintptr_t(context)) + ")");
  return CUDA_SUCCESS;
}
FAKE(cuCtxSynchronize)() {
  REQUIRE_INIT();
  return CUDA_SUCCESS;
}
FAKE(cuMemGetInfo_v2)(size_t *free, size_t *total) {
  REQUIRE_INIT();
  *total = size_t(80) << 30;
  size_t used = 0;
  for (auto &a : state().allocations)
    used += a.second;
  *free = *total - used;
  return CUDA_SUCCESS;
}
FAKE(cuMemAlloc_v2)(CUdeviceptr *pointer, size_t bytes) {
  REQUIRE_INIT();
  record("cuMemAlloc(" + std::to_string(bytes) + ")");
  long limit = envNumber("TFC_FAKE_CUDA_ALLOC_LIMIT", -1);
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (limit >= 0 && bytes > size_t(limit))
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *memory = std::malloc(bytes);
  if (!memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = CUdeviceptr(uintptr_t(memory));
  state().allocations[uintptr_t(memory)] = bytes;
  return CUDA_SUCCESS;
}
FAKE(cuMemFree_v2)(CUdeviceptr pointer) {
  REQUIRE_INIT();
  record("cuMemFree");
  auto it = state().allocations.find(uintptr_t(pointer));
  if (it == state().allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void *>(uintptr_t(pointer)));
  state().allocations.erase(it);
  return CUDA_SUCCESS;
}

namespace {
/// Whether [pointer, pointer + bytes) lies in one allocation.
bool deviceRange(CUdeviceptr pointer, size_t bytes) {
  auto &allocations = state().allocations;
  auto it = allocations.upper_bound(uintptr_t(pointer));
  if (it == allocations.begin())
    return false;
  --it;
  return uintptr_t(pointer) + bytes <= it->first + it->second;
}
} // namespace

FAKE(cuMemcpyHtoD_v2)(CUdeviceptr device, const void *host, size_t bytes) {
  REQUIRE_INIT();
  record("cuMemcpyHtoD(" + std::to_string(bytes) + ")");
  if (!deviceRange(device, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(uintptr_t(device)), host, bytes);
  return CUDA_SUCCESS;
}
FAKE(cuMemcpyDtoH_v2)(void *host, CUdeviceptr device, size_t bytes) {
  REQUIRE_INIT();
  record("cuMemcpyDtoH(" + std::to_string(bytes) + ")");
  if (!deviceRange(device, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(host, reinterpret_cast<const void *>(uintptr_t(device)), bytes);
  return CUDA_SUCCESS;
}
FAKE(cuMemcpyHtoDAsync_v2)(CUdeviceptr device, const void *host, size_t bytes, CUstream) {
  return FAKE_FN(cuMemcpyHtoD_v2)(device, host, bytes);
}
FAKE(cuMemcpyDtoHAsync_v2)(void *host, CUdeviceptr device, size_t bytes, CUstream) {
  return FAKE_FN(cuMemcpyDtoH_v2)(host, device, bytes);
}
FAKE(cuMemsetD8_v2)(CUdeviceptr device, unsigned char value, size_t bytes) {
  REQUIRE_INIT();
  if (!deviceRange(device, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void *>(uintptr_t(device)), value, bytes);
  return CUDA_SUCCESS;
}
FAKE(cuModuleLoadData)(CUmodule *module, const void *image) {
  REQUIRE_INIT();
  uintptr_t handle = state().nextHandle++;
  state().modules[handle] = static_cast<const char *>(image);
  record("cuModuleLoadData");
  *module = reinterpret_cast<CUmodule>(handle);
  return CUDA_SUCCESS;
}
FAKE(cuModuleUnload)(CUmodule module) {
  REQUIRE_INIT();
  record("cuModuleUnload");
  return state().modules.erase(uintptr_t(module)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
FAKE(cuModuleGetFunction)(CUfunction *function, CUmodule module, const char *name) {
  REQUIRE_INIT();
  auto it = state().modules.find(uintptr_t(module));
  if (it == state().modules.end())
    return CUDA_ERROR_INVALID_HANDLE;
  // The image is "kernel_a kernel_b ...": a kernel is a whole word of it.
  std::string words = " " + it->second + " ";
  if (words.find(" " + std::string(name) + " ") == std::string::npos)
    return CUDA_ERROR_NOT_FOUND;
  uintptr_t handle = state().nextHandle++;
  state().functions[handle] = name;
  *function = reinterpret_cast<CUfunction>(handle);
  return CUDA_SUCCESS;
}
FAKE(cuLaunchKernel)(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                     unsigned by, unsigned bz, unsigned sharedBytes, CUstream stream,
                     void **params, void **extra) {
  REQUIRE_INIT();
  auto it = state().functions.find(uintptr_t(function));
  if (it == state().functions.end())
    return CUDA_ERROR_INVALID_HANDLE;
  (void)stream;
  (void)params;
  (void)extra;
  char text[160];
  std::snprintf(text, sizeof text, "cuLaunchKernel(%s, grid %ux%ux%u, block %ux%ux%u, smem %u)",
                it->second.c_str(), gx, gy, gz, bx, by, bz, sharedBytes);
  record(text);
  return CUDA_SUCCESS;
}
FAKE(cuStreamCreate)(CUstream *stream, unsigned int flags) {
  REQUIRE_INIT();
  record("cuStreamCreate(" + std::to_string(flags) + ")");
  *stream = reinterpret_cast<CUstream>(uintptr_t(0x5000 + ++state().streams));
  return CUDA_SUCCESS;
}
FAKE(cuStreamDestroy_v2)(CUstream) {
  REQUIRE_INIT();
  record("cuStreamDestroy");
  return CUDA_SUCCESS;
}
FAKE(cuStreamSynchronize)(CUstream) {
  REQUIRE_INIT();
  record("cuStreamSynchronize");
  return CUDA_SUCCESS;
}

#ifndef TFC_FAKE_CUDA_PLAIN
namespace {
struct Entry {
  const char *name;
  void *fn;
};
#define ENTRY(name, symbol) {name, reinterpret_cast<void *>(&fake_##symbol)}
const Entry kEntries[] = {
    ENTRY("cuGetErrorName", cuGetErrorName),
    ENTRY("cuGetErrorString", cuGetErrorString),
    ENTRY("cuInit", cuInit),
    ENTRY("cuDriverGetVersion", cuDriverGetVersion),
    ENTRY("cuDeviceGetCount", cuDeviceGetCount),
    ENTRY("cuDeviceGet", cuDeviceGet),
    ENTRY("cuDeviceGetName", cuDeviceGetName),
    ENTRY("cuDeviceTotalMem", cuDeviceTotalMem_v2),
    ENTRY("cuDeviceGetAttribute", cuDeviceGetAttribute),
    ENTRY("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain),
    ENTRY("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2),
    ENTRY("cuCtxSetCurrent", cuCtxSetCurrent),
    ENTRY("cuCtxSynchronize", cuCtxSynchronize),
    ENTRY("cuMemGetInfo", cuMemGetInfo_v2),
    ENTRY("cuMemAlloc", cuMemAlloc_v2),
    ENTRY("cuMemFree", cuMemFree_v2),
    ENTRY("cuMemcpyHtoD", cuMemcpyHtoD_v2),
    ENTRY("cuMemcpyDtoH", cuMemcpyDtoH_v2),
    ENTRY("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2),
    ENTRY("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2),
    ENTRY("cuMemsetD8", cuMemsetD8_v2),
    ENTRY("cuModuleLoadData", cuModuleLoadData),
    ENTRY("cuModuleUnload", cuModuleUnload),
    ENTRY("cuModuleGetFunction", cuModuleGetFunction),
    ENTRY("cuLaunchKernel", cuLaunchKernel),
    ENTRY("cuStreamCreate", cuStreamCreate),
    ENTRY("cuStreamDestroy", cuStreamDestroy_v2),
    ENTRY("cuStreamSynchronize", cuStreamSynchronize),
};
#undef ENTRY

CUresult lookup(const char *symbol, void **pfn, CUdriverProcAddressQueryResult *status) {
  *pfn = nullptr;
  const char *missing = std::getenv("TFC_FAKE_CUDA_MISSING");
  if (!(missing && std::strcmp(missing, symbol) == 0))
    for (const Entry &e : kEntries)
      if (std::strcmp(e.name, symbol) == 0)
        *pfn = e.fn;
  if (status)
    *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  record(std::string("cuGetProcAddress(") + symbol + ")");
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
} // namespace

FAKE_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int, cuuint64_t,
                                         CUdriverProcAddressQueryResult *status) {
  return lookup(symbol, pfn, status);
}
FAKE_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int, cuuint64_t) {
  return lookup(symbol, pfn, nullptr);
}
#endif

/// The calls made since the last reset, one a line.
FAKE_EXPORT const char *tfcFakeCudaLog() { return state().log.c_str(); }
/// Forgets the log, the allocations (leaked), modules and init.
FAKE_EXPORT void tfcFakeCudaReset() {
  State &s = state();
  s.log.clear();
  s.allocations.clear();
  s.modules.clear();
  s.functions.clear();
  s.initialized = false;
}
/// Bytes allocated and not freed.
FAKE_EXPORT size_t tfcFakeCudaAllocatedBytes() {
  size_t used = 0;
  for (auto &a : state().allocations)
    used += a.second;
  return used;
}
