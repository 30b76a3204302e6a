//===- FaultKernels.cpp - kernels with the bugs the emulator must catch ---===//
//
// Small kernels, each with one fault (or one legal corner) of CUDA's
// execution model, compiled on Simt.h like the real kernels:
// SimtKernelsTest's SimtEmulator tests launch them and expect the emulator
// to report (or accept) each.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

#include "runtime/cuda/kernels/CpAsync.cuh"
#include "runtime/cuda/kernels/Wgmma.cuh"

namespace tfc_simt_faults {

/// A shuffle only half the warp reaches: the other half returns.
extern "C" __global__ void simt_fault_divergent_shuffle(float *out) {
  float v = float(threadIdx.x);
  if (threadIdx.x % 32 < 16)
    v = __shfl_xor_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}

/// A neighbour's shared value read without the barrier after the writes.
extern "C" __global__ void simt_fault_missing_barrier(float *out) {
  __shared__ float s[128];
  s[threadIdx.x] = float(threadIdx.x);
  out[threadIdx.x] = s[(threadIdx.x + 32) % 128];
}

/// The same with the barrier: the right values under every schedule.
extern "C" __global__ void simt_fault_none(float *out) {
  __shared__ float s[128];
  s[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 32) % 128];
}

/// Threads that return before a barrier count as arrived (sm_70+).
extern "C" __global__ void simt_fault_early_return(float *out) {
  if (threadIdx.x >= 64)
    return;
  __syncthreads();
  out[threadIdx.x] = 1.0f;
}

/// Half the block at one __syncthreads, half at another.
extern "C" __global__ void simt_fault_two_barriers(float *out) {
  if (threadIdx.x < 64)
    __syncthreads();
  else
    __syncthreads();
  out[threadIdx.x] = 1.0f;
}

extern "C" __global__ void simt_fault_trap(float *out) {
  if (blockIdx.x == 1 && threadIdx.x == 5)
    __trap();
  out[threadIdx.x] = 1.0f;
}

/// A mask the emulator does not model.
extern "C" __global__ void simt_fault_partial_mask(float *out) {
  out[threadIdx.x] = __shfl_sync(0x0000ffffu, 1.0f, 0);
}

/// wgmma's operand tiles: 64 x 64 bf16 ones in the 128-byte swizzle (any
/// order: they are all 1), so that D = A B is 16 everywhere.
struct alignas(1024) OnesTile {
  uint16_t e[64 * 64];
};
__device__ void stageOnes(OnesTile &a, OnesTile &b) {
  for (unsigned i = threadIdx.x; i < 64 * 64; i += 128)
    a.e[i] = b.e[i] = 0x3f80; // bf16 1
  __syncthreads();
}
/// Issues D = A B from shared memory (A and B K-major, one k-step).
__device__ void issueOnes(float (&c)[32], OnesTile &a, OnesTile &b) {
  wgmmaSS<0>(c, wgmmaDescriptor(&a, 0, 16, 1024, 1), wgmmaDescriptor(&b, 0, 16, 1024, 1), 0);
}

/// wgmma used as it must be: D = 16.
extern "C" __global__ void simt_fault_wgmma_none(float *out) {
  __shared__ OnesTile a, b;
  stageOnes(a, b);
  float c[32] = {};
  wgmmaFence();
  issueOnes(c, a, b);
  wgmmaCommitAndWait();
  out[threadIdx.x] = c[31];
}

/// No wgmma.fence before the wgmma.
extern "C" __global__ void simt_fault_wgmma_unfenced(float *out) {
  __shared__ OnesTile a, b;
  stageOnes(a, b);
  float c[32] = {};
  issueOnes(c, a, b);
  wgmmaCommitAndWait();
  out[threadIdx.x] = c[0];
}

/// An operand tile written while the wgmma may still read it.
extern "C" __global__ void simt_fault_wgmma_overwritten(float *out) {
  __shared__ OnesTile a, b;
  stageOnes(a, b);
  float c[32] = {};
  wgmmaFence();
  issueOnes(c, a, b);
  if (threadIdx.x == 0)
    b.e[0] = 0;
  wgmmaCommitAndWait();
  out[threadIdx.x] = c[0];
}

/// An accumulator written while the wgmma is in flight.
extern "C" __global__ void simt_fault_wgmma_accumulator(float *out) {
  __shared__ OnesTile a, b;
  stageOnes(a, b);
  float c[32] = {};
  wgmmaFence();
  issueOnes(c, a, b);
  c[3] = 1.0f;
  wgmmaCommitAndWait();
  out[threadIdx.x] = c[0];
}

/// Returning with a wgmma in flight: its results go nowhere.
extern "C" __global__ void simt_fault_wgmma_not_waited(float *out) {
  __shared__ OnesTile a, b;
  stageOnes(a, b);
  float c[32] = {};
  wgmmaFence();
  issueOnes(c, a, b);
  out[threadIdx.x] = c[0];
}

/// cp.async's source: global memory of zeros.
__device__ __align__(16) float cpAsyncSource[128];

/// cp.async: every fourth thread copies 4 floats of cpAsyncSource into
/// shared memory; each thread then reads a value another copied. Waited
/// for before the barrier, as it must be: 2 everywhere.
extern "C" __global__ void simt_fault_cp_async_none(float *out) {
  __shared__ __align__(16) float s[128];
  if (threadIdx.x % 4 == 0)
    cpAsync<16>(&s[threadIdx.x], &cpAsyncSource[threadIdx.x], true);
  cpAsyncCommit();
  cpAsyncWait<0>();
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 32) % 128] + 2.0f;
}

/// The same, waited for after the barrier: another thread's copy may not
/// have landed when it is read (the emulator: NaN until its wait).
extern "C" __global__ void simt_fault_cp_async_read_early(float *out) {
  __shared__ __align__(16) float s[128];
  if (threadIdx.x % 4 == 0)
    cpAsync<16>(&s[threadIdx.x], &cpAsyncSource[threadIdx.x], true);
  cpAsyncCommit();
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 32) % 128] + 2.0f;
  cpAsyncWait<0>();
}

/// Never waited for: the copies go nowhere the kernel knows of.
extern "C" __global__ void simt_fault_cp_async_not_waited(float *out) {
  __shared__ __align__(16) float s[128];
  if (threadIdx.x % 4 == 0)
    cpAsync<16>(&s[threadIdx.x], &cpAsyncSource[threadIdx.x], true);
  cpAsyncCommit();
  out[threadIdx.x] = 0.0f;
}

/// A 16-byte copy to an address 8 bytes past a 16-byte boundary.
extern "C" __global__ void simt_fault_cp_async_misaligned(float *out) {
  __shared__ __align__(16) float s[136];
  if (threadIdx.x % 4 == 0)
    cpAsync<16>(&s[threadIdx.x + 2], &cpAsyncSource[threadIdx.x], true);
  cpAsyncCommit();
  cpAsyncWait<0>();
}

} // namespace tfc_simt_faults

TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_divergent_shuffle)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_missing_barrier)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_none)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_early_return)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_two_barriers)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_trap)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_partial_mask)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_wgmma_none)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_wgmma_unfenced)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_wgmma_overwritten)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_wgmma_accumulator)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_wgmma_not_waited)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_cp_async_none)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_cp_async_read_early)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_cp_async_not_waited)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_cp_async_misaligned)
