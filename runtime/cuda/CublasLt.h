//===- CublasLt.h - tfc_cuda_sgemm on cuBLASLt, loaded at run time --------===//
//
// Generated CUDA host code calls tfc_cuda_sgemm for every product (the same
// 16 arguments as the CPU's tfc_sgemm, runtime/cpu/Gemm.h, on device
// memory). Here it becomes one cublasLtMatmul: row-major C = op(A) op(B) is
// column-major C^T = op(B)^T op(A)^T, so B's memory is cuBLASLt's A and A's
// is its B, with the transposes kept; strided batches map to cuBLASLt's
// batch count and offsets; accumulate is beta = 1; CUBLAS_COMPUTE_32F (full
// FP32), or CUBLAS_COMPUTE_32F_FAST_TF32 for a model compiled with
// --precision tf32 (the manifest's "cuda" "precision"): fp32 in and out and
// fp32 accumulation, the products on TF32 tensor cores; or
// CUBLAS_COMPUTE_32F_FAST_16BF for --precision bf16, the products on bf16
// tensor cores. A batch reduction (strideC 0, batch > 1) is one matmul
// per item on the stream, each after the first with beta = 1.
// tfc_cuda_sgemm_fused adds cuBLASLt's epilogues: a bias along C's rows
// (cuBLASLt's D rows, column-major), ReLU, and another matrix as its C; a
// ReLU may write its mask (RELU_AUX) for the backward's DRELU to read.
// tfc_cuda_sgemm_bias_grad adds the column sums of one operand as stored
// (K x M for A^T, K x N for B), a weight gradient's bias gradient: A is
// cuBLASLt's B, transposed, so BGRADB; B is its A, not transposed, BGRADA
// (the only orientations cuBLASLt sums).
//
// libcublasLt is dlopen()ed like the driver (Driver.h), so a binary starts
// without it: $TFC_CUBLASLT when set (tests point it at a fake), else
// libcublasLt.so.13 by the loader's search path, then in /usr/local/cuda.
// Only the entry points below are used, resolved by dlsym; the toolkit's
// cublasLt.h gives their types. A plan (descriptors, layouts and the
// heuristic's algorithm) is made once per distinct shape and precision, on
// the first call with it, and reused, so a captured graph replays without host work.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_CUBLASLT_H
#define TFC_RUNTIME_CUDA_CUBLASLT_H

#include <cublasLt.h>
#include <cuda.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tfc::rt::cuda {

/// The device memory cuBLASLt may use per call (NVIDIA recommends 32 MiB on
/// Hopper); allocated once when the library is loaded.
constexpr size_t kCublasLtWorkspaceBytes = size_t(32) << 20;

/// X(field, symbol): every cuBLASLt entry point tfc uses.
#define TFC_CUBLASLT_FUNCTIONS(X)                                                                  \
  X(getVersion, cublasLtGetVersion)                                                                \
  X(getStatusName, cublasLtGetStatusName)                                                          \
  X(getStatusString, cublasLtGetStatusString)                                                      \
  X(create, cublasLtCreate)                                                                        \
  X(destroy, cublasLtDestroy)                                                                      \
  X(matmulDescCreate, cublasLtMatmulDescCreate)                                                    \
  X(matmulDescDestroy, cublasLtMatmulDescDestroy)                                                  \
  X(matmulDescSetAttribute, cublasLtMatmulDescSetAttribute)                                        \
  X(matrixLayoutCreate, cublasLtMatrixLayoutCreate)                                                \
  X(matrixLayoutDestroy, cublasLtMatrixLayoutDestroy)                                              \
  X(matrixLayoutSetAttribute, cublasLtMatrixLayoutSetAttribute)                                    \
  X(preferenceCreate, cublasLtMatmulPreferenceCreate)                                              \
  X(preferenceDestroy, cublasLtMatmulPreferenceDestroy)                                            \
  X(preferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute)                                  \
  X(algoGetHeuristic, cublasLtMatmulAlgoGetHeuristic)                                              \
  X(algoConfigGetAttribute, cublasLtMatmulAlgoConfigGetAttribute)                                  \
  X(matmul, cublasLtMatmul)

struct CublasLtApi {
#define TFC_CUBLASLT_FIELD(field, symbol) decltype(&::symbol) field = nullptr;
  TFC_CUBLASLT_FUNCTIONS(TFC_CUBLASLT_FIELD)
#undef TFC_CUBLASLT_FIELD
};

/// The libraries load() tries, in order, when $TFC_CUBLASLT is unset.
const std::vector<std::string> &defaultCublasLtCandidates();

/// tfc_sgemm's arguments (abi::gemm::Arg order) as generated code passes them.
using GemmArgs = std::array<intptr_t, 16>;

