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
// may be 0, a broadcast), the mask bytes (0 or 1) or a null pointer. FP32,
// flash style: the tq x tk weights never reach memory; the keys go by tiles
// of 32 (a lane a key) with an online softmax (KernelMath.h's onlineFold).
//
// Forward: a warp a query row. Per key tile, lane j computes its score
// (attentionScore: q times the scaled key, an FMA chain), masked scores
// become -9e15, the row's maximum and sum come from warp butterflies, and
// the output columns (two a lane: 64 a warp) are rescaled and accumulate
// P V with the probabilities broadcast lane by lane. Heads wider than 64
// output columns go in slices of 64, the scores recomputed for each: slower,
// as correct.
//
// Backward, two launches with the same arguments and no atomics; the last
// argument, stats, is 0 or scratch for 4 floats a query row (16-byte
// aligned), which passes the rows' statistics from the first launch to the
// second:
//  - dq: a warp a query row: pass 1 gives the row's m, 1/l and D = Σ P dP
//    (dP = dO V^T) online; pass 2 recomputes P and dS = scale P (dP - D)
//    per tile and accumulates dQ = dS K. With stats, lane 0 also stores
//    {m, 1/l, D, scale or 0} at float4 stats[head * tq + row].
//  - dkv: a block of 8 warps owns 32 keys (4 a warp) of one head. Per tile
//    of 32 queries each lane takes its query's statistics, then computes P
//    and dS for the warp's keys and accumulates dV = P^T dO and dK = dS^T Q
//    in registers. With stats it loads what dq stored (dq runs first on the
//    same stream); without, the warps first recompute those queries'
//    statistics into shared memory with dq's pass 1, which every block of
//    keys repeats: tk / 32 times pass 1's work. Both give the same bits:
//    one function (rowStats) on the same inputs either way.
// Every output element is one fixed sequence of operations (no atomics):
// the same bits on every run, for any grid.
//
// Launch: forward and dq 128 threads a block, grid.x any (heads x tq warps
// of work; ceil(heads * tq / 4) blocks is one row a warp); dkv 256 threads,
// grid.x any (heads x ceil(tk / 32) units). No dynamic shared memory.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

using namespace tfc::rt::cuda::kernels;

namespace {

typedef long long i64;

/// One query row's statistics for the backward: the maximum score, 1/l,
/// D = Σ_j P_ij dP_ij and scale (0 when every key of the row is masked);
/// the dq kernel's stats holds one a row, in this order.
struct RowStats {
  float m, inv, D, scaleLive;
};

/// Pass 1 of the backward for query row Q (its dO row dO, mask row M or
/// null), over all tk keys; every lane returns the same values.
__device__ __forceinline__ RowStats rowStats(const float *__restrict__ Q,
                                             const float *__restrict__ dO,
                                             const float *__restrict__ K, i64 kRow,
                                             const float *__restrict__ V, i64 vRow,
                                             const unsigned char *__restrict__ M, i64 tk, i64 d,
                                             i64 dv, float scale, int lane) {
  OnlineRow row{-INFINITY, 0.0f, 0.0f};
  bool live = M == nullptr;
  for (i64 j0 = 0; j0 < tk; j0 += kWarp) {
    const i64 j = j0 + lane;
    float s = -INFINITY, dp = 0.0f;
    if (j < tk) {
      s = attentionScore(Q, K + j * kRow, d, scale);
      dp = attentionDot(dO, V + j * vRow, dv);
      if (M && !M[j])
        s = kMaskedScore;
      else
        live = true;
    }
    const float mNew = maxOf(row.m, warpMax(s));
    const float p = j < tk ? expApprox(s - mNew) : 0.0f;
    const float alpha = onlineAlpha(j0 == 0, row.m, mNew);
    row = onlineFold(row, mNew, alpha, warpSum(p), warpSum(p * dp));
  }
  live = __any_sync(kFullMask, live);
  return {row.m, 1.0f / row.l, row.dot / row.l, live ? scale : 0.0f};
}

} // namespace

