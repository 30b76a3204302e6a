//===- GemmKernels.cpp - register-tile kernels: AVX-512, AVX2, scalar -----===//
//
// Each kernel keeps an MR x (NV vectors) tile of C in registers and, for
// every p, broadcasts one A element per row and FMAs it with NV vectors of
// B's row p. Loads of B and C past column nr are masked off, so neither a
// ragged edge of B nor one of C needs a copy. The ISA comes from
// __attribute__((target)), not from the file's flags: one binary carries all
// three sets and Gemm.cpp picks one at run time.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/GemmKernels.h"

#include <algorithm>
#include <immintrin.h>
#include <type_traits>
#include <utility>

// GCC 12 takes the _mm512_undefined_ps() inside the AVX-512 shuffle
// intrinsics for an uninitialised variable.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace tfc::rt::gemm {
namespace {

/// A[r][p] as the kernels read it (A is never packed: both layouts give each
/// row of the tile a cheap scalar load per p).
template <bool TransA>
inline const float &elemA(const float *a, int64_t lda, int r, int64_t p) {
  return TransA ? a[p * lda + r] : a[r * lda + p];
}

/// Strip s's share of the lines a tile call prefetches (MicroKernel's
/// `ahead`): one a step of p, the strips in turn from the first line, and
/// whatever does not fit in the strips' steps left out. (Shared out evenly
/// it took a division a strip: 5% of a K = 5 convolution's time.)
struct AheadShare {
  const char *from;
  int64_t lines;
  AheadShare(const char *ahead, int64_t aheadLines, int64_t s, int64_t kc) {
    const int64_t first = s * kc;
    lines = ahead ? std::clamp<int64_t>(aheadLines - first, 0, kc) : 0;
    from = ahead ? ahead + 64 * first : nullptr;
  }
};

/// The sum of a dot product's 16 lane chains, given as lanes l + 8 already
/// added to lanes l (`h8`): then + 4, + 2, + 1. One tree for both ISAs, so
/// that their GEMVs give the same bits (KernelSet::dot).
__attribute__((target("avx2"))) inline float sumLanes(__m256 h8) {
  __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));
  return _mm_cvtss_f32(h1);
}

/// The next row of a C tile. The empty asm hides the address from the
/// optimiser: otherwise GCC computes all the tile's row addresses before the
/// K loop and spills them, which costs more than the loop when K is small.
template <class Float> inline Float *nextRow(Float *row, int64_t ldc) {
  row += ldc;
  asm("" : "+r"(row));
  return row;
}

/// The portable transposing pack (see PackTransposed): reads B's rows
/// contiguously and writes columns of the panel.
void packTransposedScalar(const float *src, int64_t ld, int64_t kc, int64_t nr, int64_t pitch,
                          float *dst) {
  for (int64_t j = 0; j < nr; ++j)
    for (int64_t p = 0; p < kc; ++p)
      dst[p * pitch + j] = src[j * ld + p];
}

//===- AVX-512: 16 lanes; 12 x 32 and 24 x 16 tiles (24 accumulators) ---===//

struct Avx512 {
  static constexpr int kLanes = 16, kRows[2] = {24, 12};

  template <int MR, int NV, bool TransA>
  __attribute__((target("avx512f,avx512vl,fma"))) static void
  tile(int64_t strips, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb,
       float *c, int64_t ldc, int64_t nr, bool loadC, const char *ahead, int64_t aheadLines) {
    __mmask16 mask[NV];
    for (int v = 0; v < NV; ++v)
      mask[v] = __mmask16((1u << std::clamp<int64_t>(nr - 16 * v, 0, 16)) - 1);
    // A panel of at most 8 columns goes in 256-bit vectors: Zen 4 runs a
    // 512-bit FMA as two halves, so a 16-lane tile of 2 useful columns (the
    // encoder-decoder's 6 x 2 x 64) paid twice the FMA time it needed.
    if (NV == 1 && nr <= 8) {
      const __mmask8 half = __mmask8(mask[0]);
      for (int64_t s = 0; s < strips; ++s, a += TransA ? MR : MR * lda, c += MR * ldc)
        stripHalf<MR, TransA>(kc, a, lda, b, ldb, c, ldc, half, loadC,
                              AheadShare(ahead, aheadLines, s, kc));
      return;
    }
    // A whole panel loads B unmasked: no mask registers in the K loop (GCC
    // reloads them from the stack every step otherwise).
    if (nr >= 16 * NV)
      for (int64_t s = 0; s < strips; ++s, a += TransA ? MR : MR * lda, c += MR * ldc)
        strip<MR, NV, TransA, true>(kc, a, lda, b, ldb, c, ldc, mask, loadC,
                                    AheadShare(ahead, aheadLines, s, kc));
    else
      for (int64_t s = 0; s < strips; ++s, a += TransA ? MR : MR * lda, c += MR * ldc)
        strip<MR, NV, TransA, false>(kc, a, lda, b, ldb, c, ldc, mask, loadC,
                                     AheadShare(ahead, aheadLines, s, kc));
  }