/// What cuBLASLt adds to a product (tfc_cuda_sgemm_fused): C = relu?(op(A)
/// op(B) + bias[n] + R): its RELU/BIAS/RELU_BIAS epilogue, R as its C with
/// beta = 1 (batch 1, no accumulation).
struct GemmEpilogue {
  bool relu = false;
  CUdeviceptr bias = 0, residual = 0; // 0: none
  int64_t ldResidual = 0;
  /// tfc_cuda_sgemm_bias_grad: the operand's column sums go here (M floats
  /// for A, N for B), 0 for none; it excludes the others.
  CUdeviceptr biasGrad = 0;
  bool biasGradOfB = false;
  /// ReLU's mask (abi::gemm::FusedArg's layout, cuBLASLt's bit-mask): a
  /// relu writes it (RELU_AUX, RELU_AUX_BIAS), reluGrad multiplies the
  /// product by it (DRELU; nothing else with it).
  bool reluGrad = false;
  CUdeviceptr reluMask = 0;
  int64_t ldReluMask = 0;
  bool any() const { return relu || reluGrad || bias || residual || biasGrad; }
  /// The runtime function computing this: "tfc_cuda_sgemm_fused" etc.
  const char *function() const;
  /// ", relu, bias": what the epilogue adds, for messages.
  std::string describe() const;
};

/// A product's compute type: full FP32 (CUBLAS_COMPUTE_32F), TF32 tensor
/// cores on fp32 data (CUBLAS_COMPUTE_32F_FAST_TF32; tfc compile --precision
/// tf32), or bf16 tensor cores on fp32 data rounded to bf16 as they are read
/// (CUBLAS_COMPUTE_32F_FAST_16BF; --precision bf16). Accumulation and the
/// result are fp32 in all three.
enum class GemmPrecision { Fp32, Tf32, Bf16 };

/// How A, B and C are stored: fp32 (F32); A and B bf16, C fp32
/// (Bf16Operands: --precision bf16's large GEMMs, tf-bf16-gemm-operands,
/// epilogues included: the bias, residual and bias gradient fp32 as C); or
/// all three bf16 (Bf16: tf-bf16-gemm-operands' gemm-results, a product
/// that only loop nests read, and tfc-kernel-check --bench-gemm; no
/// epilogue). The bf16 forms are computed in CUBLAS_COMPUTE_32F (bf16
/// products, fp32 accumulation), whatever the precision.
enum class GemmStorage { F32, Bf16Operands, Bf16 };

/// The storage a call's flags say (abi::gemm::kBf16 on A and B:
/// Bf16Operands, tf-bf16-gemm-operands' copies, and on Accumulate too:
/// Bf16; on neither: F32), the transpose flags left as transposes only and
/// Accumulate as kAccumulate alone; nothing when one operand is bf16 and
/// the other fp32, or C bf16 and the operands fp32 (cuBLASLt multiplies
/// bf16 by bf16).
std::optional<GemmStorage> takeStorage(GemmArgs &args);

/// "fp32", "tf32" or "bf16", as the manifest names it; nothing for another.
std::optional<GemmPrecision> parseGemmPrecision(const std::string &name);
/// The cuBLASLt compute type of `precision`.
cublasComputeType_t computeType(GemmPrecision precision);

/// "batch 4, 64x32x16, A^T lda 64, B ldb 32, C ldc 32, accumulate": a GEMM in messages.
std::string describeGemm(const GemmArgs &args);
/// A GEMM as `bench --profile` names it: "cuBLASLt MxNxK" (or `by`'s name:
/// "small GEMM") with the batch, the transposes and the epilogue (calls of
/// one shape group together).
std::string profileName(const GemmArgs &args, const GemmEpilogue &epilogue,
                        const char *by = "cuBLASLt");

/// Why tfc_cuda_sgemm's product and epilogue cannot be computed as asked
/// ("" when they can): an epilogue on a batch, two that exclude each other,
/// a bias gradient cuBLASLt cannot sum, a leading dimension too short, K = 0,
/// a null matrix... The same for cuBLASLt and gemm_small.cu.
std::string refuseGemm(const GemmArgs &args, const GemmEpilogue &epilogue);

/// Times `run` (a GEMM enqueued on the stream; false when it failed):
/// milliseconds a call, or a negative number where it cannot time now.
using GemmTimer = std::function<float(const std::function<bool()> &run)>;

/// cuBLASLt's shared library opened (`handle` null where none would open:
/// `tried` names each path tried, `source` where the list came from).
struct CublasLtLibrary {
  void *handle = nullptr;
  std::string path, tried, source;
};

/// Opens TFC_CUBLASLT's library, else the first default candidate that
/// opens. Thread-safe: CudaDevice::open runs it on a thread of its own,
/// since CUDA 13's library is 540 MB and its dlopen takes tens of
/// milliseconds (66 ms warm on an EPYC), which it overlaps with creating
/// the CUDA context and loading the kernels.
CublasLtLibrary openCublasLtLibrary();

