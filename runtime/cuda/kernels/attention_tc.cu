//===- attention_tc.cu - attention forward and backward on tensor cores ---===//
//
// defines: tfc_cuda_attention_tc_forward_kernel,
//          tfc_cuda_attention_tc_forward_lean_kernel,
//          tfc_cuda_attention_tc_backward_dq_kernel,
//          tfc_cuda_attention_tc_backward_dq_lean_kernel,
//          tfc_cuda_attention_tc_backward_dkv_kernel
//
// attention.cu's three kernels with the products on tensor cores: the same
// parameters (Kernels.h), the same semantics (runtime/cpu/Attention.h), for
// models compiled with --precision bf16 or tf32 and heads whose d and dv are
// multiples of 16 up to 64 (attentionTensorCoreShape; the runtime launches
// attention.cu's kernels for anything else). Inputs and outputs are fp32 in
// memory, or bf16 bits where the flags say (q, k, v and the backward's dO:
// inputsBf16; dq, dk, dv: gradsBf16; out16 beside out); tiles are staged
// in shared memory rounded to bf16 (KernelMath.h's
// bf16Bits, round to nearest even) and multiplied by mma.sync m16n8k16
// (bf16 in, fp32 accumulate); P and dS are rounded to bf16 where they enter
// a product. The softmax (scale, mask, exp, the online maximum and sums) is
// fp32 with attention.cu's structure (masked scores -9e15, keys past tk
// -inf, onlineFold), but in base 2 on the hardware exp2: scores are
// multiplied by scale log2(e) once (scoreTile), the maxima are of those, and
// P = fastExp2(s2 - m2) (KernelMath.h: ex2.approx.ftz.f32, one MUFU.EX2,
// relative error ~2^-22, 2^-inf = +0, subnormal results flushed to 0)
// instead of attention.cu's expApprox (the CPU's Cephes polynomial, ~20
// instructions: attention.cu matches the CPU's bits, these kernels cannot,
// their products being bf16). exp's error is 2^13 times below the bf16
// rounding of P that follows it (2^-9); masked keys still give exactly 0
// and a row with every key masked uniform weights (2^0 each).
//
// A block is 4 warps; each warp owns 16 rows of a 64-row block and keeps
// its accumulators in mma's fragment layout (thread g = lane / 4,
// t = lane % 4 holds rows g and g + 8, columns 2t and 2t + 1 of every
// 8-column tile), so a row's statistics are 4 lanes' (shuffles by 2 then 1)
// and a score tile in registers is directly the A operand of the next
// product (P V, dS K), as in FlashAttention-2.
//  - forward: a block a (head, 64 queries); K and V go through shared memory
//    by tiles of 64 keys; the online softmax rescales the output per tile.
//    With stats, it stores each row's {m in base 2, 1/l, 0, scale or 0}.
//  - dq: a block a (head, 64 queries): pass 1 the rows' m, 1/l and
//    D = Σ P dP over all key tiles (rowStats below; stored to scratch when
//    not 0, as attention.cu, but as {m in base 2, 1/l, D scale, scale or 0}:
//    only dkv reads it), pass 2 recomputes P = 2^(s scale log2(e) - m) / l
//    (one FMA and the exp) and dS = P (dP scale - D scale) (attentionTcDs)
//    and accumulates dS K. With the forward's stats (its m and 1/l, the
//    same bits as rowStats', and scale or 0) there is no pass 1: D is
//    dO . out (outDot), FlashAttention-2's identity.
//  - dkv: a block a (head, 64 keys), looping over tiles of 64 queries:
//    S^T = K Q^T and dP^T = V dO^T per warp (16 keys), then dV += P^T dO
//    and dK += dS^T Q. The queries' statistics come from the forward's
//    stats and outDot as dq takes them, or from scratch, or, when both are
//    0, from rowStats run on the same staged tiles as dq's: the same bits.
//
// Shared memory, so that every fragment is one 8-byte load without bank
// conflicts (the fragments hold the same values as the straightforward
// layout's, so the mma's k order and the results are unchanged):
//  - a staged row keeps each 16 columns k = 8h + 2t + e in the order
//    4t + 2h + e, so lane t's two registers of a k-step (columns 2t, 2t + 1
//    and 2t + 8, 2t + 9) are adjacent; rows are 64 bf16, their 8-byte chunks
//    swizzled by the row (at() below), not padded.
//  - a tile that is a product's plain B operand (V in P V, K in dS K, dO
//    in P^T dO, Q in dS^T Q) is staged transposed, in the same order along
//    its rows, so that it is read like the others (Q K^T).
//  - staging reads global memory by float4 when every input's rows are
//    16-byte aligned (a template argument of the kernels' loops; else 4
//    scalars, the same values) and writes 16 bytes (rows) or 8 bytes
//    (transposed) a store, conflict-free.
// Registers (ptxas allots each kernel up to 255; they run 2 blocks an SM):
//  - forward: the warp's Q operands are loaded once, and the next K and V
//    tiles are loaded into registers while the tensor cores work on the
//    current ones (aligned path), then stored into the other of two
//    buffers: one barrier a key tile.
//  - dq: Q and dO stay staged; pass 1 loads the next K and V tiles early
//    (aligned path), pass 2 does not (no registers left) and goes by halves
//    of 32 keys.
//  - dkv: the warp's 16 keys' K and V operands come straight from global
//    memory each query tile (no room for their tiles: 4 tiles and the
//    statistics take 33 KiB), and the products go by halves of 32 queries.
//  Halves add into dQ, dK and dV by the same k-steps in the same order as
//  a whole tile. Per-thread staging offsets are recomputed each tile
//  (thread()), which left ptxas the registers it spilled otherwise; they
//  are cheap: a whole tile (wholeRows: all 64 rows there) is staged from
//  one pointer a thread stepped by constants, with no test a row (one a
//  thread for columns when d or dv < 64), and stored from one shared
//  address a thread plus constants; the partial last tile keeps the tests.
//  The products' depth is a constant W (dispatch): 2 or 4 k-steps, so
//  that each product unrolls into one block of loads and mma.
//  dq's transposed K and dkv's transposed Q and dO are made from their
//  tiles staged as rows, in shared memory (transposeTile), not read from
//  global memory a second time.
//  ptxas -v (sm_90; sm_80): forward 231 (231), dq 228 (206), dkv 232 (218)
//  registers, no spills.
//  The lean forward and dq (TFC_ATTENTION_LEAN) do the same operations in
//  the same order (the same bits) with no tile's loads held in registers
//  across products, compiled for 3 blocks an SM (kAttentionTcLeanBlocks:
//  at most 168 registers; forward 153, dq 168 on sm_90, no spills): 12
//  warps an SM against 8, for a GPU to weigh against the prefetch. The
//  twenty-second session's ncu found these kernels latency-bound (issue
//  slots 14-24% busy, 12.5% occupancy). dkv has no lean twin: its dK and dV
//  accumulators, K and V operands and score halves spill at 168.
// Instructions: pairs of floats go to bf16 by one cvt.rn.bf16x2.f32
// (packFloats), and a tile whose keys (and queries, in dkv) are all there
// and unmasked takes its scores without the per-element tests. With the
// hardware exp2 (and fmaxf for the maxima, FMAs for Σ P dP and dS), the
// key-tile loops of the aligned path on unmasked whole tiles went, in sm_90
// SASS (cuobjdump; static counts, HMMA against all instructions), from
// 64/2,410 to 64/1,334 (forward), 64/2,196 to 64/1,054 (dq's pass 1;
// dkv's rowStats, without stats, 2,223 to 1,113), 48/651 to 48/389 (dq's
// pass 2, a half tile) and 64/703 to 64/426 (dkv, a half tile); an element
// of dkv is now an FFMA, MUFU.EX2, FMUL, FFMA, FMUL. The staging's integer
// work (~590 IMAD, ISETP, LOP3, LEA, SHF, IADD3, VIADD of the forward's
// loop) then went to ~135 (whole tiles above), and the products' own
// bookkeeping down too: a first k-step into a zero accumulator (mmaZero,
// no zeroed registers), accumulate by column tiles then k-steps (one width
// test a pair of tiles), 32-bit depth and width, the forward's Q operands
// loaded a word at a time into the mma's operand order (else ptxas copied
// them into order every tile). The same loops and counts (wholeRows taken):
// 64/791 (forward), 64/856 (dq's pass 1; dkv's rowStats 64/853), 48/328
// (dq's pass 2, a half tile; its key-tile loop 994 -> 598), 64/320 (dkv, a
// half tile; its query-tile loop 2,933 -> 2,084). The forward's loop now:
// 138 FADD, 96 FMUL, 66 MUFU.EX2, 64 LDS, 60 FMNMX, 48 F2FP, ~135 integer
// instructions, 30 CS2R (mostly the zeros a load's column test leaves in
// place). Unmeasured on a GPU (tfc-kernel-check --bench-attention times
// it).
// No atomics: every output element is one fixed sequence of operations, the
// same bits on every run for any grid. Launch: 128 threads a block, grid.x
// any (heads x ceil(tq / 64) units for forward and dq, heads x ceil(tk / 64)
// for dkv). Static shared memory: 32 KiB (forward), 40 KiB (dq), 33 KiB
// (dkv).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

#include <cstdint>
#include <type_traits>

using namespace tfc::rt::cuda::kernels;

