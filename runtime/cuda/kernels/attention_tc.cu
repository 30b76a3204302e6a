//===- attention_tc.cu - attention forward and backward on tensor cores ---===//
//
// defines: tfc_cuda_attention_tc_forward_kernel,
//          tfc_cuda_attention_tc_backward_dq_kernel,
//          tfc_cuda_attention_tc_backward_dkv_kernel
//
// attention.cu's three kernels with the products on tensor cores: the same
// parameters (Kernels.h), the same semantics (runtime/cpu/Attention.h), for
// models compiled with --precision bf16 or tf32 and heads whose d and dv are
// multiples of 16 up to 64 (attentionTensorCoreShape; the runtime launches
// attention.cu's kernels for anything else). Inputs and outputs are fp32 in
// memory; tiles are staged in shared memory rounded to bf16 (KernelMath.h's
// bf16Bits, round to nearest even) and multiplied by mma.sync m16n8k16
// (bf16 in, fp32 accumulate); P and dS are rounded to bf16 where they enter
// a product. The softmax (scale, mask, exp, the online maximum and sums) is
// fp32 with attention.cu's functions; only the products' roundings differ.
//
// A block is 4 warps; each warp owns 16 rows of a 64-row block and keeps
// its accumulators in mma's fragment layout (thread g = lane / 4,
// t = lane % 4 holds rows g and g + 8, columns 2t and 2t + 1 of every
// 8-column tile), so a row's statistics are 4 lanes' (shuffles by 2 then 1)
// and a score tile in registers is directly the A operand of the next
// product (P V, dS K), as in FlashAttention-2.
//  - forward: a block a (head, 64 queries); K and V go through shared memory
//    by tiles of 64 keys; the online softmax rescales the output per tile.
//  - dq: a block a (head, 64 queries): pass 1 the rows' m, 1/l and
//    D = Σ P dP over all key tiles (rowStats below; stored to stats when not
//    0, as attention.cu), pass 2 recomputes P and dS and accumulates dS K.
//  - dkv: a block a (head, 64 keys), looping over tiles of 64 queries:
//    S^T = K Q^T and dP^T = V dO^T per warp (16 keys), then dV += P^T dO
//    and dK += dS^T Q. The queries' statistics come from stats, or, when it
//    is 0, from rowStats run on the same staged tiles as dq's: the same bits.
// No atomics: every output element is one fixed sequence of operations, the
// same bits on every run for any grid. Launch: 128 threads a block, grid.x
// any (heads x ceil(tq / 64) units for forward and dq, heads x ceil(tk / 64)
// for dkv). Static shared memory: 27 KiB (forward), 36 KiB (dq, dkv).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

#include <cstdint>

using namespace tfc::rt::cuda::kernels;

