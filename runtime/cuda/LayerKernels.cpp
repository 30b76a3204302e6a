//===- LayerKernels.cpp - the hand-written kernels generated code calls ---===//

#include "runtime/cuda/LayerKernels.h"
#include "runtime/Abi.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/kernels/KernelMath.h"

#ifdef TFC_CUDA_HAND_KERNELS
#include "runtime/cuda/kernels/Kernels.h"
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace tfc::rt::cuda {

namespace {
/// Each kernel's name, image and block size. The block sizes are
/// KernelMath.h's (a kernel traps on another); where the kernels are not
/// built they are never launched.
struct KernelSpec {
  const char *name;
  const char *image;
  int threads;
  int params;
  int sharedBytes; // dynamic shared memory a launch
};

#ifdef TFC_CUDA_HAND_KERNELS
namespace k = kernels;
constexpr const k::KernelInfo &info(std::string_view name) {
  for (const k::KernelInfo &kernel : k::kKernels)
    if (name == kernel.name)
      return kernel;
  return k::kKernels[0]; // not reached for the names below
}
#define TFC_KERNEL_SPEC(name)                                                                      \
  KernelSpec {                                                                                     \
    name, info(name).image, info(name).threads, info(name).paramCount, k::dynamicSharedBytes(name) \
  }
#else
#define TFC_KERNEL_SPEC(name)                                                                      \
  KernelSpec { name, "", 1, 0, 0 }
#endif

constexpr KernelSpec kSpecs[LayerKernels::Count] = {
    TFC_KERNEL_SPEC("tfc_cuda_attention_forward_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_backward_dq_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_backward_dkv_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_tc_forward_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_tc_backward_dq_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_tc_backward_dkv_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_layer_norm_backward_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_layer_norm_backward_reduce_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_layer_norm_forward_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_cross_entropy_forward_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_cross_entropy_mean_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_cross_entropy_backward_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_gather_rows_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_cross_entropy_fused_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_advance_first_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_small_gemm_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_small_gemm_finish_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_column_sums_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_tc_forward_lean_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_tc_backward_dq_lean_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_wgmma_forward_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_wgmma_backward_dq_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_wgmma_backward_dkv_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_wgmma_forward_wide_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_wgmma_backward_dq_wide_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_wgmma_backward_dkv_wide_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_wgmma_forward_bf16_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_wgmma_backward_dq_bf16_kernel"),
    TFC_KERNEL_SPEC("tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel"),
};
#undef TFC_KERNEL_SPEC

#ifdef TFC_CUDA_HAND_KERNELS
// The CPU kernels' argument lists are the GPU kernels' parameter lists (the
// attention backward's 44 up to stats, then scratch, dS, dsRow, gradsBf16 and
// inputsBf16;
// the layer norm backward's plus its counter).
static_assert(k::kAttentionQkvBf16 == tfc::abi::attention::kQkvBf16);
static_assert(k::kAttentionDoBf16 == tfc::abi::attention::kDoBf16);
static_assert(kSpecs[LayerKernels::AttentionForward].params == 30);
static_assert(kSpecs[LayerKernels::AttentionBackwardDq].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionBackwardDkv].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionTcForward].params == 30);
static_assert(kSpecs[LayerKernels::AttentionTcBackwardDq].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionTcBackwardDkv].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionTcForwardLean].params == 30);
static_assert(kSpecs[LayerKernels::AttentionTcBackwardDqLean].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionWgmmaForward].params == 30);
static_assert(kSpecs[LayerKernels::AttentionWgmmaBackwardDq].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionWgmmaBackwardDkv].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionWgmmaForwardWide].params == 30);
static_assert(kSpecs[LayerKernels::AttentionWgmmaBackwardDqWide].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionWgmmaBackwardDkvWide].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionWgmmaForwardBf16].params == 30);
static_assert(kSpecs[LayerKernels::AttentionWgmmaBackwardDqBf16].params == 44 + 5);
static_assert(kSpecs[LayerKernels::AttentionWgmmaBackwardDkvBf16].params == 44 + 5);
static_assert(kSpecs[LayerKernels::LayerNormBackward].params ==
              tfc::abi::layer_norm_backward::Count + 1);
