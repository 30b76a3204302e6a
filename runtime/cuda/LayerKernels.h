//===- LayerKernels.h - the hand-written kernels generated code calls -----===//
//
// defines: tfc_cuda_attention_forward, tfc_cuda_attention_backward,
// tfc_cuda_layer_norm_backward, tfc_cuda_layer_norm_forward,
// tfc_cuda_cross_entropy (runtime/Abi.h's TFC_ABI_CUDA_RUNTIME_FUNCTIONS)
//
// tfc --target=cuda calls these where the CPU build calls tfc_attention_*
// and tfc_layer_norm_backward, with the same arguments on device memory.
// Each launches the kernels of runtime/cuda/kernels/ (Kernels.h: the images
// embedded in tfc_cuda_kernels, the block sizes) on the running device's
// stream, so a captured graph records them: the attention forward one
// launch (a block 64 query rows), its backward two (dq, a block 64 query
// rows; then dk and dv, a block 64 keys; dq hands dkv the rows' statistics
// through CudaDevice::scratchFor where it has room), or, on a device whose
// GEMM precision is bf16 or tf32 and heads of 16 to 64 columns (multiples
// of 16), attention_tc.cu's tensor-core kernels (a block 64 queries, 64
// keys for dk and dv) with the same arguments; the layer norm's
// backward one (a block a row block, the last to finish adding the
// blocks' sums in order; a second launch adds them where they are many),
// its forward one (a warp a row), the cross-entropy one (a warp a row's
// loss, the last block to finish adding the losses in a fixed tree; with
// no counter, or TFC_CROSS_ENTROPY_ONE_LAUNCH=0, a second launch does). A
// failure is kept as tfc_cuda_launch keeps it: the first one stands, later
// launches are skipped, and the entry's run returns it.
//
// The images are loaded once, when the device opens (CudaDevice::open).
// Where nvcc did not build tfc_cuda_kernels the runtime has none, and the
// first call says so; so does a GPU the images have no code for.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_LAYERKERNELS_H
#define TFC_RUNTIME_CUDA_LAYERKERNELS_H

#include "runtime/cuda/Driver.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
/// tfc_attention_forward (runtime/cpu/Attention.h) on the GPU.
void tfc_cuda_attention_forward(intptr_t outer, intptr_t inner, intptr_t tq, intptr_t tk,
                                intptr_t d, intptr_t dv, float scale, intptr_t q, intptr_t qOuter,
                                intptr_t qInner, intptr_t qRow, intptr_t k, intptr_t kOuter,
                                intptr_t kInner, intptr_t kRow, intptr_t v, intptr_t vOuter,
                                intptr_t vInner, intptr_t vRow, intptr_t mask, intptr_t maskOuter,
                                intptr_t maskInner, intptr_t maskRow, intptr_t out,
                                intptr_t outOuter, intptr_t outInner, intptr_t outRow,
                                intptr_t stats, intptr_t out16, intptr_t inputsBf16);
/// tfc_attention_backward (runtime/cpu/Attention.h) on the GPU.
void tfc_cuda_attention_backward(
    intptr_t outer, intptr_t inner, intptr_t tq, intptr_t tk, intptr_t d, intptr_t dv, float scale,
    intptr_t q, intptr_t qOuter, intptr_t qInner, intptr_t qRow, intptr_t k, intptr_t kOuter,
    intptr_t kInner, intptr_t kRow, intptr_t v, intptr_t vOuter, intptr_t vInner, intptr_t vRow,
    intptr_t mask, intptr_t maskOuter, intptr_t maskInner, intptr_t maskRow, intptr_t dout,
    intptr_t doutOuter, intptr_t doutInner, intptr_t doutRow, intptr_t dq, intptr_t dqOuter,
    intptr_t dqInner, intptr_t dqRow, intptr_t dk, intptr_t dkOuter, intptr_t dkInner,
    intptr_t dkRow, intptr_t dvOut, intptr_t dvOuter, intptr_t dvInner, intptr_t dvRow,
    intptr_t out, intptr_t outOuter, intptr_t outInner, intptr_t outRow, intptr_t stats,
    intptr_t dS, intptr_t gradsBf16, intptr_t inputsBf16);
/// tfc_layer_norm_backward (runtime/cpu/LayerNorm.h) on the GPU: scratch
/// holds 2 x ceil(rows / blockRows) x d floats; dx's dropout and the gate
/// as runtime/Abi.h's layer_norm_backward says.
void tfc_cuda_layer_norm_backward(intptr_t rows, intptr_t d, intptr_t blockRows, float eps,
                                  intptr_t x, intptr_t gamma, intptr_t g, intptr_t gate,
                                  intptr_t dx, intptr_t dgamma, intptr_t dbeta, intptr_t scratch,
                                  intptr_t dropout, intptr_t dropoutBits, intptr_t seed,
                                  intptr_t sampleOffset, intptr_t sampleSize, intptr_t key,
                                  intptr_t threshold, float keep, intptr_t gateBits);
