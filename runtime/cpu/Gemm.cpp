//===- Gemm.cpp - tfc_sgemm: blocking, packing, threads -------------------===//
//
// GotoBLAS/BLIS structure around the register-tile kernels of
// GemmKernels.cpp: C is cut into NC-column blocks, K into equal steps of at
// most KC; op(B)'s block is packed into NR-column panels, then every strip
// of A's rows meets every panel in a kernel. A is read in place (a broadcast
// per row and step needs no packing, transposed or not), and so is a
// row-major B when few strips reuse its panels or they are short.
//
// Determinism: every C element is one FMA chain over k in order (see
// GemmKernels.h), or in a batch reduction over (item, k) in order; a GEMV's
// elements and a narrow right edge's (dotEdgeColumns) are sixteen lane
// chains and a fixed tree, chosen by the shape alone. The blocking and the
// thread split only decide who runs which chain, so any thread count gives
// the same bits.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Gemm.h"
#include "runtime/Abi.h"
#include "runtime/ThreadPool.h"
#include "runtime/cpu/GemmKernels.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tfc::rt::gemm {

Isa bestIsa() {
  static const Isa best = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
      return Isa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return Isa::Avx2;
    return Isa::Scalar;
  }();
  return best;
}

static const KernelSet &kernelsFor(Isa isa) {
  switch (isa) {
  case Isa::Avx512:
    return avx512Kernels();
  case Isa::Avx2:
    return avx2Kernels();
  case Isa::Scalar:
    break;
  }
  return scalarKernels();
}

static std::atomic<const KernelSet *> forced{nullptr};

void forceIsa(Isa isa) { forced.store(&kernelsFor(isa)); }

const KernelSet &activeKernels() {
  if (const KernelSet *set = forced.load(std::memory_order_relaxed))
    return *set;
  static const KernelSet &best = kernelsFor(bestIsa());
  return best;
}

} // namespace tfc::rt::gemm

