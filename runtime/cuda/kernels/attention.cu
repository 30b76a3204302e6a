//===- attention.cu - fused attention forward and backward on the GPU -----===//
//
// defines: tfc_cuda_attention_forward_kernel,
//          tfc_cuda_attention_backward_dq_kernel,
//          tfc_cuda_attention_backward_dkv_kernel
//
// The GPU twin of runtime/cpu/Attention.{h,cpp}: the same semantics and the
// same arguments, in the same order (abi::attention; Kernels.h lists them):
// sizes outer, inner, tq, tk, d, dv, the f32 scale, then per tensor a
// pointer and its outer, inner and row strides in elements (any input stride
// may be 0, a broadcast), the mask bytes (0 or 1) or a null pointer. FP32 on
// the CUDA cores (FMAs, no tensor cores, no TF32), flash style: the tq x tk
// weights never reach memory; keys go by tiles with an online softmax
// (KernelMath.h's onlineFold).
//
// Tiles, as an SGEMM's. A block is 256 threads, a 16 x 16 grid: thread
// (ty, tx) = (threadIdx.x / 16, threadIdx.x % 16) owns rows 4 ty .. 4 ty + 3
// and columns 4 tx .. 4 tx + 3 of every 64 x 64 tile the block computes (a
// register micro-tile of 4 x 4). A tile of scores S = Q (scale K)^T is
// staged kAttentionChunk = 16 head columns at a time: the chunks of Q and
// of scale K (and of dO and V for dP = dO V^T) are loaded coalesced (16
// consecutive floats a row) and stored transposed (a head column a staged
// row), so a thread's 4 rows and 4 keys are two 16-byte shared loads for
// 16 FMAs; each score is one FMA chain over the head columns in order, the
// CPU's attentionScore. P or dS then go to shared memory as they are (a
// thread's 4 keys of a row one 16-byte store, 16 threads' stores on
// distinct banks), and the products read them there times a 64 x 64 tile
// of V, K, dO or Q loaded as it is, rows coalesced: the forward's P V and
// dq's dS K by P's rows (accumulateByRows: 4 keys a load), dkv's P^T dO and
// dS^T Q by its columns (accumulate: 4 keys a load). Staged rows are 68
// floats (16-byte aligned, banks shifted by 4). Shared memory: two
// 64 x 68 buffers, 34,816 bytes, static: A holds the four chunks, then the
// operand tile; B holds P or dS. A chunk's global loads go into registers
// a chunk ahead (in flight while the block multiplies the one before).
// Every tile edge (tq, tk not multiples of 64, d, dv not multiples of 16
// or 64) is staged as zeros, which add nothing; keys past tk get score
// -inf (weight 0).
// A row's 64 scores are spread over the 16 threads of one half-warp (tx the
// low lane bits), so its maximum and sums are 4 sequential in-thread steps
// then butterflies over lanes ^ 8, 4, 2, 1: the same bits in all 16.
//
// Forward: a block a (head, 64 query rows, 64 columns of dv) unit. Per
// key tile: the scores (masked ones -9e15), the rows' online softmax
// (m, l, the accumulator rescaled by alpha), P into B, the V tile into A,
// out += P V. out = accumulator / l. Heads with dv > 64 go in slices of 64
// output columns, a unit each, the scores recomputed for each. With stats
// (not 0), the column slice 0 units store each row's {m, 1/l, 0, scale or
// 0} at float4 stats[head * tq + row] for the backward.
//
// Backward, two launches with the same arguments and no atomics. Given the
// forward's out and stats, neither recomputes a row's m and 1/l (the
// forward's have tileStats' bits: the same scores and sums in the same
// order), and D is dO . out (outDot, FlashAttention-2's identity): dq has
// no pass 1 and dkv no tileStats. Else the last argument, scratch, is 0 or
// room for 4 floats a query row (16-byte aligned), which passes the rows'
// statistics from the first launch to the second:
//  - dq: a block a (head, 64 query rows, 64 columns of d) unit. Pass 1
//    (tileStats) gives the rows' m, 1/l and D = Σ P dP (dP = dO V^T)
//    online over the key tiles; pass 2 recomputes S and dP per tile,
//    dS = scale P (dP - D), dS into B, the K tile into A, dQ += dS K.
//    With scratch, the column slice 0 units also store {m, 1/l, D, scale
//    or 0} at float4 scratch[head * tq + row].
//  - dkv: a block a (head, 64 keys, 64 columns of max(d, dv)) unit. Per
//    tile of 64 queries: their statistics, S and dP of the queries x the
//    block's keys, P into B and the dO tile into A for dV += P^T dO, then
//    dS into B and the Q tile into A for dK += dS^T Q. With scratch it loads
//    what dq stored (dq runs first on the same stream); without, it
//    recomputes them with dq's tileStats, which every block of keys repeats:
//    tk / 64 times pass 1's work. Both give the same bits: one function on
//    the same inputs, the same threads, either way.
// Every output element is one fixed sequence of operations (no atomics):
// the same bits on every run, for any grid (kernels walk their units by
// grid.x; KernelMath.h's attention*Units count them).
//
// Launch: every kernel 256 threads a block (kAttentionThreads,
// kAttentionDkvThreads), grid.x any. No dynamic shared memory.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