  /// strip for a panel of at most 8 columns, in 256-bit vectors: the same
  /// FMA chains, lane for lane.
  template <int MR, bool TransA>
  __attribute__((target("avx512f,avx512vl,fma"), always_inline)) static inline void
  stripHalf(int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
            int64_t ldc, __mmask8 mask, bool loadC, AheadShare ahead) {
    __m256 acc[MR];
    float *row = c;
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r, row = nextRow(row, ldc))
      acc[r] = loadC ? _mm256_maskz_loadu_ps(mask, row) : _mm256_setzero_ps();
    for (int64_t p = 0; p < kc; ++p) {
      if (p < ahead.lines)
        _mm_prefetch(ahead.from + 64 * p, _MM_HINT_T0);
      const __m256 bv = _mm256_maskz_loadu_ps(mask, b + p * ldb);
      const float *ap = TransA ? a + p * lda : a + p;
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r) {
        const __m256 av = _mm256_set1_ps(TransA ? ap[r] : *ap);
        if (!TransA)
          ap = nextRow(ap, lda);
        acc[r] = _mm256_fmadd_ps(av, bv, acc[r]);
      }
    }
    row = c;
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r, row = nextRow(row, ldc))
      _mm256_mask_storeu_ps(row, mask, acc[r]);
  }

  template <int MR, int NV, bool TransA, bool Whole>
  __attribute__((target("avx512f,avx512vl,fma"), always_inline)) static inline void
  strip(int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
        int64_t ldc, const __mmask16 *mask, bool loadC, AheadShare ahead) {
    __m512 acc[MR][NV];
    float *row = c;
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r, row = nextRow(row, ldc))
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v)
        acc[r][v] = !loadC ? _mm512_setzero_ps()
                    : Whole  ? _mm512_loadu_ps(row + 16 * v)
                             : _mm512_maskz_loadu_ps(mask[v], row + 16 * v);
    for (int64_t p = 0; p < kc; ++p) {
      if (p < ahead.lines)
        _mm_prefetch(ahead.from + 64 * p, _MM_HINT_T0);
      __m512 bv[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v)
        bv[v] = Whole ? _mm512_loadu_ps(b + p * ldb + 16 * v)
                      : _mm512_maskz_loadu_ps(mask[v], b + p * ldb + 16 * v);
      // Rows of a plain A one lda after another, each step: MR row pointers
      // kept across the loop do not fit in the registers, and their spills
      // cost more than the adds.
      const float *ap = TransA ? a + p * lda : a + p;
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r) {
        __m512 av = _mm512_set1_ps(TransA ? ap[r] : *ap);
        if (!TransA)
          ap = nextRow(ap, lda);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v)
          acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
      }
    }
    row = c;
    if (Whole) {
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r, row = nextRow(row, ldc))
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v)
          _mm512_storeu_ps(row + 16 * v, acc[r][v]);
      return;
    }
    // A 512-bit masked store costs Zen 4 several cycles: a vector whose
    // columns fit in 256 bits goes as one, a whole vector unmasked (the
    // encoder-decoder's 32 x 6 x 2: 72 -> 58 ns a call).
    if (NV == 1 && mask[0] <= 0xFF) {
      const __mmask8 low = __mmask8(mask[0]);
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r, row = nextRow(row, ldc))
        _mm256_mask_storeu_ps(row, low, _mm512_castps512_ps256(acc[r][0]));
      return;
    }
    // Likewise over 8 columns: the first eight whole, the rest masked in 256
    // bits (the encoder-decoder's 32 x 10 x 6 with B transposed: 30.8 -> 32.4
    // GFLOP/s; with B plain it reads as before).
    if (NV == 1) {
      const __mmask8 high = __mmask8(mask[0] >> 8);
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r, row = nextRow(row, ldc)) {
        _mm256_storeu_ps(row, _mm512_castps512_ps256(acc[r][0]));
        _mm256_mask_storeu_ps(
            row + 8, high,
            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[r][0]), 1)));
      }
      return;
    }
    if (NV == 2 && mask[0] == 0xFFFF) {
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r, row = nextRow(row, ldc)) {
        _mm512_storeu_ps(row, acc[r][0]);
        _mm512_mask_storeu_ps(row + 16, mask[NV - 1], acc[r][NV - 1]);
      }
      return;
    }
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r, row = nextRow(row, ldc))
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v)
        _mm512_mask_storeu_ps(row + 16 * v, mask[v], acc[r][v]);
  }

  /// r[q][l] <- r[l][q]: pairs of rows interleaved by 32, 64 and 128 bits.
  __attribute__((target("avx512f,avx512vl"))) static void transpose16(__m512 r[16]) {
    __m512 t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) { // t[i] = r[i][0] r[i+1][0] r[i][1] r[i+1][1] (per 128 bits)
      t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 16; i += 4) { // r[i + c]: column c (+4, +8, +12) of rows i..i+3
      r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
      r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
      r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
      r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) { // 128-bit lanes: columns c, c+8 (t[c]) and c+4, c+12 (t[c+4])
      t[c] = _mm512_shuffle_f32x4(r[c], r[c + 4], 0x88);
      t[c + 4] = _mm512_shuffle_f32x4(r[c], r[c + 4], 0xDD);
      t[c + 8] = _mm512_shuffle_f32x4(r[c + 8], r[c + 12], 0x88);
      t[c + 12] = _mm512_shuffle_f32x4(r[c + 8], r[c + 12], 0xDD);
    }
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {
      r[c] = _mm512_shuffle_f32x4(t[c], t[c + 8], 0x88);
      r[c + 8] = _mm512_shuffle_f32x4(t[c], t[c + 8], 0xDD);
    }
  }

  /// PackTransposed by 16 x 16 blocks: rows j >= nr and steps p >= kc load as
  /// zeros, so the panel is written whole 16 columns at a time.
  __attribute__((target("avx512f,avx512vl"))) static void pack(const float *src, int64_t ld, int64_t kc,
                                                      int64_t nr, int64_t pitch, float *dst) {
    for (int64_t j0 = 0; j0 < nr; j0 += 16)
      for (int64_t p0 = 0; p0 < kc; p0 += 16) {
        int64_t np = std::min<int64_t>(16, kc - p0);
        __mmask16 steps = __mmask16((1u << np) - 1);
        __m512 r[16];
#pragma GCC unroll 16
        for (int q = 0; q < 16; ++q)
          r[q] = j0 + q < nr ? _mm512_maskz_loadu_ps(steps, src + (j0 + q) * ld + p0)
                             : _mm512_setzero_ps();
        transpose16(r);
        for (int q = 0; q < np; ++q)
          _mm512_storeu_ps(dst + (p0 + q) * pitch + j0, r[q]);
      }
  }
  static constexpr PackTransposed kPack = pack;

  /// c[0:n] (+)= sum_p a[p] b[p * ldb + 0:n] for n <= 16 V: one FMA chain
  /// a lane, over p in order (the windows kernel's chains), V vectors in
  /// registers. Not inlined: inside windows, GCC kept ldb on the stack, a
  /// load a row of B.
  template <int V>
  __attribute__((target("avx512f,avx512vl,fma"), noinline)) static void
  rowTimesMatrix(int64_t n, int64_t k, const float *a, const float *b, int64_t ldb, float *c,
                 bool loadC) {
    __m512 acc[V];
    // Only the last vector may be partial.
    const __mmask16 last = __mmask16((1u << (n - 16 * (V - 1))) - 1);
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v)
      acc[v] = !loadC      ? _mm512_setzero_ps()
               : v + 1 < V ? _mm512_loadu_ps(c + 16 * v)
                           : _mm512_maskz_loadu_ps(last, c + 16 * v);
    for (int64_t p = 0; p < k; ++p, b += ldb) {
      const __m512 w = _mm512_set1_ps(a[p]);
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v)
        acc[v] = _mm512_fmadd_ps(
            w, v + 1 < V ? _mm512_loadu_ps(b + 16 * v) : _mm512_maskz_loadu_ps(last, b + 16 * v),
            acc[v]);
    }
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v)
      if (v + 1 < V || last == 0xFFFF)
        _mm512_storeu_ps(c + 16 * v, acc[v]);
      else
        _mm512_mask_storeu_ps(c + 16 * v, last, acc[v]);
  }
  /// rowTimesMatrix for any n <= 256: a loop over vectors with a bound
  /// known only at run time kept the chains in memory (a thread's 128 of
  /// the set anomaly's 1 x 256 x 640 on 2 threads ran slower than 1 thread's
  /// 256).
  __attribute__((target("avx512f,avx512vl,fma"))) static void
  rowTimesMatrixAny(int64_t n, int64_t k, const float *a, const float *b, int64_t ldb, float *c,
                    bool loadC) {
    using Kernel = void (*)(int64_t, int64_t, const float *, const float *, int64_t, float *, bool);
    static constexpr Kernel kByVectors[16] = {
        rowTimesMatrix<1>,  rowTimesMatrix<2>,  rowTimesMatrix<3>,  rowTimesMatrix<4>,
        rowTimesMatrix<5>,  rowTimesMatrix<6>,  rowTimesMatrix<7>,  rowTimesMatrix<8>,
        rowTimesMatrix<9>,  rowTimesMatrix<10>, rowTimesMatrix<11>, rowTimesMatrix<12>,
        rowTimesMatrix<13>, rowTimesMatrix<14>, rowTimesMatrix<15>, rowTimesMatrix<16>};
    kByVectors[(n + 15) / 16 - 1](n, k, a, b, ldb, c, loadC);
  }

  /// WindowsKernel: up to 8 vectors of columns at once, each its own FMA
  /// chain (8 chains hide the FMA latency); loads are unaligned rows of the
  /// input, masked to the input's columns where they reach past them.
  __attribute__((target("avx512f,avx512vl,fma"))) static void
  windows(int64_t rows, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
          int64_t ldb, int64_t kInner, int64_t ldbInner, int64_t col0, int64_t pad,
          int64_t width, float *c, int64_t ldc, bool loadC) {
    // One row times a plain B (the set anomaly's 1 x 256 x 640): up to 16
    // vectors of C at once, so that B streams through in one pass, row
    // after row (two passes of 8 vectors read each row in halves: 7.7-8.1
    // us against 6.2).
    if (rows == 1 && kInner == 1 && width <= 0) {
      for (int64_t j0 = 0; j0 < n; j0 += 256)
        rowTimesMatrixAny(std::min<int64_t>(256, n - j0), k, a, b + col0 - pad + j0, ldb, c + j0,
                          loadC);
      return;
    }
    constexpr int kVectors = 8;
    for (int64_t j0 = 0; j0 < n; j0 += 16 * kVectors) {
      const int vectors = int(std::min<int64_t>(kVectors, (n - j0 + 15) / 16));
      // mask[v][tap]: the lanes of vector v that lie in C and in the input.
      __mmask16 mask[kVectors][kMaxWindowTaps] = {};
      bool whole = true;
      for (int v = 0; v < vectors; ++v)
        for (int64_t tap = 0; tap < kInner; ++tap) {
          const int64_t first = j0 + 16 * v, shift = tap * ldbInner + col0 - pad;
          int64_t lo = first, hi = std::min(n, first + 16);
          if (width > 0)
            lo = std::max(lo, -shift), hi = std::min(hi, width - shift);
          mask[v][tap] = hi <= lo ? __mmask16(0)
                                  : __mmask16(((1u << (hi - lo)) - 1) << (lo - first));
          whole = whole && mask[v][tap] == 0xFFFF;
        }
      __mmask16 columns[kVectors]; // the lanes of vector v that lie in C
      for (int v = 0; v < kVectors; ++v) {
        const int64_t left = std::clamp<int64_t>(n - j0 - 16 * v, 0, 16);
        columns[v] = __mmask16((1u << left) - 1);
      }
      for (int64_t r = 0; r < rows; ++r) {
        __m512 acc[kVectors];
        float *crow = c + r * ldc + j0;
        for (int v = 0; v < kVectors; ++v)
          acc[v] = loadC ? _mm512_maskz_loadu_ps(columns[v], crow + 16 * v) : _mm512_setzero_ps();
        const float *arow = a + r * lda;
        // p = channel * kInner + tap, in order (k is channels * kInner).
        for (int64_t p = 0, channel = 0; p < k; ++channel) {
          const float *base = b + channel * ldb + col0 - pad + j0;
          for (int64_t tap = 0; tap < kInner; ++tap, ++p) {
            const float *row = base + tap * ldbInner;
            const __m512 w = _mm512_set1_ps(arow[p]);
            if (whole && vectors == kVectors) {
#pragma GCC unroll 8
              for (int v = 0; v < kVectors; ++v)
                acc[v] = _mm512_fmadd_ps(w, _mm512_loadu_ps(row + 16 * v), acc[v]);
            } else {
#pragma GCC unroll 8
              for (int v = 0; v < kVectors; ++v)
                acc[v] = _mm512_fmadd_ps(w, _mm512_maskz_loadu_ps(mask[v][tap], row + 16 * v),
                                         acc[v]);
            }
          }
        }
        for (int v = 0; v < vectors; ++v)
          _mm512_mask_storeu_ps(crow + 16 * v, columns[v], acc[v]);
      }
    }
  }
  static constexpr WindowsKernel kWindows = windows;

  /// SmallKKernel for one block of NV vectors of columns from j0: B's K rows
  /// in registers (masked to C's columns and the input's), then R rows of C
  /// at a time.
  template <int K, int NV>
  __attribute__((target("avx512f,avx512vl,fma"), always_inline)) static inline void
  smallKBlock(int64_t rows, int64_t n, int64_t j0, const float *a, int64_t lda, const float *b,
              int64_t ldb, int64_t kInner, int64_t ldbInner, int64_t col0, int64_t pad,
              int64_t width, float *c, int64_t ldc, bool loadC) {
    constexpr int R = 4;
    __m512 bv[K][NV];
    __mmask16 columns[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      columns[v] = __mmask16((1u << std::clamp<int64_t>(n - j0 - 16 * v, 0, 16)) - 1);
#pragma GCC unroll 10
    for (int p = 0; p < K; ++p) {
      const int64_t shift = (p % kInner) * ldbInner + col0 - pad;
      const float *row = b + (p / kInner) * ldb + shift + j0;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        __mmask16 mask = columns[v];
        if (width > 0) { // the input's columns only: the padding's zeros
          const int64_t first = j0 + 16 * v + shift;
          const int64_t lo = std::clamp<int64_t>(-first, 0, 16),
                        hi = std::clamp<int64_t>(width - first, 0, 16);
          mask &= __mmask16(((1u << hi) - 1) & ~((1u << lo) - 1));
        }
        bv[p][v] = _mm512_maskz_loadu_ps(mask, row + 16 * v);
      }
    }
    int64_t r = 0;
    for (; r + R <= rows; r += R)
      smallKTile<K, NV, R>(a + r * lda, lda, bv, columns, c + r * ldc + j0, ldc, loadC);
    for (; r < rows; ++r)
      smallKTile<K, NV, 1>(a + r * lda, lda, bv, columns, c + r * ldc + j0, ldc, loadC);
  }

  /// Rows x NV vectors of C from B's rows in registers.
  template <int K, int NV, int Rows>
  __attribute__((target("avx512f,avx512vl,fma"), always_inline)) static inline void
  smallKTile(const float *a, int64_t lda, const __m512 (&bv)[K][NV], const __mmask16 *columns,
             float *crow, int64_t ldc, bool loadC) {
    __m512 acc[Rows][NV];
#pragma GCC unroll 4
    for (int r = 0; r < Rows; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r][v] = loadC ? _mm512_maskz_loadu_ps(columns[v], crow + r * ldc + 16 * v)
                          : _mm512_setzero_ps();
#pragma GCC unroll 10
    for (int p = 0; p < K; ++p)
#pragma GCC unroll 4
      for (int r = 0; r < Rows; ++r) {
        const __m512 w = _mm512_set1_ps(a[r * lda + p]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          acc[r][v] = _mm512_fmadd_ps(w, bv[p][v], acc[r][v]);
      }
#pragma GCC unroll 4
    for (int r = 0; r < Rows; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        // (A masked 512-bit store costs Zen 4 several cycles.)
        if (columns[v] == 0xFFFF)
          _mm512_storeu_ps(crow + r * ldc + 16 * v, acc[r][v]);
        else if (columns[v])
          _mm512_mask_storeu_ps(crow + r * ldc + 16 * v, columns[v], acc[r][v]);
      }
  }

  template <int K, bool Plain>
  __attribute__((target("avx512f,avx512vl,fma"))) static void
  smallKRows(int64_t rows, int64_t n, const float *a, int64_t lda, const float *b, int64_t ldb,
             int64_t kInner, int64_t ldbInner, int64_t col0, int64_t pad, int64_t width, float *c,
             int64_t ldc, bool loadC) {
    if constexpr (Plain) // B's plain rows: no window arithmetic for the compiler to keep
      kInner = 1, ldbInner = 0, col0 = 0, pad = 0, width = 0;
    // K x NV vectors of B and 4 x NV accumulators within the 32 registers.
    // The last block only as wide as its columns (100 = 48 + 48 + 4: a third
    // block of three vectors would cost as much as the first).
    constexpr int NV = K <= 5 ? 3 : 2;
    for (int64_t j0 = 0; j0 < n; j0 += 16 * NV) {
      const int64_t left = (n - j0 + 15) / 16;
      if (left >= NV)
        smallKBlock<K, NV>(rows, n, j0, a, lda, b, ldb, kInner, ldbInner, col0, pad, width, c, ldc,
                           loadC);
      else if (left == 2)
        smallKBlock<K, 2>(rows, n, j0, a, lda, b, ldb, kInner, ldbInner, col0, pad, width, c, ldc,
                          loadC);
      else
        smallKBlock<K, 1>(rows, n, j0, a, lda, b, ldb, kInner, ldbInner, col0, pad, width, c, ldc,
                          loadC);
    }
  }

  __attribute__((target("avx512f,avx512vl,fma"))) static void
  smallK(int64_t rows, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
         int64_t ldb, int64_t kInner, int64_t ldbInner, int64_t col0, int64_t pad, int64_t width,
         float *c, int64_t ldc, bool loadC) {
    // Plain rows of B (a window of one tap, or a GEMM's B), shifted or not.
    const bool plain = kInner == 1 && width == 0;
    if (plain)
      b += col0 - pad;
    switch (k) {
#define TFC_SMALL_K(K)                                                                             \
  case K:                                                                                          \
    return plain ? smallKRows<K, true>(rows, n, a, lda, b, ldb, 1, 0, 0, 0, 0, c, ldc, loadC)      \
                 : smallKRows<K, false>(rows, n, a, lda, b, ldb, kInner, ldbInner, col0, pad,      \
                                        width, c, ldc, loadC);
      TFC_SMALL_K(1)
      TFC_SMALL_K(2)
      TFC_SMALL_K(3)
      TFC_SMALL_K(4)
      TFC_SMALL_K(5)
      TFC_SMALL_K(6)
      TFC_SMALL_K(7)
      TFC_SMALL_K(8)
      TFC_SMALL_K(9)
      TFC_SMALL_K(10)
#undef TFC_SMALL_K
    default:
      return windows(rows, n, k, a, lda, b, ldb, kInner, ldbInner, col0, pad, width, c, ldc, loadC);
    }
  }
  static constexpr SmallKKernel kSmallK = smallK;

  /// DotKernel: four rows at a time share each vector of b; the tail of k
  /// updates only its lanes (mask3: the others keep their sums).
  template <int R>
  __attribute__((target("avx512f,avx512vl,fma"), always_inline)) static inline void
  dotRows(int64_t k, const float *a, int64_t lda, const float *b, float *acc, bool first,
          float *sums) {
    __m512 s[R];
    for (int q = 0; q < R; ++q)
      s[q] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + q * kDotLanes);
    const int64_t whole = k / 16 * 16;
    for (int64_t p = 0; p < whole; p += 16) {
      const __m512 bv = _mm512_loadu_ps(b + p);
#pragma GCC unroll 8
      for (int q = 0; q < R; ++q)
        s[q] = _mm512_fmadd_ps(_mm512_loadu_ps(a + q * lda + p), bv, s[q]);
    }
    if (whole < k) {
      const __mmask16 tail = __mmask16((1u << (k - whole)) - 1);
      const __m512 bv = _mm512_maskz_loadu_ps(tail, b + whole);
      for (int q = 0; q < R; ++q)
        s[q] = _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(tail, a + q * lda + whole), bv, s[q],
                                     tail);
    }
    for (int q = 0; q < R; ++q) {
      if (!sums) {
        _mm512_storeu_ps(acc + q * kDotLanes, s[q]);
        continue;
      }
      // The tree: halves of 8, 4, 2 and 1 lanes added, low + high.
      sums[q] = sumLanes(_mm256_add_ps(
          _mm512_castps512_ps256(s[q]),
          _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s[q]), 1))));
    }
  }
  __attribute__((target("avx512f,avx512vl,fma"))) static void dot(int64_t rows, int64_t k, const float *a,
                                                         int64_t lda, const float *b, float *acc,
                                                         bool first, float *sums) {
    int64_t r = 0;
    for (; r + 8 <= rows; r += 8)
      dotRows<8>(k, a + r * lda, lda, b, acc ? acc + r * kDotLanes : nullptr, first,
                 sums ? sums + r : nullptr);
    for (; r + 4 <= rows; r += 4)
      dotRows<4>(k, a + r * lda, lda, b, acc ? acc + r * kDotLanes : nullptr, first,
                 sums ? sums + r : nullptr);
    for (; r < rows; ++r)
      dotRows<1>(k, a + r * lda, lda, b, acc ? acc + r * kDotLanes : nullptr, first,
                 sums ? sums + r : nullptr);
  }
  static constexpr DotKernel kDot = dot;

  /// The sums of sixteen chains of 16 lanes, v[4 q + r] for chain (r, q),
  /// in one vector: lane 4 r + q. Each chain's lanes are added in
  /// sumLanes's tree (l + 8, then + 4, + 2, + 1), four levels of shuffles
  /// and adds over pairs of vectors: 45 operations for sixteen sums where
  /// one at a time took 128 (a right edge of four columns over 96 rows,
  /// one item: the sums had cost as much as its FMAs). The same bits.
  __attribute__((target("avx512f"), always_inline)) static inline __m512
  sumChains16(const __m512 v[16]) {
    __m512 h8[8], h4[4], h2[2];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) // [v[2i] l + l^8 | v[2i+1] l + l^8], 256 bits each
      h8[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44),
                            _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) // 128-bit lane k: v[4i + k]'s l + l^4
      h4[i] = _mm512_add_ps(_mm512_shuffle_f32x4(h8[2 * i], h8[2 * i + 1], 0x88),
                            _mm512_shuffle_f32x4(h8[2 * i], h8[2 * i + 1], 0xDD));
