//===- KernelProfile.h - each operation of an entry timed on the GPU ------===//
//
// `bench --profile` on a CUDA binary: the entries run eagerly (a graph's
// replay has no seams to time), and each operation on the stream (a
// generated kernel, a hand-written one, a cuBLASLt call, a copy, NCCL's
// all-reduce) is bracketed by two events; their distance is its device time
// alone (the stream's idle time before it, the host's launch, is not). The
// events are reused: collect() waits for the stream and adds up the
// distances so far, once a call. Names group calls: a kernel's name, a
// GEMM's shape and epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_KERNELPROFILE_H
#define TFC_RUNTIME_CUDA_KERNELPROFILE_H

#include "runtime/Device.h"
#include "runtime/cuda/Driver.h"

#include <map>
#include <string>
#include <vector>

namespace tfc::rt::cuda {

class KernelProfile {
public:
  explicit KernelProfile(CudaDriver &driver) : driver_(driver) {}
  ~KernelProfile();
  KernelProfile(const KernelProfile &) = delete;
  KernelProfile &operator=(const KernelProfile &) = delete;

  /// Records the start of operation `name` of `kind` on `stream`, then its
  /// end: between the two, exactly one operation is enqueued.
  bool begin(const std::string &name, const char *kind, CUstream stream, std::string &error);
  bool end(CUstream stream, std::string &error);
  /// Waits for `stream` and adds the distances recorded since the last
  /// collect to their operations; the events are free again.
  bool collect(CUstream stream, std::string &error);
  /// tfc_cuda_graph_node's: the operations begun from now on are node
  /// `index` of the current entry's graph (0 starts one), which waits for
  /// the `count` nodes at `deps`.
  void node(int64_t index, const int32_t *deps, int64_t count);
  /// Each collected call's longest path of nodes that wait for each other
  /// (the operations outside any entry in series with it), summed, and the
  /// calls: none where no entry named nodes.
  double longestPathMs() const { return pathMs_; }
  int64_t pathCalls() const { return pathCalls_; }
  /// The operations so far, in the order of their first call.
  const std::vector<ProfiledOp> &ops() const { return ops_; }

private:
  struct Mark {
    size_t op;
    CUevent start, end;
    int64_t graph = -1, node = -1; // graphs_'s, or -1: outside any entry's graph
  };
  /// An entry's graph in the current call: each node's dependencies and time.
  struct Graph {
    std::vector<std::vector<int32_t>> deps;
    std::vector<double> ms;
  };
  std::vector<Graph> graphs_; // the call's entries, in order
  int64_t node_ = -1;
  double pathMs_ = 0;
  int64_t pathCalls_ = 0;
  bool event(CUevent &out, std::string &error);

  CudaDriver &driver_;
  std::vector<ProfiledOp> ops_;
  std::map<std::string, size_t> byName_;
  std::vector<Mark> marks_; // recorded since the last collect
  std::vector<CUevent> free_, all_;
};

} // namespace tfc::rt::cuda

#endif // TFC_RUNTIME_CUDA_KERNELPROFILE_H
