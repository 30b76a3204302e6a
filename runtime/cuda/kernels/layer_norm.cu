//===- layer_norm.cu - layer norm forward and backward on the GPU ---------===//
//
// defines: tfc_cuda_layer_norm_forward_kernel,
//          tfc_cuda_layer_norm_backward_kernel,
//          tfc_cuda_layer_norm_backward_reduce_kernel
//
// Rows of d contiguous floats, a warp a row: lane l sums elements l, l + 32,
// ... in order, a butterfly (warpSum) adds the lanes. The per-element math
// is KernelMath.h's: the forward as tf.layer_norm lowers (mean = sum / d,
// biased variance, y = (x - mean) rstd gamma + beta), the backward as the
// CPU's tfc_layer_norm_backward (runtime/cpu/LayerNorm.h), with its
// arguments and its scratch: the rows go in blocks of blockRows, a CUDA
// block a row block; each writes its rows' dgamma and dbeta terms, summed in
// row order, to scratch (2 x blocks x d floats: dgamma's partials, then
// dbeta's), and a second one-block-per-column-slice launch adds the blocks'
// partials in block order. No atomics: the same bits on every run.
//
// Launch: 256 threads a block, grid.x any (forward: ceil(rows / 8) blocks
// is a row a warp; backward: ceil(rows / blockRows) blocks is a row block a
// block; reduce: ceil(d / 256)). No dynamic shared memory.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

using namespace tfc::rt::cuda::kernels;

typedef long long i64;

/// y[r] = (x[r] - mean) / sqrt(var + eps) gamma + beta for rows r < rows of
/// d floats (tf.layer_norm over the last dimension; y may not alias x).
extern "C" __global__ void __launch_bounds__(kLayerNormThreads)
    tfc_cuda_layer_norm_forward_kernel(i64 rows, i64 d, float eps,
                                       const float *__restrict__ x,
                                       const float *__restrict__ gamma,
                                       const float *__restrict__ beta, float *__restrict__ y) {
  trapUnlessBlockSize(kLayerNormThreads);
  constexpr int warps = kLayerNormThreads / kWarp;
  const int lane = threadIdx.x % kWarp;
  for (i64 r = i64(blockIdx.x) * warps + threadIdx.x / kWarp; r < rows;
       r += i64(gridDim.x) * warps) {
    const float *xr = x + r * d;
    float sum = 0.0f;
    for (i64 j = lane; j < d; j += kWarp)
      sum += xr[j];
    const float mean = layerNormMean(warpSum(sum), d);
    float squares = 0.0f;
    for (i64 j = lane; j < d; j += kWarp)
      squares += layerNormSquare(xr[j], mean);
    const float rstd = layerNormRstd(warpSum(squares), d, eps);
    for (i64 j = lane; j < d; j += kWarp)
      y[r * d + j] = layerNormOut(xr[j], mean, rstd, gamma[j], beta[j]);
  }
}

