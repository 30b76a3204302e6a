//===- layer_norm.cu - layer norm forward and backward on the GPU ---------===//
//
// defines: tfc_cuda_layer_norm_forward_kernel,
//          tfc_cuda_layer_norm_backward_kernel,
//          tfc_cuda_layer_norm_backward_reduce_kernel
//
// Rows of d contiguous floats, a warp a row: lane l sums elements l, l + 32,
// ... in order, a butterfly (warpSum) adds the lanes. The per-element math
// is KernelMath.h's: the forward as tf.layer_norm lowers (mean = sum / d,
// biased variance, y = (x - mean) rstd gamma + beta; with its relu flag
// relu(y) as tf.relu lowers), the backward as the CPU's
// tfc_layer_norm_backward (runtime/cpu/LayerNorm.h; with a gate, a ReLU's
// output, the adjoint g where gate > 0, else 0: relu's gradient), with its
// arguments and its scratch: the rows go in blocks of blockRows, a CUDA
// block a row block; each writes its rows' dgamma and dbeta terms, summed in
// row order, to scratch (2 x blocks x d floats: dgamma's partials, then
// dbeta's). Then dgamma[j] = S_0 + S_1 + ... + S_7 in order from 0, S_s
// the partials of segment s (KernelMath.h's layerNormSegmentBlocks
// consecutive row blocks) in block order from 0, a warp a segment, added by
// one of two:
// - the backward's last CUDA block to finish (the classic "last block
//   done"): each block, its partials written, takes a ticket from a counter
//   (atomicAdd); the one that draws gridDim.x - 1 adds every block's
//   partials, 32 columns at a time, and sets the counter back to 0 for the
//   next launch (kernels on one stream never overlap, so one counter a
//   device serves them all);
// - with counter 0, a second launch: the reduce kernel, a block a slice of
//   32 columns, the same function.
// Either way every output is the same fixed sequence of additions: the
// same bits on every run, for any grid. The ticket is the only atomic, and
// it orders work, never adds values.
//
// Launch: 256 threads a block, grid.x any (forward: ceil(rows / 8) blocks
// is a row a warp; backward: ceil(rows / blockRows) blocks is a row block a
// block; reduce: ceil(d / 32)). No dynamic shared memory.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

using namespace tfc::rt::cuda::kernels;

typedef long long i64;

/// The rows a layer norm is of, made from its x where the layer's residual
/// sum is done by the norm's kernel (runtime/Abi.h's layer_norm): pre[i] =
/// residual[i] + tf.dropout(x)[i], the sum without a residual, the dropout
/// without a seed. pre may be x or residual, element for element.
struct ResidualSum {
  const float *x, *residual; // (not __restrict__: pre may be either)
  float *pre;                // null: none, the norm is of x
  uint32_t seed;             // the step's, read from device memory once
  uint64_t key, first;       // the op's key, and x's first element's index in the op
  uint32_t threshold;
  float keep;
  bool dropout;
  bool grouped; // first and d multiples of 4: a lane's 4 elements share a Philox call
  bool vectors; // grouped and every pointer 16-byte aligned: float4 loads and stores
  __device__ __forceinline__ void load4(const float *p, float (&v)[4]) const {
    if (vectors) {
      const float4 p4 = *reinterpret_cast<const float4 *>(p);
      v[0] = p4.x, v[1] = p4.y, v[2] = p4.z, v[3] = p4.w;
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        v[e] = p[e];
    }
  }
  /// One element's sum: x's `value` (its Philox `word`), the residual's `r`.
  __device__ __forceinline__ float sumOf(float value, float r, uint32_t word) const {
    const float v = dropout ? droppedOut(value, word, threshold, keep) : value;
    return residual ? r + v : v;
  }
  /// Row r's pre, by the lanes of a warp; visible to the whole warp after.
  __device__ __forceinline__ void row(i64 r, i64 d, int lane) const {
    if (grouped) {
      // A lane 4 consecutive elements: one Philox call decides them.
      for (i64 j4 = 4 * lane; j4 < d; j4 += 4 * kWarp) {
        const i64 i = r * d + j4;
        const PhiloxWords words =
            dropout ? dropoutWords(seed, key, (first + uint64_t(i)) / 4) : PhiloxWords{};
        float v[4], rs[4] = {};
        load4(x + i, v);
        if (residual)
          load4(residual + i, rs);
#pragma unroll
        for (int e = 0; e < 4; ++e)
          v[e] = sumOf(v[e], rs[e], words.w[e]);
        if (vectors) {
          *reinterpret_cast<float4 *>(pre + i) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e)
            pre[i + e] = v[e];
        }
      }
    } else {
      for (i64 j = lane; j < d; j += kWarp) {
        const i64 i = r * d + j;
        pre[i] = sumOf(x[i], residual ? residual[i] : 0.0f,
                       dropout ? dropoutWord(seed, key, first + uint64_t(i)) : 0u);
      }
    }
    __syncwarp(); // the other lanes read what each wrote
  }
};