namespace {

typedef long long i64;

constexpr int kRows = kAttentionTcRows;
constexpr int kStride = kAttentionTcStride;
constexpr int kTiles = kRows / 8;    // 8-column accumulator tiles across 64 rows
constexpr int kMaxTiles = kAttentionTcMaxDim / 8;
constexpr int kSteps = kAttentionTcMaxDim / 16; // k-steps of an A operand
typedef uint16_t Tile[kRows][kStride]; // a staged tile, bf16 bits (see the header)
static_assert(kStride == 64, "at() swizzles 16 chunks of 8 bytes a row");

/// Where positions p .. p + 3 (p a multiple of 4) of staged row r are: a
/// row's 8-byte chunks are swizzled by the row (chunk ^ 4 (r % 4)), so that
/// rows g .. g + 3 of a half-warp's fragment loads fall on different banks.
__device__ __forceinline__ int at(int r, int p) { return p ^ ((r & 3) << 4); }

/// Two adjacent 32-bit words of shared memory: one 8-byte access.
struct alignas(8) Words {
  uint32_t lo, hi;
};
/// Two adjacent floats of global memory: one 8-byte load.
struct alignas(8) Floats {
  float lo, hi;
};

/// Rows row0 .. row0 + 63 of a [rows, cols] matrix (row stride `row`) of
/// T: float, or, for q, k and v under kAttentionQkvBf16, uint16_t (bf16
/// bits: a QKV projection cuBLASLt stored in bf16). The kernels take T
/// from q's type, each of their loops instantiated for both.
template <typename T> struct SourceOf {
  const T *base;
  i64 row, row0, rows, cols;
};
template <typename T>
__device__ __forceinline__ SourceOf<T> source(const T *base, i64 row, i64 row0, i64 rows,
                                              i64 cols) {
  return {base, row, row0, rows, cols};
}
/// Whether every head's rows of a strided tensor are aligned for the
/// vector loads: 16 bytes (4 floats) for f32, 8 (4 bf16) for bf16 bits.
__device__ __forceinline__ bool rowsAligned(const float *base, i64 outer, i64 inner, i64 row) {
  return reinterpret_cast<uintptr_t>(base) % 16 == 0 && outer % 4 == 0 && inner % 4 == 0 &&
         row % 4 == 0;
}
__device__ __forceinline__ bool rowsAligned(const uint16_t *base, i64 outer, i64 inner, i64 row) {
  return reinterpret_cast<uintptr_t>(base) % 8 == 0 && outer % 4 == 0 && inner % 4 == 0 &&
         row % 4 == 0;
}
/// Whether a kernel has a loop for unaligned rows of T: f32 alone. The
/// runtime gives bf16 inputs aligned rows (LayerKernels.cpp refuses
/// others), and a loop less a kernel keeps their compile time.
template <typename T> constexpr bool kUnalignedLoop = std::is_same<T, float>::value;
/// Two floats rounded to bf16 (bf16Bits), lo in the low half: on the GPU
/// one cvt.rn.bf16x2.f32 (round to nearest even, as bf16Bits; the upper
/// half is its first operand, as cuda_bf16.hpp's __floats2bfloat162_rn)
/// instead of bf16Bits' dozen integer operations a value, the same bits for
/// every value but a NaN (which stays a NaN, its payload the hardware's).
__device__ __forceinline__ uint32_t packFloats(float lo, float hi) {
#if defined(TFC_SIMT)
  return uint32_t(bf16Bits(lo)) | (uint32_t(bf16Bits(hi)) << 16);
#else
  uint32_t bits;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(bits) : "f"(hi), "f"(lo));
  return bits;
#endif
}

/// Four elements at p as staging takes them: f32 as a float4 (Vec: one
/// 16-byte load), bf16 bits as they are, two to a word (Vec: one 8-byte
/// load), which staging stores unconverted: the bits it rounds f32 to.
template <bool Vec> __device__ __forceinline__ float4 load4(const float *p) {
  if (Vec)
    return *reinterpret_cast<const float4 *>(p);
  return make_float4(p[0], p[1], p[2], p[3]);
}
template <bool Vec> __device__ __forceinline__ Words load4(const uint16_t *p) {
  if (Vec)
    return *reinterpret_cast<const Words *>(p);
  return Words{uint32_t(p[0]) | uint32_t(p[1]) << 16, uint32_t(p[2]) | uint32_t(p[3]) << 16};
}
/// What load4 gives for T, and its zeros (bf16 +0 is 0 bits).
template <typename T> using FourOf = decltype(load4<true>(static_cast<const T *>(nullptr)));
__device__ __forceinline__ float4 zero4(const float *) {
  return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}
__device__ __forceinline__ Words zero4(const uint16_t *) { return Words{0u, 0u}; }
/// Columns c .. c + 3 of row r (c a multiple of 4; cols is a multiple of
/// 16); zeros past `rows` and `cols`. Vec: one vector load (the kernels
/// take that path, a template argument, when every input's rows are
/// aligned; a run-time choice at each load cost registers).
template <bool Vec, typename T>
__device__ __forceinline__ FourOf<T> load4(const SourceOf<T> &s, int r, int c) {
  if (s.row0 + r >= s.rows || c >= s.cols)
    return zero4(s.base);
  return load4<Vec>(s.base + (s.row0 + r) * s.row + c);
}
/// Whether all 64 rows of s are there: a whole tile, staged without tests
/// a row (the partial last tile keeps them).
template <typename T> __device__ __forceinline__ bool wholeRows(const SourceOf<T> &s) {
  return s.row0 + kRows <= s.rows;
}
/// threadIdx.x, read afresh: the staging's per-thread offsets are then
/// recomputed at each tile (a few integer operations) instead of held in
/// registers across the loops, where they cost the products registers.
/// Unsigned, so that its / and % by powers of 2 are shifts and masks.
__device__ __forceinline__ unsigned thread() {
#if defined(TFC_SIMT)
  return threadIdx.x;
#else
  unsigned x;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(x));
  return x;