using namespace tfc::rt::cuda::kernels;

namespace {

typedef long long i64;

static_assert(kAttentionThreads == 256 && kAttentionDkvThreads == kAttentionThreads,
              "the tiles below assume a 16 x 16 grid of threads");
static_assert(kAttentionRows == 64 && kAttentionColumns == kAttentionRows &&
                  kAttentionDkvKeys == kAttentionRows,
              "a thread's 4 x 4 of a 64 x 64 tile");

constexpr int kTile = kAttentionRows;    // rows (and columns) of a tile
constexpr int kChunk = kAttentionChunk;  // head columns a staged chunk
constexpr int kPitch = kTile + 4;        // floats a staged row
constexpr int kSide = 16;                // threads a side of the block
constexpr int kOwn = 4;                  // rows (and columns) a thread owns
constexpr int kStaged = kTile * kPitch;  // floats a buffer: a tile, or 4 chunks
static_assert(4 * kChunk * kPitch == kStaged, "four chunks fill a buffer");

/// A thread's place in the block's 16 x 16 grid.
struct Place {
  int ty, tx;
};

__device__ __forceinline__ Place place() {
  return {int(threadIdx.x) / kSide, int(threadIdx.x) % kSide};
}

/// 4 floats of shared memory (16-byte aligned): one 128-bit access.
__device__ __forceinline__ float4 load4(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}
__device__ __forceinline__ void store4(float *p, float a, float b, float c, float d) {
  *reinterpret_cast<float4 *>(p) = make_float4(a, b, c, d);
}

/// The largest value (sum, any) over the 16 threads of a row: lanes that
/// differ in their low 4 bits, butterflies ^ 8, 4, 2, 1 (all 16 end with
/// the same bits).
__device__ __forceinline__ float rowMax(float v) { return warpMax<kSide>(v); }
__device__ __forceinline__ float rowSum(float v) { return warpSum<kSide>(v); }
__device__ __forceinline__ bool rowAny(bool b) {
  int v = b ? 1 : 0;
#pragma unroll
  for (int o = kSide / 2; o > 0; o /= 2)
    v |= __shfl_xor_sync(kFullMask, v, o);
  return v != 0;
}

/// A thread's 4 x 4 of a tile (P or dS) into staged rows as it is: rows
/// 4 ty .. 4 ty + 3, columns 4 tx .. 4 tx + 3, a 16-byte store a row.
__device__ __forceinline__ void storeOwn(float *to, const float (&v)[kOwn][kOwn], Place at) {
#pragma unroll
  for (int r = 0; r < kOwn; ++r)
    store4(to + (kOwn * at.ty + r) * kPitch + kOwn * at.tx, v[r][0], v[r][1], v[r][2], v[r][3]);
}

/// A thread's elements of a staged chunk: element e = threadIdx.x + 256 t
/// is row e / 16, head column c0 + e % 16 (consecutive threads read
/// consecutive columns of a row).
constexpr int kChunkShare = kChunk * kTile / kAttentionThreads;

/// x[t] = factor * src[r * row + c0 + c] for the thread's elements of head
/// columns c0 .. c0 + 15 of a tile's rows; 0 past `rows` rows or `width`
/// columns. Loaded into registers a chunk ahead: the loads are in flight
/// while the block computes on the chunk before.
__device__ __forceinline__ void loadChunk(float (&x)[kChunkShare], const float *__restrict__ src,
                                          i64 row, i64 rows, i64 c0, i64 width, float factor) {
#pragma unroll
  for (int t = 0; t < kChunkShare; ++t) {
    const int e = int(threadIdx.x) + t * kAttentionThreads, r = e / kChunk, c = e % kChunk;
    x[t] = r < rows && c0 + c < width ? factor * src[r * row + c0 + c] : 0.0f;
  }
}

/// dst[c * kPitch + r] = the element (r, c) loadChunk gave: the chunk
/// transposed, a head column a staged row.
__device__ __forceinline__ void storeChunk(float *dst, const float (&x)[kChunkShare]) {
#pragma unroll
  for (int t = 0; t < kChunkShare; ++t) {
    const int e = int(threadIdx.x) + t * kAttentionThreads;
    dst[e % kChunk * kPitch + e / kChunk] = x[t];
  }
}

/// dst[r * kPitch + c] = src[r * row + c0 + c], r, c < kTile: a tile as it
/// is, 0 past `rows` rows or `width` columns.
__device__ __forceinline__ void stageTile(float *dst, const float *__restrict__ src, i64 row,
                                          i64 rows, i64 c0, i64 width) {
#pragma unroll 4
  for (int t = 0; t < kTile * kTile / kAttentionThreads; ++t) {
    const int e = int(threadIdx.x) + t * kAttentionThreads, r = e / kTile, c = e % kTile;
    dst[r * kPitch + c] = r < rows && c0 + c < width ? src[r * row + c0 + c] : 0.0f;
  }
}

/// acc[r][j] += Σ_k a[k][4 ty + r] b[k][4 tx + j] over k < n, in k order
/// (one FMA chain an element), a and b staged (kPitch floats a row).
template <int n>
__device__ __forceinline__ void accumulate(float (&acc)[kOwn][kOwn], const float *a,
                                           const float *b, Place at) {
#pragma unroll 8
  for (int k = 0; k < n; ++k) {
    const float4 x = load4(a + k * kPitch + kOwn * at.ty), y = load4(b + k * kPitch + kOwn * at.tx);
    const float xs[kOwn] = {x.x, x.y, x.z, x.w}, ys[kOwn] = {y.x, y.y, y.z, y.w};
#pragma unroll
    for (int r = 0; r < kOwn; ++r)
#pragma unroll
      for (int j = 0; j < kOwn; ++j)
        acc[r][j] = fusedMulAdd(xs[r], ys[j], acc[r][j]);
  }
}

/// acc[r][j] += Σ_k a[4 ty + r][k] b[k][4 tx + j] over k < n, in k order:
/// accumulate with a stored as it is (rows of k), so that the threads that
/// write it (4 consecutive k each, by rows) hit distinct banks; a is read
/// 4 k at a time, one 16-byte load a row.
template <int n>
__device__ __forceinline__ void accumulateByRows(float (&acc)[kOwn][kOwn], const float *a,
                                                 const float *b, Place at) {
  static_assert(n % 4 == 0, "4 k a load");
#pragma unroll 2
  for (int k0 = 0; k0 < n; k0 += 4) {
    float xs[kOwn][4];
#pragma unroll
    for (int r = 0; r < kOwn; ++r) {
      const float4 x = load4(a + (kOwn * at.ty + r) * kPitch + k0);
      xs[r][0] = x.x;
      xs[r][1] = x.y;
      xs[r][2] = x.z;
      xs[r][3] = x.w;
    }
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const float4 y = load4(b + (k0 + t) * kPitch + kOwn * at.tx);
      const float ys[kOwn] = {y.x, y.y, y.z, y.w};
#pragma unroll
      for (int r = 0; r < kOwn; ++r)
#pragma unroll
        for (int j = 0; j < kOwn; ++j)
          acc[r][j] = fusedMulAdd(xs[r][t], ys[j], acc[r][j]);
    }
  }
}