static_assert(kSpecs[LayerKernels::LayerNormBackwardReduce].params == 6);
static_assert(kSpecs[LayerKernels::LayerNormForward].params == tfc::abi::layer_norm::Count);
static_assert(kSpecs[LayerKernels::CrossEntropyForward].params == 9);
static_assert(kSpecs[LayerKernels::CrossEntropyMean].params == 4);
static_assert(kSpecs[LayerKernels::CrossEntropyBackward].params == 8);
static_assert(kSpecs[LayerKernels::GatherRows].params == 6);
static_assert(kSpecs[LayerKernels::AdvanceFirst].params == 2);
static_assert(kSpecs[LayerKernels::SmallGemm].params == 33);
static_assert(kSpecs[LayerKernels::SmallGemmFinish].params == 16);
static_assert(kSpecs[LayerKernels::ColumnSums].params == 8);
static_assert(kSpecs[LayerKernels::CrossEntropyFused].params ==
              tfc::abi::cross_entropy_fused::Count + 1); // and the counter
static_assert(k::kAttentionThreads == 256 && k::kAttentionDkvThreads == 256);
static_assert(k::kAttentionTcRows == 64);
#endif

/// KernelMath.h (plain C++, there with or without nvcc), whose
/// attention*Units count the fp32 attention kernels' work units (64-row
/// tiles x 64-column slices of each head): their grids, a block a unit.
namespace math = kernels;
/// Rows (a warp each) a block of the layer norm and cross-entropy kernels.
constexpr int64_t rowsPerBlock(LayerKernels::Kernel kernel) { return kSpecs[kernel].threads / 32; }
/// Queries a block of the tensor-core forward and dq, keys a block of
/// their dk/dv (KernelMath.h's kAttentionTcRows).
constexpr int64_t kTcRowsPerBlock = 64;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Whether attention on `device` takes the tensor-core kernels: a model
/// compiled for bf16 or tf32 GEMMs (the products round to bf16 there; fp32
/// models keep attention.cu's bits) and heads those kernels take.
bool useTensorCores(const CudaDevice &device, int64_t d, int64_t dv) {
#ifdef TFC_CUDA_HAND_KERNELS
  return device.gemmPrecision() != GemmPrecision::Fp32 && k::attentionTensorCoreShape(d, dv);
#else
  (void)device, (void)d, (void)dv;
  return false;
#endif
}

/// Whether attention on `device` takes attention_wgmma.cu's kernels:
/// TFC_ATTENTION_WGMMA=1, the tensor cores' heads of 64, and a GPU that
/// took their image (sm_90a).
bool useWgmma(CudaDevice &device, int64_t d, int64_t dv) {
  return device.wgmmaAttention() && d == 64 && dv == 64 && useTensorCores(device, d, dv) &&
         device.layerKernels().loaded(LayerKernels::AttentionWgmmaForward);
}

/// Notes which attention kernels a call of heads d x dv takes or could take
/// under a switch (CudaDevice::noteCalled: tune tries a switch only where it
/// changes a call).
void noteAttentionKernels(CudaDevice &device, int64_t d, int64_t dv) {
  if (!useTensorCores(device, d, dv))
    return;
  device.noteCalled(CudaDevice::kTensorCoreAttention);
  if (d == 64 && dv == 64)
    device.noteCalled(CudaDevice::kWgmmaShapedAttention);
}