namespace {

typedef long long i64;

constexpr int kRows = kAttentionTcRows;
constexpr int kStride = kAttentionTcStride;
constexpr int kTiles = kRows / 8;    // 8-column accumulator tiles across 64 rows
constexpr int kMaxTiles = kAttentionTcMaxDim / 8;
typedef uint16_t Tile[kRows][kStride]; // a staged tile, bf16 bits

/// Rows row0 .. row0 + 63 of a [rows, cols] fp32 matrix (row stride `row`)
/// as bf16 into `s`; rows past `rows` and columns past `cols` are zeros.
/// Every thread of the block takes part.
__device__ __forceinline__ void stage(Tile &s, const float *__restrict__ base, i64 row, i64 row0,
                                      i64 rows, i64 cols) {
  for (int e = threadIdx.x; e < kRows * kAttentionTcMaxDim; e += kAttentionTcThreads) {
    const int r = e / kAttentionTcMaxDim, c = e % kAttentionTcMaxDim;
    float x = 0.0f;
    if (row0 + r < rows && c < cols)
      x = base[(row0 + r) * row + c];
    s[r][c] = bf16Bits(x);
  }
}

__device__ __forceinline__ uint32_t pair(const Tile &s, int r, int c) {
  return *reinterpret_cast<const uint32_t *>(&s[r][c]); // c even: 4-byte aligned
}
__device__ __forceinline__ uint32_t pack(uint16_t lo, uint16_t hi) {
  return uint32_t(lo) | (uint32_t(hi) << 16);
}
__device__ __forceinline__ uint32_t packFloats(float lo, float hi) {
  return pack(bf16Bits(lo), bf16Bits(hi));
}

/// The A operand (16 x 16, row-major) at rows r0.., columns k0.. of s.
__device__ __forceinline__ void loadA(uint32_t (&a)[4], const Tile &s, int r0, int k0, int g,
                                     int t) {
  a[0] = pair(s, r0 + g, k0 + 2 * t);
  a[1] = pair(s, r0 + g + 8, k0 + 2 * t);
  a[2] = pair(s, r0 + g, k0 + 2 * t + 8);
  a[3] = pair(s, r0 + g + 8, k0 + 2 * t + 8);
}

/// The A operand from two accumulator tiles (columns 0-7 and 8-15 of a
/// 16 x 16 block), rounded to bf16: the score tile as the next product's A.
__device__ __forceinline__ void accA(uint32_t (&a)[4], const float (&lo)[4], const float (&hi)[4]) {
  a[0] = packFloats(lo[0], lo[1]);
  a[1] = packFloats(lo[2], lo[3]);
  a[2] = packFloats(hi[0], hi[1]);
  a[3] = packFloats(hi[2], hi[3]);
}

/// The B operand (16 x 8) = X^T for X = s's rows n0.., columns k0.. (a
/// product with the transpose of a staged tile: Q K^T, dO V^T, K Q^T).
__device__ __forceinline__ void transposedB(uint32_t (&b)[2], const Tile &s, int n0, int k0, int g,
                                            int t) {
  b[0] = pair(s, n0 + g, k0 + 2 * t);
  b[1] = pair(s, n0 + g, k0 + 2 * t + 8);
}

/// The B operand (16 x 8) = s's rows k0.., columns n0.. (P V, dS K, P^T dO).
__device__ __forceinline__ void plainB(uint32_t (&b)[2], const Tile &s, int k0, int n0, int g,
                                       int t) {
  b[0] = pack(s[k0 + 2 * t][n0 + g], s[k0 + 2 * t + 1][n0 + g]);
  b[1] = pack(s[k0 + 2 * t + 8][n0 + g], s[k0 + 2 * t + 9][n0 + g]);
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

/// acc (16 rows x 64 columns) = rows r0.. of x times y^T over `depth`
/// columns (a multiple of 16): scores and dP, either way round.
__device__ __forceinline__ void productT(float (&acc)[kTiles][4], const Tile &x, int r0,
                                         const Tile &y, i64 depth, int g, int t) {
#pragma unroll
  for (int n = 0; n < kTiles; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc[n][e] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < kAttentionTcMaxDim / 16; ++kk) {
    if (kk * 16 >= depth)
      break;
    uint32_t a[4];
    loadA(a, x, r0, kk * 16, g, t);
#pragma unroll
    for (int n = 0; n < kTiles; ++n) {
      uint32_t b[2];
      transposedB(b, y, n * 8, kk * 16, g, t);
      mma(acc[n], a, b);
    }
  }
}

/// out (16 rows x width columns) += w (16 x 64, the fragments of a
/// productT, rounded to bf16) times the staged tile y (64 x width).
__device__ __forceinline__ void accumulate(float (&out)[kMaxTiles][4], const float (&w)[kTiles][4],
                                           const Tile &y, i64 width, int g, int t) {
#pragma unroll
  for (int kk = 0; kk < kRows / 16; ++kk) {
    uint32_t a[4];
    accA(a, w[2 * kk], w[2 * kk + 1]);
#pragma unroll
    for (int n = 0; n < kMaxTiles; ++n) {
      if (n * 8 >= width)
        break;
      uint32_t b[2];
      plainB(b, y, kk * 16, n * 8, g, t);
      mma(out[n], a, b);
    }
  }
}

/// A row's 4 lanes' values combined, butterflies by 2 then 1 (every lane
/// of the 4 ends with the same bits).
__device__ __forceinline__ float quadSum(float v) {
  v += __shfl_xor_sync(kFullMask, v, 2);
  return v + __shfl_xor_sync(kFullMask, v, 1);
}
__device__ __forceinline__ float quadMax(float v) {
  v = maxOf(v, __shfl_xor_sync(kFullMask, v, 2));
  return maxOf(v, __shfl_xor_sync(kFullMask, v, 1));
}

/// The scores of a productT tile: times the scale, -9e15 where masked,
/// -inf past tk. Element (n, e) is row i0 + g (+ 8 for e >= 2), key
/// j0 + 8n + 2t + (e & 1); M is the head's mask or null.
__device__ __forceinline__ void scoreTile(float (&s)[kTiles][4], float scale,
                                          const unsigned char *__restrict__ M, i64 maskRow,
                                          i64 i0, i64 tq, i64 j0, i64 tk, int g, int t,
                                          bool (&live)[2]) {
#pragma unroll
  for (int n = 0; n < kTiles; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const i64 i = i0 + g + (e >= 2 ? 8 : 0), j = j0 + n * 8 + 2 * t + (e & 1);
      float x = s[n][e] * scale;
      if (j >= tk)
        x = -INFINITY;
      else if (M && i < tq && !M[i * maskRow + j])
        x = kMaskedScore;
      else
        live[e >> 1] = true;
      s[n][e] = x;
    }
}

/// One query row's backward statistics, attention.cu's RowStats.
struct RowStats {
  float m, inv, D, scaleLive;
};

/// Pass 1 of the backward for the 64 queries staged in sQ and sdO (rows
/// i0..): every key tile staged into sK and sV (which it overwrites), S and
/// dP by tensor cores, the online maximum, l and Σ P dP. Returns the
/// statistics of rows i0 + 16 warp + g + 8h in st[h]. Every thread of the
/// block calls it (it holds barriers).
__device__ __forceinline__ void rowStats(RowStats (&st)[2], const Tile &sQ, const Tile &sdO,
                                         Tile &sK, Tile &sV, const float *__restrict__ K, i64 kRow,
                                         const float *__restrict__ V, i64 vRow,
                                         const unsigned char *__restrict__ M, i64 maskRow, i64 i0,
                                         i64 tq, i64 tk, i64 d, i64 dv, float scale, int warp,
                                         int g, int t) {
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}, dot[2] = {0.0f, 0.0f};
  bool live[2] = {M == nullptr, M == nullptr};
  for (i64 j0 = 0; j0 < tk; j0 += kRows) {
    __syncthreads(); // the last tile is read
    stage(sK, K, kRow, j0, tk, d);
    stage(sV, V, vRow, j0, tk, dv);
    __syncthreads();
    float s[kTiles][4], dp[kTiles][4];
    productT(s, sQ, warp * 16, sK, d, g, t);
    productT(dp, sdO, warp * 16, sV, dv, g, t);
    scoreTile(s, scale, M, maskRow, i0 + warp * 16, tq, j0, tk, g, t, live);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
        mx = maxOf(mx, maxOf(s[n][2 * h], s[n][2 * h + 1]));
      const float mNew = maxOf(m[h], quadMax(mx));
      float sum = 0.0f, pdp = 0.0f;
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const float p = expApprox(s[n][e] - mNew);
          sum += p;
          pdp += p * dp[n][e];
        }
      const float alpha = onlineAlpha(j0 == 0, m[h], mNew);
      const OnlineRow row =
          onlineFold(OnlineRow{m[h], l[h], dot[h]}, mNew, alpha, quadSum(sum), quadSum(pdp));
      m[h] = row.m;
      l[h] = row.l;
      dot[h] = row.dot;
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const bool rowLive = __shfl_xor_sync(kFullMask, int(live[h]), 2) | int(live[h]);
    const bool any = __shfl_xor_sync(kFullMask, int(rowLive), 1) | int(rowLive);
    st[h] = {m[h], 1.0f / l[h], dot[h] / l[h], any ? scale : 0.0f};
  }
}

} // namespace

