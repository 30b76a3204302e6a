//===- Kernels.h - the hand-written CUDA kernels, as images to load -------===//
//
// runtime/cuda/kernels/*.cu, one file a layer, compiled by nvcc -fatbin (SASS
// for sm_80 and sm_90, PTX for compute_90: newer GPUs JIT it) and embedded
// with bin2c in the static library tfc_cuda_kernels: a runtime loads an image
// with cuModuleLoadData and finds each kernel by its name with
// cuModuleGetFunction (the names are extern "C", unmangled). Kernel
// parameters are passed as cuLaunchKernel's array of pointers, one per
// parameter: "i64" a long long, "f32" a float, "ptr" a device pointer.
// Each kernel's block size is fixed (a kernel traps on another); grids may
// be any size >= 1 (grid-stride loops); no dynamic shared memory. The
// kernels' comments say what each computes; docs/cuda-kernels.md the rest.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_KERNELS_KERNELS_H
#define TFC_RUNTIME_CUDA_KERNELS_KERNELS_H

#include "runtime/cuda/kernels/KernelMath.h"

#include <cstddef>
#include <string_view>

extern "C" {
/// The fatbins, 16-byte aligned, and their sizes in bytes.
extern const unsigned char tfc_cuda_attention_fatbin[];
extern const size_t tfc_cuda_attention_fatbin_size;
extern const unsigned char tfc_cuda_attention_tc_fatbin[];
extern const size_t tfc_cuda_attention_tc_fatbin_size;
extern const unsigned char tfc_cuda_layer_norm_fatbin[];
extern const size_t tfc_cuda_layer_norm_fatbin_size;
extern const unsigned char tfc_cuda_cross_entropy_fatbin[];
extern const size_t tfc_cuda_cross_entropy_fatbin_size;
extern const unsigned char tfc_cuda_dropout_fatbin[];
extern const size_t tfc_cuda_dropout_fatbin_size;
extern const unsigned char tfc_cuda_gather_fatbin[];
extern const size_t tfc_cuda_gather_fatbin_size;
extern const unsigned char tfc_cuda_gemm_small_fatbin[];
extern const size_t tfc_cuda_gemm_small_fatbin_size;
extern const unsigned char tfc_cuda_attention_wgmma_fatbin[];
extern const size_t tfc_cuda_attention_wgmma_fatbin_size;
}

