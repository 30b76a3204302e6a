//===- AttentionProblem.h - attention test problems and the CPU reference -===//
//
// What the host models of the CUDA attention kernels share
// (CudaKernelMathTest, CudaAttentionTcMathTest): random strided heads in the
// CPU kernel's layout, a causal-ish mask with a fully masked row, the CPU
// kernels (runtime/cpu/Attention.h) called on them, and the error measure.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TESTS_UNIT_ATTENTIONPROBLEM_H
#define TFC_TESTS_UNIT_ATTENTIONPROBLEM_H

#include "runtime/cpu/Attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace tfc::test {

inline std::vector<float> randomFloats(size_t n, std::mt19937 &rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// max |a - b| / max(max |b|, tiny).
inline double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  double err = 0, mag = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::fabs(double(a[i]) - double(b[i])));
    mag = std::max(mag, std::fabs(double(b[i])));
  }
  return err / mag;
}

/// A tensor in the CPU kernel's strided layout: heads (outer, inner) of
/// [tq or tk, width] rows, `row` floats apart, heads packed.
struct Strided {
  std::vector<float> data;
  int64_t outer, inner, row;
  const float *head(int64_t b, int64_t innerCount) const {
    return data.data() + (b / innerCount) * outer + (b % innerCount) * inner;
  }
  float *head(int64_t b, int64_t innerCount) {
    return data.data() + (b / innerCount) * outer + (b % innerCount) * inner;
  }
};

/// Random heads of [rows, width], each row padded by `pad` floats.
inline Strided makeStrided(int64_t outer, int64_t inner, int64_t rows, int64_t width,
                           int64_t pad, std::mt19937 &rng) {
  const int64_t row = width + pad, headSize = rows * row;
  return {randomFloats(size_t(outer * inner * headSize), rng), inner * headSize, headSize, row};
}

/// The first `width` floats of every row of every head.
inline std::vector<float> rowsOf(const Strided &s, int64_t heads, int64_t innerCount,
                                 int64_t rows, int64_t width) {
  std::vector<float> out;
  for (int64_t b = 0; b < heads; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < width; ++c)
        out.push_back(s.head(b, innerCount)[r * s.row + c]);
  return out;
}

struct AttentionProblem {
  int64_t outer, inner, tq, tk, d, dv;
  float scale;
  Strided q, k, v, dout;
  std::vector<uint8_t> mask; // [tq, tk] shared by every head (strides 0, 0, tk), or empty
  int64_t heads() const { return outer * inner; }
  intptr_t maskPointer() const { return mask.empty() ? 0 : intptr_t(mask.data()); }
};

/// Random q, k, v and dO (rows padded differently), and, when `masked`, a
/// mask whose row 1 is fully masked.
inline AttentionProblem makeAttentionProblem(int64_t outer, int64_t inner, int64_t tq,
                                             int64_t tk, int64_t d, int64_t dv, bool masked,
                                             std::mt19937 &rng) {
  AttentionProblem p{outer, inner, tq, tk, d, dv, 1.0f / std::sqrt(float(d)),
                     makeStrided(outer, inner, tq, d, 3, rng),
                     makeStrided(outer, inner, tk, d, 1, rng),
                     makeStrided(outer, inner, tk, dv, 0, rng),
                     makeStrided(outer, inner, tq, dv, 2, rng),
                     {}};
  if (masked) {
    p.mask.resize(size_t(tq * tk));
    for (int64_t i = 0; i < tq; ++i)
      for (int64_t j = 0; j < tk; ++j)
        p.mask[size_t(i * tk + j)] = i == 1 ? 0 : (j <= i + 3 || (i + j) % 5 == 0);
  }
  return p;
}

/// tfc_attention_forward on `p` into `out` (heads of [tq, dv]).
inline void cpuAttentionForward(const AttentionProblem &p, Strided &out) {
  tfc_attention_forward(p.outer, p.inner, p.tq, p.tk, p.d, p.dv, p.scale, intptr_t(p.q.data.data()),
                        p.q.outer, p.q.inner, p.q.row, intptr_t(p.k.data.data()), p.k.outer,
                        p.k.inner, p.k.row, intptr_t(p.v.data.data()), p.v.outer, p.v.inner,
                        p.v.row, p.maskPointer(), 0, 0, p.tk, intptr_t(out.data.data()), out.outer,
                        out.inner, out.row, 0, 0, 0);
}

/// tfc_attention_backward on `p` into dq, dk and dv (shaped as q, k and v).
inline void cpuAttentionBackward(const AttentionProblem &p, Strided &dq, Strided &dk,
                                 Strided &dv) {
  tfc_attention_backward(
      p.outer, p.inner, p.tq, p.tk, p.d, p.dv, p.scale, intptr_t(p.q.data.data()), p.q.outer,
      p.q.inner, p.q.row, intptr_t(p.k.data.data()), p.k.outer, p.k.inner, p.k.row,
      intptr_t(p.v.data.data()), p.v.outer, p.v.inner, p.v.row, p.maskPointer(), 0, 0, p.tk,
      intptr_t(p.dout.data.data()), p.dout.outer, p.dout.inner, p.dout.row,
      intptr_t(dq.data.data()), dq.outer, dq.inner, dq.row, intptr_t(dk.data.data()), dk.outer,
      dk.inner, dk.row, intptr_t(dv.data.data()), dv.outer, dv.inner, dv.row, 0, 0, 0, 0, 0, 0, 0,
      0);
}

/// An attention test shape: heads (outer, inner), tq x tk, widths d and dv.
struct AttentionShape {
  int64_t outer, inner, tq, tk, d, dv;
  bool masked;
};

} // namespace tfc::test

#endif // TFC_TESTS_UNIT_ATTENTIONPROBLEM_H