/// The thread's scores of a tile: s[r][j] = Σ_c Q[4 ty + r][c] (scale
/// K[4 tx + j][c]) over the d head columns in order, one FMA chain from 0
/// (attentionScore; the zero-padded columns past d add exactly 0), for Q's
/// first `rows` rows and K's first `keys` (0 past them). WithDp also
/// dp = dO V^T the same way (attentionDot) over the dv columns. `stage` is
/// buffer A; the first barrier waits for its last readers. The next chunk
/// is loaded into registers while this one is multiplied (double-buffered
/// through registers: one chunk in shared memory, the next on its way).
template <bool WithDp>
__device__ __forceinline__ void scoreTile(float (&s)[kOwn][kOwn], float (&dp)[kOwn][kOwn],
                                          float *stage, const float *Q, i64 qRow,
                                          const float *K, i64 kRow, const float *dO, i64 dORow,
                                          const float *V, i64 vRow, i64 rows, i64 keys, i64 d,
                                          i64 dv, float scale, Place at) {
#pragma unroll
  for (int r = 0; r < kOwn; ++r)
#pragma unroll
    for (int j = 0; j < kOwn; ++j)
      s[r][j] = dp[r][j] = 0.0f;
  float *sq = stage, *sk = stage + kChunk * kPitch, *sdo = sk + kChunk * kPitch,
        *sv = sdo + kChunk * kPitch;
  const i64 width = WithDp && dv > d ? dv : d;
  float xq[kChunkShare], xk[kChunkShare], xdo[kChunkShare], xv[kChunkShare];
  auto load = [&](i64 c0) {
    loadChunk(xq, Q, qRow, rows, c0, d, 1.0f);
    loadChunk(xk, K, kRow, keys, c0, d, scale);
    if (WithDp) {
      loadChunk(xdo, dO, dORow, rows, c0, dv, 1.0f);
      loadChunk(xv, V, vRow, keys, c0, dv, 1.0f);
    }
  };
  load(0);
  for (i64 c0 = 0; c0 < width; c0 += kChunk) {
    __syncthreads(); // the last chunk's (or tile's) readers are done
    storeChunk(sq, xq);
    storeChunk(sk, xk);
    if (WithDp) {
      storeChunk(sdo, xdo);
      storeChunk(sv, xv);
    }
    __syncthreads();
    if (c0 + kChunk < width)
      load(c0 + kChunk); // in flight while this chunk is multiplied
    accumulate<kChunk>(s, sq, sk, at);
    if (WithDp)
      accumulate<kChunk>(dp, sdo, sv, at);
  }
}

