//===- dropout.cu - dropout masks on the GPU, the CPU's Philox stream -----===//
//
// defines: tfc_cuda_dropout_mask_kernel
//
// The twin of runtime/cpu/Dropout.h's tfc_dropout_mask, with its arguments:
// mask[j] = 1 where element i = first + j of dropout op `key` under `seed`
// is dropped, word i % 4 of dropoutWords(seed, key, i / 4) < threshold
// (threshold = ceil(rate * 2^32)), for j < n (first: the index of the mask's
// first element in the global batch's tensor; 0 in one process). One thread
// a group of four elements (one Philox4x32-10 call, KernelMath.h's, the same
// function as runtime/Philox.h), so the GPU and the CPU draw the same masks
// bit for bit, for any grid.
// The mask's consumer applies it (scaling kept elements by 1 / (1 - rate)),
// as generated CPU code does.
//
// Launch: 256 threads a block, grid.x any (ceil((n + 3 + first % 4) / 4 /
// 256) blocks is a group a thread).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

using namespace tfc::rt::cuda::kernels;

typedef long long i64;

/// Mask bytes for elements [first, first + n): seed is the step's i32 seed
/// (its low 32 bits are used), key the op's 64-bit key, threshold the low 32
/// bits.
extern "C" __global__ void __launch_bounds__(kDropoutThreads)
    tfc_cuda_dropout_mask_kernel(unsigned char *__restrict__ mask, i64 n, i64 first, i64 seed,
                                 i64 key, i64 threshold) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kDropoutThreads);
  const i64 firstGroup = first / 4, groups = (first + n + 3) / 4 - firstGroup;
  const uint32_t seed32 = uint32_t(seed), bound = uint32_t(threshold);
  for (i64 g = i64(blockIdx.x) * kDropoutThreads + threadIdx.x; g < groups;
       g += i64(gridDim.x) * kDropoutThreads) {
    const i64 group = firstGroup + g;
    const PhiloxWords words = dropoutWords(seed32, uint64_t(key), uint64_t(group));
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const i64 i = 4 * group + e;
      if (i >= first && i < first + n)
        mask[i - first] = dropped(words.w[e], bound);
    }
  }
}
