//===- cross_entropy.cu - fused softmax cross-entropy on the GPU ----------===//
//
// defines: tfc_cuda_cross_entropy_forward_kernel,
//          tfc_cuda_cross_entropy_mean_kernel,
//          tfc_cuda_cross_entropy_backward_kernel,
//          tfc_cuda_cross_entropy_fused_kernel
//
// tf.cross_entropy over logits laid out [outer, classes, inner] (the class
// axis anywhere: inner = 1 when it is the last), i32 labels [outer, inner]
// clamped into [0, classes) as the CPU lowering clamps them
// (LowerToLinalg.cpp clampedIndex). A warp a row (o, i): lane l takes classes
// l, l + 32, ...; the row's maximum and Σ exp(x - max) come from warp
// butterflies. exp is the CPU attention kernel's polynomial (KernelMath.h
// expApprox), log is CUDA's logf.
//
//  - forward: losses[o * inner + i] = -log_softmax(x)[label], then out[0] =
//    their mean (below);
//  - mean: out[0] = Σ losses / count in a fixed tree (one block: thread t
//    sums t, t + 256, ... in order, then halving in shared memory), the op's
//    result;
//  - backward: dlogits = (softmax(x) - onehot(label)) * (dloss[0] / count),
//    dloss the adjoint of the mean (on the device: no host sync);
//  - fused (a train step's loss and its gradient of the same logits, as
//    llm.c's fused classifier): forward's losses and mean and backward's
//    dlogits from one read of each row. A lane keeps its first
//    kCrossEntropyRegisterClasses logits in registers (rows of up to 1,024
//    classes are read from memory once; longer rows read the rest again),
//    and the row's max and Σ exp are computed once, in the forward's and
//    backward's order (max, then Σ exp(x - max) lane by lane, then the
//    butterflies; not an online softmax, whose rescaled sums round
//    differently): the same bits as the forward and backward kernels.
// The forward and fused kernels add the losses one of two ways:
//  - their last CUDA block to finish (the classic "last block done", as
//    layer_norm.cu's backward): each block, its losses written, takes a
//    ticket from a counter (atomicAdd); the one that draws gridDim.x - 1
//    computes the mean kernel's tree (meanOfLosses) and sets the counter
//    back to 0 for the next launch (kernels on one stream never overlap,
//    so one counter a device serves them all);
//  - with counter 0, a second launch: the mean kernel.
// The same bits either way, on every run, for any grid. The ticket is the
// only atomic, and it orders work, never adds values.
//
// Launch: 256 threads a block; forward, backward and fused grid.x any
// (ceil(outer * inner / 8) blocks is a row a warp), mean grid.x = 1 (more
// blocks return at once).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

using namespace tfc::rt::cuda::kernels;

typedef long long i64;

namespace {

/// Row (o, i)'s maximum and Σ exp(x - max), on every lane.
__device__ __forceinline__ void rowSoftmax(const float *__restrict__ xr, i64 classes,
                                           i64 inner, int lane, float &max, float &sumExp) {
  float m = -INFINITY;
  for (i64 c = lane; c < classes; c += kWarp)
    m = maxOf(m, xr[c * inner]);
  max = warpMax(m);
  float s = 0.0f;
  for (i64 c = lane; c < classes; c += kWarp)
    s += expApprox(xr[c * inner] - max);
  sumExp = warpSum(s);
}

/// A lane's logits of row xr (classes lane, lane + 32, ...): the first
/// kCrossEntropyRegisterClasses of them in registers, read once.
struct LaneLogits {
  float x[kCrossEntropyRegisterClasses];
  const float *xr;
  i64 classes, inner;
  int lane;

