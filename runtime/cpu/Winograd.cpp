//===- Winograd.cpp - 1-d convolutions of 5 taps by minimal filtering ---===//
//
// A convolution of kernel 5 computes each output from five inputs, five
// multiply-adds per output and input channel. Winograd's minimal filtering
// F(4, 5) computes four outputs of a row from eight inputs with eight
// multiplies, so the channel sums become eight GEMMs of 2.5x fewer
// multiply-adds (Lavin & Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2015, in one dimension):
//
//   y[4t + i] = sum_xi AT[i][xi] * sum_c U[xi][o][c] * V[xi][c][t]
//   U[xi][o][c] = sum_j G[xi][j] w[o][c][j]        (the weights, once a call)
//   V[xi][c][t] = sum_j BT[xi][j] x[c][4t + j - pad] (the inputs, tile t)
//
// The matrices come from the Toom-Cook construction for the points 0, 1,
// -1, 2, -2, 1/2, -1/2 and infinity, computed once in double: G and AT
// evaluate polynomials of degree 4 and 3 at the points, BT is the transposed
// inverse of the 8 x 8 evaluation matrix (interpolation). Over 64 channels
// the result differs from the direct sum by a few units of the sixth
// significant digit (WinogradTest).
//
// The batch goes in chunks of samples whose tiles make up a few hundred
// GEMM columns; each thread transforms its chunk's inputs, runs the eight
// GEMMs (tfc_sgemm, inline on that thread), transforms the products back
// into its samples' rows and runs the epilogue on them. Every output is the
// same sequence of operations whatever the chunking or the thread count:
// the same bits on any --threads.
//
// The weight gradient, dW[o][c][j] = sum_n sum_t dy[n][o][t] x[n][c][t + j -
// pad], is the same correlation the other way round: five taps from tiles of
// four outputs, F(5, 4) over the same points (the same BT for x's tiles, dy's
// four values a tile through G' of degree 3, five taps out through AT' of
// degree 4), eight GEMMs M[xi] = V[xi] Ud[xi]^T that sum over every sample's
// tiles (K = samples x tiles). The samples go in four fixed groups, each
// summed in order by one thread and the groups then added in order: the
// same bits on any thread count.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Gemm.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace {

constexpr int kTaps = 5, kOut = 4, kPoints = kOut + kTaps - 1; // F(4, 5): 8 points
// GEMM columns (tiles of a chunk's samples) to aim for: enough for the
// kernels' panels, few enough that a chunk's transforms stay in L2.
constexpr int64_t kChunkColumns = 160;
// The weight gradient's fixed groups of samples (see above).
constexpr int64_t kGradientGroups = 4;

/// out = m in, and how to compute it in fewer operations: the points come
/// in pairs p, -p, so two rows of a transform may agree on some columns and
/// be opposite on the others (out[r] = E + O and out[r2] = E - O, one sum
/// each of the columns they agree and disagree on), and two columns may be
/// equal or opposite in every row (their inputs added and subtracted once:
/// each row then reads the sum or the difference). BT's and G's rows pair
/// up, AT's columns: 30 operations instead of 42 for BT, 16 instead of 22
/// for AT.
template <int R, int C> struct Transform {
  float m[R][C];
  int columnPartner[C]; // c2 > c for the first column of a pair, else -1
  float e[R][C];        // m with the column pairs read as sum (c) and difference (c2)
  int rowPartner[R];    // r2 > r for the first row of a pair (in e), else -1
  bool rowSecond[R];    // r is some row's partner

  /// Fills the partners and e from m.
  constexpr void plan() {
    bool columnTaken[C] = {};
    partners(C, columnPartner, columnTaken, [&](int c, int c2) {
      return pairs([&](int r) { return m[r][c]; }, [&](int r) { return m[r][c2]; }, R);
    });
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c)
        e[r][c] = m[r][c];
    for (int c = 0; c < C; ++c)
      if (const int c2 = columnPartner[c]; c2 >= 0)
        for (int r = 0; r < R; ++r) {
          e[r][c] = m[r][c2] == m[r][c] ? m[r][c] : 0.0f;
          e[r][c2] = m[r][c] != 0 && m[r][c2] == -m[r][c] ? m[r][c] : 0.0f;
        }
    for (int r = 0; r < R; ++r)
      rowSecond[r] = false;
    partners(R, rowPartner, rowSecond, [&](int r, int r2) {
      return pairs([&](int c) { return e[r][c]; }, [&](int c) { return e[r2][c]; }, C);
    });
  }
  /// partner[i] = the first j > i, not yet taken, that `pair(i, j)` accepts,
  /// for each i not taken itself (then taken[j] = true), else -1: each index
  /// in one pair at most.
  template <class Pair>
  static constexpr void partners(int n, int *partner, bool *taken, Pair pair) {
    for (int i = 0; i < n; ++i) {
      partner[i] = -1;
      for (int j = i + 1; j < n && partner[i] < 0 && !taken[i]; ++j)
        if (!taken[j] && pair(i, j))
          partner[i] = j, taken[j] = true;
    }
  }
  /// Whether a and b (n entries) are equal where some are and opposite
  /// where the others are, both kinds present.
  template <class A, class B> static constexpr bool pairs(A a, B b, int n) {
    bool same = false, opposite = false;
    for (int i = 0; i < n; ++i) {
      if (a(i) == 0 && b(i) == 0)
        continue;
      if (a(i) == b(i))
        same = true;
      else if (a(i) == -b(i))
        opposite = true;
      else
        return false;
    }
    return same && opposite;
  }
};