#endif
}
__device__ __forceinline__ float lane4(const float4 &v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

/// A tile's share of one thread between its global loads and its stores:
/// item i is row f / 8 (f = thread + 128 i), columns 16b + 4m .. + 3 and
/// 16b + 8 + 4m .. + 3 (b = f % 8 / 2, m = f % 2), whose 8 bf16 are
/// positions 16b + 8m .. + 7 of the staged row. A warp's load reads 4 whole
/// rows; its 16-byte stores, 8 lanes a row, hit every bank once.
template <typename T> struct RowsLoadOf { FourOf<T> v[4][2]; };
template <bool Vec, typename T>
__device__ __forceinline__ void loadRows(RowsLoadOf<T> &x, const SourceOf<T> &s) {
  // Item i is row r + 16 i (f / 8 = thread / 8 + 16 i), columns c.. and c + 8..
  const unsigned f = thread();
  const int r = int(f / 8), c = int(16 * (f % 8 / 2) + 4 * (f % 2));
  if (wholeRows(s)) {
    // One pointer, rows 16 apart; c + 8 < cols iff c < cols (cols is a
    // multiple of 16, c % 16 < 8): one test a thread, none a row.
    const T *p = s.base + (s.row0 + r) * s.row + c;
    const i64 step = 16 * s.row;
    const bool in = c < s.cols;
    const FourOf<T> zero = zero4(p);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      x.v[i][0] = in ? load4<Vec>(p + i * step) : zero;
      x.v[i][1] = in ? load4<Vec>(p + i * step + 8) : zero;
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    x.v[i][0] = load4<Vec>(s, r + 16 * i, c);
    x.v[i][1] = load4<Vec>(s, r + 16 * i, c + 8);
  }
}
/// The 16 bytes an item stores: columns c .. c + 3 (a) and c + 8 .. + 11
/// (b) in the staged order, rounded (f32) or as they are (bf16 bits).
__device__ __forceinline__ uint4 stagedChunk(const float4 &a, const float4 &b) {
  uint4 w;
  w.x = packFloats(a.x, a.y); // columns 4m, 4m + 1: t = 2m, h = 0
  w.y = packFloats(b.x, b.y); // 8 + 4m, 8 + 4m + 1: t = 2m, h = 1
  w.z = packFloats(a.z, a.w); // t = 2m + 1, h = 0
  w.w = packFloats(b.z, b.w); // t = 2m + 1, h = 1
  return w;
}
__device__ __forceinline__ uint4 stagedChunk(const Words &a, const Words &b) {
  uint4 w;
  w.x = a.lo;
  w.y = b.lo;
  w.z = a.hi;
  w.w = b.hi;
  return w;
}
template <typename T> __device__ __forceinline__ void storeRows(Tile &s, const RowsLoadOf<T> &x) {
  // Rows r + 16 i share at()'s swizzle (r % 4): one address, 2 KiB a step.
  const unsigned f = thread();
  const int r = int(f / 8), p = int(16 * (f % 8 / 2) + 8 * (f % 2));
  uint4 *dst = reinterpret_cast<uint4 *>(&s[r][at(r, p)]);
#pragma unroll
  for (int i = 0; i < 4; ++i)
    dst[i * 16 * kStride / 8] = stagedChunk(x.v[i][0], x.v[i][1]);
}

/// The same for a tile staged transposed (staged row c, position of row
/// j): item i holds rows 16jb + 2t + {0, 1, 8, 9}, columns c .. c + 3
/// (f = thread + 128 i, jb = f % 4, t = f / 4 % 4, c = 4 (f / 16)), which
/// are positions 16jb + 4t .. + 3 of staged rows c .. c + 3. A half-warp's
/// 8-byte stores (16 pairs jb, t) hit every bank once.
template <typename T> struct ColsLoadOf { FourOf<T> v[2][4]; };
template <bool Vec, typename T>
__device__ __forceinline__ void loadCols(ColsLoadOf<T> &x, const SourceOf<T> &s) {
  // Item i is columns c + 32 i .. + 3 (f / 16 = thread / 16 + 8 i).
  const unsigned f = thread();
  const int r = int(16 * (f % 4) + 2 * (f / 4 % 4)), c = int(4 * (f / 16));
  if (wholeRows(s)) { // rows r, r + 1, r + 8, r + 9 from one pointer; a test an item
    const T *p = s.base + (s.row0 + r) * s.row + c;
    const i64 row = s.row;
    const FourOf<T> zero = zero4(p);
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const bool in = c + 32 * i < s.cols;
      x.v[i][0] = in ? load4<Vec>(p + 32 * i) : zero;
      x.v[i][1] = in ? load4<Vec>(p + row + 32 * i) : zero;
      x.v[i][2] = in ? load4<Vec>(p + 8 * row + 32 * i) : zero;
      x.v[i][3] = in ? load4<Vec>(p + 9 * row + 32 * i) : zero;
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    x.v[i][0] = load4<Vec>(s, r, c + 32 * i);
    x.v[i][1] = load4<Vec>(s, r + 1, c + 32 * i);
    x.v[i][2] = load4<Vec>(s, r + 8, c + 32 * i);
    x.v[i][3] = load4<Vec>(s, r + 9, c + 32 * i);
  }
}
/// Column e of two rows' items as a staged bf16 pair, the first row's in
/// the low half: rounded (f32), or the halves of their words (bf16 bits).
__device__ __forceinline__ uint32_t columnPair(const float4 &x, const float4 &y, int e) {
  return packFloats(lane4(x, e), lane4(y, e));
}
__device__ __forceinline__ uint32_t columnPair(const Words &x, const Words &y, int e) {
  const uint32_t a = e < 2 ? x.lo : x.hi, b = e < 2 ? y.lo : y.hi;
  return e % 2 == 0 ? (a & 0xffffu) | (b << 16) : (a >> 16) | (b & 0xffff0000u);
}
template <typename T> __device__ __forceinline__ void storeCols(Tile &s, const ColsLoadOf<T> &x) {
  // Staged rows c + 32 i + e: at()'s swizzle is e's (c % 4 = 0), the
  // address one base plus constants.
  const unsigned f = thread();
  const int p = int(16 * (f % 4) + 4 * (f / 4 % 4)), c = int(4 * (f / 16));
  uint16_t *row = &s[c][0];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      *reinterpret_cast<Words *>(row + (32 * i + e) * kStride + at(e, p)) =
          Words{columnPair(x.v[i][0], x.v[i][1], e), columnPair(x.v[i][2], x.v[i][3], e)};
}

/// Positions p, p + 1, p + 2, p + 3 of staged row r (p a multiple of 4).
__device__ __forceinline__ Words words(const Tile &s, int r, int p) {
  return *reinterpret_cast<const Words *>(&s[r][at(r, p)]);
}

/// The low halves of two words as one (a's in the low half), and the high.
__device__ __forceinline__ uint32_t lowHalves(uint32_t a, uint32_t b) {
  return (a & 0xffffu) | (b << 16);
}
__device__ __forceinline__ uint32_t highHalves(uint32_t a, uint32_t b) {
  return (a >> 16) | (b & 0xffff0000u);
}

/// t = the tile staged as rows, staged transposed: what storeCols stages
/// from the same rows in global memory (the same bf16 bits, zeros where
/// they were), from shared memory instead of a second pass over global
/// memory. Item (jb, t, b, u): rows 16jb + 2t + {0, 1, 8, 9}, positions
/// 16b + 4u .. + 3 (columns 16b + 2u + {0, 1, 8, 9}) of s, 4 8-byte loads,
/// become rows 16b + 2u + {0, 1, 8, 9}, positions 16jb + 4t .. + 3 of t, 4
/// 8-byte stores. A half-warp's 16 lanes take u and t (lane % 16 = u + 4t):
/// 2-way bank conflicts both ways, the fewest any choice of 4 of the
/// item's bits gives under at()'s swizzle. Every thread calls it, between
/// barriers: after s is staged, before t is read.
__device__ __forceinline__ void transposeTile(Tile &t, const Tile &s) {
  const unsigned f = thread(), lane = f % kWarp, warp = f / kWarp;
  const int u = int(lane % 4), tr = int(lane / 4 % 4);
  const int jb = int(lane / 16 + 2 * (warp & 1));
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int b = int(warp / 2 + 2 * i);
    const int j = 16 * jb + 2 * tr, p = 16 * b + 4 * u;
    const Words r0 = words(s, j, p), r1 = words(s, j + 1, p), r8 = words(s, j + 8, p),
                r9 = words(s, j + 9, p);
    // r.lo holds columns c, c + 1 (low, high half), r.hi columns c + 8, c + 9.
    const int c = 16 * b + 2 * u, q = 16 * jb + 4 * tr;
    *reinterpret_cast<Words *>(&t[c][at(c, q)]) =
        Words{lowHalves(r0.lo, r1.lo), lowHalves(r8.lo, r9.lo)};
    *reinterpret_cast<Words *>(&t[c + 1][at(c + 1, q)]) =
        Words{highHalves(r0.lo, r1.lo), highHalves(r8.lo, r9.lo)};
    *reinterpret_cast<Words *>(&t[c + 8][at(c + 8, q)]) =
        Words{lowHalves(r0.hi, r1.hi), lowHalves(r8.hi, r9.hi)};
    *reinterpret_cast<Words *>(&t[c + 9][at(c + 9, q)]) =
        Words{highHalves(r0.hi, r1.hi), highHalves(r8.hi, r9.hi)};
  }
}

/// The A operands (16 x 16, row-major) of rows r0 .. r0 + 15 of s, the
/// first W k-steps (columns past the staged ones are zeros).
template <int W>
__device__ __forceinline__ void loadA(uint32_t (&a)[kSteps][4], const Tile &s, int r0, int g,
                                      int t) {
#pragma unroll
  for (int kk = 0; kk < W; ++kk) {
    // A word a load (volatile: not merged into 8-byte ones), so that each
    // lands in its register of the mma's operand quad: 8-byte loads left
    // ptxas copying the quads into order at every key tile.
    const volatile uint32_t *x = reinterpret_cast<const volatile uint32_t *>(
                                &s[r0 + g][at(r0 + g, kk * 16 + 4 * t)]),
                            *y = reinterpret_cast<const volatile uint32_t *>(
                                &s[r0 + g + 8][at(r0 + g + 8, kk * 16 + 4 * t)]);
    a[kk][0] = x[0]; // row g, columns 2t, 2t + 1
    a[kk][1] = y[0]; // row g + 8
    a[kk][2] = x[1]; // row g, columns 2t + 8, 2t + 9
    a[kk][3] = y[1];
  }
}

/// The warp's A operands (its 16 rows) straight from global memory,
/// rounded as staging rounds them: the same bits as loadA of the staged
/// rows.
template <bool Vec, int W, typename T>
__device__ __forceinline__ void globalA(uint32_t (&a)[kSteps][4], const SourceOf<T> &s) {
  const unsigned tid = thread();
  const int lane = int(tid % kWarp), r0 = int(tid / kWarp * 16), g = lane / 4, t = lane % 4;
#pragma unroll
  for (int kk = 0; kk < W; ++kk)
#pragma unroll
    for (int h = 0; h < 2; ++h) { // rows g, g + 8
      const int r = r0 + g + 8 * h, c = kk * 16 + 2 * t;
      // c < cols iff kk 16 < cols (cols is a multiple of 16): the warp's test
      const bool in = s.row0 + r < s.rows && kk * 16 < s.cols;
      const T *p = s.base + (s.row0 + r) * s.row + c;
      if constexpr (std::is_same<T, float>::value) {
        float x[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (in) {
          if (Vec) { // 8-byte aligned: the rows are 16-byte aligned, c even
            const Floats lo = *reinterpret_cast<const Floats *>(p),
                         hi = *reinterpret_cast<const Floats *>(p + 8);
            x[0] = lo.lo, x[1] = lo.hi, x[2] = hi.lo, x[3] = hi.hi;
          } else {
            x[0] = p[0], x[1] = p[1], x[2] = p[8], x[3] = p[9];
          }
        }
        a[kk][h] = packFloats(x[0], x[1]);     // columns 2t, 2t + 1
        a[kk][2 + h] = packFloats(x[2], x[3]); // columns 2t + 8, 2t + 9
      } else {
        // bf16 bits: each pair one aligned word, as staged.
        a[kk][h] = in ? *reinterpret_cast<const uint32_t *>(p) : 0u;
        a[kk][2 + h] = in ? *reinterpret_cast<const uint32_t *>(p + 8) : 0u;
      }
    }
}

/// The A operand from two accumulator tiles (columns 0-7 and 8-15 of a
/// 16 x 16 block), rounded to bf16: the score tile as the next product's A.
__device__ __forceinline__ void accA(uint32_t (&a)[4], const float (&lo)[4], const float (&hi)[4]) {
  a[0] = packFloats(lo[0], lo[1]);
  a[1] = packFloats(lo[2], lo[3]);
  a[2] = packFloats(hi[0], hi[1]);
  a[3] = packFloats(hi[2], hi[3]);
}

/// The B operand (16 x 8) = X^T for X = staged rows n0 .. n0 + 7, columns
/// k0 .. k0 + 15: of a tile staged as rows, a product with its transpose
/// (Q K^T, dO V^T, K Q^T); of a tile staged transposed, with the tile
/// itself (P V, dS K, P^T dO, dS^T Q).
__device__ __forceinline__ void loadB(uint32_t (&b)[2], const Tile &s, int n0, int k0, int g,
                                      int t) {
  const Words x = words(s, n0 + g, k0 + 4 * t);
  b[0] = x.lo; // columns 2t, 2t + 1
  b[1] = x.hi; // columns 2t + 8, 2t + 9
}

/// c += a b on the tensor cores (bf16 inputs, fp32 accumulation).
/// (On the SIMT emulator, tests/simt, the warp's product is computed on the
/// CPU from the PTX ISA's fragment layouts.)
__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(TFC_SIMT)
  ::tfc::simt::mmaM16n8k16Bf16(c, a, b);
#else
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

/// c = a b (+0.0f): a product's first k-step, the accumulator zero without
/// registers zeroed first (the hardware takes RZ); the same bits as mma
/// into zeros.
__device__ __forceinline__ void mmaZero(float (&c)[4], const uint32_t (&a)[4],
                                        const uint32_t (&b)[2]) {
#if defined(TFC_SIMT)
  c[0] = c[1] = c[2] = c[3] = 0.0f;
  ::tfc::simt::mmaM16n8k16Bf16(c, a, b);
#else
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};\n"
               : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f));
#endif
}

