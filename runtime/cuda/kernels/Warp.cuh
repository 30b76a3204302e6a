//===- Warp.cuh - warp reductions the CUDA kernels share ------------------===//
//
// defines: warpSum, warpMax, broadcast, trapUnlessBlockSize, awaitPreviousKernel,
//          lastBlockDone
//
// Butterflies over the full warp in KernelMath.h's order (butterflySum is
// their host twin): step o = 16, 8, 4, 2, 1 adds lane l ^ o's value, so all
// 32 lanes end with the same bits, the same on every run.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_KERNELS_WARP_CUH
#define TFC_RUNTIME_CUDA_KERNELS_WARP_CUH

#include "runtime/cuda/kernels/KernelMath.h"

namespace tfc::rt::cuda::kernels {

constexpr unsigned kFullMask = 0xffffffffu;

/// The sum over groups of `Lanes` lanes (a power of two; the warp's by
/// default): butterflies ^ Lanes / 2, ..., 1, the same bits in every lane.
template <int Lanes = kWarp>
__device__ __forceinline__ float warpSum(float v) {
  static_assert(Lanes > 0 && Lanes <= kWarp && (Lanes & (Lanes - 1)) == 0, "a power of two");
#pragma unroll
  for (int o = Lanes / 2; o > 0; o /= 2)
    v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

/// The largest value over groups of `Lanes` lanes (max is exact: the order
/// does not matter).
template <int Lanes = kWarp>
__device__ __forceinline__ float warpMax(float v) {
  static_assert(Lanes > 0 && Lanes <= kWarp && (Lanes & (Lanes - 1)) == 0, "a power of two");
#pragma unroll
  for (int o = Lanes / 2; o > 0; o /= 2)
    v = maxOf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

__device__ __forceinline__ float broadcast(float v, int lane) {
  return __shfl_sync(kFullMask, v, lane);
}

/// Kernels assume their documented block size; another is a launch error
/// (the trap makes the launch fail), never a silent wrong result.
__device__ __forceinline__ void trapUnlessBlockSize(int threads) {
  if (blockDim.x != unsigned(threads) || blockDim.y != 1 || blockDim.z != 1)
    __trap();
}

/// Programmatic dependent launch (sm_90 and later): lets the next kernel on
/// the stream begin launching (its blocks stop here too), then waits until
/// the previous kernel has finished and its writes are visible. Every kernel
/// calls it first, before any memory access, so the runtime may launch them
/// with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
/// (TFC_DEPENDENT_LAUNCH=1): the next launch's latency then overlaps this
/// kernel's run. Launched without it, both instructions return at once.
/// Nothing before sm_90, or on the emulator.
__device__ __forceinline__ void awaitPreviousKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" ::: "memory");
#endif
}

/// Whether this block is the launch's last to finish, its ticket drawn from
/// `counter` after every thread's writes are visible to the whole GPU:
/// then every block's are visible to it. Every thread calls it.
/// (Static: the emulator's __shared__ is a static in a section of its own,
/// which an inline function's comdat copy would conflict with.)
static __device__ __forceinline__ bool lastBlockDone(unsigned *counter) {
  __shared__ unsigned sLast;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    sLast = atomicAdd(counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!sLast)
    return false;
  __threadfence();
  return true;
}

} // namespace tfc::rt::cuda::kernels

#endif // TFC_RUNTIME_CUDA_KERNELS_WARP_CUH