/// out[b] = softmax(scale q[b] k[b]^T, masked) v[b]: attention.cu's
/// forward kernel, on tensor cores.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_tc_forward_kernel(i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv,
                                         float scale, const float *__restrict__ q, i64 qOuter,
                                         i64 qInner, i64 qRow, const float *__restrict__ k,
                                         i64 kOuter, i64 kInner, i64 kRow,
                                         const float *__restrict__ v, i64 vOuter, i64 vInner,
                                         i64 vRow, const unsigned char *__restrict__ mask,
                                         i64 maskOuter, i64 maskInner, i64 maskRow,
                                         float *__restrict__ out, i64 outOuter, i64 outInner,
                                         i64 outRow) {
  trapUnlessBlockSize(kAttentionTcThreads);
  const i64 heads = outer * inner;
  if (heads <= 0 || tq <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
  __shared__ __align__(16) Tile sQ, sK, sV;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, g = lane / 4, t = lane % 4;
  const i64 queryBlocks = (tq + kRows - 1) / kRows;
  for (i64 unit = blockIdx.x; unit < heads * queryBlocks; unit += gridDim.x) {
    const i64 b = unit / queryBlocks, i0 = (unit % queryBlocks) * kRows;
    const float *K = headOf(k, kOuter, kInner, b, inner);
    const float *V = headOf(v, vOuter, vInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    float *O = headOf(out, outOuter, outInner, b, inner);
    __syncthreads(); // the last unit's tiles are read
    stage(sQ, headOf(q, qOuter, qInner, b, inner), qRow, i0, tq, d);
    float o[kMaxTiles][4] = {}, m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    bool live[2] = {};
    for (i64 j0 = 0; j0 < tk; j0 += kRows) {
      __syncthreads();
      stage(sK, K, kRow, j0, tk, d);
      stage(sV, V, vRow, j0, tk, dv);
      __syncthreads();
      float s[kTiles][4];
      productT(s, sQ, warp * 16, sK, d, g, t);
      scoreTile(s, scale, M, maskRow, i0 + warp * 16, tq, j0, tk, g, t, live);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = -INFINITY;
#pragma unroll
        for (int n = 0; n < kTiles; ++n)
          mx = maxOf(mx, maxOf(s[n][2 * h], s[n][2 * h + 1]));
        const float mNew = maxOf(m[h], quadMax(mx));
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < kTiles; ++n)
#pragma unroll
          for (int e = 2 * h; e < 2 * h + 2; ++e) {
            s[n][e] = expApprox(s[n][e] - mNew); // now P, unnormalized
            sum += s[n][e];
          }
        const float alpha = onlineAlpha(j0 == 0, m[h], mNew);
        const OnlineRow row = onlineFold(OnlineRow{m[h], l[h], 0.0f}, mNew, alpha, quadSum(sum), 0.0f);
        m[h] = row.m;
        l[h] = row.l;
#pragma unroll
        for (int n = 0; n < kMaxTiles; ++n)
#pragma unroll
          for (int e = 2 * h; e < 2 * h + 2; ++e)
            o[n][e] *= alpha;
      }
      accumulate(o, s, sV, dv, g, t);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i64 i = i0 + warp * 16 + g + h * 8;
      const float inv = 1.0f / l[h];
      if (i >= tq)
        continue;
#pragma unroll
      for (int n = 0; n < kMaxTiles; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const int c = n * 8 + 2 * t + (e & 1);
          if (c < dv)
            O[i * outRow + c] = o[n][e] * inv;
        }
    }
  }
}