/// A strided attention tensor's pointer and strides (in elements).
struct StridedInput {
  intptr_t base, outer, inner, row;
  /// Whether every head's rows start on `bytes` (a multiple of 4 elements).
  bool aligned(intptr_t bytes) const {
    return base % bytes == 0 && outer % 4 == 0 && inner % 4 == 0 && row % 4 == 0;
  }
};
/// Why an attention call's inputsBf16 cannot run on `device`, or "": 0
/// runs anywhere; abi::attention::kQkvBf16 (q, k and v as bf16 bits) on
/// the tensor-core kernels, each head's rows 8-byte aligned (4 bf16), as
/// tf-bf16-gemm-operands lays them out, and the backward's dO (`dout`)
/// 16-byte aligned (those kernels have no unaligned loop for bf16), or,
/// as bf16 bits too (kDoBf16, the backward's alone), 8-byte aligned.
std::string refuseInputs(const CudaDevice &device, intptr_t inputsBf16, int64_t d, int64_t dv,
                         std::initializer_list<StridedInput> qkv,
                         std::optional<StridedInput> dout = std::nullopt) {
  namespace at = tfc::abi::attention;
  if (inputsBf16 == 0)
    return "";
  const bool doBf16 = inputsBf16 == (at::kQkvBf16 | at::kDoBf16);
  if (inputsBf16 != at::kQkvBf16 && !(doBf16 && dout))
    return "inputsBf16 " + std::to_string(inputsBf16) +
           (dout ? " is none of 0, kQkvBf16 and kQkvBf16 | kDoBf16"
                 : " is neither 0 nor kQkvBf16 (kDoBf16 is the backward's)");
  if (!useTensorCores(device, d, dv))
    return "bf16 q, k and v need the tensor-core kernels (a model compiled with --precision "
           "bf16 or tf32, heads of d and dv multiples of 16 up to 64; here " +
           std::to_string(d) + " and " + std::to_string(dv) + ")";
  for (const StridedInput &x : qkv)
    if (!x.aligned(8))
      return "bf16 q, k and v need each head's rows 8-byte aligned (strides multiples of 4)";
  if (dout && doBf16 && !dout->aligned(8))
    return "a bf16 dO needs each head's rows 8-byte aligned (strides multiples of 4)";
  if (dout && !doBf16 && !dout->aligned(16))
    return "bf16 q, k and v need dO's rows 16-byte aligned (its strides multiples of 4)";
  return "";
}

/// A slot holding an f32 in its low bytes.
uint64_t f32Slot(float value) {
  uint64_t slot = 0;
  std::memcpy(&slot, &value, sizeof value);
  return slot;
}

std::vector<uint64_t> slots(std::initializer_list<intptr_t> values) {
  std::vector<uint64_t> out;
  out.reserve(values.size());
  for (intptr_t v : values)
    out.push_back(uint64_t(v));
  return out;
}

/// After a cross-entropy kernel given `counter`: with counter 0, the mean
/// kernel adds the losses in the fixed tree the last block would have.
void launchMeanUnlessCounted(CudaDevice &device, CUdeviceptr counter, int64_t rows, float count,
                             intptr_t losses, intptr_t out) {
  if (counter)
    return;
  std::vector<uint64_t> mean = slots({rows});
  mean.push_back(f32Slot(count));
  for (intptr_t value : {losses, out})
    mean.push_back(uint64_t(value));
  device.layerKernels().launch(device, LayerKernels::CrossEntropyMean, 1, mean);
}

} // namespace

void LayerKernels::load(CudaDriver &driver) {
#ifndef TFC_CUDA_HAND_KERNELS
  (void)driver;
  error_ = "this runtime was built without the hand-written CUDA kernels (nvcc was not found "
           "when libtfc_runtime_cuda.a was built; see docs/cuda-kernels.md)";
#else
  const DriverApi &api = driver.api();
  std::vector<std::pair<std::string_view, CUmodule>> loaded;
  for (const k::KernelImage &image : k::kImages) {
    bool needed = std::any_of(std::begin(kSpecs), std::end(kSpecs),
                              [&](const KernelSpec &s) { return image.name == std::string_view(s.image); });
    if (!needed)
      continue;
    CUmodule module = nullptr;
    std::string error;
    const CUresult result = api.moduleLoadData(&module, image.data);
    if (image.optional && result == CUDA_ERROR_NO_BINARY_FOR_GPU)
      continue; // SASS for another GPU alone: its kernels are not loaded()
    if (!driver.check(result,
                      std::string("cuModuleLoadData(the hand-written ") + image.name + " kernels)",
                      error)) {
      error_ = error;
      return unload(driver);
    }
    modules_.push_back(module);
    loaded.emplace_back(image.name, module);
  }
  for (unsigned i = 0; i < Count; ++i) {
    CUmodule module = nullptr;
    for (auto &[name, m] : loaded)
      if (name == kSpecs[i].image)
        module = m;
    if (!module) // an optional image this GPU took none of
      continue;
    std::string error;
    if (!driver.check(api.moduleGetFunction(&functions_[i], module, kSpecs[i].name),
                      std::string("cuModuleGetFunction(") + kSpecs[i].name + ")", error)) {
      error_ = error;
      return unload(driver);
    }
    if (kSpecs[i].sharedBytes > 48 * 1024 && // opted into once
        !driver.check(api.funcSetAttribute(functions_[i],
                                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           kSpecs[i].sharedBytes),
                      std::string("cuFuncSetAttribute(") + kSpecs[i].name + ")", error)) {
      error_ = error;
      return unload(driver);
    }
  }
#endif
}