/// out[b] = softmax(scale q[b] k[b]^T, masked) v[b] for every head b of
/// outer x inner (runtime/cpu/Attention.h's tfc_attention_forward).
/// (At least 1 block an SM: without the hint ptxas held sm_80 to 56
/// registers and spilled 16 B; with it, 63 registers and no spill.)
extern "C" __global__ void __launch_bounds__(kAttentionThreads, 1)
    tfc_cuda_attention_forward_kernel(i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv,
                                      float scale, const float *__restrict__ q, i64 qOuter,
                                      i64 qInner, i64 qRow, const float *__restrict__ k,
                                      i64 kOuter, i64 kInner, i64 kRow,
                                      const float *__restrict__ v, i64 vOuter, i64 vInner,
                                      i64 vRow, const unsigned char *__restrict__ mask,
                                      i64 maskOuter, i64 maskInner, i64 maskRow,
                                      float *__restrict__ out, i64 outOuter, i64 outInner,
                                      i64 outRow) {
  trapUnlessBlockSize(kAttentionThreads);
  const i64 heads = outer * inner;
  if (heads <= 0 || tq <= 0 || tk <= 0 || d <= 0 || dv <= 0)
    return;
  constexpr int warps = kAttentionThreads / kWarp;
  const int lane = threadIdx.x % kWarp;
  for (i64 unit = i64(blockIdx.x) * warps + threadIdx.x / kWarp; unit < heads * tq;
       unit += i64(gridDim.x) * warps) {
    const i64 b = unit / tq, i = unit % tq;
    const float *Q = headOf(q, qOuter, qInner, b, inner) + i * qRow;
    const float *K = headOf(k, kOuter, kInner, b, inner);
    const float *V = headOf(v, vOuter, vInner, b, inner);
    const unsigned char *M =
        mask ? headOf(mask, maskOuter, maskInner, b, inner) + i * maskRow : nullptr;
    float *O = headOf(out, outOuter, outInner, b, inner) + i * outRow;
    for (i64 c0 = 0; c0 < dv; c0 += kAttentionColumns) {
      float acc[2] = {0.0f, 0.0f};
      OnlineRow row{-INFINITY, 0.0f, 0.0f};
      for (i64 j0 = 0; j0 < tk; j0 += kWarp) {
        const i64 j = j0 + lane;
        float s = -INFINITY;
        if (j < tk) {
          s = attentionScore(Q, K + j * kRow, d, scale);
          if (M && !M[j])
            s = kMaskedScore;
        }
        const float mNew = maxOf(row.m, warpMax(s));
        const float p = j < tk ? expApprox(s - mNew) : 0.0f;
        const float alpha = onlineAlpha(j0 == 0, row.m, mNew);
        row = onlineFold(row, mNew, alpha, warpSum(p), 0.0f);
        const int n = int(tk - j0 < kWarp ? tk - j0 : kWarp);
#pragma unroll
        for (int h = 0; h < 2; ++h)
          acc[h] *= alpha;
        for (int t = 0; t < n; ++t) {
          const float pt = broadcast(p, t);
          const float *Vt = V + (j0 + t) * vRow + c0;
#pragma unroll
          for (int h = 0; h < 2; ++h)
            if (c0 + lane + h * kWarp < dv)
              acc[h] = fusedMulAdd(pt, Vt[lane + h * kWarp], acc[h]);
        }
      }
      const float inv = 1.0f / row.l;
#pragma unroll
      for (int h = 0; h < 2; ++h)
        if (c0 + lane + h * kWarp < dv)
          O[c0 + lane + h * kWarp] = acc[h] * inv;
    }
  }
}