/// dq[b] = dS K (dS with the scale): attention.cu's dq kernel on tensor
/// cores, the same arguments; with stats, the rows' statistics stored.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_tc_backward_dq_kernel(
        i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale,
        const float *__restrict__ q, i64 qOuter, i64 qInner, i64 qRow,
        const float *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow,
        const float *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
        const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
        const float *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
        float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, float *__restrict__ dk,
        i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut, i64 dvOuter,
        i64 dvInner, i64 dvRow, float *__restrict__ stats) {
  trapUnlessBlockSize(kAttentionTcThreads);
  const i64 heads = outer * inner;
  if (heads <= 0 || tq <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
  __shared__ __align__(16) Tile sQ, sdO, sK, sV;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, g = lane / 4, t = lane % 4;
  const i64 queryBlocks = (tq + kRows - 1) / kRows;
  for (i64 unit = blockIdx.x; unit < heads * queryBlocks; unit += gridDim.x) {
    const i64 b = unit / queryBlocks, i0 = (unit % queryBlocks) * kRows;
    const float *K = headOf(k, kOuter, kInner, b, inner);
    const float *V = headOf(v, vOuter, vInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    float *dQ = headOf(dq, dqOuter, dqInner, b, inner);
    __syncthreads();
    stage(sQ, headOf(q, qOuter, qInner, b, inner), qRow, i0, tq, d);
    stage(sdO, headOf(dout, doutOuter, doutInner, b, inner), doutRow, i0, tq, dv);
    RowStats st[2];
    rowStats(st, sQ, sdO, sK, sV, K, kRow, V, vRow, M, maskRow, i0, tq, tk, d, dv, scale, warp, g,
             t);
    if (stats && t == 0)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const i64 i = i0 + warp * 16 + g + h * 8;
        if (i < tq)
          reinterpret_cast<float4 *>(stats)[b * tq + i] =
              make_float4(st[h].m, st[h].inv, st[h].D, st[h].scaleLive);
      }
    float acc[kMaxTiles][4] = {};
    bool live[2] = {};
    for (i64 j0 = 0; j0 < tk; j0 += kRows) {
      __syncthreads();
      stage(sK, K, kRow, j0, tk, d);
      stage(sV, V, vRow, j0, tk, dv);
      __syncthreads();
      float s[kTiles][4], dp[kTiles][4];
      productT(s, sQ, warp * 16, sK, d, g, t);
      productT(dp, sdO, warp * 16, sV, dv, g, t);
      scoreTile(s, scale, M, maskRow, i0 + warp * 16, tq, j0, tk, g, t, live);
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const RowStats &r = st[e >> 1];
          const float p = expApprox(s[n][e] - r.m) * r.inv;
          s[n][e] = attentionDs(p, dp[n][e], r.D, r.scaleLive); // now dS
        }
      accumulate(acc, s, sK, d, g, t);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i64 i = i0 + warp * 16 + g + h * 8;
      if (i >= tq)
        continue;
#pragma unroll
      for (int n = 0; n < kMaxTiles; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const int c = n * 8 + 2 * t + (e & 1);
          if (c < d)
            dQ[i * dqRow + c] = acc[n][e];
        }
    }
  }
}