void LayerKernels::unload(CudaDriver &driver) {
  for (CUmodule module : modules_)
    driver.api().moduleUnload(module);
  modules_.clear();
  std::fill(std::begin(functions_), std::end(functions_), nullptr);
}

int LayerKernels::threads(Kernel kernel) { return kSpecs[kernel].threads; }

void LayerKernels::launch(CudaDevice &device, Kernel kernel, int64_t blocks,
                          const std::vector<uint64_t> &params) const {
  if (!device.launchError().empty())
    return; // the first failure stands
  std::string error;
  if (!launch(device, kernel, blocks, params, error))
    device.failLaunch(error);
}

bool LayerKernels::launch(CudaDevice &device, Kernel kernel, int64_t blocks,
                          const std::vector<uint64_t> &params, std::string &error) const {
  const KernelSpec &spec = kSpecs[kernel];
  const int64_t grid = std::clamp<int64_t>(blocks, 1, kMaxGridX); // grid-stride loops
  const std::string where = std::string("the hand-written kernel '") + spec.name + "' (grid " +
                            std::to_string(grid) + ", block " + std::to_string(spec.threads) + ")";
  if (!device.isOpen()) {
    error = "launch of " + where + ": the CUDA device is not open";
    return false;
  }
  if (!functions_[kernel]) {
    error = "launch of " + where + ": " + (error_.empty() ? "the kernels are not loaded" : error_);
    return false;
  }
  std::vector<void *> pointers(params.size());
  for (size_t i = 0; i < params.size(); ++i)
    pointers[i] = const_cast<uint64_t *>(&params[i]);
  CudaDriver &driver = device.driver();
  ProfileScope profiled(device, "hand-written", [&] { return std::string(spec.name); });
  if (device.dependentLaunch()) {
    // Every kernel waits for the one before in its first instruction
    // (awaitPreviousKernel), so its launch may overlap that kernel's run.
    const int64_t grids[3] = {grid, 1, 1}, blocks[3] = {spec.threads, 1, 1};
    return driver.check(device.launchWith(CudaDevice::dependentLaunchAttribute(),
                                          functions_[kernel], grids, blocks, spec.sharedBytes,
                                          pointers.data()),
                        "cuLaunchKernelEx(" + where + ", programmatic)", error);
  }
  return driver.check(
      driver.api().launchKernel(functions_[kernel], unsigned(grid), 1, 1, unsigned(spec.threads), 1,
                                1, unsigned(spec.sharedBytes), device.context().stream(),
                                pointers.data(), nullptr),
      "cuLaunchKernel(" + where + ")", error);
}

} // namespace tfc::rt::cuda

using namespace tfc::rt::cuda;