/// A warp's A operands read from shared memory at each use (rows r0 ..
/// r0 + 15 of *s), for a caller short of registers; else they are a
/// uint32_t [kSteps][4] that loadA filled.
struct StagedA {
  const Tile *s;
  int r0;
};
__device__ __forceinline__ void stepA(uint32_t (&a)[4], const uint32_t (&x)[kSteps][4], int kk,
                                      int, int) {
#pragma unroll
  for (int e = 0; e < 4; ++e)
    a[e] = x[kk][e];
}
__device__ __forceinline__ void stepA(uint32_t (&a)[4], const StagedA &x, int kk, int g, int t) {
  const Words lo = words(*x.s, x.r0 + g, kk * 16 + 4 * t),
              hi = words(*x.s, x.r0 + g + 8, kk * 16 + 4 * t);
  a[0] = lo.lo;
  a[1] = hi.lo;
  a[2] = lo.hi;
  a[3] = hi.hi;
}

/// acc (16 rows x 8N columns) = x y^T over W k-steps of 16 columns (the
/// columns past a matrix's own are zeros in both), x the warp's A
/// operands, y rows r0 .. r0 + 8N - 1 of a tile staged as rows: scores and
/// dP, either way round (all 64 columns, or half). W is a constant so that
/// ptxas unrolls the whole product and loads the next k-step's operands
/// while the tensor cores work on this one's (a run-time depth left a
/// branch after each k-step, and each k-step's loads waited for).
template <int W, int N, typename A>
__device__ __forceinline__ void productT(float (&acc)[N][4], const A &x, const Tile &y, int r0,
                                         int g, int t) {
#pragma unroll
  for (int kk = 0; kk < W; ++kk) {
    uint32_t a[4];
    stepA(a, x, kk, g, t);
#pragma unroll
    for (int n = 0; n < N; ++n) {
      uint32_t b[2];
      loadB(b, y, r0 + n * 8, kk * 16, g, t);
      if (kk == 0)
        mmaZero(acc[n], a, b);
      else
        mma(acc[n], a, b);
    }
  }
}

/// out (16 rows x 16W columns) += w (16 x 8N, the fragments of a
/// productT, rounded to bf16) times rows k0 .. k0 + 8N - 1 of y (64 x
/// 16W; the columns past a matrix's own are zeros, and so are their
/// sums, never stored), staged transposed; each out[n] by the k-steps in
/// order, so halves of a tile one after the other add as the whole tile
/// does. By columns, then k-steps (the accumulators are independent).
template <int W, int K>
__device__ __forceinline__ void accumulatePacked(float (&out)[kMaxTiles][4],
                                                 const uint32_t (&a)[K][4], const Tile &yT, int k0,
                                                 int g, int t);
template <int W, int N>
__device__ __forceinline__ void accumulate(float (&out)[kMaxTiles][4], const float (&w)[N][4],
                                           const Tile &yT, int k0, int g, int t) {
  uint32_t a[N / 2][4];
#pragma unroll
  for (int kk = 0; kk < N / 2; ++kk)
    accA(a[kk], w[2 * kk], w[2 * kk + 1]);
  accumulatePacked<W, N / 2>(out, a, yT, k0, g, t);
}
/// The same with w's A operands as they are (K k-steps, bf16 pairs).
template <int W, int K>
__device__ __forceinline__ void accumulatePacked(float (&out)[kMaxTiles][4],
                                                 const uint32_t (&a)[K][4], const Tile &yT, int k0,
                                                 int g, int t) {
#pragma unroll
  for (int n = 0; n < 2 * W; ++n) {
#pragma unroll
    for (int kk = 0; kk < K; ++kk) {
      uint32_t b[2];
      loadB(b, yT, n * 8, k0 + kk * 16, g, t);
      mma(out[n], a[kk], b);
    }
  }
}

/// The bf16 pair dS[r][c], dS[r][c + 1] of a head's stored dS (row pitch
/// dsRow, even; c even), as an A operand's register: zeros past tq and tk.
__device__ __forceinline__ uint32_t storedPair(const uint16_t *__restrict__ D, i64 dsRow, i64 r,
                                               i64 c, i64 tq, i64 tk) {
  if (r >= tq || c >= tk)
    return 0u;
  const uint32_t x = __ldg(reinterpret_cast<const unsigned int *>(D + r * dsRow + c));
  return c + 1 < tk ? x : x & 0xffffu; // (the pitch's padding is never written)
}

/// A row's 4 lanes' values combined, butterflies by 2 then 1 (every lane
/// of the 4 ends with the same bits).
__device__ __forceinline__ float quadSum(float v) {
  v += __shfl_xor_sync(kFullMask, v, 2);
  return v + __shfl_xor_sync(kFullMask, v, 1);
}
/// The rows' maxima by fmaxf: one FMNMX (maxOf's a > b ? a : b is a
/// compare and a select); the same maximum but for NaNs, which give NaN
/// probabilities either way.
__device__ __forceinline__ float quadMax(float v) {
  v = fmaxf(v, __shfl_xor_sync(kFullMask, v, 2));
  return fmaxf(v, __shfl_xor_sync(kFullMask, v, 1));
}
/// Whether any of a row's 4 lanes saw a key the row may attend to.
__device__ __forceinline__ bool quadAny(bool b) {
  const bool pair = __shfl_xor_sync(kFullMask, int(b), 2) | int(b);
  return __shfl_xor_sync(kFullMask, int(pair), 1) | int(pair);
}

/// An element of dO as a float: f32 as it is, bf16 bits (kAttentionDoBf16)
/// widened, exactly.
__device__ __forceinline__ float widened(float x) { return x; }
__device__ __forceinline__ float widened(uint16_t x) { return bf16Float(x); }

/// D = Σ_c dO_c out_c of one query row (dv columns; 0 when dv is 0, for a
/// row past tq): lane t of the row's 4 adds columns t, t + 4, ... in order,
/// then quadSum. FlashAttention-2's identity, D = Σ_j P_j dP_j =
/// dO . (Σ_j P_j V_j): dq and dkv call it on the same rows with the same
/// lanes, so both take the same bits. Every lane of the warp calls it. U,
/// dO's element type: float, or uint16_t (bf16 bits).
template <typename U>
__device__ __forceinline__ float outDot(const U *__restrict__ dO, const float *__restrict__ out,
                                        i64 dv, int t) {
  float sum = 0.0f;
  for (i64 c = t; c < dv; c += 4)
    sum = fusedMulAdd(widened(__ldg(dO + c)), __ldg(out + c), sum);
  return quadSum(sum);
}

/// The statistics the forward saved for query row i of head b ({m, 1/l,
/// unused, scale or 0}), with DScaled from the row's dO and out (zeros
/// past tq). Every lane of the warp calls it.
template <typename U>
__device__ __forceinline__ float4 savedRow(const float *__restrict__ saved,
                                           const U *__restrict__ dO, i64 doutRow,
                                           const float *__restrict__ out, i64 outRow, i64 b, i64 i,
                                           i64 tq, i64 dv, int t) {
  const bool in = i < tq;
  const float4 r = in ? reinterpret_cast<const float4 *>(saved)[b * tq + i]
                      : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float D = outDot(dO + (in ? i * doutRow : 0), out + (in ? i * outRow : 0), in ? dv : 0, t);
  return make_float4(r.x, r.y, D * r.w, r.w);
}

/// The scores of a productT tile in base 2: times scale2 = scale log2(e)
/// (attentionTcScale), -9e15 where masked, -inf past tk. Element (n, e) is
/// row i0 + g (+ 8 for e >= 2), key j0 + 8n + 2t + (e & 1); M is the
/// head's mask or null.
template <int N>
__device__ __forceinline__ void scoreTile(float (&s)[N][4], float scale2,
                                          const unsigned char *__restrict__ M, i64 maskRow, i64 i0,
                                          i64 tq, i64 j0, i64 tk, int g, int t, bool (&live)[2]) {
  if (M == nullptr && j0 + 8 * N <= tk) { // every key there and unmasked: the same, no tests
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[n][e] *= scale2;
    live[0] = live[1] = true;
    return;
  }
#pragma unroll
  for (int n = 0; n < N; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const i64 i = i0 + g + (e >= 2 ? 8 : 0), j = j0 + n * 8 + 2 * t + (e & 1);
      float x = s[n][e] * scale2;
      if (j >= tk)
        x = -INFINITY;
      else if (M && i < tq && !M[i * maskRow + j])
        x = kMaskedScore;
      else
        live[e >> 1] = true;
      s[n][e] = x;
    }
}

/// One query row's backward statistics: attention.cu's RowStats but for
/// m, the maximum of the base-2 scores (scoreTile), and DScaled = D scale
/// (0 in a dead row), attentionTcDs' operand. stats holds them in this
/// order (only these kernels read what these kernels store).
struct RowStats {
  float m, inv, DScaled, scaleLive;
};

/// The online softmax's rescaling in base 2: onlineAlpha with fastExp2.
__device__ __forceinline__ float alpha2(bool first, float m, float mNew) {
  return first ? 0.0f : fastExp2(m - mNew);
}

/// P of a productT tile of raw scores against its rows' statistics (dq's
/// pass 2): 2^(s scale2 - m) / l, one FMA before the exp; masked keys
/// 2^(-9e15 - m) / l (0, or 1 / l in a row with every key masked, as in
/// pass 1), 0 past tk. Element (n, e) as scoreTile's.
template <int N>
__device__ __forceinline__ void probTile(float (&s)[N][4], float scale2, const RowStats (&st)[2],
                                         const unsigned char *__restrict__ M, i64 maskRow, i64 i0,
                                         i64 tq, i64 j0, i64 tk, int g, int t) {
  if (M == nullptr && j0 + 8 * N <= tk) { // every key there and unmasked: no tests
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const RowStats &r = st[e >> 1];
        s[n][e] = fastExp2(fusedMulAdd(s[n][e], scale2, -r.m)) * r.inv;
      }
    return;
  }