/// Masks a score tile: keys past `keys` get -inf (no weight, even in a row
/// whose keys are all masked), keys whose byte is 0 in M (the tile's first
/// row and key; null: no mask) kMaskedScore, as the CPU; live[r] is set
/// where row r has an unmasked key.
__device__ __forceinline__ void maskScores(float (&s)[kOwn][kOwn], bool (&live)[kOwn],
                                           const unsigned char *__restrict__ M, i64 maskRow,
                                           i64 rows, i64 keys, Place at) {
#pragma unroll
  for (int r = 0; r < kOwn; ++r) {
    const int i = kOwn * at.ty + r;
#pragma unroll
    for (int j = 0; j < kOwn; ++j) {
      const int key = kOwn * at.tx + j;
      if (key >= keys)
        s[r][j] = -INFINITY;
      else if (M && i < rows && !M[i * maskRow + key])
        s[r][j] = kMaskedScore;
      else
        live[r] = true;
    }
  }
}

/// One query row's statistics for the backward: the maximum score, 1/l,
/// D = Σ_j P_ij dP_ij and scale (0 when every key of the row is masked);
/// the dq kernel's stats holds one a row, in this order.
struct RowStats {
  float m, inv, D, scaleLive;
};

/// Pass 1 of the backward for rows 4 ty + r of a tile of `rows` query rows
/// (Q, dO and M at the tile's first row), over all tk keys; the 16 threads
/// of a row return the same values. dq and dkv both call this, on the same
/// tiles with the same threads: the same bits.
__device__ __forceinline__ void tileStats(RowStats (&st)[kOwn], float *stage, const float *Q,
                                          i64 qRow, const float *dO, i64 dORow, const float *K,
                                          i64 kRow, const float *V, i64 vRow,
                                          const unsigned char *M, i64 maskRow, i64 rows, i64 tk,
                                          i64 d, i64 dv, float scale, Place at) {
  OnlineRow row[kOwn];
  bool live[kOwn];
#pragma unroll
  for (int r = 0; r < kOwn; ++r) {
    row[r] = {-INFINITY, 0.0f, 0.0f};
    live[r] = M == nullptr;
  }
  for (i64 j0 = 0; j0 < tk; j0 += kTile) {
    const i64 keys = tk - j0 < kTile ? tk - j0 : kTile;
    float s[kOwn][kOwn], dp[kOwn][kOwn];
    scoreTile<true>(s, dp, stage, Q, qRow, K + j0 * kRow, kRow, dO, dORow, V + j0 * vRow, vRow,
                    rows, keys, d, dv, scale, at);
    maskScores(s, live, M ? M + j0 : nullptr, maskRow, rows, keys, at);
#pragma unroll
    for (int r = 0; r < kOwn; ++r) {
      float top = -INFINITY;
#pragma unroll
      for (int j = 0; j < kOwn; ++j)
        top = maxOf(top, s[r][j]);
      const float mNew = maxOf(row[r].m, rowMax(top));
      float sum = 0.0f, dot = 0.0f;
#pragma unroll
      for (int j = 0; j < kOwn; ++j) {
        const float p = kOwn * at.tx + j < keys ? expApprox(s[r][j] - mNew) : 0.0f;
        sum += p;
        dot += p * dp[r][j];
      }
      const float alpha = onlineAlpha(j0 == 0, row[r].m, mNew);
      row[r] = onlineFold(row[r], mNew, alpha, rowSum(sum), rowSum(dot));
    }
  }
#pragma unroll
  for (int r = 0; r < kOwn; ++r)
    st[r] = {row[r].m, 1.0f / row[r].l, row[r].dot / row[r].l, rowAny(live[r]) ? scale : 0.0f};
}

