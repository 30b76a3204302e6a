//===- Nccl.cpp - NCCL, loaded at run time, for data-parallel training ----===//

#include "runtime/cuda/Nccl.h"

#include "runtime/cuda/Driver.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

// NCCL's ABI as tfc calls it (nccl.h's values; checked below where nccl.h is).
namespace tfc::rt::cuda::nccl_abi {
using Result = int;              // ncclResult_t
using Comm = void *;             // ncclComm_t
constexpr int kUniqueIdBytes = 128;
struct UniqueId {                // ncclUniqueId
  char internal[kUniqueIdBytes];
};
constexpr Result kSuccess = 0;   // ncclSuccess
constexpr int kFloat32 = 7;      // ncclFloat32
constexpr int kAvg = 4;          // ncclAvg
} // namespace tfc::rt::cuda::nccl_abi

#if __has_include(<nccl.h>)
#include <nccl.h>
static_assert(sizeof(ncclUniqueId) == sizeof(tfc::rt::cuda::nccl_abi::UniqueId));
static_assert(NCCL_UNIQUE_ID_BYTES == tfc::rt::cuda::nccl_abi::kUniqueIdBytes);
static_assert(int(ncclSuccess) == tfc::rt::cuda::nccl_abi::kSuccess);
static_assert(int(ncclFloat32) == tfc::rt::cuda::nccl_abi::kFloat32);
static_assert(int(ncclAvg) == tfc::rt::cuda::nccl_abi::kAvg);
static_assert(sizeof(ncclResult_t) == sizeof(int) && sizeof(ncclComm_t) == sizeof(void *));
#endif

namespace tfc::rt::cuda {

using namespace nccl_abi;

/// X(field, symbol, pointer type): every NCCL entry point tfc calls.
#define TFC_NCCL_FUNCTIONS(X)                                                                      \
  X(getVersion, "ncclGetVersion", Result (*)(int *))                                               \
  X(getErrorString, "ncclGetErrorString", const char *(*)(Result))                                 \
  X(getUniqueId, "ncclGetUniqueId", Result (*)(UniqueId *))                                        \
  X(commInitRank, "ncclCommInitRank", Result (*)(Comm *, int, UniqueId, int))                      \
  X(commDestroy, "ncclCommDestroy", Result (*)(Comm))                                              \
  X(allReduce, "ncclAllReduce",                                                                    \
    Result (*)(const void *, void *, size_t, int, int, Comm, CUstream))

template <typename T> using Pointer = T; // a function pointer type as one name

struct Nccl::Api {
#define TFC_NCCL_FIELD(field, symbol, ...) Pointer<__VA_ARGS__> field = nullptr;
  TFC_NCCL_FUNCTIONS(TFC_NCCL_FIELD)
#undef TFC_NCCL_FIELD
};

const std::vector<std::string> &defaultNcclCandidates() {
  static const std::vector<std::string> candidates = {
      "libnccl.so.2",
      "/usr/local/cuda/lib64/libnccl.so.2",
      "/usr/local/cuda/lib/libnccl.so.2",
      "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
  };
  return candidates;
}

Nccl::Nccl() : api_(std::make_unique<Api>()) {}

std::unique_ptr<Nccl> Nccl::load(std::string &error) {
  std::vector<std::string> candidates = defaultNcclCandidates();
  const char *source = "";
  if (const char *path = std::getenv("TFC_NCCL_LIBRARY"); path && *path) {
    candidates = {path};
    source = " (from TFC_NCCL_LIBRARY)";
  }
  std::string tried, path;
  void *library = openFirstLibrary(candidates, path, tried);
  if (!library) {
    error = "no NCCL: tried " + tried + source +
            "; data-parallel training on GPUs needs NCCL 2.10 or later (libnccl2; set "
            "TFC_NCCL_LIBRARY to its path)";
    return nullptr;
  }
  std::unique_ptr<Nccl> nccl(new Nccl());
  nccl->library_ = library;
  nccl->path_ = path;
  std::string missing;
#define TFC_NCCL_RESOLVE(field, symbol, ...)                                                       \
  nccl->api_->field = reinterpret_cast<Pointer<__VA_ARGS__>>(dlsym(library, symbol));              \
  if (!nccl->api_->field)                                                                          \
    missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  TFC_NCCL_FUNCTIONS(TFC_NCCL_RESOLVE)
#undef TFC_NCCL_RESOLVE
  if (!missing.empty()) {
    error = "the NCCL library " + path + " has no " + missing + ": it is not NCCL 2";
    return nullptr;
  }
  if (!nccl->check(nccl->api_->getVersion(&nccl->version_), "ncclGetVersion", error))
    return nullptr;
  if (nccl->version_ < kMinNcclVersion) {
    error = "the NCCL library " + path + " is NCCL " + nccl->versionText() +
            "; tfc needs 2.10 or later (ncclAvg)";
    return nullptr;
  }
  return nccl;
}

Nccl::~Nccl() {
  if (comm_)
    api_->commDestroy(comm_);
  if (library_)
    dlclose(library_);
}

std::string Nccl::versionText() const {
  // NCCL_VERSION(X, Y, Z): X*10000 + Y*100 + Z from 2.9 on, X*1000 + Y*100 + Z before.
  int major = version_ >= 10000 ? version_ / 10000 : version_ / 1000;
  int minor = version_ >= 10000 ? version_ / 100 % 100 : version_ / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(version_ % 100);
}

bool Nccl::check(int result, const std::string &call, std::string &error) const {
  if (result == kSuccess)
    return true;
  const char *text = api_->getErrorString ? api_->getErrorString(result) : nullptr;
  error = call + ": " + (text ? std::string(text) : "ncclResult_t " + std::to_string(result)) +
          " (NCCL " + versionText() + ", " + path_ + ")";
  return false;
}

bool Nccl::join(int rank, int ranks, const BroadcastFn &broadcast, std::string &error) {
  if (comm_)
    return true;
  UniqueId id;
  std::memset(&id, 0, sizeof id);
  if (rank == 0 && !check(api_->getUniqueId(&id), "ncclGetUniqueId", error))
    return false;
  if (ranks > 1 && !broadcast(&id, sizeof id, error))
    return false;
  Comm comm = nullptr;
  if (!check(api_->commInitRank(&comm, ranks, id, rank), "ncclCommInitRank(rank " +
                                                             std::to_string(rank) + " of " +
                                                             std::to_string(ranks) + ")",
             error))
    return false;
  comm_ = comm;
  rank_ = rank;
  ranks_ = ranks;
  return true;
}

bool Nccl::allreduceMean(float *data, size_t n, CUstream stream, std::string &error) {
  if (!comm_) {
    error = "ncclAllReduce: no communicator (the ranks have not joined)";
    return false;
  }
  Result result = api_->allReduce(data, data, n, kFloat32, kAvg, comm_, stream);
  return result == kSuccess ||
         check(result, "ncclAllReduce(" + std::to_string(n) + " floats, ncclAvg, rank " +
                           std::to_string(rank_) + " of " + std::to_string(ranks_) + ")",
               error);
}

} // namespace tfc::rt::cuda