/// F(M, R): M outputs of a correlation with R taps from M + R - 1 = 8 inputs.
template <int M, int R> struct Minimal {
  static_assert(M + R - 1 == kPoints, "eight points");
  Transform<kPoints, kPoints> bt; // V = BT d (the inputs)
  Transform<kPoints, R> g;        // U = G g (the taps)
  Transform<M, kPoints> at;       // y = AT (U . V)
};

/// point^e, or for the point at infinity (the last) the leading
/// coefficient's selector: 1 where e is the degree.
constexpr double power(int point, int e, int degree) {
  constexpr double points[kPoints - 1] = {0, 1, -1, 2, -2, 0.5, -0.5};
  if (point == kPoints - 1)
    return e == degree ? 1.0 : 0.0;
  double p = 1;
  for (int i = 0; i < e; ++i)
    p *= points[point];
  return p;
}

/// G and AT evaluate polynomials of degree R - 1 and M - 1 at the points;
/// BT is the transposed inverse of the evaluation matrix of degree 7
/// (Gauss-Jordan with partial pivoting, in double, at compile time). Every
/// entry is a dyadic rational or close to one; the zeros are exact, so the
/// transforms below skip them.
template <int M, int R> constexpr Minimal<M, R> makeMinimal() {
  Minimal<M, R> t{};
  double v[kPoints][2 * kPoints] = {};
  for (int p = 0; p < kPoints; ++p) {
    for (int j = 0; j < R; ++j)
      t.g.m[p][j] = float(power(p, j, R - 1));
    for (int i = 0; i < M; ++i)
      t.at.m[i][p] = float(power(p, i, M - 1));
    for (int e = 0; e < kPoints; ++e)
      v[p][e] = power(p, e, kPoints - 1);
    v[p][kPoints + p] = 1;
  }
  auto magnitude = [](double x) { return x < 0 ? -x : x; };
  for (int col = 0; col < kPoints; ++col) {
    int pivot = col;
    for (int r = col + 1; r < kPoints; ++r)
      if (magnitude(v[r][col]) > magnitude(v[pivot][col]))
        pivot = r;
    for (int e = 0; e < 2 * kPoints; ++e) {
      const double swap = v[col][e];
      v[col][e] = v[pivot][e], v[pivot][e] = swap;
    }
    const double scale = 1 / v[col][col];
    for (int e = 0; e < 2 * kPoints; ++e)
      v[col][e] *= scale;
    for (int r = 0; r < kPoints; ++r)
      if (r != col && v[r][col] != 0) {
        const double f = v[r][col];
        for (int e = 0; e < 2 * kPoints; ++e)
          v[r][e] -= f * v[col][e];
      }
  }
  for (int i = 0; i < kPoints; ++i)
    for (int j = 0; j < kPoints; ++j) {
      // Entries that are zero in exact arithmetic come out of the
      // elimination as a few ulps at most.
      const double e = v[j][kPoints + i]; // (V^-1)^T[i][j] = V^-1[j][i]
      t.bt.m[i][j] = magnitude(e) < 1e-12 ? 0.0f : float(e);
    }
  t.bt.plan();
  t.g.plan();
  t.at.plan();
  return t;
}

constexpr Minimal<kOut, kTaps> kForward = makeMinimal<kOut, kTaps>();  // outputs from taps
constexpr Minimal<kTaps, kOut> kGradient = makeMinimal<kTaps, kOut>(); // taps from outputs

// The pairs the transforms rely on for their operation counts (a change in
// the construction that lost them would still compute right, only slower).
static_assert(kForward.bt.rowPartner[1] == 2 && kForward.bt.rowPartner[3] == 4 &&
                  kForward.bt.rowPartner[5] == 6,
              "B^T's rows for p and -p pair up");
static_assert(kForward.at.columnPartner[1] == 2 && kForward.at.columnPartner[3] == 4 &&
                  kForward.at.columnPartner[5] == 6,
              "A^T's columns for p and -p pair up");
static_assert(kGradient.g.rowPartner[1] == 2 && kGradient.at.columnPartner[1] == 2,
              "G' and A'^T pair up likewise");

/// A thread's scratch, grown as needed and kept across calls.
struct Scratch {
  std::vector<float> v, m, ud, padded; // padded: a row, without AVX-512
};

Scratch &scratch() {
  thread_local Scratch s;
  return s;
}

/// Rows to cut into tiles: row (s, c) at x + s * strideX + c * ldx, its
/// padded float q being x[q - pad] inside [0, width), else 0.
struct Rows {
  const float *x;
  int64_t ldx, strideX, pad, width, channels;
};

struct Conv {
  int64_t batch, outChannels, out;
  const float *w;
  int64_t ldw;
  Rows in; // in.channels: the input channels
  float *y;
  int64_t ldy, strideY;
  bool accumulate;
  void (*epilogue)(void *, int64_t, int64_t);
  void *context;
  int64_t tiles; // ceil(out / 4)
};

