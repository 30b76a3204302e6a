//===- FakeCublasLt.cpp - cuBLASLt without a GPU, for tests ---------------===//
//
// A shared library that the CUDA runtime loads through TFC_CUBLASLT in place
// of libcublasLt.so.13, beside the fake driver (FakeCudaDriver.cpp, whose
// device memory is host memory). It has the entry points tfc uses
// (runtime/cuda/CublasLt.h) with cuBLASLt's meaning: column-major matrices,
// op(A) m x k, op(B) k x n, D = alpha op(A) op(B) + beta C, strided batches;
// and it computes the product naively on the host, so a model's GEMMs give
// real numbers without a GPU. Like cuBLASLt it refuses what it does not do:
// CUDA_R_32F matrices with CUBLAS_COMPUTE_32F or, for --precision
// tf32 and bf16, CUBLAS_COMPUTE_32F_FAST_TF32 and _FAST_16BF (whose products
// it computes on A and B rounded to TF32's 10-bit or bf16's 7-bit mantissa,
// as the tensor cores read them; every other compute type is refused), the
// CUDA_R_16BF A and B (tf-bf16-gemm-operands' copies, any epilogue below)
// or all four (tfc-kernel-check --bench-gemm's storage, and tf-bf16-gemm-
// operands' attention inputs with the bias epilogue alone, a bf16 bias), with
// CUBLAS_COMPUTE_32F (bf16 read exactly, a bf16 D rounded to nearest even);
// the epilogues BIAS, RELU, RELU_BIAS, RELU_AUX(_BIAS) (writing ReLU's bit-mask:
// bit i + j * ld for D's element (i, j), ld a multiple of 128 of at least
// D's rows), DRELU (the product times that mask) and the bias gradients
// BGRADA (of an A not transposed) and BGRADB (of a transposed B), which it
// sums in double (of the operand's values, bf16 ones exactly);
// leading dimensions of at least the
// rows, matching batch counts, a batch of C with stride 0 (items would race
// on a GPU), and every matrix, in every item, inside one live allocation of
// the fake driver.
//
// The fake driver is found as the runtime found it ($TFC_CUDA_DRIVER, the
// library already loaded): each GEMM is given to it as host work on the
// stream (tfcFakeCudaEnqueue), so that a captured graph replays it, and
// recorded in its log ("cublasLtMatmul(...)", " bf16" after the transposes
// for bf16 A and B, " bf16 D" for all four), as is each matmul
// descriptor's compute type ("cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F)").
// The heuristic offers three algorithms (the same arithmetic), numbered in
// their algo's data and reported as CUBLASLT_ALGO_CONFIG_ID, with split-K 1;
// a matmul on another than the first says ", algo N" in its log line, and
// TFC_FAKE_CUBLASLT_ALGO_MICROSECONDS="20,17,16" gives algorithm i the
// i-th number of the fake clock's microseconds (else 1 each), so that
// autotuning (CublasLt::tune) has a fastest to find.
// TFC_FAKE_CUBLASLT_NO_PRODUCTS=1 (read at each product) leaves D as it was:
// tools/gpu/dry-run.sh runs the GPU scripts at full size on the fakes, where
// the naive products would take hours and their numbers mean nothing.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cublasLt.h>
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Desc {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  int32_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const float *bias = nullptr;
  unsigned char *aux = nullptr; // ReLU's bit-mask
  int64_t auxLd = 0;
};
struct Layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct Preference {
  uint64_t workspace = 0;
};

/// The fake driver's exports, through the library the runtime loaded.
struct Driver {
  void (*enqueue)(CUstream, void (*)(void *), void *, void (*)(void *)) = nullptr;
  bool (*range)(uintptr_t, size_t) = nullptr;
  void (*record)(const char *) = nullptr;
  Driver() {
    const char *path = std::getenv("TFC_CUDA_DRIVER");
    void *handle = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    if (!handle)
      return;
    enqueue = reinterpret_cast<decltype(enqueue)>(dlsym(handle, "tfcFakeCudaEnqueue"));
    range = reinterpret_cast<decltype(range)>(dlsym(handle, "tfcFakeCudaDeviceRange"));
    record = reinterpret_cast<decltype(record)>(dlsym(handle, "tfcFakeCudaRecord"));
    // The handle is kept: the driver outlives this library's use of it.
  }
};

