//===- CudaDevice.h - a CUDA GPU as the runtime's Device -------------------===//
//
// runtime/Device.h on the driver API (Driver.h), what createDevice() returns
// in a CUDA binary (libtfc_runtime_cuda.a). Created unopened: nothing is
// loaded until open(), so `info` and `init` run on a machine without a GPU.
// open() loads the driver, opens the device (--device N), loads the model's
// kernel image (tfc_cuda_image) with cuModuleLoadData and resolves every
// kernel the manifest lists, once; cuBLASLt (CublasLt.h) and its workspace
// come with it.
//
// Generated host code calls tfc_cuda_launch and tfc_cuda_sgemm (runtime/
// Abi.h) while run() executes an entry; they reach the device that is
// running it. Those calls cannot return an error: the first failure is kept,
// later launches of that call are skipped, and run() returns it. Memory from
// cuMemAlloc, copies on the context's stream.
//
// Graphs: an entry's first call runs eagerly (its GEMM plans are made and
// any error shows there); its second is captured on the stream
// (cuStreamBeginCapture ... cuStreamEndCapture, cuGraphInstantiate) and
// launched, and every later call with the same buffers replays that graph
// (cuGraphLaunch). A graph holds its buffers' addresses, so each distinct
// set of buffers has its own graph, captured at its first call after the
// entry's eager one: a training step, whose parameters and state swap
// between two buffers and whose loss goes to one of StepFeeds' result
// slots, cycles through a few sets and replays a graph for each. Up to
// kGraphsPerEntry are kept, the least recently used dropped past that.
// DeviceOptions::graphs false (--no-graph) launches eagerly every time.
// A call's batch gathers (Device.h's BatchGather: the training batch from
// the samples on the device) are launched before the entry and captured
// with it: they read the batch's first row from device memory and advance
// it, so one graph replays every step's gathers, and a step is one
// cuGraphLaunch. Their addresses are part of the graph's buffer set.
//
// run() waits for the entry; enqueue() does not (Model::runStep): the next
// copy in or entry queues behind it on the stream, and a copy out waits.
// copyIn does not wait either: from pageable memory the driver has staged
// the bytes when cuMemcpyHtoDAsync returns, so the host may reuse them.
//
// Device's allocate/copyIn/copyOut have no error channel: a failure there is
// kept (the first one) and returned by takeError() and the next run().
//
// Data-parallel training: joinRanks() loads NCCL (Nccl.h) and joins the
// ranks' communicator on this GPU; allreduceMean() is ncclAllReduce with
// ncclAvg on the stream. A step's grad_step, mean, copy of its scores and
// apply_step come as one sequence (enqueueSequence), graphed as an entry
// is: the third step on replays one graph, NCCL's kernel inside it. The
// GPU is --device (or TFC_CUDA_DEVICE) when
// given, else the rank's local rank modulo the node's GPU count.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_CUDADEVICE_H
#define TFC_RUNTIME_CUDA_CUDADEVICE_H

#include "runtime/Abi.h"
#include "runtime/Device.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/DevicePool.h"
#include "runtime/cuda/Driver.h"
#include "runtime/cuda/KernelProfile.h"
#include "runtime/cuda/LayerKernels.h"
#include "runtime/cuda/Nccl.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt::cuda {

/// The most threads a block may have, and the largest grid.
constexpr int64_t kMaxBlockThreads = 1024;
constexpr int64_t kMaxBlockZ = 64;
constexpr int64_t kMaxGridX = 2147483647, kMaxGridYZ = 65535;
/// Dynamic shared memory a kernel gets without opting in.
constexpr int64_t kDefaultSharedBytes = 48 * 1024;
/// Captured graphs kept per entry, one per distinct buffer set: at least
/// the lcm(2, StepFeeds::kResultSlots) sets a training step cycles through.
constexpr size_t kGraphsPerEntry = 4;

/// The device memory a model plans (DevicePool.h): its parameters and
/// optimizer state, twice (current and spare) where a training step writes
/// them into a spare rather than in place, each entry's non-parameter
/// arguments, results (train_step's in StepFeeds' result slots) and arena,
/// and the cuBLASLt workspace, each rounded to the pool's alignment. The
/// training entries that run: train_step in one process; grad_step and
/// apply_step when `dataParallel` (dist::dataParallel), with the exchange's
/// one buffer (runtime/ExchangeLayout.h) in place of grad_step's results and
/// apply_step's gradients, and apply_step's results in the result slots.
size_t plannedDeviceBytes(const Manifest &manifest, bool dataParallel = false);