namespace tfc::rt::cuda::kernels {

/// The attention kernels' parameters: runtime/cpu/Attention.h's, in order.
#define TFC_CUDA_ATTENTION_SIZES "i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, f32 scale"
#define TFC_CUDA_STRIDED(name)                                                 \
  "ptr " name ", i64 " name "Outer, i64 " name "Inner, i64 " name "Row"
#define TFC_CUDA_ATTENTION_INPUTS                                              \
  TFC_CUDA_STRIDED("q") ", " TFC_CUDA_STRIDED("k") ", " TFC_CUDA_STRIDED(      \
      "v") ", " TFC_CUDA_STRIDED("mask")
/// The forward's: the CPU kernel's (stats: 0, or 4 floats a query row the
/// forward stores for the backward; out16: 0, or out's bf16 bits beside
/// it, runtime/Abi.h's attention::; inputsBf16 as the backward's).
#define TFC_CUDA_ATTENTION_FORWARD                                             \
  TFC_CUDA_ATTENTION_SIZES ", " TFC_CUDA_ATTENTION_INPUTS ", " TFC_CUDA_STRIDED( \
      "out") ", ptr stats, ptr out16, i64 inputsBf16"
/// The backward's: the CPU kernel's (the forward's out and stats, or 0),
/// then scratch (0, or 4 floats a query row the dq launch stores and the
/// dkv launch reads when there are no stats; attention.cu), then dS (0, or
/// bf16 [head][query][key] rows dsRow apart, which the tensor-core dkv
/// launch stores and their dq, launched after it, reads; attention_tc.cu),
/// then gradsBf16 (Abi.h's attention::kDqBf16, ...: those stored as bf16),
/// then inputsBf16 (the forward's last too: Abi.h's attention::kQkvBf16,
/// q, k and v as bf16 bits; the tensor-core kernels alone take it).
#define TFC_CUDA_ATTENTION_BACKWARD                                            \
  TFC_CUDA_ATTENTION_SIZES ", " TFC_CUDA_ATTENTION_INPUTS ", " TFC_CUDA_STRIDED( \
      "dout") ", " TFC_CUDA_STRIDED("dq") ", " TFC_CUDA_STRIDED("dk") ", "     \
      TFC_CUDA_STRIDED("dv") ", " TFC_CUDA_STRIDED("out") ", ptr stats, ptr scratch, ptr dS, " \
      "i64 dsRow, i64 gradsBf16, i64 inputsBf16"

// X(image, kernel name, threads a block, parameter count, parameters)
/// gemm_small.cu's epilogue, the last parameters of its two product kernels.
#define TFC_CUDA_GEMM_EPILOGUE                                                 \
  "i64 accumulate, ptr residual, i64 ldResidual, ptr bias, i64 relu, i64 reluGrad, "   \
  "ptr mask, i64 ldMask"
#define TFC_CUDA_KERNELS(X)                                                    \
  X(attention, "tfc_cuda_attention_forward_kernel", kAttentionThreads, 30,     \
    TFC_CUDA_ATTENTION_FORWARD)                                                \
  X(attention, "tfc_cuda_attention_backward_dq_kernel", kAttentionThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention, "tfc_cuda_attention_backward_dkv_kernel", kAttentionDkvThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention_tc, "tfc_cuda_attention_tc_forward_kernel", kAttentionTcThreads, 30, \
    TFC_CUDA_ATTENTION_FORWARD)                                                \
  X(attention_tc, "tfc_cuda_attention_tc_forward_lean_kernel", kAttentionTcThreads, 30, \
    TFC_CUDA_ATTENTION_FORWARD)                                                \
  X(attention_tc, "tfc_cuda_attention_tc_backward_dq_kernel", kAttentionTcThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention_tc, "tfc_cuda_attention_tc_backward_dq_lean_kernel", kAttentionTcThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention_tc, "tfc_cuda_attention_tc_backward_dkv_kernel", kAttentionTcThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_forward_kernel", kAttentionTcThreads, 30, \
    TFC_CUDA_ATTENTION_FORWARD)                                                \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_forward_bf16_kernel", kAttentionTcThreads, 30, \
    TFC_CUDA_ATTENTION_FORWARD)                                                \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_forward_serial_kernel", kAttentionTcThreads, 30, \
    TFC_CUDA_ATTENTION_FORWARD)                                                \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_forward_wide_kernel", kAttentionWgmmaWideThreads, \
    30, TFC_CUDA_ATTENTION_FORWARD)                                            \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_backward_dq_kernel", kAttentionTcThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_backward_dq_bf16_kernel", kAttentionTcThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_backward_dq_serial_kernel", kAttentionTcThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_backward_dq_wide_kernel",                     \
    kAttentionWgmmaWideThreads, 49, TFC_CUDA_ATTENTION_BACKWARD)               \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_backward_dkv_kernel", kAttentionTcThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel", kAttentionTcThreads, 49, \
    TFC_CUDA_ATTENTION_BACKWARD)                                               \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_backward_dkv_serial_kernel", kAttentionTcThreads, \
    49, TFC_CUDA_ATTENTION_BACKWARD)                                           \
  X(attention_wgmma, "tfc_cuda_attention_wgmma_backward_dkv_wide_kernel",                    \
    kAttentionWgmmaWideThreads, 49, TFC_CUDA_ATTENTION_BACKWARD)               \
  X(layer_norm, "tfc_cuda_layer_norm_forward_kernel", kLayerNormThreads, 17,   \
    "i64 rows, i64 d, f32 eps, ptr x, ptr gamma, ptr beta, ptr y, i64 relu, ptr y16, "        \
    "ptr residual, ptr pre, ptr seed, ptr sampleOffset, i64 sampleSize, i64 key, "            \
    "i64 threshold, f32 keep")                                                 \
  X(layer_norm, "tfc_cuda_layer_norm_backward_kernel", kLayerNormThreads, 22,  \
    "i64 rows, i64 d, i64 blockRows, f32 eps, ptr x, ptr gamma, ptr g, ptr gate, ptr dx, "     \
    "ptr dgamma, ptr dbeta, ptr scratch, ptr dropout, i64 dropoutBits, ptr seed, "             \
    "ptr sampleOffset, i64 sampleSize, i64 key, i64 threshold, f32 keep, i64 gateBits, "       \
    "ptr counter")                                                             \
  X(layer_norm, "tfc_cuda_layer_norm_backward_reduce_kernel", kLayerNormThreads, 6, \
    "i64 rows, i64 d, i64 blockRows, ptr scratch, ptr dgamma, ptr dbeta")      \
  X(cross_entropy, "tfc_cuda_cross_entropy_forward_kernel", kCrossEntropyThreads, 9, \
    "i64 outer, i64 classes, i64 inner, f32 count, ptr logits, ptr labels, ptr losses, ptr out, " \
    "ptr counter")                                                             \
  X(cross_entropy, "tfc_cuda_cross_entropy_mean_kernel", kReduceThreads, 4,    \
    "i64 n, f32 count, ptr losses, ptr out")                                   \
  X(cross_entropy, "tfc_cuda_cross_entropy_backward_kernel", kCrossEntropyThreads, 8, \
    "i64 outer, i64 classes, i64 inner, f32 count, ptr logits, ptr labels, ptr dloss, ptr dlogits") \
  X(cross_entropy, "tfc_cuda_cross_entropy_fused_kernel", kCrossEntropyThreads, 14, \
    "i64 outer, i64 classes, i64 inner, f32 count, ptr logits, ptr labels, ptr dloss, "    \
    "ptr losses, ptr out, ptr dlogits, ptr corrects, ptr accuracy, i64 dlogitsBits, "      \
    "ptr counter")                                                             \
  X(dropout, "tfc_cuda_dropout_mask_kernel", kDropoutThreads, 6,               \
    "ptr mask, i64 n, i64 first, i64 seed, i64 key, i64 threshold")           \
  X(gather, "tfc_cuda_gather_rows_kernel", kGatherThreads, 6,                  \
    "ptr to, ptr rows, i64 rowBytes, ptr order, ptr first, i64 count")          \
  X(gather, "tfc_cuda_advance_first_kernel", kAdvanceThreads, 2, "ptr first, i64 count") \
  X(gemm_small, "tfc_cuda_small_gemm_kernel", kSmallGemmThreads, 33,             \
    "i64 m, i64 n, i64 k, i64 slice, i64 items, ptr a, i64 lda, i64 strideA, i64 transA, " \
    "ptr b, i64 ldb, i64 strideB, i64 transB, ptr c, i64 ldc, i64 strideC, ptr partials, " \
    TFC_CUDA_GEMM_EPILOGUE ", i64 outputs, i64 parts, ptr sumsOf, i64 sumsLd, "   \
    "i64 sumsCols, ptr partSums, ptr biasGrad, ptr counter")                   \
  X(gemm_small, "tfc_cuda_small_gemm_finish_kernel", kSmallGemmThreads, 16,      \
    "i64 m, i64 n, i64 outputs, i64 parts, ptr partials, ptr c, i64 ldc, i64 strideC, " \
    TFC_CUDA_GEMM_EPILOGUE)                                                     \
  X(gemm_small, "tfc_cuda_column_sums_kernel", kSmallGemmThreads, 8,             \
    "i64 rows, i64 cols, ptr x, i64 ld, i64 part, ptr sums, ptr columnSums, ptr counter")