namespace {

using namespace tfc::rt::gemm;

// Cache blocking, in floats. A KC x NR panel of B (32 KiB for AVX-512) stays
// in L1 while MC rows of A stream past it from L2; the packed KC x NC block
// (512 KiB) stays in L2 while the strips of A sweep it.
constexpr int64_t kKC = 256, kNC = 512, kMC = 128;
// Below this many multiply-adds (some 10 us on one core) a GEMM runs on the
// calling thread; parallel GEMMs go in tasks of at least kTaskMacs. The
// pool's workers spin between jobs (ThreadPool.cpp), so a job costs about a
// microsecond: the reverse task's 2048 x 32 x 32 products pay on 2 threads
// (train step 1.52 -> 1.36 ms against 2^24 and 2^20, medians of 300).
constexpr int64_t kParallelMinMacs = int64_t(1) << 20, kTaskMacs = int64_t(1) << 18;
// A GEMM too small for the pool may carry an epilogue that is not: the
// generated loops go on the pool from about this many elements.
constexpr int64_t kParallelEpilogueElements = int64_t(1) << 14;
// A multiply-add of a product with a side of 1 costs about this many of a
// tile kernel's (see sgemm).
constexpr int64_t kMemoryBoundCost = 8;
// Transposing one element of B into a pack costs about this many
// multiply-adds of a micro-kernel's time.
constexpr int64_t kTransposeCost = 8;
// A one-channel weight gradient with at most this many taps runs transposed.
constexpr int64_t kMaxTransposedTaps = 16;
// A batch item's plain A is transposed for the kernels up to this many
// floats (64 KiB: it stays in L2 beside B's panel).
constexpr int64_t kMaxItemTransposedA = int64_t(1) << 14;
// A right edge of up to this many columns over a plain A goes by dot
// products (dotEdgeColumns): four lane chains a row and column a vector of A,
// where the tiles' 256-bit half would spend a vector on four columns.
constexpr int64_t kMaxDotEdgeColumns = 4;
// Up to this many multiply-adds a product of one panel and one K step goes
// straight to the tile kernels (sgemm's tiny path).
constexpr int64_t kTinyMacs = int64_t(1) << 13;
// A row-major B with long K steps is packed only for more rows than this:
// four strips of AVX-512's wide tile, eight of AVX2's (at four, the reverse
// task's 32 x 32 x 2048 weight gradients packed B for five strips, 1.10-1.14x
// slower on a Zen 3; 64 and 96 rows are the same either way).
constexpr int64_t kPackBMinRows = 48;
// An outer product's rows are stored in one run from this many columns.
constexpr int64_t kOuterMinColumns = 16;

/// One GEMM of the batch: C = op(A) op(B) (+ C).
struct Problem {
  int64_t m, n, k;
  const float *a;
  int64_t lda;
  bool transA;
  const float *b;
  int64_t ldb;
  bool transB;
  float *c;
  int64_t ldc;
  bool accumulate;
  // B's row p is at b + (p / kInner) * ldb + (p % kInner) * ldbInner: a
  // convolution's window of taps over channels (kInner 1: plain rows).
  int64_t kInner = 1, ldbInner = 0;
  // With bWidth > 0, B's rows are those of an unpadded input: row (c, j)'s
  // column t reads x[c][t + j - bPad] when that lies in [0, bWidth), else 0
  // (the zero padding, never stored).
  int64_t bPad = 0, bWidth = 0;
  // A's row i is at a + (i / mInner) * ldaOuter + (i % mInner) * lda (not
  // transposed): a weight gradient's taps over channels (mInner m: plain).
  int64_t mInner = 0, ldaOuter = 0;
  // With aWidth > 0, A's rows are those of an unpadded input: row (o, i)'s
  // column p reads a[i * lda + o * ldaOuter + p - aPad] when that column,
  // o * ldaOuter + p - aPad, lies in [0, aWidth), else 0 (tfc_sgemm_taps).
  int64_t aPad = 0, aWidth = 0;
  // A^T[p][i] at aT + p * ldaT + i, when the edge kernels may read it (A
  // itself if transposed, else a transposed copy of an A the batch shares).
  const float *aT = nullptr;
  int64_t ldaT = 0;
  const float *bRow(int64_t p) const {
    return kInner == 1 ? b + p * ldb : b + (p / kInner) * ldb + (p % kInner) * ldbInner;
  }
  /// op(B)[p][j], zero padding included.
  float bAt(int64_t p, int64_t j) const {
    if (transB)
      return b[j * ldb + p];
    if (bWidth <= 0)
      return bRow(p)[j];
    const int64_t shift = (p % kInner) * ldbInner - bPad;
    return j + shift >= 0 && j + shift < bWidth ? b[(p / kInner) * ldb + shift + j] : 0.0f;
  }
  /// op(A)[i][p], where the kernels start reading a strip.
  const float *aAt(int64_t i, int64_t p) const {
    if (transA)
      return a + p * lda + i;
    return a + (i / mInner) * ldaOuter + (i % mInner) * lda + p - aPad;
  }
  /// The columns [lo, hi) of A's row i inside an unpadded input (all of K
  /// without one): the rest are zeros, which the FMA chains skip.
  std::pair<int64_t, int64_t> aColumns(int64_t i) const {
    if (aWidth <= 0)
      return {0, k};
    const int64_t shift = (i / mInner) * ldaOuter - aPad;
    return {std::clamp<int64_t>(-shift, 0, k), std::clamp<int64_t>(aWidth - shift, 0, k)};
  }
};

/// packRows for windows over an unpadded input (g.bWidth > 0): each row's
/// columns outside the input are zeros. A panel row wholly inside is one
/// copy of a size known here, as in packRows.
template <int64_t NR>
void packPaddedRows(const Problem &g, int64_t lanes, int64_t p0, int64_t kc, int64_t j0,
                    int64_t nc, float *dst) {
  const int64_t full = nc / NR * NR, nr = nc - full, pitch = nr <= lanes ? lanes : NR;
  // Columns [from, to) of a panel row starting at column c0, the rest zeros.
  auto part = [](float *d, const float *row, int64_t c0, int64_t width, int64_t lo,
                 int64_t hi) {
    int64_t from = std::clamp<int64_t>(lo - c0, 0, width), to = std::clamp<int64_t>(hi - c0, 0, width);
    std::fill(d, d + from, 0.0f);
    if (to > from)
      std::memcpy(d + from, row + c0 + from, sizeof(float) * (to - from));
    std::fill(d + std::max(from, to), d + width, 0.0f);
  };
  for (int64_t p = 0; p < kc; ++p) {
    const int64_t k = p0 + p, shift = (k % g.kInner) * g.ldbInner - g.bPad;
    // Row k's column t is x[t + shift] for t in [lo, hi), 0 elsewhere.
    const float *row = g.b + (k / g.kInner) * g.ldb + shift;
    const int64_t lo = -shift, hi = g.bWidth - shift;
    for (int64_t jr = 0; jr < full; jr += NR) {
      const int64_t c0 = j0 + jr;
      float *d = dst + jr * kc + p * NR;
      if (c0 >= lo && c0 + NR <= hi)
        std::memcpy(d, row + c0, sizeof(float) * NR);
      else
        part(d, row, c0, NR, lo, hi);
    }
    if (nr > 0)
      part(dst + full * kc + p * pitch, row, j0 + full, nr, lo, hi);
  }
}

#if defined(__x86_64__)
/// packPaddedRows for AVX-512 and 32-column panels, without a library call:
/// a panel row is two vectors, loaded masked to the input's columns (masked
/// lanes read nothing and come back zero) and stored whole.
__attribute__((target("avx512f"))) void packPaddedRowsAvx512(const Problem &g, int64_t p0,
                                                             int64_t kc, int64_t j0, int64_t nc,
                                                             float *dst) {
  constexpr int64_t NR = 32;
  const int64_t full = nc / NR * NR, nr = nc - full, pitch = nr <= 16 ? 16 : NR;
  // Lanes [lo - c0, hi - c0) of a 16-column vector starting at column c0.
  auto lanes = [](int64_t c0, int64_t lo, int64_t hi) {
    int64_t from = std::clamp<int64_t>(lo - c0, 0, 16), to = std::clamp<int64_t>(hi - c0, 0, 16);
    return to <= from ? __mmask16(0) : __mmask16(((1u << (to - from)) - 1) << from);
  };
  for (int64_t p = 0; p < kc; ++p) {
    const int64_t k = p0 + p, shift = (k % g.kInner) * g.ldbInner - g.bPad;
    const float *row = g.b + (k / g.kInner) * g.ldb + shift;
    const int64_t lo = -shift, hi = g.bWidth - shift;
    for (int64_t jr = 0; jr < full; jr += NR) {
      const int64_t c0 = j0 + jr;
      float *d = dst + jr * kc + p * NR;
      if (c0 >= lo && c0 + NR <= hi) {
        _mm512_storeu_ps(d, _mm512_loadu_ps(row + c0));
        _mm512_storeu_ps(d + 16, _mm512_loadu_ps(row + c0 + 16));
      } else {
        _mm512_storeu_ps(d, _mm512_maskz_loadu_ps(lanes(c0, lo, hi), row + c0));
        _mm512_storeu_ps(d + 16, _mm512_maskz_loadu_ps(lanes(c0 + 16, lo, hi), row + c0 + 16));
      }
    }
    if (nr > 0) {
      const int64_t c0 = j0 + full;
      float *d = dst + full * kc + p * pitch;
      const __mmask16 in[2] = {__mmask16(lanes(c0, lo, hi) & lanes(c0, c0, c0 + nr)),
                               __mmask16(lanes(c0 + 16, lo, hi) & lanes(c0 + 16, c0, c0 + nr))};
      _mm512_storeu_ps(d, _mm512_maskz_loadu_ps(in[0], row + c0));
      if (pitch == NR)
        _mm512_storeu_ps(d + 16, _mm512_maskz_loadu_ps(in[1], row + c0 + 16));
    }
  }
}
#endif

/// What the problems of one tfc_sgemm call share.
struct Plan {
  const KernelSet &ks;
  int64_t kStep; // K in equal steps of at most KC (320 = 2 x 160, not 256 + 64)
  // A row-major B is packed when many row strips reuse each panel and the
  // panel is tall (read in place, its rows are ldb apart and it no longer
  // stays in L1). A short panel is read in place even when a long batch
  // streams it from L3: the first strip's loads then overlap its FMAs,
  // where packing would wait for memory with nothing to compute (Fleuret
  // attention's per-sample products, 64 x 100 x 64: 77-90 -> 93-99
  // GFLOP/s; train step 71.3-73.9 -> 67.7-70.3 ms on 1 thread, Zen 4).
  bool packReusedB;
};

/// The rows of a row-major B's panels (see packB): a full panel's row is a
/// copy of a size known here, which the compiler turns into a couple of
/// vector moves; a loop over nr would be a call or a loop with its own tail.
template <int64_t NR>
void packRows(const Problem &g, int64_t lanes, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
              float *dst) {
  const int64_t full = nc / NR * NR, nr = nc - full, pitch = nr <= lanes ? lanes : NR;
  // Row by row, so that B streams through memory in order.
  for (int64_t p = 0; p < kc; ++p) {
    const float *src = g.bRow(p0 + p) + j0;
    for (int64_t jr = 0; jr < full; jr += NR)
      std::memcpy(dst + jr * kc + p * NR, src + jr, sizeof(float) * NR);
    for (int64_t j = 0; j < nr; ++j)
      dst[full * kc + p * pitch + j] = src[full + j];
  }
}

/// Packs op(B)[p0 : p0 + kc, j0 : j0 + nc] into panels of NR columns, panel
/// q at dst + q * NR * kc with rows of NR floats; a last panel that fits in
/// one vector has rows of `lanes` floats.
void packB(const Problem &g, const KernelSet &ks, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
           float *dst) {
  const int64_t NR = 2 * ks.lanes;
  if (g.transB) { // (windows never come transposed: tfc_sgemm_windows)
    for (int64_t jr = 0; jr < nc; jr += NR) {
      int64_t nr = std::min(NR, nc - jr);
      ks.packTransposed(g.b + (j0 + jr) * g.ldb + p0, g.ldb, kc, nr,
                        nr <= ks.lanes ? int64_t(ks.lanes) : NR, dst + jr * kc);
    }
    return;
  }
  // Row-major panels, with the panel width a constant in each instance.
  auto pack = [&](auto width) {
    constexpr int64_t W = decltype(width)::value;
    if (g.bWidth > 0) {
#if defined(__x86_64__)
      if (ks.isa == Isa::Avx512 && W == 32)
        return packPaddedRowsAvx512(g, p0, kc, j0, nc, dst);
#endif
      return packPaddedRows<W>(g, ks.lanes, p0, kc, j0, nc, dst);
    }
    return packRows<W>(g, ks.lanes, p0, kc, j0, nc, dst);
  };
  switch (NR) {
  case 32:
    return pack(std::integral_constant<int64_t, 32>());
  case 16:
    return pack(std::integral_constant<int64_t, 16>());
  default:
    return pack(std::integral_constant<int64_t, 8>());
  }
}

/// A thread's packing space for a KC x NC block of B, allocated on its first
/// GEMM that packs.
float *packBuffer() {
  struct Buffer {
    float *data = static_cast<float *>(std::aligned_alloc(64, sizeof(float) * kKC * kNC));
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  return buffer.data;
}

/// `rows` cut into as few strips of at most `maxRows` as possible, of equal
/// heights (two that differ by one): a thin last strip would have too few
/// FMA chains to hide the FMA latency. `taller` strips of height + 1 rows
/// come first, then the rest of `height` rows.
struct Strips {
  int64_t count, height, taller;
  Strips(int64_t rows, int64_t maxRows) {
    // One or two strips without a division: a tiny product's whole call is
    // some 50 ns, and two divisions took a tenth of it.
    if (rows <= maxRows)
      count = 1, height = rows, taller = 0;
    else if (rows <= 2 * maxRows)
      count = 2, height = rows >> 1, taller = rows & 1;
    else
      count = (rows + maxRows - 1) / maxRows, height = rows / count, taller = rows % count;
  }
  /// `call(i, height, strips)` once for the taller strips (from row i0) and
  /// once for the rest: one kernel call each.
  template <class Call> void each(int64_t i0, Call call) const {
    if (taller)
      call(i0, height + 1, taller);
    call(i0 + taller * (height + 1), height, count - taller);
  }
};

/// The generated code a GEMM runs on rows of C as it completes them
/// (tfc_sgemm_epilogue). Its rows are those of the whole batch: row
/// item * M + i is row i of the item's C (of C itself in a reduction).
struct Epilogue {
  void (*body)(void *, int64_t, int64_t);
  void *context;
  int64_t rowOffset = 0; // item * M: rows [i0, i1) of one item's C
  void operator()(int64_t i0, int64_t i1) const { body(context, i0 + rowOffset, i1 + rowOffset); }
  Epilogue forItem(int64_t item, int64_t m) const { return {body, context, item * m}; }
};

/// Whether `rows` rows of a convolution's windows run straight from its
/// input (KernelSet::windows): a packed panel would serve too few rows to
/// pay for its copy (a one-channel output: M = 1, K = 64 x 5).
/// A plain B goes the same way under a few rows (M = 1: 1 x 256 x 640): one
/// row's tile would keep only two FMA chains in flight.
bool readsWindowsInPlace(const Problem &g, const KernelSet &ks, int64_t rows) {
  return ks.windows && !g.transA && !g.transB && !g.aWidth &&
         rows <= kMaxWindowRows && g.kInner <= kMaxWindowTaps && g.k % g.kInner == 0 &&
         g.mInner == g.m;
}

/// Whether `rows` rows of a short K run with B's rows in registers
/// (KernelSet::smallK): a plain A, op(B) row-major (a convolution's windows
/// or plain rows), all of K at once.
/// From two vectors of columns here (measured on 64 x 100 x 5 and 2048 x 32
/// x 10); sgemm's tiny path takes it from 9 (32 x 10 x 6), a narrow tile's
/// 256-bit halves serving 8 or fewer better.
bool readsSmallKInPlace(const Problem &g, const KernelSet &ks, int64_t rows, int64_t columns) {
  return ks.smallK && !g.transA && !g.transB && !g.aWidth && g.mInner == g.m && g.k <= kMaxSmallK &&
         rows >= kMinSmallKRows && columns >= 2 * ks.lanes && g.kInner <= kMaxWindowTaps &&
         g.k % g.kInner == 0;
}

/// The next batch item's operands and C, pulled into L1 while the current
/// item computes, a few cache lines by each tile kernel call (one a step of
/// its K loop): a batch of small products streams every item's A or B from
/// memory, and the packing (or the first strip) would otherwise wait for it
/// with nothing to compute; C's lines, written whole, were read for
/// ownership as the stores missed (Fleuret attention's 64 x 100 x 100 per
/// sample 81 -> 95 GFLOP/s, its train step 65-67 -> 63-65 ms on 1 thread).
/// Into L1 rather than L2 (the kernels' prefetch hint T0): Fleuret
/// attention's train step 49.4 -> 48.6 ms on 1 thread, 25.2-25.4 -> 24.8-24.9
/// on 2 (A/B minimums, Zen 4).
struct Prefetch {
  const char *next[3] = {nullptr, nullptr, nullptr}, *end[3] = {nullptr, nullptr, nullptr};
  int64_t lines = 0; // per kernel call
  void range(int slot, const float *from, int64_t floats) {
    next[slot] = reinterpret_cast<const char *>(from);
    end[slot] = next[slot] + sizeof(float) * std::max<int64_t>(floats, 0);
  }
  /// The next run of at most `lines` lines, for a kernel to prefetch.
  std::pair<const char *, int64_t> take() {
    for (int slot = 0; slot < 3; ++slot)
      if (next[slot] < end[slot]) {
        const char *from = next[slot];
        int64_t run = std::min<int64_t>(lines, (end[slot] - from + 63) / 64);
        next[slot] += 64 * run;
        return {from, run};
      }
    return {nullptr, 0};
  }
};

/// The right edge of C that goes to dot products along K over a plain A's
/// rows as they lie (KernelSet::dotTile), or 0: the last n % 32 columns
/// (AVX-512's panel width, for every ISA: AVX2 and AVX-512 then compute the
/// same columns the same way), where they are at most kMaxDotEdgeColumns
/// beside whole panels and no A^T is at hand. The edge kernel would need this item's A
/// transposed, a copy that cost as much as the edge's FMAs (Fleuret
/// attention's 96 x 100 x 100 per sample: the tiles on a plain A are as
/// fast as on A^T). Each element of those columns is sixteen lane chains
/// and a fixed tree, as a GEMV's; which columns they are depends on the
/// shape alone, not on the blocking or the threads.
int64_t dotEdgeColumns(const Problem &g, const KernelSet &ks) {
  constexpr int64_t kPanel = 32;
  const int64_t edge = g.n % kPanel;
  const bool fits = ks.dotTile && !g.transA && !g.aT && g.mInner == g.m && g.aWidth == 0 &&
                    g.n > kPanel && g.k >= kDotLanes;
  return fits && edge <= kMaxDotEdgeColumns ? edge : 0;
}

/// dst[q * k + p] = op(B)[p][j + q] for q < e, p < k: a plain B's right
/// edge as rows along K, for the dot products. Four columns of plain rows
/// go in 4 x 4 transposes (an element at a time was 1% of a 96 x 100 x 100
/// product).
void packEdgeColumns(const Problem &g, int64_t j, int64_t e, float *dst) {
  int64_t p = 0;
#if defined(__SSE__)
  if (e == 4 && g.kInner == 1 && g.bWidth == 0)
    for (; p + 4 <= g.k; p += 4) {
      __m128 r0 = _mm_loadu_ps(g.b + p * g.ldb + j), r1 = _mm_loadu_ps(g.b + (p + 1) * g.ldb + j),
             r2 = _mm_loadu_ps(g.b + (p + 2) * g.ldb + j),
             r3 = _mm_loadu_ps(g.b + (p + 3) * g.ldb + j);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(dst + p, r0);
      _mm_storeu_ps(dst + g.k + p, r1);
      _mm_storeu_ps(dst + 2 * g.k + p, r2);
      _mm_storeu_ps(dst + 3 * g.k + p, r3);
    }
#endif
  for (; p < g.k; ++p)
    for (int64_t q = 0; q < e; ++q)
      dst[q * g.k + p] = g.bAt(p, j + q);
}

/// C[i0:i1, j0:j1] of one problem, on the calling thread. `rowsDone`, when
/// given (the block then spans every column of C), runs on each block of
/// rows once its last K step is stored, while the rows are still in cache.
void gemmBlock(const Problem &g, const Plan &plan, int64_t i0, int64_t i1, int64_t j0,
               int64_t j1, const Epilogue *rowsDone = nullptr, Prefetch *ahead = nullptr) {
  const KernelSet &ks = plan.ks;
  const int64_t kStep = plan.kStep;
  if (g.k == 0) {
    if (!g.accumulate)
      for (int64_t i = i0; i < i1; ++i)
        std::fill(g.c + i * g.ldc + j0, g.c + i * g.ldc + j1, 0.0f);
    if (rowsDone)
      (*rowsDone)(i0, i1);
    return;
  }
  // The right edge first, over all the rows, when it goes by dot products
  // (before the paths below, whichever of them runs the rest): the tiles'
  // last block of rows then completes C's rows (rowsDone).
  const int64_t dotEdge = j1 == g.n ? dotEdgeColumns(g, ks) : 0;
  if (dotEdge > 0) {
    const int64_t j = g.n - dotEdge;
    // op(B)'s edge columns as rows: a transposed B's own, else copied.
    const float *bT = g.b + j * g.ldb;
    int64_t ldbT = g.ldb;
    thread_local std::vector<float> edgeB;
    if (!g.transB) {
      edgeB.resize(size_t(dotEdge * g.k));
      packEdgeColumns(g, j, dotEdge, edgeB.data());
      bT = edgeB.data(), ldbT = g.k;
    }
    ks.dotTile(i1 - i0, dotEdge, 1, g.k, g.a + i0 * g.lda, g.lda, 0, bT, ldbT, 0,
               g.c + i0 * g.ldc + j, g.ldc, 1, g.accumulate);
    j1 = std::max(j0, j);
    if (j1 == j0) {
      if (rowsDone)
        (*rowsDone)(i0, i1);
      return;
    }
  }
  if (readsSmallKInPlace(g, ks, i1 - i0, j1 - j0)) {
    ks.smallK(i1 - i0, j1 - j0, g.k, g.aAt(i0, 0), g.lda, g.b, g.ldb, g.kInner, g.ldbInner, j0,
              g.bPad, g.bWidth, g.c + i0 * g.ldc + j0, g.ldc, g.accumulate);
    if (rowsDone)
      (*rowsDone)(i0, i1);
    return;
  }
  if (readsWindowsInPlace(g, ks, i1 - i0)) {
    ks.windows(i1 - i0, j1 - j0, g.k, g.aAt(i0, 0), g.lda, g.b, g.ldb, g.kInner, g.ldbInner, j0,
               g.bPad, g.bWidth, g.c + i0 * g.ldc + j0, g.ldc, g.accumulate);
    if (rowsDone)
      (*rowsDone)(i0, i1);
    return;
  }
  const int64_t NR = 2 * ks.lanes;
  // A transposed B is always packed: the kernels load rows of op(B).
  const bool pack =
      g.transB || g.kInner > 1 || g.bWidth > 0 || (plan.packReusedB && i1 - i0 > kPackBMinRows);
  float *block = pack ? packBuffer() : nullptr;
  // A^T[p][i] at aT + p * ldaT + i - aTRow: the call's (a transposed A, or
  // a shared one transposed once), or this item's rows of a plain A,
  // transposed here (a 16 x 16 transpose in registers) when two panels of
  // columns at least share the copy (the reverse task's 2048 x 32 x 10: 94
  // -> 60 GFLOP/s), for the transposed-A kernels and the edge. Its rows are
  // padded to 16 floats, and off a multiple of 1 KiB, which would put a
  // strip's steps in one set of L1. Not when the edge went by dot products:
  // the copy would serve the tiles alone, which run as fast on plain rows.
  const float *aT = g.aT;
  int64_t ldaT = g.ldaT, aTRow = 0;
  thread_local std::vector<float> itemAT;
  if (!aT && !g.transA && g.mInner == g.m && g.aWidth == 0 && j1 - j0 >= 2 * NR && dotEdge == 0 &&
      (i1 - i0) * g.k <= kMaxItemTransposedA) {
    ldaT = (i1 - i0 + 15) / 16 * 16, aTRow = i0;
    if (ldaT % 256 == 0)
      ldaT += 16;
    itemAT.resize(size_t(ldaT * g.k));
    ks.packTransposed(g.a + i0 * g.lda, g.lda, g.k, i1 - i0, ldaT, itemAT.data());
    aT = itemAT.data();
  }

  for (int64_t jc = j0; jc < j1; jc += kNC) {
    int64_t nc = std::min(kNC, j1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += kStep) {
      int64_t kc = std::min(kStep, g.k - pc);
      bool loadC = g.accumulate || pc > 0; // later K steps continue the chains in C
      if (pack)
        packB(g, ks, pc, kc, jc, nc, block);

      // Blocks of rows never straddle two of A's row levels.
      for (int64_t ic = i0, iEnd; ic < i1; ic = iEnd) {
        iEnd = std::min({ic + kMC, i1, (ic / g.mInner + 1) * g.mInner});
        const Strips strips[2] = {{iEnd - ic, ks.rows[0]}, {iEnd - ic, ks.rows[1]}};
        // The block's columns of A inside an unpadded input, in this K step.
        auto [lo, hi] = g.aColumns(ic);
        const int64_t p0 = std::max(pc, lo), p1 = std::min(pc + kc, hi);
        if (p1 <= p0) { // all padding: C is 0 or stays
          if (!loadC)
            for (int64_t i = ic; i < iEnd; ++i)
              std::fill(g.c + i * g.ldc + jc, g.c + i * g.ldc + jc + nc, 0.0f);
          if (rowsDone && jc + nc >= j1 && pc + kc >= g.k)
            (*rowsDone)(ic, iEnd);
          continue;
        }
        for (int64_t jr = 0; jr < nc; jr += NR) {
          int64_t nr = std::min(NR, nc - jr);
          bool wide = nr > ks.lanes;
          int64_t ldbp = !pack ? g.ldb : wide ? NR : ks.lanes;
          const float *bp = (pack ? block + jr * kc : g.b + pc * g.ldb + jc + jr) + (p0 - pc) * ldbp;
          // A^T, where there is one, is read by the transposed-A kernels:
          // a step's broadcasts then lie side by side behind one pointer,
          // where a plain A's rows cost an add each (and, as first written,
          // a register each, which GCC spilled: 96 x 100 x 64 products 87
          // -> 94 GFLOP/s).
          const MicroKernel *kernels = ks.kernel[aT || g.transA][wide];
          auto run = [&](int64_t i, int64_t height, int64_t count) {
            auto [from, lines] = ahead ? ahead->take() : std::pair<const char *, int64_t>();
            kernels[height - 1](count, p1 - p0, aT ? aT + p0 * ldaT + i - aTRow : g.aAt(i, p0),
                                aT ? ldaT : g.lda, bp, ldbp, g.c + i * g.ldc + jc + jr, g.ldc,
                                nr, loadC, from, lines);
          };
          // A few columns on the right edge: vectors along the rows (more
          // than four only over two vectors of rows at least: a few rows
          // of a dozen columns keep too few FMA chains in flight).
          if (nr <= kMaxEdgeColumns && aT && ks.edge[nr - 1] &&
              (nr <= 4 || iEnd - ic >= 2 * ks.lanes)) {
            ks.edge[nr - 1](iEnd - ic, p1 - p0, aT + p0 * ldaT + ic - aTRow, ldaT, bp, ldbp,
                            g.c + ic * g.ldc + jc + jr, g.ldc, loadC);
            continue;
          }
          strips[wide].each(ic, run);
        }
        if (rowsDone && jc + nc >= j1 && pc + kc >= g.k)
          (*rowsDone)(ic, iEnd);
      }
    }
  }
}

/// The epilogue over all of C's rows, after the GEMM, on the pool.
void runEpilogueAfter(const Epilogue &epilogue, int64_t m, int64_t n) {
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(n, 1));
  tfc::rt::parallelFor(m, grain, [&](int64_t i0, int64_t i1) { epilogue(i0, i1); });
}

/// A GEMV, C = A b (N = 1; b's elements one float apart), with the batch as
/// tfc_sgemm has it: items strideC apart, or summed into one C (strideC 0).
/// A's rows are (tap j, channel c), row j * channels + c at a + c * lda +
/// j * ldaOuter (taps 1: plain rows); with aWidth > 0 a row's column p reads
/// x[c][j * ldaOuter + p - aPad] inside [0, aWidth) and 0 outside (an
/// unpadded input, padded sample by sample into scratch). Every row is read
/// as it lies, in sixteen FMA chains (KernelSet::dot) that run on through the
/// items of a reduction; their lanes are then added in a fixed tree, the
/// same for any ISA, loop order or thread count. Sample by sample, every
/// tap's rows go while the sample's channels are in L1; threads take
/// contiguous ranges of channels.
void gemvDot(const KernelSet &ks, int64_t batch, int64_t channels, int64_t taps, int64_t k,
             const float *a, int64_t lda, int64_t ldaOuter, int64_t strideA, int64_t aPad,
             int64_t aWidth, const float *b, int64_t strideB, float *c, int64_t ldc,
             int64_t strideC, bool accumulate) {
  constexpr int64_t kRows = 64; // channels a block
  const bool reduce = strideC == 0 && batch > 1;
  const int64_t span = (taps - 1) * ldaOuter + k; // a padded channel
  // Without a reduction an item's chains start and end in one dot call and
  // never go through memory; their sums go straight to C when its elements
  // are adjacent and not added to (the set anomaly's 640 x 1 x 256: the
  // chains' 4 KiB zeroed and the sums copied were a tenth of the call).
  const bool direct = !reduce && ldc == 1 && !accumulate;
  auto block = [&](int64_t c0, int64_t c1) {
    std::vector<float> acc(reduce ? size_t(taps * kRows * kDotLanes) : 0),
        sums(direct ? 0 : size_t(taps * kRows)), padded(aWidth > 0 ? size_t(kRows * span) : 0);
    // Blocks of kRows channels keep a sample's taps in L1 and bound the
    // scratch; one tap straight into C needs neither.
    const int64_t blockRows = direct && taps == 1 && aWidth == 0 ? c1 - c0 : kRows;
    for (int64_t lo = c0; lo < c1; lo += blockRows) {
      const int64_t rows = std::min(blockRows, c1 - lo);
      for (int64_t item = 0; item < batch; ++item) {
        const bool first = !reduce || item == 0, last = !reduce || item == batch - 1;
        const float *x = a + item * strideA + lo * lda;
        float *cItem = c + (reduce ? 0 : item * strideC);
        int64_t pitch = lda;
        if (aWidth > 0) {
          // Row r's column q is x[r][q - aPad] for q in [q0, q1), else 0: a
          // copy between two runs of zeros (an element at a time, with its
          // bounds test, it had been a third of the call).
          const int64_t q0 = std::clamp<int64_t>(aPad, 0, span),
                        q1 = std::clamp<int64_t>(aPad + aWidth, q0, span);
          for (int64_t r = 0; r < rows; ++r) {
            float *row = padded.data() + r * span;
            std::fill(row, row + q0, 0.0f);
            std::copy(x + r * lda + q0 - aPad, x + r * lda + q1 - aPad, row + q0);
            std::fill(row + q1, row + span, 0.0f);
          }
          x = padded.data(), pitch = span;
        }
        for (int64_t j = 0; j < taps; ++j)
          ks.dot(rows, k, x + j * ldaOuter, pitch, b + item * strideB,
                 reduce ? acc.data() + j * kRows * kDotLanes : nullptr, first,
                 !last    ? nullptr
                 : direct ? cItem + j * channels + lo
                          : sums.data() + j * kRows);
        if (!last || direct)
          continue;
        for (int64_t j = 0; j < taps; ++j)
          for (int64_t r = 0; r < rows; ++r) {
            float &out = cItem[(j * channels + lo + r) * ldc];
            const float sum = sums[size_t(j * kRows + r)];
            out = accumulate ? out + sum : sum;
          }
      }
    }
  };
  // Memory-bound: on the pool from kMemoryBoundCost times fewer multiply-adds.
  if (batch * taps * channels * k * kMemoryBoundCost < kParallelMinMacs || channels < 16)
    return block(0, channels);
  tfc::rt::parallelFor(channels, 8, block);
}

/// Dot products along K of a's rows with b's, summed over `items` items
/// (strideA and strideB apart), c[r * ldcRow + q * ldcCol] for r < rows and
/// q < cols (KernelSet::dotTile). Threads take ranges of a's rows, four at
/// a time: every element's chains stay whole.
void dotProducts(const KernelSet &ks, int64_t items, int64_t rows, int64_t cols, int64_t k,
                 const float *a, int64_t lda, int64_t strideA, const float *b, int64_t ldb,
                 int64_t strideB, float *c, int64_t ldcRow, int64_t ldcCol, bool accumulate) {
  auto block = [&](int64_t r0, int64_t r1) {
    ks.dotTile(r1 - r0, cols, items, k, a + r0 * lda, lda, strideA, b, ldb, strideB,
               c + r0 * ldcRow, ldcRow, ldcCol, accumulate);
  };
  // Memory-bound, as gemvDot.
  if (items * rows * cols * k * kMemoryBoundCost < kParallelMinMacs || rows < 16 ||
      tfc::rt::availableThreads() == 1)
    return block(0, rows);
  const int64_t quads = (rows + 3) / 4;
  tfc::rt::parallelFor(quads, 1,
                       [&](int64_t q0, int64_t q1) { block(4 * q0, std::min(rows, 4 * q1)); });
}

/// C (+)= a b^T for each item (K = 1): a's element i at a[i * strideI], b's
/// element j at b[j * strideJ]; the batch's rows split across the threads in
/// contiguous ranges, each row's stores in one run.
void outerProducts(int64_t batch, int64_t m, int64_t n, const float *a, int64_t strideI,
                   int64_t strideA, const float *b, int64_t strideJ, int64_t strideB, float *c,
                   int64_t ldc, int64_t strideC, bool accumulate, const Epilogue *epilogue) {
  // Rows [r0, r1) of the batch, row item * m + i being row i of item's C.
  auto rows = [&](int64_t r0, int64_t r1) {
    std::vector<float> gathered;
    for (int64_t item = r0 / m; item * m < r1; ++item) {
      const int64_t i0 = std::max<int64_t>(r0 - item * m, 0),
                    i1 = std::min<int64_t>(r1 - item * m, m);
      const float *bj = b + item * strideB;
      if (strideJ != 1) { // a transposed B's row: gathered once
        gathered.resize(size_t(n));
        for (int64_t j = 0; j < n; ++j)
          gathered[size_t(j)] = bj[j * strideJ];
        bj = gathered.data();
      }
      for (int64_t i = i0; i < i1; ++i) {
        const float ai = a[item * strideA + i * strideI];
        float *row = c + item * strideC + i * ldc;
#if defined(__AVX512F__)
        // (GCC's own vectorisation of the loop below ran 8.0 us, this 6.0;
        // masked stores are slow on Zen 4: only the tail's.)
        const __m512 av = _mm512_set1_ps(ai);
        int64_t j = 0;
        if (accumulate)
          for (; j + 16 <= n; j += 16)
            _mm512_storeu_ps(
                row + j, _mm512_fmadd_ps(av, _mm512_loadu_ps(bj + j), _mm512_loadu_ps(row + j)));
        else
          for (; j + 16 <= n; j += 16)
            _mm512_storeu_ps(row + j,
                             _mm512_fmadd_ps(av, _mm512_loadu_ps(bj + j), _mm512_setzero_ps()));
        if (j < n) {
          const __mmask16 lanes = __mmask16((1u << (n - j)) - 1);
          const __m512 from =
              accumulate ? _mm512_maskz_loadu_ps(lanes, row + j) : _mm512_setzero_ps();
          _mm512_mask_storeu_ps(row + j, lanes,
                                _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(lanes, bj + j), from));
        }
#else
        if (accumulate)
          for (int64_t j = 0; j < n; ++j)
            row[j] = std::fma(ai, bj[j], row[j]);
        else
          for (int64_t j = 0; j < n; ++j)
            row[j] = std::fma(ai, bj[j], 0.0f);
#endif
      }
      if (epilogue)
        epilogue->forItem(item, m)(i0, i1);
    }
  };
  const int64_t total = batch * m, work = total * n * kMemoryBoundCost;
  if (work < kParallelMinMacs || tfc::rt::availableThreads() == 1)
    return rows(0, total);
  tfc::rt::parallelFor(total, std::max<int64_t>(1, kTaskMacs / (n * kMemoryBoundCost)), rows);
}

void sgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a, intptr_t lda,
           intptr_t strideA, intptr_t transA, intptr_t b, intptr_t ldb, intptr_t strideB,
           intptr_t transB, intptr_t c, intptr_t ldc, intptr_t strideC, intptr_t accumulate,
           const Epilogue *epilogue, int64_t kInner = 1, int64_t ldbInner = 0, int64_t bPad = 0,
           int64_t bWidth = 0, int64_t mInner = 0, int64_t ldaOuter = 0, int64_t aPad = 0,
           int64_t aWidth = 0) {
  if (batch <= 0 || m <= 0 || n <= 0)
    return;
  // The epilogue's rows: every item's, or C's alone in a reduction.
  const int64_t epilogueRows = (strideC == 0 ? 1 : int64_t(batch)) * m;
  if (mInner <= 0 || mInner >= m || transA) // plain rows
    mInner = m, ldaOuter = 0;
  if (aWidth <= 0 || transA) // a padded (or no) input: every column of A is stored
    aPad = 0, aWidth = 0;
  // Plain rows, every element stored: what the rewrites below assume of A.
  const bool plainA = mInner == m && aWidth == 0;
  // A GEMV (N = 1) whose rows of A lie in memory: read as they lie (gemvDot).
  const bool dotGemv = n == 1 && !transA && kInner == 1 && k >= kDotLanes && (transB || ldb == 1) &&
                       activeKernels().dot;
  const bool reduce = strideC == 0 && batch > 1;
  // One row times a transposed B, C = a B^T, is a GEMV of B's rows, which
  // lie along K as a does (c[o] = B[o] . a: gemvDot) instead of B
  // transposed into packs for one row of tiles.
  if (m == 1 && n > 1 && transB && !transA && kInner == 1 && plainA && k >= kDotLanes &&
      activeKernels().dot) {
    gemvDot(activeKernels(), batch, n, 1, k, reinterpret_cast<const float *>(b), ldb, 0, strideB,
            0, 0, reinterpret_cast<const float *>(a), strideA, reinterpret_cast<float *>(c), 1,
            strideC, accumulate != 0);
    if (epilogue)
      runEpilogueAfter(*epilogue, epilogueRows, n);
    return;
  }
  // A tiny product (the encoder-decoder's 32 x 6 x 2), one panel of B
  // wide and one K step deep, goes straight to the tile kernels: the
  // blocking's bookkeeping below cost as much as the product. The same
  // kernels and strips as gemmBlock's: the same bits. (Not a GEMV: it has a
  // path of its own, with other bits.) A transposed B is packed as usual.
  if (batch == 1 && !epilogue && n >= 2 && k >= 1 && k <= kKC && kInner == 1 && plainA &&
      int64_t(m) * n * k <= kTinyMacs) {
    const KernelSet &ks = activeKernels();
    // Over 8 columns (a narrow tile's 256-bit halves serve fewer better), 16
    // rows or more: B's rows in registers, as gemmBlock (32 x 10 x 6 0.87x ->
    // 0.91x OpenBLAS).
    if (ks.smallK && !transA && !transB && k <= kMaxSmallK && m >= kMinSmallKRows && n > 8) {
      ks.smallK(m, n, k, reinterpret_cast<const float *>(a), lda,
                reinterpret_cast<const float *>(b), ldb, 1, 0, 0, 0, 0,
                reinterpret_cast<float *>(c), ldc, accumulate != 0);
      return;
    }
    if (n <= 2 * ks.lanes) {
      const bool wide = n > ks.lanes;
      const Strips strips(m, ks.rows[wide]);
      const MicroKernel *kernels = ks.kernel[transA != 0][wide];
      const float *a0 = reinterpret_cast<const float *>(a), *b0 = reinterpret_cast<const float *>(b);
      float *c0 = reinterpret_cast<float *>(c);
      if (transB) {
        const int64_t pitch = wide ? 2 * ks.lanes : ks.lanes;
        float *panel = packBuffer();
        ks.packTransposed(b0, ldb, k, n, pitch, panel);
        b0 = panel, ldb = pitch;
      }
      strips.each(0, [&](int64_t i, int64_t height, int64_t count) {
        kernels[height - 1](count, k, transA ? a0 + i : a0 + i * lda, lda, b0, ldb, c0 + i * ldc,
                            ldc, n, accumulate != 0, nullptr, 0);
      });
      return;
    }
  }
  // A one-channel input's weight gradient, C[j][o] = sum_t x[t + j] dy[o][t]
  // (taps: A's row j is x shifted by j; op(B) = dy^T): dot products of dy's
  // rows with x at each shift, both along t, blocks of channels and taps in
  // registers; per tap, the chains of the GEMV above (a reduction per tap
  // gives the same bits). Without the dot kernels (or under 16 columns) it
  // runs transposed, C^T = dy times the matrix whose row t is x[t : t + M],
  // rows one float apart: dy is then read as it lies instead of transposed
  // into a pack for a handful of rows. fma(a, b, c) == fma(b, a, c): every
  // element keeps its chain.
  if (mInner == 1 && ldaOuter == 1 && m <= kMaxTransposedTaps && transB && !transA && kInner == 1 &&
      bWidth == 0 && !epilogue && (strideC == 0 || batch == 1) && m > 1 && !dotGemv) {
    // Row t of x's windows is x[t - pad : t - pad + M]. An unpadded input is
    // padded here, K + M - 1 floats a sample: read through the windows'
    // packing instead, these few columns ran at half the speed.
    std::vector<float> padded;
    if (aWidth > 0) {
      const int64_t span = k + m - 1;
      padded.assign(size_t(batch) * size_t(span), 0.0f);
      const float *x = reinterpret_cast<const float *>(a);
      for (int64_t item = 0; item < batch; ++item)
        for (int64_t q = std::max<int64_t>(aPad, 0); q < std::min<int64_t>(span, aWidth + aPad);
             ++q)
          padded[size_t(item * span + q)] = x[item * strideA + q - aPad];
      a = intptr_t(padded.data()), strideA = span;
    }
    float *c0 = reinterpret_cast<float *>(c);
    if (k >= kDotLanes && activeKernels().dotTile)
      return dotProducts(activeKernels(), batch, n, m, k, reinterpret_cast<const float *>(b), ldb,
                         strideB, reinterpret_cast<const float *>(a), 1, strideA, c0, 1, ldc,
                         accumulate != 0);
    std::vector<float> cT(size_t(n) * size_t(m));
    for (int64_t j = 0; j < m; ++j)
      for (int64_t o = 0; o < n; ++o)
        cT[size_t(o * m + j)] = accumulate ? c0[j * ldc + o] : 0.0f;
    sgemm(batch, n, m, k, b, ldb, strideB, 0, a, 1, strideA, 0, intptr_t(cT.data()), m, 0,
          accumulate, nullptr);
    for (int64_t j = 0; j < m; ++j)
      for (int64_t o = 0; o < n; ++o)
        c0[j * ldc + o] = cT[size_t(o * m + j)];
    return;
  }
  // Taps of one output channel: every tap's GEMV in one pass over the
  // samples, each tap's chains as one reduction per tap would run them.
  if (dotGemv && !plainA && m % mInner == 0) {
    gemvDot(activeKernels(), batch, mInner, m / mInner, k, reinterpret_cast<const float *>(a),
            lda, ldaOuter, strideA, aPad, aWidth, reinterpret_cast<const float *>(b), strideB,
            reinterpret_cast<float *>(c), ldc, strideC, accumulate != 0);
    if (epilogue)
      runEpilogueAfter(*epilogue, epilogueRows, n);
    return;
  }
  // A GEMV over a plain A reads its rows as they lie (the transposed form
  // below would transpose all of A into packs).
  if (dotGemv && plainA) {
    gemvDot(activeKernels(), batch, m, 1, k, reinterpret_cast<const float *>(a), lda, 0, strideA,
            0, 0, reinterpret_cast<const float *>(b), strideB, reinterpret_cast<float *>(c), ldc,
            strideC, accumulate != 0);
    if (epilogue)
      runEpilogueAfter(*epilogue, epilogueRows, n);
    return;
  }
  // A product with one column (a GEMV, C = A b) is, transposed, one with one
  // row: C^T = b^T A^T. Its tiles then run along M instead of using one lane
  // in 16, and as fma(x, y, c) == fma(y, x, c) every element keeps its bits.
  // (Its rows are C's columns: an epilogue runs after it.)
  if (n == 1 && m > 1 && ldc == 1 && kInner == 1 && plainA) {
    sgemm(batch, 1, m, k, b, ldb, strideB, !transB, a, lda, strideA, !transA, c, m, strideC,
          accumulate, nullptr);
    if (epilogue)
      runEpilogueAfter(*epilogue, epilogueRows, n);
    return;
  }
  // An outer product (K = 1) is all stores of C: row by row, each row's
  // stores in one run through memory (the tiles wrote a row's 1 KiB in eight
  // visits of 128 bytes, 12 rows apart: the set anomaly's 640 x 256 x 1 ran
  // 10.1 us against 6.2). Each element is the tiles' one FMA, from 0 or
  // from C (fma(a, b, +0), not a * b: the same signed zeros), so the same
  // bits. (A reduction's K = 1 items make one GEMM of K = batch, below.)
  if (k == 1 && kInner == 1 && plainA && n >= kOuterMinColumns && !reduce) {
    outerProducts(batch, m, n, reinterpret_cast<const float *>(a), transA ? 1 : lda, strideA,
                  reinterpret_cast<const float *>(b), transB ? ldb : 1, strideB,
                  reinterpret_cast<float *>(c), ldc, strideC, accumulate != 0, epilogue);
    return;
  }
  // A reduction whose items are consecutive K slices of two matrices (op(A)'s
  // columns, op(B)'s rows) is one GEMM over batch * K: the same chains.
  if (reduce && k > 0 && kInner == 1 && plainA && strideA == (transA ? k * lda : k) &&
      strideB == (transB ? k : k * ldb))
    return sgemm(1, m, n, batch * k, a, lda, 0, transA, b, ldb, 0, transB, c, ldc, 0, accumulate,
                 epilogue);
  // A reduction's rows are final only after its last item: the epilogue
  // runs at the end. (A batch of products runs it item by item below.)
  if (epilogue && reduce) {
    sgemm(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
          accumulate, nullptr, kInner, ldbInner, bPad, bWidth, mInner, ldaOuter, aPad, aWidth);
    return runEpilogueAfter(*epilogue, m, n);
  }
  const KernelSet &ks = activeKernels();
  // The edge kernels read A^T: a transposed A as it is; an A the batch
  // shares (a convolution's weight), transposed once here.
  const int64_t edgeColumns = n % (2 * ks.lanes);
  const float *aT = nullptr;
  int64_t ldaT = 0;
  thread_local std::vector<float> transposedA;
  if (plainA && (transA || (edgeColumns > 0 && edgeColumns <= kMaxEdgeColumns && ks.edge[0]) ||
                 (strideA == 0 && batch >= 4))) {
    const float *a0 = reinterpret_cast<const float *>(a);
    if (transA) {
      aT = a0, ldaT = lda;
    } else if (strideA == 0 && batch >= 4) {
      transposedA.resize(size_t(m) * size_t(std::max<intptr_t>(k, 1)));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p)
          transposedA[size_t(p * m + i)] = a0[i * lda + p];
      aT = transposedA.data(), ldaT = m;
    }
  }
  auto problem = [&](int64_t item) {
    return Problem{m,
                   n,
                   k,
                   reinterpret_cast<const float *>(a) + item * strideA,
                   lda,
                   transA != 0,
                   reinterpret_cast<const float *>(b) + item * strideB,
                   ldb,
                   transB != 0,
                   reinterpret_cast<float *>(c) + item * strideC,
                   ldc,
                   accumulate != 0,
                   kInner,
                   ldbInner,
                   bPad,
                   bWidth,
                   mInner,
                   ldaOuter,
                   aPad,
                   aWidth,
                   aT && transA ? aT + item * strideA : aT,
                   ldaT};
  };

  int64_t kSteps = std::max<int64_t>(1, (k + kKC - 1) / kKC), kStep = (k + kSteps - 1) / kSteps;
  // A product that is all right edge (vectors along the rows, from A^T; B
  // read in place) runs all of K in one step: every step reloads its C by
  // gathers and stores it by scatters (the reverse task's 32 x 10 x 2048
  // weight gradient: eight steps).
  if (aT && n <= kMaxEdgeColumns && m >= 2 * ks.lanes && !transB && kInner == 1 &&
      bWidth == 0 && ks.edge[n - 1] && k * 2 * ks.lanes <= kKC * kNC) // (fits a pack)
    kSteps = 1, kStep = k;
  const Plan plan{ks, kStep, kStep > 128};
  int64_t macs = int64_t(batch) * m * n * std::max<int64_t>(k, 1);
  int threads = tfc::rt::availableThreads();
  // C[i0:i1, j0:j1] of every item in order; in a reduction each item after
  // the first continues the chains the ones before it left in C.
  // Item `item + 1`'s operands (those that differ from item to item) to
  // pull in while C[i0:i1, j0:j1] of `item` is computed.
  auto prefetchItem = [&](int64_t target, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    Prefetch ahead;
    if (target < 0 || target >= batch)
      return ahead;
    const float *a0 = reinterpret_cast<const float *>(a) + target * strideA;
    const float *b0 = reinterpret_cast<const float *>(b) + target * strideB;
    if (strideA != 0) {
      if (!transA && plainA)
        ahead.range(0, a0 + i0 * lda, (i1 - i0) * lda);
      else
        ahead.range(0, a0, std::abs(int64_t(strideA)));
    }
    if (strideB != 0)
      ahead.range(1, b0, std::abs(int64_t(strideB)));
    if (strideC != 0)
      ahead.range(2, reinterpret_cast<const float *>(c) + target * strideC + i0 * ldc,
                  (i1 - i0) * ldc);
    const int64_t bytes = (ahead.end[0] - ahead.next[0]) + (ahead.end[1] - ahead.next[1]) +
                          (ahead.end[2] - ahead.next[2]);
    // Tile calls: two a whole panel (taller strips and the rest), K step and
    // block of rows (an edge panel may go to the edge kernel instead).
    const int64_t calls = 2 * kSteps * std::max<int64_t>(1, (j1 - j0) / (2 * ks.lanes)) *
                          ((i1 - i0 + kMC - 1) / kMC);
    ahead.lines = bytes / 64 / std::max<int64_t>(calls, 1) + 1;
    return ahead;
  };
  // C[i0:i1, j0:j1] of every item in order; in a reduction each item after
  // the first continues the chains the ones before it left in C.
  auto runItems = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    for (int64_t item = 0; item < batch; ++item) {
      Problem g = problem(item);
      g.accumulate = g.accumulate || (reduce && item > 0);
      Prefetch ahead = prefetchItem(item + 1, i0, i1, j0, j1);
      gemmBlock(g, plan, i0, i1, j0, j1, nullptr, &ahead);
    }
  };
  const bool wideEpilogue = epilogue && epilogueRows * n >= kParallelEpilogueElements;
  // A transposed B is packed element by element (a 16 x 16 transpose in
  // registers): for a GEMV, transposed (N = 1), that is most of the work.
  // A product with a side of 1 (an outer product, K = 1; a matrix times a
  // vector) moves a float or so a multiply-add and runs at the speed of L2:
  // each of its multiply-adds counts as kMemoryBoundCost (two cores have two
  // L2s; on 2 threads the set anomaly's 640 x 1 x 256 50 -> 58-88 GFLOP/s, 1 x
  // 256 x 640 44-46 -> 56-80, 640 x 256 x 1 29-34 -> 20-38; the train step neutral).
  const int64_t work = (macs + (transB ? kTransposeCost * batch * n * k : 0)) *
                       (std::min({m, n, k}) == 1 ? kMemoryBoundCost : 1);
  if ((work < kParallelMinMacs && !wideEpilogue) || threads == 1) {
    if (!epilogue)
      return runItems(0, m, 0, n);
    for (int64_t item = 0; item < batch; ++item) {
      const Epilogue rows = epilogue->forItem(item, m);
      Prefetch ahead = prefetchItem(item + 1, 0, m, 0, n);
      gemmBlock(problem(item), plan, 0, m, 0, n, &rows, &ahead);
    }
    return;
  }

  const int64_t MR = ks.rows[1], NR = 2 * ks.lanes;
  int64_t mUnits = (m + MR - 1) / MR, nUnits = (n + NR - 1) / NR;
  if (reduce) {
    // Tasks are blocks of C, each running the whole batch: the batch is
    // never split, so every chain stays on one thread and in order. N is cut
    // first (a task then packs only its own columns of B), M as well when
    // there are fewer panels than tasks.
    int64_t tasks =
        std::min({mUnits * nUnits, work / kTaskMacs, int64_t(plainA ? 2 : 1) * threads});
    // Taps share B: cut only M, so that B is packed once a task.
    int64_t nParts = plainA ? std::min(nUnits, tasks) : 1;
    int64_t nPer = (nUnits + nParts - 1) / nParts * NR;
    nParts = (n + nPer - 1) / nPer;
    int64_t mParts = std::clamp(tasks / nParts, int64_t(1), mUnits);
    // Whole rounds of tasks: three panels on two threads would leave one
    // idle for a third of the GEMM. M is cut in equal row ranges (a strip
    // takes any height).
    while ((nParts * mParts) % threads != 0 && mParts < mUnits)
      ++mParts;
    std::atomic<int64_t> next{0};
    tfc::rt::parallelFor(threads, 1, [&](int64_t, int64_t) {
      for (int64_t t; (t = next.fetch_add(1)) < mParts * nParts;) {
        int64_t part = t / nParts, j0 = t % nParts * nPer;
        runItems(m * part / mParts, m * (part + 1) / mParts, j0, std::min(j0 + nPer, int64_t(n)));
      }
    });
    return;
  }

  // Every problem of the batch is cut into units: NR-column panels when
  // there are a few per thread (each task then packs only its own columns
  // of B), else MR-row strips. Runs of units make tasks, which the threads
  // claim from a counter: the pool's workers wake up tens of microseconds
  // late on a VM, and meanwhile the caller gets on with the work instead of
  // leaving a fixed half of it to them.
  // With an epilogue, strips of whole rows let each task run it on its own
  // rows as it finishes them; panels leave it for after the GEMM.
  // Windows read in place go by whole rows: each call then has all its
  // columns' FMA chains in flight.
  // An outer product (K = 1) is all stores of C: by rows, each thread's
  // part of C is one contiguous range (by columns every row would have a
  // cache line that both threads write when C is not aligned to one).
  bool alongN = nUnits >= 2 * threads && !(epilogue && (mUnits >= 4 * threads || batch > 1)) &&
                !(readsWindowsInPlace(problem(0), ks, m) && (kInner > 1 || bWidth > 0)) &&
                k > 1;
  int64_t unit = alongN ? NR : MR, units = alongN ? nUnits : mUnits, total = batch * units;
  // One task a thread, in order: the caller (first to claim) takes the first
  // rows or columns, as it takes the first chunk of every generated loop, so
  // a product's rows are computed on the core whose cache holds the loops'
  // rows around them (two tasks a thread moved half of them between cores:
  // reverse train step 1.08 -> 1.04 ms, set anomaly 39.0 -> 37.6 ms on 2
  // threads). The spinning workers join a job within a microsecond.
  int64_t tasks = std::max(std::min({total, work / kTaskMacs, int64_t(threads)}),
                           std::min<int64_t>(total, wideEpilogue ? threads : 1));
  // One product cut along M goes in equal row ranges, not whole strips of
  // MR rows: a weight gradient's 32 x 32 x 2048 in strips of 12 had given the
  // caller 24 rows and the worker 8 (a strip takes any height; the same bits).
  if (!alongN && batch == 1 && tasks > 1)
    unit = (m + tasks - 1) / tasks, units = total = (m + unit - 1) / unit;
  int64_t perTask = (total + tasks - 1) / tasks;
  tasks = (total + perTask - 1) / perTask;
  // Units [begin, end) of the batch; `then`, an item this thread will
  // likely run next (its operands are prefetched with the last item's).
  auto runUnits = [&](int64_t begin, int64_t end, int64_t then = -1) {
    for (int64_t t = begin; t < end;) {
      int64_t item = t / units, u0 = t % units, u1 = std::min(units, u0 + (end - t));
      int64_t lo = u0 * unit, hi = std::min(u1 * unit, alongN ? int64_t(n) : int64_t(m));
      // The next item's operands, when this task goes on to it.
      int64_t target = t + (u1 - u0) < end ? item + 1 : then;
      Prefetch ahead = alongN ? prefetchItem(target, 0, m, lo, hi)
                              : prefetchItem(target, lo, hi, 0, n);
      const Epilogue rows = epilogue ? epilogue->forItem(item, m) : Epilogue{};
      if (alongN)
        gemmBlock(problem(item), plan, 0, m, lo, hi, nullptr, &ahead);
      else
        gemmBlock(problem(item), plan, lo, hi, 0, n, epilogue ? &rows : nullptr, &ahead);
      t += u1 - u0;
    }
  };
  std::atomic<int64_t> next{0};
  const int64_t itemsPerTask = perTask / units;
  if (tasks < 2 || perTask % units != 0 || itemsPerTask < 4) {
    tfc::rt::parallelFor(threads, 1, [&](int64_t, int64_t) {
      for (int64_t t; (t = next.fetch_add(1)) < tasks;)
        runUnits(t * perTask, std::min(total, (t + 1) * perTask));
    });
  } else {
    // A long batch: each task's items are claimed one at a time, by its
    // owner from the front, in order (the affinity above), and by a thread
    // done with its own from the back. A core the hypervisor takes away for
    // a while then holds up only the item it is on, not half the batch.
    // Each item still runs whole on one thread: the same bits.
    std::vector<std::atomic<uint64_t>> left(static_cast<size_t>(tasks)); // front << 32 | back
    for (int64_t t = 0; t < tasks; ++t)
      left[size_t(t)].store(uint64_t(std::min(itemsPerTask, (total - t * perTask) / units)));
    auto claim = [&](int64_t task, bool front) -> int64_t {
      std::atomic<uint64_t> &range = left[size_t(task)];
      uint64_t r = range.load(std::memory_order_relaxed);
      for (;;) {
        uint64_t f = r >> 32, b = r & 0xffffffffu;
        if (f >= b)
          return -1;
        uint64_t now = front ? (f + 1) << 32 | b : f << 32 | (b - 1);
        if (range.compare_exchange_weak(r, now))
          return front ? int64_t(f) : int64_t(b - 1);
      }
    };
    auto runItem = [&](int64_t task, int64_t index, int64_t then) {
      int64_t first = task * perTask + index * units;
      runUnits(first, first + units, then);
    };
    tfc::rt::parallelFor(threads, 1, [&](int64_t, int64_t) {
      if (int64_t own = next.fetch_add(1); own < tasks)
        for (int64_t i; (i = claim(own, true)) >= 0;)
          runItem(own, i, own * itemsPerTask + i + 1);
      for (int64_t other = 0; other < tasks; ++other)
        for (int64_t i; (i = claim(other, false)) >= 0;)
          runItem(other, i, other * itemsPerTask + i - 1);
    });
  }
  if (epilogue && alongN)
    runEpilogueAfter(*epilogue, epilogueRows, n);
}

