//===- GemmKernels.h - tfc_sgemm's micro-kernels, one set per ISA ---------===//
//
// Internal to runtime/cpu/Gemm.cpp (and its test). A micro-kernel computes one
// register tile of C; Gemm.cpp does the blocking, packing and threading and
// picks the kernel set the CPU supports at run time.
//
// The numerics are part of the interface: every C element is one FMA chain
// over p = 0..kc-1 in order, from 0 or from C. So the AVX2 and AVX-512
// kernels give the same bits, and a blocking over K that stores C between
// blocks and reloads it continues the same chain: the result depends on
// neither the blocking nor the thread split. (The scalar set keeps the
// order, with a multiply and an add wherever the compiler does not fuse them.)
// The dot kernels (DotKernel, DotTileKernel: GEMVs, a narrow right edge)
// are the exception: sixteen lane chains and a fixed tree, the same on both
// ISAs.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_GEMMKERNELS_H
#define TFC_RUNTIME_GEMMKERNELS_H

#include <cstdint>

namespace tfc::rt::gemm {

/// For each of `strips` strips of MR rows (MR: the kernel's row count):
/// C[r][j] = (loadC ? C[r][j] : 0) + sum_p A[r][p] * B[p][j] for r < MR and
/// j < nr, the FMAs in order of p. Strip s starts at row s * MR of A and C.
///   a: A[r][p] at a[r * lda + p], or a[p * lda + r] for the transA kernels;
///   b: row p at b + p * ldb;
///   c: row r at c + r * ldc;
/// only columns < nr of B and C are read or written. Meanwhile the cache
/// lines ahead[0 .. aheadLines) (64 bytes each; a next batch item's
/// operands) are prefetched into L2, about one every step of p (in a burst
/// between calls, they stalled the core once the misses queued up).
using MicroKernel = void (*)(int64_t strips, int64_t kc, const float *a, int64_t lda,
                             const float *b, int64_t ldb, float *c, int64_t ldc, int64_t nr,
                             bool loadC, const char *ahead, int64_t aheadLines);

/// dst[p * pitch + j] = src[j * ld + p] for p < kc, j < nr (columns up to
/// `pitch` may be written too): a panel of op(B) from a transposed B.
using PackTransposed = void (*)(const float *src, int64_t ld, int64_t kc, int64_t nr,
                                int64_t pitch, float *dst);

/// C[r][j] = (loadC ? C[r][j] : 0) + sum_p aT[p * ldaT + r] * b[p * ldb + j]
/// for r < rows, j < nr (the kernel's column count): a panel a few columns
/// wide on the right edge of C, with vectors along the rows instead of the
/// columns, so that no lanes go to waste (N = 100 is 6 whole vectors and 4
/// columns). The same FMA chains, in the same order, as the tile kernels.
using EdgeKernel = void (*)(int64_t rows, int64_t kc, const float *aT, int64_t ldaT,
                            const float *b, int64_t ldb, float *c, int64_t ldc, bool loadC);

/// A convolution's few output channels (rows <= kMaxWindowRows) read
/// straight from its input, without packing B: for r < rows, j < n,
///   C[r][j] = (loadC ? C[r][j] : 0) + sum_p a[r * lda + p] * B[p][j],
/// B[p][j] = row[j + shift] with row = b + (p / kInner) * ldb and shift =
/// (p % kInner) * ldbInner + col0 - pad, and 0 where width > 0 and j + shift
/// lies outside [0, width) (tfc_sgemm_windows's unpadded input). The same
/// FMA chains over p in order as the packed path (its zeros included).
/// kInner <= kMaxWindowTaps.
using WindowsKernel = void (*)(int64_t rows, int64_t n, int64_t k, const float *a, int64_t lda,
                               const float *b, int64_t ldb, int64_t kInner, int64_t ldbInner,
                               int64_t col0, int64_t pad, int64_t width, float *c, int64_t ldc,
                               bool loadC);

/// A GEMV's rows (N = 1, A plain): for r < rows and lanes l < 16,
///   lane[r][l] = (first ? 0 : acc[r * 16 + l]) + sum a[r * lda + p] * b[p]
/// over p = l, l + 16, l + 32, ... < k, in order: sixteen FMA chains a row,
/// one a lane of a 16-float vector (AVX2: two 8-float halves, the same
/// chains), so that a row is read as it lies instead of transposed. With
/// `sums` null the lanes are stored to acc (a batch reduction's chains go
/// on through its items); else sums[r] gets them added in a fixed tree,
/// lane l + w into lane l for w = 8, 4, 2, 1. acc may be null when first and
/// sums are both given: the chains then never leave registers. The one place where an element
/// of C is not one chain; both ISAs give the same bits.
using DotKernel = void (*)(int64_t rows, int64_t k, const float *a, int64_t lda, const float *b,
                           float *acc, bool first, float *sums);
constexpr int kDotLanes = 16;

/// DotKernel for several vectors at once, with a batch's items in the
/// kernel: for r < rows and q < cols, the sixteen lane chains of
///   sum over items i, then p, of a[i * strideA + r * lda + p] *
///                                 b[i * strideB + q * ldb + p]
/// (the same chains, in the same order, as DotKernel's through the items of
/// a reduction) added in its tree and stored to c[r * ldcRow + q * ldcCol]
/// (added to it when `accumulate`). Each vector of b serves a block of rows
/// and each row a block of vectors, in registers: a one-channel weight
/// gradient (rows: dy's output channels, b: x at each tap's shift) loads
/// 9 vectors a 20 FMAs instead of 9 a 8.
using DotTileKernel = void (*)(int64_t rows, int64_t cols, int64_t items, int64_t k,
                               const float *a, int64_t lda, int64_t strideA, const float *b,
                               int64_t ldb, int64_t strideB, float *c, int64_t ldcRow,
                               int64_t ldcCol, bool accumulate);

/// A short K over many rows (K <= kMaxSmallK, rows >= kMinSmallKRows):
/// WindowsKernel's arguments and results (the same B, read in place, the
/// same chains), but B's K rows of a block of columns are loaded once into
/// registers and every row of A streams past them (a one-channel
/// convolution's 64 x 100 x 5, the reverse task's 2048 x 32 x 10): no
/// packing, and a ragged right edge is one masked vector.
using SmallKKernel = WindowsKernel;

constexpr int kMaxRows = 24, kMaxEdgeColumns = 12, kMaxWindowRows = 4, kMaxWindowTaps = 16;
constexpr int kMaxSmallK = 10, kMinSmallKRows = 16;

enum class Isa { Scalar, Avx2, Avx512 };

/// One ISA's kernels. A wide tile is rows[1] x 2 vectors (NR = 2 * lanes
/// columns); a narrow one, for panels with nr <= lanes, is rows[0] x 1 vector
/// (twice the rows, so that it keeps as many FMA chains in flight).
struct KernelSet {
  Isa isa;
  const char *name;
  int lanes;   // floats per vector
  int rows[2]; // tile rows (MR), narrow and wide
  /// kernel[transA][wide][mr - 1] for mr <= rows[wide].
  MicroKernel kernel[2][2][kMaxRows];
  PackTransposed packTransposed;
  /// edge[nr - 1] for panels of nr <= kMaxEdgeColumns columns; null where
  /// the ISA has none (the tile kernels then take the edge).
  EdgeKernel edge[kMaxEdgeColumns];
  /// Null where the ISA has none (the packed path then runs).
  WindowsKernel windows;
  /// Null where the ISA has none (the packed path then runs).
  SmallKKernel smallK;
  /// Null where the ISA has none (a GEMV then runs transposed, as a GEMM).
  DotKernel dot;
  /// Null exactly where `dot` is.
  DotTileKernel dotTile;
};

const KernelSet &scalarKernels();
const KernelSet &avx2Kernels();   // needs AVX2 and FMA
const KernelSet &avx512Kernels(); // needs AVX-512F and VL

/// The best set this CPU runs (__builtin_cpu_supports).
Isa bestIsa();
/// Tests only: later tfc_sgemm calls use `isa` (which must run here).
void forceIsa(Isa isa);
/// The set tfc_sgemm uses now.
const KernelSet &activeKernels();

} // namespace tfc::rt::gemm

#endif // TFC_RUNTIME_GEMMKERNELS_H