/// D = Σ_c dO_c out_c of one query row (dv columns; 0 when dv is 0, for a
/// row past the tile): thread tx of the row's 16 adds columns tx, tx + 16,
/// ... in order, then rowSum. FlashAttention-2's identity, D = Σ_j P_j dP_j
/// = dO . (Σ_j P_j V_j): dq and dkv call it on the same rows with the same
/// threads, so both take the same bits. Every thread calls it.
__device__ __forceinline__ float outDot(const float *dO, const float *out, i64 dv, Place at) {
  float sum = 0.0f;
  for (i64 c = at.tx; c < dv; c += kSide)
    sum += dO[c] * out[c];
  return rowSum(sum);
}

/// Rows 4 ty + r of a tile of `rows` queries (dO and out at the tile's
/// first row; tile row 0 is query `first` of head b): the statistics the
/// forward saved, D by outDot.
__device__ __forceinline__ void savedStats(RowStats (&st)[kOwn], const float *saved, i64 b, i64 tq,
                                           i64 first, const float *dO, i64 dORow, const float *out,
                                           i64 outRow, i64 rows, i64 dv, Place at) {
#pragma unroll
  for (int r = 0; r < kOwn; ++r) {
    const i64 i = kOwn * at.ty + r;
    const bool in = i < rows;
    const float4 x = in ? reinterpret_cast<const float4 *>(saved)[b * tq + first + i]
                        : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    st[r] = {x.x, x.y,
             outDot(dO + (in ? i * dORow : 0), out + (in ? i * outRow : 0), in ? dv : 0, at), x.w};
  }
}

__device__ __forceinline__ i64 smaller(i64 a, i64 b) { return a < b ? a : b; }

} // namespace

/// out[b] = softmax(scale q[b] k[b]^T, masked) v[b] for every head b of
/// outer x inner (runtime/cpu/Attention.h's tfc_attention_forward).
extern "C" __global__ void __launch_bounds__(kAttentionThreads) tfc_cuda_attention_forward_kernel(
    i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale, const float *__restrict__ q,
    i64 qOuter, i64 qInner, i64 qRow, const float *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow,
    const float *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
    const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
    float *__restrict__ out, i64 outOuter, i64 outInner, i64 outRow, float *__restrict__ stats,
    uint16_t *__restrict__ out16, i64 inputsBf16) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionThreads);
  if (inputsBf16)
    __trap(); // f32 q, k and v alone: the runtime takes attention_tc.cu's kernels for bf16
  const i64 heads = outer * inner;
  if (heads <= 0 || tq <= 0 || tk <= 0 || d <= 0 || dv <= 0)
    return;
  __shared__ __align__(16) float sA[kStaged], sB[kStaged];
  const Place at = place();
  const i64 tiles = attentionCeil(tq, kTile), slices = attentionCeil(dv, kAttentionColumns);
  for (i64 unit = blockIdx.x; unit < attentionForwardUnits(heads, tq, dv); unit += gridDim.x) {
    const i64 b = unit / (tiles * slices), i0 = unit / slices % tiles * kTile,
              c0 = unit % slices * kAttentionColumns, rows = smaller(kTile, tq - i0);
    const float *Q = headOf(q, qOuter, qInner, b, inner) + i0 * qRow;
    const float *K = headOf(k, kOuter, kInner, b, inner);
    const float *V = headOf(v, vOuter, vInner, b, inner);
    const unsigned char *M =
        mask ? headOf(mask, maskOuter, maskInner, b, inner) + i0 * maskRow : nullptr;
    float acc[kOwn][kOwn] = {};
    OnlineRow row[kOwn];
    bool live[kOwn]; // as tileStats: whether a row may attend to any key
#pragma unroll
    for (int r = 0; r < kOwn; ++r) {
      row[r] = {-INFINITY, 0.0f, 0.0f};
      live[r] = M == nullptr;
    }
    for (i64 j0 = 0; j0 < tk; j0 += kTile) {
      const i64 keys = smaller(kTile, tk - j0);
      float s[kOwn][kOwn], unused[kOwn][kOwn];
      scoreTile<false>(s, unused, sA, Q, qRow, K + j0 * kRow, kRow, nullptr, 0, nullptr, 0, rows,
                       keys, d, dv, scale, at);
      maskScores(s, live, M ? M + j0 : nullptr, maskRow, rows, keys, at);
#pragma unroll
      for (int r = 0; r < kOwn; ++r) {
        float top = -INFINITY;
#pragma unroll
        for (int j = 0; j < kOwn; ++j)
          top = maxOf(top, s[r][j]);
        const float mNew = maxOf(row[r].m, rowMax(top));
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < kOwn; ++j) {
          s[r][j] = kOwn * at.tx + j < keys ? expApprox(s[r][j] - mNew) : 0.0f; // P, unnormalised
          sum += s[r][j];
        }
        const float alpha = onlineAlpha(j0 == 0, row[r].m, mNew);
        row[r] = onlineFold(row[r], mNew, alpha, rowSum(sum), 0.0f);
#pragma unroll
        for (int j = 0; j < kOwn; ++j)
          acc[r][j] *= alpha;
      }
      __syncthreads(); // the score chunks in A are read
      storeOwn(sB, s, at); // P as it is: a[row][key]
      stageTile(sA, V + j0 * vRow, vRow, keys, c0, dv);
      __syncthreads();
      accumulateByRows<kTile>(acc, sB, sA, at); // the next scoreTile's barrier guards A and B
    }
    const i64 o0 = headIndex(outOuter, outInner, b, inner) + i0 * outRow;