Driver &driver() {
  static Driver d;
  return d;
}

/// One GEMM's operands as captured (cuBLASLt reads alpha and beta at the call).
struct Work {
  int64_t m, n, k, batch;
  bool transA, transB;
  const void *a, *b, *c;
  void *d;
  bool operandsBf16 = false, resultsBf16 = false; // A and B; C and D (else fp32)
  int64_t lda, ldb, ldc, ldd, strideA, strideB, strideC, strideD;
  float alpha, beta;
  int mantissa = 23; // A and B rounded to this many mantissa bits first (TF32 10, bf16 7)
  bool relu = false;
  const float *bias = nullptr; // m floats along D's rows (bf16 bits with a bf16 D)
  float *biasGrad = nullptr;   // BGRADA: m sums of op(A)'s rows; BGRADB: n of op(B)'s columns
  bool biasGradOfB = false;
  unsigned char *mask = nullptr; // written by a relu, read by reluGrad
  int64_t maskLd = 0;
  bool reluGrad = false;
};

/// `x` rounded to `mantissa` bits (8-bit exponent: TF32 10, bf16 7), to
/// nearest, ties to even.
float toMantissa(float x, int mantissa) {
  if (mantissa >= 23)
    return x;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) { // not inf or NaN
    const int drop = 23 - mantissa;
    const uint32_t half = 1u << (drop - 1), odd = (bits >> drop) & 1u;
    bits = (bits + half - 1 + odd) & ~((1u << drop) - 1);
  }
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// Element `i` of a matrix at `p`: fp32, or bf16 (its bits the upper half
/// of the float's).
float element(const void *p, int64_t i, bool bf16) {
  if (!bf16)
    return static_cast<const float *>(p)[i];
  uint32_t bits = uint32_t(static_cast<const uint16_t *>(p)[i]) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

void store(void *p, int64_t i, bool bf16, float x) {
  if (!bf16) {
    static_cast<float *>(p)[i] = x;
    return;
  }
  x = toMantissa(x, 7);
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  static_cast<uint16_t *>(p)[i] = uint16_t(bits >> 16);
}

void compute(void *context) {
  const Work &w = *static_cast<const Work *>(context);
  if (const char *skip = std::getenv("TFC_FAKE_CUBLASLT_NO_PRODUCTS"); skip && *skip == '1')
    return;
  std::vector<float> out(size_t(w.m * w.n));
  const int64_t operandBytes = w.operandsBf16 ? 2 : 4, resultBytes = w.resultsBf16 ? 2 : 4;
  for (int64_t item = 0; item < w.batch; ++item) {
    const char *a = static_cast<const char *>(w.a) + item * w.strideA * operandBytes,
               *b = static_cast<const char *>(w.b) + item * w.strideB * operandBytes,
               *c = static_cast<const char *>(w.c) + item * w.strideC * resultBytes;
    char *d = static_cast<char *>(w.d) + item * w.strideD * resultBytes;
    for (int64_t j = 0; j < w.n; ++j)
      for (int64_t i = 0; i < w.m; ++i) {
        double sum = 0;
        for (int64_t p = 0; p < w.k; ++p) {
          float x = element(a, w.transA ? p + i * w.lda : i + p * w.lda, w.operandsBf16);
          float y = element(b, w.transB ? j + p * w.ldb : p + j * w.ldb, w.operandsBf16);
          x = toMantissa(x, w.mantissa), y = toMantissa(y, w.mantissa);
          sum += double(x) * double(y);
        }
        double prior =
            w.beta != 0 ? double(w.beta) * element(c, i + j * w.ldc, w.resultsBf16) : 0.0;
        float value = float(double(w.alpha) * sum + prior);
        if (w.bias) // a bf16 D's bias is bf16 (cuBLASLt's BIAS_DATA_TYPE default: D's)
          value += element(w.bias, i, w.resultsBf16);
        const int64_t bit = i + j * w.maskLd;
        if (w.reluGrad) {
          value = w.mask[bit / 8] >> (bit % 8) & 1 ? value : 0.0f;
        } else if (w.mask) {
          const unsigned char flag = (unsigned char)(1u << (bit % 8));
          w.mask[bit / 8] = value > 0.0f ? w.mask[bit / 8] | flag : w.mask[bit / 8] & ~flag;
        }
        out[size_t(i + j * w.m)] = w.relu && value < 0.0f ? 0.0f : value;
      }
    // D may be C: written after every C element of the item is read.
    for (int64_t j = 0; j < w.n; ++j)
      for (int64_t i = 0; i < w.m; ++i)
        store(d, i + j * w.ldd, w.resultsBf16, out[size_t(i + j * w.m)]);
  }
  // A bias gradient sums the operand over k (batch 1: valid() saw to it).
  if (w.biasGrad) {
    const int64_t count = w.biasGradOfB ? w.n : w.m;
    for (int64_t x = 0; x < count; ++x) {
      double sum = 0;
      for (int64_t p = 0; p < w.k; ++p)
        sum += w.biasGradOfB ? element(w.b, x + p * w.ldb, w.operandsBf16)
                             : element(w.a, x + p * w.lda, w.operandsBf16);
      w.biasGrad[x] = float(sum);
    }
  }
}

void release(void *context) { delete static_cast<Work *>(context); }

/// The last byte an item of `l` at `pointer` reaches, for range checks.
bool inside(const void *pointer, const Layout &l) {
  if (!driver().range)
    return true;
  const size_t bytes = l.type == CUDA_R_16BF ? 2 : 4;
  const size_t span = size_t((int64_t(l.cols) - 1) * l.ld + int64_t(l.rows)) * bytes;
  for (int32_t item = 0; item < l.batch; ++item)
    if (!driver().range(uintptr_t(static_cast<const char *>(pointer) + item * l.stride * bytes),
                        span))
      return false;
  return true;
}

void note(const std::string &line) {
  if (driver().record)
    driver().record(line.c_str());
}

/// Whether the operation is one cuBLASLt would run; `why` says what is not.
bool valid(const Desc &desc, const Layout &a, const Layout &b, const Layout &c, const Layout &d,
           std::string &why) {
  if ((desc.compute != CUBLAS_COMPUTE_32F && desc.compute != CUBLAS_COMPUTE_32F_FAST_TF32 &&
       desc.compute != CUBLAS_COMPUTE_32F_FAST_16BF) ||
      desc.scale != CUDA_R_32F)
    return why = "compute type other than CUBLAS_COMPUTE_32F(_FAST_TF32, _FAST_16BF)", false;
  for (const Layout *l : {&a, &b, &c, &d})
    if ((l->type != CUDA_R_32F && l->type != CUDA_R_16BF) || l->ld < int64_t(l->rows) || l->ld < 1)
      return why = "a layout that is not R_32F or R_16BF with ld >= rows", false;
  // bf16: A and B alike, C and D alike, CUBLAS_COMPUTE_32F; an epilogue
  // with C and D fp32, or the bias alone (tfc asks no other).
  const bool anyBf16 = a.type == CUDA_R_16BF || c.type == CUDA_R_16BF;
  if (a.type != b.type || c.type != d.type || (c.type == CUDA_R_16BF && a.type != CUDA_R_16BF) ||
      (anyBf16 && desc.compute != CUBLAS_COMPUTE_32F) ||
      (c.type == CUDA_R_16BF && desc.epilogue != CUBLASLT_EPILOGUE_DEFAULT &&
       desc.epilogue != CUBLASLT_EPILOGUE_BIAS))
    return why = "bf16 matrices other than A and B, or all four, with CUBLAS_COMPUTE_32F (an "
                 "epilogue with C and D fp32, or the bias alone)",
           false;
  const uint64_t m = desc.transA ? a.cols : a.rows, k = desc.transA ? a.rows : a.cols;
  const uint64_t kb = desc.transB ? b.cols : b.rows, n = desc.transB ? b.rows : b.cols;
  if (k != kb || c.rows != m || c.cols != n || d.rows != m || d.cols != n)
    return why = "shapes that do not multiply", false;
  if (a.batch != b.batch || a.batch != c.batch || a.batch != d.batch)
    return why = "different batch counts", false;
  if (c.batch > 1 && (c.stride == 0 || d.stride == 0))
    return why = "a batch of C or D with stride 0", false;
  const bool aux = desc.epilogue == CUBLASLT_EPILOGUE_RELU_AUX ||
                   desc.epilogue == CUBLASLT_EPILOGUE_RELU_AUX_BIAS ||
                   desc.epilogue == CUBLASLT_EPILOGUE_DRELU;
  if (aux && (desc.auxLd % 128 != 0 || desc.auxLd < int64_t(d.rows) || a.batch != 1))
    return why = "a ReLU bit-mask ld not a multiple of 128 of at least D's rows, or a batch",
           false;
  if (desc.epilogue == CUBLASLT_EPILOGUE_BGRADA || desc.epilogue == CUBLASLT_EPILOGUE_BGRADB) {
    if (a.batch != 1)
      return why = "a bias gradient over a batch", false;
    if (desc.epilogue == CUBLASLT_EPILOGUE_BGRADA && desc.transA != CUBLAS_OP_N)
      return why = "BGRADA of a transposed A", false;
    if (desc.epilogue == CUBLASLT_EPILOGUE_BGRADB && desc.transB != CUBLAS_OP_T)
      return why = "BGRADB of a B that is not transposed", false;
  }
  return true;
}

} // namespace