/// y[r] = (x[r] - mean) / sqrt(var + eps) gamma + beta for rows r < rows of
/// d floats (tf.layer_norm over the last dimension; y may not alias x), and
/// with relu != 0 its relu (relu(layer_norm(x)), one pass instead of two);
/// with y16, y's bf16 bits there too (bf16Bits): a GEMM's bf16 operand
/// made beside its producer (tf-bf16-gemm-operands), not by a copy after;
/// y may then be null (the bits alone).
/// With pre not null, the norm is of the rows written there first
/// (ResidualSum: a residual sum and its dropout before the norm).
extern "C" __global__ void __launch_bounds__(kLayerNormThreads, kLayerNormForwardBlocksPerSm)
    tfc_cuda_layer_norm_forward_kernel(i64 rows, i64 d, float eps, const float *x,
                                       const float *__restrict__ gamma,
                                       const float *__restrict__ beta, float *__restrict__ y,
                                       i64 relu, uint16_t *__restrict__ y16, const float *residual,
                                       float *pre, const int *__restrict__ seed,
                                       const int *__restrict__ sampleOffset, i64 sampleSize,
                                       i64 key, i64 threshold, float keep) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kLayerNormThreads);
  constexpr int warps = kLayerNormThreads / kWarp;
  const int lane = threadIdx.x % kWarp;
  ResidualSum sum{};
  if (pre) {
    sum.x = x, sum.residual = residual, sum.pre = pre;
    sum.dropout = seed != nullptr;
    if (seed) {
      sum.seed = uint32_t(*seed);
      sum.key = uint64_t(key);
      sum.first = sampleOffset ? uint64_t(i64(*sampleOffset) * sampleSize) : 0;
      sum.threshold = uint32_t(threshold);
      sum.keep = keep;
    }
    const uintptr_t addresses = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(pre) |
                                reinterpret_cast<uintptr_t>(residual);
    sum.grouped = sum.first % 4 == 0 && d % 4 == 0;
    sum.vectors = sum.grouped && addresses % 16 == 0;
  }
  for (i64 r = i64(blockIdx.x) * warps + threadIdx.x / kWarp; r < rows;
       r += i64(gridDim.x) * warps) {
    if (pre)
      sum.row(r, d, lane);
    const float *xr = (pre ? pre : x) + r * d;
    float rowSum = 0.0f;
    for (i64 j = lane; j < d; j += kWarp)
      rowSum += xr[j];
    const float mean = layerNormMean(warpSum(rowSum), d);
    float squares = 0.0f;
    for (i64 j = lane; j < d; j += kWarp)
      squares += layerNormSquare(xr[j], mean);
    const float rstd = layerNormRstd(warpSum(squares), d, eps);
    for (i64 j = lane; j < d; j += kWarp) {
      const float out = layerNormOut(xr[j], mean, rstd, gamma[j], beta[j]);
      const float value = relu ? reluOf(out) : out;
      if (y)
        y[r * d + j] = value;
      if (y16)
        y16[r * d + j] = bf16Bits(value);
    }
  }
}