/// A GEMM operand in fp32: itself, or a widened copy of one stored in bf16
/// (abi::gemm::kBf16 in its transpose flag: tf-bf16-gemm-operands' copies,
/// which --target=cuda-emulated's twins of tfc_cuda_sgemm* read). The
/// copy keeps the layout: element i of the bf16 matrices is element i here.
struct Fp32Operand {
  intptr_t pointer, trans;
  std::vector<float> widened;
  /// `rows` x `cols` as stored, `ld` apart, `items` of them `stride` apart.
  Fp32Operand(intptr_t pointer, intptr_t trans, int64_t rows, int64_t cols, int64_t ld,
              int64_t stride, int64_t items)
      : pointer(pointer), trans(trans & tfc::abi::gemm::kTransposed) {
    if (!(trans & tfc::abi::gemm::kBf16) || rows <= 0 || cols <= 0 || items <= 0)
      return;
    const int64_t span = (stride == 0 ? 0 : (items - 1) * stride) + (rows - 1) * ld + cols;
    widened.resize(size_t(span));
    const auto *bits = reinterpret_cast<const uint16_t *>(pointer);
    for (int64_t i = 0; i < span; ++i)
      widened[size_t(i)] = tfc::rt::cuda::kernels::bf16Float(bits[i]);
    this->pointer = reinterpret_cast<intptr_t>(widened.data());
  }
};

