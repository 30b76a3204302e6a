//===- LayerNorm.cpp - tfc_layer_norm_backward (and its forward twin) -----===//
//
// One row at a time, in L1: the statistics (recomputed from x, as the
// forward does: mean, then the centred sum of squares), x̂ and dx̂ kept in
// a small buffer, the row's two sums, then dx; the parameter gradients
// accumulate per block of rows. Sums go in 16 independent lanes (vectors
// for the compiler, no reassociation), then the lanes pairwise.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/LayerNorm.h"
#include "runtime/ThreadPool.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <algorithm>
#include <cmath>
#include <vector>

// Vector arguments of inline functions: the ABI note does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace {

constexpr int kLanes = 16;

/// The lanes' sum, pairwise (halves, then quarters, ...): four dependent
/// adds instead of sixteen, the same order every time.
[[gnu::always_inline]] inline float combine(float (&lanes)[kLanes]) {
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l)
      lanes[l] += lanes[l + width];
  return lanes[0];
}

/// Σ_j a[j] in kLanes chains (a vector for the compiler, no
/// reassociation), then the lanes pairwise.
[[gnu::always_inline]] inline float laneSum(const float *__restrict a, int64_t d) {
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= d; j += kLanes)
    for (int l = 0; l < kLanes; ++l)
      lanes[l] += a[j + l];
  for (int l = 0; j < d; ++j, ++l)
    lanes[l] += a[j];
  return combine(lanes);
}

/// Σ_j a[j] b[j], the same way.
[[gnu::always_inline]] inline float laneDot(const float *__restrict a, const float *__restrict b,
                                            int64_t d) {
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= d; j += kLanes)
    for (int l = 0; l < kLanes; ++l)
      lanes[l] += a[j + l] * b[j + l];
  for (int l = 0; j < d; ++j, ++l)
    lanes[l] += a[j] * b[j];
  return combine(lanes);
}

/// One row: dx, and its terms of dgamma and dbeta added to `pg`, `pb`.
[[gnu::always_inline]] inline void
rowBackward(int64_t d, float eps, const float *__restrict x, const float *__restrict gamma,
            const float *__restrict g, float *__restrict dx, float *__restrict pg,
            float *__restrict pb, float *__restrict xhat, float *__restrict dxhat) {
  const float invD = 1.0f / float(d);
  const float mean = laneSum(x, d) * invD;
  for (int64_t j = 0; j < d; ++j)
    xhat[j] = x[j] - mean;
  const float rstd = 1.0f / std::sqrt(laneDot(xhat, xhat, d) * invD + eps);
  for (int64_t j = 0; j < d; ++j) {
    xhat[j] *= rstd;
    dxhat[j] = g[j] * gamma[j];
    pg[j] += g[j] * xhat[j];
    pb[j] += g[j];
  }
  const float meanDxhat = laneSum(dxhat, d) * invD;
  const float meanDxhatXhat = laneDot(dxhat, xhat, d) * invD;
  for (int64_t j = 0; j < d; ++j)
    dx[j] = rstd * (dxhat[j] - meanDxhat - xhat[j] * meanDxhatXhat);
}

// GCC/Clang vector types, as in Attention.cpp: 8 floats, one AVX register
// with -march=native. Rows whose width is a multiple of 8 (every model's)
// take this path.
typedef float F8 __attribute__((vector_size(32)));
typedef float F8u __attribute__((vector_size(32), aligned(4), may_alias));

[[gnu::always_inline]] inline F8 load8(const float *p) { return *reinterpret_cast<const F8u *>(p); }
[[gnu::always_inline]] inline void store8(float *p, const F8 &v) {
  *reinterpret_cast<F8u *>(p) = v;
}
[[gnu::always_inline]] inline F8 splat(float x) { return F8{x, x, x, x, x, x, x, x}; }

/// The lanes' sum, pairwise (halves, quarters, pairs).
[[gnu::always_inline]] inline float hsum(F8 v) {
  v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
  v += __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5);
  v += __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
  return v[0];
}