// The transforms go 16 tiles at a time. A chunk's V and M have rows of
// `pitch` = cols + 16 floats: a sample's last group of tiles may write (V)
// or read (M) up to 15 columns past its own, into the next sample's, which
// that sample's transform then overwrites, or into the row's spare 16.

/// out = t.m in, the zeros skipped and the ones added, by t's pairs of
/// columns and rows (constants once the loops are unrolled: t is one of the
/// constexpr transforms).
template <int R, int C, class Vec, class Fma, class Add, class Sub, class Mul>
inline void apply(const Transform<R, C> &t, const Vec (&in)[C], Vec (&out)[R], Fma fma, Add add,
                  Sub sub, Mul mul) {
  Vec x[C];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c)
    x[c] = in[c];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c)
    if (const int c2 = t.columnPartner[c]; c2 >= 0)
      x[c] = add(in[c], in[c2]), x[c2] = sub(in[c], in[c2]);
  // The sum of e[r][c] x[c] over the columns `take` picks.
  auto sum = [&](int r, auto take) {
    bool started = false;
    Vec acc{};
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const float e = t.e[r][c];
      if (e == 0.0f || !take(c))
        continue;
      if (!started)
        acc = e == 1.0f ? x[c] : mul(e, x[c]);
      else
        acc = e == 1.0f ? add(acc, x[c]) : e == -1.0f ? sub(acc, x[c]) : fma(e, x[c], acc);
      started = true;
    }
    return acc;
  };
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    if (t.rowSecond[r])
      continue;
    const int r2 = t.rowPartner[r];
    if (r2 < 0) {
      out[r] = sum(r, [](int) { return true; });
      continue;
    }
    const Vec same = sum(r, [&](int c) { return t.e[r2][c] == t.e[r][c]; });
    const Vec opposite = sum(r, [&](int c) { return t.e[r2][c] != t.e[r][c]; });
    out[r] = add(same, opposite);
    out[r2] = sub(same, opposite);
  }
}

/// apply on scalars (the build without AVX-512, and the small transforms).
template <int R, int C>
inline void applyScalar(const Transform<R, C> &mat, const float (&in)[C], float (&out)[R]) {
  apply(
      mat, in, out, [](float e, float x, float acc) { return e * x + acc; }, std::plus<float>(),
      std::minus<float>(), std::multiplies<float>());
}

/// The next of the eight planes of V, M or Ud. The empty asm hides the
/// address from the optimiser, which would otherwise keep all eight
/// addresses of a group across the loop, spill them and reload one a store
/// (a fifth of the input transform's samples).
template <class Float> inline Float *nextPlane(Float *at, int64_t plane) {
  at += plane;
  asm("" : "+r"(at));
  return at;
}

#if defined(__AVX512F__)
// GCC 12 takes the _mm512_undefined_ps() inside the AVX-512 shuffle
// intrinsics for an uninitialised variable.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

constexpr auto fma16 = [](float c, __m512 x, __m512 acc) {
  return _mm512_fmadd_ps(_mm512_set1_ps(c), x, acc);
};
constexpr auto mul16 = [](float c, __m512 x) { return _mm512_mul_ps(_mm512_set1_ps(c), x); };
constexpr auto add16 = [](__m512 x, __m512 y) { return _mm512_add_ps(x, y); };
constexpr auto sub16 = [](__m512 x, __m512 y) { return _mm512_sub_ps(x, y); };

/// Which floats of a row's 64 from q0 = 64 * gi lie inside the input:
/// masks[4 * gi + v] for the 16 floats from q0 + 16 v, x[q0 + 16 v + l - pad]
/// inside [0, width). The same for every row of a call, so they are worked
/// out once (per load, the clamps had been a tenth of the transform).
void loadMasks(int64_t groups, int64_t pad, int64_t width, std::vector<__mmask16> &masks) {
  masks.resize(size_t(4 * groups));
  for (int64_t gi = 0; gi < groups; ++gi)
    for (int v = 0; v < 4; ++v) {
      const int64_t first = 64 * gi + 16 * v - pad;
      const int64_t lo = std::clamp<int64_t>(-first, 0, 16),
                    hi = std::clamp<int64_t>(width - first, 0, 16);
      masks[size_t(4 * gi + v)] = __mmask16(((1u << hi) - 1) & ~((1u << lo) - 1));
    }
}