  __device__ __forceinline__ LaneLogits(const float *row, i64 classes_, i64 inner_, int lane_)
      : xr(row), classes(classes_), inner(inner_), lane(lane_) {
#pragma unroll
    for (int j = 0; j < kCrossEntropyRegisterClasses; ++j) {
      const i64 c = lane + i64(j) * kWarp;
      x[j] = c < classes ? xr[c * inner] : 0.0f;
    }
  }
  /// f(c, x_c) for each of the lane's classes in order (rowSoftmax's).
  template <typename F> __device__ __forceinline__ void forEach(F f) const {
#pragma unroll
    for (int j = 0; j < kCrossEntropyRegisterClasses; ++j) {
      const i64 c = lane + i64(j) * kWarp;
      if (c < classes)
        f(c, x[j]);
    }
    for (i64 c = lane + i64(kCrossEntropyRegisterClasses) * kWarp; c < classes; c += kWarp)
      f(c, xr[c * inner]);
  }
};

/// body(row, offset, lane) for each of the outer x inner rows, a warp a row
/// (the grid's warps in turn): `offset` is the row's first element in a
/// [outer, classes, inner] tensor (its classes `inner` apart).
template <typename Body>
__device__ __forceinline__ void forEachRowOfWarp(i64 outer, i64 classes, i64 inner, Body body) {
  constexpr int warps = kCrossEntropyThreads / kWarp;
  const int lane = threadIdx.x % kWarp;
  for (i64 row = i64(blockIdx.x) * warps + threadIdx.x / kWarp; row < outer * inner;
       row += i64(gridDim.x) * warps)
    body(row, (row / inner) * classes * inner + row % inner, lane);
}

/// out[0] = (Σ_r losses[r]) / count for r < n, by a block of
/// kReduceThreads (every thread calls it): thread t adds losses t, t + 256,
/// ... in order, then a halving tree in shared memory. The mean kernel's
/// and the last block's one order: the same bits. The loads bypass L1
/// (__ldcg): in the last block, other blocks of the launch wrote them.
__device__ __forceinline__ void meanOfLosses(i64 n, float count, const float *losses, float *out) {
  __shared__ float partial[kReduceThreads];
  float s = 0.0f;
  for (i64 r = threadIdx.x; r < n; r += kReduceThreads)
    s += __ldcg(losses + r);
  partial[threadIdx.x] = s;
  for (int width = kReduceThreads / 2; width > 0; width /= 2) {
    __syncthreads();
    if (threadIdx.x < width)
      partial[threadIdx.x] += partial[threadIdx.x + width];
  }
  if (threadIdx.x == 0)
    out[0] = partial[0] / count;
}

// The forward and fused kernels' blocks run meanOfLosses as the last block.
static_assert(kCrossEntropyThreads == kReduceThreads, "the last block is the mean's block");

/// With a counter, the last block to finish: the losses' mean into out[0]
/// (and with corrects, theirs into accuracy[0]), and the counter back to 0
/// (every block has its ticket: ready for the next launch, a graph's
/// replay). With counter 0 the mean kernel must run next (for each).
__device__ __forceinline__ void meanIfLastBlock(i64 n, float count, const float *losses, float *out,
                                                unsigned *counter, const float *corrects = nullptr,
                                                float *accuracy = nullptr) {
  if (!counter || !lastBlockDone(counter))
    return;
  meanOfLosses(n, count, losses, out);
  if (corrects) {
    __syncthreads(); // the losses' tree is read before the corrects' is written
    meanOfLosses(n, float(n), corrects, accuracy);
  }
  if (threadIdx.x == 0)
    *counter = 0;
}

/// The row's tf.argmax over the lane's logits (the first maximum: a strict
/// '>' from -inf, so NaN never wins), then the warp's butterflies keep the
/// greater value, of equal ones the smaller class; -1 where no logit is
/// above -inf (tf.argmax's 0 then). The same on every lane.
template <typename Logits> __device__ __forceinline__ i64 rowArgmax(const Logits &xs) {
  float best = -INFINITY;
  int first = -1;
#pragma unroll
  for (int j = 0; j < kCrossEntropyRegisterClasses; ++j) {
    const int c = xs.lane + j * kWarp;
    if (c < xs.classes && xs.x[j] > best) {
      best = xs.x[j];
      first = c;
    }
  }
  for (i64 c = xs.lane + i64(kCrossEntropyRegisterClasses) * kWarp; c < xs.classes; c += kWarp)
    if (const float x = xs.xr[c * xs.inner]; x > best) {
      best = x;
      first = int(c);
    }
#pragma unroll
  for (int o = kWarp / 2; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(kFullMask, best, o);
    const int otherFirst = __shfl_xor_sync(kFullMask, first, o);
    if (other > best || (other == best && otherFirst >= 0 && (first < 0 || otherFirst < first))) {
      best = other;
      first = otherFirst;
    }
  }
  return first < 0 ? 0 : first;
}

} // namespace

/// losses[o * inner + i] = -log_softmax(logits[o, :, i])[clamp(labels[o *
/// inner + i])], then (the last block, with a counter) out[0] = their mean.
extern "C" __global__ void __launch_bounds__(kCrossEntropyThreads)
    tfc_cuda_cross_entropy_forward_kernel(i64 outer, i64 classes, i64 inner, float count,
                                          const float *__restrict__ logits,
                                          const int *__restrict__ labels,
                                          float *__restrict__ losses, float *__restrict__ out,
                                          unsigned *counter) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kCrossEntropyThreads);
  if (classes > 0)
    forEachRowOfWarp(outer, classes, inner, [&](i64 row, i64 offset, int lane) {
      const float *xr = logits + offset;
      float max, sumExp;
      rowSoftmax(xr, classes, inner, lane, max, sumExp);
      if (lane == 0)
        losses[row] = crossEntropyLoss(xr[clampLabel(labels[row], classes) * inner], max, sumExp);
    });
  meanIfLastBlock(outer * inner, count, losses, out, counter);
}