#pragma unroll
  for (int n = 0; n < N; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const RowStats &r = st[e >> 1];
      const i64 i = i0 + g + (e >= 2 ? 8 : 0), j = j0 + n * 8 + 2 * t + (e & 1);
      float x = fusedMulAdd(s[n][e], scale2, -r.m);
      if (j < tk && M && i < tq && !M[i * maskRow + j])
        x = kMaskedScore - r.m;
      s[n][e] = j < tk ? fastExp2(x) * r.inv : 0.0f;
    }
}

/// Pass 1 of the backward for 64 queries (rows i0..) whose warp's A
/// operands of Q and dO are qa and da (registers, or StagedA): every key
/// tile staged into sK and sV (which it overwrites), S and dP by tensor
/// cores, the online maximum (base 2), l and Σ P dP. Returns the
/// statistics of rows i0 + 16 warp + g + 8h in st[h]. Prefetch: the next
/// tiles' loads fly during the products (dq's aligned path); without, fewer
/// registers (dkv, which holds its own accumulators): the same operations
/// on the same values either way. Every thread of the block calls it (it holds
/// barriers); it starts with one.
template <bool Vec, int W, bool Prefetch, typename A, typename T>
__device__ __forceinline__ void
rowStats(RowStats (&st)[2], const A &qa, const A &da, Tile &sK, Tile &sV, const T *__restrict__ K,
         i64 kRow, const T *__restrict__ V, i64 vRow, const unsigned char *__restrict__ M,
         i64 maskRow, i64 i0, i64 tq, i64 tk, i64 d, i64 dv, float scale, int warp, int g, int t) {
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}, dot[2] = {0.0f, 0.0f};
  bool live[2] = {M == nullptr, M == nullptr};
  RowsLoadOf<T> kx, vx;
  if (Prefetch) {
    loadRows<Vec>(kx, source(K, kRow, 0, tk, d));
    loadRows<Vec>(vx, source(V, vRow, 0, tk, dv));
  }
  for (i64 j0 = 0; j0 < tk; j0 += kRows) {
    if (!Prefetch) {
      loadRows<Vec>(kx, source(K, kRow, j0, tk, d));
      loadRows<Vec>(vx, source(V, vRow, j0, tk, dv));
    }
    __syncthreads(); // the last tile (or the caller's) is read
    storeRows(sK, kx);
    storeRows(sV, vx);
    __syncthreads();
    if (Prefetch && j0 + kRows < tk) {
      loadRows<Vec>(kx, source(K, kRow, j0 + kRows, tk, d));
      loadRows<Vec>(vx, source(V, vRow, j0 + kRows, tk, dv));
    }
    float s[kTiles][4], dp[kTiles][4];
    productT<W>(s, qa, sK, 0, g, t);
    productT<W>(dp, da, sV, 0, g, t);
    scoreTile(s, attentionTcScale(scale), M, maskRow, i0 + warp * 16, tq, j0, tk, g, t, live);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
        mx = fmaxf(mx, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
      const float mNew = fmaxf(m[h], quadMax(mx));
      float sum = 0.0f, pdp = 0.0f;
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const float p = fastExp2(s[n][e] - mNew);
          sum += p;
          pdp = fusedMulAdd(p, dp[n][e], pdp);
        }
      const float alpha = alpha2(j0 == 0, m[h], mNew);
      const OnlineRow row =
          onlineFold(OnlineRow{m[h], l[h], dot[h]}, mNew, alpha, quadSum(sum), quadSum(pdp));
      m[h] = row.m;
      l[h] = row.l;
      dot[h] = row.dot;
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float scaleLive = quadAny(live[h]) ? scale : 0.0f;
    st[h] = {m[h], 1.0f / l[h], dot[h] / l[h] * scaleLive, scaleLive};
  }
}

/// The forward's online softmax over one key tile of base-2 scores s
/// (scoreTile's) for the warp's rows g and g + 8 (h = 0, 1): the new row
/// maxima m, s turned into P = 2^(s - m) unnormalized, l folded
/// (onlineFold), and alpha[h], the factor the output accumulators take
/// (rescaleRows) before this tile's P V is added.
__device__ __forceinline__ void softmaxProbabilities(float (&s)[kTiles][4], float (&m)[2],
                                                     float (&l)[2], bool first, float (&alpha)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float mx = -INFINITY;
#pragma unroll
    for (int n = 0; n < kTiles; ++n)
      mx = fmaxf(mx, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
    const float mNew = fmaxf(m[h], quadMax(mx));
    float sum = 0.0f;
#pragma unroll
    for (int n = 0; n < kTiles; ++n)
#pragma unroll
      for (int e = 2 * h; e < 2 * h + 2; ++e) {
        s[n][e] = fastExp2(s[n][e] - mNew); // now P, unnormalized
        sum += s[n][e];
      }
    alpha[h] = alpha2(first, m[h], mNew);
    const OnlineRow row =
        onlineFold(OnlineRow{m[h], l[h], 0.0f}, mNew, alpha[h], quadSum(sum), 0.0f);
    m[h] = row.m;
    l[h] = row.l;
  }
}

/// The output accumulators o (2W column tiles) of rows g and g + 8 times
/// alpha[0] and alpha[1].
template <int W>
__device__ __forceinline__ void rescaleRows(float (&o)[kMaxTiles][4], const float (&alpha)[2]) {
#pragma unroll
  for (int n = 0; n < 2 * W; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      o[n][e] *= alpha[e >> 1];
}

/// softmaxProbabilities, then o rescaled: a key tile's softmax where its
/// P V follows at once.
template <int W>
__device__ __forceinline__ void softmaxTile(float (&s)[kTiles][4], float (&o)[kMaxTiles][4],
                                            float (&m)[2], float (&l)[2], bool first) {
  float alpha[2];
  softmaxProbabilities(s, m, l, first, alpha);
  rescaleRows<W>(o, alpha);
}

/// The forward's end for the warp's 16 rows from r0 of head b (from
/// element o0 of out): O = o / l (its first dv columns, rows below tq; with
/// out16 its bits too) and, with stats, each row's
/// {m in base 2, 1/l, 0, scale or 0}.
template <int W>
__device__ __forceinline__ void
storeForwardRows(float *out, i64 o0, i64 outRow, float *__restrict__ stats,
                 const float (&o)[kMaxTiles][4], const float (&m)[2], const float (&l)[2],
                 const bool (&live)[2], float scale, i64 b, i64 r0, i64 tq, i64 dv, int g, int t,
                 uint16_t *__restrict__ out16) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const i64 i = r0 + g + h * 8;
    const float inv = 1.0f / l[h];
    // The backward's statistics, as rowStats computes them (the same
    // scores, maxima and sums in the same order: the same bits), but D.
    const float scaleLive = stats && quadAny(live[h]) ? scale : 0.0f;
    if (i >= tq)
      continue;
    if (stats && t == 0)
      reinterpret_cast<float4 *>(stats)[b * tq + i] = make_float4(m[h], inv, 0.0f, scaleLive);
#pragma unroll
    for (int n = 0; n < 2 * W; ++n)
#pragma unroll
      for (int e = 2 * h; e < 2 * h + 2; ++e) {
        const int c = n * 8 + 2 * t + (e & 1);
        if (c < dv)
          out[o0 + i * outRow + c] = o[n][e] * inv;
      }
  }
  // out's bits beside it, read back from what this thread stored: no
  // register is held for them while the accumulators live.
  if (out16)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int n = 0; n < 2 * W; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const i64 i = r0 + g + h * 8;
          const int c = n * 8 + 2 * t + (e & 1);
          if (i < tq && c < dv)
            out16[o0 + i * outRow + c] = bf16Bits(out[o0 + i * outRow + c]);
        }
}

/// The forward kernel's loop (its arguments, and its shared tiles).
/// Prefetch (the aligned path of the default kernel): the next key tile's
/// loads fly in registers during this tile's products; else each tile is
/// loaded when it is stored (the lean kernel, and the unaligned path).
template <bool Vec, int W, bool Prefetch, typename T>
__device__ __forceinline__ void
forward(i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale, const T *__restrict__ q,
        i64 qOuter, i64 qInner, i64 qRow, const T *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow,
        const T *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
        const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
        float *__restrict__ out, i64 outOuter, i64 outInner, i64 outRow, float *__restrict__ stats,
        uint16_t *__restrict__ out16, Tile (&sK)[2], Tile (&sVt)[2]) {
  const i64 heads = outer * inner;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, g = lane / 4, t = lane % 4;
  const i64 queryBlocks = (tq + kRows - 1) / kRows;
  for (i64 unit = blockIdx.x; unit < heads * queryBlocks; unit += gridDim.x) {
    const i64 b = unit / queryBlocks, i0 = (unit % queryBlocks) * kRows;
    const T *K = headOf(k, kOuter, kInner, b, inner);
    const T *V = headOf(v, vOuter, vInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    // Q goes through sK[1] once: the warp's A operands stay in registers.
    // Key tile n is staged in sK[n % 2], sVt[n % 2]: one barrier a tile.
    RowsLoadOf<T> kx;
    ColsLoadOf<T> vx;
    loadRows<Vec>(kx, source(headOf(q, qOuter, qInner, b, inner), qRow, i0, tq, d));
    __syncthreads(); // the last unit's tiles are read
    storeRows(sK[1], kx);
    loadRows<Vec>(kx, source(K, kRow, 0, tk, d));
    loadCols<Vec>(vx, source(V, vRow, 0, tk, dv));
    __syncthreads();
    uint32_t qa[kSteps][4];
    loadA<W>(qa, sK[1], warp * 16, g, t);
    storeRows(sK[0], kx);
    storeCols(sVt[0], vx);
    __syncthreads(); // tile 0 staged; Q's operands read before sK[1] takes tile 1
    float o[kMaxTiles][4] = {}, m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    bool live[2] = {};
    for (i64 j0 = 0; j0 < tk; j0 += kRows) {
      const int cur = int(j0 / kRows) & 1;
      const bool next = j0 + kRows < tk;
      if (Prefetch && next) { // the next tile lands while the tensor cores work
        loadRows<Vec>(kx, source(K, kRow, j0 + kRows, tk, d));
        loadCols<Vec>(vx, source(V, vRow, j0 + kRows, tk, dv));
      }
      float s[kTiles][4];
      productT<W>(s, qa, sK[cur], 0, g, t);
      scoreTile(s, attentionTcScale(scale), M, maskRow, i0 + warp * 16, tq, j0, tk, g, t, live);
      softmaxTile<W>(s, o, m, l, j0 == 0);
      accumulate<W>(o, s, sVt[cur], 0, g, t);
      if (next) { // into the other buffers, last read before the last barrier
        if (!Prefetch) { // loaded when stored (no registers held for a prefetch)
          loadRows<Vec>(kx, source(K, kRow, j0 + kRows, tk, d));
          loadCols<Vec>(vx, source(V, vRow, j0 + kRows, tk, dv));
        }
        storeRows(sK[cur ^ 1], kx);
        storeCols(sVt[cur ^ 1], vx);
      }
      __syncthreads(); // the next tile staged, this one read
    }
    storeForwardRows<W>(out, headIndex(outOuter, outInner, b, inner), outRow, stats, o, m, l, live,
                        scale, b, i0 + warp * 16, tq, dv, g, t, out16);
  }
}

/// A warp's accumulators (its 16 rows from r0, fragment layout) into rows
/// r0 .. of a head of out (from element head, row pitch outRow): the rows
/// below `rows`, the first `width` columns; with `bits`, as bf16 bits
/// alone (asStored).
__device__ __forceinline__ void storeWarpRows(float *out, i64 head, i64 outRow,
                                              const float (&acc)[kMaxTiles][4], i64 r0, i64 rows,
                                              i64 width, int g, int t, bool bits) {
  asStored(out, bits, [&](auto *base) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i64 i = r0 + g + h * 8;
      if (i >= rows)
        continue;
#pragma unroll
      for (int n = 0; n < kMaxTiles; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const int c = n * 8 + 2 * t + (e & 1);
          if (c < width)
            storeAs(base, head + i * outRow + c, acc[n][e]);
        }
    }
  });
}