/// hsum of eight vectors at once, out[i] = hsum(v[i]): the same tree of
/// adds (lanes l + l^4, then + l^2, then + l^1), eight rows a level side by
/// side, so the same bits, in 22 operations instead of 56.
[[gnu::always_inline]] inline F8 hsum8(const F8 (&v)[8]) {
  F8 a[4]; // a[i]: the halves' sums of rows 2i (lanes 0-3) and 2i + 1 (4-7)
  for (int i = 0; i < 4; ++i)
    a[i] = __builtin_shufflevector(v[2 * i], v[2 * i + 1], 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(v[2 * i], v[2 * i + 1], 4, 5, 6, 7, 12, 13, 14, 15);
  F8 b[2]; // b[i]: the quarters' sums of rows 4i, 4i + 2 (lanes 0-3), 4i + 1, 4i + 3
  for (int i = 0; i < 2; ++i)
    b[i] = __builtin_shufflevector(a[2 * i], a[2 * i + 1], 0, 1, 8, 9, 4, 5, 12, 13) +
           __builtin_shufflevector(a[2 * i], a[2 * i + 1], 2, 3, 10, 11, 6, 7, 14, 15);
  // Rows 0, 2, 4, 6, 1, 3, 5, 7.
  const F8 c = __builtin_shufflevector(b[0], b[1], 0, 2, 8, 10, 4, 6, 12, 14) +
               __builtin_shufflevector(b[0], b[1], 1, 3, 9, 11, 5, 7, 13, 15);
  return __builtin_shufflevector(c, c, 0, 4, 1, 5, 2, 6, 3, 7);
}

/// v[i] = 1 / sqrt(v[i]) for the whole array at once: with AVX, vector
/// square roots and divisions, correctly rounded as the scalar ones (so the
/// same bits). One row's after another, perf put a quarter of
/// rowsBackward8's samples on them (the reverse task's d = 32; the kernel
/// gained less: its time is mostly elsewhere). (GCC keeps each std::sqrt a
/// call it will not vectorise, for errno.)
void reciprocalSqrts(float *__restrict v, int64_t n) {
  int64_t i = 0;
#if defined(__AVX__) && defined(__GNUC__)
  for (; i + 8 <= n; i += 8)
    store8(v + i, splat(1.0f) / F8(__builtin_ia32_sqrtps256(load8(v + i))));
#endif
  for (; i < n; ++i)
    v[i] = 1.0f / std::sqrt(v[i]);
}

/// rowBackward for `count` rows of d floats, d a multiple of 8, a vector at
/// a time and in phases over the rows (statistics, then sums, then dx):
/// each phase's rows are independent chains the CPU overlaps, where one row
/// after another would wait on each row's chain of reductions. `xhat` holds
/// count x d floats, `stats` 3 x count.
/// With D > 0 (d == D) the row's vectors are a count the compiler knows, and
/// the block's sums for dgamma and dbeta stay in registers across its rows
/// (through memory, each row's adds waited on the row before's stores).
template <int64_t D>
void rowsBackward8(int64_t count, int64_t d, float eps, const float *__restrict x,
                   const float *__restrict gamma, const float *__restrict g, float *__restrict dx,
                   float *__restrict pg, float *__restrict pb, float *__restrict xhat,
                   float *__restrict stats) {
  if constexpr (D > 0)
    d = D;
  const float invD = 1.0f / float(d);
  float *rstds = stats, *as = stats + count, *bs = stats + 2 * count;
  // Rows by eights, their horizontal sums side by side (hsum8), then the
  // rest one by one: the same operations on every row either way.
  auto rowSum = [&](int64_t r) {
    const float *xr = x + r * d;
    F8 sum = {};
    for (int64_t j = 0; j < d; j += 8)
      sum += load8(xr + j);
    return sum;
  };
  // Stores row r's centred values in xhat; returns their squares' lanes.
  auto centredSquares = [&](int64_t r, float mean) {
    const float *xr = x + r * d;
    float *xh = xhat + r * d;
    F8 squares = {};
    for (int64_t j = 0; j < d; j += 8) {
      F8 centred = load8(xr + j) - splat(mean);
      store8(xh + j, centred);
      squares += centred * centred;
    }
    return squares;
  };
  const int64_t eights = count / 8 * 8;
  for (int64_t r0 = 0; r0 < eights; r0 += 8) {
    F8 sums[8], squares[8];
    for (int i = 0; i < 8; ++i)
      sums[i] = rowSum(r0 + i);
    const F8 means = hsum8(sums) * invD;
    for (int i = 0; i < 8; ++i)
      squares[i] = centredSquares(r0 + i, means[i]);
    store8(rstds + r0, hsum8(squares) * invD + eps);
  }
  for (int64_t r = eights; r < count; ++r)
    rstds[r] = hsum(centredSquares(r, hsum(rowSum(r)) * invD)) * invD + eps;
  reciprocalSqrts(rstds, count);
  constexpr int64_t kHeld = D > 0 ? D / 8 : 1; // vectors of pg and pb in registers
  F8 heldG[kHeld], heldB[kHeld];
  if constexpr (D > 0)
    for (int64_t v = 0; v < kHeld; ++v)
      heldG[v] = load8(pg + 8 * v), heldB[v] = load8(pb + 8 * v);
  // A row's sums of dxhat and dxhat * xhat (its dgamma and dbeta terms into
  // the held or stored block sums, in row order).
  auto sumsOfRow = [&](int64_t r, F8 &sumDxhat, F8 &sumDxhatXhat) {
    const float *gr = g + r * d;
    float *xh = xhat + r * d;
    const F8 rstd = splat(rstds[r]);
    sumDxhat = F8{}, sumDxhatXhat = F8{};
    for (int64_t j = 0; j < d; j += 8) {
      F8 xhj = load8(xh + j) * rstd, gj = load8(gr + j), dxh = gj * load8(gamma + j);
      store8(xh + j, xhj);
      sumDxhat += dxh;
      sumDxhatXhat += dxh * xhj;
      if constexpr (D > 0) {
        heldG[j / 8] += gj * xhj;
        heldB[j / 8] += gj;
      } else {
        store8(pg + j, load8(pg + j) + gj * xhj);
        store8(pb + j, load8(pb + j) + gj);
      }
    }
  };
  for (int64_t r0 = 0; r0 < eights; r0 += 8) {
    F8 sumDxhat[8], sumDxhatXhat[8];
    for (int i = 0; i < 8; ++i)
      sumsOfRow(r0 + i, sumDxhat[i], sumDxhatXhat[i]);
    store8(as + r0, hsum8(sumDxhat) * invD);
    store8(bs + r0, hsum8(sumDxhatXhat) * invD);
  }
  for (int64_t r = eights; r < count; ++r) {
    F8 sumDxhat, sumDxhatXhat;
    sumsOfRow(r, sumDxhat, sumDxhatXhat);
    as[r] = hsum(sumDxhat) * invD;
    bs[r] = hsum(sumDxhatXhat) * invD;
  }
  if constexpr (D > 0)
    for (int64_t v = 0; v < kHeld; ++v)
      store8(pg + 8 * v, heldG[v]), store8(pb + 8 * v, heldB[v]);
  for (int64_t r = 0; r < count; ++r) {
    const float *gr = g + r * d, *xh = xhat + r * d;
    float *dxr = dx + r * d;
    const F8 rstd = splat(rstds[r]), a = splat(as[r]), b = splat(bs[r]);
    for (int64_t j = 0; j < d; j += 8)
      store8(dxr + j, rstd * (load8(gr + j) * load8(gamma + j) - a - load8(xh + j) * b));
  }
}

/// The rows of blocks [b0, b1).
void blocksBackward(int64_t b0, int64_t b1, int64_t rows, int64_t d, int64_t blockRows,
                    int64_t blocks, float eps, const float *x, const float *gamma, const float *g,
                    float *dx, float *partial) {
  const bool vectors = d % 8 == 0;
  std::vector<float> work(vectors ? size_t(blockRows) * (d + 3) : 2 * size_t(d));
  for (int64_t block = b0; block < b1; ++block) {
    float *pg = partial + block * d, *pb = partial + (blocks + block) * d;
    std::fill(pg, pg + d, 0.0f);
    std::fill(pb, pb + d, 0.0f);
    int64_t first = block * blockRows, count = std::min<int64_t>(rows - first, blockRows);
    if (vectors) {
      // Narrow rows (the reverse task's 32) with their sums in registers;
      // wider ones (the set anomaly's 256) would spill them.
      const auto rowsBackward = d == 32   ? rowsBackward8<32>
                                : d == 64 ? rowsBackward8<64>
                                          : rowsBackward8<0>;
      rowsBackward(count, d, eps, x + first * d, gamma, g + first * d, dx + first * d, pg, pb,
                   work.data(), work.data() + size_t(blockRows) * d);
      continue;
    }
    for (int64_t r = first; r < first + count; ++r)
      rowBackward(d, eps, x + r * d, gamma, g + r * d, dx + r * d, pg, pb, work.data(),
                  work.data() + d);
  }
}

/// A dropout's draw as both kernels take it (runtime/Abi.h's layer_norm and
/// layer_norm_backward): the op `key` under the i32 at `seed` (0: no mask),
/// element i of the call element SampleOffset[0] x sampleSize + i of the
/// op, as the GPU's kernels and tf.dropout's generated loop draw it.
struct DropoutDraw {
  bool masked;
  uint32_t seed = 0;
  uint64_t key, first = 0;
  uint32_t threshold;
  float keep;
  DropoutDraw(intptr_t seed, intptr_t sampleOffset, intptr_t sampleSize, intptr_t key,
              intptr_t threshold, float keep)
      : masked(seed != 0), key(uint64_t(key)), threshold(uint32_t(threshold)), keep(keep) {
    if (!seed)
      return;
    this->seed = uint32_t(*reinterpret_cast<const int32_t *>(seed));
    if (sampleOffset)
      first = uint64_t(int64_t(*reinterpret_cast<const int32_t *>(sampleOffset)) * sampleSize);
  }
  /// Element i's value `v` after the dropout (itself without a mask).
  float operator()(float v, int64_t i) const {
    namespace k = tfc::rt::cuda::kernels;
    return masked
               ? k::droppedOut(v, k::dropoutWord(seed, key, first + uint64_t(i)), threshold, keep)
               : v;
  }
};

} // namespace

