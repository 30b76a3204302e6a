//===- Attention.cpp - fused attention, flash-attention style -------------===//
//
// Per head b (one thread each), queries go by blocks of kRows = 8 rows and
// keys by blocks of kKeys; the scores of a row block and a key block live in
// small scratch tiles, never the whole tq x tk matrix. K^T (and V^T) of a key
// block is made once, so S = Q (scale K)^T runs as broadcasts of q times rows
// of K^T; masked scores become -9e15. The tile is then transposed to keys x 8
// rows, so that the softmax statistics of the 8 rows are vectors (a lane per
// row).
//
// Forward: the online softmax, per key block: the row maxima m and sums l
// are updated, the output rows rescaled by exp(m_old - m_new) and P V of the
// block added; out = accumulator / l.
//
// Backward, per row block: pass 1 over the key blocks computes m, l and
// D_i = sum_j P_ij dP_ij online (dP = dO V^T; sum exp(s - m) dP rescaled like
// the accumulator above, divided by l at the end); pass 2 recomputes P and dP
// per key block, dS = scale P o (dP - D) (0 where masked), and adds dS K to
// the rows' dQ, dS^T Q to dK and P^T dO to dV (dK and dV in the outputs,
// zeroed first). With one key block (tk <= kKeys, the usual case) pass 2
// reuses pass 1's tiles and the transposes are made once per head; with more,
// a panel of kPanel rows shares each key block's transposes.
//
// The products go through one register-tile routine (mm: 4 x 16 floats of
// accumulators, broadcast times contiguous rows); operands whose rows are
// not whole vectors are copied into zero-padded scratch. Vectors are GCC's
// vector extension (no intrinsics): AVX2 with -march=native, SSE pairs
// without. Each output element is one fixed sequence of float operations on
// one thread, so any thread count gives the same bits.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Attention.h"
#include "runtime/Abi.h"
#include "runtime/ThreadPool.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

// Without AVX, GCC warns that 32-byte vectors are returned differently;
// every function returning them here is internal, so no ABI is at stake
// (and they take them by reference, which GCC would also note).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace {

constexpr int64_t kKeys = 128; // keys per block (Bc)
constexpr int64_t kRows = 16;  // queries per block (R): two vectors of row statistics
constexpr int64_t kPanel = 64; // row blocks sharing a key block's transposes
constexpr int64_t kLanes = 8;  // floats per vector; rows are padded to it
constexpr float kMasked = -9e15f;

// GCC/Clang vector types (no intrinsics): 8 floats, as AVX2 registers with
// -march=native, as pairs of SSE registers without.
typedef float F8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
typedef float F8u __attribute__((vector_size(32), aligned(4), may_alias));