#pragma unroll
    for (int r = 0; r < kOwn; ++r) {
      const i64 i = kOwn * at.ty + r;
      const float inv = 1.0f / row[r].l;
      // The backward's statistics, as tileStats computes them (the same
      // scores, maxima and sums in the same order: the same bits), but D.
      if (stats && c0 == 0) { // uniform: rowAny's shuffles see every lane
        const float scaleLive = rowAny(live[r]) ? scale : 0.0f;
        if (at.tx == 0 && i < rows)
          reinterpret_cast<float4 *>(stats)[b * tq + i0 + i] =
              make_float4(row[r].m, inv, 0.0f, scaleLive);
      }
#pragma unroll
      for (int j = 0; j < kOwn; ++j) {
        const i64 c = c0 + kOwn * at.tx + j;
        if (i < rows && c < dv)
          out[o0 + i * outRow + c] = acc[r][j] * inv;
      }
    }
    // out's bits beside it, read back from what this thread stored: no
    // register is held for them while the accumulators live.
    if (out16)
#pragma unroll
      for (int r = 0; r < kOwn; ++r)
#pragma unroll
        for (int j = 0; j < kOwn; ++j) {
          const i64 i = kOwn * at.ty + r, c = c0 + kOwn * at.tx + j;
          if (i < rows && c < dv)
            out16[o0 + i * outRow + c] = bf16Bits(out[o0 + i * outRow + c]);
        }
  }
}