#pragma GCC unroll 2
    for (int i = 0; i < 2; ++i) // lane k: v[8i + k]'s l + l^2 (two), then v[8i + 4 + k]'s
      h2[i] = _mm512_add_ps(_mm512_shuffle_ps(h4[2 * i], h4[2 * i + 1], 0x44),
                            _mm512_shuffle_ps(h4[2 * i], h4[2 * i + 1], 0xEE));
    // lane k: v[k], v[4 + k], v[8 + k], v[12 + k]: chains (k, 0..3)
    return _mm512_add_ps(_mm512_shuffle_ps(h2[0], h2[1], 0x88),
                         _mm512_shuffle_ps(h2[0], h2[1], 0xDD));
  }

  /// DotTileKernel: R rows x Q vectors of chains in registers through all
  /// the items; the tail of k updates only its lanes, as in dotRows.
  template <int R, int Q>
  __attribute__((target("avx512f,avx512vl,fma"))) static void
  dotBlock(int64_t items, int64_t k, const float *a, int64_t lda, int64_t strideA, const float *b,
           int64_t ldb, int64_t strideB, float *c, int64_t ldcRow, int64_t ldcCol,
           bool accumulate) {
    __m512 s[R][Q];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int q = 0; q < Q; ++q)
        s[r][q] = _mm512_setzero_ps();
    const int64_t whole = k / 16 * 16;
    const __mmask16 tail = __mmask16((1u << (k - whole)) - 1);
    for (int64_t i = 0; i < items; ++i, a += strideA, b += strideB) {
      // The next item's rows, a line of each a step: its a lies a whole
      // batch item away, beyond what the hardware prefetches.
      // (None for the last: its own rows, already in L1, cost a load slot.)
      const float *ahead = a + strideA;
      const bool fetch = i + 1 < items;
      for (int64_t p = 0; p < whole; p += 16) {
        __m512 bv[Q];
        if (fetch)
          for (int r = 0; r < R; ++r)
            _mm_prefetch(reinterpret_cast<const char *>(ahead + r * lda + p), _MM_HINT_T0);
#pragma GCC unroll 8
        for (int q = 0; q < Q; ++q)
          bv[q] = _mm512_loadu_ps(b + q * ldb + p);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m512 av = _mm512_loadu_ps(a + r * lda + p);
#pragma GCC unroll 8
          for (int q = 0; q < Q; ++q)
            s[r][q] = _mm512_fmadd_ps(av, bv[q], s[r][q]);
        }
      }
      if (whole < k) {
        __m512 bv[Q];
#pragma GCC unroll 8
        for (int q = 0; q < Q; ++q)
          bv[q] = _mm512_maskz_loadu_ps(tail, b + q * ldb + whole);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m512 av = _mm512_maskz_loadu_ps(tail, a + r * lda + whole);
#pragma GCC unroll 8
          for (int q = 0; q < Q; ++q)
            s[r][q] = _mm512_mask3_fmadd_ps(av, bv[q], s[r][q], tail);
        }
      }
    }
    // Columns q < 4 of a block of eight chains or more: their trees side by
    // side (sumChains16), a lane of a vector each.
    constexpr int QT = Q < 4 ? Q : 4, qTree = R * QT >= 8 ? QT : 0;
    if constexpr (qTree > 0) {
      __m512 v[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        v[i] = _mm512_setzero_ps();
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int q = 0; q < QT; ++q)
          v[q * 4 + r] = s[r][q];
      alignas(64) float sums[16];
      _mm512_store_ps(sums, sumChains16(v));
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int q = 0; q < QT; ++q) {
          float &out = c[r * ldcRow + q * ldcCol];
          out = accumulate ? out + sums[4 * r + q] : sums[4 * r + q];
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int q = qTree; q < Q; ++q) {
        const float sum = sumLanes(
            _mm256_add_ps(_mm512_castps512_ps256(s[r][q]),
                          _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s[r][q]), 1))));
        float &out = c[r * ldcRow + q * ldcCol];
        out = accumulate ? out + sum : sum;
      }
  }
  /// Blocks of 4 rows x up to 5 vectors (20 chains, 9 loads a step).
  __attribute__((target("avx512f,avx512vl,fma"))) static void
  dotTile(int64_t rows, int64_t cols, int64_t items, int64_t k, const float *a, int64_t lda,
          int64_t strideA, const float *b, int64_t ldb, int64_t strideB, float *c, int64_t ldcRow,
          int64_t ldcCol, bool accumulate) {
    using Block = void (*)(int64_t, int64_t, const float *, int64_t, int64_t, const float *,
                           int64_t, int64_t, float *, int64_t, int64_t, bool);
    static constexpr Block kBlocks[4][5] = {
        {dotBlock<1, 1>, dotBlock<1, 2>, dotBlock<1, 3>, dotBlock<1, 4>, dotBlock<1, 5>},
        {dotBlock<2, 1>, dotBlock<2, 2>, dotBlock<2, 3>, dotBlock<2, 4>, dotBlock<2, 5>},
        {dotBlock<3, 1>, dotBlock<3, 2>, dotBlock<3, 3>, dotBlock<3, 4>, dotBlock<3, 5>},
        {dotBlock<4, 1>, dotBlock<4, 2>, dotBlock<4, 3>, dotBlock<4, 4>, dotBlock<4, 5>}};
    // Vectors in equal blocks of at most 5 (16: 6 + 5 + 5 would not fit).
    const int64_t colBlocks = (cols + 4) / 5;
    for (int64_t qb = 0; qb < colBlocks; ++qb) {
      const int64_t q0 = cols * qb / colBlocks, q1 = cols * (qb + 1) / colBlocks;
      for (int64_t r = 0; r < rows; r += 4)
        kBlocks[std::min<int64_t>(4, rows - r) - 1][q1 - q0 - 1](
            items, k, a + r * lda, lda, strideA, b + q0 * ldb, ldb, strideB,
            c + r * ldcRow + q0 * ldcCol, ldcRow, ldcCol, accumulate);
    }
  }
  static constexpr DotTileKernel kDotTile = dotTile;

  /// The NE columns of C's rows [0, rows < 16) as NE vectors along the
  /// rows, or back: a 16 x 16 transpose and a masked load or store a row.
  /// More than two columns: a gather or scatter moves an element at a time
  /// (NE of them a row), which cost as much as the FMAs at small K (the
  /// Fleuret models' first layer, 64 x 100 x 5: 4 columns on the edge).
  /// x[q]'s lane l <- 4 x 4 blocks transposed in each 128-bit lane: four
  /// columns of 16 rows become row 4 l + q in lane l of x[q] (and back).
  __attribute__((target("avx512f,avx512vl"), always_inline)) static inline void
  transpose4x4Lanes(__m512 x[4]) {
    const __m512 t0 = _mm512_unpacklo_ps(x[0], x[1]), t1 = _mm512_unpackhi_ps(x[0], x[1]),
                 t2 = _mm512_unpacklo_ps(x[2], x[3]), t3 = _mm512_unpackhi_ps(x[2], x[3]);
    x[0] = _mm512_shuffle_ps(t0, t2, 0x44);
    x[1] = _mm512_shuffle_ps(t0, t2, 0xEE);
    x[2] = _mm512_shuffle_ps(t1, t3, 0x44);
    x[3] = _mm512_shuffle_ps(t1, t3, 0xEE);
  }
  template <int NE>
  __attribute__((target("avx512f,avx512vl"), always_inline)) static inline void
  loadColumns(const float *c, int64_t ldc, int64_t rows, __m512 *columns) {
    if constexpr (NE == 4) { // rows of four floats: 128-bit loads into lanes
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        __m512 x = _mm512_setzero_ps();
#pragma GCC unroll 4
        for (int l = 0; l < 4; ++l)
          if (4 * l + q < rows)
            x = _mm512_insertf32x4(x, _mm_loadu_ps(c + (4 * l + q) * ldc), l);
        columns[q] = x;
      }
      return transpose4x4Lanes(columns);
    }
    const __mmask16 lanes = __mmask16((1u << NE) - 1);
    __m512 r[16];