inline F8 load8(const float *p) { return *reinterpret_cast<const F8u *>(p); }
inline void store8(float *p, const F8 &v) { *reinterpret_cast<F8u *>(p) = v; }
inline F8 splat(float x) { return F8{x, x, x, x, x, x, x, x}; }
inline F8 max8(const F8 &a, const F8 &b) { return a > b ? a : b; }
int64_t roundUp(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

/// exp(x) without branches: x = n ln2 + r with |r| <= ln2/2, exp(r) by
/// Cephes' expansion 1 + r + r^2 p(r), p of degree 5 (relative error below
/// 2e-7), 2^n through the exponent bits. x is clamped to [-88, 88]: below
/// about -87.7, n = -127 makes 2^n and the result exactly 0, so
/// exp(-9e15 - m) = 0; at 88 the result is still finite.
inline F8 exp8(const F8 &in) {
  F8 x = in < splat(-88.0f) ? splat(-88.0f) : in;
  x = x > splat(88.0f) ? splat(88.0f) : x;
  const F8 magic = splat(12582912.0f); // 1.5 * 2^23: adding it rounds to an integer
  F8 t = x * 1.44269504088896341f + magic;
  F8 n = t - magic;
  F8 r = x - n * 0.693359375f; // ln 2 in two parts
  r = r - n * -2.12194440e-4f;
  F8 p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  // t's low bits hold n + 0x400000; 2^n has the biased exponent n + 127.
  I8 bits = ((I8)t - (0x4B400000 - 127)) << 23;
  return p * (F8)bits;
}

/// A tile of C (MR rows x NV vectors) (+)= sum over k < K of A(m, k) B[k, :],
/// A(m, k) = A[m * sam + k * sak]; the accumulators stay in registers.
template <int MR, int NV>
__attribute__((always_inline)) inline void
mmTile(int64_t K, const float *__restrict A, int64_t sam, int64_t sak,
       const float *__restrict B, int64_t ldb, float *__restrict C, int64_t ldc, bool load) {
  F8 acc[MR][NV];
  for (int m = 0; m < MR; ++m)
    for (int n = 0; n < NV; ++n)
      acc[m][n] = load ? load8(C + m * ldc + kLanes * n) : F8{};
  for (int64_t k = 0; k < K; ++k) {
    F8 b[NV];
    for (int n = 0; n < NV; ++n) {
      b[n] = load8(B + k * ldb + kLanes * n);
#if defined(__AVX__)
      // Keeps the row in a register: GCC would rather fold the load into
      // every FMA that uses it, and the loads then limit the loop (a third
      // slower).
      asm("" : "+x"(b[n]));
#endif
    }
    for (int m = 0; m < MR; ++m) {
      F8 a = splat(A[m * sam + k * sak]);
      for (int n = 0; n < NV; ++n)
        acc[m][n] += a * b[n];
    }
  }
  for (int m = 0; m < MR; ++m)
    for (int n = 0; n < NV; ++n)
      store8(C + m * ldc + kLanes * n, acc[m][n]);
}

/// mmTile on the first `cols` columns of C only (through a copy when fewer
/// than the tile's).
template <int MR, int NV>
void tile(int64_t K, const float *A, int64_t sam, int64_t sak, const float *B, int64_t ldb,
          float *C, int64_t ldc, int64_t cols, bool load) {
  constexpr int W = kLanes * NV;
  if (cols == W)
    return mmTile<MR, NV>(K, A, sam, sak, B, ldb, C, ldc, load);
  float part[MR * W];
  for (int m = 0; m < MR; ++m)
    for (int n = 0; n < W; ++n)
      part[m * W + n] = load && n < cols ? C[m * ldc + n] : 0.0f;
  mmTile<MR, NV>(K, A, sam, sak, B, ldb, part, W, true);
  for (int m = 0; m < MR; ++m)
    for (int n = 0; n < cols; ++n)
      C[m * ldc + n] = part[m * W + n];
}

/// tile<h, NV> for a run-time h <= MR.
template <int MR, int NV>
void tileOfHeight(int64_t h, int64_t K, const float *A, int64_t sam, int64_t sak,
                  const float *B, int64_t ldb, float *C, int64_t ldc, int64_t cols, bool load) {
  if constexpr (MR > 1)
    if (h < MR)
      return tileOfHeight<MR - 1, NV>(h, K, A, sam, sak, B, ldb, C, ldc, cols, load);
  tile<MR, NV>(K, A, sam, sak, B, ldb, C, ldc, cols, load);
}

/// The M rows of a column strip of NV vectors, in as few tiles of at most MR
/// rows as can be, of heights that differ by at most one: a thin last tile
/// would have too few FMA chains to hide their latency.
template <int MR, int NV>
void strip(int64_t M, int64_t K, const float *A, int64_t sam, int64_t sak, const float *B,
           int64_t ldb, float *C, int64_t ldc, int64_t cols, bool load) {
  const int64_t count = (M + MR - 1) / MR, height = M / count, taller = M % count;
  for (int64_t t = 0, m0 = 0; t < count; ++t) {
    const int64_t h = height + (t < taller ? 1 : 0);
    tileOfHeight<MR, NV>(h, K, A + m0 * sam, sam, sak, B, ldb, C + m0 * ldc, ldc, cols, load);
    m0 += h;
  }
}

/// C (M x N, rows ldc apart) (+)= A B, A(m, k) = A[m * sam + k * sak], B a
/// K x N matrix with rows ldb apart, each readable for roundUp(N) floats.
/// Strips of 32 columns go by tiles of up to 2 rows, of 24 by 4, of 16 by 6
/// and of 8 by 8 (up to 12 accumulators, 16 registers in all). Each C element
/// is one chain of FMAs over k in order.
void mm(int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
        const float *B, int64_t ldb, float *C, int64_t ldc, bool load) {
  for (int64_t n0 = 0; n0 < N;) {
    const int64_t left = N - n0, cols = std::min(left, 4 * kLanes);
    const float *b = B + n0;
    float *c = C + n0;
    if (left > 3 * kLanes)
      strip<2, 4>(M, K, A, sam, sak, b, ldb, c, ldc, cols, load);
    else if (left > 2 * kLanes)
      strip<4, 3>(M, K, A, sam, sak, b, ldb, c, ldc, cols, load);
    else if (left > kLanes)
      strip<6, 2>(M, K, A, sam, sak, b, ldb, c, ldc, cols, load);
    else
      strip<8, 1>(M, K, A, sam, sak, b, ldb, c, ldc, cols, load);
    n0 += cols;
  }
}

/// dst[0..8) rows (ldd apart) = factor * the transpose of the 8 x 8 block at
/// src (rows ldsrc apart): unpacks, in-lane shuffles and a swap of halves.
inline void transpose8x8(const float *src, int64_t ldsrc, float factor, float *dst,
                         int64_t ldd) {
  F8 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i)
    r[i] = load8(src + i * ldsrc) * factor;
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = __builtin_shufflevector(t[i], t[i + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    u[i + 1] = __builtin_shufflevector(t[i], t[i + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    u[i + 2] = __builtin_shufflevector(t[i + 1], t[i + 3], 0, 1, 8, 9, 4, 5, 12, 13);
    u[i + 3] = __builtin_shufflevector(t[i + 1], t[i + 3], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  for (int i = 0; i < 4; ++i) {
    store8(dst + i * ldd, __builtin_shufflevector(u[i], u[i + 4], 0, 1, 2, 3, 8, 9, 10, 11));
    store8(dst + (i + 4) * ldd,
           __builtin_shufflevector(u[i], u[i + 4], 4, 5, 6, 7, 12, 13, 14, 15));
  }
}

/// dst (cols x ldd) = factor * src^T for src rows x cols (rows ldsrc apart);
/// columns rows..roundUp(rows) of dst are zeroed.
void transpose(const float *__restrict src, int64_t rows, int64_t cols, int64_t ldsrc,
               float factor, float *__restrict dst, int64_t ldd) {
  const int64_t rows8 = rows / kLanes * kLanes, cols8 = cols / kLanes * kLanes;
  for (int64_t j = 0; j < rows8; j += kLanes)
    for (int64_t c = 0; c < cols8; c += kLanes)
      transpose8x8(src + j * ldsrc + c, ldsrc, factor, dst + c * ldd + j, ldd);
  // The edges: rows8..rows of the first cols8 columns, all rows of the rest.
  const int64_t padded = roundUp(rows);
  if (rows8 == padded && cols8 == cols)
    return;
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t j = c < cols8 ? rows8 : 0; j < rows; ++j)
      dst[c * ldd + j] = factor * src[j * ldsrc + c];
    for (int64_t j = rows; j < padded; ++j)
      dst[c * ldd + j] = 0.0f;
  }
}

/// dst (rows x ldd) = src (rows x cols, ldsrc apart), zero-padded to ldd.
void padRows(const float *__restrict src, int64_t rows, int64_t cols, int64_t ldsrc,
             float *__restrict dst, int64_t ldd) {
  for (int64_t i = 0; i < rows; ++i) {
    std::memcpy(dst + i * ldd, src + i * ldsrc, sizeof(float) * cols);
    std::fill(dst + i * ldd + cols, dst + (i + 1) * ldd, 0.0f);
  }
}

/// Masks a row of nb scores: entries whose mask byte is 0 become -9e15; the
/// padding up to roundUp(nb) becomes -inf (weight 0 even in a masked row).
/// Returns whether some entry is unmasked.
bool maskRow(float *__restrict s, const uint8_t *__restrict maskRow, int64_t nb) {
  for (int64_t j = nb, e = roundUp(nb); j < e; ++j)
    s[j] = -INFINITY;
  if (!maskRow)
    return true;
  unsigned any = 0;
  for (int64_t j = 0; j < nb; ++j) {
    s[j] = maskRow[j] ? s[j] : kMasked;
    any |= maskRow[j];
  }
  return any != 0;
}

/// The kRows x nbP tile s (rows ld apart) as nbP x kRows in st, for the
/// groups of 8 rows that hold some of the first `rows` (rows past those are
/// zeroed first).
void transposeTile(float *s, int64_t rows, int64_t nbP, int64_t ld, float *st) {
  const int64_t groups = (rows + kLanes - 1) / kLanes;
  for (int64_t r = rows; r < groups * kLanes; ++r)
    std::fill(s + r * ld, s + r * ld + nbP, 0.0f);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t j = 0; j < nbP; j += kLanes)
      transpose8x8(s + g * kLanes * ld + j, ld, 1.0f, st + j * kRows + g * kLanes, kRows);
}

/// A thread's scratch, grown to the largest call it has seen.
float *scratch(size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats)
    buffer.resize(floats);
  return buffer.data();
}

/// An input as the kernels read it: head b = (o, i) of the (outer, inner)
/// batch starts at base + o * outer + i * inner (elements), its rows `row`
/// apart, each row contiguous.
template <typename T>
struct Strided {
  const T *base;
  int64_t outer, inner, row;

  const T *head(int64_t b, int64_t innerCount) const {
    return base + (b / innerCount) * outer + (b % innerCount) * inner;
  }
};

/// An output: like Strided, written.
struct StridedOut {
  float *base;
  int64_t outer, inner, row;

  float *head(int64_t b, int64_t innerCount) const {
    return base + (b / innerCount) * outer + (b % innerCount) * inner;
  }
};

/// One call's sizes and operands.
struct Attention {
  int64_t inner, tq, tk, d, dv;
  float scale;
  Strided<float> q, k, v;
  Strided<uint8_t> mask; // base null: no mask

  int64_t ldk() const { return roundUp(std::min(tk, kKeys)); } // pitch of K^T, V^T, S
  int64_t keyBlocks() const { return (tk + kKeys - 1) / kKeys; }
  const uint8_t *maskRowOf(int64_t b, int64_t i, int64_t j0) const {
    return mask.base ? mask.head(b, inner) + i * mask.row + j0 : nullptr;
  }

  void forward(int64_t b, const StridedOut &out) const;
  void backward(int64_t b, const Strided<float> &dout, const Strided<float> &out,
                const StridedOut &dq, const StridedOut &dk, const StridedOut &dvOut) const;
};

void Attention::forward(int64_t b, const StridedOut &out) const {
  const float *Q = q.head(b, inner), *K = k.head(b, inner), *V = v.head(b, inner);
  float *O = out.head(b, inner);
  const int64_t ld = ldk(), dvP = roundUp(dv), blocks = keyBlocks();
  const int64_t keysMax = std::min(tk, kKeys), panel = blocks == 1 ? kRows : kPanel;
  // V's rows are read in place when they are whole vectors, else padded.
  const bool padV = dv % kLanes != 0;
  float *kt = scratch(size_t(d * ld + (padV ? keysMax * dvP : 0) + 2 * kRows * ld));
  float *vp = kt + d * ld;                    // V block, padded (padV)
  float *s = vp + (padV ? keysMax * dvP : 0); // S of a row block
  float *st = s + kRows * ld;                 // S^T, then P^T
  alignas(32) float rowM[kPanel], rowL[kPanel];

  auto prepare = [&](int64_t j0, int64_t nb) {
    transpose(K + j0 * k.row, nb, d, k.row, scale, kt, ld);
    if (padV)
      padRows(V + j0 * v.row, nb, dv, v.row, vp, dvP);
  };
  if (blocks == 1)
    prepare(0, tk);

  for (int64_t p0 = 0; p0 < tq; p0 += panel) {
    const int64_t pRows = std::min(panel, tq - p0);
    std::fill(rowM, rowM + kPanel, -INFINITY);
    std::fill(rowL, rowL + kPanel, 0.0f);
    for (int64_t j0 = 0; j0 < tk; j0 += kKeys) {
      const int64_t nb = std::min(kKeys, tk - j0), nbP = roundUp(nb);
      if (blocks > 1)
        prepare(j0, nb);
      for (int64_t i0 = p0; i0 < p0 + pRows; i0 += kRows) {
        const int64_t rows = std::min(kRows, p0 + pRows - i0), at = i0 - p0;
        float *ORows = O + i0 * out.row;
        mm(rows, nbP, d, Q + i0 * q.row, q.row, 1, kt, ld, s, ld, false);
        for (int64_t r = 0; r < rows; ++r)
          maskRow(s + r * ld, maskRowOf(b, i0 + r, j0), nb);
        transposeTile(s, rows, nbP, ld, st);
        // The online softmax, a lane per row. With one key block P is
        // normalised here and P V is the output; with more the output rows
        // are rescaled as the maxima grow, and divided by l at the end.
        alignas(32) float alpha[kRows];
        for (int64_t g = 0; g * kLanes < rows; ++g) {
          float *stg = st + g * kLanes, *mg = rowM + at + g * kLanes, *lg = rowL + at + g * kLanes;
          const F8 mOld = load8(mg);
          F8 mNew = mOld, sum{};
          for (int64_t j = 0; j < nbP; ++j)
            mNew = max8(mNew, load8(stg + j * kRows));
          for (int64_t j = 0; j < nbP; ++j) {
            F8 p = exp8(load8(stg + j * kRows) - mNew);
            store8(stg + j * kRows, p);
            sum += p;
          }
          const F8 a = j0 > 0 ? exp8(mOld - mNew) : F8{}, l = load8(lg) * a + sum;
          store8(alpha + g * kLanes, a);
          store8(lg, l);
          store8(mg, mNew);
          if (blocks == 1) {
            const F8 inv = 1.0f / l;
            for (int64_t j = 0; j < nbP; ++j)
              store8(stg + j * kRows, load8(stg + j * kRows) * inv);
          }
        }
        if (j0 > 0)
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < dv; ++c)
              ORows[r * out.row + c] *= alpha[r];
        mm(rows, dv, nb, st, 1, kRows, padV ? vp : V + j0 * v.row, padV ? dvP : v.row, ORows,
           out.row, j0 > 0);
      }
    }
    if (blocks > 1)
      for (int64_t r = 0; r < pRows; ++r) {
        const float inv = 1.0f / rowL[r];
        for (int64_t c = 0; c < dv; ++c)
          O[(p0 + r) * out.row + c] *= inv;
      }
  }
}

