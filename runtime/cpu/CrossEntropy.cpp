//===- CrossEntropy.cpp - tfc_cross_entropy and its backward --------------===//
//
// A row's maximum, then Σ exp(x - max) with the CUDA kernel's exp
// polynomial, then its loss (the losses summed in row order) or its
// gradient, or (fused) both.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/CrossEntropy.h"
#include "runtime/ThreadPool.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

/// Row `row`'s logits (a stride of `inner` between classes), its maximum
/// and Σ exp(x - max): the CUDA kernels' rowSoftmax, in one thread.
const float *rowSoftmax(const float *xs, int64_t row, int64_t classes, int64_t inner,
                        float &max, float &sumExp) {
  namespace k = tfc::rt::cuda::kernels;
  const float *xr = xs + (row / inner) * classes * inner + row % inner;
  max = -INFINITY;
  sumExp = 0.0f;
  for (int64_t c = 0; c < classes; ++c)
    max = k::maxOf(max, xr[c * inner]);
  for (int64_t c = 0; c < classes; ++c)
    sumExp += k::expApprox(xr[c * inner] - max);
  return xr;
}

/// body(row, xr, max, sumExp) for each of the outer x inner rows with its
/// rowSoftmax, on the thread pool (nothing without classes).
template <typename Body>
void forEachRowSoftmax(const float *xs, int64_t outer, int64_t classes, int64_t inner,
                       Body body) {
  if (classes <= 0)
    return;
  tfc::rt::parallelFor(outer * inner, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) {
      float max, sumExp;
      const float *xr = rowSoftmax(xs, row, classes, inner, max, sumExp);
      body(row, xr, max, sumExp);
    }
  });
}

/// The rows' losses summed in row order, over `count`.
float meanOfRows(const float *rowLosses, int64_t rows, float count) {
  float sum = 0.0f;
  for (int64_t row = 0; row < rows; ++row)
    sum += rowLosses[row];
  return sum / count;
}

/// Row `row`'s gradient of the logits, its classes `inner` apart.
void rowGradient(const float *xr, float *ds, int64_t row, int64_t classes, int64_t inner,
                 float max, float sumExp, int64_t label, float coef) {
  namespace k = tfc::rt::cuda::kernels;
  float *dr = ds + (row / inner) * classes * inner + row % inner;
  for (int64_t c = 0; c < classes; ++c)
    dr[c * inner] = k::crossEntropyGrad(xr[c * inner], max, sumExp, c == label, coef);
}

} // namespace

extern "C" void tfc_cross_entropy(intptr_t outer, intptr_t classes, intptr_t inner, float count,
                                  intptr_t logits, intptr_t labels, intptr_t losses,
                                  intptr_t out) {
  namespace k = tfc::rt::cuda::kernels;
  const auto *xs = reinterpret_cast<const float *>(logits);
  const auto *ls = reinterpret_cast<const int32_t *>(labels);
  auto *rowLosses = reinterpret_cast<float *>(losses);
  forEachRowSoftmax(xs, outer, classes, inner,
                    [&](int64_t row, const float *xr, float max, float sumExp) {
                      rowLosses[row] = k::crossEntropyLoss(
                          xr[k::clampLabel(ls[row], classes) * inner], max, sumExp);
                    });
  *reinterpret_cast<float *>(out) = meanOfRows(rowLosses, int64_t(outer) * inner, count);
}

extern "C" void tfc_cross_entropy_backward(intptr_t outer, intptr_t classes, intptr_t inner,
                                           float count, intptr_t logits, intptr_t labels,
                                           intptr_t dloss, intptr_t dlogits) {
  namespace k = tfc::rt::cuda::kernels;
  const auto *xs = reinterpret_cast<const float *>(logits);
  const auto *ls = reinterpret_cast<const int32_t *>(labels);
  auto *ds = reinterpret_cast<float *>(dlogits);
  const float coef = *reinterpret_cast<const float *>(dloss) / count;
  forEachRowSoftmax(xs, outer, classes, inner,
                    [&](int64_t row, const float *xr, float max, float sumExp) {
                      rowGradient(xr, ds, row, classes, inner, max, sumExp,
                                  k::clampLabel(ls[row], classes), coef);
                    });
}

extern "C" void tfc_cross_entropy_fused(intptr_t outer, intptr_t classes, intptr_t inner,
                                        float count, intptr_t logits, intptr_t labels,
                                        intptr_t dloss, intptr_t losses, intptr_t out,
                                        intptr_t dlogits, intptr_t corrects, intptr_t accuracy,
                                        intptr_t dlogitsBits) {
  namespace k = tfc::rt::cuda::kernels;
  const auto *xs = reinterpret_cast<const float *>(logits);
  const auto *ls = reinterpret_cast<const int32_t *>(labels);
  auto *rowLosses = reinterpret_cast<float *>(losses);
  // With dlogitsBits the f32 gradient goes to a buffer of its own first.
  std::vector<float> f32;
  if (dlogitsBits)
    f32.resize(size_t(std::max<int64_t>(int64_t(outer) * classes * inner, 0)));
  auto *ds = dlogitsBits ? f32.data() : reinterpret_cast<float *>(dlogits);
  const float coef = *reinterpret_cast<const float *>(dloss) / count;
  forEachRowSoftmax(xs, outer, classes, inner,
                    [&](int64_t row, const float *xr, float max, float sumExp) {
                      const int64_t label = k::clampLabel(ls[row], classes);
                      rowLosses[row] = k::crossEntropyLoss(xr[label * inner], max, sumExp);
                      rowGradient(xr, ds, row, classes, inner, max, sumExp, label, coef);
                      if (corrects) {
                        // tf.argmax's chain: a strict '>' from -inf, index 0.
                        float best = -INFINITY;
                        int32_t first = 0;
                        for (int64_t c = 0; c < classes; ++c)
                          if (xr[c * inner] > best) {
                            best = xr[c * inner];
                            first = int32_t(c);
                          }
                        reinterpret_cast<float *>(corrects)[row] = first == ls[row] ? 1.0f : 0.0f;
                      }
                    });
  const int64_t rows = int64_t(outer) * inner;
  *reinterpret_cast<float *>(out) = meanOfRows(rowLosses, rows, count);
  if (dlogitsBits)
    for (size_t i = 0; i < f32.size(); ++i)
      reinterpret_cast<uint16_t *>(dlogits)[i] = k::bf16Bits(f32[i]);
  if (corrects && classes <= 0) // no classes: tf.argmax's 0 for every row
    for (int64_t row = 0; row < rows; ++row)
      reinterpret_cast<float *>(corrects)[row] = ls[row] == 0 ? 1.0f : 0.0f;
  if (corrects && accuracy)
    *reinterpret_cast<float *>(accuracy) =
        meanOfRows(reinterpret_cast<const float *>(corrects), rows, float(rows));
}
