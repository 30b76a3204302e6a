//===- Nccl.h - NCCL, loaded at run time, for data-parallel training ------===//
//
// A CUDA binary trained data-parallel (runtime/Distributed.h) averages each
// step's gradients, loss and metrics across the ranks' GPUs with NCCL's
// all-reduce, in place on the model's stream. Like the driver (Driver.h)
// and cuBLASLt, NCCL is dlopen()ed, and only when a data-parallel run needs
// it: a binary starts without it, and one that trains on one GPU never
// loads it. The library is $TFC_NCCL_LIBRARY when set (tests point it at a
// fake, tests/unit/FakeNccl.cpp), else libnccl.so.2 by the loader's search
// path, then where the CUDA toolkit and NVIDIA's packages put it.
//
// The declarations tfc calls NCCL through are its own (NCCL's ABI: an
// opaque communicator, a 128-byte unique id, the enums' values), so the
// runtime builds where nccl.h is not (NCCL is not part of every CUDA
// toolkit); where it is, Nccl.cpp checks them against it.
//
// Every call is checked: a result other than ncclSuccess becomes one line
// naming the call and ncclGetErrorString's text, e.g. "ncclCommInitRank(rank
// 1 of 2): unhandled system error (run with NCCL_DEBUG=INFO for details)
// (NCCL 2.28.9, libnccl.so.2)".
//
// Determinism: NCCL sums in an order fixed by its algorithm and the
// topology (ring or tree over the same GPUs and links), never by timing, so
// the same ranks on the same GPUs give the same bits run to run; another
// GPU count or topology may round differently.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_NCCL_H
#define TFC_RUNTIME_CUDA_NCCL_H

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tfc::rt::cuda {

/// The oldest NCCL tfc uses: 2.10 (ncclAvg), as NCCL_VERSION_CODE counts.
constexpr int kMinNcclVersion = 21000;

/// The libraries Nccl::load tries, in order, when $TFC_NCCL_LIBRARY is unset.
const std::vector<std::string> &defaultNcclCandidates();

/// Hands `bytes` at `data` from rank 0 to every rank (dist::broadcast).
using BroadcastFn = std::function<bool(void *data, size_t bytes, std::string &error)>;

class Nccl {
public:
  /// Loads NCCL and resolves its entry points; null with `error` set: "no
  /// NCCL: tried libnccl.so.2, ...; data-parallel training on GPUs needs
  /// NCCL 2.10 or later (libnccl2; set TFC_NCCL_LIBRARY to its path)".
  static std::unique_ptr<Nccl> load(std::string &error);
  /// Destroys the communicator (with the device's context current).
  ~Nccl();
  Nccl(const Nccl &) = delete;
  Nccl &operator=(const Nccl &) = delete;

  /// Joins a communicator of `ranks` ranks as `rank`, on the device of the
  /// context current on this thread: rank 0 makes the unique id
  /// (ncclGetUniqueId) and `broadcast` hands it to every rank (one rank
  /// needs none), then ncclCommInitRank. Once.
  bool join(int rank, int ranks, const BroadcastFn &broadcast, std::string &error);
  /// ncclAllReduce of `n` floats in place with ncclAvg on `stream`: queued
  /// behind what the stream holds, not waited for. After join.
  bool allreduceMean(float *data, size_t n, CUstream stream, std::string &error);

  /// The library as dlopen() was given it, and its NCCL_VERSION_CODE.
  const std::string &path() const { return path_; }
  int version() const { return version_; }
  /// "2.28.9".
  std::string versionText() const;

  struct Api; // the entry points (Nccl.cpp)

private:
  Nccl();
  /// True on ncclSuccess; else false with `error` "<call>: <text>".
  bool check(int result, const std::string &call, std::string &error) const;

  void *library_ = nullptr;
  std::string path_;
  int version_ = 0;
  std::unique_ptr<Api> api_;
  void *comm_ = nullptr; // ncclComm_t
  int rank_ = 0, ranks_ = 0;
};

} // namespace tfc::rt::cuda

#endif // TFC_RUNTIME_CUDA_NCCL_H