/// A of an M x K product (stored K x M when transposed).
Fp32Operand operandA(intptr_t batch, intptr_t m, intptr_t k, intptr_t a, intptr_t lda,
                     intptr_t strideA, intptr_t transA) {
  const bool t = transA & tfc::abi::gemm::kTransposed;
  return Fp32Operand(a, transA, t ? k : m, t ? m : k, lda, strideA, batch);
}
/// B of a K x N product (stored N x K when transposed).
Fp32Operand operandB(intptr_t batch, intptr_t n, intptr_t k, intptr_t b, intptr_t ldb,
                     intptr_t strideB, intptr_t transB) {
  const bool t = transB & tfc::abi::gemm::kTransposed;
  return Fp32Operand(b, transB, t ? n : k, t ? k : n, ldb, strideB, batch);
}

/// A GEMM result stored in bf16 (abi::gemm::kBf16 in Accumulate:
/// tf-bf16-gemm-operands' gemm-results, tfc_cuda_sgemm's twin): computed
/// into an fp32 copy of the same layout (C's bf16 values widened first
/// when accumulating), then each element of the matrices rounded to
/// nearest even into C, as cuBLASLt's bf16 D.
struct Bf16Result {
  uint16_t *bits;
  int64_t m, n, ld, stride, items;
  std::vector<float> values;
  Bf16Result(intptr_t c, int64_t m, int64_t n, int64_t ld, int64_t stride, int64_t items,
             bool accumulate)
      : bits(reinterpret_cast<uint16_t *>(c)), m(m), n(n), ld(ld), stride(stride), items(items) {
    if (m <= 0 || n <= 0 || items <= 0)
      return;
    values.resize(size_t((stride == 0 ? 0 : (items - 1) * stride) + (m - 1) * ld + n));
    if (accumulate)
      forEach([&](size_t i) { values[i] = tfc::rt::cuda::kernels::bf16Float(bits[i]); });
  }
  intptr_t pointer() { return reinterpret_cast<intptr_t>(values.data()); }
  template <typename F> void forEach(F f) const {
    for (int64_t item = 0; item < (stride == 0 ? 1 : items); ++item)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          f(size_t(item * stride + i * ld + j));
  }
  void store() const {
    forEach([&](size_t i) { bits[i] = tfc::rt::cuda::kernels::bf16Bits(values[i]); });
  }
};

} // namespace

