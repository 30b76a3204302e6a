//===- CublasLt.cpp - tfc_cuda_sgemm on cuBLASLt, loaded at run time ------===//

#include "runtime/cuda/CublasLt.h"
#include "runtime/Abi.h"

#include "runtime/cuda/Driver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <utility>

namespace tfc::rt::cuda {

using namespace abi::gemm;

const std::vector<std::string> &defaultCublasLtCandidates() {
  static const std::vector<std::string> candidates = {
      "libcublasLt.so.13",
      "/usr/local/cuda/lib64/libcublasLt.so.13",
  };
  return candidates;
}

std::optional<GemmPrecision> parseGemmPrecision(const std::string &name) {
  if (name == abi::key::kPrecisionFp32)
    return GemmPrecision::Fp32;
  if (name == abi::key::kPrecisionTf32)
    return GemmPrecision::Tf32;
  if (name == abi::key::kPrecisionBf16)
    return GemmPrecision::Bf16;
  return std::nullopt;
}

cublasComputeType_t computeType(GemmPrecision precision) {
  switch (precision) {
  case GemmPrecision::Tf32:
    return CUBLAS_COMPUTE_32F_FAST_TF32;
  case GemmPrecision::Bf16:
    return CUBLAS_COMPUTE_32F_FAST_16BF;
  case GemmPrecision::Fp32:
    break;
  }
  return CUBLAS_COMPUTE_32F;
}

std::string describeGemm(const GemmArgs &a) {
  auto n = [](intptr_t v) { return std::to_string(v); };
  return "batch " + n(a[Batch]) + ", " + n(a[M]) + "x" + n(a[N]) + "x" + n(a[K]) + ", A" +
         (a[TransA] ? "^T" : "") + " lda " + n(a[Lda]) + ", B" + (a[TransB] ? "^T" : "") +
         " ldb " + n(a[Ldb]) + ", C ldc " + n(a[Ldc]) + (a[Accumulate] ? ", accumulate" : "");
}

std::string profileName(const GemmArgs &a, const GemmEpilogue &epilogue, const char *by) {
  auto n = [](intptr_t v) { return std::to_string(v); };
  return std::string(by) + " " + (a[Batch] > 1 ? n(a[Batch]) + " x " : std::string()) + n(a[M]) + "x" +
         n(a[N]) + "x" + n(a[K]) + (a[TransA] ? " A^T" : "") + (a[TransB] ? " B^T" : "") +
         (a[Accumulate] ? ", accumulate" : "") + epilogue.describe();
}

std::optional<GemmStorage> takeStorage(GemmArgs &g) {
  const bool bf16A = g[TransA] & abi::gemm::kBf16, bf16B = g[TransB] & abi::gemm::kBf16,
             bf16C = g[Accumulate] & abi::gemm::kBf16;
  g[TransA] &= abi::gemm::kTransposed;
  g[TransB] &= abi::gemm::kTransposed;
  g[Accumulate] &= abi::gemm::kAccumulate;
  if (bf16A != bf16B || (bf16C && !bf16A))
    return std::nullopt;
  return bf16C ? GemmStorage::Bf16 : bf16A ? GemmStorage::Bf16Operands : GemmStorage::F32;
}

const char *GemmEpilogue::function() const {
  return biasGrad ? "tfc_cuda_sgemm_bias_grad" : any() ? "tfc_cuda_sgemm_fused" : "tfc_cuda_sgemm";
}

std::string GemmEpilogue::describe() const {
  return std::string(relu ? ", relu" : "") + (reluGrad ? ", relu's gradient" : "") +
         (reluMask ? ", relu mask" : "") + (bias ? ", bias" : "") +
         (residual ? ", residual" : "") +
         (biasGrad ? (biasGradOfB ? ", the bias gradient of B" : ", the bias gradient of A")
                   : "");
}

struct CublasLt::Plan {
  const CublasLtApi *api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr; // cuBLASLt's A, B, D
  cublasLtMatrixLayout_t residual = nullptr; // cuBLASLt's C when not D (a fused residual)
  cublasLtMatmulAlgo_t algo{};
  std::string algorithm; // CublasLt::lastAlgorithm()
  /// With tuning: the heuristic's first algorithms and their descriptions,
  /// timed at the plan's first call that may time them.
  std::vector<cublasLtMatmulAlgo_t> candidates;
  std::vector<std::string> candidateNames;
  std::vector<std::string> candidateConfigs; // algorithmConfig: the tuning cache's value
  bool tuned = false;
  std::string cacheKey; // the tuning cache's: its prefix, then the plan's key
  ~Plan() {
    if (residual)
      api->matrixLayoutDestroy(residual);
    if (c)
      api->matrixLayoutDestroy(c);
    if (b)
      api->matrixLayoutDestroy(b);
    if (a)
      api->matrixLayoutDestroy(a);
    if (desc)
      api->matmulDescDestroy(desc);
  }
};

CublasLtLibrary openCublasLtLibrary() {
  CublasLtLibrary library;
  std::vector<std::string> candidates = defaultCublasLtCandidates();
  if (const char *path = std::getenv("TFC_CUBLASLT"); path && *path) {
    candidates = {path};
    library.source = " (from TFC_CUBLASLT)";
  }
  library.handle = openFirstLibrary(candidates, library.path, library.tried);
  return library;
}

std::unique_ptr<CublasLt> CublasLt::load(std::string &error) {
  return loadFrom(openCublasLtLibrary(), error);
}

std::unique_ptr<CublasLt> CublasLt::loadFrom(CublasLtLibrary opened, std::string &error) {
  void *library = opened.handle;
  const std::string &path = opened.path;
  if (!library) {
    error = "no cuBLASLt: tried " + opened.tried + opened.source +
            "; GEMMs on the GPU need CUDA 13's libcublasLt.so.13 (set TFC_CUBLASLT to its path)";
    return nullptr;
  }
  std::unique_ptr<CublasLt> lt(new CublasLt());
  lt->library_ = library;
  lt->path_ = path;
  std::string missing;
#define TFC_CUBLASLT_RESOLVE(field, symbol)                                                        \
  lt->api_.field = reinterpret_cast<decltype(&::symbol)>(dlsym(library, #symbol));                 \
  if (!lt->api_.field)                                                                             \
    missing += (missing.empty() ? "" : ", ") + std::string(#symbol);
  TFC_CUBLASLT_FUNCTIONS(TFC_CUBLASLT_RESOLVE)
#undef TFC_CUBLASLT_RESOLVE
  if (!missing.empty()) {
    error = "the cuBLASLt library " + path + " has no " + missing + ": it is not CUDA 13's";
    return nullptr;
  }
  lt->version_ = lt->api_.getVersion();
  cublasLtHandle_t handle = nullptr;
  if (cublasStatus_t s = lt->api_.create(&handle); s != CUBLAS_STATUS_SUCCESS) {
    error = "cublasLtCreate (" + path + "): " + lt->status(s);
    return nullptr;
  }
  lt->handle_ = handle;
  return lt;
}

CublasLt::~CublasLt() {
  plans_.clear();
  if (handle_)
    api_.destroy(handle_);
  if (library_)
    dlclose(library_);
}

std::string CublasLt::status(cublasStatus_t s) const {
  const char *name = api_.getStatusName ? api_.getStatusName(s) : nullptr;
  const char *text = api_.getStatusString ? api_.getStatusString(s) : nullptr;
  std::string out = name ? name : "cublasStatus_t " + std::to_string(int(s));
  if (text && *text)
    out += std::string(": ") + text;
  return out;
}

namespace {
/// The largest power of two (at most 16) dividing `address`: what cuBLASLt's
/// kernels may assume of a pointer.
uint32_t alignment(intptr_t address) {
  uint32_t align = 16;
  while (align > 4 && address % align)
    align /= 2;
  return align;
}
} // namespace

/// "algo 66, tile 20, split-K 1, stages 13, cluster 2, 0.48 waves": the
/// configuration of a heuristic's result, as cuBLASLt numbers it (an
/// attribute it does not report is left out).
static std::string algorithmConfig(const CublasLtApi &api, const cublasLtMatmulAlgo_t &algo) {
  std::string out;
  auto field = [&](const char *name, cublasLtMatmulAlgoConfigAttributes_t attr, size_t bytes) {
    uint64_t value = 0; // the attributes are 16- to 32-bit integers, little-endian
    size_t written = 0;
    if (api.algoConfigGetAttribute(&algo, attr, &value, bytes, &written) == CUBLAS_STATUS_SUCCESS &&
        written == bytes)
      out += (out.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(value);
  };
  field("algo", CUBLASLT_ALGO_CONFIG_ID, sizeof(int32_t));
  field("tile", CUBLASLT_ALGO_CONFIG_TILE_ID, sizeof(uint32_t));
  field("split-K", CUBLASLT_ALGO_CONFIG_SPLITK_NUM, sizeof(int32_t));
  field("stages", CUBLASLT_ALGO_CONFIG_STAGES_ID, sizeof(uint32_t));
  field("cluster", CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, sizeof(uint16_t));
  field("inner shape", CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, sizeof(uint16_t));
  field("reduction", CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, sizeof(uint32_t));
  field("swizzle", CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, sizeof(uint32_t));
  field("option", CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, sizeof(uint32_t));
  return out;
}

/// The same and the heuristic's waves: "algo 66, tile 20, split-K 1, ...,
/// 0.48 waves".
static std::string describeAlgorithm(const CublasLtApi &api,
                                     const cublasLtMatmulHeuristicResult_t &result) {
  const std::string config = algorithmConfig(api, result.algo);
  char waves[32];
  std::snprintf(waves, sizeof waves, "%.2f waves", double(result.wavesCount));
  return config + (config.empty() ? "" : ", ") + waves;
}

/// The bytes of an element of A and B, and of C.
static intptr_t operandBytes(GemmStorage storage) { return storage == GemmStorage::F32 ? 4 : 2; }
static intptr_t resultBytes(GemmStorage storage) { return storage == GemmStorage::Bf16 ? 2 : 4; }

CublasLt::Plan *CublasLt::plan(const GemmArgs &g, const GemmEpilogue &epilogue,
                               GemmPrecision precision, GemmStorage storage, bool reduction,
                               size_t workspaceBytes, std::string &error) {
  const int64_t batch = reduction ? 1 : g[Batch];
  // Every item's pointer: the first's alignment and its stride's (in bytes).
  auto itemsAlignment = [&](Arg pointer, Arg stride, intptr_t bytes) {
    return alignment(g[pointer] | (g[Batch] > 1 ? g[stride] * bytes : 0));
  };
  const uint32_t alignA = itemsAlignment(A, StrideA, operandBytes(storage)),
                 alignB = itemsAlignment(B, StrideB, operandBytes(storage)),
                 alignC = itemsAlignment(C, StrideC, resultBytes(storage));
  // clang-format off
  std::vector<int64_t> key = {batch,     g[M],      g[N],       g[K],   g[Lda],
                              g[TransA], g[Ldb],    g[TransB],  g[Ldc], batch > 1 ? g[StrideA] : 0,
                              batch > 1 ? g[StrideB] : 0, batch > 1 ? g[StrideC] : 0,
                              alignA,    alignB,    alignC,
                              epilogue.relu, epilogue.bias != 0, epilogue.residual != 0,
                              epilogue.biasGrad ? 1 + epilogue.biasGradOfB : 0,
                              epilogue.reluGrad, epilogue.reluMask ? epilogue.ldReluMask : 0,
                              epilogue.residual ? epilogue.ldResidual : 0,
                              epilogue.residual ? alignment(intptr_t(epilogue.residual)) : 0,
                              int64_t(precision), int64_t(storage), int64_t(workspaceBytes)};
  // clang-format on
  auto found = plans_.find(key);
  if (found != plans_.end())
    return found->second.get();

  auto plan = std::make_unique<Plan>();
  plan->api = &api_;
  auto ok = [&](cublasStatus_t s, const char *call) {
    if (s == CUBLAS_STATUS_SUCCESS)
      return true;
    error = std::string(call) + ": " + status(s);
    return false;
  };
  // Column-major, cuBLASLt's A is our B (N x K as op(B)^T), its B our A.
  const cublasOperation_t opA = g[TransB] ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opB = g[TransA] ? CUBLAS_OP_T : CUBLAS_OP_N;
  const uint64_t aRows = uint64_t(g[TransB] ? g[K] : g[N]), aCols = uint64_t(g[TransB] ? g[N] : g[K]);
  const uint64_t bRows = uint64_t(g[TransA] ? g[M] : g[K]), bCols = uint64_t(g[TransA] ? g[K] : g[M]);
  // Every compute type scales by fp32 alpha and beta; bf16 operands are
  // multiplied in CUBLAS_COMPUTE_32F (bf16 products, fp32 sums).
  const cudaDataType_t operandType = storage == GemmStorage::F32 ? CUDA_R_32F : CUDA_R_16BF,
                       resultType = storage == GemmStorage::Bf16 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t compute =
      storage == GemmStorage::F32 ? computeType(precision) : CUBLAS_COMPUTE_32F;
  if (!ok(api_.matmulDescCreate(&plan->desc, compute, CUDA_R_32F), "cublasLtMatmulDescCreate") ||
      !ok(api_.matmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA),
          "cublasLtMatmulDescSetAttribute(TRANSA)") ||
      !ok(api_.matmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB),
          "cublasLtMatmulDescSetAttribute(TRANSB)") ||
      !ok(api_.matrixLayoutCreate(&plan->a, operandType, aRows, aCols, g[Ldb]),
          "cublasLtMatrixLayoutCreate(B)") ||
      !ok(api_.matrixLayoutCreate(&plan->b, operandType, bRows, bCols, g[Lda]),
          "cublasLtMatrixLayoutCreate(A)") ||
      !ok(api_.matrixLayoutCreate(&plan->c, resultType, uint64_t(g[N]), uint64_t(g[M]), g[Ldc]),
          "cublasLtMatrixLayoutCreate(C)"))
    return nullptr;
  if (epilogue.any()) {
    // Our A is cuBLASLt's B and our B its A (column-major, above).
    const bool mask = epilogue.reluMask != 0;
    const cublasLtEpilogue_t kind =
        epilogue.biasGrad
            ? (epilogue.biasGradOfB ? CUBLASLT_EPILOGUE_BGRADA : CUBLASLT_EPILOGUE_BGRADB)
        : epilogue.reluGrad ? CUBLASLT_EPILOGUE_DRELU
        : epilogue.bias
            ? (epilogue.relu ? (mask ? CUBLASLT_EPILOGUE_RELU_AUX_BIAS : CUBLASLT_EPILOGUE_RELU_BIAS)
                             : CUBLASLT_EPILOGUE_BIAS)
            : (epilogue.relu ? (mask ? CUBLASLT_EPILOGUE_RELU_AUX : CUBLASLT_EPILOGUE_RELU)
                             : CUBLASLT_EPILOGUE_DEFAULT);
    if (!ok(api_.matmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &kind,
                                        sizeof kind),
            "cublasLtMatmulDescSetAttribute(EPILOGUE)"))
      return nullptr;
    // The mask's row pitch in bits is the plan's; its address the call's.
    const int64_t ldMask = epilogue.ldReluMask;
    if (mask && !ok(api_.matmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                                                &ldMask, sizeof ldMask),
                    "cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_LD)"))
      return nullptr;
    if (epilogue.residual &&
        !ok(api_.matrixLayoutCreate(&plan->residual, CUDA_R_32F, uint64_t(g[N]), uint64_t(g[M]),
                                    epilogue.ldResidual),
            "cublasLtMatrixLayoutCreate(the residual)"))
      return nullptr;
  }
  if (batch > 1) {
    const int32_t count = int32_t(batch);
    const int64_t strides[3] = {g[StrideB], g[StrideA], g[StrideC]};
    cublasLtMatrixLayout_t layouts[3] = {plan->a, plan->b, plan->c};
    for (int i = 0; i < 3; ++i)
      if (!ok(api_.matrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                            sizeof count),
              "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)") ||
          !ok(api_.matrixLayoutSetAttribute(layouts[i],
                                            CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &strides[i], sizeof strides[i]),
              "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)"))
        return nullptr;
  }