/// tfc_layer_norm_forward (runtime/cpu/LayerNorm.h) on the GPU.
void tfc_cuda_layer_norm_forward(intptr_t rows, intptr_t d, float eps, intptr_t x, intptr_t gamma,
                                 intptr_t beta, intptr_t y, intptr_t relu, intptr_t y16,
                                 intptr_t residual, intptr_t pre, intptr_t seed,
                                 intptr_t sampleOffset, intptr_t sampleSize, intptr_t key,
                                 intptr_t threshold, float keep);
/// tfc_cross_entropy (runtime/cpu/CrossEntropy.h) on the GPU.
void tfc_cuda_cross_entropy(intptr_t outer, intptr_t classes, intptr_t inner, float count,
                            intptr_t logits, intptr_t labels, intptr_t losses, intptr_t out);
/// tfc_cross_entropy_backward (runtime/cpu/CrossEntropy.h) on the GPU.
void tfc_cuda_cross_entropy_backward(intptr_t outer, intptr_t classes, intptr_t inner,
                                     float count, intptr_t logits, intptr_t labels,
                                     intptr_t dloss, intptr_t dlogits);
/// tfc_cross_entropy_fused (runtime/cpu/CrossEntropy.h) on the GPU: both
/// of the above from one read of the logits.
void tfc_cuda_cross_entropy_fused(intptr_t outer, intptr_t classes, intptr_t inner, float count,
                                  intptr_t logits, intptr_t labels, intptr_t dloss, intptr_t losses,
                                  intptr_t out, intptr_t dlogits, intptr_t corrects,
                                  intptr_t accuracy, intptr_t dlogitsBits);
}

namespace tfc::rt::cuda {

class CudaDevice;

/// The hand-written kernels as one device loaded them.
class LayerKernels {
public:
  /// The kernels tfc_cuda_* launch, by index into `functions_`.
  enum Kernel : unsigned {
    AttentionForward,
    AttentionBackwardDq,
    AttentionBackwardDkv,
    AttentionTcForward,    // attention_tc.cu: --precision bf16/tf32, d and dv
    AttentionTcBackwardDq, // multiples of 16 up to 64
    AttentionTcBackwardDkv,
    LayerNormBackward,
    LayerNormBackwardReduce,
    LayerNormForward,
    CrossEntropyForward,
    CrossEntropyMean,
    CrossEntropyBackward,
    GatherRows, // gather.cu: CudaDevice::gatherBatch, not generated code's
    CrossEntropyFused,
    AdvanceFirst, // gather.cu: CudaDevice::gatherBatch, after the batch's gathers
    SmallGemm,    // gemm_small.cu: CudaDevice::sgemm's small products
    SmallGemmFinish,
    ColumnSums,
    AttentionTcForwardLean, // attention_tc.cu's lean twins (TFC_ATTENTION_LEAN)
    AttentionTcBackwardDqLean,
    AttentionWgmmaForward, // attention_wgmma.cu (sm_90a alone; TFC_ATTENTION_WGMMA)
    AttentionWgmmaBackwardDq,
    AttentionWgmmaBackwardDkv,
    AttentionWgmmaForwardWide, // its two-warpgroup forward, dq and dkv (TFC_ATTENTION_WIDE)
    AttentionWgmmaBackwardDqWide,
    AttentionWgmmaBackwardDkvWide,
    AttentionWgmmaForwardBf16,     // its forward for bf16 q, k and v alone
    AttentionWgmmaBackwardDqBf16,  // its dq for bf16 q, k, v and dO alone
    AttentionWgmmaBackwardDkvBf16, // and dkv
    Count,
  };

  /// Loads the images (the context current) and resolves every kernel. A
  /// failure is not the device's: it is kept for the first launch to report.
  void load(CudaDriver &driver);
  /// Unloads what load() loaded (before the context goes).
  void unload(CudaDriver &driver);

  /// Launches `kernel` on `device`'s stream on `blocks` blocks of its
  /// threads, `params` one slot a parameter (an i64, a pointer, or an f32
  /// in the low bytes): what the tfc_cuda_* functions do.
  void launch(CudaDevice &device, Kernel kernel, int64_t blocks,
              const std::vector<uint64_t> &params) const;
  /// The same by the host (CudaDevice::gatherBatch, before an entry, into
  /// its graph when captured): false with `error` set instead of a kept
  /// launch failure.
  bool launch(CudaDevice &device, Kernel kernel, int64_t blocks,
              const std::vector<uint64_t> &params, std::string &error) const;
  /// Whether load() resolved `kernel` (an optional image's kernels are
  /// not there on a GPU that takes none of its SASS).
  bool loaded(Kernel kernel) const { return functions_[kernel] != nullptr; }
  /// Threads a block of `kernel` (1 where the kernels are not built).
  static int threads(Kernel kernel);

private:
  std::vector<CUmodule> modules_;
  CUfunction functions_[Count] = {};
  std::string error_; // why the kernels cannot run, from load()
};

} // namespace tfc::rt::cuda

#endif // TFC_RUNTIME_CUDA_LAYERKERNELS_H
