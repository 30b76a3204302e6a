//===- CrossEntropy.cpp - tfc_cross_entropy -------------------------------===//
//
// A row's maximum, then Σ exp(x - max) with the CUDA kernel's exp
// polynomial, then its loss; the losses summed in row order.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/CrossEntropy.h"
#include "runtime/ThreadPool.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <cmath>

extern "C" void tfc_cross_entropy(intptr_t outer, intptr_t classes, intptr_t inner, float count,
                                  intptr_t logits, intptr_t labels, intptr_t losses,
                                  intptr_t out) {
  namespace k = tfc::rt::cuda::kernels;
  const auto *xs = reinterpret_cast<const float *>(logits);
  const auto *ls = reinterpret_cast<const int32_t *>(labels);
  auto *rowLosses = reinterpret_cast<float *>(losses);
  const int64_t rows = int64_t(outer) * inner;
  if (classes > 0)
    tfc::rt::parallelFor(rows, 64, [&](int64_t r0, int64_t r1) {
      for (int64_t row = r0; row < r1; ++row) {
        const float *xr = xs + (row / inner) * classes * inner + row % inner;
        float max = -INFINITY, sumExp = 0.0f;
        for (int64_t c = 0; c < classes; ++c)
          max = k::maxOf(max, xr[c * inner]);
        for (int64_t c = 0; c < classes; ++c)
          sumExp += k::expApprox(xr[c * inner] - max);
        rowLosses[row] =
            k::crossEntropyLoss(xr[k::clampLabel(ls[row], classes) * inner], max, sumExp);
      }
    });
  float sum = 0.0f;
  for (int64_t row = 0; row < rows; ++row)
    sum += rowLosses[row];
  *reinterpret_cast<float *>(out) = sum / count;
}