/// dq[b] = scale dS K (runtime/cpu/Attention.h's tfc_attention_backward,
/// its dq output); the arguments are tfc_attention_backward's, all of them.
extern "C" __global__ void __launch_bounds__(kAttentionThreads)
    tfc_cuda_attention_backward_dq_kernel(
        i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale,
        const float *__restrict__ q, i64 qOuter, i64 qInner, i64 qRow,
        const float *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow,
        const float *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
        const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
        const float *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
        float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, float *__restrict__ dk,
        i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut, i64 dvOuter,
        i64 dvInner, i64 dvRow, float *__restrict__ stats) {
  trapUnlessBlockSize(kAttentionThreads);
  const i64 heads = outer * inner;
  if (heads <= 0 || tq <= 0 || tk <= 0 || d <= 0 || dv <= 0)
    return;
  constexpr int warps = kAttentionThreads / kWarp;
  const int lane = threadIdx.x % kWarp;
  for (i64 unit = i64(blockIdx.x) * warps + threadIdx.x / kWarp; unit < heads * tq;
       unit += i64(gridDim.x) * warps) {
    const i64 b = unit / tq, i = unit % tq;
    const float *Q = headOf(q, qOuter, qInner, b, inner) + i * qRow;
    const float *K = headOf(k, kOuter, kInner, b, inner);
    const float *V = headOf(v, vOuter, vInner, b, inner);
    const float *dO = headOf(dout, doutOuter, doutInner, b, inner) + i * doutRow;
    const unsigned char *M =
        mask ? headOf(mask, maskOuter, maskInner, b, inner) + i * maskRow : nullptr;
    float *dQ = headOf(dq, dqOuter, dqInner, b, inner) + i * dqRow;
    const RowStats st = rowStats(Q, dO, K, kRow, V, vRow, M, tk, d, dv, scale, lane);
    if (stats && lane == 0) // unit = b * tq + i: the row's slot
      reinterpret_cast<float4 *>(stats)[unit] = make_float4(st.m, st.inv, st.D, st.scaleLive);
    for (i64 c0 = 0; c0 < d; c0 += kAttentionColumns) {
      float acc[2] = {0.0f, 0.0f};
      for (i64 j0 = 0; j0 < tk; j0 += kWarp) {
        const i64 j = j0 + lane;
        float ds = 0.0f;
        if (j < tk) {
          float s = attentionScore(Q, K + j * kRow, d, scale);
          if (M && !M[j])
            s = kMaskedScore;
          const float p = expApprox(s - st.m) * st.inv;
          ds = attentionDs(p, attentionDot(dO, V + j * vRow, dv), st.D, st.scaleLive);
        }
        const int n = int(tk - j0 < kWarp ? tk - j0 : kWarp);
        for (int t = 0; t < n; ++t) {
          const float dst = broadcast(ds, t);
          const float *Kt = K + (j0 + t) * kRow + c0;
#pragma unroll
          for (int h = 0; h < 2; ++h)
            if (c0 + lane + h * kWarp < d)
              acc[h] = fusedMulAdd(dst, Kt[lane + h * kWarp], acc[h]);
        }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h)
        if (c0 + lane + h * kWarp < d)
          dQ[c0 + lane + h * kWarp] = acc[h];
    }
  }
}

