//===- CudaDevice.cpp - a CUDA GPU as the runtime's Device ----------------===//

#include "runtime/cuda/CudaDevice.h"
#include "runtime/ExchangeLayout.h"
#include "runtime/StepFeeds.h"
#include "runtime/TunedSettings.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include "runtime/Manifest.h"
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <system_error>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <set>

// Defined by a CUDA model's object (runtime/Abi.h); weak so that the runtime
// links without one (its tests, and `info` of a model without kernels).
extern "C" const char tfc_cuda_image[] __attribute__((weak));
extern "C" const int64_t tfc_cuda_image_size __attribute__((weak));

namespace tfc::rt::cuda {

namespace {
CUdeviceptr devicePointer(const void *memory) { return CUdeviceptr(uintptr_t(memory)); }

std::atomic<CudaDevice *> gActive{nullptr};

/// Makes `device` the one tfc_cuda_launch reaches while an entry runs.
class ActiveScope {
public:
  explicit ActiveScope(CudaDevice *device) : previous_(gActive.exchange(device)) {}
  ~ActiveScope() { gActive.store(previous_); }

private:
  CudaDevice *previous_;
};

/// "with SASS for sm_80, sm_90", or what a PTX-only image needs.
std::string archList(const CudaSpec &spec) {
  if (spec.archs.empty())
    return "compiled by the driver at load (PTX)";
  std::string list;
  for (const std::string &arch : spec.archs)
    list += (list.empty() ? "" : ", ") + arch;
  return "with SASS for " + list;
}

/// TFC_GEMM_AUTOTUNE's candidates from its text: 1 is kGemmTuneCandidates,
/// N >= 2 is N, 0 is none (1: the heuristic's first).
int gemmAutotuneFrom(const std::string &setting) {
  const int n = std::atoi(setting.c_str());
  return n == 1 ? kGemmTuneCandidates : std::clamp(n, 1, CublasLt::kMaxTuneCandidates);
}

/// Where tuning's choices are kept: TFC_GEMM_AUTOTUNE_CACHE ("none": not
/// kept), else $XDG_CACHE_HOME/tfc/gemm-autotune.txt, else ~/.cache/tfc/...
std::string gemmTuneCachePath() {
  return userCacheFile("TFC_GEMM_AUTOTUNE_CACHE", "gemm-autotune.txt");
}

/// The model's part of a tuning key, "model NAME DIGEST/IMAGE_BYTES, ": its
/// manifest and kernel image (the GPU's part follows).
std::string modelTuningKey(const Manifest &manifest) {
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx", (unsigned long long)manifest.digest);
  const int64_t imageBytes = &tfc_cuda_image_size ? tfc_cuda_image_size : 0;
  return "model " + manifest.model + " " + digest + "/" + std::to_string(imageBytes) + ", ";
}

std::string dims(const int64_t d[3]) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}
} // namespace

CudaDevice *CudaDevice::active() { return gActive.load(); }

CudaDevice &CudaDevice::activeFor(const char *function) {
  CudaDevice *device = active();
  if (!device) {
    std::fprintf(stderr, "error: %s called outside of an entry's run (a bug in tfc)\n", function);
    std::abort();
  }
  device->noteCalled(function);
  return *device;
}

std::unique_ptr<CudaDevice> CudaDevice::openIndex(int index, std::string &error) {
  auto device = std::make_unique<CudaDevice>();
  device->options_.index = index;
  if (!device->openContext(error))
    return nullptr;
  return device;
}

bool CudaDevice::openContext(std::string &error) {
  if (!driver_ && !(driver_ = CudaDriver::load(error)))
    return false;
  // Ranks on one node take a GPU each, by local rank, unless told which.
  if (!options_.indexGiven && options_.localRank > 0) {
    int count = 0;
    if (!driver_->init(error) || !driver_->deviceCount(count, error))
      return false;
    options_.index = count > 0 ? options_.localRank % count : 0;
  }
  context_ = CudaContext::open(*driver_, options_.index, error);
  if (!context_)
    return false;
  int optIn = 0;
  if (driver_->api().deviceGetAttribute(&optIn,
                                        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                        context_->device()) == CUDA_SUCCESS &&
      optIn > kDefaultSharedBytes)
    maxSharedBytes_ = optIn;
  int major = 0, minor = 0;
  if (driver_->api().deviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                        context_->device()) == CUDA_SUCCESS &&
      driver_->api().deviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                        context_->device()) == CUDA_SUCCESS) {
    computeMajor_ = major;
    computeMinor_ = minor;
  }
  return true;
}

CudaDevice::~CudaDevice() {
  if (cublasLtOpening_.valid()) // open() failed before loadCublasLt took it
    if (void *library = cublasLtOpening_.get().handle)
      dlclose(library);
  if (!context_)
    return;
  std::string ignored; // nothing can be done about errors on the way out
  context_->makeCurrent(ignored);
  nccl_.reset();
  destroyGraphs();
  cublasLt_.reset();
  if (workspace_ && !pool_.contains(uintptr_t(workspace_)))
    driver_->api().memFree(workspace_);
  if (lastBlockCounter_ && !pool_.contains(uintptr_t(lastBlockCounter_)))
    driver_->api().memFree(lastBlockCounter_);

  if (poolMemory_)
    driver_->api().memFree(poolMemory_);
  if (module_)
    driver_->api().moduleUnload(module_);
  layerKernels_.unload(*driver_);
  context_.reset();
}

std::string CudaDevice::name() const { return "cuda:" + std::to_string(options_.index); }

/// Whether a run calls `entry`: training runs train_step in one process,
/// its two halves data-parallel.
static bool runsEntry(const EntrySpec &entry, bool dataParallel) {
  return dataParallel ? entry.name != abi::kTrainStep
                      : entry.name != abi::kGradStep && entry.name != abi::kApplyStep;
}

/// The parameters and state (by feed key) that a training step writes into
/// a spare, which then swaps with the current copy, rather than over it
/// (tf-updates-in-place's `in_place_of`).
static std::set<std::string> sparedValues(const Manifest &manifest, bool dataParallel) {
  std::set<std::string> spared;
  for (const EntrySpec &entry : manifest.entries)
    if (runsEntry(entry, dataParallel) &&
        (entry.name == abi::kTrainStep || entry.name == abi::kApplyStep))
      for (const TensorSpec &result : entry.results)
        if ((result.kind == abi::ValueKind::Param || result.kind == abi::ValueKind::State) &&
            result.inPlaceOf < 0)
          spared.insert(result.feedKey());
  return spared;
}

size_t plannedDeviceBytes(const Manifest &manifest, bool dataParallel) {
  auto bytesOf = [](DType dtype, const std::vector<int64_t> &shape) {
    size_t n = dtypeSize(dtype);
    for (int64_t d : shape)
      n *= size_t(d);
    return DevicePool::rounded(n);
  };
  // Parameters and state: a current copy, and a spare where a step writes
  // into one.
  const std::set<std::string> spared = sparedValues(manifest, dataParallel);
  auto copies = [&](abi::ValueKind kind, const std::string &name) -> size_t {
    return spared.count(feedKey(kind, name)) ? 2 : 1;
  };
  // A persistent model calls no cuBLASLt: no workspace.
  const bool persistent = manifest.cuda && manifest.cuda->persistent;
  size_t total = persistent ? 0 : DevicePool::rounded(kCublasLtWorkspaceBytes);
  // The layer norm backward's and cross-entropy's last-block counters, one a lane.
  total += DevicePool::rounded(kLastBlockCounterBytes);
  for (const ParamSpec &param : manifest.params)
    total += copies(abi::ValueKind::Param, param.name) * bytesOf(param.dtype, param.shape);
  std::map<std::string, size_t> state;
  total += DevicePool::rounded(manifest.sharedArenaAllocation()); // every entry's
  for (const EntrySpec &entry : manifest.entries) {
    if (!runsEntry(entry, dataParallel))
      continue;
    const bool gradStep = entry.name == abi::kGradStep, applyStep = entry.name == abi::kApplyStep;
    const bool step = entry.name == abi::kTrainStep || applyStep;
    for (const TensorSpec &arg : entry.args) {
      if (arg.kind == abi::ValueKind::Param || (applyStep && arg.kind == abi::ValueKind::Grad))
        continue; // the gradients are read in the exchange's buffer
      if (arg.kind == abi::ValueKind::State)
        state[arg.name] = copies(arg.kind, arg.name) * bytesOf(arg.dtype, arg.shape);
      else
        total += bytesOf(arg.dtype, arg.shape);
    }
    ExchangeLayout exchange;
    std::string ignored; // a layout that cannot be is the first step's error
    if (gradStep) {
      if (exchangeLayout(entry, exchange, ignored))
        total += DevicePool::rounded(exchange.floats * sizeof(float)) +
                 DevicePool::rounded(StepFeeds::kResultSlots * exchange.scoreSlotBytes);
      continue;
    }
    for (const TensorSpec &result : entry.results)
      if (!step || (result.kind != abi::ValueKind::Param && result.kind != abi::ValueKind::State))
        total += (step ? StepFeeds::kResultSlots : 1) * bytesOf(result.dtype, result.shape);
  }
  for (const auto &[name, bytes] : state)
    total += bytes;
  return total;
}