extern "C" void
tfc_cuda_attention_forward(intptr_t outer, intptr_t inner, intptr_t tq, intptr_t tk, intptr_t d,
                           intptr_t dv, float scale, intptr_t q, intptr_t qOuter, intptr_t qInner,
                           intptr_t qRow, intptr_t k, intptr_t kOuter, intptr_t kInner,
                           intptr_t kRow, intptr_t v, intptr_t vOuter, intptr_t vInner,
                           intptr_t vRow, intptr_t mask, intptr_t maskOuter, intptr_t maskInner,
                           intptr_t maskRow, intptr_t out, intptr_t outOuter, intptr_t outInner,
                           intptr_t outRow, intptr_t stats, intptr_t out16, intptr_t inputsBf16) {
  auto &device = CudaDevice::activeFor("tfc_cuda_attention_forward");
  noteAttentionKernels(device, d, dv);
  if (std::string why = refuseInputs(
          device, inputsBf16, d, dv,
          {{q, qOuter, qInner, qRow}, {k, kOuter, kInner, kRow}, {v, vOuter, vInner, vRow}});
      !why.empty())
    return device.failLaunch("tfc_cuda_attention_forward: " + why);
  std::vector<uint64_t> params = slots({outer, inner, tq, tk, d, dv});
  params.push_back(f32Slot(scale));
  for (intptr_t value : {q,   qOuter,   qInner,   qRow,   k,     kOuter,    kInner,    kRow,
                         v,   vOuter,   vInner,   vRow,   mask,  maskOuter, maskInner, maskRow,
                         out, outOuter, outInner, outRow, stats, out16,     inputsBf16})
    params.push_back(uint64_t(value));
  // attention_wgmma.cu's forwards take q, k and v as f32 or as bf16 bits
  // (copied by cp.async; its bf16 kernel those alone, at 3 blocks an SM);
  // its dq and dkv f32 (at 255 registers their loops had no room for a
  // second instantiation), and a dq and a dkv of their own for bf16 q, k,
  // v and dO.
  const bool wgmma = useTensorCores(device, d, dv) && useWgmma(device, d, dv);
  if (wgmma && device.wideAttention()) // two warpgroups a block, 128 queries
    return device.layerKernels().launch(device, LayerKernels::AttentionWgmmaForwardWide,
                                        outer * inner * ceilDiv(tq, 2 * kTcRowsPerBlock), params);
  if (useTensorCores(device, d, dv))
    return device.layerKernels().launch(device,
                                        wgmma ? inputsBf16 ? LayerKernels::AttentionWgmmaForwardBf16
                                                           : LayerKernels::AttentionWgmmaForward
                                        : device.leanAttention()
                                            ? LayerKernels::AttentionTcForwardLean
                                            : LayerKernels::AttentionTcForward,
                                        outer * inner * ceilDiv(tq, kTcRowsPerBlock), params);
  device.layerKernels().launch(device, LayerKernels::AttentionForward,
                               math::attentionForwardUnits(outer * inner, tq, dv), params);
}