/// The hand-written kernels' last-block counters: a word a lane
/// (CudaDevice::lastBlockCounter).
constexpr size_t kLastBlockCounterBytes = sizeof(unsigned) * abi::graph::kLanes;

/// TFC_GEMM_AUTOTUNE=1's candidates, and the timed calls of each.
constexpr int kGemmTuneCandidates = 8;
constexpr int kGemmTuneRuns = 5;

class CudaDevice final : public Device {
public:
  /// An unopened device (createDevice() in a CUDA binary).
  CudaDevice() = default;
  /// Opens device `index` without a model (no kernels; tests and tools):
  /// null with `error` set ("no CUDA driver: ...", "cuInit: ...").
  static std::unique_ptr<CudaDevice> openIndex(int index, std::string &error);
  ~CudaDevice() override;
  // Not copied or moved: gemmTimer_ holds this device.
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  std::string name() const override;
  void configure(const DeviceOptions &options) override { options_ = options; }
  /// The driver, device `options.index`, the model's kernels (tfc_cuda_image
  /// and the manifest's "cuda" record) and cuBLASLt. A kernel the image
  /// lacks is an error naming it. cuBLASLt missing is not an error here: the
  /// first tfc_cuda_sgemm reports it.
  bool open(const Manifest &manifest, std::string &error) override;
  std::vector<std::string> describe(const Manifest &manifest) override;
  bool hostMemory() const override { return false; }
  void *allocate(size_t bytes) override;
  void *allocateOutsidePlan(size_t bytes) override;
  void release(void *memory) override;
  void copyIn(void *device, const void *host, size_t bytes) override;
  void copyOut(void *host, const void *device, size_t bytes) override;
  /// Within the pool's one allocation (where every planned buffer is).
  bool oneAllocation(const void *device, size_t bytes) const override {
    return bytes > 0 && pool_.contains(uintptr_t(device)) &&
           pool_.contains(uintptr_t(device) + bytes - 1);
  }
  void copyWithin(void *to, const void *from, size_t bytes) override;
  /// `batch` on the stream, not waited for: gather.cu's gather kernel an
  /// input (a word a thread), then its advance kernel. run() and enqueue()
  /// call it before the entry, so a graph captures it with the entry; false
  /// with `error` set when a launch fails.
  bool gatherBatch(const BatchGather &batch, std::string &error);
  /// Whether the gather kernels loaded (open() loads them with the others).
  bool canGatherRows() const override;
  bool run(EntryFn entry, void **buffers, size_t count, std::string &error,
           const BatchGather *batch = nullptr) override;
  bool enqueue(EntryFn entry, void **buffers, size_t count, std::string &error,
               const BatchGather *batch = nullptr) override;
  bool takeError(std::string &error) override;
  /// NCCL loaded (TFC_NCCL_LIBRARY, else libnccl.so.2) and `ranks` joined
  /// on this GPU, once: rank 0's unique id goes to the others by
  /// ranks.broadcast. Every rank first learns whether every rank loaded
  /// NCCL (ranks.agreeMax), so a rank without it fails them all at once.
  bool joinRanks(const RankGroup &ranks, std::string &error) override;
  /// ncclAllReduce(ncclAvg) in place on the stream, not waited for.
  bool allreduceMean(float *data, size_t n, std::string &error) override;
  /// The operations in order on the stream, not waited for, as one graph:
  /// the first call with these entries eagerly, then a graph for each
  /// distinct set of buffers, as an entry's (the collective captured too:
  /// NCCL 2.9 and later can be).
  bool enqueueSequence(const std::vector<DeviceOp> &ops, std::string &error) override;
  const Nccl *nccl() const { return nccl_.get(); }
  /// `bench --profile` (KernelProfile.h): entries run eagerly, each
  /// operation between two events, until stopProfile. The device is open.
  bool startProfile(std::string &error) override;
  bool stopProfile(std::vector<ProfiledOp> &ops, std::string &error) override;
  double profiledLongestPathMs() const override { return profiledPathMs_; }
  bool profiling() const { return profile_ != nullptr; }
  /// What each operation on the stream does when profiling: brackets it
  /// (a failure is the launch's), nothing otherwise. Use ProfileScope.
  void profileBegin(const std::string &name, const char *kind);
  void profileEnd();
  /// The runtime switches (docs/runtime.md): TFC_SMALL_GEMM (tiny, 1 or 0)
  /// and the on-or-off ones, in the order open() applies them; each applies
  /// where an entry has called the kind of operation it changes.
  std::vector<DeviceSetting> settings() override;
  bool applySetting(const std::string &name, const std::string &value, DeviceSetting::Source source,
                    std::string &error) override;
  /// This GPU, its SMs, driver and cuBLASLt, and the model (its manifest's
  /// digest and kernel image's size).
  std::string tuningKey() const override { return tuningKey_; }
  /// Kept for the kernels to come; GPU code keeps subnormals today.
  void setFlushDenormals(bool flush) override { flushDenormals_ = flush; }
  bool flushDenormals() const { return flushDenormals_; }