/// An embedded image and a kernel in it.
struct KernelImage {
  const char *name; // "attention"
  const unsigned char *data;
  const size_t *size;
  /// SASS for one GPU family alone (attention_wgmma: sm_90a): a GPU whose
  /// driver takes none of it runs without these kernels.
  bool optional = false;
};

struct KernelInfo {
  const char *image; // the KernelImage's name
  const char *name;  // for cuModuleGetFunction
  int threads;       // blockDim.x (y = z = 1)
  int paramCount;
  const char *params; // "i64 rows, f32 eps, ptr x, ..."
};

inline constexpr KernelImage kImages[] = {
    {"attention", tfc_cuda_attention_fatbin, &tfc_cuda_attention_fatbin_size},
    {"attention_tc", tfc_cuda_attention_tc_fatbin, &tfc_cuda_attention_tc_fatbin_size},
    {"layer_norm", tfc_cuda_layer_norm_fatbin, &tfc_cuda_layer_norm_fatbin_size},
    {"cross_entropy", tfc_cuda_cross_entropy_fatbin, &tfc_cuda_cross_entropy_fatbin_size},
    {"dropout", tfc_cuda_dropout_fatbin, &tfc_cuda_dropout_fatbin_size},
    {"gather", tfc_cuda_gather_fatbin, &tfc_cuda_gather_fatbin_size},
    {"gemm_small", tfc_cuda_gemm_small_fatbin, &tfc_cuda_gemm_small_fatbin_size},
    {"attention_wgmma", tfc_cuda_attention_wgmma_fatbin, &tfc_cuda_attention_wgmma_fatbin_size,
     /*optional=*/true},
};

inline constexpr KernelInfo kKernels[] = {
#define TFC_CUDA_KERNEL_INFO(image, name, threads, count, params)              \
  {#image, name, threads, count, params},
    TFC_CUDA_KERNELS(TFC_CUDA_KERNEL_INFO)
#undef TFC_CUDA_KERNEL_INFO
};

/// attention_wgmma.cu's bf16 dq: seven 8 KiB tiles, 1 KiB to align them.
inline constexpr int kAttentionWgmmaDqBf16Shared = 7 * 8192 + 1024;
/// Its bf16 dkv: eight.
inline constexpr int kAttentionWgmmaDkvBf16Shared = 8 * 8192 + 1024;

/// The dynamic shared memory kernel `name` is launched with (bytes): past
/// 48 KiB, opted into with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
/// once loaded. 0 for every kernel but these.
constexpr int dynamicSharedBytes(std::string_view name) {
  return name == "tfc_cuda_attention_wgmma_backward_dq_wide_kernel"    ? kAttentionWgmmaWideDqShared
         : name == "tfc_cuda_attention_wgmma_backward_dkv_wide_kernel" ? kAttentionWgmmaWideDkvShared
         : name == "tfc_cuda_attention_wgmma_backward_dq_bf16_kernel"   ? kAttentionWgmmaDqBf16Shared
         : name == "tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel"  ? kAttentionWgmmaDkvBf16Shared
                                                                       : 0;
}

} // namespace tfc::rt::cuda::kernels

#endif // TFC_RUNTIME_CUDA_KERNELS_KERNELS_H