extern "C" void tfc_cuda_attention_backward(
    intptr_t outer, intptr_t inner, intptr_t tq, intptr_t tk, intptr_t d, intptr_t dv, float scale,
    intptr_t q, intptr_t qOuter, intptr_t qInner, intptr_t qRow, intptr_t k, intptr_t kOuter,
    intptr_t kInner, intptr_t kRow, intptr_t v, intptr_t vOuter, intptr_t vInner, intptr_t vRow,
    intptr_t mask, intptr_t maskOuter, intptr_t maskInner, intptr_t maskRow, intptr_t dout,
    intptr_t doutOuter, intptr_t doutInner, intptr_t doutRow, intptr_t dq, intptr_t dqOuter,
    intptr_t dqInner, intptr_t dqRow, intptr_t dk, intptr_t dkOuter, intptr_t dkInner,
    intptr_t dkRow, intptr_t dvOut, intptr_t dvOuter, intptr_t dvInner, intptr_t dvRow,
    intptr_t out, intptr_t outOuter, intptr_t outInner, intptr_t outRow, intptr_t stats,
    intptr_t dS, intptr_t gradsBf16, intptr_t inputsBf16) {
  auto &device = CudaDevice::activeFor("tfc_cuda_attention_backward");
  noteAttentionKernels(device, d, dv);
  namespace at = tfc::abi::attention;
  if (bool(gradsBf16 & at::kDkBf16) != bool(gradsBf16 & at::kDvBf16))
    return device.failLaunch("tfc_cuda_attention_backward: gradsBf16 " + std::to_string(gradsBf16) +
                             " stores one of dk and dv as bf16: the kernels store both or neither");
  if (std::string why = refuseInputs(
          device, inputsBf16, d, dv,
          {{q, qOuter, qInner, qRow}, {k, kOuter, kInner, kRow}, {v, vOuter, vInner, vRow}},
          StridedInput{dout, doutOuter, doutInner, doutRow});
      !why.empty())
    return device.failLaunch("tfc_cuda_attention_backward: " + why);
  // The forward's statistics and out, when it left them (and they are on):
  // neither kernel recomputes the rows' maximum and sum, and D is dO . out.
  const bool saved = stats != 0 && out != 0 && device.savedAttentionStats();
  std::vector<uint64_t> params = slots({outer, inner, tq, tk, d, dv});
  params.push_back(f32Slot(scale));
  for (intptr_t value :
       {q,    qOuter,    qInner,    qRow,    k,  kOuter,  kInner,  kRow,  v,     vOuter,  vInner,
        vRow, mask,      maskOuter, maskInner, maskRow, dout, doutOuter, doutInner, doutRow, dq,
        dqOuter, dqInner, dqRow,   dk,      dkOuter, dkInner, dkRow, dvOut, dvOuter, dvInner,
        dvRow})
    params.push_back(uint64_t(value));
  for (intptr_t value : {out, outOuter, outInner, outRow, stats})
    params.push_back(saved ? uint64_t(value) : 0);
  const size_t statsSlot = params.size() - 1;
  const int64_t heads = outer * inner;
  // With the forward's statistics and room for dS (the compiled code's:
  // heads x tq rows of dsRow(tk), f32 for the fp32 kernels; bf16 for the
  // tensor-core kernels, which compiled code leaves out), dkv stores dS and
  // dq multiplies it by K: dkv first then.
  const bool storeDs = saved && dS != 0 && device.attentionDsInMemory();
  // The next parameter, scratch: where dq, when it runs first, stores each
  // query row's statistics and D, and dkv, next on the stream, reads them:
  // it neither recomputes them per block of 64 keys nor, with the forward's
  // statistics, D = dO . out (the same bits either way); 0 without room.
  const int64_t rows = heads * tq;
  const CUdeviceptr scratch =
      !storeDs && rows > 0
          ? device.scratchFor(size_t(rows) * size_t(tfc::abi::attention::kRowStatsBytes))
          : 0;
  params.push_back(uint64_t(scratch));
  const LayerKernels &kernels = device.layerKernels();
  const bool tensorCores = useTensorCores(device, d, dv);
  params.push_back(storeDs ? uint64_t(dS) : 0);
  params.push_back(uint64_t(tfc::abi::attention::dsRow(tk)));
  params.push_back(uint64_t(gradsBf16));
  params.push_back(uint64_t(inputsBf16));
  // Each family's two kernels and grids (a block a unit).
  // f32 inputs alone (the forward's comment); bf16 q, k, v and dO take
  // wgmma's bf16 dq on the forward's statistics and its bf16 dkv on dq's
  // where dk and dv go out as bf16 too (else the tensor cores' dkv).
  const bool wgmma = !inputsBf16 && tensorCores && useWgmma(device, d, dv);
  const bool wgmmaBf16Dq = inputsBf16 == (at::kQkvBf16 | at::kDoBf16) && tensorCores &&
                           useWgmma(device, d, dv) && saved && !storeDs;
  // TFC_ATTENTION_WIDE=1: dq on two warpgroups a block, on the wgmma way
  // (the forward's statistics, no dS), and dkv, on its pipelined way (the
  // statistics dq stored in scratch).
  const bool wideDq = wgmma && device.wideAttention() && saved && !storeDs;
  // Whether dkv, after dq, reads the statistics dq stored in scratch (else
  // the forward's, or its own).
  const bool dkvOnDqStats = scratch && (!saved || device.attentionDqStoresD());
  const bool wideDkv = wgmma && device.wideAttention() && !storeDs && tq > 0 && dkvOnDqStats &&
                       !(gradsBf16 & at::kDkBf16);
  const bool wgmmaBf16Dkv = inputsBf16 == (at::kQkvBf16 | at::kDoBf16) &&
                            (gradsBf16 & at::kDkBf16) && tensorCores && useWgmma(device, d, dv) &&
                            !storeDs && tq > 0 && dkvOnDqStats;
  const LayerKernels::Kernel dqKernel = !tensorCores  ? LayerKernels::AttentionBackwardDq
                                        : wideDq      ? LayerKernels::AttentionWgmmaBackwardDqWide
                                        : wgmma       ? LayerKernels::AttentionWgmmaBackwardDq
                                        : wgmmaBf16Dq ? LayerKernels::AttentionWgmmaBackwardDqBf16
                                        : device.leanAttention()
                                            ? LayerKernels::AttentionTcBackwardDqLean
                                            : LayerKernels::AttentionTcBackwardDq,
                             // The wgmma dkvs store f32 gradients alone (attention_wgmma.cu).
      dkvKernel = !tensorCores ? LayerKernels::AttentionBackwardDkv
                  : wideDkv    ? LayerKernels::AttentionWgmmaBackwardDkvWide
                  : wgmma && !(gradsBf16 & at::kDkBf16) ? LayerKernels::AttentionWgmmaBackwardDkv
                  : wgmmaBf16Dkv ? LayerKernels::AttentionWgmmaBackwardDkvBf16
                                 : LayerKernels::AttentionTcBackwardDkv;
  const int64_t dqBlocks = wideDq        ? heads * ceilDiv(tq, 2 * kTcRowsPerBlock)
                           : tensorCores ? heads * ceilDiv(tq, kTcRowsPerBlock)
                                         : math::attentionDqUnits(heads, tq, d),
                dkvBlocks = wideDkv       ? heads * ceilDiv(tk, 2 * kTcRowsPerBlock)
                            : tensorCores ? heads * ceilDiv(tk, kTcRowsPerBlock)
                                          : math::attentionDkvUnits(heads, tk, d, dv);
  if (storeDs)
    kernels.launch(device, dkvKernel, dkvBlocks, params);
  kernels.launch(device, dqKernel, dqBlocks, params);
  if (storeDs)
    return;
  // dkv after dq: the statistics from scratch, where dq stored them (a
  // kernel given the forward's statistics reads those and computes D).
  std::vector<uint64_t> dkvParams = params;
  if (saved && dkvOnDqStats)
    dkvParams[statsSlot] = 0;
  kernels.launch(device, dkvKernel, dkvBlocks, dkvParams);
}