  /// Loads `image` (a fatbin, or PTX text ending in NUL) and resolves
  /// `kernels` in it: kernel i of tfc_cuda_launch is kernels[i]. open()
  /// calls it with the model's; tests with their own.
  bool loadKernels(const void *image, const std::vector<std::string> &kernels,
                   std::string &error);
  /// The GEMMs' compute type: open() takes the manifest's "cuda"
  /// "precision"; fp32 until then (tests set it).
  void setGemmPrecision(GemmPrecision precision) { gemmPrecision_ = precision; }
  GemmPrecision gemmPrecision() const { return gemmPrecision_; }
  /// Loads cuBLASLt (TFC_CUBLASLT or the default search) and allocates its
  /// workspace; false with `error` set, kept for the first GEMM to report.
  bool loadCublasLt(std::string &error);

  /// What tfc_cuda_launch and tfc_cuda_sgemm do on this device (outside of
  /// run() too, for tests): enqueue on the stream, or record the first error.
  /// `cooperative` (a persistent kernel, tfc_cuda_launch_cooperative): at
  /// most the blocks the GPU holds at once (grid x is the most it asks for),
  /// launched so that the driver guarantees they run together.
  void launch(intptr_t kernel, const int64_t grid[3], const int64_t block[3],
              int64_t sharedBytes, int64_t argc, const intptr_t *args,
              bool cooperative = false);
  void sgemm(const GemmArgs &args, const GemmEpilogue &epilogue = {});
  /// The most multiply-adds (over the batch) of a product that sgemm sends
  /// to gemm_small.cu's kernels, where kernels::smallGemmFits:
  /// kSmallGemmDefaultWork by default (tiny products), every product that
  /// fits with TFC_SMALL_GEMM=1 at open() or setSmallGemms(true), none
  /// with TFC_SMALL_GEMM=0 or setSmallGemms(false).
  void setSmallGemms(bool on) { smallGemmWork_ = on ? kernels::kSmallGemmMaxWork : 0; }
  /// Whether sgemm computes a bias gradient beside a plain cuBLASLt product,
  /// by gemm_small.cu's column sums, instead of by cuBLASLt's BGRADA/BGRADB
  /// epilogue (TFC_BGRAD_COLUMNS=1 at open(), or this; off by default until
  /// a GPU has measured it: docs/cuda-kernels.md).
  void setBiasGradColumns(bool on) { biasGradColumns_ = on; }
  /// Whether the layer norm backward's last block adds the partials where
  /// they are few (one launch; layer_norm.cu), or a second launch always
  /// does (TFC_LAYER_NORM_ONE_LAUNCH=0 at open(), or this: for timing the
  /// two against each other; the same bits either way).
  void setLayerNormOneLaunch(bool on) { layerNormOneLaunch_ = on; }
  bool layerNormOneLaunch() const { return layerNormOneLaunch_; }
  /// Whether the cross-entropy forward's and fused kernel's last block adds
  /// the losses (one launch; cross_entropy.cu), or the mean kernel does in a
  /// second (TFC_CROSS_ENTROPY_ONE_LAUNCH=0 at open(), or this; the same
  /// bits either way).
  void setCrossEntropyOneLaunch(bool on) { crossEntropyOneLaunch_ = on; }
  bool crossEntropyOneLaunch() const { return crossEntropyOneLaunch_; }
  /// Whether the attention backward reads the statistics its forward saved
  /// (each row's maximum and sum; D as dO . out) where the compiled code
  /// passes them, or recomputes them from q, k, v and dO
  /// (TFC_ATTENTION_SAVED_STATS=0 at open(), or this: for timing the two;
  /// the forward stores them either way).
  void setSavedAttentionStats(bool on) { savedAttentionStats_ = on; }
  bool savedAttentionStats() const { return savedAttentionStats_; }
  /// Whether the attention backward, given its forward's statistics and
  /// the compiled code's room for dS (f32, for the fp32 kernels), runs dkv
  /// first, storing dS for dq to multiply by K instead of recomputing the
  /// scores (attention.cu, attention_tc.cu); TFC_ATTENTION_DS=0 at open(),
  /// or this, recomputes them.
  void setAttentionDsInMemory(bool on) { attentionDsInMemory_ = on; }
  bool attentionDsInMemory() const { return attentionDsInMemory_; }
  /// Whether an attention backward on its forward's statistics whose dq
  /// runs first (no dS) hands dkv the rows' statistics and D through
  /// scratch, where dq stores them, rather than the forward's, from which
  /// dkv computes D = dO . out again for each block of 64 keys (the same
  /// bits either way); TFC_ATTENTION_DQ_STORES_D=0 at open(), or this.
  void setAttentionDqStoresD(bool on) { attentionDqStoresD_ = on; }
  bool attentionDqStoresD() const { return attentionDqStoresD_; }
  /// The tensor-core attention's lean forward and dq (attention_tc.cu):
  /// the same bits in 3 blocks an SM; TFC_ATTENTION_LEAN=1.
  void setLeanAttention(bool on) { leanAttention_ = on; }
  bool leanAttention() const { return leanAttention_; }
  /// The tensor-core attention on wgmma (attention_wgmma.cu; heads of 64,
  /// a GPU that takes its sm_90a image): TFC_ATTENTION_WGMMA=1.
  void setWgmmaAttention(bool on) { wgmmaAttention_ = on; }
  bool wgmmaAttention() const { return wgmmaAttention_; }
  /// With wgmma, its wide forward, dq and dkv (two warpgroups a block
  /// sharing each staged tile, 128 queries or keys): TFC_ATTENTION_WIDE=1.
  void setWideAttention(bool on) { wideAttention_ = on; }
  bool wideAttention() const { return wideAttention_; }
  /// Whether kernels are launched as programmatic dependent launches
  /// (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: each may start
  /// launching while the kernel before it runs, and waits in its first
  /// instruction): the hand-written ones (Warp.cuh's awaitPreviousKernel),
  /// and the generated ones where the manifest's "dependent_launch" lists
  /// this GPU's arch (tf-await-previous-kernel). TFC_DEPENDENT_LAUNCH=1 at
  /// open(), or this; only on compute capability 9.0 and later. Off by
  /// default until a GPU has measured it (docs/cuda-kernels.md).
  void setDependentLaunch(bool on) {
    dependentLaunch_ = on && computeMajor_ >= 9 && !graphDependencies_;
  }
  bool dependentLaunch() const { return dependentLaunch_; }
  /// PROGRAMMATIC_STREAM_SERIALIZATION, allowed: a dependent launch's.
  static CUlaunchAttribute dependentLaunchAttribute();
  /// cuLaunchKernelEx of `function` on the device's stream with `attribute`.
  CUresult launchWith(CUlaunchAttribute attribute, CUfunction function, const int64_t grid[3],
                      const int64_t block[3], int64_t sharedBytes, void **params) const;
  /// The first launch or GEMM failure not yet reported (run() reports and
  /// clears it), or "".
  const std::string &launchError() const { return launchError_; }
  /// The device running an entry now, for tfc_cuda_launch/tfc_cuda_sgemm.
  static CudaDevice *active();
  /// active(), for a runtime function generated code calls (`function`):
  /// those run only inside an entry, so no active device is a bug in tfc,
  /// reported on stderr, then abort. The function is noted as called (a
  /// graph's replay calls none: what its eager call did).
  static CudaDevice &activeFor(const char *function);
  /// Whether an entry has called runtime function `function` on this device,
  /// or a call took (could take, under a switch) the kernels noteCalled named.
  bool called(std::string_view function) const { return called_.count(function) > 0; }
  void noteCalled(std::string_view what) {
    if (!called(what))
      called_.emplace(what);
  }
  /// What attention calls note: heads the tensor-core kernels take, and of
  /// those, heads of 64 (wgmma's).
  static constexpr std::string_view kTensorCoreAttention = "attention on tensor cores";
  static constexpr std::string_view kWgmmaShapedAttention = "attention on tensor cores, d 64";