/// dk[b] = scale dS^T Q and dvOut[b] = P^T dO (tfc_attention_backward's dk
/// and dv outputs; zeros when tq == 0, as the CPU kernel); the same
/// arguments as the dq kernel, stats (when not 0) as that kernel left it.
extern "C" __global__ void __launch_bounds__(kAttentionDkvThreads)
    tfc_cuda_attention_backward_dkv_kernel(
        i64 outer, i64 inner, i64 tq, i64 tk, i64 d, i64 dv, float scale,
        const float *__restrict__ q, i64 qOuter, i64 qInner, i64 qRow,
        const float *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow,
        const float *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
        const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
        const float *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
        float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, float *__restrict__ dk,
        i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut, i64 dvOuter,
        i64 dvInner, i64 dvRow, const float *__restrict__ stats) {
  trapUnlessBlockSize(kAttentionDkvThreads);
  const i64 heads = outer * inner;
  if (heads <= 0 || tk <= 0 || d <= 0 || dv <= 0)
    return;
  constexpr int warps = kAttentionDkvThreads / kWarp;
  constexpr int keysPerWarp = kAttentionDkvKeys / warps;
  __shared__ float sM[kWarp], sInv[kWarp], sD[kWarp], sScaleLive[kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const i64 keyBlocks = (tk + kAttentionDkvKeys - 1) / kAttentionDkvKeys;
  const i64 width = d > dv ? d : dv;
  for (i64 unit = blockIdx.x; unit < heads * keyBlocks; unit += gridDim.x) {
    const i64 b = unit / keyBlocks, j0 = (unit % keyBlocks) * kAttentionDkvKeys;
    const float *Q = headOf(q, qOuter, qInner, b, inner);
    const float *K = headOf(k, kOuter, kInner, b, inner);
    const float *V = headOf(v, vOuter, vInner, b, inner);
    const float *dO = headOf(dout, doutOuter, doutInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    float *dK = headOf(dk, dkOuter, dkInner, b, inner);
    float *dV = headOf(dvOut, dvOuter, dvInner, b, inner);
    for (i64 c0 = 0; c0 < width; c0 += kAttentionColumns) {
      float accK[keysPerWarp][2] = {}, accV[keysPerWarp][2] = {};
      for (i64 i0 = 0; i0 < tq; i0 += kWarp) {
        const i64 i = i0 + lane;
        const bool valid = i < tq;
        RowStats st{0.0f, 0.0f, 0.0f, 0.0f};
        if (stats) { // the same for every thread: the barriers below stay uniform
          if (valid) {
            const float4 row = reinterpret_cast<const float4 *>(stats)[b * tq + i];
            st = {row.x, row.y, row.z, row.w};
          }
        } else {
          __syncthreads(); // the last tile's statistics are read
          for (int r = warp; r < kWarp; r += warps) {
            const i64 ir = i0 + r;
            if (ir >= tq)
              break;
            const RowStats rs = rowStats(Q + ir * qRow, dO + ir * doutRow, K, kRow, V, vRow,
                                         M ? M + ir * maskRow : nullptr, tk, d, dv, scale, lane);
            if (lane == 0) {
              sM[r] = rs.m;
              sInv[r] = rs.inv;
              sD[r] = rs.D;
              sScaleLive[r] = rs.scaleLive;
            }
          }
          __syncthreads();
          if (valid)
            st = {sM[lane], sInv[lane], sD[lane], sScaleLive[lane]};
        }
        const int n = int(tq - i0 < kWarp ? tq - i0 : kWarp);
#pragma unroll
        for (int t = 0; t < keysPerWarp; ++t) {
          const i64 j = j0 + warp + t * warps;
          if (j >= tk)
            continue;
          float p = 0.0f, ds = 0.0f;
          if (valid) {
            float s = attentionScore(Q + i * qRow, K + j * kRow, d, scale);
            if (M && !M[i * maskRow + j])
              s = kMaskedScore;
            p = expApprox(s - st.m) * st.inv;
            ds = attentionDs(p, attentionDot(dO + i * doutRow, V + j * vRow, dv), st.D,
                             st.scaleLive);
          }
          for (int u = 0; u < n; ++u) {
            const float pu = broadcast(p, u), dsu = broadcast(ds, u);
            const float *dOu = dO + (i0 + u) * doutRow + c0, *Qu = Q + (i0 + u) * qRow + c0;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const i64 c = c0 + lane + h * kWarp;
              if (c < dv)
                accV[t][h] = fusedMulAdd(pu, dOu[lane + h * kWarp], accV[t][h]);
              if (c < d)
                accK[t][h] = fusedMulAdd(dsu, Qu[lane + h * kWarp], accK[t][h]);
            }
          }
        }
      }
#pragma unroll
      for (int t = 0; t < keysPerWarp; ++t) {
        const i64 j = j0 + warp + t * warps;
        if (j >= tk)
          continue;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const i64 c = c0 + lane + h * kWarp;
          if (c < dv)
            dV[j * dvRow + c] = accV[t][h];
          if (c < d)
            dK[j * dkRow + c] = accK[t][h];
        }
      }
    }
  }
}
