//===- FakeCudaDriver.cpp - a CUDA driver without a GPU, for tests --------===//
//
// A shared library that CudaDriver loads through TFC_CUDA_DRIVER in place of
// libcuda.so.1. Device memory is host memory (a CUdeviceptr is a malloc()ed
// address); modules are PTX text, whose `.entry NAME(` lines name the
// kernels and whose `.param` lists give each one's parameters, or fatbins
// (nvcc -fatbin: the hand-written kernels), whose first ELF's `.nv.info.NAME`
// sections name the kernels and give their parameters' sizes; launches and
// every other call are recorded in a log. No generated or layer kernel runs
// (the runtime's gather and its advance do, on the host: runHostTwin, also
// in a graph's replay; so do gemm_small.cu's column sums and its finish
// without an epilogue, a bias gradient's), but every launch
// is checked as a GPU would refuse it, and refused with
// CUDA_ERROR_INVALID_VALUE and an "INVALID" line in the log: the kernel
// resolves, the grid is at least 1 and the block at most 1024 threads in
// each dimension's limits, dynamic shared memory past 48 KiB was opted into
// (cuFuncSetAttribute), and every .u64/.b64 parameter holding an address
// (4 GiB and up and within 1 TiB of the allocations made: heap addresses;
// other values are taken as integers, which PTX declares alike) lies inside
// a live allocation. Stream capture records
// launches (and the host work tfcFakeCudaEnqueue is given, which the fake
// cuBLASLt and NCCL use) and copies within device memory into a graph, in
// order: begin before end, no synchronisation, allocation or copy from or
// to the host while a stream is captured; cuGraphLaunch
// checks every launch again and runs the host work. Failures are chosen by
// environment variables read at each call:
//   TFC_FAKE_CUDA_INIT_ERROR=N      cuInit returns CUresult N
//   TFC_FAKE_CUDA_DEVICES=N         the number of devices (default 1)
//   TFC_FAKE_CUDA_VERSION=N         cuDriverGetVersion's answer (default 13000)
//   TFC_FAKE_CUDA_CC_MAJOR=N        the compute capability's major (default 9)
//   TFC_FAKE_CUDA_ALLOC_LIMIT=N     cuMemAlloc of more than N bytes fails
//                                   with CUDA_ERROR_OUT_OF_MEMORY
//   TFC_FAKE_CUDA_MISSING=cuXxx     cuGetProcAddress does not know cuXxx
//   TFC_FAKE_CUDA_NO_BINARY=TEXT    cuModuleLoadData of an image with a kernel
//                                   whose name holds TEXT fails with
//                                   CUDA_ERROR_NO_BINARY_FOR_GPU (a GPU its
//                                   SASS is not for: sm_90a's on an A100)
//   TFC_FAKE_CUDA_OCCUPANCY=N       N blocks of any kernel a multiprocessor
//                                   (132 of them; default 2048 threads' worth):
//                                   occupancy queries and cooperative launches
//   TFC_FAKE_CUDA_LOG=PATH          the log is appended to PATH when the
//                                   library is unloaded (or the process ends)
// Built twice: exporting only cuGetProcAddress(_v2) (the default), and with
// TFC_FAKE_CUDA_PLAIN exporting only the plain versioned symbols (the dlsym
// fallback). tfcFakeCudaLog()/tfcFakeCudaReset() are exported by both, and
// what the fake cuBLASLt and fake NCCL reach the fake's memory and log by.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>
// cuda.h maps cuGetProcAddress to cuGetProcAddress_v2; the fake defines both.
#undef cuGetProcAddress
// It maps these to CUDA 12.3's versions; the fake's are 11.3's (runtime/cuda/Driver.h).
#undef cuStreamGetCaptureInfo
#undef cuStreamUpdateCaptureDependencies

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))
#ifdef TFC_FAKE_CUDA_PLAIN
#define FAKE(symbol) FAKE_EXPORT CUresult symbol
#define FAKE_FN(symbol) symbol
#else
#define FAKE(symbol) static CUresult fake_##symbol
#define FAKE_FN(symbol) fake_##symbol
#endif