bool CudaDevice::open(const Manifest &manifest, std::string &error) {
  if (!manifest.cuda) {
    error = "model '" + manifest.model + "' has no CUDA kernels (no \"cuda\" record)";
    return false;
  }
  const CudaSpec &spec = *manifest.cuda;
  if (!tfc_cuda_image || !&tfc_cuda_image_size) {
    error = "this binary holds no CUDA kernel image (no tfc_cuda_image)";
    return false;
  }
  const int64_t size = tfc_cuda_image_size;
  if (spec.image == "ptx" && (size < 1 || tfc_cuda_image[size - 1] != '\0')) {
    error = "the model's PTX image does not end in NUL (tfc_cuda_image_size " +
            std::to_string(size) + "); recompile the model with this version of tfc";
    return false;
  }
  // parseManifest admits only the precisions parseGemmPrecision knows.
  gemmPrecision_ = parseGemmPrecision(spec.precision).value_or(GemmPrecision::Fp32);
  // cuBLASLt's dlopen (tens of ms) runs beside creating the context and
  // loading the kernels; after the driver's own, since both hold the
  // loader's lock. A persistent model needs no cuBLASLt.
  if (!(driver_ = CudaDriver::load(error)))
    return false;
  if (!spec.persistent) {
    try {
      cublasLtOpening_ = std::async(std::launch::async, openCublasLtLibrary);
    } catch (const std::system_error &) {
      // No thread to spare: loadCublasLt opens it where it is needed.
    }
  }
  if (!openContext(error))
    return false;
  kernelSources_ = spec.kernelSources;
  // The generated kernels wait for the one before where this GPU runs the
  // SASS that does (sm_90 SASS runs on compute capability 9.0 alone).
  generatedAwait_ = std::find(spec.dependentLaunch.begin(), spec.dependentLaunch.end(),
                              "sm_" + std::to_string(computeMajor_ * 10 + computeMinor_)) !=
                    spec.dependentLaunch.end();
  if (!spec.kernels.empty() && !loadKernels(tfc_cuda_image, spec.kernels, error)) {
    int major = 0, minor = 0;
    std::string ignored;
    if (error.rfind("cuModuleLoadData", 0) == 0 &&
        driver_->computeCapability(context_->device(), major, minor, ignored))
      error += " (the kernels are a " + spec.image + " image " + archList(spec) +
               "; this GPU is sm_" + std::to_string(major) + std::to_string(minor) + ")";
    return false;
  }
  // The model's planned memory as one allocation; without room for it, an
  // allocation a buffer (allocate() falls back to cuMemAlloc).
  const size_t planned = plannedDeviceBytes(manifest, options_.dataParallel);
  if (driver_->api().memAlloc(&poolMemory_, planned) == CUDA_SUCCESS)
    pool_.reset(uintptr_t(poolMemory_), planned);
  else
    poolMemory_ = 0;
  // A model may call no hand-written kernel: one that cannot load is the
  // first call's error.
  loadLayerKernels();
  // A model may have no GEMM: a missing cuBLASLt is the first GEMM's error.
  // A persistent model has none (every GEMM is generated code).
  std::string ignored;
  if (!spec.persistent)
    loadCublasLt(ignored);
  tuningKey_ = modelTuningKey(manifest) + gpuIdentity() +
               (cublasLt_ ? ", cuBLASLt " + std::to_string(cublasLt_->version()) : "");
  applyStartSettings();
  return true;
}

std::string CudaDevice::gpuIdentity() const {
  // Its SMs too: MPS may give a process fewer.
  std::string name, ignored;
  if (!driver_->deviceName(context_->device(), name, ignored))
    name = "GPU";
  int sms = 0;
  if (driver_->api().deviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                        context_->device()) != CUDA_SUCCESS)
    sms = 0;
  return name + ", sm_" + std::to_string(computeMajor_ * 10 + computeMinor_) + ", " +
         std::to_string(sms) + " SMs, driver " + std::to_string(driver_->version());
}

std::vector<CudaDevice::Switch> CudaDevice::switches() {
  auto onOff = [](const char *name, bool &field, std::function<bool()> applies) {
    return Switch{name,
                  {"0", "1"},
                  [&field] { return std::string(field ? "1" : "0"); },
                  [&field](const std::string &value) { field = value != "0"; },
                  std::move(applies)};
  };
  auto calledAny = [this](std::initializer_list<std::string_view> functions) {
    return std::any_of(functions.begin(), functions.end(),
                       [this](std::string_view f) { return called(f); });
  };
  auto gemms = [calledAny] {
    return calledAny({"tfc_cuda_sgemm", "tfc_cuda_sgemm_fused", "tfc_cuda_sgemm_bias_grad"});
  };
  auto attentionBackward = [this] { return called("tfc_cuda_attention_backward"); };
  auto tensorCoreAttention = [this] { return called(kTensorCoreAttention); };
  auto wgmmaLoaded = [this] {
    return called(kWgmmaShapedAttention) &&
           layerKernels_.loaded(LayerKernels::AttentionWgmmaForward);
  };
  return {
      // TFC_SMALL_GEMM=1: every small product on gemm_small.cu, =0 none, =tiny
      // (the default) the tiny ones (kSmallGemmDefaultWork, docs/cuda-kernels.md).
      Switch{"TFC_SMALL_GEMM",
             {"tiny", "1", "0"},
             [this] {
               return std::string(smallGemmWork_ == 0                                ? "0"
                                  : smallGemmWork_ == kernels::kSmallGemmDefaultWork ? "tiny"
                                                                                     : "1");
             },
             [this](const std::string &value) {
               smallGemmWork_ = value == "0"      ? 0
                                : value == "tiny" ? kernels::kSmallGemmDefaultWork
                                                  : kernels::kSmallGemmMaxWork;
             },
             gemms},
      // TFC_BGRAD_COLUMNS=1: a bias gradient by column sums beside a plain
      // cuBLASLt product (off by default: no faster on an H200).
      onOff("TFC_BGRAD_COLUMNS", biasGradColumns_,
            [this] { return called("tfc_cuda_sgemm_bias_grad"); }),
      // TFC_LAYER_NORM_ONE_LAUNCH=0: the layer norm backward always in two
      // launches (on by default: one where the partials are few; within
      // noise of two on an H200).
      onOff("TFC_LAYER_NORM_ONE_LAUNCH", layerNormOneLaunch_,
            [this] { return called("tfc_cuda_layer_norm_backward"); }),
      // TFC_CROSS_ENTROPY_ONE_LAUNCH=0: the cross-entropy's mean in a second
      // launch (on by default: the last block adds the losses; within noise
      // of two launches on an H200).
      onOff("TFC_CROSS_ENTROPY_ONE_LAUNCH", crossEntropyOneLaunch_,
            [calledAny] {
              return calledAny({"tfc_cuda_cross_entropy", "tfc_cuda_cross_entropy_fused"});
            }),
      // TFC_ATTENTION_SAVED_STATS=0: the attention backward recomputes each
      // row's statistics (on by default: fewer products; on an H200 the fp32
      // kernels' backward took 0.43 ms less at 32 heads of 1,024).
      onOff("TFC_ATTENTION_SAVED_STATS", savedAttentionStats_, attentionBackward),
      // TFC_ATTENTION_DS=0: dq recomputes the scores rather than read the dS
      // dkv stored (on by default: on an H200 the fp32 kernels' backward took
      // 0.54 ms less at 32 heads of 1,024; compiled code makes no room for
      // the tensor-core kernels', which gained nothing).
      onOff("TFC_ATTENTION_DS", attentionDsInMemory_, attentionBackward),
      // TFC_ATTENTION_DQ_STORES_D=0: dkv after dq computes D from the
      // forward's out again (on by default: one D a row, not one a block of
      // keys; on an H200 the tensor cores' dkv took 0.264 ms against 0.343 at
      // 1,024 keys).
      onOff("TFC_ATTENTION_DQ_STORES_D", attentionDqStoresD_, attentionBackward),
      // TFC_ATTENTION_LEAN=1: the tensor-core attention's forward and dq in
      // their lean twins, 3 blocks an SM without the next tile held in
      // registers, against 2 with it (off by default until a GPU has timed
      // them: tfc-kernel-check --bench-attention times both).
      onOff("TFC_ATTENTION_LEAN", leanAttention_, tensorCoreAttention),
      // TFC_ATTENTION_WGMMA=1: the tensor-core attention (heads of 64) on
      // Hopper's wgmma (attention_wgmma.cu), where the GPU took its sm_90a
      // image (off by default: not yet run on a GPU).
      onOff("TFC_ATTENTION_WGMMA", wgmmaAttention_, wgmmaLoaded),
      // TFC_ATTENTION_WIDE=1 (with TFC_ATTENTION_WGMMA=1): wgmma's forward,
      // dq and dkv on two warpgroups a block, 128 queries sharing each staged
      // key tile (128 keys each query tile in dkv; off by default, an A/B for
      // the first GPU that runs it).
      onOff("TFC_ATTENTION_WIDE", wideAttention_,
            [this, wgmmaLoaded] { return wgmmaAttention_ && wgmmaLoaded(); }),
      // TFC_GRAPH_DEPENDENCIES=1: a captured graph's launches and calls wait
      // only for what they depend on (tf-graph-dependencies), the cuBLASLt
      // workspace split into lanes (off by default until a GPU has measured
      // it). On, it turns dependent launches off.
      Switch{"TFC_GRAPH_DEPENDENCIES",
             {"0", "1"},
             [this] { return std::string(graphDependencies_ ? "1" : "0"); },
             [this](const std::string &value) { setGraphDependencies(value != "0"); },
             [this] { return options_.graphs && called("tfc_cuda_graph_node"); }},
      // TFC_DEPENDENT_LAUNCH=1: kernels as programmatic dependent launches on
      // sm_90 and later (off by default: no faster on an H200). A dependent
      // launch's edge is to the node before it in stream order: not with
      // graph dependencies.
      Switch{"TFC_DEPENDENT_LAUNCH",
             {"0", "1"},
             [this] { return std::string(dependentLaunch_ ? "1" : "0"); },
             [this](const std::string &value) { setDependentLaunch(value != "0"); },
             [this] { return computeMajor_ >= 9 && !graphDependencies_; }},
      // TFC_GEMM_AUTOTUNE=1: each cuBLASLt plan's first call times the
      // heuristic's first 8 algorithms and keeps the fastest (=N: the first
      // N); off by default until a GPU has measured it.
      Switch{"TFC_GEMM_AUTOTUNE",
             {"0", "1"},
             [this] {
               return std::to_string(gemmAutotune_ == kGemmTuneCandidates ? 1
                                     : gemmAutotune_ > 1                  ? gemmAutotune_
                                                                          : 0);
             },
             [this](const std::string &value) { setGemmAutotune(gemmAutotuneFrom(value)); },
             [this, gemms] { return cublasLt_ && gemms(); }},
  };
}