extern "C" void tfc_layer_norm_backward(intptr_t rows, intptr_t d, intptr_t blockRows, float eps,
                                        intptr_t x, intptr_t gamma, intptr_t g, intptr_t gate,
                                        intptr_t dx, intptr_t dgamma, intptr_t dbeta,
                                        intptr_t scratch, intptr_t dropout, intptr_t dropoutBits,
                                        intptr_t seed, intptr_t sampleOffset, intptr_t sampleSize,
                                        intptr_t key, intptr_t threshold, float keep,
                                        intptr_t gateBits) {
  namespace k = tfc::rt::cuda::kernels;
  if (d <= 0)
    return;
  const int64_t blocks = rows > 0 ? (rows + blockRows - 1) / blockRows : 0;
  auto *partial = reinterpret_cast<float *>(scratch);
  const auto *xs = reinterpret_cast<const float *>(x);
  const auto *gs = reinterpret_cast<const float *>(g);
  // A gated adjoint (only --target=cuda-emulated passes one): gated into a
  // copy first, the rows' passes as they are.
  std::vector<float> gated;
  if (gate) {
    gated.resize(size_t(std::max<int64_t>(rows, 0) * d));
    for (size_t i = 0; i < gated.size(); ++i)
      gated[i] = gateBits ? k::gatedGradBits(gs[i], reinterpret_cast<const uint16_t *>(gate)[i])
                          : k::gatedGrad(gs[i], reinterpret_cast<const float *>(gate)[i]);
    gs = gated.data();
  }
  const auto *gammas = reinterpret_cast<const float *>(gamma);
  auto *dxs = reinterpret_cast<float *>(dx);
  const int64_t elements = std::max<int64_t>(rows, 0) * d;
  std::vector<float> dxOnly; // dx that only its dropout reads
  if (!dxs) {
    dxOnly.resize(size_t(elements));
    dxs = dxOnly.data();
  }
  tfc::rt::parallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
    blocksBackward(b0, b1, rows, d, blockRows, blocks, eps, xs, gammas, gs, dxs, partial);
  });
  if (dropout) { // no seed: dx itself
    const DropoutDraw draw(seed, sampleOffset, sampleSize, key, threshold, keep);
    tfc::rt::parallelFor(elements, 4096, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const float v = draw(dxs[i], i);
        if (dropoutBits)
          reinterpret_cast<uint16_t *>(dropout)[i] = k::bf16Bits(v);
        else
          reinterpret_cast<float *>(dropout)[i] = v;
      }
    });
  }
  auto *dgammas = reinterpret_cast<float *>(dgamma), *dbetas = reinterpret_cast<float *>(dbeta);
  std::fill(dgammas, dgammas + d, 0.0f);
  std::fill(dbetas, dbetas + d, 0.0f);
  for (int64_t block = 0; block < blocks; ++block)
    for (int64_t j = 0; j < d; ++j) {
      dgammas[j] += partial[block * d + j];
      dbetas[j] += partial[(blocks + block) * d + j];
    }
}