/// The dq kernel's loop.
/// Lean: pass 1 without the prefetch, and pass 2 stages K then V through
/// one tile of registers (the lean kernel's 168 registers hold no more).
template <bool Vec, int W, bool Lean, typename Grads, typename T, typename U>
__device__ __forceinline__ void
backwardDq(i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale,
           const T *__restrict__ q, i64 qOuter, i64 qInner, i64 qRow, const T *__restrict__ k,
           i64 kOuter, i64 kInner, i64 kRow, const T *__restrict__ v, i64 vOuter, i64 vInner,
           i64 vRow, const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner,
           i64 maskRow, const U *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
           float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, float *__restrict__ dk,
           i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut, i64 dvOuter, i64 dvInner,
           i64 dvRow, const float *__restrict__ out, i64 outOuter, i64 outInner, i64 outRow,
           const float *__restrict__ stats, float *__restrict__ scratch,
           const uint16_t *__restrict__ dS, i64 dsRow, Grads gradsBf16, Tile &sQ, Tile &sdO,
           Tile &sK, Tile &sKt, Tile &sV) {
  const i64 heads = outer * inner;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, g = lane / 4, t = lane % 4;
  const i64 queryBlocks = (tq + kRows - 1) / kRows;
  for (i64 unit = blockIdx.x; unit < heads * queryBlocks; unit += gridDim.x) {
    const i64 b = unit / queryBlocks, i0 = (unit % queryBlocks) * kRows;
    const T *K = headOf(k, kOuter, kInner, b, inner);
    const T *V = headOf(v, vOuter, vInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    if (dS) { // dQ = dS K from the dS dkv stored: no scores, no statistics
      const uint16_t *D = dS + b * tq * dsRow;
      float acc[kMaxTiles][4] = {};
      for (i64 j0 = 0; j0 < tk; j0 += kRows) {
        ColsLoadOf<T> kt;
        loadCols<Vec>(kt, source(K, kRow, j0, tk, d));
        __syncthreads(); // the last tile's products read sKt
        storeCols(sKt, kt);
        __syncthreads();
#pragma unroll 1
        for (int half = 0; half < 2; ++half) {
          constexpr int K2 = kTiles / 4; // k-steps of 16 keys a half
          const i64 r = i0 + warp * 16 + g;
          uint32_t a[K2][4];
#pragma unroll
          for (int kk = 0; kk < K2; ++kk) {
            const i64 c = j0 + half * 32 + kk * 16 + 2 * t;
            a[kk][0] = storedPair(D, dsRow, r, c, tq, tk);
            a[kk][1] = storedPair(D, dsRow, r + 8, c, tq, tk);
            a[kk][2] = storedPair(D, dsRow, r, c + 8, tq, tk);
            a[kk][3] = storedPair(D, dsRow, r + 8, c + 8, tq, tk);
          }
          accumulatePacked<W, K2>(acc, a, sKt, half * 32, g, t);
        }
      }
      storeWarpRows(dq, headIndex(dqOuter, dqInner, b, inner), dqRow, acc, i0 + warp * 16, tq, d, g,
                    t, gradsBf16 & kAttentionDqBf16);
      continue;
    }
    // Q and dO, staged once for both passes; their operands are read at
    // each use (registers go to the next tiles' loads).
    {
      RowsLoadOf<T> qx;
      RowsLoadOf<U> dx;
      loadRows<Vec>(qx, source(headOf(q, qOuter, qInner, b, inner), qRow, i0, tq, d));
      loadRows<Vec>(dx, source(headOf(dout, doutOuter, doutInner, b, inner), doutRow, i0, tq, dv));
      __syncthreads(); // the last unit's tiles are read
      storeRows(sQ, qx);
      storeRows(sdO, dx);
    }
    const StagedA qa{&sQ, warp * 16}, da{&sdO, warp * 16};
    RowStats st[2];
    if (stats) { // the forward's (uniform: the barriers stay so); no pass 1
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float4 r = savedRow(stats, headOf(dout, doutOuter, doutInner, b, inner), doutRow,
                                  headOf(out, outOuter, outInner, b, inner), outRow, b,
                                  i0 + warp * 16 + g + h * 8, tq, dv, t);
        st[h] = {r.x, r.y, r.z, r.w};
      }
    } else {
      rowStats<Vec, W, Vec && !Lean>(st, qa, da, sK, sV, K, kRow, V, vRow, M, maskRow, i0, tq, tk,
                                     d, dv, scale, warp, g, t); // its first barrier: sQ, sdO staged
    }
    if (scratch && t == 0)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const i64 i = i0 + warp * 16 + g + h * 8;
        if (i < tq)
          reinterpret_cast<float4 *>(scratch)[b * tq + i] =
              make_float4(st[h].m, st[h].inv, st[h].DScaled, st[h].scaleLive);
      }
    float acc[kMaxTiles][4] = {};
    for (i64 j0 = 0; j0 < tk; j0 += kRows) {
      if (Lean) {
        RowsLoadOf<T> x;
        loadRows<Vec>(x, source(K, kRow, j0, tk, d));
        __syncthreads(); // pass 1's or the last tile's products read
        storeRows(sK, x);
        loadRows<Vec>(x, source(V, vRow, j0, tk, dv));
        storeRows(sV, x);
      } else {
        RowsLoadOf<T> kx, vx;
        loadRows<Vec>(kx, source(K, kRow, j0, tk, d));
        loadRows<Vec>(vx, source(V, vRow, j0, tk, dv));
        __syncthreads(); // pass 1's or the last tile's products read
        storeRows(sK, kx);
        storeRows(sV, vx);
      }
      __syncthreads();
      transposeTile(sKt, sK); // K once from global memory
      __syncthreads();
      // By halves of 32 keys (fewer registers): dQ's sums go over the
      // k-steps in the same order.
#pragma unroll 1
      for (int half = 0; half < 2; ++half) {
        constexpr int N = kTiles / 2;
        float s[N][4], dp[N][4];
        productT<W>(s, qa, sK, half * 32, g, t);
        productT<W>(dp, da, sV, half * 32, g, t);
        probTile(s, attentionTcScale(scale), st, M, maskRow, i0 + warp * 16, tq, j0 + half * 32, tk,
                 g, t);
#pragma unroll
        for (int n = 0; n < N; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const RowStats &r = st[e >> 1];
            s[n][e] = attentionTcDs(s[n][e], dp[n][e], r.DScaled, r.scaleLive); // now dS
          }
        accumulate<W>(acc, s, sKt, half * 32, g, t);
      }
    }
    storeWarpRows(dq, headIndex(dqOuter, dqInner, b, inner), dqRow, acc, i0 + warp * 16, tq, d, g,
                  t, gradsBf16 & kAttentionDqBf16);
  }
}

