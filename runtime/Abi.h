//===- Abi.h - the one contract between the compiler and the runtime ------===//
//
// Everything generated code and the runtime must agree on is spelled here
// once, and both sides include this file (the compiler's passes that emit
// calls and the manifest; the runtime that defines those functions and reads
// the manifest): the symbols a compiled model defines, the runtime functions
// it calls with each one's C type and argument layout, the kinds of entry
// arguments and results, and the manifest's keys. runtime/cpu/AbiCheck.cpp
// checks the runtime's definitions against it, so a mismatch fails to
// compile. Plain C++17: no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_ABI_H
#define TFC_RUNTIME_ABI_H

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace tfc::abi {

//===----------------------------------------------------------------------===//
// What a compiled model defines
//===----------------------------------------------------------------------===//

/// `const char tfc_manifest[]`: the model's JSON description (keys below).
inline constexpr std::string_view kManifestSymbol = "tfc_manifest";
/// `void tfc_entry_E(void **buffers)` for entry E: the entry's arguments,
/// then its results, then its arena, each a pointer to device memory.
inline constexpr std::string_view kEntrySymbolPrefix = "tfc_entry_";
/// A CUDA model's kernels, one module for every entry: `const char
/// tfc_cuda_image[]` (a fatbin, or PTX text ending in NUL) and `const int64_t
/// tfc_cuda_image_size`, its bytes. The manifest's "cuda" record names the
/// kernels in it.
inline constexpr std::string_view kCudaImageSymbol = "tfc_cuda_image";
inline constexpr std::string_view kCudaImageSizeSymbol = "tfc_cuda_image_size";
/// The entries a model may have.
inline constexpr std::string_view kPredict = "predict";
inline constexpr std::string_view kEvaluate = "evaluate";
inline constexpr std::string_view kTrainStep = "train_step";
/// train_step in two halves, for data-parallel training: grad_step (the
/// forward and backward passes: loss, metrics, gradients) and apply_step
/// (clipping, schedule and optimizer on gradients averaged across ranks).
inline constexpr std::string_view kGradStep = "grad_step";
inline constexpr std::string_view kApplyStep = "apply_step";
/// A model that declares `generate`: prefill runs the whole (padded) prompt,
/// returning the output at every position and each self-attention's key and
/// value caches; decode runs one token at a position, reading and returning
/// the caches.
inline constexpr std::string_view kPrefill = "prefill";
inline constexpr std::string_view kDecode = "decode";

//===----------------------------------------------------------------------===//
// What each entry argument and result is
//===----------------------------------------------------------------------===//

// X(Enumerator, "name as in the manifest")
#define TFC_ABI_VALUE_KINDS(X)                                                 \
  X(Input, "input")         /* a model input: a batch of samples */            \
  X(Param, "param")         /* a parameter (the runtime owns them) */          \
  X(Seed, "seed")           /* the step's dropout seed, i32 */                 \
  X(SampleOffset, "sample_offset") /* the batch's first global sample, i32 */ \
  X(State, "state")         /* optimizer state, fed back every step */         \
  X(Step, "step")           /* the step counter, f32 (argument and result) */  \
  X(Hyper, "hyper")         /* a hyperparameter: lr, total_steps */            \
  X(Mask, "mask")           /* evaluate's sample_mask: 1 real, 0 padding */    \
  X(Output, "output")       /* a declared output */                            \
  X(Attention, "attention") /* an attention map (--attention-maps) */          \
  X(Loss, "loss")           /* the loss, a mean over the batch */              \
  X(Metric, "metric")       /* a declared metric */                            \
  X(Lr, "lr")               /* the step's scheduled learning rate */           \
  X(GradNorm, "grad_norm")  /* the gradients' norm before clipping */        \
  X(Grad, "grad")           /* a parameter's gradient (grad_step, apply_step) */ \
  X(KvCache, "kv_cache")    /* a self-attention's key or value cache */        \
  X(Position, "position")   /* the decode step's position, i32 */

enum class ValueKind {
#define TFC_ABI_ENUMERATOR(id, name) id,
  TFC_ABI_VALUE_KINDS(TFC_ABI_ENUMERATOR)
#undef TFC_ABI_ENUMERATOR
};

constexpr std::string_view kindName(ValueKind kind) {
  switch (kind) {
#define TFC_ABI_NAME(id, name)                                                 \
  case ValueKind::id:                                                          \
    return name;
    TFC_ABI_VALUE_KINDS(TFC_ABI_NAME)
#undef TFC_ABI_NAME
  }
  return "?";
}

constexpr std::optional<ValueKind> parseKind(std::string_view name) {
#define TFC_ABI_PARSE(id, text)                                                \
  if (name == text)                                                            \
    return ValueKind::id;
  TFC_ABI_VALUE_KINDS(TFC_ABI_PARSE)
#undef TFC_ABI_PARSE
  return std::nullopt;
}

/// The hyperparameters and masks the runtime feeds by name.
inline constexpr std::string_view kLrName = "lr";
inline constexpr std::string_view kTotalStepsName = "total_steps";
inline constexpr std::string_view kSampleMaskName = "sample_mask";

//===----------------------------------------------------------------------===//
// The manifest (tf-pack-entry-abi writes it, runtime/Manifest.cpp reads it)
//===----------------------------------------------------------------------===//

inline constexpr int64_t kManifestVersion = 1;

namespace key {
// The model.
inline constexpr const char *kVersion = "version";
inline constexpr const char *kModel = "model";
inline constexpr const char *kBatch = "batch";
inline constexpr const char *kParams = "params";
inline constexpr const char *kInputs = "inputs";
inline constexpr const char *kEntries = "entries";
inline constexpr const char *kTrain = "train";
// A parameter, input, entry argument or result.
inline constexpr const char *kName = "name";
inline constexpr const char *kKind = "kind";
inline constexpr const char *kDtype = "dtype";
inline constexpr const char *kShape = "shape";
inline constexpr const char *kInit = "init";     // a parameter's {kind, scale}
inline constexpr const char *kScale = "scale";
inline constexpr const char *kIndexBound = "index_bound"; // an input's [0, N)
// A result the entry writes over an argument (tf-updates-in-place): that
// argument's index; the caller passes the argument's buffer for both.
inline constexpr const char *kInPlaceOf = "in_place_of";
// An entry.
inline constexpr const char *kSymbol = "symbol";
inline constexpr const char *kArenaBytes = "arena_bytes";
inline constexpr const char *kArgs = "args";
inline constexpr const char *kResults = "results";
// What tf-graph-dependencies found in an entry: "graph": {"ops": its device
// ops, "longest_path": the most on one path of ops that wait for each other}.
inline constexpr const char *kGraph = "graph";
inline constexpr const char *kOps = "ops";
inline constexpr const char *kLongestPath = "longest_path";
// The CPU the model was compiled for (tfc compile --cpu; runtime/CpuCheck.h):
// "cpu": {"name": the --cpu value ("native" or one of LLVM's CPU names),
// "target": the CPU LLVM compiled for (the compiling machine's for native),
// "features": what the generated code may use, by CpuCheck.h's names}.
inline constexpr const char *kCpu = "cpu";
inline constexpr const char *kCpuTarget = "target";
inline constexpr const char *kCpuFeatures = "features";
// The device the model's entries run on: "cpu" (also when absent) or "cuda".
inline constexpr const char *kDevice = "device";
inline constexpr const char *kDeviceCpu = "cpu";
inline constexpr const char *kDeviceCuda = "cuda";
// A CUDA model's kernels (tfc compile --target=cuda): "cuda": {"arch": the
// GPUs it carries SASS for (["sm_80", "sm_90"]; none for a PTX image, which
// the driver compiles), "image": "fatbin" or "ptx" (tfc_cuda_image's
// format), "kernels": [the name of kernel 0, of kernel 1, ...]: the indices
// tfc_cuda_launch takes, "precision": the GEMMs' (tfc compile --precision):
// "fp32" (also when absent; CUBLAS_COMPUTE_32F), "tf32" (cuBLASLt may use
// TF32 tensor cores: CUBLAS_COMPUTE_32F_FAST_TF32) or "bf16" (bf16 tensor
// cores on A and B rounded to bf16: CUBLAS_COMPUTE_32F_FAST_16BF); every
// other kernel, and every tensor stored, is fp32 either way}.
inline constexpr const char *kCuda = "cuda";
inline constexpr const char *kCudaArch = "arch";
inline constexpr const char *kCudaImage = "image";
inline constexpr const char *kCudaKernels = "kernels";
/// Optional, beside "kernels": kernel i's source, "ENTRY: FILE:LINE,LINE"
/// (the entry that first launches it and the model file's lines its
/// operations come from), for `bench --profile`.
inline constexpr const char *kCudaKernelSources = "kernel_sources";
inline constexpr const char *kCudaPrecision = "precision";
/// true: each entry one persistent kernel (tfc compile --persistent-kernels)
inline constexpr const char *kCudaPersistent = "persistent";
/// The archs ("sm_90") whose SASS starts every generated kernel by waiting
/// for the kernel before it (tf-await-previous-kernel): there the runtime
/// may launch them as programmatic dependent launches. Absent: none.
inline constexpr const char *kCudaDependentLaunch = "dependent_launch";
inline constexpr const char *kPrecisionFp32 = "fp32";
inline constexpr const char *kPrecisionTf32 = "tf32";
inline constexpr const char *kPrecisionBf16 = "bf16";
} // namespace key

/// Element types as the manifest names them.
inline constexpr std::string_view kF32 = "f32";
inline constexpr std::string_view kI32 = "i32";
inline constexpr std::string_view kBool = "bool";

//===----------------------------------------------------------------------===//
// The runtime functions generated CPU code calls (runtime/cpu/)
//===----------------------------------------------------------------------===//

/// Every pointer and size crosses as intptr_t (MLIR's index type).
using Epilogue = void (*)(void *context, int64_t i0, int64_t i1);
#define TFC_ABI_I intptr_t
#define TFC_ABI_GEMM_ARGS                                                      \
  TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, \
      TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I,        \
      TFC_ABI_I, TFC_ABI_I, TFC_ABI_I
#define TFC_ABI_I4 TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I
#define TFC_ABI_WINDOW_ARGS TFC_ABI_I4
/// An attention kernel's sizes (outer, inner, tq, tk, d, dv) and scale.
#define TFC_ABI_ATTENTION_SIZES TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I, float

/// A GEMM call's arguments in order (runtime/cpu/Gemm.h says what each is).
namespace gemm {
enum Arg : unsigned {
  Batch, M, N, K,
  A, Lda, StrideA, TransA,
  B, Ldb, StrideB, TransB,
  C, Ldc, StrideC, Accumulate,
  Count,
};
/// TransA and TransB are flags: kTransposed (stored transposed), and in the
/// CUDA calls (tfc_cuda_sgemm, _fused, _bias_grad and their CPU twins)
/// kBf16 (stored as bf16, 2 bytes an element, ld and stride in elements;
/// tf-bf16-gemm-operands). cuBLASLt takes A and B both bf16 or neither.
/// Accumulate is a flag too (1: C += the product), and in tfc_cuda_sgemm,
/// _fused and their CPU twins kBf16 stores C as bf16 (the product rounded to
/// nearest even, 2 bytes an element, ldc and strideC in elements; A and B
/// bf16; no epilogue but _fused's bias, then bf16 bits too, as cuBLASLt
/// takes a bf16 D's: tf-bf16-gemm-operands' gemm-results and attention
/// inputs).
inline constexpr int64_t kTransposed = 1, kBf16 = 2;
inline constexpr int64_t kAccumulate = 1;
/// What tfc_sgemm_fused adds after Count: C = act(op(A) op(B) + bias[n] + R),
/// act a FusedActivation, bias N floats or 0, R (M x N, row pitch
/// ldResidual) or 0, and ReLU's mask: aux (0: none) holds bit (j + i *
/// ldAux) of element (i, j), ldAux a multiple of 128 and at least N (the
/// layout of cuBLASLt's ReLU bit-mask: C^T column-major). kRelu with aux
/// writes the mask of the sum > 0; kReluGrad multiplies the product by it.
enum FusedArg : unsigned {
  Activation = Count, Bias, Residual, LdResidual, Aux, LdAux, FusedCount
};
enum FusedActivation : int64_t { kNoActivation = 0, kRelu = 1, kReluGrad = 2 };
/// The bytes of a ReLU mask of an M x N product, and its ldAux.
inline constexpr int64_t reluMaskLd(int64_t n) { return (n + 127) / 128 * 128; }
inline constexpr int64_t reluMaskBytes(int64_t m, int64_t n) { return reluMaskLd(n) / 8 * m; }
/// What tfc_sgemm_bias_grad adds after Count: which operand's rows are
/// summed (kBiasGradOfA: A, stored K x M, transA 1; kBiasGradOfB: B, stored
/// K x N, transB 0) and where the sums go (M or N floats, overwritten).
enum BiasGradArg : unsigned { BiasGradOperand = Count, BiasGrad, BiasGradCount };
inline constexpr int64_t kBiasGradOfA = 0, kBiasGradOfB = 1;
/// What the windows and taps variants add after Count: kInner / mInner,
/// ldbInner / ldaOuter, pad, width.
inline constexpr unsigned kWindowArgs = 4;
} // namespace gemm

/// An attention kernel's arguments: the sizes and the f32 scale, then per
/// tensor (inputs q, k, v, mask[, the output's adjoint], then outputs) its
/// pointer and its outer, inner and row strides, then what the forward
/// leaves its backward: the forward's `stats` (a pointer), the backward's
/// the forward's out (pointer and strides) and stats, and room for dS
/// (runtime/cpu/Attention.h).
namespace attention {
inline constexpr unsigned kSizes = 6;
inline constexpr unsigned kPerTensor = 4;
inline constexpr unsigned kForwardInputs = 4, kForwardOutputs = 1;
inline constexpr unsigned kBackwardInputs = 5, kBackwardOutputs = 3;
/// The trailing indices: the forward's stats, out16 and inputsBf16; the
/// backward's out, stats, dS, gradsBf16 and inputsBf16.
inline constexpr unsigned kForwardTrailing = 3, kBackwardTrailing = kPerTensor + 4;
/// The forward's last argument, out16: 0, or where out's bf16 bits
/// (KernelMath.h bf16Bits) go beside out, at out's strides counted in
/// 2-byte elements (tf-bf16-gemm-operands: a GEMM's bf16 operand). The
/// backward's last, gradsBf16: which of dq, dk and dv are stored as their
/// bf16 bits alone (2-byte elements at their strides) instead of f32; dk
/// and dv both or neither (one kernel stores them, testing no flag).
inline constexpr int64_t kDqBf16 = 1, kDkBf16 = 2, kDvBf16 = 4;
/// Both's last argument, inputsBf16: kQkvBf16 when q, k and v are bf16
/// bits (2-byte elements at their strides: a QKV projection cuBLASLt
/// stored in bf16, tf-bf16-gemm-operands), else 0 (f32). The GPU runs
/// bf16 inputs on the tensor-core kernels alone (attention_tc.cu,
/// attention_wgmma.cu: their staging rounds f32 inputs to these bits), with
/// each head's rows 8-byte aligned; the CPU kernels widen them. The
/// backward's may add kDoBf16 (with kQkvBf16 alone): dO, too, as bf16
/// bits at its strides (an out projection's input gradient cuBLASLt
/// stored in bf16), its rows 8-byte aligned: what the kernels staged f32
/// dO rounded to, and read widened in dO . out.
inline constexpr int64_t kQkvBf16 = 1, kDoBf16 = 2;
/// dS's row pitch (elements, bf16 or f32) for tk keys: rows of 16 bytes or more.
inline constexpr int64_t dsRow(int64_t tk) { return (tk + 7) / 8 * 8; }
/// The most bytes of dS a backward gets room for; past that it recomputes.
inline constexpr int64_t kDsMaxBytes = int64_t(256) << 20;
/// Bytes of stats a (head, query row): the GPU kernels' row statistics.
inline constexpr int64_t kRowStatsBytes = 16;
} // namespace attention

/// A layer norm forward's arguments (tfc_layer_norm_forward and its CUDA
/// twin): y16, when not 0, receives y's bf16 bits (tf-bf16-gemm-operands);
/// y may then be 0 (not stored: the bits alone, which the backward reads
/// as its gate, layer_norm_backward's GateBits).
/// Pre, when not 0, receives the rows the norm is of, made from X first:
/// Residual[i] + tf.dropout(X)[i] (no sum where Residual is 0, no dropout
/// where Seed is 0; the dropout as in layer_norm_backward: the op `key`
/// under the i32 at Seed, element i being the op's element SampleOffset[0]
/// x SampleSize + i, Threshold = dropoutThreshold(rate), Keep = 1 - rate):
/// a post-norm layer's residual sum, made by the norm's kernel instead of a
/// loop nest before it. Pre may be X or Residual (element for element).
namespace layer_norm {
enum Arg : unsigned {
  Rows, D, Eps, X, Gamma, Beta, Y, Relu, Y16,
  Residual, Pre, Seed, SampleOffset, SampleSize, Key, Threshold, Keep, Count
};
} // namespace layer_norm

/// A layer norm backward's arguments (tfc_layer_norm_backward and its CUDA
/// twin). Dx may be 0 (not stored). Dropout, when not 0, receives
/// tf.dropout of dx (the dropout op `key` under the i32 at `Seed`, element
/// i of dx being element SampleOffset[0] x SampleSize + i of the op, as
/// DropoutInCode draws it; Threshold = dropoutThreshold(rate), Keep = the
/// f32 1 - rate, kept elements divided by it): the dropout's gradient below
/// a post-norm layer, written by the kernel that makes dx instead of a loop
/// nest after it; as f32, or, with DropoutBits 1, as their bf16 bits alone
/// (tf-bf16-gemm-operands). SampleOffset 0: no sample offset. Seed 0: no
/// mask, Dropout receives dx itself (its bf16 bits, with DropoutBits 1: the
/// copy a GEMM reads, made by the kernel; tf-bf16-gemm-operands).
/// Gate, when not 0, is a ReLU's output after the norm (the adjoint is G
/// where gate > 0, else 0: relu's gradient); f32, or with GateBits 1 the
/// bf16 bits the forward stored as its y16 (2-byte elements, compared as
/// their f32 widening; tf-bf16-gemm-operands).
namespace layer_norm_backward {
enum Arg : unsigned {
  Rows, D, BlockRows, Eps, X, Gamma, G, Gate, Dx, Dgamma, Dbeta, Scratch,
  Dropout, DropoutBits, Seed, SampleOffset, SampleSize, Key, Threshold, Keep, GateBits, Count
};
} // namespace layer_norm_backward

/// A train step's loss and its gradient in one call's arguments
/// (tfc_cross_entropy_fused and its CUDA twin): with DlogitsBits 1, dlogits
/// receives its bf16 bits alone (2-byte elements; tf-bf16-gemm-operands:
/// the copy the GEMMs read, made by the kernel).
namespace cross_entropy_fused {
enum Arg : unsigned {
  Outer, Classes, Inner, LabelCount, Logits, Labels, Dloss, Losses, Out, Dlogits, Corrects,
  Accuracy, DlogitsBits, Count
};
} // namespace cross_entropy_fused

// X(Enumerator, symbol, C function type)
#define TFC_ABI_RUNTIME_FUNCTIONS(X)                                           \
  X(Sgemm, tfc_sgemm, void(TFC_ABI_GEMM_ARGS))                                 \
  X(SgemmWindows, tfc_sgemm_windows, void(TFC_ABI_GEMM_ARGS, TFC_ABI_WINDOW_ARGS)) \
  X(SgemmTaps, tfc_sgemm_taps, void(TFC_ABI_GEMM_ARGS, TFC_ABI_WINDOW_ARGS))   \
  X(SgemmPair, tfc_sgemm_pair, void(TFC_ABI_GEMM_ARGS, TFC_ABI_GEMM_ARGS))     \
  /* tfc_sgemm, then activation, bias, residual, ldResidual, aux, ldAux     \
     (gemm::FusedArg) */                                                       \
  X(SgemmFused, tfc_sgemm_fused, void(TFC_ABI_GEMM_ARGS, TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I)) \
  /* tfc_sgemm, then operand, bias gradient (gemm::BiasGradArg) */            \
  X(SgemmBiasGrad, tfc_sgemm_bias_grad, void(TFC_ABI_GEMM_ARGS, TFC_ABI_I, TFC_ABI_I)) \
  X(SgemmEpilogue, tfc_sgemm_epilogue, void(TFC_ABI_GEMM_ARGS, Epilogue, void *)) \
  X(SgemmWindowsEpilogue, tfc_sgemm_windows_epilogue,                          \
    void(TFC_ABI_GEMM_ARGS, TFC_ABI_WINDOW_ARGS, Epilogue, void *))            \
  X(Conv1dWinograd, tfc_conv1d_winograd, void(TFC_ABI_GEMM_ARGS, TFC_ABI_WINDOW_ARGS)) \
  X(Conv1dWinogradEpilogue, tfc_conv1d_winograd_epilogue,                      \
    void(TFC_ABI_GEMM_ARGS, TFC_ABI_WINDOW_ARGS, Epilogue, void *))            \
  X(Conv1dWinogradTaps, tfc_conv1d_winograd_taps,                              \
    void(TFC_ABI_GEMM_ARGS, TFC_ABI_WINDOW_ARGS))                              \
  X(AttentionForward, tfc_attention_forward,                                   \
    void(TFC_ABI_ATTENTION_SIZES, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, \
         TFC_ABI_I, TFC_ABI_I, TFC_ABI_I))                                     \
  X(AttentionBackward, tfc_attention_backward,                                 \
    void(TFC_ABI_ATTENTION_SIZES, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, \
         TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, \
         TFC_ABI_I))                                                           \
  /* rows, d, blockRows, eps, x, gamma, the adjoint, its gate (0: none),   \
     dx, dgamma, dbeta, scratch, dx's dropout, gateBits (layer_norm_backward) */ \
  X(LayerNormBackward, tfc_layer_norm_backward,                                \
    void(TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, \
         TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I))                   \
  /* rows, d, eps, x, gamma, beta, y, relu, y16 (0, or y's bf16 bits beside \
     it: tf-bf16-gemm-operands), then the residual sum before it            \
     (layer_norm): tf.layer_norm over rows of d */                          \
  X(LayerNormForward, tfc_layer_norm_forward,                                  \
    void(TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I4, \
         TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float))                              \
  /* outer, classes, inner, count, logits, labels, losses (outer x inner    \
     scratch), out: tf.cross_entropy's mean */                                \
  X(CrossEntropy, tfc_cross_entropy,                                          \
    void(TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4))                  \
  /* outer, classes, inner, count, logits, labels, the loss's adjoint (one   \
     float), dlogits: tf.cross_entropy_grad */                               \
  X(CrossEntropyBackward, tfc_cross_entropy_backward,                         \
    void(TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4))                  \
  /* outer, classes, inner, count, logits, labels, the loss's adjoint,      \
     losses (scratch), out, dlogits: the two above of the same logits and   \
     labels, each row read once; then corrects (scratch) and accuracy, or   \
     0 and 0: mean(argmax(logits) == labels) from the same read; then       \
     dlogitsBits (cross_entropy_fused) */                                   \
  X(CrossEntropyFused, tfc_cross_entropy_fused,                               \
    void(TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I)) \
  /* mask, n, first element's index, seed, key, threshold */                   \
  X(DropoutMask, tfc_dropout_mask, void(TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I))     \
  /* body(context, begin, end) over [0, n) in chunks of at least grain */      \
  X(ParallelFor, tfc_parallel_for, void(void (*)(void *, int64_t, int64_t), void *, int64_t, int64_t))

//===----------------------------------------------------------------------===//
// The runtime functions generated CUDA host code calls (runtime/cuda/)
//===----------------------------------------------------------------------===//

/// tfc_cuda_launch's arguments in order: kernel is an index into the
/// manifest's "cuda" "kernels"; args is the address of argc 8-byte slots on
/// the host, one per kernel parameter in order: a device pointer, or an
/// integer whose low bytes are the parameter (a 32-bit index is the slot's
/// first 4 bytes). The launch goes to the entry's stream (or the graph being
/// captured); the slots may be reused as soon as it returns.
namespace launch {
enum Arg : unsigned {
  Kernel, GridX, GridY, GridZ, BlockX, BlockY, BlockZ, SharedBytes, Argc, Args,
  Count,
};
} // namespace launch

/// tfc_cuda_graph_node's arguments (tf-graph-dependencies): called before
/// each device op of an entry, in order (index 0, 1, ...), and once more
/// after the last (index = the op count, waiting for every op no later one
/// waits for). When the runtime captures the entry as a CUDA graph, the op
/// depends on the ops `deps` names (`count` int32 indices, earlier ops of
/// this entry; none: on what came before the entry) rather than on the one
/// before it. A runtime call's `lane` (else -1) names the workspace, scratch
/// and last-block counter it uses: two calls on one lane are never
/// independent, the pass orders them.
namespace graph {
enum Arg : unsigned { Index, Lane, Deps, DepCount, Count };
/// The lanes the runtime keeps (its cuBLASLt workspace split in as many).
inline constexpr int64_t kLanes = 2;
} // namespace graph

// X(Enumerator, symbol, C function type)
#define TFC_ABI_CUDA_RUNTIME_FUNCTIONS(X)                                      \
  X(CudaLaunch, tfc_cuda_launch,                                               \
    void(TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I))                        \
  /* graph::Arg: what the next device op waits for in a captured graph */     \
  X(CudaGraphNode, tfc_cuda_graph_node, void(TFC_ABI_I4))                      \
  /* the same arguments: a persistent kernel, its grid the most it takes */   \
  X(CudaLaunchCooperative, tfc_cuda_launch_cooperative,                        \
    void(TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I))                        \
  /* tfc_sgemm's arguments (gemm::Arg), on device memory: C[b] (+)= op(A[b]) \
     op(B[b]), row-major, fp32 throughout */                                   \
  X(CudaSgemm, tfc_cuda_sgemm, void(TFC_ABI_GEMM_ARGS))                       \
  /* tfc_sgemm_fused's arguments, on device memory: cuBLASLt's epilogues */ \
  X(CudaSgemmFused, tfc_cuda_sgemm_fused,                                     \
    void(TFC_ABI_GEMM_ARGS, TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I))                 \
  /* tfc_sgemm_bias_grad's arguments, on device memory: cuBLASLt's BGRADA/B */ \
  X(CudaSgemmBiasGrad, tfc_cuda_sgemm_bias_grad,                               \
    void(TFC_ABI_GEMM_ARGS, TFC_ABI_I, TFC_ABI_I))                             \
  /* The hand-written kernels (runtime/cuda/kernels/): the CPU kernels' C    \
     types and arguments exactly, every pointer one to device memory */       \
  X(CudaAttentionForward, tfc_cuda_attention_forward,                          \
    void(TFC_ABI_ATTENTION_SIZES, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, \
         TFC_ABI_I, TFC_ABI_I, TFC_ABI_I))                                     \
  X(CudaAttentionBackward, tfc_cuda_attention_backward,                        \
    void(TFC_ABI_ATTENTION_SIZES, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, \
         TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, \
         TFC_ABI_I))                                                           \
  X(CudaLayerNormBackward, tfc_cuda_layer_norm_backward,                       \
    void(TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I4, \
         TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I))                   \
  X(CudaLayerNormForward, tfc_cuda_layer_norm_forward,                         \
    void(TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4, TFC_ABI_I, TFC_ABI_I, TFC_ABI_I4, \
         TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float))                              \
  X(CudaCrossEntropy, tfc_cuda_cross_entropy,                                  \
    void(TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4))                  \
  X(CudaCrossEntropyBackward, tfc_cuda_cross_entropy_backward,                 \
    void(TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4))                  \
  X(CudaCrossEntropyFused, tfc_cuda_cross_entropy_fused,                       \
    void(TFC_ABI_I, TFC_ABI_I, TFC_ABI_I, float, TFC_ABI_I4, TFC_ABI_I4, TFC_ABI_I))

enum class RuntimeFunction {
#define TFC_ABI_ENUMERATOR(id, symbol, type) id,
  TFC_ABI_RUNTIME_FUNCTIONS(TFC_ABI_ENUMERATOR)
  TFC_ABI_CUDA_RUNTIME_FUNCTIONS(TFC_ABI_ENUMERATOR)
#undef TFC_ABI_ENUMERATOR
};

/// The C symbol of runtime function `f`.
constexpr std::string_view symbol(RuntimeFunction f) {
  switch (f) {
#define TFC_ABI_SYMBOL(id, sym, type)                                          \
  case RuntimeFunction::id:                                                    \
    return #sym;
    TFC_ABI_RUNTIME_FUNCTIONS(TFC_ABI_SYMBOL)
    TFC_ABI_CUDA_RUNTIME_FUNCTIONS(TFC_ABI_SYMBOL)
#undef TFC_ABI_SYMBOL
  }
  return "?";
}

/// A runtime function's C type.
template <RuntimeFunction F> struct FunctionType;
#define TFC_ABI_FUNCTION_TYPE(id, sym, fn)                                     \
  template <> struct FunctionType<RuntimeFunction::id> {                       \
    using type = fn;                                                           \
  };
TFC_ABI_RUNTIME_FUNCTIONS(TFC_ABI_FUNCTION_TYPE)
TFC_ABI_CUDA_RUNTIME_FUNCTIONS(TFC_ABI_FUNCTION_TYPE)
#undef TFC_ABI_FUNCTION_TYPE

/// The CPU kernel a CUDA runtime function is the GPU twin of (the same C
/// type, the same arguments; --target=cuda-emulated calls the CPU's), or
/// `f` itself.
constexpr RuntimeFunction cpuTwin(RuntimeFunction f) {
  switch (f) {
  case RuntimeFunction::CudaSgemm:
    return RuntimeFunction::Sgemm;
  case RuntimeFunction::CudaSgemmFused:
    return RuntimeFunction::SgemmFused;
  case RuntimeFunction::CudaSgemmBiasGrad:
    return RuntimeFunction::SgemmBiasGrad;
  case RuntimeFunction::CudaAttentionForward:
    return RuntimeFunction::AttentionForward;
  case RuntimeFunction::CudaAttentionBackward:
    return RuntimeFunction::AttentionBackward;
  case RuntimeFunction::CudaLayerNormBackward:
    return RuntimeFunction::LayerNormBackward;
  case RuntimeFunction::CudaLayerNormForward:
    return RuntimeFunction::LayerNormForward;
  case RuntimeFunction::CudaCrossEntropy:
    return RuntimeFunction::CrossEntropy;
  case RuntimeFunction::CudaCrossEntropyBackward:
    return RuntimeFunction::CrossEntropyBackward;
  case RuntimeFunction::CudaCrossEntropyFused:
    return RuntimeFunction::CrossEntropyFused;
  default:
    return f;
  }
}

template <typename F> struct Arity;
template <typename R, typename... Args> struct Arity<R(Args...)> {
  static constexpr unsigned value = sizeof...(Args);
};

/// How many arguments runtime function `f` takes.
constexpr unsigned arity(RuntimeFunction f) {
  switch (f) {
#define TFC_ABI_ARITY(id, sym, type)                                           \
  case RuntimeFunction::id:                                                    \
    return Arity<type>::value;
    TFC_ABI_RUNTIME_FUNCTIONS(TFC_ABI_ARITY)
    TFC_ABI_CUDA_RUNTIME_FUNCTIONS(TFC_ABI_ARITY)
#undef TFC_ABI_ARITY
  }
  return 0;
}

static_assert(arity(RuntimeFunction::Sgemm) == gemm::Count);
static_assert(arity(RuntimeFunction::SgemmFused) == gemm::FusedCount);
static_assert(arity(RuntimeFunction::CudaSgemmFused) == gemm::FusedCount);
static_assert(arity(RuntimeFunction::SgemmBiasGrad) == gemm::BiasGradCount);
static_assert(arity(RuntimeFunction::CudaGraphNode) == graph::Count);
static_assert(arity(RuntimeFunction::CudaSgemmBiasGrad) == gemm::BiasGradCount);
static_assert(arity(RuntimeFunction::AttentionForward) ==
              attention::kSizes + 1 +
                  attention::kPerTensor * (attention::kForwardInputs + attention::kForwardOutputs) +
                  attention::kForwardTrailing);
static_assert(arity(RuntimeFunction::AttentionBackward) ==
              attention::kSizes + 1 +
                  attention::kPerTensor * (attention::kBackwardInputs + attention::kBackwardOutputs) +
                  attention::kBackwardTrailing);
static_assert(arity(RuntimeFunction::SgemmWindows) == gemm::Count + gemm::kWindowArgs);
static_assert(arity(RuntimeFunction::CudaLaunch) == launch::Count);
static_assert(arity(RuntimeFunction::CudaLaunchCooperative) == launch::Count);
static_assert(arity(RuntimeFunction::CudaSgemm) == gemm::Count);
static_assert(arity(RuntimeFunction::LayerNormBackward) == layer_norm_backward::Count);
#define TFC_ABI_SAME_AS_TWIN(id)                                               \
  static_assert(std::is_same_v<FunctionType<RuntimeFunction::id>::type,         \
                               FunctionType<cpuTwin(RuntimeFunction::id)>::type>, \
                #id " differs from its CPU twin's C type");
TFC_ABI_SAME_AS_TWIN(CudaSgemm)
TFC_ABI_SAME_AS_TWIN(CudaAttentionForward)
TFC_ABI_SAME_AS_TWIN(CudaAttentionBackward)
TFC_ABI_SAME_AS_TWIN(CudaLayerNormBackward)
TFC_ABI_SAME_AS_TWIN(CudaLayerNormForward)
TFC_ABI_SAME_AS_TWIN(CudaCrossEntropyBackward)
TFC_ABI_SAME_AS_TWIN(CudaCrossEntropyFused)
#undef TFC_ABI_SAME_AS_TWIN

} // namespace tfc::abi

#endif // TFC_RUNTIME_ABI_H