/// tfc_layer_norm_backward's first part: dx for every row, and per block of
/// blockRows rows the sums of g x̂ (dgamma) and g (dbeta) over its rows, in
/// row order, at scratch[block * d + j] and scratch[(blocks + block) * d + j]
/// (blocks = ceil(rows / blockRows)).
extern "C" __global__ void __launch_bounds__(kLayerNormThreads)
    tfc_cuda_layer_norm_backward_kernel(i64 rows, i64 d, i64 blockRows, float eps,
                                        const float *__restrict__ x,
                                        const float *__restrict__ gamma,
                                        const float *__restrict__ g, float *__restrict__ dx,
                                        float *__restrict__ scratch) {
  trapUnlessBlockSize(kLayerNormThreads);
  if (d <= 0 || rows <= 0 || blockRows <= 0)
    return;
  constexpr int warps = kLayerNormThreads / kWarp;
  __shared__ float sMean[kLayerNormChunk], sRstd[kLayerNormChunk];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const i64 blocks = (rows + blockRows - 1) / blockRows;
  const float invD = 1.0f / float(d);
  for (i64 block = blockIdx.x; block < blocks; block += gridDim.x) {
    float *pg = scratch + block * d, *pb = scratch + (blocks + block) * d;
    for (i64 j = threadIdx.x; j < d; j += kLayerNormThreads)
      pg[j] = pb[j] = 0.0f;
    const i64 first = block * blockRows;
    const i64 last = first + blockRows < rows ? first + blockRows : rows;
    for (i64 r0 = first; r0 < last; r0 += kLayerNormChunk) {
      const int count = int(last - r0 < kLayerNormChunk ? last - r0 : kLayerNormChunk);
      __syncthreads(); // the last chunk's statistics are read
      for (int rr = warp; rr < count; rr += warps) {
        const i64 r = r0 + rr;
        const float *xr = x + r * d, *gr = g + r * d;
        float sum = 0.0f;
        for (i64 j = lane; j < d; j += kWarp)
          sum += xr[j];
        const float mean = warpSum(sum) * invD;
        float squares = 0.0f;
        for (i64 j = lane; j < d; j += kWarp) {
          const float c = xr[j] - mean;
          squares = fusedMulAdd(c, c, squares);
        }
        const float rstd = layerNormBackwardRstd(warpSum(squares), invD, eps);
        float sumDxhat = 0.0f, sumDxhatXhat = 0.0f;
        for (i64 j = lane; j < d; j += kWarp) {
          const float dxhat = gr[j] * gamma[j];
          sumDxhat += dxhat;
          sumDxhatXhat = fusedMulAdd(dxhat, layerNormXhat(xr[j], mean, rstd), sumDxhatXhat);
        }
        const float a = warpSum(sumDxhat) * invD, bb = warpSum(sumDxhatXhat) * invD;
        for (i64 j = lane; j < d; j += kWarp)
          dx[r * d + j] =
              layerNormDx(gr[j] * gamma[j], layerNormXhat(xr[j], mean, rstd), rstd, a, bb);
        if (lane == 0) {
          sMean[rr] = mean;
          sRstd[rr] = rstd;
        }
      }
      __syncthreads();
      // A thread a column: the chunk's rows in order.
      for (i64 j = threadIdx.x; j < d; j += kLayerNormThreads) {
        float sg = pg[j], sb = pb[j];
        for (int rr = 0; rr < count; ++rr) {
          const float gj = g[(r0 + rr) * d + j];
          sg = fusedMulAdd(gj, layerNormXhat(x[(r0 + rr) * d + j], sMean[rr], sRstd[rr]), sg);
          sb += gj;
        }
        pg[j] = sg;
        pb[j] = sb;
      }
    }
    __syncthreads(); // (the next block's chunk overwrites the statistics)
  }
}

/// tfc_layer_norm_backward's second part: dgamma[j] and dbeta[j] = the
/// blocks' partials added in block order from 0 (0 when rows == 0).
extern "C" __global__ void __launch_bounds__(kLayerNormThreads)
    tfc_cuda_layer_norm_backward_reduce_kernel(i64 rows, i64 d, i64 blockRows,
                                               const float *__restrict__ scratch,
                                               float *__restrict__ dgamma,
                                               float *__restrict__ dbeta) {
  trapUnlessBlockSize(kLayerNormThreads);
  if (d <= 0 || blockRows <= 0)
    return;
  const i64 blocks = rows > 0 ? (rows + blockRows - 1) / blockRows : 0;
  for (i64 j = i64(blockIdx.x) * kLayerNormThreads + threadIdx.x; j < d;
       j += i64(gridDim.x) * kLayerNormThreads) {
    float sg = 0.0f, sb = 0.0f;
    for (i64 block = 0; block < blocks; ++block) {
      sg += scratch[block * d + j];
      sb += scratch[(blocks + block) * d + j];
    }
    dgamma[j] = sg;
    dbeta[j] = sb;
  }
}