#pragma GCC unroll 16
    for (int q = 0; q < 16; ++q)
      r[q] = q < rows ? _mm512_maskz_loadu_ps(lanes, c + q * ldc) : _mm512_setzero_ps();
    transpose16(r);
#pragma GCC unroll 12
    for (int j = 0; j < NE; ++j)
      columns[j] = r[j];
  }
  template <int NE>
  __attribute__((target("avx512f,avx512vl"), always_inline)) static inline void
  storeColumns(float *c, int64_t ldc, int64_t rows, const __m512 *columns) {
    if constexpr (NE == 4) {
      __m512 x[4] = {columns[0], columns[1], columns[2], columns[3]};
      transpose4x4Lanes(x);
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l)
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q)
          if (4 * l + q < rows)
            _mm_storeu_ps(c + (4 * l + q) * ldc, _mm512_extractf32x4_ps(x[q], l));
      return;
    }
    const __mmask16 lanes = __mmask16((1u << NE) - 1);
    __m512 r[16];
#pragma GCC unroll 16
    for (int q = 0; q < 16; ++q)
      r[q] = q < NE ? columns[q] : _mm512_setzero_ps();
    transpose16(r);
#pragma GCC unroll 16
    for (int q = 0; q < 16; ++q)
      if (q < rows)
        _mm512_mask_storeu_ps(c + q * ldc, lanes, r[q]);
  }

  /// EdgeKernel: NE columns, blocks of up to MV x 16 rows, vectors along the
  /// rows (aT's rows are contiguous), C written and read a column at a time
  /// by scatters and gathers (two columns at most), else through transposes.
  template <int NE, int MV>
  __attribute__((target("avx512f,avx512vl,fma"), always_inline)) static inline void
  edgeBlock(int64_t rows, int64_t kc, const float *aT, int64_t ldaT, const float *b,
            int64_t ldb, float *c, int64_t ldc, bool loadC) {
    constexpr bool kTranspose = NE > 2;
    const __m512i index = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(int(ldc)));
    __mmask16 mask[MV];
    for (int v = 0; v < MV; ++v)
      mask[v] = __mmask16((1u << std::clamp<int64_t>(rows - 16 * v, 0, 16)) - 1);
    __m512 acc[MV][NE];