/// dq[b] = scale dS K (runtime/cpu/Attention.h's tfc_attention_backward,
/// its dq output); the arguments are tfc_attention_backward's, all of them.
extern "C" __global__ void __launch_bounds__(kAttentionThreads)
    tfc_cuda_attention_backward_dq_kernel(
        i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale,
        const float *__restrict__ q, i64 qOuter, i64 qInner, i64 qRow, const float *__restrict__ k,
        i64 kOuter, i64 kInner, i64 kRow, const float *__restrict__ v, i64 vOuter, i64 vInner,
        i64 vRow, const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
        const float *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
        float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, float *__restrict__ dk,
        i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut, i64 dvOuter, i64 dvInner,
        i64 dvRow, const float *__restrict__ out, i64 outOuter, i64 outInner, i64 outRow,
        const float *__restrict__ stats, float *__restrict__ scratch, const float *__restrict__ dS,
        i64 dsRow, i64 gradsBf16, i64 inputsBf16) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionThreads);
  if (inputsBf16)
    __trap(); // as the forward's
  const i64 heads = outer * inner;
  if (heads <= 0 || tq <= 0 || tk <= 0 || d <= 0 || dv <= 0)
    return;
  __shared__ __align__(16) float sA[kStaged], sB[kStaged];
  const Place at = place();
  const i64 tiles = attentionCeil(tq, kTile), slices = attentionCeil(d, kAttentionColumns);
  for (i64 unit = blockIdx.x; unit < attentionDqUnits(heads, tq, d); unit += gridDim.x) {
    const i64 b = unit / (tiles * slices), i0 = unit / slices % tiles * kTile,
              c0 = unit % slices * kAttentionColumns, rows = smaller(kTile, tq - i0);
    const float *Q = headOf(q, qOuter, qInner, b, inner) + i0 * qRow;
    const float *K = headOf(k, kOuter, kInner, b, inner);
    const float *V = headOf(v, vOuter, vInner, b, inner);
    const float *dO = headOf(dout, doutOuter, doutInner, b, inner) + i0 * doutRow;
    const unsigned char *M =
        mask ? headOf(mask, maskOuter, maskInner, b, inner) + i0 * maskRow : nullptr;
    // With dS (dkv ran first and stored it), dQ = dS K: no statistics, no scores.
    const float *D = dS ? dS + (b * tq + i0) * dsRow : nullptr;
    RowStats st[kOwn];
    if (!D) {
      if (stats) // the forward's, uniform: no pass 1
        savedStats(st, stats, b, tq, i0, dO, doutRow,
                   headOf(out, outOuter, outInner, b, inner) + i0 * outRow, outRow, rows, dv, at);
      else
        tileStats(st, sA, Q, qRow, dO, doutRow, K, kRow, V, vRow, M, maskRow, rows, tk, d, dv,
                  scale, at);
    }
    if (!D && scratch && c0 == 0 && at.tx == 0) // slot b * tq + row
#pragma unroll
      for (int r = 0; r < kOwn; ++r)
        if (kOwn * at.ty + r < rows)
          reinterpret_cast<float4 *>(scratch)[b * tq + i0 + kOwn * at.ty + r] =
              make_float4(st[r].m, st[r].inv, st[r].D, st[r].scaleLive);
    float acc[kOwn][kOwn] = {};
    for (i64 j0 = 0; j0 < tk; j0 += kTile) {
      const i64 keys = smaller(kTile, tk - j0);
      float s[kOwn][kOwn];
      if (D) { // the same bits as below: dkv's scores are these, in the same order
#pragma unroll
        for (int r = 0; r < kOwn; ++r)
#pragma unroll
          for (int j = 0; j < kOwn; ++j) {
            const i64 i = kOwn * at.ty + r, key = kOwn * at.tx + j;
            s[r][j] = i < rows && key < keys ? D[i * dsRow + j0 + key] : 0.0f;
          }
        __syncthreads(); // the last tile's products read A and B
      } else {
        float dp[kOwn][kOwn];
        bool live[kOwn] = {};
        scoreTile<true>(s, dp, sA, Q, qRow, K + j0 * kRow, kRow, dO, doutRow, V + j0 * vRow, vRow,
                        rows, keys, d, dv, scale, at);
        maskScores(s, live, M ? M + j0 : nullptr, maskRow, rows, keys, at);
#pragma unroll
        for (int r = 0; r < kOwn; ++r)
#pragma unroll
          for (int j = 0; j < kOwn; ++j) // dS, in s
            s[r][j] = kOwn * at.tx + j < keys
                          ? attentionDs(expApprox(s[r][j] - st[r].m) * st[r].inv, dp[r][j], st[r].D,
                                        st[r].scaleLive)
                          : 0.0f;
        __syncthreads(); // the score chunks in A are read
      }
      storeOwn(sB, s, at); // dS as it is: a[row][key]
      stageTile(sA, K + j0 * kRow, kRow, keys, c0, d);
      __syncthreads();
      accumulateByRows<kTile>(acc, sB, sA, at); // the next scoreTile's barrier guards A and B
    }
    const i64 q0 = headIndex(dqOuter, dqInner, b, inner) + i0 * dqRow;
    asStored(dq, gradsBf16 & kAttentionDqBf16, [&](auto *dQ) {
#pragma unroll
      for (int r = 0; r < kOwn; ++r)
#pragma unroll
        for (int j = 0; j < kOwn; ++j) {
          const i64 i = kOwn * at.ty + r, c = c0 + kOwn * at.tx + j;
          if (i < rows && c < d)
            storeAs(dQ, q0 + i * dqRow + c, acc[r][j]);
        }
    });
  }
}

