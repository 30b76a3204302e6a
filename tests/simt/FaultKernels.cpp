//===- FaultKernels.cpp - kernels with the bugs the emulator must catch ---===//
//
// Small kernels, each with one fault (or one legal corner) of CUDA's
// execution model, compiled on Simt.h like the real kernels:
// SimtKernelsTest's SimtEmulator tests launch them and expect the emulator
// to report (or accept) each.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

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

} // namespace tfc_simt_faults

TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_divergent_shuffle)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_missing_barrier)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_none)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_early_return)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_two_barriers)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_trap)
TFC_SIMT_KERNEL(tfc_simt_faults, simt_fault_partial_mask)