extern "C" void tfc_cuda_layer_norm_backward(
    intptr_t rows, intptr_t d, intptr_t blockRows, float eps, intptr_t x, intptr_t gamma,
    intptr_t g, intptr_t gate, intptr_t dx, intptr_t dgamma, intptr_t dbeta, intptr_t scratch,
    intptr_t dropout, intptr_t dropoutBits, intptr_t seed, intptr_t sampleOffset,
    intptr_t sampleSize, intptr_t key, intptr_t threshold, float keep, intptr_t gateBits) {
  auto &device = CudaDevice::activeFor("tfc_cuda_layer_norm_backward");
  const int64_t blocks = rows > 0 && blockRows > 0 ? ceilDiv(rows, blockRows) : 0;
  // A block a row block writes its partial sums to scratch; the last block
  // to finish adds them in block order (its counter the device's), unless
  // they are too many for one SM: then counter 0, and a second launch adds
  // them, a block a slice of columns. The same bits either way.
  const CUdeviceptr counter = math::layerNormLastBlockAdds(blocks, d) && device.layerNormOneLaunch()
                                  ? device.lastBlockCounter()
                                  : 0;
  std::vector<uint64_t> params = slots({rows, d, blockRows});
  params.push_back(f32Slot(eps));
  for (intptr_t value : {x, gamma, g, gate, dx, dgamma, dbeta, scratch, dropout, dropoutBits, seed,
                         sampleOffset, sampleSize, key, threshold})
    params.push_back(uint64_t(value));
  params.push_back(f32Slot(keep));
  params.push_back(uint64_t(gateBits));
  params.push_back(uint64_t(counter));
  const LayerKernels &kernels = device.layerKernels();
  kernels.launch(device, LayerKernels::LayerNormBackward, blocks, params);
  if (!counter)
    kernels.launch(device, LayerKernels::LayerNormBackwardReduce,
                   ceilDiv(d, math::kLayerNormReduceColumns),
                   slots({rows, d, blockRows, scratch, dgamma, dbeta}));
}