class CublasLt {
public:
  /// Loads the library, resolves every entry point and creates a handle
  /// (the device's context must be current). Null with `error` set: "no
  /// cuBLASLt: tried libcublasLt.so.13, ...; GEMMs on the GPU need ...".
  static std::unique_ptr<CublasLt> load(std::string &error);
  /// load() on a library openCublasLtLibrary opened (this takes it over:
  /// closed here on failure, else by the destructor).
  static std::unique_ptr<CublasLt> loadFrom(CublasLtLibrary library, std::string &error);
  ~CublasLt();
  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;

  const std::string &path() const { return path_; }
  size_t version() const { return version_; }
  /// Plans made so far (one per distinct shape, alignment and precision).
  size_t plans() const { return plans_.size(); }

  /// Enqueues C (+)= op(A) op(B) on `stream`, computed in `precision`, with
  /// `workspace` (device memory of `workspaceBytes`), the matrices stored as
  /// `storage` says (leading dimensions and strides in elements). False with
  /// `error` naming the GEMM and cuBLASLt's status.
  /// With `timer` (and tune() asked for more than one candidate), a plan's
  /// first call times each candidate on its own operands and keeps the
  /// fastest (see tune()); a call that reads C (accumulate, a batch summed,
  /// a residual that is C) is not timed and its plan keeps the first.
  bool sgemm(const GemmArgs &args, const GemmEpilogue &epilogue, GemmPrecision precision,
             CUstream stream, CUdeviceptr workspace, size_t workspaceBytes, std::string &error,
             GemmStorage storage = GemmStorage::F32, const GemmTimer *timer = nullptr);

  /// Autotuning (TFC_GEMM_AUTOTUNE): plans made from now on keep the
  /// heuristic's first `candidates` algorithms, and each plan's first call
  /// given a timer takes the fastest of them if it beats the heuristic's
  /// first by kTuneMargin (else the first: timing noise should not flip
  /// it). 1 (the default) takes the first, untimed. Drops the plans made
  /// so far.
  void tune(int candidates);
  int tuneCandidates() const { return tuneCandidates_; }
  /// Tuning's choices kept in `path` (text, a line a plan: `prefix`, its
  /// key, " = ", the chosen algorithm's configuration, as
  /// --bench-gemm-algorithms prints it; appended as they are made): a plan
  /// found there takes the candidate of that configuration untimed, so that
  /// every run with the file chooses as the first did. `prefix` names what the choice depends
  /// on beyond the plan (the GPU, the driver, cuBLASLt). "" keeps none.
  /// Drops the plans made so far.
  void useTuneCache(const std::string &path, const std::string &prefix);
  static constexpr float kTuneMargin = 0.9f;
  static constexpr int kMaxTuneCandidates = 64;

  /// Which of the heuristic's algorithms the plans made from now on take:
  /// its first (0, what the runtime always uses) or its choice-th, for
  /// tfc-kernel-check --bench-gemm-algorithms, which times each. Drops the
  /// plans made so far. A GEMM for which the heuristic offers fewer fails
  /// ("cuBLASLt offers N algorithms").
  void useHeuristicChoice(int choice);
  /// The algorithm of the last sgemm's plan: "algo 66, tile 20, split-K 1,
  /// stages 13, cluster 2, 0.48 waves" (cuBLASLt's ids: cublasLt.h's
  /// enums).
  const std::string &lastAlgorithm() const { return lastAlgorithm_; }

private:
  CublasLt() = default;
  struct Plan;
  /// The plan of a GEMM of this shape, alignment, precision and storage,
  /// made on first use.
  Plan *plan(const GemmArgs &args, const GemmEpilogue &epilogue, GemmPrecision precision,
             GemmStorage storage, bool reduction, size_t workspaceBytes, std::string &error);
  std::string status(cublasStatus_t status) const;

  void *library_ = nullptr;
  std::string path_;
  size_t version_ = 0;
  CublasLtApi api_;
  cublasLtHandle_t handle_ = nullptr;
  std::map<std::vector<int64_t>, std::unique_ptr<Plan>> plans_;
  int heuristicChoice_ = 0;
  int tuneCandidates_ = 1;
  std::string tuneCachePath_, tuneCachePrefix_;
  std::map<std::string, std::string> tuneCache_; // key: the chosen configuration
  void tunePlan(Plan &plan, const GemmTimer &timer, const std::function<cublasStatus_t()> &enqueue);
  std::string lastAlgorithm_;
};

} // namespace tfc::rt::cuda

#endif // TFC_RUNTIME_CUDA_CUBLASLT_H