void CudaDevice::applyStartSettings() {
  if (options_.tuned) {
    NamedValues tuned;
    const std::string path = tunedSettingsPath();
    std::string refused;
    if (readTunedSettings(path, tuningKey_, tuned))
      for (const auto &[name, value] : tuned)
        for (Switch &s : switches())              // one this runtime lacks: skipped
          if (name == s.name && s.get() != value && // marked tuned where it changes something
              !applySetting(name, value, DeviceSetting::Source::Tuned, refused))
            std::fprintf(stderr, "note: %s in %s not applied: %s (run tune again)\n",
                         (name + "=" + value).c_str(), path.c_str(), refused.c_str());
  }
  for (Switch &s : switches())
    if (const char *setting = std::getenv(s.name); setting && *setting) {
      s.set(setting);
      sources_[s.name] = DeviceSetting::Source::Environment;
    }
}

std::vector<DeviceSetting> CudaDevice::settings() {
  std::vector<DeviceSetting> out;
  for (Switch &s : switches()) {
    DeviceSetting &setting = out.emplace_back();
    setting.name = s.name;
    setting.values = s.values;
    setting.value = s.get();
    setting.applies = s.applies();
    if (auto source = sources_.find(s.name); source != sources_.end())
      setting.source = source->second;
  }
  return out;
}

bool CudaDevice::applySetting(const std::string &name, const std::string &value,
                              DeviceSetting::Source source, std::string &error) {
  for (Switch &s : switches()) {
    if (name != s.name)
      continue;
    if (std::find(s.values.begin(), s.values.end(), value) == s.values.end()) {
      error = "setting " + name + " takes ";
      for (size_t i = 0; i < s.values.size(); ++i)
        error += (i ? i + 1 == s.values.size() ? " or " : ", " : "") + s.values[i];
      error += ", not '" + value + "'";
      return false;
    }
    if (s.get() != value) {
      s.set(value);
      destroyGraphs(); // captured with the old choice
    }
    if (source == DeviceSetting::Source::Default)
      sources_.erase(name);
    else
      sources_[name] = source;
    return true;
  }
  error = "the CUDA device has no setting " + name;
  return false;
}

bool CudaDevice::joinRanks(const RankGroup &ranks, std::string &error) {
  if (nccl_)
    return true;
  if (!context_) {
    error = "the CUDA device is not open";
    return false;
  }
  if (!context_->makeCurrent(error))
    return false;
  std::string loadError;
  std::unique_ptr<Nccl> nccl = Nccl::load(loadError);
  // Before anyone waits in NCCL's rendezvous: did every rank load it?
  int failed = nccl ? 0 : 1;
  if (ranks.size > 1 && !ranks.agreeMax(failed, error))
    return false;
  if (!nccl) {
    error = "data-parallel training on " + name() + ": " + loadError;
    return false;
  }
  if (failed) {
    error = "data-parallel training on " + name() + ": another rank cannot load NCCL (its "
            "error says why)";
    return false;
  }
  if (!nccl->join(ranks.rank, ranks.size, ranks.broadcast, error)) {
    error = "data-parallel training on " + name() + ": " + error;
    return false;
  }
  nccl_ = std::move(nccl);
  return true;
}

bool CudaDevice::allreduceMean(float *data, size_t n, std::string &error) {
  if (!nccl_) {
    error = "allreduceMean on " + name() + " before joinRanks";
    return false;
  }
  if (!takeError(error) || !context_->makeCurrent(error))
    return false;
  return queueMean(data, n, error);
}

bool CudaDevice::queueMean(float *data, size_t n, std::string &error) {
  if (!nccl_) {
    error = "allreduceMean on " + name() + " before joinRanks";
    return false;
  }
  ProfileScope profiled(*this, "collective", [] { return std::string("ncclAllReduce"); });
  return nccl_->allreduceMean(data, n, context_->stream(), error);
}

bool CudaDevice::loadKernels(const void *image, const std::vector<std::string> &kernels,
                             std::string &error) {
  if (!context_ || !context_->makeCurrent(error)) {
    if (!context_)
      error = "the CUDA device is not open";
    return false;
  }
  const DriverApi &api = driver_->api();
  CUmodule module = nullptr;
  if (!driver_->check(api.moduleLoadData(&module, image), "cuModuleLoadData", error))
    return false;
  std::vector<CUfunction> functions;
  for (size_t i = 0; i < kernels.size(); ++i) {
    CUfunction function = nullptr;
    CUresult result = api.moduleGetFunction(&function, module, kernels[i].c_str());
    if (result != CUDA_SUCCESS) {
      driver_->check(result, "cuModuleGetFunction", error);
      error = "the model's kernel image has no kernel '" + kernels[i] + "' (kernel " +
              std::to_string(i) + " of " + std::to_string(kernels.size()) + "): " + error;
      api.moduleUnload(module);
      return false;
    }
    functions.push_back(function);
  }
  if (module_)
    api.moduleUnload(module_);
  module_ = module;
  functions_ = std::move(functions);
  kernelNames_ = kernels;
  sharedOptIn_.assign(kernels.size(), kDefaultSharedBytes);
  residentBlocks_.assign(kernels.size(), 0);
  return true;
}

bool CudaDevice::loadCublasLt(std::string &error) {
  if (cublasLt_)
    return true;
  if (!context_ || !context_->makeCurrent(error)) {
    if (!context_)
      error = "the CUDA device is not open";
    cublasLtError_ = error;
    return false;
  }
  cublasLt_ = cublasLtOpening_.valid() ? CublasLt::loadFrom(cublasLtOpening_.get(), error)
                                       : CublasLt::load(error);
  if (cublasLt_)
    configureGemmTuning();
  if (cublasLt_) {
    if (auto block = pool_.take(kCublasLtWorkspaceBytes))
      workspace_ = CUdeviceptr(*block);
    else if (!driver_->checkWith(
                 driver_->api().memAlloc(&workspace_, kCublasLtWorkspaceBytes), error, [] {
                   return "cuMemAlloc(" + formatBytes(kCublasLtWorkspaceBytes) +
                          ", the cuBLASLt workspace)";
                 }))
      cublasLt_.reset();
  }
  if (!cublasLt_)
    cublasLtError_ = error;
  return cublasLt_ != nullptr;
}

void CudaDevice::loadLayerKernels() {
  layerKernels_.load(*driver_);
  if (lastBlockCounter_)
    return;
  // In the planned memory, else an allocation of its own; zeroed before
  // any kernel runs (the stream does not wait for cuMemsetD8's).
  const DriverApi &api = driver_->api();
  if (auto block = pool_.take(kLastBlockCounterBytes))
    lastBlockCounter_ = CUdeviceptr(*block);
  else if (api.memAlloc(&lastBlockCounter_, kLastBlockCounterBytes) != CUDA_SUCCESS)
    lastBlockCounter_ = 0;
  if (!lastBlockCounter_ ||
      (api.memsetD8(lastBlockCounter_, 0, kLastBlockCounterBytes) == CUDA_SUCCESS &&
       api.ctxSynchronize() == CUDA_SUCCESS))
    return;
  if (!pool_.contains(uintptr_t(lastBlockCounter_)))
    api.memFree(lastBlockCounter_);
  lastBlockCounter_ = 0; // the layer norm backward and cross-entropy take two launches
}