/// The four phases of the padded row's 64 floats from q0: p[q][u] = the
/// float at q0 + 4u + q, x[q0 + 4u + q - pad] inside the input, else 0
/// (masked loads, `mask` the four of loadMasks: the padding is never
/// copied, nor read).
inline void deinterleave4(const float *x, int64_t q0, int64_t pad, const __mmask16 *mask,
                          __m512 (&p)[4]) {
  __m512 in[4];
#pragma GCC unroll 4
  for (int v = 0; v < 4; ++v)
    in[v] = _mm512_maskz_loadu_ps(mask[v], x + q0 + 16 * v - pad);
  const __m512 i0 = in[0], i1 = in[1], i2 = in[2], i3 = in[3];
  // 128-bit lanes hold one tile (4 floats) each: gather tiles u, u + 4, ...
  const __m512 t0 = _mm512_shuffle_f32x4(i0, i1, 0x88), t1 = _mm512_shuffle_f32x4(i0, i1, 0xDD),
               t2 = _mm512_shuffle_f32x4(i2, i3, 0x88), t3 = _mm512_shuffle_f32x4(i2, i3, 0xDD);
  const __m512 e = _mm512_shuffle_f32x4(t0, t2, 0x88), g = _mm512_shuffle_f32x4(t0, t2, 0xDD),
               f = _mm512_shuffle_f32x4(t1, t3, 0x88), h = _mm512_shuffle_f32x4(t1, t3, 0xDD);
  // Lane k of e, f, g, h: tiles 4k, 4k + 1, 4k + 2, 4k + 3; transpose in lanes.
  const __m512 a = _mm512_unpacklo_ps(e, f), b = _mm512_unpackhi_ps(e, f),
               c = _mm512_unpacklo_ps(g, h), d = _mm512_unpackhi_ps(g, h);
  p[0] = _mm512_shuffle_ps(a, c, 0x44), p[1] = _mm512_shuffle_ps(a, c, 0xEE);
  p[2] = _mm512_shuffle_ps(b, d, 0x44), p[3] = _mm512_shuffle_ps(b, d, 0xEE);
}

/// deinterleave4's inverse: out[4u + i] = y[i][u], as four vectors.
inline void interleave4(const __m512 (&y)[4], __m512 (&out)[4]) {
  const __m512 a = _mm512_unpacklo_ps(y[0], y[2]), b = _mm512_unpackhi_ps(y[0], y[2]),
               c = _mm512_unpacklo_ps(y[1], y[3]), d = _mm512_unpackhi_ps(y[1], y[3]);
  // Lane k: e tile 4k, f 4k + 1, g 4k + 2, h 4k + 3, each in order.
  const __m512 e = _mm512_unpacklo_ps(a, c), f = _mm512_unpackhi_ps(a, c),
               g = _mm512_unpacklo_ps(b, d), h = _mm512_unpackhi_ps(b, d);
  const __m512 t0 = _mm512_shuffle_f32x4(e, f, 0x44), t1 = _mm512_shuffle_f32x4(g, h, 0x44),
               t2 = _mm512_shuffle_f32x4(e, f, 0xEE), t3 = _mm512_shuffle_f32x4(g, h, 0xEE);
  out[0] = _mm512_shuffle_f32x4(t0, t1, 0x88), out[1] = _mm512_shuffle_f32x4(t0, t1, 0xDD);
  out[2] = _mm512_shuffle_f32x4(t2, t3, 0x88), out[3] = _mm512_shuffle_f32x4(t2, t3, 0xDD);
}
#elif defined(__AVX2__)
// AVX2: eight tiles a vector, the same operations lane by lane (the scalar
// transforms had been 46% of a Fleuret CNN's train step on a Zen 3).
constexpr auto fma8 = [](float c, __m256 x, __m256 acc) {
  return _mm256_fmadd_ps(_mm256_set1_ps(c), x, acc);
};
constexpr auto mul8 = [](float c, __m256 x) { return _mm256_mul_ps(_mm256_set1_ps(c), x); };
constexpr auto add8 = [](__m256 x, __m256 y) { return _mm256_add_ps(x, y); };
constexpr auto sub8 = [](__m256 x, __m256 y) { return _mm256_sub_ps(x, y); };

/// The four phases of the 32 floats from x: p[q][u] = x[4u + q], tiles u in
/// order (the in-lane transpose leaves them 0 2 4 6 | 1 3 5 7).
inline void deinterleave4(const float *x, __m256 (&p)[4]) {
  const __m256 i0 = _mm256_loadu_ps(x), i1 = _mm256_loadu_ps(x + 8), i2 = _mm256_loadu_ps(x + 16),
               i3 = _mm256_loadu_ps(x + 24);
  const __m256 a = _mm256_unpacklo_ps(i0, i1), b = _mm256_unpackhi_ps(i0, i1),
               c = _mm256_unpacklo_ps(i2, i3), d = _mm256_unpackhi_ps(i2, i3);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  p[0] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(a, c, 0x44), order);
  p[1] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(a, c, 0xEE), order);
  p[2] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(b, d, 0x44), order);
  p[3] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(b, d, 0xEE), order);
}

/// deinterleave4's inverse: out[v] holds floats [8v, 8v + 8), float 4u + i
/// being y[i][u].
inline void interleave4(const __m256 (&y)[4], __m256 (&out)[4]) {
  const __m256 a = _mm256_unpacklo_ps(y[0], y[1]), b = _mm256_unpackhi_ps(y[0], y[1]),
               c = _mm256_unpacklo_ps(y[2], y[3]), d = _mm256_unpackhi_ps(y[2], y[3]);
  // Tiles u | u + 4 in the halves: e 0 | 4, f 1 | 5, g 2 | 6, h 3 | 7.
  const __m256 e = _mm256_shuffle_ps(a, c, 0x44), f = _mm256_shuffle_ps(a, c, 0xEE),
               g = _mm256_shuffle_ps(b, d, 0x44), h = _mm256_shuffle_ps(b, d, 0xEE);
  out[0] = _mm256_permute2f128_ps(e, f, 0x20), out[1] = _mm256_permute2f128_ps(g, h, 0x20);
  out[2] = _mm256_permute2f128_ps(e, f, 0x31), out[3] = _mm256_permute2f128_ps(g, h, 0x31);
}