FAKE_EXPORT size_t cublasLtGetVersion() { return 130100; }
FAKE_EXPORT const char *cublasLtGetStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "CUBLAS_STATUS_UNKNOWN";
  }
}
FAKE_EXPORT const char *cublasLtGetStatusString(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "success" : "the fake cuBLASLt refused it";
}
FAKE_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
  static int token;
  *handle = reinterpret_cast<cublasLtHandle_t>(&token);
  note("cublasLtCreate");
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t) { return CUBLAS_STATUS_SUCCESS; }

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                                    cublasComputeType_t compute,
                                                    cudaDataType_t scale) {
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(new Desc{compute, scale});
  note(std::string("cublasLtMatmulDescCreate(") +
       (compute == CUBLAS_COMPUTE_32F             ? "CUBLAS_COMPUTE_32F"
        : compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? "CUBLAS_COMPUTE_32F_FAST_TF32"
        : compute == CUBLAS_COMPUTE_32F_FAST_16BF ? "CUBLAS_COMPUTE_32F_FAST_16BF"
                                                  : "compute type " + std::to_string(int(compute))) +
       ")");
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete reinterpret_cast<Desc *>(desc);
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t handle,
                                                          cublasLtMatmulDescAttributes_t attr,
                                                          const void *buf, size_t size) {
  Desc *desc = reinterpret_cast<Desc *>(handle);
  if ((attr == CUBLASLT_MATMUL_DESC_TRANSA || attr == CUBLASLT_MATMUL_DESC_TRANSB) &&
      size == sizeof(int32_t)) {
    int32_t op;
    std::memcpy(&op, buf, sizeof op);
    if (op != CUBLAS_OP_N && op != CUBLAS_OP_T)
      return CUBLAS_STATUS_INVALID_VALUE;
    (attr == CUBLASLT_MATMUL_DESC_TRANSA ? desc->transA : desc->transB) = op;
    return CUBLAS_STATUS_SUCCESS;
  }
  // The epilogues tfc_cuda_sgemm_fused asks for, and the bias they read.
  if (attr == CUBLASLT_MATMUL_DESC_EPILOGUE && size == sizeof(cublasLtEpilogue_t)) {
    cublasLtEpilogue_t epilogue;
    std::memcpy(&epilogue, buf, sizeof epilogue);
    if (epilogue != CUBLASLT_EPILOGUE_DEFAULT && epilogue != CUBLASLT_EPILOGUE_BIAS &&
        epilogue != CUBLASLT_EPILOGUE_RELU && epilogue != CUBLASLT_EPILOGUE_RELU_BIAS &&
        epilogue != CUBLASLT_EPILOGUE_BGRADA && epilogue != CUBLASLT_EPILOGUE_BGRADB &&
        epilogue != CUBLASLT_EPILOGUE_RELU_AUX && epilogue != CUBLASLT_EPILOGUE_RELU_AUX_BIAS &&
        epilogue != CUBLASLT_EPILOGUE_DRELU)
      return CUBLAS_STATUS_NOT_SUPPORTED;
    desc->epilogue = epilogue;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (attr == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER && size == sizeof(void *)) {
    std::memcpy(&desc->aux, buf, sizeof(void *));
    return CUBLAS_STATUS_SUCCESS;
  }
  if (attr == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD && size == sizeof(int64_t)) {
    std::memcpy(&desc->auxLd, buf, sizeof(int64_t));
    return CUBLAS_STATUS_SUCCESS;
  }
  if (attr == CUBLASLT_MATMUL_DESC_BIAS_POINTER && size == sizeof(void *)) {
    std::memcpy(&desc->bias, buf, sizeof(void *));
    return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_NOT_SUPPORTED;
}
FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout,
                                                      cudaDataType type, uint64_t rows,
                                                      uint64_t cols, int64_t ld) {
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(new Layout{type, rows, cols, ld});
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete reinterpret_cast<Layout *>(layout);
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t handle,
                                                            cublasLtMatrixLayoutAttribute_t attr,
                                                            const void *buf, size_t size) {
  Layout *layout = reinterpret_cast<Layout *>(handle);
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && size == sizeof(int32_t)) {
    std::memcpy(&layout->batch, buf, size);
    return layout->batch >= 1 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
  }
  if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET && size == sizeof(int64_t)) {
    std::memcpy(&layout->stride, buf, size);
    return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_NOT_SUPPORTED;
}
FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
  *pref = reinterpret_cast<cublasLtMatmulPreference_t>(new Preference);
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete reinterpret_cast<Preference *>(pref);
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_EXPORT cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t handle,
                                     cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                     size_t size) {
  Preference *pref = reinterpret_cast<Preference *>(handle);
  if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES && size == sizeof(uint64_t)) {
    std::memcpy(&pref->workspace, buf, size);
    return CUBLAS_STATUS_SUCCESS;
  }
  if ((attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES ||
       attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES ||
       attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES ||
       attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES) &&
      size == sizeof(uint32_t))
    return CUBLAS_STATUS_SUCCESS;
  return CUBLAS_STATUS_NOT_SUPPORTED;
}
constexpr int kFakeAlgorithms = 3;
FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t, int requested, cublasLtMatmulHeuristicResult_t *results,
    int *returned) {
  std::string why;
  *returned = 0;
  if (requested < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!valid(*reinterpret_cast<Desc *>(desc), *reinterpret_cast<Layout *>(a),
             *reinterpret_cast<Layout *>(b), *reinterpret_cast<Layout *>(c),
             *reinterpret_cast<Layout *>(d), why)) {
    note("cublasLtMatmulAlgoGetHeuristic: INVALID: " + why);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  // Three algorithms (the same arithmetic), numbered in algo.data[0], as
  // many as asked for.
  const int offered = std::min(requested, kFakeAlgorithms);
  for (int i = 0; i < offered; ++i) {
    std::memset(&results[i], 0, sizeof results[i]);
    results[i].algo.data[0] = uint64_t(i);
    results[i].state = CUBLAS_STATUS_SUCCESS;
    results[i].wavesCount = 1;
  }
  *returned = offered;
  return CUBLAS_STATUS_SUCCESS;
}
/// The fake's algorithms' configuration: their number as the id, a split-K
/// of 1; no other attribute.
FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(
    const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr, void *buf,
    size_t size, size_t *written) {
  if (attr != CUBLASLT_ALGO_CONFIG_ID && attr != CUBLASLT_ALGO_CONFIG_SPLITK_NUM)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (size != sizeof(int32_t) || !buf)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int32_t value = attr == CUBLASLT_ALGO_CONFIG_ID ? int32_t(algo->data[0]) : 1;
  std::memcpy(buf, &value, sizeof value);
  *written = sizeof value;
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t, cublasLtMatmulDesc_t descHandle, const void *alpha, const void *A,
    cublasLtMatrixLayout_t aHandle, const void *B, cublasLtMatrixLayout_t bHandle, const void *beta,
    const void *C, cublasLtMatrixLayout_t cHandle, void *D, cublasLtMatrixLayout_t dHandle,
    const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceBytes, cudaStream_t stream) {
  const Desc &desc = *reinterpret_cast<Desc *>(descHandle);
  const Layout &a = *reinterpret_cast<Layout *>(aHandle), &b = *reinterpret_cast<Layout *>(bHandle),
               &c = *reinterpret_cast<Layout *>(cHandle), &d = *reinterpret_cast<Layout *>(dHandle);
  std::string why;
  const bool withBias = desc.epilogue == CUBLASLT_EPILOGUE_BIAS ||
                        desc.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
                        desc.epilogue == CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
  const bool withMask = desc.epilogue == CUBLASLT_EPILOGUE_RELU_AUX ||
                        desc.epilogue == CUBLASLT_EPILOGUE_RELU_AUX_BIAS ||
                        desc.epilogue == CUBLASLT_EPILOGUE_DRELU;
  // The mask as bytes: ld / 8 a column, one column.
  Layout maskLayout{CUDA_R_32F, uint64_t(desc.auxLd / 8 * int64_t(d.cols) + 3) / 4, 1,
                    (desc.auxLd / 8 * int64_t(d.cols) + 3) / 4};
  const bool biasGrad =
      desc.epilogue == CUBLASLT_EPILOGUE_BGRADA || desc.epilogue == CUBLASLT_EPILOGUE_BGRADB;
  Layout biasLayout{withBias ? d.type : CUDA_R_32F,
                    desc.epilogue == CUBLASLT_EPILOGUE_BGRADB ? d.cols : d.rows, 1,
                    int64_t(desc.epilogue == CUBLASLT_EPILOGUE_BGRADB ? d.cols : d.rows)};
  if (!valid(desc, a, b, c, d, why) ||
      (why = "a bias epilogue without its bias pointer", (withBias || biasGrad) && !desc.bias) ||
      (why = "a bias outside every live allocation",
       (withBias || biasGrad) && !inside(desc.bias, biasLayout)) ||
      (why = "a ReLU mask missing, not 16-byte aligned or outside every live allocation",
       withMask && (!desc.aux || uintptr_t(desc.aux) % 16 || !inside(desc.aux, maskLayout))) ||
      (why = "a matrix outside every live allocation",
       !inside(A, a) || !inside(B, b) || !inside(C, c) || !inside(D, d)) ||
      (why = "a workspace outside every live allocation",
       workspaceBytes && driver().range && !driver().range(uintptr_t(workspace), workspaceBytes))) {
    note("cublasLtMatmul: INVALID: " + why);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  auto *work = new Work;
  work->m = int64_t(d.rows), work->n = int64_t(d.cols);
  work->k = int64_t(desc.transA ? a.rows : a.cols);
  work->batch = d.batch;
  work->transA = desc.transA == CUBLAS_OP_T, work->transB = desc.transB == CUBLAS_OP_T;
  work->a = A, work->b = B, work->c = C, work->d = D;
  work->operandsBf16 = a.type == CUDA_R_16BF, work->resultsBf16 = d.type == CUDA_R_16BF;
  work->lda = a.ld, work->ldb = b.ld, work->ldc = c.ld, work->ldd = d.ld;
  work->strideA = a.stride, work->strideB = b.stride, work->strideC = c.stride;
  work->strideD = d.stride;
  std::memcpy(&work->alpha, alpha, sizeof(float));
  std::memcpy(&work->beta, beta, sizeof(float));
  work->mantissa = desc.compute == CUBLAS_COMPUTE_32F_FAST_TF32   ? 10
                   : desc.compute == CUBLAS_COMPUTE_32F_FAST_16BF ? 7
                                                                  : 23;
  work->relu = desc.epilogue == CUBLASLT_EPILOGUE_RELU ||
               desc.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
               desc.epilogue == CUBLASLT_EPILOGUE_RELU_AUX ||
               desc.epilogue == CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
  work->reluGrad = desc.epilogue == CUBLASLT_EPILOGUE_DRELU;
  work->mask = withMask ? desc.aux : nullptr;
  work->maskLd = desc.auxLd;
  work->bias = withBias ? desc.bias : nullptr;
  // The bias pointer is where a bias gradient goes (cuBLASLt's convention).
  work->biasGrad = biasGrad ? const_cast<float *>(desc.bias) : nullptr;
  work->biasGradOfB = desc.epilogue == CUBLASLT_EPILOGUE_BGRADB;
  char line[200];
  std::snprintf(line, sizeof line,
                "cublasLtMatmul(%lldx%lldx%lld, batch %lld, %s%s%s, beta %g%s%s%s%s)",
                (long long)work->m, (long long)work->n, (long long)work->k, (long long)work->batch,
                work->transA ? "T" : "N", work->transB ? "T" : "N",
                work->resultsBf16    ? " bf16 D"
                : work->operandsBf16 ? " bf16"
                                     : "",
                double(work->beta), work->bias ? ", bias" : "", work->relu ? ", relu" : "",
                !biasGrad           ? ""
                : work->biasGradOfB ? ", bgradb"
                                    : ", bgrada",
                work->reluGrad ? ", drelu"
                : work->mask   ? ", relu mask"
                               : "");
  // Which of the heuristic's algorithms (the first unnamed), and its time:
  // TFC_FAKE_CUBLASLT_ALGO_MICROSECONDS="3,1,2" makes algorithm i take the
  // i-th number of the fake clock's microseconds (a recorded call each),
  // so that autotuning has a fastest to find; 1 each by default.
  const int number = algo ? int(algo->data[0]) : 0;
  std::string noted = line;
  if (number != 0)
    noted.insert(noted.size() - 1, ", algo " + std::to_string(number));
  note(noted);
  if (const char *times = std::getenv("TFC_FAKE_CUBLASLT_ALGO_MICROSECONDS")) {
    std::string list = times;
    long us = 1;
    for (int i = 0; i <= number && !list.empty(); ++i) {
      us = std::strtol(list.c_str(), nullptr, 10);
      const size_t comma = list.find(',');
      list = comma == std::string::npos ? "" : list.substr(comma + 1);
    }
    for (long extra = 1; extra < us; ++extra)
      note("  (the fake algorithm's time)");
  }
  if (driver().enqueue)
    driver().enqueue(reinterpret_cast<CUstream>(stream), compute, work, release);
  else {
    compute(work);
    release(work);
  }
  return CUBLAS_STATUS_SUCCESS;
}