#pragma GCC unroll 4
    for (int v = 0; v < MV; ++v) {
      if (kTranspose && loadC) {
        loadColumns<NE>(c + 16 * v * ldc, ldc, std::min<int64_t>(16, rows - 16 * v), acc[v]);
        continue;
      }
#pragma GCC unroll 12
      for (int j = 0; j < NE; ++j)
        acc[v][j] = loadC ? _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask[v], index,
                                                     c + 16 * v * ldc + j, 4)
                          : _mm512_setzero_ps();
    }
    const bool whole = rows >= 16 * MV;
    for (int64_t p = 0; p < kc; ++p) {
      __m512 av[MV];
#pragma GCC unroll 4
      for (int v = 0; v < MV; ++v)
        av[v] = whole ? _mm512_loadu_ps(aT + p * ldaT + 16 * v)
                      : _mm512_maskz_loadu_ps(mask[v], aT + p * ldaT + 16 * v);
#pragma GCC unroll 12
      for (int j = 0; j < NE; ++j) {
        __m512 bj = _mm512_set1_ps(b[p * ldb + j]);
#pragma GCC unroll 4
        for (int v = 0; v < MV; ++v)
          acc[v][j] = _mm512_fmadd_ps(av[v], bj, acc[v][j]);
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < MV; ++v) {
      if (kTranspose) {
        storeColumns<NE>(c + 16 * v * ldc, ldc, std::min<int64_t>(16, rows - 16 * v), acc[v]);
        continue;
      }
#pragma GCC unroll 12
      for (int j = 0; j < NE; ++j)
        _mm512_mask_i32scatter_ps(c + 16 * v * ldc + j, mask[v], index, acc[v][j], 4);
    }
  }

  /// Blocks of up to 16 x MV rows, MV x NE accumulators at most 24 (an MV of
  /// 4 for up to 6 columns, 3 for 7 or 8, 2 for 9 to 12).
  template <int NE>
  __attribute__((target("avx512f,avx512vl,fma"))) static void edge(int64_t rows, int64_t kc,
                                                          const float *aT, int64_t ldaT,
                                                          const float *b, int64_t ldb, float *c,
                                                          int64_t ldc, bool loadC) {
    constexpr int MV = std::min(4, 24 / NE);
    for (int64_t r = 0; r < rows; r += 16 * MV) {
      int64_t left = std::min<int64_t>(16 * MV, rows - r);
      float *cr = c + r * ldc;
      if (left > 48)
        edgeBlock<NE, std::min(MV, 4)>(left, kc, aT + r, ldaT, b, ldb, cr, ldc, loadC);
      else if (left > 32)
        edgeBlock<NE, std::min(MV, 3)>(left, kc, aT + r, ldaT, b, ldb, cr, ldc, loadC);
      else if (left > 16)
        edgeBlock<NE, std::min(MV, 2)>(left, kc, aT + r, ldaT, b, ldb, cr, ldc, loadC);
      else
        edgeBlock<NE, 1>(left, kc, aT + r, ldaT, b, ldb, cr, ldc, loadC);
    }
  }
  static constexpr EdgeKernel kEdge[kMaxEdgeColumns] = {
      edge<1>, edge<2>, edge<3>, edge<4>, edge<5>,  edge<6>,
      edge<7>, edge<8>, edge<9>, edge<10>, edge<11>, edge<12>};
};