/// out[0] = (Σ_r losses[r]) / count for r < n (count: the label positions,
/// usually n): the forward's and fused kernel's second launch when their
/// counter is 0.
extern "C" __global__ void __launch_bounds__(kReduceThreads)
    tfc_cuda_cross_entropy_mean_kernel(i64 n, float count, const float *__restrict__ losses,
                                       float *__restrict__ out) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kReduceThreads);
  if (blockIdx.x != 0)
    return;
  meanOfLosses(n, count, losses, out);
}

/// dlogits[o, c, i] = (softmax(logits[o, :, i])_c - [c == label]) *
/// (dloss[0] / count).
extern "C" __global__ void __launch_bounds__(kCrossEntropyThreads)
    tfc_cuda_cross_entropy_backward_kernel(i64 outer, i64 classes, i64 inner, float count,
                                           const float *__restrict__ logits,
                                           const int *__restrict__ labels,
                                           const float *__restrict__ dloss,
                                           float *__restrict__ dlogits) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kCrossEntropyThreads);
  if (classes <= 0)
    return;
  const float coef = dloss[0] / count;
  forEachRowOfWarp(outer, classes, inner, [&](i64 row, i64 offset, int lane) {
    const float *xr = logits + offset;
    float *dr = dlogits + offset;
    float max, sumExp;
    rowSoftmax(xr, classes, inner, lane, max, sumExp);
    const i64 label = clampLabel(labels[row], classes);
    for (i64 c = lane; c < classes; c += kWarp)
      dr[c * inner] = crossEntropyGrad(xr[c * inner], max, sumExp, c == label, coef);
  });
}

/// tfc_cuda_cross_entropy_forward_kernel's losses and mean and
/// tfc_cuda_cross_entropy_backward_kernel's dlogits, each row's logits read
/// once and its softmax computed once (the same operations in the same
/// order: the same bits); with corrects, whether the row's argmax is its
/// label (as given, not clamped: tf.compare's), 1 or 0, and their mean into
/// accuracy[0] (an integer sum: exact in any order). The last block (with a
/// counter) adds the losses, then the corrects. With dlogitsBits, dlogits
/// holds each value's bf16 bits alone (bf16Bits, 2 bytes an element): a
/// GEMM's operand made where the gradient is (tf-bf16-gemm-operands).
extern "C" __global__ void __launch_bounds__(kCrossEntropyThreads)
    tfc_cuda_cross_entropy_fused_kernel(i64 outer, i64 classes, i64 inner, float count,
                                        const float *__restrict__ logits,
                                        const int *__restrict__ labels,
                                        const float *__restrict__ dloss, float *__restrict__ losses,
                                        float *__restrict__ out, void *__restrict__ dlogits,
                                        float *__restrict__ corrects, float *__restrict__ accuracy,
                                        i64 dlogitsBits, unsigned *counter) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kCrossEntropyThreads);
  if (classes > 0) {
    const float coef = dloss[0] / count;
    forEachRowOfWarp(outer, classes, inner, [&](i64 row, i64 offset, int lane) {
      const float *xr = logits + offset;
      const LaneLogits xs(xr, classes, inner, lane);
      float m = -INFINITY;
      xs.forEach([&](i64, float x) { m = maxOf(m, x); });
      const float max = warpMax(m);
      float s = 0.0f;
      xs.forEach([&](i64, float x) { s += expApprox(x - max); });
      const float sumExp = warpSum(s);
      if (corrects) {
        const i64 first = rowArgmax(xs);
        if (lane == 0)
          corrects[row] = first == i64(labels[row]) ? 1.0f : 0.0f;
      }
      const i64 label = clampLabel(labels[row], classes);
      if (lane == 0)
        losses[row] = crossEntropyLoss(xr[label * inner], max, sumExp);
      if (dlogitsBits) {
        uint16_t *dr = static_cast<uint16_t *>(dlogits) + offset;
        xs.forEach([&](i64 c, float x) {
          dr[c * inner] = bf16Bits(crossEntropyGrad(x, max, sumExp, c == label, coef));
        });
      } else {
        float *dr = static_cast<float *>(dlogits) + offset;
        xs.forEach([&](i64 c, float x) {
          dr[c * inner] = crossEntropyGrad(x, max, sumExp, c == label, coef);
        });
      }
    });
  } else if (corrects) {
    // No classes: tf.argmax's 0 for every row.
    for (i64 row = i64(blockIdx.x) * blockDim.x + threadIdx.x; row < outer * inner;
         row += i64(gridDim.x) * blockDim.x)
      corrects[row] = labels[row] == 0 ? 1.0f : 0.0f;
  }
  meanIfLastBlock(outer * inner, count, losses, out, counter, corrects, accuracy);
}
