//===- FakeNccl.cpp - NCCL without GPUs, for tests ------------------------===//
//
// A shared library that the CUDA runtime loads through TFC_NCCL_LIBRARY in
// place of libnccl.so.2 (runtime/cuda/Nccl.h), beside the fake driver
// (FakeCudaDriver.cpp, whose device memory is host memory). It has the entry
// points tfc calls, with NCCL's meaning, and checks each call as NCCL would
// refuse it, answering ncclInvalidArgument with an "INVALID" line in the log:
//   ncclGetUniqueId       writes an id naming this process ("tfc-fake-nccl
//                         pid N"), which the other ranks must be handed;
//   ncclCommInitRank      a rank in [0, nranks) and an id ncclGetUniqueId
//                         made (in some rank);
//   ncclAllReduce         ncclFloat32, ncclAvg, in place, every float inside
//                         one live allocation of the fake driver, a
//                         communicator that exists. One rank: nothing to
//                         do. Several: the mean through the MPI already
//                         loaded in the process (the runtime's libmpi, found
//                         with dlsym): MPI_Allreduce's sum over the ranks.
//                         On a stream being captured (a graph), logged
//                         "... captured", and done and logged at each
//                         replay instead, as NCCL's kernel runs.
// Every call is recorded in the fake driver's log (so in order with its
// launches and copies, in TFC_FAKE_CUDA_LOG): "ncclAllReduce(N floats at +O
// in an allocation of B bytes, ncclFloat32, ncclAvg, rank R of K)".
// Failures are chosen by environment variables read at each call:
//   TFC_FAKE_NCCL_FAIL=ncclXxx    that call returns ncclSystemError
//   TFC_FAKE_NCCL_VERSION=N       ncclGetVersion's answer (default 22809)
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <unistd.h>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSuccess = 0, kSystemError = 2, kInvalidArgument = 4;
constexpr int kFloat32 = 7, kAvg = 4;
constexpr char kIdPrefix[] = "tfc-fake-nccl pid ";

struct UniqueId {
  char internal[128];
};
struct Comm {
  int rank, ranks;
};

/// The fake driver's exports, through the library the runtime loaded.
struct Driver {
  void (*record)(const char *) = nullptr;
  bool (*allocationOf)(uintptr_t, uintptr_t *, size_t *) = nullptr;
  bool (*capturing)(CUstream) = nullptr;
  void (*enqueue)(CUstream, void (*)(void *), void *, void (*)(void *)) = nullptr;
  Driver() {
    const char *path = std::getenv("TFC_CUDA_DRIVER");
    void *handle = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    if (!handle)
      return;
    record = reinterpret_cast<decltype(record)>(dlsym(handle, "tfcFakeCudaRecord"));
    allocationOf =
        reinterpret_cast<decltype(allocationOf)>(dlsym(handle, "tfcFakeCudaAllocationOf"));
    capturing = reinterpret_cast<decltype(capturing)>(dlsym(handle, "tfcFakeCudaCapturing"));
    enqueue = reinterpret_cast<decltype(enqueue)>(dlsym(handle, "tfcFakeCudaEnqueue"));
  }
};

Driver &driver() {
  static Driver d;
  return d;
}

void record(const std::string &line) {
  if (driver().record)
    driver().record(line.c_str());
  else
    std::fprintf(stderr, "fake NCCL (no fake driver loaded): %s\n", line.c_str());
}

bool failing(const char *call) {
  const char *fail = std::getenv("TFC_FAKE_NCCL_FAIL");
  if (!fail || std::strcmp(fail, call) != 0)
    return false;
  record(std::string(call) + ": failing (TFC_FAKE_NCCL_FAIL)");
  return true;
}

int invalid(const std::string &call, const std::string &why) {
  record(call + ": INVALID: " + why);
  return kInvalidArgument;
}

/// The mean over the ranks of `n` floats in place, through Open MPI's
/// MPI_Allreduce (the runtime loaded libmpi RTLD_GLOBAL): summed, then
/// divided by the rank count.
bool mpiMean(float *data, size_t n, int ranks) {
  using AllreduceFn = int (*)(const void *, void *, int, void *, void *, void *);
  auto allreduce = reinterpret_cast<AllreduceFn>(dlsym(RTLD_DEFAULT, "MPI_Allreduce"));
  void *floatType = dlsym(RTLD_DEFAULT, "ompi_mpi_float");
  void *sum = dlsym(RTLD_DEFAULT, "ompi_mpi_op_sum");
  void *world = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
  if (!allreduce || !floatType || !sum || !world || n > size_t(INT32_MAX))
    return false;
  std::string copy(reinterpret_cast<const char *>(data), n * sizeof(float));
  if (allreduce(copy.data(), data, int(n), floatType, sum, world) != 0)
    return false;
  for (size_t i = 0; i < n; ++i)
    data[i] /= float(ranks);
  return true;
}