extern "C" void tfc_sgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                          intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                          intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                          intptr_t ldc, intptr_t strideC, intptr_t accumulate) {
  const Fp32Operand A = operandA(batch, m, k, a, lda, strideA, transA);
  const Fp32Operand B = operandB(batch, n, k, b, ldb, strideB, transB);
  if (!(accumulate & tfc::abi::gemm::kBf16)) {
    sgemm(batch, m, n, k, A.pointer, lda, strideA, A.trans, B.pointer, ldb, strideB, B.trans, c,
          ldc, strideC, accumulate, nullptr);
    return;
  }
  const bool adds = accumulate & tfc::abi::gemm::kAccumulate;
  Bf16Result result(c, m, n, ldc, strideC, batch, adds);
  sgemm(batch, m, n, k, A.pointer, lda, strideA, A.trans, B.pointer, ldb, strideB, B.trans,
        result.pointer(), ldc, strideC, adds, nullptr);
  result.store();
}

extern "C" void tfc_sgemm_windows(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                                  intptr_t a, intptr_t lda, intptr_t strideA, intptr_t transA,
                                  intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB,
                                  intptr_t c, intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                                  intptr_t kInner, intptr_t ldbInner, intptr_t pad,
                                  intptr_t width) {
  if (kInner < 1 || transB) // not a layout tfc emits: plain rows
    kInner = 1, width = 0;
  sgemm(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
        accumulate, nullptr, kInner, ldbInner, pad, std::max<intptr_t>(width, 0));
}