extern "C" void tfc_layer_norm_forward(intptr_t rows, intptr_t d, float eps, intptr_t x,
                                       intptr_t gamma, intptr_t beta, intptr_t y, intptr_t relu,
                                       intptr_t y16, intptr_t residual, intptr_t pre, intptr_t seed,
                                       intptr_t sampleOffset, intptr_t sampleSize, intptr_t key,
                                       intptr_t threshold, float keep) {
  namespace k = tfc::rt::cuda::kernels;
  if (d <= 0)
    return;
  const auto *xs = reinterpret_cast<const float *>(x);
  if (pre) { // the residual sum first, as the GPU's kernel and its loop nest
    const auto *residuals = reinterpret_cast<const float *>(residual);
    auto *pres = reinterpret_cast<float *>(pre);
    const DropoutDraw draw(seed, sampleOffset, sampleSize, key, threshold, keep);
    tfc::rt::parallelFor(std::max<int64_t>(rows, 0) * d, 4096, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const float v = draw(xs[i], i);
        pres[i] = residuals ? residuals[i] + v : v;
      }
    });
    xs = pres;
  }
  const auto *gammas = reinterpret_cast<const float *>(gamma);
  const auto *betas = reinterpret_cast<const float *>(beta);
  auto *ys = reinterpret_cast<float *>(y);
  auto *bits = reinterpret_cast<uint16_t *>(y16);
  tfc::rt::parallelFor(rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float *xr = xs + r * d;
      const float mean = k::layerNormMean(laneSum(xr, d), d);
      float lanes[kLanes] = {};
      for (int64_t j = 0; j < d; ++j)
        lanes[j % kLanes] += k::layerNormSquare(xr[j], mean);
      const float rstd = k::layerNormRstd(combine(lanes), d, eps);
      for (int64_t j = 0; j < d; ++j) {
        const float out = k::layerNormOut(xr[j], mean, rstd, gammas[j], betas[j]);
        const float value = relu ? k::reluOf(out) : out;
        if (ys)
          ys[r * d + j] = value;
        if (bits)
          bits[r * d + j] = k::bf16Bits(value);
      }
    }
  });
}