/// An ncclAllReduce's work: the mean of `count` floats at `data` over
/// `ranks` (nothing to do for one), recorded as `call`.
struct Reduction {
  float *data;
  size_t count;
  int ranks;
  std::string call;
};
bool reduceNow(const Reduction &r) {
  if (r.ranks > 1 && !mpiMean(r.data, r.count, r.ranks)) {
    record(r.call + ": no MPI in the process to average across ranks");
    return false;
  }
  record(r.call);
  return true;
}
void reduce(void *work) { reduceNow(*static_cast<Reduction *>(work)); }

} // namespace

FAKE_EXPORT int ncclGetVersion(int *version) {
  const char *text = std::getenv("TFC_FAKE_NCCL_VERSION");
  *version = text && *text ? std::atoi(text) : 22809;
  record("ncclGetVersion(" + std::to_string(*version) + ")");
  return kSuccess;
}

FAKE_EXPORT const char *ncclGetErrorString(int result) {
  switch (result) {
  case kSuccess:
    return "no error";
  case kSystemError:
    return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case kInvalidArgument:
    return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  default:
    return "unknown result code";
  }
}

FAKE_EXPORT int ncclGetUniqueId(UniqueId *id) {
  if (failing("ncclGetUniqueId"))
    return kSystemError;
  std::memset(id, 0, sizeof *id);
  std::snprintf(id->internal, sizeof id->internal, "%s%d", kIdPrefix, int(getpid()));
  record(std::string("ncclGetUniqueId(") + id->internal + ")");
  return kSuccess;
}

FAKE_EXPORT int ncclCommInitRank(Comm **comm, int ranks, UniqueId id, int rank) {
  if (failing("ncclCommInitRank"))
    return kSystemError;
  std::string text(id.internal, strnlen(id.internal, sizeof id.internal));
  std::string call = "ncclCommInitRank(rank " + std::to_string(rank) + " of " +
                     std::to_string(ranks) + ", id '" + text + "')";
  if (ranks < 1 || rank < 0 || rank >= ranks)
    return invalid(call, "no such rank");
  if (text.rfind(kIdPrefix, 0) != 0)
    return invalid(call, "an id ncclGetUniqueId did not make");
  *comm = new Comm{rank, ranks};
  record(call);
  return kSuccess;
}

FAKE_EXPORT int ncclCommDestroy(Comm *comm) {
  if (!comm)
    return invalid("ncclCommDestroy", "a null communicator");
  record("ncclCommDestroy(rank " + std::to_string(comm->rank) + ")");
  delete comm;
  return kSuccess;
}

FAKE_EXPORT int ncclAllReduce(const void *send, void *receive, size_t count, int type, int op,
                              Comm *comm, CUstream stream) {
  if (failing("ncclAllReduce"))
    return kSystemError;
  if (!comm)
    return invalid("ncclAllReduce", "no communicator");
  uintptr_t base = 0;
  size_t bytes = 0;
  std::string call = "ncclAllReduce(" + std::to_string(count) + " floats";
  if (!driver().allocationOf ||
      !driver().allocationOf(uintptr_t(receive), &base, &bytes))
    return invalid(call + ")", "not in device memory");
  call += " at +" + std::to_string(uintptr_t(receive) - base) + " in an allocation of " +
          std::to_string(bytes) + " bytes, " + (type == kFloat32 ? "ncclFloat32" : "another type") +
          ", " + (op == kAvg ? "ncclAvg" : "another op") + ", rank " +
          std::to_string(comm->rank) + " of " + std::to_string(comm->ranks) + ")";
  if (type != kFloat32 || op != kAvg)
    return invalid(call, "tfc asks for ncclFloat32 with ncclAvg");
  if (send != receive)
    return invalid(call, "not in place");
  if (uintptr_t(receive) + count * sizeof(float) > base + bytes)
    return invalid(call, "past the end of its allocation");
  // Captured: the reduction is done, and recorded, at each replay of the
  // graph (as NCCL's kernel would run), on the stream's work of the fake.
  if (driver().capturing && driver().enqueue && driver().capturing(stream)) {
    record(call + " captured");
    auto *work = new Reduction{static_cast<float *>(receive), count, comm->ranks, call};
    driver().enqueue(stream, reduce, work, [](void *w) { delete static_cast<Reduction *>(w); });
    return kSuccess;
  }
  Reduction now{static_cast<float *>(receive), count, comm->ranks, call};
  return reduceNow(now) ? kSuccess : kSystemError;
}