extern "C" void tfc_sgemm_windows_epilogue(
    intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a, intptr_t lda,
    intptr_t strideA, intptr_t transA, intptr_t b, intptr_t ldb, intptr_t strideB,
    intptr_t transB, intptr_t c, intptr_t ldc, intptr_t strideC, intptr_t accumulate,
    intptr_t kInner, intptr_t ldbInner, intptr_t pad, intptr_t width,
    void (*epilogue)(void *, int64_t, int64_t), void *context) {
  if (kInner < 1 || transB) // not a layout tfc emits: plain rows
    kInner = 1, width = 0;
  const Epilogue rows{epilogue, context};
  sgemm(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
        accumulate, epilogue ? &rows : nullptr, kInner, ldbInner, pad,
        std::max<intptr_t>(width, 0));
}

extern "C" void tfc_sgemm_taps(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                               intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                               intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                               intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                               intptr_t mInner, intptr_t ldaOuter, intptr_t pad,
                               intptr_t width) {
  sgemm(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
        accumulate, nullptr, 1, 0, 0, 0, mInner, ldaOuter, pad, width);
}

extern "C" void tfc_sgemm_pair(intptr_t batch0, intptr_t m0, intptr_t n0, intptr_t k0,
                               intptr_t a0, intptr_t lda0, intptr_t strideA0, intptr_t transA0,
                               intptr_t b0, intptr_t ldb0, intptr_t strideB0, intptr_t transB0,
                               intptr_t c0, intptr_t ldc0, intptr_t strideC0,
                               intptr_t accumulate0, intptr_t batch1, intptr_t m1, intptr_t n1,
                               intptr_t k1, intptr_t a1, intptr_t lda1, intptr_t strideA1,
                               intptr_t transA1, intptr_t b1, intptr_t ldb1, intptr_t strideB1,
                               intptr_t transB1, intptr_t c1, intptr_t ldc1, intptr_t strideC1,
                               intptr_t accumulate1) {
  struct Product {
    intptr_t batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
        accumulate;
    /// Rows [r0, r1) of C (all of them, or a block of a batch-1 product).
    void run(int64_t r0, int64_t r1) const {
      intptr_t rowA = intptr_t(sizeof(float)) * r0 * (transA ? 1 : lda);
      sgemm(batch, r1 - r0, n, k, a + rowA, lda, strideA, transA, b, ldb, strideB, transB,
            c + intptr_t(sizeof(float)) * r0 * ldc, ldc, strideC, accumulate, nullptr);
    }
  };
  const Product products[2] = {
      {batch0, m0, n0, k0, a0, lda0, strideA0, transA0, b0, ldb0, strideB0, transB0, c0, ldc0,
       strideC0, accumulate0},
      {batch1, m1, n1, k1, a1, lda1, strideA1, transA1, b1, ldb1, strideB1, transB1, c1, ldc1,
       strideC1, accumulate1}};
  if (tfc::rt::availableThreads() != 2) { // each product on all the threads
    products[0].run(0, m0);
    products[1].run(0, m1);
    return;
  }
  // One product a thread, in turn: the calling thread starts at once and
  // takes the product with the longer K (a weight gradient: few rows, long
  // chains) whole; the other (dx: many rows, short K) goes in eight row
  // blocks, so that whichever thread is done first takes what is left of
  // it. A block keeps every chain whole.
  const int whole = k1 > k0 ? 1 : 0;
  const Product &first = products[whole], &split = products[1 - whole];
  const int64_t blocks = split.batch == 1 && split.m >= 128 ? 8 : 1;
  std::atomic<int64_t> next{0};
  tfc::rt::parallelFor(2, 1, [&](int64_t, int64_t) {
    for (int64_t t; (t = next.fetch_add(1)) <= blocks;) {
      if (t == 0) {
        first.run(0, first.m);
        continue;
      }
      split.run(split.m * (t - 1) / blocks, split.m * t / blocks);
    }
  });
}