void Attention::backward(int64_t b, const Strided<float> &dout, const Strided<float> &out,
                         const StridedOut &dq, const StridedOut &dk,
                         const StridedOut &dvOut) const {
  const float *Q = q.head(b, inner), *K = k.head(b, inner), *V = v.head(b, inner);
  const float *dO = dout.head(b, inner);
  const float *O = out.base ? out.head(b, inner) : nullptr;
  float *dQ = dq.head(b, inner), *dK = dk.head(b, inner), *dV = dvOut.head(b, inner);
  const int64_t ld = ldk(), dP = roundUp(d), dvP = roundUp(dv), blocks = keyBlocks();
  const int64_t keysMax = std::min(tk, kKeys), panel = blocks == 1 ? kRows : kPanel;
  // Rows of K, Q and dO are read in place as B operands when whole vectors.
  const bool padD = d % kLanes != 0, padDv = dv % kLanes != 0;
  float *kt = scratch(size_t(d * ld + dv * ld + (padD ? keysMax * dP + kRows * dP : 0) +
                             (padDv ? kRows * dvP : 0) + 4 * kRows * ld));
  float *vt = kt + d * ld;
  float *kp = vt + dv * ld;                   // K block, padded (padD)
  float *qp = kp + (padD ? keysMax * dP : 0); // Q rows, padded (padD)
  float *dop = qp + (padD ? kRows * dP : 0);  // dO rows, padded (padDv)
  float *s = dop + (padDv ? kRows * dvP : 0); // S of a row block
  float *dp = s + kRows * ld;                 // dP of a row block
  float *st = dp + kRows * ld;                // S^T, then P^T
  float *dpt = st + kRows * ld;               // dP^T, then dS^T
  alignas(32) float rowM[kPanel], rowL[kPanel], rowD[kPanel], rowLive[kPanel];

  auto prepare = [&](int64_t j0, int64_t nb) {
    transpose(K + j0 * k.row, nb, d, k.row, scale, kt, ld);
    transpose(V + j0 * v.row, nb, dv, v.row, 1.0f, vt, ld);
    if (padD)
      padRows(K + j0 * k.row, nb, d, k.row, kp, dP);
  };
  // S^T (masked, padding -inf) and dP^T of rows [i0, i0 + rows) (at from
  // the panel's first), keys from j0; rows with an unmasked key get 1 in
  // rowLive.
  auto scores = [&](int64_t i0, int64_t rows, int64_t at, int64_t j0, int64_t nb) {
    const int64_t nbP = roundUp(nb);
    mm(rows, nbP, d, Q + i0 * q.row, q.row, 1, kt, ld, s, ld, false);
    mm(rows, nbP, dv, dO + i0 * dout.row, dout.row, 1, vt, ld, dp, ld, false);
    for (int64_t r = 0; r < rows; ++r)
      if (maskRow(s + r * ld, maskRowOf(b, i0 + r, j0), nb))
        rowLive[at + r] = 1.0f;
    transposeTile(s, rows, nbP, ld, st);
    transposeTile(dp, rows, nbP, ld, dpt);
  };
  if (blocks == 1)
    prepare(0, tk);

  for (int64_t p0 = 0; p0 < tq; p0 += panel) {
    const int64_t pRows = std::min(panel, tq - p0);
    // Pass 1: m, l and D = rowsum(P o dP), online over the key blocks, a
    // lane per row. With one key block (and a panel of one row block) st
    // keeps exp(S - m) for pass 2.
    std::fill(rowM, rowM + kPanel, -INFINITY);
    std::fill(rowL, rowL + kPanel, 0.0f);
    std::fill(rowD, rowD + kPanel, 0.0f);
    std::fill(rowLive, rowLive + kPanel, 0.0f);
    for (int64_t j0 = 0; j0 < tk; j0 += kKeys) {
      const int64_t nb = std::min(kKeys, tk - j0), nbP = roundUp(nb);
      if (blocks > 1)
        prepare(j0, nb);
      for (int64_t i0 = p0; i0 < p0 + pRows; i0 += kRows) {
        const int64_t rows = std::min(kRows, p0 + pRows - i0), at = i0 - p0;
        scores(i0, rows, at, j0, nb);
        for (int64_t g = 0; g * kLanes < rows; ++g) {
          float *stg = st + g * kLanes, *dptg = dpt + g * kLanes;
          const int64_t row = at + g * kLanes;
          const F8 mOld = load8(rowM + row);
          F8 mNew = mOld, sum{}, dot{};
          for (int64_t j = 0; j < nbP; ++j)
            mNew = max8(mNew, load8(stg + j * kRows));
          for (int64_t j = 0; j < nbP; ++j) {
            F8 p = exp8(load8(stg + j * kRows) - mNew);
            if (blocks == 1)
              store8(stg + j * kRows, p);
            sum += p;
            dot += p * load8(dptg + j * kRows);
          }
          const F8 alpha = j0 > 0 ? exp8(mOld - mNew) : F8{};
          store8(rowL + row, load8(rowL + row) * alpha + sum);
          store8(rowD + row, load8(rowD + row) * alpha + dot);
          store8(rowM + row, mNew);
        }
      }
    }
    for (int64_t r = 0; r < kPanel; r += kLanes)
      store8(rowD + r, load8(rowD + r) / load8(rowL + r));
    // Given the forward's out (a GPU kernel's CPU twin under cuda-emulated),
    // D = dO . out, as the GPU kernels take it: so the compiled code's out
    // (its pointer and strides) is checked where there is no GPU.
    if (O)
      for (int64_t r = 0; r < pRows; ++r) {
        float sum = 0.0f;
        for (int64_t c = 0; c < dv; ++c)
          sum += dO[(p0 + r) * dout.row + c] * O[(p0 + r) * out.row + c];
        rowD[r] = sum;
      }

    // Pass 2: P and dS (scale folded in) per key block, and their products,
    // written over dK and dV by the first row block and dQ by the first key
    // block, added after. Where masked P is exactly 0 (the exp underflows)
    // unless the whole row is masked, and those rows' dS is zeroed through
    // rowLive.
    for (int64_t j0 = 0; j0 < tk; j0 += kKeys) {
      const int64_t nb = std::min(kKeys, tk - j0), nbP = roundUp(nb);
      if (blocks > 1)
        prepare(j0, nb);
      for (int64_t i0 = p0; i0 < p0 + pRows; i0 += kRows) {
        const int64_t rows = std::min(kRows, p0 + pRows - i0), at = i0 - p0;
        if (blocks > 1)
          scores(i0, rows, at, j0, nb);
        for (int64_t g = 0; g * kLanes < rows; ++g) {
          float *stg = st + g * kLanes, *dptg = dpt + g * kLanes;
          const int64_t row = at + g * kLanes;
          const F8 inv = 1.0f / load8(rowL + row), m = load8(rowM + row);
          const F8 D = load8(rowD + row), dsScale = scale * load8(rowLive + row);
          for (int64_t j = 0; j < nbP; ++j) {
            F8 e = blocks > 1 ? exp8(load8(stg + j * kRows) - m) : load8(stg + j * kRows);
            F8 p = e * inv;
            store8(stg + j * kRows, p);
            store8(dptg + j * kRows, dsScale * (p * (load8(dptg + j * kRows) - D)));
          }
        }
        const float *qRows = Q + i0 * q.row, *dORows = dO + i0 * dout.row;
        int64_t qPitch = q.row, dOPitch = dout.row;
        if (padD) {
          padRows(qRows, rows, d, q.row, qp, dP);
          qRows = qp;
          qPitch = dP;
        }
        if (padDv) {
          padRows(dORows, rows, dv, dout.row, dop, dvP);
          dORows = dop;
          dOPitch = dvP;
        }
        // dV (+)= P^T dO, dK (+)= dS^T Q, dQ (+)= dS K.
        mm(nb, dv, rows, st, kRows, 1, dORows, dOPitch, dV + j0 * dvOut.row, dvOut.row, i0 > 0);
        mm(nb, d, rows, dpt, kRows, 1, qRows, qPitch, dK + j0 * dk.row, dk.row, i0 > 0);
        mm(rows, d, nb, dpt, 1, kRows, padD ? kp : K + j0 * k.row, padD ? dP : k.row,
           dQ + i0 * dq.row, dq.row, j0 > 0);
      }
    }
  }
}