/// Lanes 1..7 of x, then lane 0 of next: a phase of the tiles one on.
inline __m256 tilesOn(__m256 x, __m256 next) {
  const __m256i rotate = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
  return _mm256_blend_ps(_mm256_permutevar8x32_ps(x, rotate),
                         _mm256_permutevar8x32_ps(next, rotate), 0x80);
}

/// A mask of the first `n` (0..8) lanes, for maskload and maskstore.
inline __m256i firstLanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

/// V[xi][c][(s - s0) * tiles + t] = sum_j BT[xi][j] row(s, c)[4t + j] for
/// the samples [s0, s1): tile t reads the padded row's floats [4t, 4t + 8),
/// phase q at u = t and, for j >= 4, phase j - 4 at u = t + 1.
void transformInputs(const Rows &in, int64_t tiles, int64_t s0, int64_t s1, float *v, int64_t pitch,
                     [[maybe_unused]] std::vector<float> &scratch) {
  const int64_t groups = (tiles + 15) / 16, plane = in.channels * pitch;
#if !defined(__AVX512F__)
  const int64_t span = 64 * (groups + 1);
  scratch.resize(size_t(span));
  float *padded = scratch.data();
  const int64_t lo = std::min(in.pad, span), hi = std::clamp(in.pad + in.width, lo, span);
  std::fill(padded, padded + lo, 0.0f);
  std::fill(padded + hi, padded + span, 0.0f);
#endif
#if defined(__AVX512F__)
  thread_local std::vector<__mmask16> masks;
  loadMasks(groups + 1, in.pad, in.width, masks);
#endif
  for (int64_t s = s0; s < s1; ++s)
    for (int64_t c = 0; c < in.channels; ++c) {
      const float *x = in.x + s * in.strideX + c * in.ldx;
      float *row = v + c * pitch + (s - s0) * tiles; // + xi * plane
#if defined(__AVX512F__)
      __m512 cur[4], next[4];
      deinterleave4(x, 0, in.pad, masks.data(), cur);
      for (int64_t gi = 0; gi < groups; ++gi) {
        deinterleave4(x, 64 * (gi + 1), in.pad, masks.data() + 4 * (gi + 1), next);
        __m512 d[kPoints], out[kPoints];
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          d[q] = cur[q];
          d[q + 4] = _mm512_castsi512_ps(
              _mm512_alignr_epi32(_mm512_castps_si512(next[q]), _mm512_castps_si512(cur[q]), 1));
        }
        apply(kForward.bt, d, out, fma16, add16, sub16, mul16);
        float *at = row + 16 * gi;
#pragma GCC unroll 8
        for (int xi = 0; xi < kPoints; ++xi, at = nextPlane(at, plane))
          _mm512_storeu_ps(at, out[xi]);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q)
          cur[q] = next[q];
      }
#elif defined(__AVX2__)
      if (hi > lo)
        std::memcpy(padded + lo, x + (lo - in.pad), sizeof(float) * size_t(hi - lo));
      __m256 cur[4], next[4];
      deinterleave4(padded, cur);
      for (int64_t h = 0; h < 2 * groups; ++h) {
        __m256 d[kPoints], out[kPoints];
        deinterleave4(padded + 32 * (h + 1), next);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          d[q] = cur[q];
          d[q + 4] = tilesOn(cur[q], next[q]);
          cur[q] = next[q];
        }
        apply(kForward.bt, d, out, fma8, add8, sub8, mul8);
        float *at = row + 8 * h;
#pragma GCC unroll 8
        for (int xi = 0; xi < kPoints; ++xi, at = nextPlane(at, plane))
          _mm256_storeu_ps(at, out[xi]);
      }
#else
      if (hi > lo)
        std::memcpy(padded + lo, x + (lo - in.pad), sizeof(float) * size_t(hi - lo));
      for (int64_t t = 0; t < 16 * groups; ++t) {
        float d[kPoints], out[kPoints];
        for (int j = 0; j < kPoints; ++j)
          d[j] = padded[4 * t + j];
        applyScalar(kForward.bt, d, out);
        for (int xi = 0; xi < kPoints; ++xi)
          row[xi * plane + t] = out[xi];
      }
#endif
    }
}