CUdeviceptr CudaDevice::scratchFor(size_t bytes) const {
  return cublasLt_ && bytes <= laneWorkspaceBytes() ? laneWorkspace() : 0;
}

size_t CudaDevice::laneWorkspaceBytes() const {
  return graphDependencies_ ? kCublasLtWorkspaceBytes / abi::graph::kLanes
                            : kCublasLtWorkspaceBytes;
}

CUdeviceptr CudaDevice::laneWorkspace() const {
  return workspace_ ? workspace_ + (graphDependencies_ ? lane_ * laneWorkspaceBytes() : 0) : 0;
}

CUdeviceptr CudaDevice::lastBlockCounter() const {
  return lastBlockCounter_ ? lastBlockCounter_ + (graphDependencies_ ? lane_ * sizeof(unsigned) : 0)
                           : 0;
}

void CudaDevice::graphNode(int64_t index, int64_t lane, const int32_t *deps, int64_t count) {
  if (lane < -1 || lane >= abi::graph::kLanes)
    return failLaunch("tfc_cuda_graph_node(" + std::to_string(index) + "): lane " +
                      std::to_string(lane) + " of " + std::to_string(abi::graph::kLanes) +
                      " (a bug in tfc)");
  lane_ = lane >= 0 ? size_t(lane) : 0;
  if (profile_)
    profile_->node(index, deps, count);
  if (!capturingDependencies_ || !launchError_.empty())
    return;
  const DriverApi &api = driver_->api();
  CUstream stream = context_->stream();
  CUstreamCaptureStatus status;
  cuuint64_t id = 0;
  CUgraph graph = nullptr;
  const CUgraphNode *now = nullptr;
  size_t nowCount = 0;
  std::string error;
  if (!driver_->check(api.streamGetCaptureInfo(stream, &status, &id, &graph, &now, &nowCount),
                      "cuStreamGetCaptureInfo", error))
    return failLaunch(error);
  // What the op before this call left on the stream is where it ends.
  if (index == 0) {
    entryStart_.assign(now, now + nowCount);
    opEnds_.clear();
  } else if (size_t(index) != opEnds_.size() + 1) {
    return failLaunch("tfc_cuda_graph_node(" + std::to_string(index) + ") after " +
                      std::to_string(opEnds_.size()) +
                      " ops: the entry's ops out of order (a bug in tfc)");
  } else {
    opEnds_.emplace_back(now, now + nowCount);
  }
  std::vector<CUgraphNode> next = count ? std::vector<CUgraphNode>() : entryStart_;
  for (int64_t d = 0; d < count; ++d) {
    if (deps[d] < 0 || size_t(deps[d]) >= opEnds_.size())
      return failLaunch("tfc_cuda_graph_node(" + std::to_string(index) + "): op " +
                        std::to_string(index) + " waits for op " + std::to_string(deps[d]) +
                        ", not an earlier one (a bug in tfc)");
    for (CUgraphNode node : opEnds_[size_t(deps[d])])
      if (std::find(next.begin(), next.end(), node) == next.end())
        next.push_back(node);
  }
  // Nothing to wait for at all (the capture's first op): the stream's own
  // dependencies, the op before it, rather than an empty set.
  if (next.empty())
    return;
  if (!driver_->check(api.streamUpdateCaptureDependencies(stream, next.data(), next.size(),
                                                          CU_STREAM_SET_CAPTURE_DEPENDENCIES),
                      "cuStreamUpdateCaptureDependencies", error))
    failLaunch(error);
}

std::vector<std::string> CudaDevice::describe(const Manifest &manifest) {
  std::vector<std::string> lines;
  // The driver and GPU, found as open() would, without a context.
  std::string error, gpu;
  std::unique_ptr<CudaDriver> driver = CudaDriver::load(error);
  CUdevice device = 0;
  int major = 0, minor = 0;
  if (driver && driver->init(error) && driver->device(options_.index, device, error)) {
    std::string name;
    size_t bytes = 0;
    if (driver->deviceName(device, name, error) && driver->deviceMemory(device, bytes, error) &&
        driver->computeCapability(device, major, minor, error))
      gpu = name + ", sm_" + std::to_string(major) + std::to_string(minor) + ", " +
            formatBytes(bytes) + " (driver " + driver->path() + ", CUDA " +
            std::to_string(driver->version() / 1000) + "." +
            std::to_string(driver->version() % 1000 / 10) + ")";
  }
  if (!gpu.empty())
    lines.push_back(name() + ": " + gpu);
  else
    lines.push_back(name() + ": none here: " + error + " (info and init need no GPU; every "
                    "other command does)");
  if (manifest.cuda) {
    const CudaSpec &spec = *manifest.cuda;
    std::string image = &tfc_cuda_image_size && tfc_cuda_image
                            ? formatBytes(size_t(tfc_cuda_image_size))
                            : std::string("missing");
    lines.push_back("kernels " + std::to_string(spec.kernels.size()) + ", a " + spec.image +
                    " image " + archList(spec) + " (" + image + ")");
    if (spec.persistent)
      lines.push_back("persistent kernels: each entry one cooperative launch, its layers and "
                      "GEMMs phases of it (generated fp32 code, no cuBLASLt), grid barriers "
                      "between them");
    else
      lines.push_back(spec.precision == abi::key::kPrecisionTf32
                          ? "precision tf32: cuBLASLt GEMMs on TF32 tensor cores "
                            "(CUBLAS_COMPUTE_32F_FAST_TF32), every other kernel fp32"
                      : spec.precision == abi::key::kPrecisionBf16
                          ? "precision bf16: cuBLASLt GEMMs on bf16 tensor cores "
                            "(CUBLAS_COMPUTE_32F_FAST_16BF, or bf16 copies of A and B where "
                            "tfc compile's --bf16-operands made them), every other kernel fp32, "
                            "parameters, their gradients and the optimizer's state stored fp32, "
                            "as is every other tensor but those only GEMMs read (or a ReLU's "
                            "gradient tests): their bf16 copies alone, the products only loop "
                            "nests read (--no-bf16-gemm-results: fp32), and the QKV projections "
                            "only attention reads, with a bf16 copy of their bias, and the out "
                            "projections' input gradients, its backward's dO, which its "
                            "mma.sync kernels read as bf16 (--no-bf16-attention-inputs: fp32)"
                          : "precision fp32: cuBLASLt GEMMs (CUBLAS_COMPUTE_32F) and every kernel "
                            "in full FP32");
    // Attention's kernels under tf32 and bf16: which ones the switches pick.
    if (!spec.persistent && spec.precision != abi::key::kPrecisionFp32 && !spec.precision.empty())
      lines.push_back(
          std::string("attention on tensor cores (heads up to 64 wide, multiples of 16): "
                      "mma.sync; TFC_ATTENTION_LEAN=1 the lean forward and dq; "
                      "TFC_ATTENTION_WGMMA=1 wgmma for heads of 64 (sm_90a SASS: ") +
          (gpu.empty() ? "no GPU here to say whether it takes it)"
           : major == 9 && minor == 0
               ? "this GPU takes it)"
               : "not this GPU's, sm_" + std::to_string(major) + std::to_string(minor) +
                     ": the switch changes nothing)") +
          "; with it, TFC_ATTENTION_WIDE=1 its forward, dq and dkv on two warpgroups a block");
    std::string awaiting;
    for (const std::string &arch : spec.dependentLaunch)
      awaiting += (awaiting.empty() ? "" : ", ") + arch;
    lines.push_back(
        "programmatic dependent launch (TFC_DEPENDENT_LAUNCH=1, off by default): the "
        "hand-written kernels on sm_90 and later, the generated ones " +
        (awaiting.empty() ? std::string("nowhere (no SASS of theirs waits)") : "on " + awaiting));
    // What tf-graph-dependencies found in each entry (the manifest's "graph").
    std::string graphs;
    for (const EntrySpec &entry : manifest.entries)
      if (entry.graphOps > 0)
        graphs += (graphs.empty() ? "" : "; ") + entry.name + " " + std::to_string(entry.graphOps) +
                  " ops, " + std::to_string(entry.graphLongestPath) + " on the longest path";
    lines.push_back(graphs.empty()
                        ? std::string("graph dependencies: none compiled in, a captured entry "
                                      "is a chain")
                        : "graph dependencies (TFC_GRAPH_DEPENDENCIES=1, off by default): a "
                          "captured entry's independent launches and calls at once: " +
                              graphs);
  }
  const char *cublas = std::getenv("TFC_CUBLASLT");
  const char *autotuneSetting = std::getenv("TFC_GEMM_AUTOTUNE");
  const int autotune =
      autotuneSetting && *autotuneSetting ? gemmAutotuneFrom(autotuneSetting) : gemmAutotune_;
  const bool persistent = manifest.cuda && manifest.cuda->persistent;
  if (persistent)
    lines.push_back("no cuBLASLt: the persistent kernels compute every GEMM");
  else
    lines.push_back(
        "cuBLASLt workspace " + formatBytes(kCublasLtWorkspaceBytes) +
        " of device memory; cuBLASLt from " +
        (cublas && *cublas ? std::string(cublas) + " (TFC_CUBLASLT)"
                           : defaultCublasLtCandidates().front()) +
        ", loaded when the device opens; " +
        (autotune > 1
             ? "each GEMM's first call times the heuristic's first " + std::to_string(autotune) +
                   " algorithms and keeps the fastest (TFC_GEMM_AUTOTUNE), " +
                   (gemmTuneCachePath().empty() ? std::string("its choices kept nowhere")
                                                : "its choices kept in " + gemmTuneCachePath())
             : std::string("the heuristic's first algorithm a GEMM "
                           "(TFC_GEMM_AUTOTUNE=1 times its first 8)")));
  const bool dataParallel = options_.dataParallel;
  if (dataParallel) {
    const char *nccl = std::getenv("TFC_NCCL_LIBRARY");
    lines.push_back("data-parallel: gradients averaged by NCCL (" +
                    (nccl && *nccl ? std::string(nccl) + ", TFC_NCCL_LIBRARY"
                                   : defaultNcclCandidates().front()) +
                    "), loaded when training starts");
  }
  const size_t spared = sparedValues(manifest, dataParallel).size();
  const size_t planned = plannedDeviceBytes(manifest, dataParallel);
  lines.push_back("device memory: one allocation of " + formatBytes(planned) + " (" +
                  withThousands(int64_t(planned)) +
                  " bytes) when the device opens (parameters and optimizer state, " +
                  (spared == 0
                       ? std::string("which a step updates in place")
                       : "twice for the " + std::to_string(spared) + " a step writes into spares") +
                  ", each entry's arguments and results, one arena the entries share" +
                  (persistent ? ")" : ", the cuBLASLt workspace)"));
  const std::string tuned = tunedSettingsPath();
  lines.push_back("runtime settings (TFC_SMALL_GEMM and the other switches): the defaults, " +
                  (tuned.empty()
                       ? std::string("no tuned ones (TFC_TUNE_CACHE=none)")
                       : "then those `tune` chose for this model on this GPU, kept in " + tuned +
                             (options_.tuned ? "" : " (TFC_TUNED=0: not applied)")) +
                  ", then each one's environment variable where set");
  // What tune kept for this model, GPU by GPU: the settings it changed.
  for (const auto &[key, settings] : tunedSettingsFor(tuned, modelTuningKey(manifest))) {
    NamedValues changed;
    for (const auto &[name, value] : settings)
      for (Switch &s : switches()) // an unopened device's: the defaults
        if (name == s.name && s.get() != value)
          changed.emplace_back(name, value);
    lines.push_back("tuned for " + key.substr(modelTuningKey(manifest).size()) + ": " +
                    (changed.empty() ? std::string("the defaults") : formatSettings(changed)));
  }
  lines.push_back(options_.graphs ? "each entry captured as a CUDA graph on its second call, "
                                    "then replayed (--no-graph: launched eagerly)"
                                  : "entries launched eagerly (--no-graph)");
  for (const EntrySpec &entry : manifest.entries) {
    size_t bytes = entry.arenaAllocation();
    for (const auto *list : {&entry.args, &entry.results})
      for (const TensorSpec &t : *list) {
        if (t.inPlaceOf >= 0)
          continue; // its argument's buffer
        size_t n = dtypeSize(t.dtype);
        for (int64_t d : t.shape)
          n *= size_t(d);
        bytes += n;
      }
    lines.push_back(entry.name + ": " + formatBytes(bytes) +
                    " of device memory (arguments, results and arena)");
  }
  return lines;
}