/// The dkv kernel's loop.
template <bool Vec, int W, typename Grads, typename T, typename U>
__device__ __forceinline__ void
backwardDkv(i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale,
            const T *__restrict__ q, i64 qOuter, i64 qInner, i64 qRow, const T *__restrict__ k,
            i64 kOuter, i64 kInner, i64 kRow, const T *__restrict__ v, i64 vOuter, i64 vInner,
            i64 vRow, const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner,
            i64 maskRow, const U *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
            float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, float *__restrict__ dk,
            i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut, i64 dvOuter,
            i64 dvInner, i64 dvRow, const float *__restrict__ out, i64 outOuter, i64 outInner,
            i64 outRow, const float *__restrict__ stats, const float *__restrict__ scratch,
            uint16_t *__restrict__ dS, i64 dsRow, Grads gradsBf16, Tile &sQ, Tile &sQt, Tile &sdO,
            Tile &sdOt, float4 (&sStats)[kRows]) {
  const i64 heads = outer * inner;
  const i64 keyBlocks = (tk + kRows - 1) / kRows;
  const float scale2 = attentionTcScale(scale);
  for (i64 unit = blockIdx.x; unit < heads * keyBlocks; unit += gridDim.x) {
    const i64 b = unit / keyBlocks, j0 = (unit % keyBlocks) * kRows;
    const T *Q = headOf(q, qOuter, qInner, b, inner);
    const T *K = headOf(k, kOuter, kInner, b, inner);
    const T *V = headOf(v, vOuter, vInner, b, inner);
    const U *dO = headOf(dout, doutOuter, doutInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    float accK[kMaxTiles][4] = {}, accV[kMaxTiles][4] = {};
    for (i64 i0 = 0; i0 < tq; i0 += kRows) {
      const int lane = thread() % kWarp, warp = thread() / kWarp, g = lane / 4, t = lane % 4;
      {
        RowsLoadOf<T> qx;
        RowsLoadOf<U> dx;
        loadRows<Vec>(qx, source(Q, qRow, i0, tq, d));
        loadRows<Vec>(dx, source(dO, doutRow, i0, tq, dv));
        __syncthreads(); // the last tiles' products are read
        storeRows(sQ, qx);
        storeRows(sdO, dx);
      }
      if (stats) { // the forward's, D as dq takes it (the same rows, lanes, bits)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float4 r = savedRow(stats, dO, doutRow, headOf(out, outOuter, outInner, b, inner),
                                    outRow, b, i0 + warp * 16 + g + h * 8, tq, dv, t);
          if (t == 0)
            sStats[warp * 16 + g + h * 8] = r;
        }
      } else if (scratch) { // the same for every thread: the barriers stay uniform
        for (int r = threadIdx.x; r < kRows; r += kAttentionTcThreads)
          sStats[r] = i0 + r < tq ? reinterpret_cast<const float4 *>(scratch)[b * tq + i0 + r]
                                  : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      } else {
        __syncthreads(); // sQ and sdO staged
        // rowStats as dq runs it (its key tiles through sQt and sdOt).
        RowStats st[2];
        rowStats<Vec, W, false>(st, StagedA{&sQ, warp * 16}, StagedA{&sdO, warp * 16}, sQt, sdOt, K,
                                kRow, V, vRow, M, maskRow, i0, tq, tk, d, dv, scale, warp, g, t);
        if (t == 0)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            sStats[warp * 16 + g + h * 8] =
                make_float4(st[h].m, st[h].inv, st[h].DScaled, st[h].scaleLive);
        __syncthreads(); // rowStats's last tiles are read
      }
      // The warp's 16 keys as A operands, straight from global memory
      // (cache hits after the first query tile): registers only while the
      // products need them, no tile for them in shared memory.
      uint32_t ka[kSteps][4], va[kSteps][4];
      globalA<Vec, W>(ka, source(K, kRow, j0, tk, d));
      globalA<Vec, W>(va, source(V, vRow, j0, tk, dv));
      // Q and dO transposed from their staged rows (rowStats, which used
      // sQt and sdOt, ended with a barrier; the other ways need one), while
      // the loads of K and V above fly.
      if (stats || scratch)
        __syncthreads(); // sQ and sdO staged
      transposeTile(sQt, sQ);
      transposeTile(sdOt, sdO);
      __syncthreads();
      // Warp w's 16 keys against the 64 queries by halves of 32 (fewer
      // registers; dK's and dV's sums go over the k-steps in the same
      // order): S^T and dP^T, element (n, e) key j0 + 16w + g (+ 8 for
      // e >= 2), query i0 + 32 half + 8n + 2t + (e & 1).
#pragma unroll 1
      for (int half = 0; half < 2; ++half) {
        constexpr int N = kTiles / 2;
        float s[N][4], dp[N][4];
        productT<W>(s, ka, sQ, half * 32, g, t);
        productT<W>(dp, va, sdO, half * 32, g, t);
        if (M == nullptr && i0 + kRows <= tq && j0 + kRows <= tk) {
          // Every query and key there, no mask: the same, without the tests.
#pragma unroll
          for (int n = 0; n < N; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const float4 st = sStats[half * 32 + n * 8 + 2 * t + (e & 1)];
              const float p = fastExp2(fusedMulAdd(s[n][e], scale2, -st.x)) * st.y;
              dp[n][e] = attentionTcDs(p, dp[n][e], st.z, st.w);
              s[n][e] = p;
            }
        } else {
#pragma unroll
          for (int n = 0; n < N; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int r = half * 32 + n * 8 + 2 * t + (e & 1);
              const i64 i = i0 + r, j = j0 + warp * 16 + g + (e >= 2 ? 8 : 0);
              float p = 0.0f, ds = 0.0f;
              if (i < tq && j < tk) {
                const float4 st = sStats[r];
                float x = fusedMulAdd(s[n][e], scale2, -st.x);
                if (M && !M[i * maskRow + j])
                  x = kMaskedScore - st.x;
                p = fastExp2(x) * st.y;
                ds = attentionTcDs(p, dp[n][e], st.z, st.w);
              }
              s[n][e] = p;
              dp[n][e] = ds;
            }
        }
        if (dS) // dS^T's elements into dS[query][key], rounded as a product's A is
#pragma unroll
          for (int n = 0; n < N; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const i64 i = i0 + half * 32 + n * 8 + 2 * t + (e & 1),
                        j = j0 + warp * 16 + g + (e >= 2 ? 8 : 0);
              if (i < tq && j < tk)
                dS[(b * tq + i) * dsRow + j] = uint16_t(packFloats(dp[n][e], 0.0f) & 0xffffu);
            }
        accumulate<W>(accV, s, sdOt, half * 32, g, t);
        accumulate<W>(accK, dp, sQt, half * 32, g, t);
      }
    }
    const int lane = thread() % kWarp, warp = thread() / kWarp, g = lane / 4, t = lane % 4;
    storeWarpRows(dvOut, headIndex(dvOuter, dvInner, b, inner), dvRow, accV, j0 + warp * 16, tk, dv,
                  g, t, gradsBf16 & kAttentionDvBf16);
    storeWarpRows(dk, headIndex(dkOuter, dkInner, b, inner), dkRow, accK, j0 + warp * 16, tk, d, g,
                  t, gradsBf16 & kAttentionDkBf16);
  }
}

/// A constant as a type, for run's generic lambda.
template <int N> struct Constant { static constexpr int value = N; };

/// run(Constant<Vec>, Constant<W>): the kernel's loop instantiated for its
/// rows' alignment and W, the k-steps of the wider of d and dv (2 for
/// heads up to 32 wide, else 4; a narrower head's extra columns are zeros).
/// T, q's element type: bf16 inputs have no unaligned loop (a trap).
template <typename T, typename F>
__device__ __forceinline__ void dispatch(bool aligned, i64 d, i64 dv, const F &run) {
  const bool wide = d > 32 || dv > 32;
  if (aligned && wide)
    run(Constant<1>(), Constant<4>());
  else if (aligned)
    run(Constant<1>(), Constant<2>());
  else if constexpr (!kUnalignedLoop<T>)
    __trap();
  else if (wide)
    run(Constant<0>(), Constant<4>());
  else
    run(Constant<0>(), Constant<2>());
}

// The forward's and the backward's parameters (Kernels.h's
// TFC_CUDA_ATTENTION_FORWARD and _BACKWARD), q, k and v of type T, and the
// arguments that pass them on: for the entries here (T float: the
// kernels' C parameters), their lean twins and attention_wgmma.cu's.
#define TFC_TC_FORWARD_PARAMS_OF(T)                                                                \
  i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale, const T *__restrict__ q,       \
      i64 qOuter, i64 qInner, i64 qRow, const T *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow, \
      const T *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,                                   \
      const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,           \
      float *__restrict__ out, i64 outOuter, i64 outInner, i64 outRow, float *__restrict__ stats,  \
      uint16_t *__restrict__ out16, i64 inputsBf16
#define TFC_TC_FORWARD_PARAMS TFC_TC_FORWARD_PARAMS_OF(float)
#define TFC_TC_FORWARD_ARGS_OF(Q, K, V)                                                            \
  outer, inner, tq, tk, d, dv, scale, Q, qOuter, qInner, qRow, K, kOuter, kInner, kRow, V, vOuter, \
      vInner, vRow, mask, maskOuter, maskInner, maskRow, out, outOuter, outInner, outRow, stats,   \
      out16, inputsBf16
#define TFC_TC_FORWARD_ARGS TFC_TC_FORWARD_ARGS_OF(q, k, v)
#define TFC_TC_BACKWARD_PARAMS_OF(T, U, Scratch, DS)                                               \
  i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale, const T *__restrict__ q,       \
      i64 qOuter, i64 qInner, i64 qRow, const T *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow, \
      const T *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,                                   \
      const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,           \
      const U *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,                       \
      float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, float *__restrict__ dk,         \
      i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut, i64 dvOuter, i64 dvInner,    \
      i64 dvRow, const float *__restrict__ out, i64 outOuter, i64 outInner, i64 outRow,            \
      const float *__restrict__ stats, Scratch *__restrict__ scratch, DS *__restrict__ dS,         \
      i64 dsRow, i64 gradsBf16, i64 inputsBf16
/// dq's: scratch written (when not 0), dS read; dkv's: scratch read (dq
/// stored it) and dS written. U, dout's element type.
#define TFC_TC_DQ_PARAMS_OF(T, U) TFC_TC_BACKWARD_PARAMS_OF(T, U, float, const uint16_t)
#define TFC_TC_DKV_PARAMS_OF(T, U) TFC_TC_BACKWARD_PARAMS_OF(T, U, const float, uint16_t)
#define TFC_TC_DQ_PARAMS TFC_TC_DQ_PARAMS_OF(float, float)
#define TFC_TC_DKV_PARAMS TFC_TC_DKV_PARAMS_OF(float, float)
/// The loops' arguments (backwardDq's and backwardDkv's: no inputsBf16,
/// their T q's type), then the kernel bodies' (with it).
#define TFC_TC_LOOP_ARGS                                                                           \
  outer, inner, tq, tk, d, dv, scale, q, qOuter, qInner, qRow, k, kOuter, kInner, kRow, v, vOuter, \
      vInner, vRow, mask, maskOuter, maskInner, maskRow, dout, doutOuter, doutInner, doutRow, dq,  \
      dqOuter, dqInner, dqRow, dk, dkOuter, dkInner, dkRow, dvOut, dvOuter, dvInner, dvRow, out,   \
      outOuter, outInner, outRow, stats, scratch, dS, dsRow, gradsBf16