  /// The first failure of allocate/release/copyIn/copyOut not yet reported
  /// by run() or takeError(), or "".
  const std::string &error() const { return pendingError_; }
  /// Allocations not yet released.
  size_t liveAllocations() const { return liveAllocations_; }
  /// The allocation open() made for the model's planned memory (0: none),
  /// and how much of it is in use.
  size_t poolBytes() const { return pool_.bytes(); }
  size_t poolInUse() const { return pool_.inUse(); }
  /// Graphs captured so far (one per entry and buffer set with graphs on).
  size_t graphsCaptured() const { return graphsCaptured_; }
  /// Graphs held now (at most kGraphsPerEntry an entry).
  size_t graphsHeld() const;
  const CublasLt *cublasLt() const { return cublasLt_.get(); }
  /// Scratch for a hand-written kernel, valid until the next GEMM: the
  /// cuBLASLt workspace (everything runs in order on the one stream, and a
  /// captured graph keeps that order) when cuBLASLt is loaded and `bytes`
  /// fit in it, else 0, and the caller does without. It never loads
  /// cuBLASLt: that allocates, which a graph capture refuses.
  CUdeviceptr scratchFor(size_t bytes) const;
  /// The cuBLASLt workspace of the current op's lane (tfc_cuda_graph_node's
  /// `lane`) and its bytes: with graph dependencies, the workspace split in
  /// abi::graph::kLanes (ops of one lane never run at once); else all of it.
  CUdeviceptr laneWorkspace() const;
  size_t laneWorkspaceBytes() const;
  /// tfc_cuda_graph_node (runtime/Abi.h's abi::graph): the next op's lane,
  /// and, while capturing with graph dependencies, the graph nodes it waits
  /// for: the last nodes of the ops `deps` names (`count` of them), or,
  /// with none, the stream's nodes when the entry began.
  void graphNode(int64_t index, int64_t lane, const int32_t *deps, int64_t count);
  /// Whether a captured graph's nodes wait only for the ops the compiler
  /// says they depend on, so that independent ones run at once
  /// (TFC_GRAPH_DEPENDENCIES=1 at open(), or this before any GEMM); off by
  /// default until a GPU has measured it. An entry compiled with
  /// --no-graph-dependencies is a chain either way. On, it turns dependent
  /// launches off (a dependent launch's edge is to the node before it in
  /// stream order).
  void setGraphDependencies(bool on) {
    graphDependencies_ = on;
    if (on)
      dependentLaunch_ = false;
  }
  bool graphDependencies() const { return graphDependencies_; }
  /// GEMM autotuning (TFC_GEMM_AUTOTUNE=1 at open(), or this before any
  /// GEMM): each cuBLASLt plan's first call, run eagerly, times the
  /// heuristic's first `candidates` algorithms (8 for the setting's 1) on its
  /// operands and keeps the fastest where it beats the first by a tenth
  /// (CublasLt::tune). Off by default (1: the heuristic's first, untimed):
  /// timing may choose otherwise in another process, and so round the sums
  /// otherwise.
  void setGemmAutotune(int candidates);
  /// CublasLt::tune and, with tuning, its cache: TFC_GEMM_AUTOTUNE_CACHE,
  /// else $XDG_CACHE_HOME/tfc/gemm-autotune.txt or ~/.cache/tfc/...
  /// ("none": none), its choices keyed by this GPU, driver and cuBLASLt.
  void configureGemmTuning();
  int gemmAutotune() const { return gemmAutotune_; }
  /// The hand-written kernels (LayerKernels.h), loaded by open(), or here
  /// (a device of openIndex: tests), with their last-block counter.
  const LayerKernels &layerKernels() const { return layerKernels_; }
  void loadLayerKernels();
  /// The word the blocks of the layer norm backward and of the cross-entropy
  /// forward and fused kernels take their tickets from, to find the last
  /// block to finish (layer_norm.cu, cross_entropy.cu): zeroed once here,
  /// and every launch leaves it zero, so one word serves them all (kernels
  /// of one lane run one after another; a word a lane). 0 where it could not
  /// be had: each takes two launches.
  CUdeviceptr lastBlockCounter() const;
  /// Keeps `message` as the launch failure run() returns, unless one is
  /// kept already (tfc_cuda_launch's and the hand-written kernels' own).
  void failLaunch(const std::string &message);
  bool isOpen() const { return context_ != nullptr; }
  CudaDriver &driver() const { return *driver_; }
  CudaContext &context() const { return *context_; }

private:
  /// allocate(), from the pool when `fromPool` and it has room, else cuMemAlloc.
  void *allocate(size_t bytes, bool fromPool);
  /// A runtime switch: its setting's name and values, how it reads and is
  /// set (from its environment variable's text), and whether it changes
  /// anything now.
  struct Switch {
    const char *name;
    std::vector<std::string> values;
    std::function<std::string()> get;
    std::function<void(const std::string &)> set;
    std::function<bool()> applies;
  };
  std::vector<Switch> switches();
  /// "NVIDIA H200, sm_90, 132 SMs, driver 13000": what a measured choice
  /// holds for (its SMs too: MPS may give a process fewer).
  std::string gpuIdentity() const;
  /// open()'s settings: the tuned ones for this model and GPU (runtime/
  /// Tune.h; unless DeviceOptions::tuned is false), then each switch whose
  /// environment variable is set.
  void applyStartSettings();
  /// A graph of an entry and the buffers it was captured on (its batch's
  /// too: graphKey).
  struct EntryGraph {
    std::vector<void *> buffers;
    CUgraphExec exec = nullptr;
  };
  /// An entry's graphs, the most recently used first.
  struct EntryGraphs {
    bool ranEagerly = false;
    std::vector<EntryGraph> graphs;
  };
  bool openContext(std::string &error);
  void fail(const std::string &message);
  /// gatherBatch's launches (the context current).
  bool launchBatch(const BatchGather &batch, std::string &error);
  /// `batch`'s gathers (failLaunch on a failure), then the entry.
  void launchCall(EntryFn entry, void **buffers, const BatchGather *batch);
  /// Each operation on the stream (failLaunch on the first failure, and
  /// nothing after it): what a call launches, eagerly or into a graph.
  void launchOps(const std::vector<DeviceOp> &ops);
  /// allreduceMean's and copyWithin's work on the stream (the context
  /// current), each timed when profiling.
  bool queueMean(float *data, size_t n, std::string &error);
  bool queueCopy(void *to, const void *from, size_t bytes, std::string &error);
  bool capture(const std::vector<DeviceOp> &ops, EntryGraph &graph, std::string &error);
  /// Starts `ops` on the stream: eagerly, by a new graph or a replay
  /// (`launched` false when it failed before anything was enqueued).
  bool start(const std::vector<DeviceOp> &ops, bool &launched, std::string &error);
  /// sgemm on gemm_small.cu's kernels when the product fits them and their
  /// scratch: true when it took the product (launched, or the failure kept).
  bool smallGemm(const GemmArgs &args, const GemmEpilogue &epilogue);
  /// sgemm of a bias gradient as the plain product on cuBLASLt and the
  /// column sums beside it (biasGradColumns_): true when it took the
  /// product (launched, or the failure kept).
  bool gemmBesideColumnSums(const GemmArgs &args, const GemmEpilogue &epilogue);
  /// The bias gradient `epilogue` asks of `args`' stored operand: its column
  /// sums over K by parts, which past one part go to `scratch` (parts x
  /// columns floats) and the finish kernel adds.
  void launchColumnSums(const GemmArgs &args, const GemmEpilogue &epilogue, CUdeviceptr scratch);
  /// The finish kernel adding `parts` column sums' parts (parts x columns
  /// floats at partSums) in order into `sums`.
  void launchSumsFinish(int64_t columns, int64_t parts, CUdeviceptr partSums, CUdeviceptr sums);
  void destroyGraphs();