  cublasLtMatmulPreference_t preference = nullptr;
  if (!ok(api_.preferenceCreate(&preference), "cublasLtMatmulPreferenceCreate"))
    return nullptr;
  const uint64_t workspace = workspaceBytes;
  // cuBLASLt's C is D unless a residual is.
  const uint32_t alignResidual =
      epilogue.residual ? alignment(intptr_t(epilogue.residual)) : alignC;
  const uint32_t aligns[4] = {alignB, alignA, alignResidual, alignC};
  const cublasLtMatmulPreferenceAttributes_t alignAttrs[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  bool prepared = ok(api_.preferenceSetAttribute(preference,
                                                 CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &workspace, sizeof workspace),
                     "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  for (int i = 0; prepared && i < 4; ++i)
    prepared = ok(api_.preferenceSetAttribute(preference, alignAttrs[i], &aligns[i],
                                              sizeof aligns[i]),
                  "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
  std::vector<cublasLtMatmulHeuristicResult_t> results(
      size_t(std::max(heuristicChoice_ + 1, tuneCandidates_)));
  int returned = 0;
  if (prepared)
    prepared = ok(api_.algoGetHeuristic(handle_, plan->desc, plan->a, plan->b,
                                        plan->residual ? plan->residual : plan->c, plan->c,
                                        preference, int(results.size()), results.data(), &returned),
                  "cublasLtMatmulAlgoGetHeuristic");
  api_.preferenceDestroy(preference);
  if (!prepared)
    return nullptr;
  if (returned < 1 || results[0].state != CUBLAS_STATUS_SUCCESS) {
    error = "cublasLtMatmulAlgoGetHeuristic: no algorithm for this GEMM";
    return nullptr;
  }
  if (returned <= heuristicChoice_ ||
      results[size_t(heuristicChoice_)].state != CUBLAS_STATUS_SUCCESS) {
    error = "cuBLASLt offers " + std::to_string(returned) + " algorithms for this GEMM";
    return nullptr;
  }
  const cublasLtMatmulHeuristicResult_t &result = results[size_t(heuristicChoice_)];
  plan->algo = result.algo;
  plan->algorithm = describeAlgorithm(api_, result);
  if (tuneCandidates_ > 1 && heuristicChoice_ == 0)
    for (int i = 0; i < std::min(returned, tuneCandidates_); ++i)
      if (results[size_t(i)].state == CUBLAS_STATUS_SUCCESS) {
        plan->candidates.push_back(results[size_t(i)].algo);
        plan->candidateNames.push_back(describeAlgorithm(api_, results[size_t(i)]));
        plan->candidateConfigs.push_back(algorithmConfig(api_, results[size_t(i)].algo));
      }
  plan->tuned = plan->candidates.size() < 2;
  if (!plan->tuned && !tuneCachePath_.empty()) {
    plan->cacheKey = tuneCachePrefix_;
    for (int64_t k : key)
      plan->cacheKey += " " + std::to_string(k);
    // Chosen by an earlier run: the same algorithm (by its configuration,
    // not its place in the heuristic's list), untimed.
    auto cached = tuneCache_.find(plan->cacheKey);
    for (size_t i = 0; cached != tuneCache_.end() && i < plan->candidates.size(); ++i)
      if (!plan->candidateConfigs[i].empty() && plan->candidateConfigs[i] == cached->second) {
        plan->algo = plan->candidates[i];
        plan->algorithm =
            plan->candidateNames[i] + "; #" + std::to_string(i) + " from the tuning cache";
        plan->tuned = true;
        break;
      }
  }
  Plan *raw = plan.get();
  plans_.emplace(std::move(key), std::move(plan));
  return raw;
}

void CublasLt::tune(int candidates) {
  tuneCandidates_ = std::clamp(candidates, 1, kMaxTuneCandidates);
  plans_.clear();
}

void CublasLt::useHeuristicChoice(int choice) {
  heuristicChoice_ = choice < 0 ? 0 : choice;
  plans_.clear();
}

std::string refuseGemm(const GemmArgs &g, const GemmEpilogue &epilogue) {
  if (epilogue.any() && (g[Batch] != 1 || g[Accumulate]))
    return "an epilogue on a batch or an accumulating product";
  if (epilogue.biasGrad && (epilogue.relu || epilogue.reluGrad || epilogue.bias ||
                            epilogue.residual))
    return "a bias gradient with another epilogue";
  if (epilogue.reluGrad && (epilogue.relu || epilogue.bias || epilogue.residual))
    return "relu's gradient with another epilogue";
  if (epilogue.reluGrad && !epilogue.reluMask)
    return "relu's gradient without its mask";
  if (epilogue.reluMask && !epilogue.relu && !epilogue.reluGrad)
    return "a relu mask without a relu";
  if (epilogue.reluMask &&
      (epilogue.ldReluMask % 128 != 0 || epilogue.ldReluMask < g[N] || epilogue.reluMask % 16))
    return "a relu mask whose row pitch is not a multiple of 128 bits of at least N, or "
           "whose address is not 16-byte aligned";
  // cuBLASLt sums its A only untransposed and its B only transposed.
  if (epilogue.biasGrad && (epilogue.biasGradOfB ? g[TransB] != 0 : g[TransA] == 0))
    return epilogue.biasGradOfB ? "the bias gradient of a transposed B"
                                : "the bias gradient of an A that is not transposed";
  if (epilogue.residual && epilogue.ldResidual < g[N])
    return "a residual's leading dimension shorter than its rows";
  for (Arg arg : {Batch, M, N, K, Lda, Ldb, Ldc})
    if (g[arg] < 0)
      return "a negative size or leading dimension";
  if (g[Batch] == 0 || g[M] == 0 || g[N] == 0)
    return ""; // nothing to compute
  if (g[K] == 0)
    return "K = 0 is not supported";
  if (!g[A] || !g[B] || !g[C])
    return "a null matrix";
  // Row pitches of the matrices as stored (row-major).
  if (g[Lda] < (g[TransA] ? g[M] : g[K]) || g[Ldb] < (g[TransB] ? g[K] : g[N]) || g[Ldc] < g[N])
    return "a leading dimension shorter than its rows";
  return "";
}

bool CublasLt::sgemm(const GemmArgs &g, const GemmEpilogue &epilogue, GemmPrecision precision,
                     CUstream stream, CUdeviceptr workspace, size_t workspaceBytes,
                     std::string &error, GemmStorage storage, const GemmTimer *timer) {
  auto fail = [&](const std::string &why) {
    error = std::string(epilogue.function()) + "(" + describeGemm(g) + epilogue.describe() +
            "): " + why;
    return false;
  };
  if (std::string why = refuseGemm(g, epilogue); !why.empty())
    return fail(why);
  // A bf16 D takes a bias alone, which is then bf16 bits too (cuBLASLt's
  // BIAS_DATA_TYPE default is D's type): tf-bf16-gemm-operands' QKV
  // projection for attention's bf16 inputs.
  if (storage == GemmStorage::Bf16 && (epilogue.relu || epilogue.reluGrad || epilogue.reluMask ||
                                       epilogue.residual || epilogue.biasGrad))
    return fail("an epilogue other than a bias on a bf16 C");
  if (g[Batch] == 0 || g[M] == 0 || g[N] == 0)
    return true;
  // strideC 0 over several items sums them into one C: one matmul an item.
  const bool reduction = g[Batch] > 1 && g[StrideC] == 0;
  std::string why;
  Plan *plan = this->plan(g, epilogue, precision, storage, reduction, workspaceBytes, why);
  lastAlgorithm_ = plan ? plan->algorithm : "";
  // A cuBLASLt without this epilogue for this shape: say how to do without.
  if (!plan)
    return fail(why + (epilogue.any() ? "; tfc compile --no-gemm-epilogues builds the model "
                                        "without cuBLASLt's epilogues"
                                      : ""));
  // The bias's address (read, or written by a bias gradient) is the call's
  // (a plan is the shape's): set before each matmul, which a capture
  // records with it.
  if (epilogue.reluMask) {
    const void *mask = reinterpret_cast<const void *>(uintptr_t(epilogue.reluMask));
    if (cublasStatus_t s = api_.matmulDescSetAttribute(
            plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &mask, sizeof mask);
        s != CUBLAS_STATUS_SUCCESS)
      return fail("cublasLtMatmulDescSetAttribute(EPILOGUE_AUX_POINTER): " + status(s));
  }
  if (const CUdeviceptr address = epilogue.biasGrad ? epilogue.biasGrad : epilogue.bias) {
    const void *bias = reinterpret_cast<const void *>(uintptr_t(address));
    if (cublasStatus_t s = api_.matmulDescSetAttribute(
            plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
        s != CUBLAS_STATUS_SUCCESS)
      return fail("cublasLtMatmulDescSetAttribute(BIAS_POINTER): " + status(s));
  }
  const float alpha = 1.0f, one = 1.0f, zero = 0.0f;
  const int64_t items = reduction ? g[Batch] : 1;
  auto enqueue = [&]() {
    for (int64_t item = 0; item < items; ++item) {
      const char *a =
          reinterpret_cast<const char *>(g[A]) + item * g[StrideA] * operandBytes(storage);
      const char *b =
          reinterpret_cast<const char *>(g[B]) + item * g[StrideB] * operandBytes(storage);
      void *c = reinterpret_cast<void *>(g[C]);
      const float *beta = g[Accumulate] || item > 0 || epilogue.residual ? &one : &zero;
      const void *prior =
          epilogue.residual ? reinterpret_cast<const void *>(uintptr_t(epilogue.residual)) : c;
      cublasStatus_t s = api_.matmul(handle_, plan->desc, &alpha, b, plan->a, a, plan->b, beta,
                                     prior, plan->residual ? plan->residual : plan->c, c, plan->c,
                                     &plan->algo, reinterpret_cast<void *>(uintptr_t(workspace)),
                                     workspaceBytes, reinterpret_cast<cudaStream_t>(stream));
      if (s != CUBLAS_STATUS_SUCCESS)
        return s;
    }
    return CUBLAS_STATUS_SUCCESS;
  };
  if (!plan->tuned) {
    // A plan is tuned at its first call or never, so that every call of it
    // (eager, and every graph captured) takes one algorithm.
    plan->tuned = true;
    // A call that reads C would add to it again at each timed run: it
    // accumulates, sums a batch, or its residual overlaps C.
    auto span = [&](CUdeviceptr at, int64_t ld) {
      return std::pair<CUdeviceptr, CUdeviceptr>{
          at, at + CUdeviceptr(((g[M] - 1) * ld + g[N]) * resultBytes(storage))};
    };
    const auto c = span(CUdeviceptr(g[C]), g[Ldc]);
    const auto r = span(epilogue.residual, epilogue.ldResidual);
    const bool readsC = g[Accumulate] || reduction ||
                        (epilogue.residual && r.first < c.second && c.first < r.second);
    if (timer && !readsC)
      tunePlan(*plan, *timer, enqueue);
  }
  if (cublasStatus_t s = enqueue(); s != CUBLAS_STATUS_SUCCESS)
    return fail("cublasLtMatmul: " + status(s));
  return true;
}

void CublasLt::tunePlan(Plan &plan, const GemmTimer &timer,
                        const std::function<cublasStatus_t()> &enqueue) {
  std::vector<float> ms;
  for (const cublasLtMatmulAlgo_t &algo : plan.candidates) {
    plan.algo = algo;
    bool ran = true;
    const float t = timer([&] { return ran = ran && enqueue() == CUBLAS_STATUS_SUCCESS; });
    if (t < 0 && ran)
      break; // no timing here: the heuristic's first stays
    ms.push_back(ran ? t : -1.0f);
  }
  // The fastest, where it beats the first by the margin; else the first.
  const bool timed = ms.size() == plan.candidates.size() && ms[0] >= 0;
  size_t chosen = 0, fastest = 0;
  for (size_t i = 1; timed && i < ms.size(); ++i)
    if (ms[i] >= 0 && ms[i] < ms[fastest])
      fastest = i;
  if (timed && ms[fastest] < kTuneMargin * ms[0])
    chosen = fastest;
  plan.algo = plan.candidates[chosen];
  char line[160];
  if (timed)
    std::snprintf(line, sizeof line, "; tuned: #%zu of %zu, %.4f ms, the heuristic's first %.4f",
                  chosen, ms.size(), double(ms[chosen]), double(ms[0]));
  else
    std::snprintf(line, sizeof line, "; not tuned (no timing)");
  plan.algorithm = plan.candidateNames[chosen] + line;
  lastAlgorithm_ = plan.algorithm;
  if (timed && !plan.cacheKey.empty() && !plan.candidateConfigs[chosen].empty()) {
    // One line a choice, appended: later runs take it untimed.
    tuneCache_[plan.cacheKey] = plan.candidateConfigs[chosen];
    if (std::FILE *file = std::fopen(tuneCachePath_.c_str(), "a")) {
      std::fprintf(file, "%s = %s\n", plan.cacheKey.c_str(), plan.candidateConfigs[chosen].c_str());
      std::fclose(file);
    }
  }
}

void CublasLt::useTuneCache(const std::string &path, const std::string &prefix) {
  tuneCachePath_ = path;
  tuneCachePrefix_ = prefix;
  tuneCache_.clear();
  plans_.clear();
  if (path.empty())
    return;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t equals = line.rfind(" = ");
    if (equals != std::string::npos && equals + 3 < line.size())
      tuneCache_[line.substr(0, equals)] = line.substr(equals + 3); // a later line wins
  }
}

} // namespace tfc::rt::cuda