template <typename T>
Strided<T> strided(intptr_t base, intptr_t outer, intptr_t inner, intptr_t row) {
  return {reinterpret_cast<const T *>(base), outer, inner, row};
}

StridedOut stridedOut(intptr_t base, intptr_t outer, intptr_t inner, intptr_t row) {
  return {reinterpret_cast<float *>(base), outer, inner, row};
}

/// Head b's rows x cols of `from` (rows `from.row` apart from its start)
/// as bf16 bits into `bits`, laid out as `at` (its strides counted in
/// 2-byte elements from `bits`).
void storeBits(const float *from, int64_t fromRow, intptr_t bits, const StridedOut &at, int64_t b,
               int64_t inner, int64_t rows, int64_t cols) {
  uint16_t *to = reinterpret_cast<uint16_t *>(bits) + (at.head(b, inner) - at.base);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < cols; ++c)
      to[i * at.row + c] = tfc::rt::cuda::kernels::bf16Bits(from[i * fromRow + c]);
}

/// q, k, v or dO as the kernels read it: f32 where they are, or, given as
/// bf16 bits (abi::attention::kQkvBf16, kDoBf16), widened into `copy`, the batch's heads
/// of rows x cols one after another (a broadcast stride copied per head).
Strided<float> inputOf(std::vector<float> &copy, bool bits, intptr_t base, intptr_t outer,
                       intptr_t inner, intptr_t row, int64_t batch, int64_t innerCount,
                       int64_t rows, int64_t cols) {
  if (!bits)
    return strided<float>(base, outer, inner, row);
  const Strided<uint16_t> from = strided<uint16_t>(base, outer, inner, row);
  copy.resize(size_t(batch * rows * cols));
  tfc::rt::parallelFor(batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const uint16_t *head = from.head(b, innerCount);
      float *to = copy.data() + b * rows * cols;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t c = 0; c < cols; ++c)
          to[i * cols + c] = tfc::rt::cuda::kernels::bf16Float(head[i * row + c]);
    }
  });
  return {copy.data(), innerCount * rows * cols, rows * cols, cols};
}