/// dgamma[j] and dbeta[j] for the kWarp columns j of `slice`: the row
/// blocks' partials added in KernelMath.h's segments. Warp w adds segment
/// w's of column slice * kWarp + lane (both arrays) in block order from 0,
/// kLayerNormPartialsStage blocks' loads in flight before their additions
/// (through L2, __ldcg: other blocks of the launch may have written them),
/// then threads 0-31 add dgamma's segment sums in segment order from 0,
/// threads 32-63 dbeta's. Every thread of the block calls it (barriers).
__device__ __forceinline__ void addPartialsSlice(const float *scratch, i64 blocks, i64 d, i64 slice,
                                                 float *dgamma, float *dbeta,
                                                 float (&sSegments)[2][kLayerNormSegments][kWarp]) {
  static_assert(kLayerNormSegments * kWarp == kLayerNormThreads, "a warp a segment");
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const i64 j = slice * kWarp + lane, per = layerNormSegmentBlocks(blocks);
  const i64 first = warp * per, last = first + per < blocks ? first + per : blocks;
  float sg = 0.0f, sb = 0.0f;
  if (j < d)
    for (i64 b0 = first; b0 < last; b0 += kLayerNormPartialsStage) {
      float pg[kLayerNormPartialsStage], pb[kLayerNormPartialsStage];
#pragma unroll
      for (int s = 0; s < kLayerNormPartialsStage; ++s) {
        pg[s] = pb[s] = 0.0f;
        if (b0 + s < last) {
          pg[s] = __ldcg(scratch + (b0 + s) * d + j);
          pb[s] = __ldcg(scratch + (blocks + b0 + s) * d + j);
        }
      }
#pragma unroll
      for (int s = 0; s < kLayerNormPartialsStage; ++s)
        if (b0 + s < last) { // (adding a 0 would turn a -0 sum into +0)
          sg += pg[s];
          sb += pb[s];
        }
    }
  __syncthreads(); // the last slice's segment sums are read
  sSegments[0][warp][lane] = sg;
  sSegments[1][warp][lane] = sb;
  __syncthreads();
  if (threadIdx.x < 2 * kWarp) {
    const int array = threadIdx.x / kWarp, column = threadIdx.x % kWarp;
    float sum = 0.0f;
    for (int w = 0; w < kLayerNormSegments; ++w)
      if (w * per < blocks) // (empty segments are not added)
        sum += sSegments[array][w][column];
    if (slice * kWarp + column < d)
      (array == 0 ? dgamma : dbeta)[slice * kWarp + column] = sum;
  }
}

/// The adjoint's element i: g[i], or with a gate (a ReLU's output after
/// the norm: f32, or with `bits` the bf16 bits its forward stored, y16)
/// g[i] where gate[i] > 0, else 0: relu's gradient, no pass of its own.
/// Both through the read-only path (__ldg): with plain loads the gate's
/// pointer spilled on sm_90 at 64 registers; so they do not.
struct Adjoint {
  const float *__restrict__ g;
  const void *__restrict__ gate; // null: none
  bool bits;
  __device__ __forceinline__ float operator()(i64 i) const {
    if (!gate)
      return __ldg(g + i);
    if (bits)
      return gatedGradBits(__ldg(g + i), __ldg(static_cast<const uint16_t *>(gate) + i));
    return gatedGrad(__ldg(g + i), __ldg(static_cast<const float *>(gate) + i));
  }
};

/// tf.dropout of dx's elements, where the backward stores it: f32, or its
/// bf16 bits alone (bits), as runtime/Abi.h's layer_norm_backward says;
/// without a seed, dx itself (its bf16 bits: a GEMM's operand).
struct DxDropout {
  void *out;           // null: none
  bool bits;           // bf16 bits (uint16_t) instead of f32
  bool masked;         // a seed: the dropout (else dx unmasked)
  uint32_t seed;       // the step's, read from device memory once
  uint64_t key, first; // the op's key, and dx's first element's index in the op
  uint32_t threshold;
  float keep;
  bool grouped; // first and d multiples of 4: a lane's 4 elements share a Philox call
  __device__ __forceinline__ void store(i64 i, float value, uint32_t word) const {
    const float v = masked ? droppedOut(value, word, threshold, keep) : value;
    if (bits)
      static_cast<uint16_t *>(out)[i] = bf16Bits(v);
    else
      static_cast<float *>(out)[i] = v;
  }
};