/// Ud[xi][o][(s - s0) * tiles + t] = sum_i G'[xi][i] dy(s, o)[4t + i] for
/// the samples [s0, s1), dy's floats past its width read as 0.
void transformOutputGradients(const Rows &dy, int64_t tiles, int64_t s0, int64_t s1, float *ud,
                              int64_t pitch) {
  const int64_t groups = (tiles + 15) / 16, plane = dy.channels * pitch;
#if defined(__AVX512F__)
  thread_local std::vector<__mmask16> masks;
  loadMasks(groups, 0, dy.width, masks);
#endif
  for (int64_t s = s0; s < s1; ++s)
    for (int64_t o = 0; o < dy.channels; ++o) {
      const float *row = dy.x + s * dy.strideX + o * dy.ldx;
      float *dst = ud + o * pitch + (s - s0) * tiles; // + xi * plane
#if defined(__AVX512F__)
      for (int64_t gi = 0; gi < groups; ++gi) {
        __m512 p[4], out[kPoints];
        deinterleave4(row, 64 * gi, 0, masks.data() + 4 * gi, p);
        apply(kGradient.g, p, out, fma16, add16, sub16, mul16);
        float *at = dst + 16 * gi;
#pragma GCC unroll 8
        for (int xi = 0; xi < kPoints; ++xi, at = nextPlane(at, plane))
          _mm512_storeu_ps(at, out[xi]);
      }
#elif defined(__AVX2__)
      for (int64_t h = 0; h < 2 * groups; ++h) {
        // The row's 32 floats from 32 h, zeros past its width.
        const float *from = row + 32 * h;
        alignas(32) float tail[32];
        if (32 * h + 32 > dy.width) {
          const int64_t n = std::clamp<int64_t>(dy.width - 32 * h, 0, 32);
          std::fill(std::copy(from, from + n, tail), tail + 32, 0.0f);
          from = tail;
        }
        __m256 p[4], out[kPoints];
        deinterleave4(from, p);
        apply(kGradient.g, p, out, fma8, add8, sub8, mul8);
        float *at = dst + 8 * h;
#pragma GCC unroll 8
        for (int xi = 0; xi < kPoints; ++xi, at = nextPlane(at, plane))
          _mm256_storeu_ps(at, out[xi]);
      }
#else
      for (int64_t t = 0; t < 16 * groups; ++t) {
        float d[kOut], out[kPoints];
        for (int i = 0; i < kOut; ++i)
          d[i] = 4 * t + i < dy.width ? row[4 * t + i] : 0.0f;
        applyScalar(kGradient.g, d, out);
        for (int xi = 0; xi < kPoints; ++xi)
          dst[xi * plane + t] = out[xi];
      }
#endif
    }
}

/// y's rows of the samples [s0, s1) from the products M[xi][o][col].
void transformOutputs(const Conv &cv, int64_t s0, int64_t s1, const float *m, int64_t pitch) {
  const int64_t tiles = cv.tiles, groups = (tiles + 15) / 16, plane = cv.outChannels * pitch;
  for (int64_t s = s0; s < s1; ++s)
    for (int64_t o = 0; o < cv.outChannels; ++o) {
      const float *in = m + o * pitch + (s - s0) * tiles;
      float *y = cv.y + s * cv.strideY + o * cv.ldy;
#if defined(__AVX512F__)
      for (int64_t gi = 0; gi < groups; ++gi) {
        __m512 mv[kPoints], yv[kOut], out[4];
        const float *at = in + 16 * gi;
#pragma GCC unroll 8
        for (int xi = 0; xi < kPoints; ++xi, at = nextPlane(at, plane))
          mv[xi] = _mm512_loadu_ps(at);
        apply(kForward.at, mv, yv, fma16, add16, sub16, mul16);
        interleave4(yv, out);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          const int64_t at = 64 * gi + 16 * q, left = std::clamp<int64_t>(cv.out - at, 0, 16);
          const __mmask16 mask = __mmask16((1u << left) - 1);
          __m512 value = out[q];
          if (cv.accumulate)
            value = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, y + at), value);
          _mm512_mask_storeu_ps(y + at, mask, value);
        }
      }
#elif defined(__AVX2__)
      for (int64_t h = 0; h < 2 * groups && 32 * h < cv.out; ++h) {
        __m256 mv[kPoints], yv[kOut], out[4];
        const float *at = in + 8 * h;
#pragma GCC unroll 8
        for (int xi = 0; xi < kPoints; ++xi, at = nextPlane(at, plane))
          mv[xi] = _mm256_loadu_ps(at);
        apply(kForward.at, mv, yv, fma8, add8, sub8, mul8);
        interleave4(yv, out);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          const int64_t at = 32 * h + 8 * q, left = std::clamp<int64_t>(cv.out - at, 0, 8);
          if (left == 8) {
            _mm256_storeu_ps(y + at, cv.accumulate ? _mm256_add_ps(_mm256_loadu_ps(y + at), out[q])
                                                   : out[q]);
          } else if (left > 0) {
            const __m256i mask = firstLanes(left);
            __m256 value = out[q];
            if (cv.accumulate)
              value = _mm256_add_ps(_mm256_maskload_ps(y + at, mask), value);
            _mm256_maskstore_ps(y + at, mask, value);
          }
        }
      }
#else
      for (int64_t t = 0; t < 16 * groups; ++t) {
        float mv[kPoints], yv[kOut];
        for (int xi = 0; xi < kPoints; ++xi)
          mv[xi] = in[xi * plane + t];
        applyScalar(kForward.at, mv, yv);
        for (int i = 0; i < kOut; ++i)
          if (4 * t + i < cv.out)
            y[4 * t + i] = cv.accumulate ? y[4 * t + i] + yv[i] : yv[i];
      }
#endif
    }
}

/// Samples a chunk: about kChunkColumns tiles, at least one sample.
int64_t samplesPerChunk(int64_t tiles, int64_t batch) {
  return std::clamp<int64_t>(kChunkColumns / tiles, 1, std::max<int64_t>(batch, 1));
}