namespace {

/// A kernel of a loaded module: its name and the PTX types of its params.
struct Kernel {
  std::string name;
  std::vector<std::string> params; // ".u64", ".u32", ".b8" (an aggregate), ...
  int sharedOptIn = 48 * 1024;
};

/// What a graph does: a launch (its parameters' values as captured) or
/// host work (tfcFakeCudaEnqueue).
struct Node {
  uintptr_t function = 0;
  unsigned grid[3] = {}, block[3] = {}, sharedBytes = 0;
  std::vector<uint64_t> params;
  std::shared_ptr<void> context; // host work: run(context.get())
  void (*run)(void *) = nullptr;
  std::vector<size_t> deps; // the nodes (indices) it waits for in its graph
};

struct State {
  bool initialized = false;
  std::string log;
  std::map<uintptr_t, size_t> allocations;
  uintptr_t lowest = UINTPTR_MAX, highest = 0;           // the span of every allocation made
  std::map<uintptr_t, std::vector<std::string>> modules; // handle -> kernel names
  std::map<uintptr_t, Kernel> functions;                 // handle -> kernel
  std::map<uintptr_t, std::vector<Node>> graphs, execs;  // captured, instantiated
  uintptr_t capturing = 0;     // the stream being captured (0: none)
  bool captureAny = false;     // whether capture is on at all (stream 0 included)
  std::vector<Node> captured;  // what it has recorded so far
  std::vector<size_t> captureDeps; // what the next captured node waits for
  bool depsUpdated = false;        // cuStreamUpdateCaptureDependencies during the capture
  uintptr_t nextHandle = 0x1000;
  int streams = 0;
  uint64_t clock = 0;                     // a microsecond a recorded call
  std::map<uintptr_t, uint64_t> eventAt;  // the clock when an event was recorded
  ~State() {
    const char *path = std::getenv("TFC_FAKE_CUDA_LOG");
    if (path && *path)
      if (FILE *f = std::fopen(path, "a")) {
        std::fputs(log.c_str(), f);
        std::fclose(f);
      }
  }
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
  ++state().clock;
  state().log += call;
  state().log += '\n';
}

int deviceCount() { return int(envNumber("TFC_FAKE_CUDA_DEVICES", 1)); }
int computeCapabilityMajor() { return int(envNumber("TFC_FAKE_CUDA_CC_MAJOR", 9)); }

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
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
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

/// An H100's dynamic shared memory a block may opt into.
constexpr int kSharedOptInLimit = 232448;
/// An H100's multiprocessors, each holding 2048 threads' blocks: what
/// cuOccupancyMaxActiveBlocksPerMultiprocessor answers and a cooperative
/// launch may use (TFC_FAKE_CUDA_OCCUPANCY=N: N blocks a multiprocessor,
/// whatever their size; 0 is a kernel too big to run).
constexpr int kMultiprocessors = 132;

unsigned blocksPerMultiprocessor(unsigned threads) {
  if (const char *forced = std::getenv("TFC_FAKE_CUDA_OCCUPANCY"))
    return unsigned(std::atoi(forced));
  return threads ? std::min(32u, 2048u / threads) : 0;
}

/// A node of the graph being captured: it waits for the stream's
/// dependencies (the node before it, unless cuStreamUpdateCaptureDependencies
/// said otherwise), and is then the node the next one waits for.
void captureNode(Node &&node) {
  node.deps = state().captureDeps;
  state().captureDeps = {state().captured.size()};
  state().captured.push_back(std::move(node));
}

/// The most nodes on one path through `graph` (its length as a chain: the
/// node count when each waits for the one before).
size_t longestPath(const std::vector<Node> &graph) {
  std::vector<size_t> depth(graph.size(), 1);
  size_t longest = 0;
  for (size_t i = 0; i < graph.size(); ++i) {
    for (size_t d : graph[i].deps)
      depth[i] = std::max(depth[i], depth[d] + 1);
    longest = std::max(longest, depth[i]);
  }
  return longest;
}

/// Refuses what no stream may do while one is being captured.
#define REFUSE_WHILE_CAPTURING(what)                                                              \
  if (state().captureAny) {                                                                       \
    record(std::string(what) + ": INVALID: while a stream is being captured");                    \
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;                                                 \
  }

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
  if (attribute == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
    *value = kSharedOptInLimit;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = computeCapabilityMajor();
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *value = 0;
  else if (attribute == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    *value = kMultiprocessors;
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
  REFUSE_WHILE_CAPTURING("cuMemAlloc");
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
  state().lowest = std::min(state().lowest, uintptr_t(memory));
  state().highest = std::max(state().highest, uintptr_t(memory) + bytes);
  return CUDA_SUCCESS;
}
FAKE(cuMemFree_v2)(CUdeviceptr pointer) {
  REQUIRE_INIT();
  REFUSE_WHILE_CAPTURING("cuMemFree");
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
  REFUSE_WHILE_CAPTURING("cuMemcpyHtoD");
  record("cuMemcpyHtoD(" + std::to_string(bytes) + ")");
  if (!deviceRange(device, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(uintptr_t(device)), host, bytes);
  return CUDA_SUCCESS;
}
FAKE(cuMemcpyDtoH_v2)(void *host, CUdeviceptr device, size_t bytes) {
  REQUIRE_INIT();
  REFUSE_WHILE_CAPTURING("cuMemcpyDtoH");
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
namespace {
/// A copy within device memory: checked, logged and done (at once, or at
/// each replay of the graph that captured it).
struct DeviceCopyWork {
  CUdeviceptr to, from;
  size_t bytes;
};
bool copyWithin(const DeviceCopyWork &c) {
  const std::string what = "cuMemcpyDtoDAsync(" + std::to_string(c.bytes) + ")";
  if (!deviceRange(c.to, c.bytes) || !deviceRange(c.from, c.bytes)) {
    record(what + ": INVALID: outside device memory");
    return false;
  }
  record(what);
  std::memmove(reinterpret_cast<void *>(uintptr_t(c.to)),
               reinterpret_cast<const void *>(uintptr_t(c.from)), c.bytes);
  return true;
}
} // namespace
FAKE(cuMemcpyDtoDAsync_v2)(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream stream) {
  REQUIRE_INIT();
  // On the stream being captured: a node of its graph, as CUDA's memcpy
  // node (checked now and at each replay); any other copy is refused then.
  if (state().captureAny && state().capturing == uintptr_t(stream)) {
    const std::string what = "cuMemcpyDtoDAsync(" + std::to_string(bytes) + ")";
    if (!deviceRange(to, bytes) || !deviceRange(from, bytes)) {
      record(what + ": INVALID: outside device memory");
      return CUDA_ERROR_INVALID_VALUE;
    }
    record(what + " captured");
    Node node;
    node.run = [](void *work) { copyWithin(*static_cast<DeviceCopyWork *>(work)); };
    node.context = std::make_shared<DeviceCopyWork>(DeviceCopyWork{to, from, bytes});
    captureNode(std::move(node));
    return CUDA_SUCCESS;
  }
  REFUSE_WHILE_CAPTURING("cuMemcpyDtoDAsync");
  return copyWithin({to, from, bytes}) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
FAKE(cuMemsetD8_v2)(CUdeviceptr device, unsigned char value, size_t bytes) {
  REQUIRE_INIT();
  REFUSE_WHILE_CAPTURING("cuMemsetD8");
  if (!deviceRange(device, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void *>(uintptr_t(device)), value, bytes);
  return CUDA_SUCCESS;
}
namespace {
/// The kernels of PTX text: each `.entry NAME(` and the types of the
/// `.param` declarations up to its `)`. Empty when there is none.
std::vector<Kernel> parsePtx(const std::string &ptx) {
  std::vector<Kernel> kernels;
  for (size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 6)) {
    size_t p = at + 6;
    while (p < ptx.size() && std::isspace((unsigned char)ptx[p]))
      ++p;
    size_t nameEnd = p;
    while (nameEnd < ptx.size() && (std::isalnum((unsigned char)ptx[nameEnd]) ||
                                    ptx[nameEnd] == '_' || ptx[nameEnd] == '$' ||
                                    ptx[nameEnd] == '.'))
      ++nameEnd;
    size_t open = ptx.find_first_not_of(" \t\r\n", nameEnd);
    if (nameEnd == p || open == std::string::npos || ptx[open] != '(')
      continue;
    size_t close = ptx.find(')', open);
    if (close == std::string::npos)
      return {};
    Kernel kernel;
    kernel.name = ptx.substr(p, nameEnd - p);
    std::string list = ptx.substr(open + 1, close - open - 1);
    for (size_t q = list.find(".param"); q != std::string::npos; q = list.find(".param", q + 6)) {
      // ".param .u64 name", ".param .u64 .ptr .global .align 4 name",
      // ".param .align 8 .b8 name[16]": the first type word.
      size_t t = q + 6;
      std::string type;
      while (type.empty() || type == ".align" || type == ".ptr") {
        size_t b = list.find('.', t);
        if (b == std::string::npos)
          break;
        size_t e = b + 1;
        while (e < list.size() && std::isalnum((unsigned char)list[e]))
          ++e;
        std::string word = list.substr(b, e - b);
        t = e;
        if (word == ".align") {
          type = word;
          continue;
        }
        type = word;
      }
      kernel.params.push_back(type);
    }
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

template <typename T> T readAt(const unsigned char *bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes + offset, sizeof value);
  return value;
}

/// The kernels of a cubin (an ELF for one GPU): each `.nv.info.NAME`
/// section names a kernel, and its EIATTR_KPARAM_INFO records (format SVAL,
/// attribute 0x17: index u32, ordinal u16, offset u16, then a word whose
/// bits 18 and up are the size) give its parameters' sizes: 8 bytes as
/// ".u64", 4 as ".u32", others as ".b8" (the launch checks them as it does
/// PTX's). Empty when it is not such an ELF.
std::vector<Kernel> parseCubin(const unsigned char *elf, size_t size) {
  if (size < 64 || std::memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2 /* 64-bit */)
    return {};
  const auto shoff = readAt<uint64_t>(elf, 0x28);
  const auto shentsize = readAt<uint16_t>(elf, 0x3a), shnum = readAt<uint16_t>(elf, 0x3c),
             shstrndx = readAt<uint16_t>(elf, 0x3e);
  if (shentsize < 64 || shstrndx >= shnum || shoff + uint64_t(shnum) * shentsize > size)
    return {};
  auto section = [&](unsigned i) { return elf + shoff + uint64_t(i) * shentsize; };
  const auto namesAt = readAt<uint64_t>(section(shstrndx), 0x18);
  std::vector<Kernel> kernels;
  for (unsigned i = 0; i < shnum; ++i) {
    const auto nameOffset = readAt<uint32_t>(section(i), 0);
    const auto type = readAt<uint32_t>(section(i), 4);
    const auto at = readAt<uint64_t>(section(i), 0x18), bytes = readAt<uint64_t>(section(i), 0x20);
    // SHT_NOBITS (8: .nv.shared.NAME, a kernel's static shared memory) has
    // a size but no bytes in the file.
    if (namesAt + nameOffset >= size || (type != 8 && at + bytes > size))
      return {};
    const char *name = reinterpret_cast<const char *>(elf + namesAt + nameOffset);
    const std::string prefix = ".nv.info.";
    if (std::strncmp(name, prefix.c_str(), prefix.size()) != 0)
      continue;
    Kernel kernel;
    kernel.name = name + prefix.size();
    std::map<unsigned, std::string> byOrdinal;
    for (uint64_t p = at; p + 4 <= at + bytes;) {
      const unsigned format = elf[p], attribute = elf[p + 1];
      if (format != 0x04) { // EIFMT_NVAL, _BVAL, _HVAL: 4 bytes in all
        p += 4;
        continue;
      }
      const auto length = readAt<uint16_t>(elf, p + 2);
      if (attribute == 0x17 && length >= 12 && p + 16 <= at + bytes) {
        const unsigned paramBytes = readAt<uint32_t>(elf, p + 12) >> 18;
        byOrdinal[readAt<uint16_t>(elf, p + 8)] =
            paramBytes == 8 ? ".u64" : paramBytes == 4 ? ".u32" : ".b8";
      }
      p += 4 + length;
    }
    for (auto &[ordinal, type] : byOrdinal)
      kernel.params.push_back(type);
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

/// The kernels of an image: PTX text, or a fatbin (magic 0xBA55ED50, then
/// entries of a kind (2 an ELF, 1 PTX, compressed here), a header size and
/// a payload size), read from its first ELF, whose kernels every other
/// entry has too.
std::vector<Kernel> parseImage(const void *image) {
  const auto *bytes = static_cast<const unsigned char *>(image);
  if (readAt<uint32_t>(bytes, 0) != 0xBA55ED50u)
    return parsePtx(static_cast<const char *>(image));
  const size_t end = readAt<uint16_t>(bytes, 6) + readAt<uint64_t>(bytes, 8);
  for (size_t at = readAt<uint16_t>(bytes, 6); at + 16 <= end;) {
    const auto kind = readAt<uint16_t>(bytes, at);
    const auto header = readAt<uint32_t>(bytes, at + 4);
    const auto payload = readAt<uint64_t>(bytes, at + 8);
    if (header < 16 || at + header + payload > end)
      return {};
    if (kind == 2)
      if (std::vector<Kernel> kernels = parseCubin(bytes + at + header, payload); !kernels.empty())
        return kernels;
    at += header + payload;
  }
  return {};
}

/// Whether a 64-bit parameter is taken for an address: 4 GiB and up, and
/// within 1 TiB of the allocations made (the heap's neighbourhood, where a
/// stale or host pointer lies); an integer such as a dropout key of 20 GiB
/// is not one.
bool looksLikeAddress(uint64_t value) {
  const uint64_t near = uint64_t(1) << 40;
  return value >= (uint64_t(1) << 32) && state().highest > 0 && value + near >= state().lowest &&
         value <= state().highest + near;
}

/// Why launching `node` would be wrong, or "".
std::string checkLaunch(const Node &node) {
  auto it = state().functions.find(node.function);
  if (it == state().functions.end())
    return "an unknown function";
  const Kernel &kernel = it->second;
  for (int d = 0; d < 3; ++d)
    if (node.grid[d] < 1)
      return "an empty grid";
  if (node.grid[1] > 65535 || node.grid[2] > 65535 || node.grid[0] > 2147483647u)
    return "a grid past the limits";
  unsigned long threads = 1;
  for (int d = 0; d < 3; ++d) {
    if (node.block[d] < 1)
      return "an empty block";
    threads *= node.block[d];
  }
  if (threads > 1024 || node.block[2] > 64)
    return "a block of " + std::to_string(threads) + " threads (at most 1024, z at most 64)";
  if (node.sharedBytes > unsigned(kernel.sharedOptIn))
    return std::to_string(node.sharedBytes) + " bytes of dynamic shared memory without opting in";
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const std::string &type = kernel.params[i];
    if (type != ".u64" && type != ".b64")
      continue;
    uint64_t value = node.params[i];
    if (looksLikeAddress(value) && !deviceRange(CUdeviceptr(value), 1))
      return "param " + std::to_string(i) + " (" + hex(uintptr_t(value)) +
             ") is outside every live allocation";
  }
  return "";
}

/// gemm_small.cu's tfc_cuda_column_sums_kernel(rows, cols, x, ld, part,
/// sums, columnSums, counter): sums[p * cols + c] = the sum over part p's
/// rows r of x[r * ld + c] (in row order: the kernel's eighths of a part
/// round differently), with a counter and several parts also their sums in
/// order into columnSums (the last block's work), and
/// tfc_cuda_small_gemm_finish_kernel without an epilogue: c[o * strideC +
/// i * ldc + j] = the output's parts added in order. The bias gradient by
/// column sums beside a cuBLASLt product (TFC_BGRAD_COLUMNS) launches just
/// these. Why they would fault, or "" when done (or not these).
std::string runColumnSums(const std::string &name, const std::vector<uint64_t> &p) {
  auto floats = [](uint64_t address) { return reinterpret_cast<float *>(uintptr_t(address)); };
  if (name == "tfc_cuda_column_sums_kernel" && p.size() == 8) {
    const int64_t rows = int64_t(p[0]), cols = int64_t(p[1]), ld = int64_t(p[3]),
                  part = int64_t(p[4]);
    const int64_t parts = part > 0 ? (rows + part - 1) / part : 1;
    if (rows <= 0 || cols <= 0)
      return "";
    if (!deviceRange(CUdeviceptr(p[2]), size_t((rows - 1) * ld + cols) * sizeof(float)) ||
        !deviceRange(CUdeviceptr(p[5]), size_t(parts * cols) * sizeof(float)))
      return "column sums: x or sums is not inside one allocation";
    const float *x = floats(p[2]);
    for (int64_t q = 0; q < parts; ++q)
      for (int64_t c = 0; c < cols; ++c) {
        float sum = 0.0f;
        for (int64_t r = q * part; r < std::min(rows, (q + 1) * part); ++r)
          sum += x[r * ld + c];
        floats(p[5])[q * cols + c] = sum;
      }
    if (p[7] && parts > 1) { // the last block's sums of the parts
      if (!deviceRange(CUdeviceptr(p[6]), size_t(cols) * sizeof(float)) ||
          !deviceRange(CUdeviceptr(p[7]), sizeof(unsigned)))
        return "column sums: columnSums or the counter is not inside one allocation";
      for (int64_t c = 0; c < cols; ++c) {
        float sum = floats(p[5])[c];
        for (int64_t q = 1; q < parts; ++q)
          sum = sum + floats(p[5])[q * cols + c];
        floats(p[6])[c] = sum;
      }
    }
    return "";
  }
  const bool plain =
      p.size() == 16 && std::all_of(p.begin() + 8, p.end(), [](uint64_t v) { return v == 0; });
  if (name != "tfc_cuda_small_gemm_finish_kernel" || !plain)
    return "";
  const int64_t m = int64_t(p[0]), n = int64_t(p[1]), outputs = int64_t(p[2]),
                parts = int64_t(p[3]), ldc = int64_t(p[6]), strideC = int64_t(p[7]);
  if (m <= 0 || n <= 0 || outputs <= 0 || parts <= 0)
    return "";
  if (!deviceRange(CUdeviceptr(p[4]), size_t(outputs * parts * m * n) * sizeof(float)) ||
      !deviceRange(CUdeviceptr(p[5]),
                   size_t((outputs - 1) * strideC + (m - 1) * ldc + n) * sizeof(float)))
    return "finish: the partials or c is not inside one allocation";
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const float *part = floats(p[4]) + o * parts * m * n + i * n + j;
        float sum = part[0];
        for (int64_t q = 1; q < parts; ++q)
          sum = sum + part[q * m * n];
        floats(p[5])[o * strideC + i * ldc + j] = sum;
      }
  return "";
}

/// The runtime's own kernels that the fake runs on the host, as their CUDA
/// source defines them, so that what the host asks of them is checked by
/// their results (generated kernels and the layers' kernels do not run):
/// runtime/cuda/kernels/gather.cu's tfc_cuda_gather_rows_kernel, row i of
/// `to` = row order[*first + i] of `rows`, and tfc_cuda_advance_first_kernel,
/// *first += count; runColumnSums' two. A gather that ran logs the order's
/// rows it read ("gather ran: order[F, F + count)"). Why it would fault on a
/// GPU, or "" when done (or not such a kernel).
std::string runHostTwin(const Node &node) {
  const std::string &name = state().functions[node.function].name;
  if (std::string why = runColumnSums(name, node.params); !why.empty())
    return why;
  if (name == "tfc_cuda_advance_first_kernel" && node.params.size() == 2) {
    auto *first = reinterpret_cast<int64_t *>(uintptr_t(node.params[0]));
    if (!deviceRange(CUdeviceptr(uintptr_t(first)), sizeof(int64_t)))
      return "advance: its first row is not inside an allocation";
    *first += int64_t(node.params[1]);
    return "";
  }
  if (name != "tfc_cuda_gather_rows_kernel" || node.params.size() != 6)
    return "";
  auto *to = reinterpret_cast<unsigned char *>(uintptr_t(node.params[0]));
  const auto *rows = reinterpret_cast<const unsigned char *>(uintptr_t(node.params[1]));
  const uint64_t rowBytes = node.params[2], count = node.params[5];
  const auto *order = reinterpret_cast<const int64_t *>(uintptr_t(node.params[3]));
  const auto *first = reinterpret_cast<const int64_t *>(uintptr_t(node.params[4]));
  if (count == 0)
    return "";
  if (!deviceRange(CUdeviceptr(uintptr_t(to)), rowBytes * count))
    return "gather: the batch's " + std::to_string(rowBytes * count) +
           " bytes are not inside one allocation";
  if (!deviceRange(CUdeviceptr(uintptr_t(first)), sizeof(int64_t)))
    return "gather: its first row is not inside an allocation";
  if (*first < 0)
    return "gather: its first row is " + std::to_string(*first);
  const int64_t *indices = order + *first;
  if (!deviceRange(CUdeviceptr(uintptr_t(indices)), count * sizeof(int64_t)))
    return "gather: its " + std::to_string(count) + " indices from row " +
           std::to_string(*first) + " of the order are not inside one allocation";
  for (uint64_t i = 0; i < count; ++i) {
    const unsigned char *from = rows + indices[i] * int64_t(rowBytes);
    if (indices[i] < 0 ||
        !deviceRange(CUdeviceptr(uintptr_t(rows)), size_t(indices[i] + 1) * rowBytes))
      return "gather: row " + std::to_string(indices[i]) + " (index " + std::to_string(i) +
             ") is outside the rows' allocation";
    std::memcpy(to + i * rowBytes, from, rowBytes);
  }
  // Which rows of the order it read: for tests of where batches start.
  record("gather ran: order[" + std::to_string(*first) + ", " +
         std::to_string(*first + int64_t(count)) + ")");
  return "";
}

std::string describeLaunch(const Node &node) {
  char text[200];
  std::snprintf(text, sizeof text, "%s, grid %ux%ux%u, block %ux%ux%u, smem %u",
                state().functions[node.function].name.c_str(), node.grid[0], node.grid[1],
                node.grid[2], node.block[0], node.block[1], node.block[2], node.sharedBytes);
  return text;
}
} // namespace

FAKE(cuModuleLoadData)(CUmodule *module, const void *image) {
  REQUIRE_INIT();
  std::vector<Kernel> kernels = parseImage(image);
  if (kernels.empty()) {
    record("cuModuleLoadData: INVALID: no kernel in the image (PTX .entry, or a fatbin's ELF)");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  uintptr_t handle = state().nextHandle++;
  std::vector<std::string> names;
  std::string list;
  for (Kernel &k : kernels) {
    names.push_back(k.name);
    list += (list.empty() ? "" : ", ") + k.name + "/" + std::to_string(k.params.size());
  }
  if (const char *text = std::getenv("TFC_FAKE_CUDA_NO_BINARY"); text && *text)
    for (const std::string &name : names)
      if (name.find(text) != std::string::npos) {
        record("cuModuleLoadData(" + list + "): no binary for this GPU");
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
      }
  state().modules[handle] = names;
  // The functions are made now; cuModuleGetFunction hands them out.
  for (Kernel &k : kernels)
    state().functions[(handle << 16) + state().functions.size() + 1] = std::move(k);
  record("cuModuleLoadData(" + list + ")");
  *module = reinterpret_cast<CUmodule>(handle);
  return CUDA_SUCCESS;
}
FAKE(cuModuleUnload)(CUmodule module) {
  REQUIRE_INIT();
  record("cuModuleUnload");
  uintptr_t handle = uintptr_t(module);
  for (auto it = state().functions.begin(); it != state().functions.end();)
    it = (it->first >> 16) == handle ? state().functions.erase(it) : std::next(it);
  return state().modules.erase(handle) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
FAKE(cuModuleGetFunction)(CUfunction *function, CUmodule module, const char *name) {
  REQUIRE_INIT();
  uintptr_t handle = uintptr_t(module);
  if (!state().modules.count(handle))
    return CUDA_ERROR_INVALID_HANDLE;
  for (auto &[key, kernel] : state().functions)
    if ((key >> 16) == handle && kernel.name == name) {
      *function = reinterpret_cast<CUfunction>(key);
      return CUDA_SUCCESS;
    }
  record(std::string("cuModuleGetFunction(") + name + "): not found");
  return CUDA_ERROR_NOT_FOUND;
}
FAKE(cuFuncSetAttribute)(CUfunction function, CUfunction_attribute attribute, int value) {
  REQUIRE_INIT();
  auto it = state().functions.find(uintptr_t(function));
  if (it == state().functions.end())
    return CUDA_ERROR_INVALID_HANDLE;
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 ||
      value > kSharedOptInLimit)
    return CUDA_ERROR_INVALID_VALUE;
  record("cuFuncSetAttribute(" + it->second.name + ", " + std::to_string(value) + ")");
  it->second.sharedOptIn = value;
  return CUDA_SUCCESS;
}
namespace {
/// A launch by `call` (cuLaunchKernel, or cuLaunchKernelEx, `cooperative`
/// when it asked for CU_LAUNCH_ATTRIBUTE_COOPERATIVE): checked, recorded,
/// captured or run (the runtime's gather on the host).
CUresult launch(const char *call, CUfunction function, const unsigned grid[3],
                const unsigned block[3], unsigned sharedBytes, CUstream stream, void **params,
                void **extra, bool cooperative, bool programmatic = false) {
  auto it = state().functions.find(uintptr_t(function));
  if (it == state().functions.end()) {
    record(std::string(call) + ": INVALID: an unknown function");
    return CUDA_ERROR_INVALID_HANDLE;
  }
  Node node;
  node.function = uintptr_t(function);
  std::copy_n(grid, 3, node.grid);
  std::copy_n(block, 3, node.block);
  node.sharedBytes = sharedBytes;
  const std::string what = std::string(call) + "(" + describeLaunch(node) +
                           (cooperative ? ", cooperative" : "") +
                           (programmatic ? ", programmatic" : "") + ")";
  const std::vector<std::string> &types = it->second.params;
  if (extra || (!types.empty() && !params)) {
    record(what + ": INVALID: no kernelParams");
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Each param's value, read as its PTX type's size (an aggregate: its
  // first 8 bytes at most, never checked).
  for (size_t i = 0; i < types.size(); ++i) {
    uint64_t value = 0;
    size_t bytes = types[i] == ".u64" || types[i] == ".b64" || types[i] == ".s64" ||
                           types[i] == ".f64"
                       ? 8
                   : types[i] == ".u16" || types[i] == ".b16" || types[i] == ".s16" ? 2
                   : types[i] == ".u8" || types[i] == ".b8" || types[i] == ".s8"    ? 1
                                                                                    : 4;
    std::memcpy(&value, params[i], bytes);
    node.params.push_back(value);
  }
  if (std::string why = checkLaunch(node); !why.empty()) {
    record(what + ": INVALID: " + why);
    return CUDA_ERROR_INVALID_VALUE;
  }
  // A cooperative grid must be resident at once, as the driver demands.
  if (cooperative) {
    const unsigned threads = block[0] * block[1] * block[2];
    const unsigned long long most =
        (unsigned long long)blocksPerMultiprocessor(threads) * kMultiprocessors;
    if ((unsigned long long)grid[0] * grid[1] * grid[2] > most) {
      record(what + ": INVALID: a cooperative grid of more than " + std::to_string(most) +
             " blocks");
      return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    }
  }
  bool captured = state().captureAny && state().capturing == uintptr_t(stream);
  if (!captured)
    if (std::string why = runHostTwin(node); !why.empty()) {
      record(what + ": INVALID: " + why);
      return CUDA_ERROR_INVALID_VALUE;
    }
  record(what + (captured ? " captured" : ""));
  if (captured)
    captureNode(std::move(node));
  return CUDA_SUCCESS;
}
} // namespace

FAKE(cuLaunchKernel)(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                     unsigned by, unsigned bz, unsigned sharedBytes, CUstream stream,
                     void **params, void **extra) {
  REQUIRE_INIT();
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return launch("cuLaunchKernel", function, grid, block, sharedBytes, stream, params, extra,
                false);
}
FAKE(cuLaunchKernelEx)(const CUlaunchConfig *config, CUfunction function, void **params,
                       void **extra) {
  REQUIRE_INIT();
  if (!config || (config->numAttrs && !config->attrs)) {
    record("cuLaunchKernelEx: INVALID: no config");
    return CUDA_ERROR_INVALID_VALUE;
  }
  bool cooperative = false, programmatic = false;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute &attribute = config->attrs[i];
    if (attribute.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
      cooperative = attribute.value.cooperative != 0;
    else if (attribute.id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      programmatic = attribute.value.programmaticStreamSerializationAllowed != 0;
    else {
      record("cuLaunchKernelEx: INVALID: an attribute the fake does not know (" +
             std::to_string(int(attribute.id)) + ")");
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  // Programmatic dependent launch needs compute capability 9.0, as the driver's.
  if (programmatic && computeCapabilityMajor() < 9) {
    record("cuLaunchKernelEx: INVALID: programmatic dependent launch below sm_90");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  const unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  const unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
  return launch("cuLaunchKernelEx", function, grid, block, config->sharedMemBytes, config->hStream,
                params, extra, cooperative, programmatic);
}
FAKE(cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, CUfunction function,
                                                  int blockSize, size_t sharedBytes) {
  REQUIRE_INIT();
  auto it = state().functions.find(uintptr_t(function));
  if (it == state().functions.end())
    return CUDA_ERROR_INVALID_HANDLE;
  if (blockSize < 1 || blockSize > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  *blocks = int(blocksPerMultiprocessor(unsigned(blockSize)));
  record("cuOccupancyMaxActiveBlocksPerMultiprocessor(" + it->second.name + ", " +
         std::to_string(blockSize) + ", " + std::to_string(sharedBytes) + "): " +
         std::to_string(*blocks));
  return CUDA_SUCCESS;
}
FAKE(cuStreamBeginCapture_v2)(CUstream stream, CUstreamCaptureMode mode) {
  REQUIRE_INIT();
  if (state().captureAny) {
    record("cuStreamBeginCapture: INVALID: a capture is under way");
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  record("cuStreamBeginCapture(mode " + std::to_string(int(mode)) + ")");
  state().captureAny = true;
  state().capturing = uintptr_t(stream);
  state().captured.clear();
  state().captureDeps.clear();
  state().depsUpdated = false;
  return CUDA_SUCCESS;
}
FAKE(cuStreamGetCaptureInfo_v2)
(CUstream stream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
 const CUgraphNode **deps, size_t *count) {
  REQUIRE_INIT();
  static thread_local std::vector<CUgraphNode> nodes;
  const bool capturing = state().captureAny && state().capturing == uintptr_t(stream);
  nodes.clear();
  if (capturing)
    for (size_t d : state().captureDeps) // node i's handle is i + 1
      nodes.push_back(reinterpret_cast<CUgraphNode>(uintptr_t(d + 1)));
  if (status)
    *status = capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  if (id)
    *id = capturing ? 1 : 0;
  if (graph)
    *graph = nullptr;
  if (deps)
    *deps = nodes.data();
  if (count)
    *count = nodes.size();
  return CUDA_SUCCESS;
}
FAKE(cuStreamUpdateCaptureDependencies)
(CUstream stream, CUgraphNode *deps, size_t count, unsigned flags) {
  REQUIRE_INIT();
  if (!state().captureAny || state().capturing != uintptr_t(stream)) {
    record("cuStreamUpdateCaptureDependencies: INVALID: the stream is not being captured");
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  if (flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES && flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES)
    return CUDA_ERROR_INVALID_VALUE;
  std::vector<size_t> given;
  for (size_t i = 0; i < count; ++i) {
    const uintptr_t handle = reinterpret_cast<uintptr_t>(deps[i]);
    if (handle == 0 || handle > state().captured.size()) {
      record("cuStreamUpdateCaptureDependencies: INVALID: not a node of the capture");
      return CUDA_ERROR_INVALID_VALUE;
    }
    given.push_back(handle - 1);
  }
  if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES)
    state().captureDeps.clear();
  for (size_t d : given)
    if (std::find(state().captureDeps.begin(), state().captureDeps.end(), d) ==
        state().captureDeps.end())
      state().captureDeps.push_back(d);
  state().depsUpdated = true;
  return CUDA_SUCCESS;
}
FAKE(cuStreamEndCapture)(CUstream stream, CUgraph *graph) {
  REQUIRE_INIT();
  if (!state().captureAny || state().capturing != uintptr_t(stream)) {
    record("cuStreamEndCapture: INVALID: the stream is not being captured");
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  uintptr_t handle = state().nextHandle++;
  record("cuStreamEndCapture(" + std::to_string(state().captured.size()) + " nodes)");
  // A graph whose nodes wait for what they depend on: how long its
  // longest path is, against its nodes (a chain's is all of them).
  if (state().depsUpdated) {
    size_t edges = 0;
    for (const Node &node : state().captured)
      edges += node.deps.size();
    record("captured graph: " + std::to_string(state().captured.size()) + " nodes, " +
           std::to_string(edges) + " edges, the longest path " +
           std::to_string(longestPath(state().captured)) + " nodes");
  }
  state().graphs[handle] = std::move(state().captured);
  state().captured.clear();
  state().captureAny = false;
  state().capturing = 0;
  *graph = reinterpret_cast<CUgraph>(handle);
  return CUDA_SUCCESS;
}
FAKE(cuGraphInstantiateWithFlags)(CUgraphExec *exec, CUgraph graph, unsigned long long) {
  REQUIRE_INIT();
  auto it = state().graphs.find(uintptr_t(graph));
  if (it == state().graphs.end())
    return CUDA_ERROR_INVALID_HANDLE;
  uintptr_t handle = state().nextHandle++;
  state().execs[handle] = it->second;
  record("cuGraphInstantiate");
  *exec = reinterpret_cast<CUgraphExec>(handle);
  return CUDA_SUCCESS;
}
FAKE(cuGraphLaunch)(CUgraphExec exec, CUstream) {
  REQUIRE_INIT();
  REFUSE_WHILE_CAPTURING("cuGraphLaunch");
  auto it = state().execs.find(uintptr_t(exec));
  if (it == state().execs.end())
    return CUDA_ERROR_INVALID_HANDLE;
  record("cuGraphLaunch(" + std::to_string(it->second.size()) + " nodes)");
  // Replayed in order: launches checked again (their buffers must still be
  // live), host work done.
  for (const Node &node : it->second) {
    if (node.run) {
      node.run(node.context.get());
      continue;
    }
    std::string why = checkLaunch(node);
    if (why.empty())
      why = runHostTwin(node);
    if (!why.empty()) {
      record("cuGraphLaunch: INVALID: " + describeLaunch(node) + ": " + why);
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}
FAKE(cuGraphExecDestroy)(CUgraphExec exec) {
  REQUIRE_INIT();
  return state().execs.erase(uintptr_t(exec)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
FAKE(cuGraphDestroy)(CUgraph graph) {
  REQUIRE_INIT();
  return state().graphs.erase(uintptr_t(graph)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
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
  REFUSE_WHILE_CAPTURING("cuStreamSynchronize");
  record("cuStreamSynchronize");
  return CUDA_SUCCESS;
}
// Events (tfc-kernel-check's timings, bench --profile): two events are a
// microsecond apart for each call recorded between them (their own first's
// included), so an operation between two has a time of its own.
#undef cuEventElapsedTime // cuda.h's _v2 (12.8); tfc asks for the 2000 ABI
FAKE(cuEventCreate)(CUevent *event, unsigned int) {
  REQUIRE_INIT();
  *event = reinterpret_cast<CUevent>(state().nextHandle++);
  return CUDA_SUCCESS;
}
FAKE(cuEventRecord)(CUevent event, CUstream) {
  REQUIRE_INIT();
  state().eventAt[reinterpret_cast<uintptr_t>(event)] = state().clock;
  record("cuEventRecord");
  return CUDA_SUCCESS;
}
FAKE(cuEventSynchronize)(CUevent) {
  REQUIRE_INIT();
  return CUDA_SUCCESS;
}
FAKE(cuEventElapsedTime)(float *milliseconds, CUevent start, CUevent end) {
  REQUIRE_INIT();
  auto at = [](CUevent e) { return state().eventAt[reinterpret_cast<uintptr_t>(e)]; };
  *milliseconds = float(double(at(end) - at(start)) * 1e-3);
  return CUDA_SUCCESS;
}
FAKE(cuEventDestroy_v2)(CUevent) {
  REQUIRE_INIT();
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
    ENTRY("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2),
    ENTRY("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2),
    ENTRY("cuMemsetD8", cuMemsetD8_v2),
    ENTRY("cuModuleLoadData", cuModuleLoadData),
    ENTRY("cuModuleUnload", cuModuleUnload),
    ENTRY("cuModuleGetFunction", cuModuleGetFunction),
    ENTRY("cuLaunchKernel", cuLaunchKernel),
    ENTRY("cuLaunchKernelEx", cuLaunchKernelEx),
    ENTRY("cuOccupancyMaxActiveBlocksPerMultiprocessor",
          cuOccupancyMaxActiveBlocksPerMultiprocessor),
    ENTRY("cuStreamCreate", cuStreamCreate),
    ENTRY("cuStreamDestroy", cuStreamDestroy_v2),
    ENTRY("cuStreamSynchronize", cuStreamSynchronize),
    ENTRY("cuFuncSetAttribute", cuFuncSetAttribute),
    ENTRY("cuStreamBeginCapture", cuStreamBeginCapture_v2),
    ENTRY("cuStreamEndCapture", cuStreamEndCapture),
    ENTRY("cuStreamGetCaptureInfo", cuStreamGetCaptureInfo_v2),
    ENTRY("cuStreamUpdateCaptureDependencies", cuStreamUpdateCaptureDependencies),
    ENTRY("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags),
    ENTRY("cuGraphLaunch", cuGraphLaunch),
    ENTRY("cuGraphExecDestroy", cuGraphExecDestroy),
    ENTRY("cuGraphDestroy", cuGraphDestroy),
    ENTRY("cuEventCreate", cuEventCreate),
    ENTRY("cuEventRecord", cuEventRecord),
    ENTRY("cuEventSynchronize", cuEventSynchronize),
    ENTRY("cuEventElapsedTime", cuEventElapsedTime),
    ENTRY("cuEventDestroy", cuEventDestroy_v2),
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
/// Forgets the log, the allocations (leaked), modules, graphs and init.
FAKE_EXPORT void tfcFakeCudaReset() {
  State &s = state();
  s.log.clear();
  s.allocations.clear();
  s.modules.clear();
  s.functions.clear();
  s.graphs.clear();
  s.execs.clear();
  s.captured.clear();
  s.captureDeps.clear();
  s.depsUpdated = false;
  s.captureAny = false;
  s.capturing = 0;
  s.initialized = false;
}
/// Host work on `stream` (the fake cuBLASLt's GEMMs): done now, or, while
/// the stream is being captured, recorded into its graph and done at every
/// cuGraphLaunch. `release` frees `context` when no graph holds it.
FAKE_EXPORT void tfcFakeCudaEnqueue(CUstream stream, void (*run)(void *), void *context,
                                    void (*release)(void *)) {
  std::shared_ptr<void> owned(context, release);
  if (state().captureAny && state().capturing == uintptr_t(stream)) {
    Node node;
    node.run = run;
    node.context = std::move(owned);
    captureNode(std::move(node));
    return;
  }
  run(context);
}
/// Whether `stream` is being captured (the fake NCCL's calls are then
/// captured too).
FAKE_EXPORT bool tfcFakeCudaCapturing(CUstream stream) {
  return state().captureAny && state().capturing == uintptr_t(stream);
}
/// Whether [pointer, pointer + bytes) lies inside one live allocation.
FAKE_EXPORT bool tfcFakeCudaDeviceRange(uintptr_t pointer, size_t bytes) {
  return deviceRange(CUdeviceptr(pointer), bytes);
}
/// The live allocation holding `pointer`: its start and size (false: none).
FAKE_EXPORT bool tfcFakeCudaAllocationOf(uintptr_t pointer, uintptr_t *base, size_t *bytes) {
  auto &allocations = state().allocations;
  auto it = allocations.upper_bound(pointer);
  if (it == allocations.begin())
    return false;
  --it;
  if (pointer >= it->first + it->second)
    return false;
  *base = it->first;
  *bytes = it->second;
  return true;
}
/// Appends a line to the log (the fake cuBLASLt's and fake NCCL's calls).
FAKE_EXPORT void tfcFakeCudaRecord(const char *line) { record(line); }
/// Bytes allocated and not freed.
FAKE_EXPORT size_t tfcFakeCudaAllocatedBytes() {
  size_t used = 0;
  for (auto &a : state().allocations)
    used += a.second;
  return used;
}