/// tfc_layer_norm_backward: dx for every row (where dx is not null), and
/// per block of blockRows rows the sums of g x̂ (dgamma) and g (dbeta) over
/// its rows, in row order, at scratch[block * d + j] and scratch[(blocks +
/// block) * d + j] (blocks = ceil(rows / blockRows)); then, with a counter
/// (a zero word; left zero), the last CUDA block to finish adds the
/// partials into dgamma and dbeta. With counter 0 the reduce kernel must
/// run next. With `dropout` not null, dx's dropout there too (DxDropout).
/// The gate as Adjoint reads it (gateBits: bf16 bits).
extern "C" __global__ void __launch_bounds__(kLayerNormThreads, kLayerNormBackwardBlocksPerSm)
    tfc_cuda_layer_norm_backward_kernel(
        i64 rows, i64 d, i64 blockRows, float eps, const float *__restrict__ x,
        const float *__restrict__ gamma, const float *__restrict__ g, const void *__restrict__ gate,
        float *__restrict__ dx, float *__restrict__ dgamma, float *__restrict__ dbeta,
        float *__restrict__ scratch, void *__restrict__ dropout, i64 dropoutBits,
        const int *__restrict__ seed, const int *__restrict__ sampleOffset, i64 sampleSize, i64 key,
        i64 threshold, float keep, i64 gateBits, unsigned *counter) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kLayerNormThreads);
  if (d <= 0 || blockRows <= 0)
    return;
  constexpr int warps = kLayerNormThreads / kWarp;
  __shared__ float sMean[kLayerNormChunk], sRstd[kLayerNormChunk];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  // No rows: no row blocks, and dgamma = dbeta = 0.
  const i64 blocks = rows > 0 ? (rows + blockRows - 1) / blockRows : 0;
  const float invD = 1.0f / float(d);
  const Adjoint adjointAt{g, gate, gateBits != 0};
  DxDropout drop{
      dropout, dropoutBits != 0, seed != nullptr, 0, uint64_t(key), 0, uint32_t(threshold), keep,
      false};
  if (dropout && seed) {
    drop.seed = uint32_t(*seed);
    drop.first = sampleOffset ? uint64_t(i64(*sampleOffset) * sampleSize) : 0;
  }
  drop.grouped = drop.first % 4 == 0 && d % 4 == 0;
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
        const float *xr = x + r * d;
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
          const float dxhat = adjointAt(r * d + j) * gamma[j];
          sumDxhat += dxhat;
          sumDxhatXhat = fusedMulAdd(dxhat, layerNormXhat(xr[j], mean, rstd), sumDxhatXhat);
        }
        const float a = warpSum(sumDxhat) * invD, bb = warpSum(sumDxhatXhat) * invD;
        auto dxAt = [&](i64 j) {
          return layerNormDx(adjointAt(r * d + j) * gamma[j], layerNormXhat(xr[j], mean, rstd),
                             rstd, a, bb);
        };
        if (!dropout) {
          for (i64 j = lane; j < d; j += kWarp)
            dx[r * d + j] = dxAt(j);
        } else if (drop.grouped) {
          // A lane 4 consecutive elements: one Philox call decides them.
          for (i64 j4 = 4 * lane; j4 < d; j4 += 4 * kWarp) {
            const PhiloxWords words =
                drop.masked
                    ? dropoutWords(drop.seed, drop.key, (drop.first + uint64_t(r * d + j4)) / 4)
                    : PhiloxWords{};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const float value = dxAt(j4 + e);
              if (dx)
                dx[r * d + j4 + e] = value;
              drop.store(r * d + j4 + e, value, words.w[e]);
            }
          }
        } else {
          for (i64 j = lane; j < d; j += kWarp) {
            const float value = dxAt(j);
            if (dx)
              dx[r * d + j] = value;
            drop.store(r * d + j, value,
                       drop.masked
                           ? dropoutWord(drop.seed, drop.key, drop.first + uint64_t(r * d + j))
                           : 0u);
          }
        }
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
          const float gj = adjointAt((r0 + rr) * d + j);
          sg = fusedMulAdd(gj, layerNormXhat(x[(r0 + rr) * d + j], sMean[rr], sRstd[rr]), sg);
          sb += gj;
        }
        pg[j] = sg;
        pb[j] = sb;
      }
    }
    __syncthreads(); // (the next block's chunk overwrites the statistics)
  }
  if (!counter)
    return; // the reduce kernel adds the partials
  // Every thread's partials visible to the whole GPU before its block's
  // ticket; the block that draws the last one finds every block's there.
  if (!lastBlockDone(counter))
    return;
  __shared__ float sSegments[2][kLayerNormSegments][kWarp];
  for (i64 slice = 0; slice < (d + kWarp - 1) / kWarp; ++slice)
    addPartialsSlice(scratch, blocks, d, slice, dgamma, dbeta, sSegments);
  if (threadIdx.x == 0)
    *counter = 0; // every block has its ticket: ready for the next launch (a graph's replay)
}

/// With the backward's counter 0: dgamma and dbeta, the blocks' partials
/// added as the backward's last block adds them (addPartialsSlice; 0 when
/// rows == 0), a block a slice of kLayerNormReduceColumns columns.
extern "C" __global__ void __launch_bounds__(kLayerNormThreads)
    tfc_cuda_layer_norm_backward_reduce_kernel(i64 rows, i64 d, i64 blockRows,
                                               const float *__restrict__ scratch,
                                               float *__restrict__ dgamma,
                                               float *__restrict__ dbeta) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kLayerNormThreads);
  if (d <= 0 || blockRows <= 0)
    return;
  static_assert(kLayerNormReduceColumns == kWarp, "a lane a column");
  __shared__ float sSegments[2][kLayerNormSegments][kWarp];
  const i64 blocks = rows > 0 ? (rows + blockRows - 1) / blockRows : 0;
  for (i64 slice = blockIdx.x; slice < (d + kWarp - 1) / kWarp; slice += gridDim.x)
    addPartialsSlice(scratch, blocks, d, slice, dgamma, dbeta, sSegments);
}