extern "C" void tfc_cuda_layer_norm_forward(intptr_t rows, intptr_t d, float eps, intptr_t x,
                                            intptr_t gamma, intptr_t beta, intptr_t y,
                                            intptr_t relu, intptr_t y16, intptr_t residual,
                                            intptr_t pre, intptr_t seed, intptr_t sampleOffset,
                                            intptr_t sampleSize, intptr_t key, intptr_t threshold,
                                            float keep) {
  auto &device = CudaDevice::activeFor("tfc_cuda_layer_norm_forward");
  std::vector<uint64_t> params = slots({rows, d});
  params.push_back(f32Slot(eps));
  for (intptr_t value : {x, gamma, beta, y, relu, y16, residual, pre, seed, sampleOffset,
                         sampleSize, key, threshold})
    params.push_back(uint64_t(value));
  params.push_back(f32Slot(keep));
  device.layerKernels().launch(device, LayerKernels::LayerNormForward,
                               ceilDiv(rows, rowsPerBlock(LayerKernels::LayerNormForward)),
                               params);
}

extern "C" void tfc_cuda_cross_entropy(intptr_t outer, intptr_t classes, intptr_t inner,
                                       float count, intptr_t logits, intptr_t labels,
                                       intptr_t losses, intptr_t out) {
  auto &device = CudaDevice::activeFor("tfc_cuda_cross_entropy");
  // A warp a row writes the rows' losses; the last block to finish adds
  // them in a fixed tree (counter 0, where the device has none: a second
  // launch does, in the same tree).
  const CUdeviceptr counter = device.crossEntropyOneLaunch() ? device.lastBlockCounter() : 0;
  std::vector<uint64_t> params = slots({outer, classes, inner});
  params.push_back(f32Slot(count));
  for (intptr_t value : {logits, labels, losses, out})
    params.push_back(uint64_t(value));
  params.push_back(uint64_t(counter));
  device.layerKernels().launch(
      device, LayerKernels::CrossEntropyForward,
      ceilDiv(outer * inner, rowsPerBlock(LayerKernels::CrossEntropyForward)), params);
  launchMeanUnlessCounted(device, counter, outer * inner, count, losses, out);
}

extern "C" void tfc_cuda_cross_entropy_backward(intptr_t outer, intptr_t classes, intptr_t inner,
                                                float count, intptr_t logits, intptr_t labels,
                                                intptr_t dloss, intptr_t dlogits) {
  auto &device = CudaDevice::activeFor("tfc_cuda_cross_entropy_backward");
  // A warp a row: its softmax recomputed, its dlogits written once.
  std::vector<uint64_t> params = slots({outer, classes, inner});
  params.push_back(f32Slot(count));
  for (intptr_t value : {logits, labels, dloss, dlogits})
    params.push_back(uint64_t(value));
  device.layerKernels().launch(
      device, LayerKernels::CrossEntropyBackward,
      ceilDiv(outer * inner, rowsPerBlock(LayerKernels::CrossEntropyBackward)), params);
}

extern "C" void tfc_cuda_cross_entropy_fused(intptr_t outer, intptr_t classes, intptr_t inner,
                                             float count, intptr_t logits, intptr_t labels,
                                             intptr_t dloss, intptr_t losses, intptr_t out,
                                             intptr_t dlogits, intptr_t corrects, intptr_t accuracy,
                                             intptr_t dlogitsBits) {
  auto &device = CudaDevice::activeFor("tfc_cuda_cross_entropy_fused");
  // A warp a row reads its logits once and writes its loss, its dlogits and
  // (with corrects) whether its argmax is its label; the last block adds
  // the losses, then the corrects, in tfc_cuda_cross_entropy's fixed tree.
  const CUdeviceptr counter = device.crossEntropyOneLaunch() ? device.lastBlockCounter() : 0;
  if (!corrects || !accuracy)
    corrects = accuracy = 0;
  std::vector<uint64_t> params = slots({outer, classes, inner});
  params.push_back(f32Slot(count));
  for (intptr_t value :
       {logits, labels, dloss, losses, out, dlogits, corrects, accuracy, dlogitsBits})
    params.push_back(uint64_t(value));
  params.push_back(uint64_t(counter));
  device.layerKernels().launch(
      device, LayerKernels::CrossEntropyFused,
      ceilDiv(outer * inner, rowsPerBlock(LayerKernels::CrossEntropyFused)), params);
  launchMeanUnlessCounted(device, counter, outer * inner, count, losses, out);
  if (corrects)
    launchMeanUnlessCounted(device, counter, outer * inner, float(outer * inner), corrects,
                            accuracy);
}