//===- AVX2 + FMA: 8 lanes; 6 x 16 and 12 x 8 tiles (12 of 16 registers) ===//

struct Avx2 {
  static constexpr int kLanes = 8, kRows[2] = {12, 6};

  /// One item's FMAs into R rows' chains, lanes 0-7 in lo, 8-15 in hi; the
  /// tail updates only its lanes (a blend keeps the others).
  template <int R>
  __attribute__((target("avx2,fma"), always_inline)) static inline void
  dotAccumulate(int64_t k, const float *a, int64_t lda, const float *b, __m256 *lo, __m256 *hi) {
    const int64_t whole = k / 16 * 16;
    for (int64_t p = 0; p < whole; p += 16) {
      const __m256 b0 = _mm256_loadu_ps(b + p), b1 = _mm256_loadu_ps(b + p + 8);
#pragma GCC unroll 4
      for (int q = 0; q < R; ++q) {
        lo[q] = _mm256_fmadd_ps(_mm256_loadu_ps(a + q * lda + p), b0, lo[q]);
        hi[q] = _mm256_fmadd_ps(_mm256_loadu_ps(a + q * lda + p + 8), b1, hi[q]);
      }
    }
    if (whole < k) {
      const __m256i m0 = laneMask(k - whole), m1 = laneMask(k - whole - 8);
      const __m256 b0 = _mm256_maskload_ps(b + whole, m0), b1 = _mm256_maskload_ps(b + whole + 8, m1);
      for (int q = 0; q < R; ++q) {
        const float *row = a + q * lda + whole;
        lo[q] = _mm256_blendv_ps(
            lo[q], _mm256_fmadd_ps(_mm256_maskload_ps(row, m0), b0, lo[q]), _mm256_castsi256_ps(m0));
        hi[q] = _mm256_blendv_ps(hi[q],
                                 _mm256_fmadd_ps(_mm256_maskload_ps(row + 8, m1), b1, hi[q]),
                                 _mm256_castsi256_ps(m1));
      }
    }
  }