void convolve(const Conv &cv) {
  const int64_t o = cv.outChannels, ch = cv.in.channels;
  // U[xi] transposed, U^T[xi][c][o], shared by every chunk: the GEMMs read
  // it as a transposed A, where a plain U was transposed again by every
  // chunk's GEMMs (eight 64 x 64 copies a chunk; the same FMA chains).
  std::vector<float> uT(size_t(kPoints * o * ch));
  for (int64_t r = 0; r < o; ++r)
    for (int64_t c = 0; c < ch; ++c) {
      float w[kTaps], out[kPoints];
      std::copy(cv.w + r * cv.ldw + c * kTaps, cv.w + r * cv.ldw + (c + 1) * kTaps, w);
      applyScalar(kForward.g, w, out);
      for (int xi = 0; xi < kPoints; ++xi)
        uT[size_t((xi * ch + c) * o + r)] = out[xi];
    }
  const int64_t perChunk = samplesPerChunk(cv.tiles, cv.batch);
  const int64_t chunks = (cv.batch + perChunk - 1) / perChunk;
  std::atomic<int64_t> next{0};
  tfc::rt::parallelFor(std::min<int64_t>(chunks, tfc::rt::numThreads()), 1, [&](int64_t, int64_t) {
    Scratch &sc = scratch();
    for (int64_t chunk; (chunk = next.fetch_add(1)) < chunks;) {
      const int64_t s0 = chunk * perChunk, s1 = std::min(cv.batch, s0 + perChunk);
      const int64_t cols = (s1 - s0) * cv.tiles, pitch = cols + 16;
      sc.v.resize(size_t(kPoints * ch * pitch));
      if (sc.m.size() < size_t(kPoints * o * pitch)) // (the spare columns: never NaNs)
        sc.m.assign(size_t(kPoints * o * pitch), 0.0f);
      transformInputs(cv.in, cv.tiles, s0, s1, sc.v.data(), pitch, sc.padded);
      // Eight products M[xi] = U[xi] V[xi], on this thread (a nested
      // tfc_sgemm runs inline).
      tfc_sgemm(kPoints, o, cols, ch, intptr_t(uT.data()), o, ch * o, 1, intptr_t(sc.v.data()),
                pitch, ch * pitch, 0, intptr_t(sc.m.data()), pitch, o * pitch, 0);
      transformOutputs(cv, s0, s1, sc.m.data(), pitch);
      if (cv.epilogue)
        cv.epilogue(cv.context, s0 * o, s1 * o);
    }
  });
}

/// A weight gradient over the batch: C[(j, c)][o] (+)= sum_n sum_t
/// x[n][c][t + j - pad] dy[n][o][t] for the 5 taps j.
struct Gradient {
  int64_t batch;
  Rows x, dy;
  float *c;
  int64_t ldc;
  bool accumulate;
  int64_t tiles; // ceil(dy.width / 4)
};

void convolveGradient(const Gradient &gr) {
  const int64_t ch = gr.x.channels, o = gr.dy.channels, plane = ch * o;
  const int64_t groups = std::min(kGradientGroups, gr.batch);
  // Group g's sums M_g[xi][c][o], over its samples [batch g / groups,
  // batch (g + 1) / groups) in chunks, in order.
  // (The caller's scratch, by pointer: inside the lambdas the name of a
  // thread_local would be each worker's own.)
  thread_local std::vector<float> partialScratch;
  partialScratch.resize(size_t(groups * kPoints * plane));
  float *const partial = partialScratch.data();
  std::atomic<int64_t> next{0};
  tfc::rt::parallelFor(std::min<int64_t>(groups, tfc::rt::numThreads()), 1, [&](int64_t, int64_t) {
    Scratch &sc = scratch();
    for (int64_t g; (g = next.fetch_add(1)) < groups;) {
      const int64_t first = gr.batch * g / groups, last = gr.batch * (g + 1) / groups;
      const int64_t perChunk = samplesPerChunk(gr.tiles, last - first);
      float *m = partial + g * kPoints * plane;
      for (int64_t s0 = first; s0 < last; s0 += perChunk) {
        const int64_t s1 = std::min(last, s0 + perChunk);
        const int64_t cols = (s1 - s0) * gr.tiles, pitch = cols + 16;
        sc.v.resize(size_t(kPoints * ch * pitch));
        sc.ud.resize(size_t(kPoints * o * pitch));
        transformInputs(gr.x, gr.tiles, s0, s1, sc.v.data(), pitch, sc.padded);
        transformOutputGradients(gr.dy, gr.tiles, s0, s1, sc.ud.data(), pitch);
        // M[xi] (+)= V[xi] Ud[xi]^T over the chunk's tiles, on this thread.
        tfc_sgemm(kPoints, ch, o, cols, intptr_t(sc.v.data()), pitch, ch * pitch, 0,
                  intptr_t(sc.ud.data()), pitch, o * pitch, 1, intptr_t(m), o, plane, s0 > first);
      }
    }
  });
  // The groups added in order into the first, then the five taps out of the
  // eight points, both along M's contiguous (c, o) (read across the groups or
  // points element by element, the eight planes 16 KiB apart fell in one set
  // of L1: a tenth of the call's time).
  tfc::rt::parallelFor(ch, 8, [&](int64_t c0, int64_t c1) {
    for (int xi = 0; xi < kPoints; ++xi) {
      float *sum = partial + xi * plane;
      for (int64_t g = 1; g < groups; ++g) {
        const float *add = sum + g * kPoints * plane;
        for (int64_t i = c0 * o; i < c1 * o; ++i)
          sum[i] += add[i];
      }
    }
    for (int64_t c = c0; c < c1; ++c) {
      int64_t done = 0; // output channels whose five taps are out
#if defined(__AVX2__) && !defined(__AVX512F__)
      // Eight output channels at once, their five taps stored together.
      for (const float *m = partial + c * o; done + 8 <= o; done += 8) {
        __m256 sums[kPoints], taps[kTaps];
#pragma GCC unroll 8
        for (int xi = 0; xi < kPoints; ++xi)
          sums[xi] = _mm256_loadu_ps(m + xi * plane + done);
        apply(kGradient.at, sums, taps, fma8, add8, sub8, mul8);
#pragma GCC unroll 5
        for (int j = 0; j < kTaps; ++j) {
          float *out = gr.c + (j * ch + c) * gr.ldc + done;
          _mm256_storeu_ps(out,
                           gr.accumulate ? _mm256_add_ps(_mm256_loadu_ps(out), taps[j]) : taps[j]);
        }
      }
#endif
      for (int j = 0; j < kTaps; ++j) {
        float *out = gr.c + (j * ch + c) * gr.ldc;
        const float *m = partial + c * o;
        for (int64_t oc = done; oc < o; ++oc) {
          float sums[kPoints], taps[kTaps];
#pragma GCC unroll 8
          for (int xi = 0; xi < kPoints; ++xi)
            sums[xi] = m[xi * plane + oc];
          applyScalar(kGradient.at, sums, taps);
          out[oc] = gr.accumulate ? out[oc] + taps[j] : taps[j];
        }
      }
    }
  });
}