extern "C" void tfc_sgemm_epilogue(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                                   intptr_t a, intptr_t lda, intptr_t strideA, intptr_t transA,
                                   intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB,
                                   intptr_t c, intptr_t ldc, intptr_t strideC,
                                   intptr_t accumulate,
                                   void (*epilogue)(void *, int64_t, int64_t), void *context) {
  const Epilogue rows{epilogue, context};
  sgemm(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
        accumulate, epilogue ? &rows : nullptr);
}

extern "C" void tfc_sgemm_fused(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                                intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                                intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                                intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                                intptr_t activation, intptr_t bias, intptr_t residual,
                                intptr_t ldResidual, intptr_t aux, intptr_t ldAux) {
  namespace gemm = tfc::abi::gemm;
  // A residual that is C itself: the product accumulates into it.
  const bool inPlace = residual == c && ldResidual == ldc;
  // C stored in bf16 (kBf16 in Accumulate: tf-bf16-gemm-operands' attention
  // inputs, cuBLASLt's bf16 D): the bias is bf16 bits too (cuBLASLt's bias
  // takes D's type), the epilogue runs in fp32 on an fp32 copy, and each
  // result is rounded once, as cuBLASLt's.
  std::optional<Bf16Result> bits;
  std::vector<float> biasWidened;
  if (accumulate & gemm::kBf16) {
    accumulate &= gemm::kAccumulate;
    bits.emplace(c, m, n, ldc, strideC, batch, accumulate != 0);
    c = bits->pointer();
    if (bias) {
      const auto *b16 = reinterpret_cast<const uint16_t *>(bias);
      for (int64_t j = 0; j < n; ++j)
        biasWidened.push_back(tfc::rt::cuda::kernels::bf16Float(b16[j]));
      bias = reinterpret_cast<intptr_t>(biasWidened.data());
    }
  }
  tfc_sgemm(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
            accumulate || inPlace);
  auto *cs = reinterpret_cast<float *>(c);
  const auto *biases = reinterpret_cast<const float *>(bias);
  const auto *rs = inPlace ? nullptr : reinterpret_cast<const float *>(residual);
  auto *mask = reinterpret_cast<uint8_t *>(aux);
  const bool relu = activation == gemm::kRelu, reluGrad = activation == gemm::kReluGrad;
  tfc::rt::parallelFor(m, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float v = cs[i * ldc + j];
        if (rs)
          v += rs[i * ldResidual + j];
        if (biases)
          v += biases[j];
        const int64_t bit = j + i * ldAux;
        if (reluGrad) {
          v = mask[bit / 8] >> (bit % 8) & 1 ? v : 0.0f;
        } else if (relu) {
          // Each row's mask starts at a byte (ldAux is a multiple of 128),
          // so rows on different threads write different bytes.
          if (mask)
            mask[bit / 8] = uint8_t(v > 0.0f ? mask[bit / 8] | 1u << (bit % 8)
                                             : mask[bit / 8] & ~(1u << (bit % 8)));
          v = v < 0.0f ? 0.0f : v;
        }
        cs[i * ldc + j] = v;
      }
  });
  if (bits)
    bits->store();
}

extern "C" void tfc_sgemm_bias_grad(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                                    intptr_t a, intptr_t lda, intptr_t strideA, intptr_t transA,
                                    intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB,
                                    intptr_t c, intptr_t ldc, intptr_t strideC,
                                    intptr_t accumulate, intptr_t operand, intptr_t biasGrad) {
  // The sums read the operand's values: fp32, or bf16 widened (exactly).
  const Fp32Operand A = operandA(batch, m, k, a, lda, strideA, transA);
  const Fp32Operand B = operandB(batch, n, k, b, ldb, strideB, transB);
  a = A.pointer, transA = A.trans, b = B.pointer, transB = B.trans;
  tfc_sgemm(batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
            accumulate);
  // The summed operand as stored: K rows of `width` floats, `pitch` apart.
  const bool ofA = operand == tfc::abi::gemm::kBiasGradOfA;
  const auto *rows = reinterpret_cast<const float *>(ofA ? a : b);
  const int64_t width = ofA ? m : n, pitch = ofA ? lda : ldb;
  auto *sums = reinterpret_cast<float *>(biasGrad);
  tfc::rt::parallelFor(width, 64, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += rows[p * pitch + j];
      sums[j] = sum;
    }
  });
}
