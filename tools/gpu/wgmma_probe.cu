//===- wgmma_probe.cu - what sm_90a's wgmma reads and writes ---------------===//
//
// defines: tfc_probe_wgmma_ss_k16_kernel, tfc_probe_wgmma_ss_k64_kernel,
//          tfc_probe_wgmma_rs_k64_kernel, tfc_probe_wgmma_ss_k64_mn_kernel,
//          tfc_probe_wgmma_rs_k64_mn_kernel
//
// Not a runtime kernel: a probe that tfc-kernel-check runs on an H100 or
// H200 (tools/gpu/kernel_check.cpp, probeWgmma). The tensor-core attention
// kernels use mma.sync, which reaches about two thirds of Hopper's dense
// peak at best; issue 28's 50% of it needs wgmma (warpgroup MMA: 4 warps,
// operands read from shared memory through 64-bit matrix descriptors, or A
// from registers). How the descriptors' fields, the swizzled layouts and
// the accumulators' registers map to matrix elements is what a kernel
// built on wgmma must get exactly right, and what only the hardware can
// settle (the SIMT emulator models wgmma from the PTX ISA's text, and
// SimtKernelsTest runs these checks there: the two readings agree): so
// this runs wgmma.mma_async m64n64k16 (bf16 in, fp32 out) on operand
// images the host laid out under each hypothesis, and the host compares
// the accumulators with the product.
//
// Each kernel: one block of 128 threads (a warpgroup); ss: A and B from
// shared memory, rs: A from registers; k16 one k-step, k64 four; mn: B
// MN-major (imm-trans-b 1), else K-major. aImage and bImage: 16 KiB each,
// copied byte for byte to shared memory (1024-byte aligned, the 128-byte
// swizzle's atom), then made visible to the async proxy. descs: for each
// of `steps` k-steps, A's descriptor then B's, every field but the start
// address's high bits as the host wants them: the tile's own shared
// address (>> 4) is added to the start address field. With aRegs (not 0),
// A comes from registers instead: thread i's four 32-bit registers of step
// s at aRegs[(s * 128 + i) * 4 ..]. The first step's scale-d is 0 (D = A B), the
// others' 1 (D += A B). d: thread i's 32 accumulators at d[i * 32 ..], in
// register order. Compiled for sm_90a only (wgmma's target); the fatbin has
// no image for other GPUs, whose loading fails: the probe is skipped there.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/Wgmma.cuh"

#include <cstdint>

typedef long long i64;

namespace {

constexpr int kImageWords = 1024; // uint4s: 16 KiB

/// The probe: Steps k-steps of wgmma.mma_async, A from registers when Rs;
/// sA and sB the kernel's shared memory (declared there: the SIMT emulator
/// places a template's statics outside its shared memory).
template <bool Rs, int TransB, int Steps>
__device__ __forceinline__ void probe(const uint4 *aImage, const uint4 *bImage,
                                      const uint32_t *aRegs, const unsigned long long *descs,
                                      float *d, uint4 *sA, uint4 *sB) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int tid = int(threadIdx.x);
  for (int i = tid; i < kImageWords; i += 128) {
    sA[i] = aImage[i];
    sB[i] = bImage[i];
  }
  sharedStoresToAsyncProxy();
  __syncthreads();
  const uint64_t baseA = (uint64_t(__cvta_generic_to_shared(sA)) >> 4) & 0x3fff;
  const uint64_t baseB = (uint64_t(__cvta_generic_to_shared(sB)) >> 4) & 0x3fff;
  uint32_t a[Steps][4] = {};
  if (Rs)
    for (int s = 0; s < Steps; ++s)
      for (int r = 0; r < 4; ++r)
        a[s][r] = aRegs[(s * 128 + tid) * 4 + r];
  float c[32];
  for (int j = 0; j < 32; ++j)
    c[j] = 0.0f;
  wgmmaFence(); // registers written before here (c, a) are the wgmma's to read
#pragma unroll
  for (int s = 0; s < Steps; ++s) {
    const uint64_t descA = descs[2 * s] + baseA, descB = descs[2 * s + 1] + baseB;
    if (Rs)
      wgmmaRS<TransB>(c, a[s], descB, s > 0);
    else
      wgmmaSS<TransB>(c, descA, descB, s > 0);
  }
  wgmmaCommitAndWait();
  for (int j = 0; j < 32; ++j)
    d[tid * 32 + j] = c[j];
#endif
}

} // namespace

#define TFC_PROBE(name, rs, transB, steps)                                                         \
  extern "C" __global__ void __launch_bounds__(128)                                                \
      name(const uint4 *aImage, const uint4 *bImage, const uint32_t *aRegs,                        \
           const unsigned long long *descs, float *d) {                                            \
    __shared__ __align__(1024) uint4 sA[kImageWords], sB[kImageWords];                             \
    probe<rs, transB, steps>(aImage, bImage, aRegs, descs, d, sA, sB);                             \
  }
TFC_PROBE(tfc_probe_wgmma_ss_k16_kernel, false, 0, 1)
TFC_PROBE(tfc_probe_wgmma_ss_k64_kernel, false, 0, 4)
TFC_PROBE(tfc_probe_wgmma_rs_k64_kernel, true, 0, 4)
TFC_PROBE(tfc_probe_wgmma_ss_k64_mn_kernel, false, 1, 4)
TFC_PROBE(tfc_probe_wgmma_rs_k64_mn_kernel, true, 1, 4)
