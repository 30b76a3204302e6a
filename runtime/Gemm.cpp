//===- Gemm.cpp - a portable blocked SGEMM --------------------------------===//
//
// Correct for every layout first: op(B) is packed row-major into a
// per-thread panel so the inner loop is a contiguous, vectorisable axpy over
// N; rows of C are split across the thread pool. The performance issue
// replaces the kernel behind this same symbol.
//
//===----------------------------------------------------------------------===//

#include "runtime/Gemm.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

void gemmOne(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, bool transA,
             const float *b, int64_t ldb, bool transB, float *c, int64_t ldc, bool accumulate) {
  // op(B) as a contiguous K x N panel (a copy only when B is transposed or
  // strided; the common case reads B in place).
  std::vector<float> packed;
  const float *panel = b;
  int64_t panelLd = ldb;
  if (transB || ldb != n) {
    packed.resize(size_t(k * n));
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        packed[p * n + j] = transB ? b[j * ldb + p] : b[p * ldb + j];
    panel = packed.data();
    panelLd = n;
  }
  int64_t work = m * n * k;
  int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, n * k));
  auto rows = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float *ci = c + i * ldc;
      if (!accumulate)
        std::memset(ci, 0, sizeof(float) * size_t(n));
      for (int64_t p = 0; p < k; ++p) {
        float av = transA ? a[p * lda + i] : a[i * lda + p];
        const float *bp = panel + p * panelLd;
        for (int64_t j = 0; j < n; ++j)
          ci[j] += av * bp[j];
      }
    }
  };
  if (work < (1 << 16))
    rows(0, m);
  else
    tfc::rt::parallelFor(m, grain, rows);
}

} // namespace

extern "C" void tfc_sgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                          intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                          intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                          intptr_t ldc, intptr_t strideC, intptr_t accumulate) {
  auto *A = reinterpret_cast<const float *>(a);
  auto *B = reinterpret_cast<const float *>(b);
  auto *C = reinterpret_cast<float *>(c);
  for (intptr_t i = 0; i < batch; ++i)
    gemmOne(m, n, k, A + i * strideA, lda, transA != 0, B + i * strideB, ldb, transB != 0,
            C + i * strideC, ldc, accumulate != 0);
}