void CudaDevice::fail(const std::string &message) {
  if (pendingError_.empty())
    pendingError_ = message;
}

void CudaDevice::failLaunch(const std::string &message) {
  if (launchError_.empty())
    launchError_ = message;
}

bool CudaDevice::takeError(std::string &error) {
  if (pendingError_.empty())
    return true;
  error = pendingError_;
  pendingError_.clear();
  return false;
}

void *CudaDevice::allocateOutsidePlan(size_t bytes) {
  // What the plan still needs: its size less the planned blocks taken.
  size_t outside = 0;
  for (auto [address, size] : outsidePlan_)
    outside += size;
  const size_t planned = pool_.bytes(), taken = pool_.inUse() - outside;
  const size_t toCome = planned > taken ? planned - taken : 0;
  const size_t free = pool_.bytes() - pool_.inUse();
  if (free < toCome + DevicePool::rounded(bytes))
    return allocate(bytes, /*fromPool=*/false);
  void *memory = allocate(bytes);
  if (memory && pool_.contains(uintptr_t(memory)))
    outsidePlan_[uintptr_t(memory)] = DevicePool::rounded(bytes);
  return memory;
}

void *CudaDevice::allocate(size_t bytes) { return allocate(bytes, /*fromPool=*/true); }

void *CudaDevice::allocate(size_t bytes, bool fromPool) {
  std::string error;
  if (!context_) {
    fail("the CUDA device is not open");
    return nullptr;
  }
  if (!context_->makeCurrent(error)) {
    fail(error);
    return nullptr;
  }
  if (auto block = fromPool ? pool_.take(bytes) : std::nullopt) { // 256-byte aligned, as cuMemAlloc's
    ++liveAllocations_;
    return reinterpret_cast<void *>(*block);
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
  if (!memory || !context_)
    return;
  if (pool_.contains(uintptr_t(memory))) {
    outsidePlan_.erase(uintptr_t(memory));
    if (pool_.give(uintptr_t(memory)))
      --liveAllocations_;
    else
      fail("release of a device pointer inside the model's allocation that no allocate() gave");
    return;
  }
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
  if (!context_)
    return fail("the CUDA device is not open");
  const DriverApi &api = driver_->api();
  // On the context's stream, so a later launch there sees it, and not waited
  // for: from pageable memory the driver stages the bytes before it returns
  // (CUDA's "API synchronization behavior"), so the host may reuse `host` at
  // once, and an entry still running keeps the stream's order.
  if (!context_->makeCurrent(error) ||
      !driver_->checkWith(api.memcpyHtoDAsync(devicePointer(device), host, bytes,
                                              context_->stream()),
                          error, [&] { return "cuMemcpyHtoDAsync(" + formatBytes(bytes) + ")"; }))
    fail(error);
}

void CudaDevice::copyWithin(void *to, const void *from, size_t bytes) {
  std::string error;
  if (!context_)
    return fail("the CUDA device is not open");
  if (!context_->makeCurrent(error) || !queueCopy(to, from, bytes, error))
    fail(error);
}

bool CudaDevice::queueCopy(void *to, const void *from, size_t bytes, std::string &error) {
  ProfileScope profiled(*this, "copy", [] { return std::string("copy on the device"); });
  return driver_->checkWith(
      driver_->api().memcpyDtoDAsync(devicePointer(to), devicePointer(from), bytes,
                                     context_->stream()),
      error, [&] { return "cuMemcpyDtoDAsync(" + formatBytes(bytes) + ")"; });
}

bool CudaDevice::gatherBatch(const BatchGather &batch, std::string &error) {
  if (!context_) {
    error = "the CUDA device is not open";
    return false;
  }
  return context_->makeCurrent(error) && launchBatch(batch, error);
}

bool CudaDevice::launchBatch(const BatchGather &batch, std::string &error) {
  const int64_t threads = LayerKernels::threads(LayerKernels::GatherRows);
  for (const BatchGather::Input &in : batch.inputs) {
    if (in.count == 0 || in.rowBytes == 0)
      continue;
    // A thread a word (16, 4 or 1 bytes, as the pointers and rows allow).
    const uintptr_t aligned = uintptr_t(in.to) | uintptr_t(in.rows) | uintptr_t(in.rowBytes);
    const size_t word = aligned % 16 == 0 ? 16 : aligned % 4 == 0 ? 4 : 1;
    const int64_t words = int64_t(in.count * (in.rowBytes / word));
    const std::vector<uint64_t> params = {
        uint64_t(uintptr_t(in.to)), uint64_t(uintptr_t(in.rows)), uint64_t(in.rowBytes),
        uint64_t(uintptr_t(in.order)), uint64_t(uintptr_t(batch.first)), uint64_t(in.count)};
    if (!layerKernels_.launch(*this, LayerKernels::GatherRows, (words + threads - 1) / threads,
                              params, error))
      return false;
  }
  return layerKernels_.launch(*this, LayerKernels::AdvanceFirst, 1,
                              {uint64_t(uintptr_t(batch.first)), uint64_t(batch.advance)}, error);
}

bool CudaDevice::canGatherRows() const {
  return layerKernels_.loaded(LayerKernels::GatherRows) &&
         layerKernels_.loaded(LayerKernels::AdvanceFirst);
}

void CudaDevice::copyOut(void *host, const void *device, size_t bytes) {
  std::string error;
  if (!context_)
    return fail("the CUDA device is not open");
  const DriverApi &api = driver_->api();
  if (!context_->makeCurrent(error) ||
      !driver_->checkWith(api.memcpyDtoHAsync(host, devicePointer(device), bytes,
                                              context_->stream()),
                          error, [&] { return "cuMemcpyDtoHAsync(" + formatBytes(bytes) + ")"; }) ||
      !driver_->check(api.streamSynchronize(context_->stream()), "cuStreamSynchronize", error))
    fail(error);
}

void CudaDevice::launch(intptr_t kernel, const int64_t grid[3], const int64_t block[3],
                        int64_t sharedBytes, int64_t argc, const intptr_t *args,
                        bool cooperative) {
  if (!launchError_.empty())
    return; // the first failure stands; what follows it would read garbage
  if (!context_)
    return failLaunch("tfc_cuda_launch: the CUDA device is not open");
  if (kernel < 0 || size_t(kernel) >= functions_.size())
    return failLaunch("tfc_cuda_launch: kernel " + std::to_string(kernel) +
                      " does not exist (the model has " + std::to_string(functions_.size()) +
                      " kernels)");
  const std::string where = "kernel '" + kernelNames_[size_t(kernel)] + "' (grid " + dims(grid) +
                            ", block " + dims(block) + ")";
  if (grid[0] < 1 || grid[1] < 1 || grid[2] < 1 || grid[0] > kMaxGridX || grid[1] > kMaxGridYZ ||
      grid[2] > kMaxGridYZ)
    return failLaunch("tfc_cuda_launch of " + where +
                      ": the grid must be at least 1 in each dimension, at most 2147483647 in "
                      "x and 65535 in y and z");
  if (block[0] < 1 || block[1] < 1 || block[2] < 1 || block[2] > kMaxBlockZ ||
      block[0] * block[1] * block[2] > kMaxBlockThreads)
    return failLaunch("tfc_cuda_launch of " + where +
                      ": a block must have 1 to 1024 threads (z at most 64)");
  if (sharedBytes < 0 || sharedBytes > maxSharedBytes_)
    return failLaunch("tfc_cuda_launch of " + where + ": " + std::to_string(sharedBytes) +
                      " bytes of shared memory (this GPU allows " +
                      std::to_string(maxSharedBytes_) + " a block)");
  if (argc < 0 || (argc > 0 && !args))
    return failLaunch("tfc_cuda_launch of " + where + ": " + std::to_string(argc) +
                      " arguments at " + (args ? "a non-null" : "a null") + " address");
  std::string error;
  const DriverApi &api = driver_->api();
  CUfunction function = functions_[size_t(kernel)];
  // More than 48 KiB of dynamic shared memory is opted into per kernel.
  if (sharedBytes > sharedOptIn_[size_t(kernel)]) {
    if (!driver_->check(api.funcSetAttribute(function,
                                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             int(sharedBytes)),
                        "cuFuncSetAttribute(" + where + ", MAX_DYNAMIC_SHARED_SIZE_BYTES)",
                        error))
      return failLaunch(error);
    sharedOptIn_[size_t(kernel)] = sharedBytes;
  }
  // kernelParams[i] is the address of slot i: the parameter is its low bytes.
  std::vector<void *> params(static_cast<size_t>(argc));
  for (int64_t i = 0; i < argc; ++i)
    params[size_t(i)] = const_cast<intptr_t *>(&args[i]);
  ProfileScope profiled(*this, "generated", [&] {
    return kernelNames_[size_t(kernel)] + (size_t(kernel) < kernelSources_.size()
                                               ? " (" + kernelSources_[size_t(kernel)] + ")"
                                               : std::string());
  });
  if (cooperative)
    return launchCooperative(size_t(kernel), where, grid, block, sharedBytes, params);
  if (dependentLaunch_ && generatedAwait_) {
    // The kernel's SASS waits for the one before first (the manifest's
    // "dependent_launch"): its launch may overlap that kernel's run.
    if (!driver_->check(launchWith(dependentLaunchAttribute(), function, grid, block, sharedBytes,
                                   params.data()),
                        "cuLaunchKernelEx(" + where + ", programmatic)", error))
      failLaunch(error);
    return;
  }
  if (!driver_->check(api.launchKernel(function, unsigned(grid[0]), unsigned(grid[1]),
                                       unsigned(grid[2]), unsigned(block[0]), unsigned(block[1]),
                                       unsigned(block[2]), unsigned(sharedBytes),
                                       context_->stream(), params.data(), nullptr),
                      "cuLaunchKernel(" + where + ")", error))
    failLaunch(error);
}

void CudaDevice::launchCooperative(size_t kernel, const std::string &where,
                                   const int64_t grid[3], const int64_t block[3],
                                   int64_t sharedBytes, std::vector<void *> &params) {
  std::string error;
  const DriverApi &api = driver_->api();
  CUfunction function = functions_[kernel];
  if (grid[1] != 1 || grid[2] != 1)
    return failLaunch("tfc_cuda_launch_cooperative of " + where +
                      ": a persistent kernel's grid is one row of blocks");
  // Every block of a grid barrier's grid runs at once: as many as the GPU
  // holds (asked once a kernel), at most the grid asked for; each phase
  // loops over its blocks by the grid's size.
  int64_t &resident = residentBlocks_[kernel];
  if (resident == 0) {
    int perMultiprocessor = 0, multiprocessors = 0;
    const int threads = int(block[0] * block[1] * block[2]);
    if (!driver_->check(api.occupancyMaxActiveBlocksPerMultiprocessor(
                            &perMultiprocessor, function, threads, size_t(sharedBytes)),
                        "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + where + ")", error) ||
        !driver_->check(api.deviceGetAttribute(&multiprocessors,
                                               CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                               context_->device()),
                        "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", error))
      return failLaunch(error);
    if (perMultiprocessor < 1 || multiprocessors < 1)
      return failLaunch("the persistent " + where + " cannot run on this GPU: not one block of " +
                        std::to_string(threads) +
                        " threads fits on a multiprocessor (its registers or shared memory); "
                        "compile the model without --persistent-kernels");
    resident = int64_t(perMultiprocessor) * multiprocessors;
  }
  CUlaunchAttribute attribute = {};
  attribute.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attribute.value.cooperative = 1;
  const int64_t blocks[3] = {std::min(grid[0], resident), 1, 1};
  if (!driver_->check(launchWith(attribute, function, blocks, block, sharedBytes, params.data()),
                      "cuLaunchKernelEx(" + where + ", cooperative, " + std::to_string(blocks[0]) +
                          " blocks resident)",
                      error))
    failLaunch(error);
}

CUlaunchAttribute CudaDevice::dependentLaunchAttribute() {
  CUlaunchAttribute attribute = {};
  attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attribute.value.programmaticStreamSerializationAllowed = 1;
  return attribute;
}

CUresult CudaDevice::launchWith(CUlaunchAttribute attribute, CUfunction function,
                                const int64_t grid[3], const int64_t block[3], int64_t sharedBytes,
                                void **params) const {
  CUlaunchConfig config = {};
  config.gridDimX = unsigned(grid[0]);
  config.gridDimY = unsigned(grid[1]);
  config.gridDimZ = unsigned(grid[2]);
  config.blockDimX = unsigned(block[0]);
  config.blockDimY = unsigned(block[1]);
  config.blockDimZ = unsigned(block[2]);
  config.sharedMemBytes = unsigned(sharedBytes);
  config.hStream = context_->stream();
  config.attrs = &attribute;
  config.numAttrs = 1;
  return driver_->api().launchKernelEx(&config, function, params, nullptr);
}

void CudaDevice::sgemm(const GemmArgs &given, const GemmEpilogue &epilogue) {
  if (!launchError_.empty())
    return;
  GemmArgs args = given;
  const std::optional<GemmStorage> storage = takeStorage(args);
  if (!storage)
    return failLaunch(std::string(epilogue.function()) + "(" + describeGemm(args) +
                      "): one operand in bf16 and the other in fp32, or a bf16 C of fp32 "
                      "operands (cuBLASLt multiplies bf16 by bf16)");
  // gemm_small.cu's kernels and the column sums read and write fp32.
  const bool bf16 = *storage != GemmStorage::F32;
  if (!bf16 && (smallGemm(args, epilogue) || gemmBesideColumnSums(args, epilogue)))
    return;
  if (!cublasLt_) {
    return failLaunch(std::string(epilogue.function()) + "(" + describeGemm(args) + "): " +
                      (cublasLtError_.empty() ? std::string("cuBLASLt is not loaded")
                                              : cublasLtError_));
  }
  std::string error;
  ProfileScope profiled(*this, "cuBLASLt", [&] {
    return profileName(args, epilogue) + (*storage == GemmStorage::Bf16 ? ", bf16 A, B and C"
                                          : bf16                        ? ", bf16 A and B"
                                                                        : "");
  });
  if (!cublasLt_->sgemm(args, epilogue, gemmPrecision_, context_->stream(), laneWorkspace(),
                        laneWorkspaceBytes(), error, *storage, gemmTimer()))
    failLaunch(error);
}

void CudaDevice::setGemmAutotune(int candidates) {
  gemmAutotune_ = std::max(candidates, 1);
  if (cublasLt_)
    configureGemmTuning();
}

void CudaDevice::configureGemmTuning() {
  // The plans are made again: graphs captured with the old ones go too, so
  // that no GEMM runs two algorithms in one process.
  destroyGraphs();
  cublasLt_->tune(gemmAutotune_);
  if (gemmAutotune_ <= 1)
    return cublasLt_->useTuneCache("", "");
  // A choice holds for this GPU, driver and cuBLASLt, and these candidates.
  const std::string prefix = gpuIdentity() + ", cuBLASLt " + std::to_string(cublasLt_->version()) +
                             ", of " + std::to_string(gemmAutotune_) + ":";
  const std::string path = gemmTuneCachePath();
  if (!path.empty()) {
    std::error_code ignoredError; // unwritable: the choices are made, not kept
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignoredError);
  }
  cublasLt_->useTuneCache(path, prefix);
}