  DeviceOptions options_;
  std::unique_ptr<CudaDriver> driver_;
  std::unique_ptr<CudaContext> context_; // destroyed before driver_
  std::unique_ptr<Nccl> nccl_;           // destroyed before context_
  std::unique_ptr<KernelProfile> profile_; // its events too
  CUmodule module_ = nullptr;
  std::vector<CUfunction> functions_;
  std::vector<std::string> kernelNames_;
  std::vector<std::string> kernelSources_; // the manifest's, for bench --profile
  std::vector<int64_t> sharedOptIn_; // per kernel: dynamic shared memory allowed so far
  std::vector<int64_t> residentBlocks_; // per kernel: blocks resident at once (0: not asked)
  void launchCooperative(size_t kernel, const std::string &where, const int64_t grid[3],
                         const int64_t block[3], int64_t sharedBytes,
                         std::vector<void *> &params);
  int64_t maxSharedBytes_ = kDefaultSharedBytes;
  LayerKernels layerKernels_;
  std::unique_ptr<CublasLt> cublasLt_;
  std::future<CublasLtLibrary> cublasLtOpening_; // open(): the library's dlopen, under way
  std::string cublasLtError_;
  GemmPrecision gemmPrecision_ = GemmPrecision::Fp32;
  CUdeviceptr workspace_ = 0;
  CUdeviceptr lastBlockCounter_ = 0; // kLastBlockCounterBytes: a word a lane
  bool graphDependencies_ = false;
  double profiledPathMs_ = -1;                   // the last profile's (profiledLongestPathMs)
  bool capturingDependencies_ = false;           // capture() with graphDependencies_
  bool capturing_ = false;                       // inside capture(): no GEMM is timed
  int gemmAutotune_ = 1;                         // CublasLt::tune's candidates
  /// CublasLt's GemmTimer on the stream: one warm-up call, then the mean of
  /// kGemmTuneRuns between two events.
  float timeGemm(const std::function<bool()> &run);
  const GemmTimer gemmTimer_ = [this](const std::function<bool()> &run) { return timeGemm(run); };
  /// The timer a cuBLASLt call gets: none unless tuning, or while capturing.
  const GemmTimer *gemmTimer() const {
    return cublasLt_->tuneCandidates() > 1 && !capturing_ ? &gemmTimer_ : nullptr;
  }
  size_t lane_ = 0;                              // the current op's (graphNode)
  std::vector<CUgraphNode> entryStart_;          // the stream's nodes when the entry began
  std::vector<std::vector<CUgraphNode>> opEnds_; // each op's last nodes, so far
  CUdeviceptr poolMemory_ = 0; // the one allocation open() makes (DevicePool.h)
  std::map<uintptr_t, size_t> outsidePlan_; // blocks of the pool allocateOutsidePlan took
  DevicePool pool_;
  std::map<std::vector<EntryFn>, EntryGraphs> graphs_; // by the sequence's entries
  size_t graphsCaptured_ = 0;
  std::string pendingError_;
  std::string launchError_;
  size_t liveAllocations_ = 0;
  bool flushDenormals_ = true;
  long long smallGemmWork_ = kernels::kSmallGemmDefaultWork;
  bool biasGradColumns_ = false;
  bool layerNormOneLaunch_ = true;
  bool crossEntropyOneLaunch_ = true;
  bool savedAttentionStats_ = true;
  bool attentionDsInMemory_ = true;
  bool attentionDqStoresD_ = true;
  bool leanAttention_ = false;
  bool wgmmaAttention_ = false;
  bool wideAttention_ = false;
  bool dependentLaunch_ = false;
  bool generatedAwait_ = false;             // the model's generated kernels wait on this GPU
  int computeMajor_ = 0, computeMinor_ = 0; // the GPU's compute capability
  int profileDepth_ = 0; // profileBegin's nesting: only the outermost is timed
  std::set<std::string, std::less<>> called_;            // activeFor's functions
  std::map<std::string, DeviceSetting::Source> sources_; // a setting's, where not the default
  std::string tuningKey_;                                // open()'s
};

/// One operation on `device`'s stream, timed when `bench --profile` runs:
/// the name is made only then.
class ProfileScope {
public:
  template <class Name>
  ProfileScope(CudaDevice &device, const char *kind, Name name)
      : device_(device.profiling() ? &device : nullptr) {
    if (device_)
      device_->profileBegin(name(), kind);
  }
  ~ProfileScope() {
    if (device_)
      device_->profileEnd();
  }
  ProfileScope(const ProfileScope &) = delete;
  ProfileScope &operator=(const ProfileScope &) = delete;

private:
  CudaDevice *device_;
};

} // namespace tfc::rt::cuda

#endif // TFC_RUNTIME_CUDA_CUDADEVICE_H