/// dk[b] = dS^T Q and dvOut[b] = P^T dO: attention.cu's dkv kernel on
/// tensor cores, the same arguments; stats (when not 0) as dq left it.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_tc_backward_dkv_kernel(
        i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale,
        const float *__restrict__ q, i64 qOuter, i64 qInner, i64 qRow,
        const float *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow,
        const float *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
        const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
        const float *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
        float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, float *__restrict__ dk,
        i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut, i64 dvOuter,
        i64 dvInner, i64 dvRow, const float *__restrict__ stats) {
  trapUnlessBlockSize(kAttentionTcThreads);
  const i64 heads = outer * inner;
  if (heads <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
  __shared__ __align__(16) Tile sQ, sdO, sK, sV;
  __shared__ float4 sStats[kRows];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, g = lane / 4, t = lane % 4;
  const i64 keyBlocks = (tk + kRows - 1) / kRows;
  for (i64 unit = blockIdx.x; unit < heads * keyBlocks; unit += gridDim.x) {
    const i64 b = unit / keyBlocks, j0 = (unit % keyBlocks) * kRows;
    const float *Q = headOf(q, qOuter, qInner, b, inner);
    const float *K = headOf(k, kOuter, kInner, b, inner);
    const float *V = headOf(v, vOuter, vInner, b, inner);
    const float *dO = headOf(dout, doutOuter, doutInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    float accK[kMaxTiles][4] = {}, accV[kMaxTiles][4] = {};
    for (i64 i0 = 0; i0 < tq; i0 += kRows) {
      __syncthreads(); // the last tiles are read
      stage(sQ, Q, qRow, i0, tq, d);
      stage(sdO, dO, doutRow, i0, tq, dv);
      if (stats) { // the same for every thread: the barriers stay uniform
        for (int r = threadIdx.x; r < kRows; r += kAttentionTcThreads)
          sStats[r] = i0 + r < tq ? reinterpret_cast<const float4 *>(stats)[b * tq + i0 + r]
                                  : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      } else {
        __syncthreads(); // sQ and sdO staged
        RowStats st[2];
        rowStats(st, sQ, sdO, sK, sV, K, kRow, V, vRow, M, maskRow, i0, tq, tk, d, dv, scale,
                 warp, g, t);
        if (t == 0)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            sStats[warp * 16 + g + h * 8] =
                make_float4(st[h].m, st[h].inv, st[h].D, st[h].scaleLive);
        __syncthreads(); // rowStats's last tiles are read
      }
      if (stats == nullptr || i0 == 0) { // this block's keys (rowStats overwrote them)
        stage(sK, K, kRow, j0, tk, d);
        stage(sV, V, vRow, j0, tk, dv);
      }
      __syncthreads();
      // Warp w's 16 keys against the 64 queries: S^T and dP^T, element
      // (n, e) key j0 + 16w + g (+ 8 for e >= 2), query i0 + 8n + 2t + (e & 1).
      float s[kTiles][4], dp[kTiles][4];
      productT(s, sK, warp * 16, sQ, d, g, t);
      productT(dp, sV, warp * 16, sdO, dv, g, t);
#pragma unroll
      for (int n = 0; n < kTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = n * 8 + 2 * t + (e & 1);
          const i64 i = i0 + r, j = j0 + warp * 16 + g + (e >= 2 ? 8 : 0);
          float p = 0.0f, ds = 0.0f;
          if (i < tq && j < tk) {
            const float4 st = sStats[r];
            float x = s[n][e] * scale;
            if (M && !M[i * maskRow + j])
              x = kMaskedScore;
            p = expApprox(x - st.x) * st.y;
            ds = attentionDs(p, dp[n][e], st.z, st.w);
          }
          s[n][e] = p;
          dp[n][e] = ds;
        }
      accumulate(accV, s, sdO, dv, g, t);
      accumulate(accK, dp, sQ, d, g, t);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i64 j = j0 + warp * 16 + g + h * 8;
      if (j >= tk)
        continue;
      float *dK = headOf(dk, dkOuter, dkInner, b, inner) + j * dkRow;
      float *dV = headOf(dvOut, dvOuter, dvInner, b, inner) + j * dvRow;
#pragma unroll
      for (int n = 0; n < kMaxTiles; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const int c = n * 8 + 2 * t + (e & 1);
          if (c < dv)
            dV[c] = accV[n][e];
          if (c < d)
            dK[c] = accK[n][e];
        }
    }
  }
}