/// The widened copies of one call's bf16 inputs.
struct WidenedInputs {
  std::vector<float> q, k, v, dO;
};

} // namespace

extern "C" void tfc_attention_forward(intptr_t outer, intptr_t inner, intptr_t tq, intptr_t tk,
                                      intptr_t d, intptr_t dv, float scale, intptr_t q,
                                      intptr_t qOuter, intptr_t qInner, intptr_t qRow, intptr_t k,
                                      intptr_t kOuter, intptr_t kInner, intptr_t kRow, intptr_t v,
                                      intptr_t vOuter, intptr_t vInner, intptr_t vRow,
                                      intptr_t mask, intptr_t maskOuter, intptr_t maskInner,
                                      intptr_t maskRow, intptr_t out, intptr_t outOuter,
                                      intptr_t outInner, intptr_t outRow, intptr_t /*stats*/,
                                      intptr_t out16, intptr_t inputsBf16) {
  const int64_t batch = outer * inner;
  if (batch <= 0 || tq <= 0 || tk <= 0 || d <= 0 || dv <= 0)
    return;
  const bool bits = inputsBf16 & tfc::abi::attention::kQkvBf16;
  WidenedInputs widened;
  const Attention a{inner,
                    tq,
                    tk,
                    d,
                    dv,
                    scale,
                    inputOf(widened.q, bits, q, qOuter, qInner, qRow, batch, inner, tq, d),
                    inputOf(widened.k, bits, k, kOuter, kInner, kRow, batch, inner, tk, d),
                    inputOf(widened.v, bits, v, vOuter, vInner, vRow, batch, inner, tk, dv),
                    strided<uint8_t>(mask, maskOuter, maskInner, maskRow)};
  const StridedOut o = stridedOut(out, outOuter, outInner, outRow);
  tfc::rt::parallelFor(batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      a.forward(b, o);
      if (out16)
        storeBits(o.head(b, inner), o.row, out16, o, b, inner, tq, dv);
    }
  });
}