/// dk[b] = scale dS^T Q and dvOut[b] = P^T dO (tfc_attention_backward's dk
/// and dv outputs; zeros when tq == 0, as the CPU kernel); the same
/// arguments as the dq kernel, scratch (when not 0) as that kernel left it.
extern "C" __global__ void __launch_bounds__(kAttentionDkvThreads)
    tfc_cuda_attention_backward_dkv_kernel(
        i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale,
        const float *__restrict__ q, i64 qOuter, i64 qInner, i64 qRow, const float *__restrict__ k,
        i64 kOuter, i64 kInner, i64 kRow, const float *__restrict__ v, i64 vOuter, i64 vInner,
        i64 vRow, const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
        const float *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
        float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, float *__restrict__ dk,
        i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut, i64 dvOuter, i64 dvInner,
        i64 dvRow, const float *__restrict__ out, i64 outOuter, i64 outInner, i64 outRow,
        const float *__restrict__ stats, const float *__restrict__ scratch, float *__restrict__ dS,
        i64 dsRow, i64 gradsBf16, i64 inputsBf16) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionDkvThreads);
  if (inputsBf16)
    __trap(); // as the forward's
  const i64 heads = outer * inner;
  if (heads <= 0 || tk <= 0 || d <= 0 || dv <= 0)
    return;
  __shared__ __align__(16) float sA[kStaged], sB[kStaged];
  const Place at = place();
  const i64 width = d > dv ? d : dv;
  const i64 tiles = attentionCeil(tk, kAttentionDkvKeys),
            slices = attentionCeil(width, kAttentionColumns);
  for (i64 unit = blockIdx.x; unit < attentionDkvUnits(heads, tk, d, dv); unit += gridDim.x) {
    const i64 b = unit / (tiles * slices), j0 = unit / slices % tiles * kAttentionDkvKeys,
              c0 = unit % slices * kAttentionColumns, keys = smaller(kTile, tk - j0);
    const float *Q = headOf(q, qOuter, qInner, b, inner);
    const float *K = headOf(k, kOuter, kInner, b, inner);
    const float *V = headOf(v, vOuter, vInner, b, inner);
    const float *dO = headOf(dout, doutOuter, doutInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    // Rows 4 ty + r of these are keys j0 + 4 ty + r, columns c0 + 4 tx + j.
    float accK[kOwn][kOwn] = {}, accV[kOwn][kOwn] = {};
    for (i64 i0 = 0; i0 < tq; i0 += kTile) {
      const i64 rows = smaller(kTile, tq - i0);
      const unsigned char *Mi = M ? M + i0 * maskRow : nullptr;
      RowStats st[kOwn];
      if (stats) { // the forward's, D as dq takes it (the same rows, threads, bits)
        savedStats(st, stats, b, tq, i0, dO + i0 * doutRow, doutRow,
                   headOf(out, outOuter, outInner, b, inner) + i0 * outRow, outRow, rows, dv, at);
      } else if (scratch) { // the same for every thread: the barriers stay uniform
#pragma unroll
        for (int r = 0; r < kOwn; ++r) {
          const i64 i = i0 + kOwn * at.ty + r;
          const float4 row = i < tq ? reinterpret_cast<const float4 *>(scratch)[b * tq + i]
                                    : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          st[r] = {row.x, row.y, row.z, row.w};
        }
      } else {
        tileStats(st, sA, Q + i0 * qRow, qRow, dO + i0 * doutRow, doutRow, K, kRow, V, vRow, Mi,
                  maskRow, rows, tk, d, dv, scale, at);
      }
      // S and dP of queries 4 ty + r x keys 4 tx + j of the block's.
      float s[kOwn][kOwn], dp[kOwn][kOwn];
      bool live[kOwn] = {};
      scoreTile<true>(s, dp, sA, Q + i0 * qRow, qRow, K + j0 * kRow, kRow, dO + i0 * doutRow,
                      doutRow, V + j0 * vRow, vRow, rows, keys, d, dv, scale, at);
      maskScores(s, live, Mi ? Mi + j0 : nullptr, maskRow, rows, keys, at);
#pragma unroll
      for (int r = 0; r < kOwn; ++r)
#pragma unroll
        for (int j = 0; j < kOwn; ++j) { // P in s, dS in dp
          const bool in = kOwn * at.ty + r < rows && kOwn * at.tx + j < keys;
          const float p = in ? expApprox(s[r][j] - st[r].m) * st[r].inv : 0.0f;
          dp[r][j] = in ? attentionDs(p, dp[r][j], st[r].D, st[r].scaleLive) : 0.0f;
          s[r][j] = p;
          if (dS && c0 == 0 && in) // for dq, launched after: dS[query][key]
            dS[(b * tq + i0 + kOwn * at.ty + r) * dsRow + j0 + kOwn * at.tx + j] = dp[r][j];
        }
      __syncthreads(); // the score chunks in A are read
      storeOwn(sB, s, at); // P as it is, a[query][key]: P^T dO reads it by columns
      stageTile(sA, dO + i0 * doutRow, doutRow, rows, c0, dv);
      __syncthreads();
      accumulate<kTile>(accV, sB, sA, at);
      __syncthreads(); // P and the dO tile are read
      storeOwn(sB, dp, at);
      stageTile(sA, Q + i0 * qRow, qRow, rows, c0, d);
      __syncthreads();
      accumulate<kTile>(accK, sB, sA, at); // the next tile's first barrier guards A and B
    }
    const i64 k0 = headIndex(dkOuter, dkInner, b, inner) + j0 * dkRow,
              v0 = headIndex(dvOuter, dvInner, b, inner) + j0 * dvRow;
    // dV, then dK: rows of `width` from element `first` of `base`, row pitch `row`.
    auto keyRows = [&](const float(&acc)[kOwn][kOwn], i64 first, i64 row, i64 width) {
      return [&, first, row, width](auto *base) {
#pragma unroll
        for (int r = 0; r < kOwn; ++r)
#pragma unroll
          for (int j = 0; j < kOwn; ++j) {
            const i64 key = kOwn * at.ty + r, c = c0 + kOwn * at.tx + j;
            if (key < keys && c < width)
              storeAs(base, first + key * row + c, acc[r][j]);
          }
      };
    };
    asStored(dvOut, gradsBf16 & kAttentionDvBf16, keyRows(accV, v0, dvRow, dv));
    asStored(dk, gradsBf16 & kAttentionDkBf16, keyRows(accK, k0, dkRow, d));
  }
}