  /// DotKernel: lanes 0-7 of the sixteen chains in one vector, 8-15 in
  /// another (dotAccumulate).
  template <int R>
  __attribute__((target("avx2,fma"), always_inline)) static inline void
  dotRows(int64_t k, const float *a, int64_t lda, const float *b, float *acc, bool first,
          float *sums) {
    __m256 lo[R], hi[R];
    for (int q = 0; q < R; ++q) {
      lo[q] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + q * kDotLanes);
      hi[q] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + q * kDotLanes + 8);
    }
    dotAccumulate<R>(k, a, lda, b, lo, hi);
    for (int q = 0; q < R; ++q) {
      if (!sums) {
        _mm256_storeu_ps(acc + q * kDotLanes, lo[q]);
        _mm256_storeu_ps(acc + q * kDotLanes + 8, hi[q]);
        continue;
      }
      // The same tree as AVX-512's: lanes l + 8, then + 4, + 2, + 1.
      sums[q] = sumLanes(_mm256_add_ps(lo[q], hi[q]));
    }
  }
  __attribute__((target("avx2,fma"))) static void dot(int64_t rows, int64_t k, const float *a,
                                                      int64_t lda, const float *b, float *acc,
                                                      bool first, float *sums) {
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4)
      dotRows<4>(k, a + r * lda, lda, b, acc ? acc + r * kDotLanes : nullptr, first,
                 sums ? sums + r : nullptr);
    for (; r < rows; ++r)
      dotRows<1>(k, a + r * lda, lda, b, acc ? acc + r * kDotLanes : nullptr, first,
                 sums ? sums + r : nullptr);
  }
  static constexpr DotKernel kDot = dot;

  /// DotTileKernel: R rows of one vector's chains (two 8-lane halves each)
  /// through all the items, vector by vector.
  template <int R>
  __attribute__((target("avx2,fma"))) static void
  dotColumn(int64_t items, int64_t k, const float *a, int64_t lda, int64_t strideA, const float *b,
            int64_t strideB, float *c, int64_t ldcRow, bool accumulate) {
    __m256 lo[R], hi[R];
    for (int r = 0; r < R; ++r)
      lo[r] = hi[r] = _mm256_setzero_ps();
    for (int64_t i = 0; i < items; ++i, a += strideA, b += strideB)
      dotAccumulate<R>(k, a, lda, b, lo, hi);
    for (int r = 0; r < R; ++r) {
      const float sum = sumLanes(_mm256_add_ps(lo[r], hi[r]));
      float &out = c[r * ldcRow];
      out = accumulate ? out + sum : sum;
    }
  }
  __attribute__((target("avx2,fma"))) static void
  dotTile(int64_t rows, int64_t cols, int64_t items, int64_t k, const float *a, int64_t lda,
          int64_t strideA, const float *b, int64_t ldb, int64_t strideB, float *c, int64_t ldcRow,
          int64_t ldcCol, bool accumulate) {
    for (int64_t q = 0; q < cols; ++q) {
      int64_t r = 0;
      for (; r + 4 <= rows; r += 4)
        dotColumn<4>(items, k, a + r * lda, lda, strideA, b + q * ldb, strideB,
                     c + r * ldcRow + q * ldcCol, ldcRow, accumulate);
      for (; r < rows; ++r)
        dotColumn<1>(items, k, a + r * lda, lda, strideA, b + q * ldb, strideB,
                     c + r * ldcRow + q * ldcCol, ldcRow, accumulate);
    }
  }
  static constexpr DotTileKernel kDotTile = dotTile;

  /// Lanes < n set (AVX2 masks are vectors: all-ones or zero per lane).
  __attribute__((target("avx2,fma"))) static __m256i laneMask(int64_t n) {
    __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::clamp<int64_t>(n, 0, 8))), index);
  }

  /// r[q][l] <- r[l][q]: pairs of rows interleaved by 32 and 64 bits, then
  /// 128-bit halves swapped across rows q and q + 4.
  __attribute__((target("avx2,fma"), always_inline)) static inline void transpose8(__m256 r[8]) {
    __m256 t[8];
#pragma GCC unroll 4
    for (int i = 0; i < 8; i += 2) { // t[i] = r[i][0] r[i+1][0] r[i][1] r[i+1][1] (per 128 bits)
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 2
    for (int i = 0; i < 8; i += 4) { // r[i + c]: column c (and c + 4) of rows i..i+3
      r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
      r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
      r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
      r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      t[c] = _mm256_permute2f128_ps(r[c], r[c + 4], 0x20);
      t[c + 4] = _mm256_permute2f128_ps(r[c], r[c + 4], 0x31);
    }
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c)
      r[c] = t[c];
  }

  /// One 8 x 8 block of PackTransposed: `rows` rows of src (the rest are
  /// zeros) and `steps` steps of each, written as `steps` rows of 8 floats.
  /// Full blocks need neither masks nor a count.
  template <bool Full>
  __attribute__((target("avx2,fma"), always_inline)) static inline void
  packBlock(const float *src, int64_t ld, int64_t rows, int64_t steps, int64_t pitch,
            float *dst) {
    __m256 r[8];
    __m256i mask = Full ? __m256i() : laneMask(steps);
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q)
      r[q] = Full       ? _mm256_loadu_ps(src + q * ld)
             : q < rows ? _mm256_maskload_ps(src + q * ld, mask)
                        : _mm256_setzero_ps();
    transpose8(r);
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q)
      if (Full || q < steps)
        _mm256_storeu_ps(dst + q * pitch, r[q]);
  }

  /// PackTransposed by 8 x 8 blocks; a block on the panel's ragged bottom or
  /// right edge loads masked and zero rows.
  __attribute__((target("avx2,fma"))) static void pack(const float *src, int64_t ld, int64_t kc,
                                                       int64_t nr, int64_t pitch, float *dst) {
    for (int64_t j0 = 0; j0 < nr; j0 += 8) {
      int64_t rows = std::min<int64_t>(8, nr - j0);
      const float *s = src + j0 * ld;
      int64_t p0 = 0;
      if (rows == 8)
        for (; p0 + 8 <= kc; p0 += 8)
          packBlock<true>(s + p0, ld, 8, 8, pitch, dst + p0 * pitch + j0);
      for (; p0 < kc; p0 += 8)
        packBlock<false>(s + p0, ld, rows, std::min<int64_t>(8, kc - p0), pitch,
                         dst + p0 * pitch + j0);
    }
  }
  static constexpr PackTransposed kPack = pack;

  template <int MR, int NV, bool TransA>
  __attribute__((target("avx2,fma"))) static void
  tile(int64_t strips, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb,
       float *c, int64_t ldc, int64_t nr, bool loadC, const char *ahead, int64_t aheadLines) {
    // Masked loads only for the vector on a ragged right edge, masked stores
    // only where no whole vector comes before it (vmaskmov is slow on AMD);
    // the branch is outside every loop.
    Edge edge;
    for (int v = 0; v < NV; ++v)
      edge.mask[v] = laneMask(nr - 8 * v);
    int64_t whole = std::min<int64_t>(NV, nr / 8); // vectors without a mask
    int64_t shift = nr % 8;
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    edge.index = _mm256_and_si256(_mm256_add_epi32(lane, _mm256_set1_epi32(int(shift))),
                                  _mm256_set1_epi32(7));
    edge.after = _mm256_castsi256_ps(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(int(7 - shift))));
    for (int64_t s = 0; s < strips; ++s, a += TransA ? MR : MR * lda, c += MR * ldc) {
      const AheadShare share(ahead, aheadLines, s, kc);
      if (whole == NV)
        strip<MR, NV, TransA, NV>(kc, a, lda, b, ldb, c, ldc, nr, edge, loadC, share);
      else if (whole == NV - 1)
        strip<MR, NV, TransA, NV - 1>(kc, a, lda, b, ldb, c, ldc, nr, edge, loadC, share);
      else
        strip<MR, NV, TransA, 0>(kc, a, lda, b, ldb, c, ldc, nr, edge, loadC, share);
    }
  }

  /// A ragged right edge: lane masks per vector, and for a ragged vector
  /// after a whole one (nr % 8 columns after 8 * v), how to make a vector of
  /// the row's last eight columns from the two: lane l takes lane
  /// index[l] of the whole vector, or of the ragged one where `after`.
  struct Edge {
    __m256i mask[2], index;
    __m256 after;
  };

  /// `whole` is a constant once the vector loops are unrolled.
  __attribute__((target("avx2,fma"), always_inline)) static inline __m256
  load(const float *x, bool whole, __m256i mask) {
    return whole ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, mask);
  }

  /// One step of a strip: B's row at b times each row's element of A at a (the
  /// row's, or with TransA the step's, r-th), into the tile.
  template <int MR, int NV, bool TransA, int Whole>
  __attribute__((target("avx2,fma"), always_inline)) static inline void
  step(__m256 (&acc)[MR][NV], const float *a, int64_t lda, const float *b, const Edge &edge) {
    __m256 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v)
      bv[v] = load(b + 8 * v, v < Whole, edge.mask[v]);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      __m256 av = _mm256_broadcast_ss(&elemA<TransA>(a, lda, r, 0));
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }

  /// A strip whose vectors v < Whole are whole (no masks), the others ragged.
  template <int MR, int NV, bool TransA, int Whole>
  __attribute__((target("avx2,fma"), always_inline)) static inline void
  strip(int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
        int64_t ldc, int64_t nr, const Edge &edge, bool loadC, AheadShare ahead) {
    __m256 acc[MR][NV];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v)
        acc[r][v] =
            loadC ? load(c + r * ldc + 8 * v, v < Whole, edge.mask[v]) : _mm256_setzero_ps();
    // The steps that prefetch first, then the rest in a loop of nothing but
    // the step and two pointer bumps: a 6 x 16 step is 12 FMAs and 8 loads,
    // and with a prefetch test and the rows' addresses computed in every
    // step, Zen 3's six-wide dispatch fell behind its FMA units (a step 31
    // instructions, now 24: the tiles 1.23-1.28x faster, the seed models'
    // GEMMs 1.27-1.33x -> 1.52-1.55x OpenBLAS on 1 thread, geometric means;
    // the same FMA chains, the same bits). Unrolled, GCC spilled the tile.
    const int64_t prefetched = std::min(kc, ahead.lines);
    const float *ap = a, *bp = b;
    int64_t p = 0;
    for (; p < prefetched; ++p, ap += TransA ? lda : 1, bp += ldb) {
      _mm_prefetch(ahead.from + 64 * p, _MM_HINT_T1);
      step<MR, NV, TransA, Whole>(acc, ap, lda, bp, edge);
    }