float CudaDevice::timeGemm(const std::function<bool()> &run) {
  const DriverApi &api = driver_->api();
  CUstream stream = context_->stream();
  CUevent start = nullptr, end = nullptr;
  float ms = -1.0f;
  if (api.eventCreate(&start, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
      api.eventCreate(&end, CU_EVENT_DEFAULT) == CUDA_SUCCESS && run() &&
      api.eventRecord(start, stream) == CUDA_SUCCESS) {
    bool ran = true;
    for (int i = 0; ran && i < kGemmTuneRuns; ++i)
      ran = run();
    float elapsed = 0;
    if (ran && api.eventRecord(end, stream) == CUDA_SUCCESS &&
        api.streamSynchronize(stream) == CUDA_SUCCESS &&
        api.eventElapsedTime(&elapsed, start, end) == CUDA_SUCCESS)
      ms = elapsed / float(kGemmTuneRuns);
  }
  if (start)
    api.eventDestroy(start);
  if (end)
    api.eventDestroy(end);
  return ms;
}

namespace {
/// A bias gradient's floats: the columns of its operand, M for A (stored K x M), N for B.
int64_t biasGradLength(const GemmArgs &g, const GemmEpilogue &e) {
  return e.biasGradOfB ? g[abi::gemm::N] : g[abi::gemm::M];
}
/// Scratch floats CudaDevice::launchColumnSums needs: its parts' sums when
/// K takes more than one part.
int64_t biasGradScratchFloats(const GemmArgs &g, const GemmEpilogue &e) {
  const int64_t columns = biasGradLength(g, e);
  const kernels::ColumnSumsPlan sums = kernels::columnSumsPlan(g[abi::gemm::K], columns);
  return e.biasGrad && sums.parts > 1 ? sums.parts * columns : 0;
}
} // namespace

bool CudaDevice::smallGemm(const GemmArgs &g, const GemmEpilogue &e) {
  namespace k = kernels;
  using namespace abi::gemm;
  const bool reduction = g[Batch] > 1 && g[StrideC] == 0;
  if (!layerKernels_.loaded(LayerKernels::SmallGemm) ||
      !k::smallGemmFits(g[M], g[N], g[K], g[Batch]) ||
      g[M] * g[N] * g[K] * g[Batch] > smallGemmWork_)
    return false;
  const k::SmallGemmPlan plan = k::smallGemmPlan(g[M], g[N], g[K], g[Batch], reduction);
  const int64_t sumFloats = biasGradScratchFloats(g, e);
  // Scratch: the partial tiles, then the bias gradient's partial sums.
  CUdeviceptr partials = 0;
  if (plan.partialFloats + sumFloats > 0) {
    partials = scratchFor(size_t(plan.partialFloats + sumFloats) * 4);
    if (!partials)
      return false; // no room for them: cuBLASLt's
  }
  const CUdeviceptr sumPartials = partials + CUdeviceptr(plan.partialFloats) * 4;
  if (std::string why = refuseGemm(g, e); !why.empty()) {
    failLaunch(std::string(e.function()) + "(" + describeGemm(g) + e.describe() + "): " + why);
    return true;
  }
  ProfileScope profiled(*this, "hand-written", [&] { return profileName(g, e, "small GEMM"); });
  auto u = [](int64_t v) { return uint64_t(v); };
  const std::vector<uint64_t> epilogue = {
      u(g[Accumulate]), e.residual, u(e.ldResidual), e.bias, u(e.relu), u(e.reluGrad),
      e.reluMask, u(e.ldReluMask)};
  // The bias gradient's column sums run as more units of the product's
  // launch; its last block adds the partials (the product's and the sums')
  // where they are few enough, else a finish launch each does.
  const int64_t columns = e.biasGrad ? biasGradLength(g, e) : 0;
  const k::ColumnSumsPlan sums = k::columnSumsPlan(g[K], columns);
  const bool finishes = plan.partial || (e.biasGrad && sums.parts > 1);
  const CUdeviceptr counter =
      finishes &&
              k::smallGemmLastBlockFinishes(plan, g[M], g[N], e.biasGrad ? sums.parts : 0, columns)
          ? lastBlockCounter()
          : 0;
  std::vector<uint64_t> params = {u(g[M]), u(g[N]), u(g[K]), u(plan.slice), u(g[Batch]),
                                  u(g[A]), u(g[Lda]), u(g[StrideA]), u(g[TransA]),
                                  u(g[B]), u(g[Ldb]), u(g[StrideB]), u(g[TransB]),
                                  u(g[C]), u(g[Ldc]), u(reduction ? 0 : g[StrideC]),
                                  plan.partial ? partials : 0};
  params.insert(params.end(), epilogue.begin(), epilogue.end());
  params.insert(params.end(),
                {u(plan.outputs), u(plan.parts), e.biasGrad ? u(e.biasGradOfB ? g[B] : g[A]) : 0,
                 u(e.biasGradOfB ? g[Ldb] : g[Lda]), u(columns), sumPartials, e.biasGrad,
                 uint64_t(counter)});
  layerKernels_.launch(*this, LayerKernels::SmallGemm, plan.units + (e.biasGrad ? sums.units : 0),
                       params);
  if (counter)
    return true;
  if (plan.partial) {
    std::vector<uint64_t> finish = {u(g[M]), u(g[N]), u(plan.outputs), u(plan.parts),
                                    partials, u(g[C]), u(g[Ldc]), u(reduction ? 0 : g[StrideC])};
    finish.insert(finish.end(), epilogue.begin(), epilogue.end());
    layerKernels_.launch(*this, LayerKernels::SmallGemmFinish,
                         (plan.outputs * g[M] * g[N] + k::kSmallGemmThreads - 1) /
                             k::kSmallGemmThreads,
                         finish);
  }
  if (e.biasGrad && sums.parts > 1)
    launchSumsFinish(columns, sums.parts, sumPartials, e.biasGrad);
  return true;
}

void CudaDevice::launchSumsFinish(int64_t columns, int64_t parts, CUdeviceptr partSums,
                                  CUdeviceptr sums) {
  auto u = [](int64_t v) { return uint64_t(v); };
  layerKernels_.launch(
      *this, LayerKernels::SmallGemmFinish,
      (columns + kernels::kSmallGemmThreads - 1) / kernels::kSmallGemmThreads,
      {1, u(columns), 1, u(parts), partSums, sums, u(columns), 0, 0, 0, 0, 0, 0, 0, 0, 0});
}

void CudaDevice::launchColumnSums(const GemmArgs &g, const GemmEpilogue &e, CUdeviceptr scratch) {
  namespace k = kernels;
  using namespace abi::gemm;
  auto u = [](int64_t v) { return uint64_t(v); };
  const int64_t columns = biasGradLength(g, e);
  const k::ColumnSumsPlan sums = k::columnSumsPlan(g[K], columns);
  // Several parts: the kernel's last block adds them where they are few
  // enough for one block (columnSumsLastBlockAdds), else the finish kernel
  // does.
  const CUdeviceptr counter =
      sums.parts > 1 && k::columnSumsLastBlockAdds(sums.parts, columns) ? lastBlockCounter() : 0;
  layerKernels_.launch(*this, LayerKernels::ColumnSums, sums.units,
                       {u(g[K]), u(columns), u(e.biasGradOfB ? g[B] : g[A]),
                        u(e.biasGradOfB ? g[Ldb] : g[Lda]), u(sums.part),
                        sums.parts > 1 ? scratch : e.biasGrad, e.biasGrad, uint64_t(counter)});
  if (sums.parts > 1 && !counter)
    launchSumsFinish(columns, sums.parts, scratch, e.biasGrad);
}

bool CudaDevice::gemmBesideColumnSums(const GemmArgs &g, const GemmEpilogue &e) {
  using namespace abi::gemm;
  // Anything refuseGemm refuses, or that has nothing to compute, cuBLASLt's
  // path reports or skips as it always has.
  if (!biasGradColumns_ || !e.biasGrad || !cublasLt_ ||
      !layerKernels_.loaded(LayerKernels::ColumnSums) || !refuseGemm(g, e).empty() ||
      g[Batch] == 0 || g[M] == 0 || g[N] == 0)
    return false;
  // The parts' sums go to the workspace after the product is done with it
  // (the stream keeps the order); without room, the epilogue it is.
  const int64_t scratchFloats = biasGradScratchFloats(g, e);
  const CUdeviceptr scratch = scratchFloats ? scratchFor(size_t(scratchFloats) * 4) : 0;
  if (scratchFloats && !scratch)
    return false;
  ProfileScope profiled(*this, "cuBLASLt", [&] { return profileName(g, e) + " (by column sums)"; });
  std::string error;
  if (!cublasLt_->sgemm(g, GemmEpilogue{}, gemmPrecision_, context_->stream(), laneWorkspace(),
                        laneWorkspaceBytes(), error, GemmStorage::F32, gemmTimer())) {
    failLaunch(error);
    return true;
  }
  launchColumnSums(g, e, scratch);
  return true;
}

void CudaDevice::launchCall(EntryFn entry, void **buffers, const BatchGather *batch) {
  std::string error;
  if (batch && !launchBatch(*batch, error))
    return failLaunch(error);
  entry(buffers);
}

void CudaDevice::launchOps(const std::vector<DeviceOp> &ops) {
  for (const DeviceOp &op : ops) {
    if (!launchError_.empty())
      return; // the first failure stands
    std::string error;
    switch (op.kind) {
    case DeviceOp::Kind::Entry:
      launchCall(op.entry, const_cast<void **>(op.buffers.data()), op.batch);
      break;
    case DeviceOp::Kind::AllreduceMean:
      if (!queueMean(static_cast<float *>(op.to), op.bytes / sizeof(float), error))
        failLaunch(error);
      break;
    case DeviceOp::Kind::CopyWithin:
      if (!queueCopy(op.to, op.from, op.bytes, error))
        failLaunch(error);
      break;
    }
  }
}

bool CudaDevice::capture(const std::vector<DeviceOp> &ops, EntryGraph &graph,
                         std::string &error) {
  const DriverApi &api = driver_->api();
  CUstream stream = context_->stream();
  // Thread-local mode: only this thread's unsafe calls (a cuMemAlloc) are refused.
  if (!driver_->check(api.streamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                      "cuStreamBeginCapture", error))
    return false;
  capturingDependencies_ = graphDependencies_;
  capturing_ = true;
  launchOps(ops);
  capturing_ = false;
  capturingDependencies_ = false;
  CUgraph captured = nullptr;
  CUresult ended = api.streamEndCapture(stream, &captured);
  if (!launchError_.empty() || !driver_->check(ended, "cuStreamEndCapture", error)) {
    if (captured)
      api.graphDestroy(captured);
    return false;
  }
  CUgraphExec exec = nullptr;
  CUresult instantiated = api.graphInstantiate(&exec, captured, 0);
  api.graphDestroy(captured);
  if (!driver_->check(instantiated, "cuGraphInstantiate", error))
    return false;
  graph.exec = exec;
  ++graphsCaptured_;
  return driver_->check(api.graphLaunch(exec, stream), "cuGraphLaunch", error);
}

void CudaDevice::destroyGraphs() {
  for (auto &[entries, graphs] : graphs_)
    for (EntryGraph &graph : graphs.graphs)
      if (graph.exec)
        driver_->api().graphExecDestroy(graph.exec);
  graphs_.clear();
}

size_t CudaDevice::graphsHeld() const {
  size_t held = 0;
  for (auto &[entries, graphs] : graphs_)
    held += graphs.graphs.size();
  return held;
}

namespace {
/// A sequence's graph key besides its entries: what each operation reads
/// and writes, and a batch's gathers (not which rows: *first is on the
/// device).
std::vector<void *> graphKey(const std::vector<DeviceOp> &ops) {
  auto value = [](uint64_t v) { return reinterpret_cast<void *>(uintptr_t(v)); };
  std::vector<void *> key;
  for (const DeviceOp &op : ops) {
    key.push_back(value(uint64_t(op.kind)));
    if (op.kind != DeviceOp::Kind::Entry) {
      key.insert(key.end(), {op.to, const_cast<void *>(op.from), value(op.bytes)});
      continue;
    }
    key.push_back(value(op.buffers.size()));
    key.insert(key.end(), op.buffers.begin(), op.buffers.end());
    if (const BatchGather *batch = op.batch) {
      key.push_back(value(batch->inputs.size()));
      for (const BatchGather::Input &in : batch->inputs)
        key.insert(key.end(), {in.to, const_cast<void *>(in.rows), value(in.rowBytes),
                               const_cast<int64_t *>(in.order), value(in.count)});
      key.insert(key.end(), {batch->first, value(uint64_t(batch->advance))});
    } else {
      key.push_back(nullptr);
    }
  }
  return key;
}
} // namespace

bool CudaDevice::start(const std::vector<DeviceOp> &ops, bool &launched, std::string &error) {
  launched = false;
  if (!takeError(error))
    return false;
  if (!context_) {
    error = "the CUDA device is not open";
    return false;
  }
  if (!context_->makeCurrent(error))
    return false;
  const DriverApi &api = driver_->api();
  launchError_.clear();
  ActiveScope scope(this);
  launched = true;

  std::vector<EntryFn> entries;
  for (const DeviceOp &op : ops)
    if (op.kind == DeviceOp::Kind::Entry)
      entries.push_back(op.entry);
  EntryGraphs &graphs = graphs_[entries];
  bool ok = true;
  if (profile_) { // each operation timed by itself: eagerly
    if (!profile_->collect(context_->stream(), error))
      return false;
    launchOps(ops);
  } else if (!options_.graphs || !graphs.ranEagerly) {
    launchOps(ops);           // eagerly: the first call makes the GEMM plans,
    graphs.ranEagerly = true; // shows any error
  } else {
    std::vector<void *> current = graphKey(ops);
    auto found = std::find_if(graphs.graphs.begin(), graphs.graphs.end(),
                              [&](const EntryGraph &g) { return g.buffers == current; });
    if (found != graphs.graphs.end()) {
      std::rotate(graphs.graphs.begin(), found, found + 1); // most recently used first
      ok = driver_->check(api.graphLaunch(graphs.graphs.front().exec, context_->stream()),
                          "cuGraphLaunch", error);
    } else {
      // New buffers: a graph of their own, the least recently used dropped.
      if (graphs.graphs.size() >= kGraphsPerEntry) {
        api.graphExecDestroy(graphs.graphs.back().exec);
        graphs.graphs.pop_back();
      }
      EntryGraph graph{std::move(current), nullptr};
      ok = capture(ops, graph, error);
      if (graph.exec)
        graphs.graphs.insert(graphs.graphs.begin(), std::move(graph));
    }
  }
  if (!launchError_.empty()) {
    error = launchError_;
    launchError_.clear();
    return false;
  }
  return ok;
}

namespace {
std::vector<DeviceOp> oneEntry(EntryFn entry, void **buffers, size_t count,
                               const BatchGather *batch) {
  std::vector<DeviceOp> ops(1);
  ops[0].entry = entry;
  ops[0].buffers.assign(buffers, buffers + count);
  ops[0].batch = batch;
  return ops;
}
} // namespace

bool CudaDevice::enqueueSequence(const std::vector<DeviceOp> &ops, std::string &error) {
  bool launched = false;
  if (start(ops, launched, error))
    return true;
  // Nothing is left running after a failure.
  std::string ignored;
  if (launched)
    driver_->check(driver_->api().streamSynchronize(context_->stream()), "cuStreamSynchronize",
                   ignored);
  return false;
}

bool CudaDevice::enqueue(EntryFn entry, void **buffers, size_t count, std::string &error,
                         const BatchGather *batch) {
  return enqueueSequence(oneEntry(entry, buffers, count, batch), error);
}

bool CudaDevice::startProfile(std::string &error) {
  if (!context_) {
    error = "bench --profile: the CUDA device is not open";
    return false;
  }
  profile_ = std::make_unique<KernelProfile>(*driver_);
  return true;
}

bool CudaDevice::stopProfile(std::vector<ProfiledOp> &ops, std::string &error) {
  if (!profile_) {
    error = "no profile was started";
    return false;
  }
  bool ok = context_->makeCurrent(error) && profile_->collect(context_->stream(), error);
  ops = profile_->ops();
  profiledPathMs_ =
      profile_->pathCalls() ? profile_->longestPathMs() / double(profile_->pathCalls()) : -1;
  profile_.reset();
  return ok;
}

void CudaDevice::profileBegin(const std::string &name, const char *kind) {
  if (profileDepth_++ > 0)
    return; // inside another operation (a small GEMM's kernels): timed with it
  std::string error;
  if (!profile_->begin(name, kind, context_->stream(), error))
    failLaunch(error);
}

void CudaDevice::profileEnd() {
  if (--profileDepth_ > 0)
    return;
  std::string error;
  if (!profile_->end(context_->stream(), error))
    failLaunch(error);
}

bool CudaDevice::run(EntryFn entry, void **buffers, size_t count, std::string &error,
                     const BatchGather *batch) {
  bool launched = false;
  bool ok = start(oneEntry(entry, buffers, count, batch), launched, error);
  if (!launched)
    return false;
  // Wait for the stream whatever happened, so that nothing is left running.
  std::string syncError;
  bool synced = driver_->check(driver_->api().streamSynchronize(context_->stream()),
                               "cuStreamSynchronize (after the entry's launches)", syncError);
  if (!ok)
    return false;
  if (!synced)
    error = syncError;
  return synced;
}

} // namespace tfc::rt::cuda