/// TFC_CONV=direct: every call runs the GEMM it stands for.
bool direct() {
  static const bool direct = [] {
    const char *conv = std::getenv("TFC_CONV");
    return conv && std::strcmp(conv, "direct") == 0;
  }();
  return direct;
}

} // namespace

extern "C" void tfc_conv1d_winograd_epilogue(
    intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a, intptr_t lda, intptr_t strideA,
    intptr_t transA, intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
    intptr_t ldc, intptr_t strideC, intptr_t accumulate, intptr_t kInner, intptr_t ldbInner,
    intptr_t pad, intptr_t width, void (*epilogue)(void *, int64_t, int64_t), void *context) {
  // Only what F(4, 5) computes; anything else (or TFC_CONV=direct) runs as
  // the GEMM over windows it stands for.
  if (direct() || kInner != kTaps || ldbInner != 1 || transA || transB || strideA != 0 ||
      (strideC == 0 && batch > 1) || k % kTaps != 0 || batch <= 0 || m <= 0 || n <= 0 || k <= 0) {
    if (epilogue)
      return tfc_sgemm_windows_epilogue(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB,
                                        transB, c, ldc, strideC, accumulate, kInner, ldbInner, pad,
                                        width, epilogue, context);
    return tfc_sgemm_windows(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c,
                             ldc, strideC, accumulate, kInner, ldbInner, pad, width);
  }
  const Rows in{reinterpret_cast<const float *>(b), ldb, strideB, width > 0 ? int64_t(pad) : 0,
                // A padded input's rows hold the N + 4 floats the windows read.
                width > 0 ? int64_t(width) : int64_t(n) + kTaps - 1, k / kTaps};
  convolve(Conv{batch, m, n, reinterpret_cast<const float *>(a), lda, in,
                reinterpret_cast<float *>(c), ldc, strideC, accumulate != 0, epilogue, context,
                (n + kOut - 1) / kOut});
}

extern "C" void tfc_conv1d_winograd(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                                    intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                                    intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                                    intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                                    intptr_t kInner, intptr_t ldbInner, intptr_t pad,
                                    intptr_t width) {
  tfc_conv1d_winograd_epilogue(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c,
                               ldc, strideC, accumulate, kInner, ldbInner, pad, width, nullptr,
                               nullptr);
}

extern "C" void tfc_conv1d_winograd_taps(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                                         intptr_t a, intptr_t lda, intptr_t strideA,
                                         intptr_t transA, intptr_t b, intptr_t ldb,
                                         intptr_t strideB, intptr_t transB, intptr_t c,
                                         intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                                         intptr_t mInner, intptr_t ldaOuter, intptr_t pad,
                                         intptr_t width) {
  // Only five taps one apart over the whole batch, dy's rows along t (op(B)
  // = dy^T); anything else runs as the taps GEMM it stands for.
  if (direct() || mInner <= 0 || m != kTaps * mInner || ldaOuter != 1 || transA || !transB ||
      (strideC != 0 && batch > 1) || batch <= 0 || n <= 0 || k <= 0)
    return tfc_sgemm_taps(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc,
                          strideC, accumulate, mInner, ldaOuter, pad, width);
  // An unpadded input (width > 0) or one padded around its K + 4 floats.
  const Rows x{reinterpret_cast<const float *>(a),
               lda,
               strideA,
               width > 0 ? int64_t(pad) : 0,
               width > 0 ? int64_t(width) : int64_t(k) + kTaps - 1,
               mInner};
  const Rows dy{reinterpret_cast<const float *>(b), ldb, strideB, 0, k, n};
  convolveGradient(Gradient{batch, x, dy, reinterpret_cast<float *>(c), ldc, accumulate != 0,
                            (k + kOut - 1) / kOut});
}