#pragma GCC unroll 1
    for (; p < kc; ++p, ap += TransA ? lda : 1, bp += ldb)
      step<MR, NV, TransA, Whole>(acc, ap, lda, bp, edge);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        float *cv = c + r * ldc + 8 * v;
        if (v < Whole) {
          _mm256_storeu_ps(cv, acc[r][v]);
        } else if (Whole > 0 && v == Whole) { // the last 8 columns, over the whole vector's
          __m256 low = _mm256_permutevar8x32_ps(acc[r][v > 0 ? v - 1 : 0], edge.index);
          __m256 high = _mm256_permutevar8x32_ps(acc[r][v], edge.index);
          _mm256_storeu_ps(c + r * ldc + nr - 8, _mm256_blendv_ps(low, high, edge.after));
        } else {
          _mm256_maskstore_ps(cv, edge.mask[v], acc[r][v]);
        }
      }
  }
};

//===- Scalar: any x86-64 (the compiler may vectorise the column loop) ----===//

struct Scalar {
  static constexpr int kLanes = 4, kRows[2] = {8, 4};
  static constexpr PackTransposed kPack = packTransposedScalar;

  template <int MR, int NV, bool TransA>
  static void tile(int64_t strips, int64_t kc, const float *a, int64_t lda, const float *b,
                   int64_t ldb, float *c, int64_t ldc, int64_t nr, bool loadC, const char *,
                   int64_t) { // (no prefetching: the portable set)
    for (int64_t s = 0; s < strips; ++s, a += TransA ? MR : MR * lda, c += MR * ldc)
      strip<MR, NV, TransA>(kc, a, lda, b, ldb, c, ldc, nr, loadC);
  }

  template <int MR, int NV, bool TransA>
  static void strip(int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb,
                    float *c, int64_t ldc, int64_t nr, bool loadC) {
    constexpr int NR = NV * kLanes;
    float acc[MR][NR];
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j)
        acc[r][j] = loadC && j < nr ? c[r * ldc + j] : 0.0f;
    for (int64_t p = 0; p < kc; ++p) {
      float row[NR];
      for (int j = 0; j < NR; ++j)
        row[j] = j < nr ? b[p * ldb + j] : 0.0f;
      for (int r = 0; r < MR; ++r) {
        float ar = elemA<TransA>(a, lda, r, p);
        for (int j = 0; j < NR; ++j)
          acc[r][j] += ar * row[j];
      }
    }
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < nr; ++j)
        c[r * ldc + j] = acc[r][j];
  }
};

/// kernel[transA][wide][mr - 1] of one ISA's instantiations.
template <class K, int NV, int... R>
void fillKernels(KernelSet &set, std::integer_sequence<int, R...>) {
  ((set.kernel[0][NV - 1][R] = &K::template tile<R + 1, NV, false>), ...);
  ((set.kernel[1][NV - 1][R] = &K::template tile<R + 1, NV, true>), ...);
}

template <class K> KernelSet makeSet(Isa isa, const char *name) {
  static_assert(K::kRows[0] <= kMaxRows && K::kRows[1] <= kMaxRows);
  KernelSet set{isa,     name,    K::kLanes, {K::kRows[0], K::kRows[1]}, {}, K::kPack, {}, nullptr,
                nullptr, nullptr, nullptr};
  fillKernels<K, 1>(set, std::make_integer_sequence<int, K::kRows[0]>());
  fillKernels<K, 2>(set, std::make_integer_sequence<int, K::kRows[1]>());
  if constexpr (std::is_same_v<K, Avx512>) {
    for (int j = 0; j < kMaxEdgeColumns; ++j)
      set.edge[j] = K::kEdge[j];
    set.windows = K::kWindows;
    set.smallK = K::kSmallK;
  }
  if constexpr (!std::is_same_v<K, Scalar>) {
    set.dot = K::kDot;
    set.dotTile = K::kDotTile;
  }
  return set;
}

} // namespace

const KernelSet &scalarKernels() {
  static const KernelSet set = makeSet<Scalar>(Isa::Scalar, "scalar");
  return set;
}

const KernelSet &avx2Kernels() {
  static const KernelSet set = makeSet<Avx2>(Isa::Avx2, "avx2");
  return set;
}

const KernelSet &avx512Kernels() {
  static const KernelSet set = makeSet<Avx512>(Isa::Avx512, "avx512");
  return set;
}

} // namespace tfc::rt::gemm