extern "C" void tfc_attention_backward(
    intptr_t outer, intptr_t inner, intptr_t tq, intptr_t tk, intptr_t d, intptr_t dv, float scale,
    intptr_t q, intptr_t qOuter, intptr_t qInner, intptr_t qRow, intptr_t k, intptr_t kOuter,
    intptr_t kInner, intptr_t kRow, intptr_t v, intptr_t vOuter, intptr_t vInner, intptr_t vRow,
    intptr_t mask, intptr_t maskOuter, intptr_t maskInner, intptr_t maskRow, intptr_t dout,
    intptr_t doutOuter, intptr_t doutInner, intptr_t doutRow, intptr_t dq, intptr_t dqOuter,
    intptr_t dqInner, intptr_t dqRow, intptr_t dk, intptr_t dkOuter, intptr_t dkInner,
    intptr_t dkRow, intptr_t dvOut, intptr_t dvOuter, intptr_t dvInner, intptr_t dvRow,
    intptr_t out, intptr_t outOuter, intptr_t outInner, intptr_t outRow, intptr_t /*stats*/,
    intptr_t /*dS*/, intptr_t gradsBf16, intptr_t inputsBf16) {
  namespace at = tfc::abi::attention;
  const int64_t batch = outer * inner;
  const StridedOut dQ = stridedOut(dq, dqOuter, dqInner, dqRow),
                   dK = stridedOut(dk, dkOuter, dkInner, dkRow),
                   dV = stridedOut(dvOut, dvOuter, dvInner, dvRow);
  // Each output's element size: a bf16 output's strides count 2 bytes.
  const size_t dkBytes = gradsBf16 & at::kDkBf16 ? 2 : 4, dvBytes = gradsBf16 & at::kDvBf16 ? 2 : 4;
  if (batch > 0 && tq == 0 && tk > 0) // no queries: dK = dV = 0 (+0 in bf16 too)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < tk; ++j) {
        std::memset(reinterpret_cast<char *>(dK.base) +
                        ((dK.head(b, inner) - dK.base) + j * dK.row) * dkBytes,
                    0, dkBytes * d);
        std::memset(reinterpret_cast<char *>(dV.base) +
                        ((dV.head(b, inner) - dV.base) + j * dV.row) * dvBytes,
                    0, dvBytes * dv);
      }
  if (batch <= 0 || tq <= 0 || tk <= 0 || d <= 0 || dv <= 0)
    return;
  const bool bits = inputsBf16 & at::kQkvBf16;
  WidenedInputs widened;
  const Attention a{inner,
                    tq,
                    tk,
                    d,
                    dv,
                    scale,
                    inputOf(widened.q, bits, q, qOuter, qInner, qRow, batch, inner, tq, d),
                    inputOf(widened.k, bits, k, kOuter, kInner, kRow, batch, inner, tk, d),
                    inputOf(widened.v, bits, v, vOuter, vInner, vRow, batch, inner, tk, dv),
                    strided<uint8_t>(mask, maskOuter, maskInner, maskRow)};
  const Strided<float> dO = inputOf(widened.dO, inputsBf16 & at::kDoBf16, dout, doutOuter,
                                    doutInner, doutRow, batch, inner, tq, dv),
                       O = strided<float>(out, outOuter, outInner, outRow);
  if (!gradsBf16) {
    tfc::rt::parallelFor(batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b)
        a.backward(b, dO, O, dQ, dK, dV);
    });
    return;
  }
  // A gradient stored as bf16 is computed into a head of f32 first (the
  // kernel adds into its output), then rounded as a copy of it would be.
  tfc::rt::parallelFor(batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> dqHead, dkHead, dvHead;
    auto into = [](std::vector<float> &head, int64_t rows, int64_t cols) {
      head.resize(size_t(rows * cols));
      return StridedOut{head.data(), 0, 0, cols};
    };
    const StridedOut q32 = gradsBf16 & at::kDqBf16 ? into(dqHead, tq, d) : dQ,
                     k32 = gradsBf16 & at::kDkBf16 ? into(dkHead, tk, d) : dK,
                     v32 = gradsBf16 & at::kDvBf16 ? into(dvHead, tk, dv) : dV;
    for (int64_t b = begin; b < end; ++b) {
      a.backward(b, dO, O, q32, k32, v32);
      if (gradsBf16 & at::kDqBf16)
        storeBits(dqHead.data(), d, dq, dQ, b, inner, tq, d);
      if (gradsBf16 & at::kDkBf16)
        storeBits(dkHead.data(), d, dk, dK, b, inner, tk, d);
      if (gradsBf16 & at::kDvBf16)
        storeBits(dvHead.data(), dv, dvOut, dV, b, inner, tk, dv);
    }
  });
}