#define TFC_TC_BACKWARD_ARGS_OF(Q, K, V, DO)                                                       \
  outer, inner, tq, tk, d, dv, scale, Q, qOuter, qInner, qRow, K, kOuter, kInner, kRow, V, vOuter, \
      vInner, vRow, mask, maskOuter, maskInner, maskRow, DO, doutOuter, doutInner, doutRow, dq,    \
      dqOuter, dqInner, dqRow, dk, dkOuter, dkInner, dkRow, dvOut, dvOuter, dvInner, dvRow, out,   \
      outOuter, outInner, outRow, stats, scratch, dS, dsRow, gradsBf16, inputsBf16
#define TFC_TC_BACKWARD_ARGS TFC_TC_BACKWARD_ARGS_OF(q, k, v, dout)
/// q, k, v or dO as bf16 bits (kAttentionQkvBf16, kAttentionDoBf16): the
/// entries' C parameters are floats.
__device__ __forceinline__ const uint16_t *bf16In(const float *x) {
  return reinterpret_cast<const uint16_t *>(x);
}
#define TFC_TC_FORWARD_ARGS_BF16 TFC_TC_FORWARD_ARGS_OF(bf16In(q), bf16In(k), bf16In(v))
#define TFC_TC_BACKWARD_ARGS_BF16 TFC_TC_BACKWARD_ARGS_OF(bf16In(q), bf16In(k), bf16In(v), dout)
#define TFC_TC_BACKWARD_ARGS_BF16_DO                                                               \
  TFC_TC_BACKWARD_ARGS_OF(bf16In(q), bf16In(k), bf16In(v), bf16In(dout))

/// Each kernel's shared memory, declared by its entry: once (a body
/// instantiated for f32 and for bf16 inputs would declare two). The entry
/// waits for the kernel before it (awaitPreviousKernel) once too.
struct alignas(16) ForwardShared {
  Tile sK[2], sVt[2];
};
struct alignas(16) DqShared {
  Tile sQ, sdO, sK, sKt, sV;
};
struct alignas(16) DkvShared {
  Tile sQ, sQt, sdO, sdOt;
  float4 sStats[kRows];
};

/// The forward kernel: Lean takes no prefetch on any path.
template <bool Lean, typename T>
__device__ __forceinline__ void forwardKernel(TFC_TC_FORWARD_PARAMS_OF(T), ForwardShared &shared) {
  if (outer * inner <= 0 || tq <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
  const bool aligned = rowsAligned(q, qOuter, qInner, qRow) &&
                       rowsAligned(k, kOuter, kInner, kRow) && rowsAligned(v, vOuter, vInner, vRow);
  dispatch<T>(aligned, d, dv, [&](auto vec, auto w) {
    constexpr bool Vec = decltype(vec)::value;
    forward<Vec, decltype(w)::value, Vec && !Lean>(
        outer, inner, tq, tk, d, dv, scale, q, qOuter, qInner, qRow, k, kOuter, kInner, kRow, v,
        vOuter, vInner, vRow, mask, maskOuter, maskInner, maskRow, out, outOuter, outInner, outRow,
        stats, out16, shared.sK, shared.sVt);
  });
}

/// The dq kernel (see backwardDq for Lean).
template <bool Lean, typename T, typename U>
__device__ __forceinline__ void dqKernel(TFC_TC_DQ_PARAMS_OF(T, U), DqShared &shared) {
  if (outer * inner <= 0 || tq <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
  const bool aligned =
      rowsAligned(q, qOuter, qInner, qRow) && rowsAligned(k, kOuter, kInner, kRow) &&
      rowsAligned(v, vOuter, vInner, vRow) && rowsAligned(dout, doutOuter, doutInner, doutRow);
  // The body storing dq as bf16 or as f32, neither testing gradsBf16.
  auto body = [&](auto gradsBf16) {
    dispatch<T>(aligned, d, dv, [&](auto vec, auto w) {
      backwardDq<bool(decltype(vec)::value), decltype(w)::value, Lean>(
          TFC_TC_LOOP_ARGS, shared.sQ, shared.sdO, shared.sK, shared.sKt, shared.sV);
    });
  };
  if (gradsBf16 & kAttentionDqBf16)
    body(AllBf16Grads());
  else
    body(NoBf16Grads());
}

/// The dkv kernel.
template <typename T, typename U>
__device__ __forceinline__ void dkvKernel(TFC_TC_DKV_PARAMS_OF(T, U), DkvShared &shared) {
  if (outer * inner <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
  const bool aligned =
      rowsAligned(q, qOuter, qInner, qRow) && rowsAligned(k, kOuter, kInner, kRow) &&
      rowsAligned(v, vOuter, vInner, vRow) && rowsAligned(dout, doutOuter, doutInner, doutRow);
  dispatch<T>(aligned, d, dv, [&](auto vec, auto w) {
    backwardDkv<bool(decltype(vec)::value), decltype(w)::value>(
        TFC_TC_LOOP_ARGS, shared.sQ, shared.sQt, shared.sdO, shared.sdOt, shared.sStats);
  });
}

} // namespace

// attention_wgmma.cu includes this file for its loops and tiles, not its
// kernels (its image has kernels of its own).
#ifndef TFC_ATTENTION_TC_NO_KERNELS

// Each entry runs its body on q, k and v as f32, or as bf16 bits under
// kAttentionQkvBf16 (runtime/Abi.h's attention::kQkvBf16); the backward's
// dO too under kAttentionDoBf16 (which the runtime passes with
// kAttentionQkvBf16 alone: these take q, k and v as bf16 bits then).

/// out[b] = softmax(scale q[b] k[b]^T, masked) v[b]: attention.cu's
/// forward kernel, on tensor cores.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_tc_forward_kernel(TFC_TC_FORWARD_PARAMS) {
  __shared__ ForwardShared shared;
  awaitPreviousKernel(); // once: each body is instantiated more than once
  trapUnlessBlockSize(kAttentionTcThreads);
  if (inputsBf16 & kAttentionQkvBf16)
    forwardKernel<false, uint16_t>(TFC_TC_FORWARD_ARGS_BF16, shared);
  else
    forwardKernel<false, float>(TFC_TC_FORWARD_ARGS, shared);
}

/// The same, lean (KernelMath.h's kAttentionTcLeanBlocks): the same bits.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads, kAttentionTcLeanBlocks)
    tfc_cuda_attention_tc_forward_lean_kernel(TFC_TC_FORWARD_PARAMS) {
  __shared__ ForwardShared shared;
  awaitPreviousKernel(); // once: each body is instantiated more than once
  trapUnlessBlockSize(kAttentionTcThreads);
  if (inputsBf16 & kAttentionQkvBf16)
    forwardKernel<true, uint16_t>(TFC_TC_FORWARD_ARGS_BF16, shared);
  else
    forwardKernel<true, float>(TFC_TC_FORWARD_ARGS, shared);
}

/// dq[b] = dS K (dS with the scale): attention.cu's dq kernel on tensor
/// cores, the same arguments; with scratch, the rows' statistics stored.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_tc_backward_dq_kernel(TFC_TC_DQ_PARAMS) {
  __shared__ DqShared shared;
  awaitPreviousKernel(); // once: each body is instantiated more than once
  trapUnlessBlockSize(kAttentionTcThreads);
  if (inputsBf16 & kAttentionDoBf16)
    dqKernel<false, uint16_t, uint16_t>(TFC_TC_BACKWARD_ARGS_BF16_DO, shared);
  else if (inputsBf16 & kAttentionQkvBf16)
    dqKernel<false, uint16_t, float>(TFC_TC_BACKWARD_ARGS_BF16, shared);
  else
    dqKernel<false, float, float>(TFC_TC_BACKWARD_ARGS, shared);
}

/// The same, lean: the same bits.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads, kAttentionTcLeanBlocks)
    tfc_cuda_attention_tc_backward_dq_lean_kernel(TFC_TC_DQ_PARAMS) {
  __shared__ DqShared shared;
  awaitPreviousKernel(); // once: each body is instantiated more than once
  trapUnlessBlockSize(kAttentionTcThreads);
  if (inputsBf16 & kAttentionDoBf16)
    dqKernel<true, uint16_t, uint16_t>(TFC_TC_BACKWARD_ARGS_BF16_DO, shared);
  else if (inputsBf16 & kAttentionQkvBf16)
    dqKernel<true, uint16_t, float>(TFC_TC_BACKWARD_ARGS_BF16, shared);
  else
    dqKernel<true, float, float>(TFC_TC_BACKWARD_ARGS, shared);
}

/// dk[b] = dS^T Q and dvOut[b] = P^T dO: attention.cu's dkv kernel on
/// tensor cores, the same arguments; scratch (when not 0) as dq left it.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_tc_backward_dkv_kernel(TFC_TC_DKV_PARAMS) {
  __shared__ DkvShared shared;
  awaitPreviousKernel(); // once: each body is instantiated more than once
  trapUnlessBlockSize(kAttentionTcThreads);
  if (inputsBf16 & kAttentionDoBf16)
    dkvKernel<uint16_t, uint16_t>(TFC_TC_BACKWARD_ARGS_BF16_DO, shared);
  else if (inputsBf16 & kAttentionQkvBf16)
    dkvKernel<uint16_t, float>(TFC_TC_BACKWARD_ARGS_BF16, shared);
  else
    dkvKernel<float, float>(TFC_TC_BACKWARD_ARGS, shared);
}

#endif // TFC_ATTENTION_TC_NO_KERNELS
