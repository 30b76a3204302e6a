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
// built on wgmma must get exactly right, and what no emulator here can say:
// so this runs wgmma.mma_async m64n64k16 (bf16 in, fp32 out) on operand
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

#include <cstdint>

typedef long long i64;

namespace {

constexpr int kImageWords = 1024; // uint4s: 16 KiB

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// The 32 accumulators as asm operands 0-31.
#define TFC_WGMMA_ACC                                                                              \
  "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]), "+f"(c[4]), "+f"(c[5]), "+f"(c[6]), "+f"(c[7]),  \
      "+f"(c[8]), "+f"(c[9]), "+f"(c[10]), "+f"(c[11]), "+f"(c[12]), "+f"(c[13]), "+f"(c[14]),     \
      "+f"(c[15]), "+f"(c[16]), "+f"(c[17]), "+f"(c[18]), "+f"(c[19]), "+f"(c[20]), "+f"(c[21]),   \
      "+f"(c[22]), "+f"(c[23]), "+f"(c[24]), "+f"(c[25]), "+f"(c[26]), "+f"(c[27]), "+f"(c[28]),   \
      "+f"(c[29]), "+f"(c[30]), "+f"(c[31])
#define TFC_WGMMA_D                                                                                \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "    \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"

/// c (+)= A B, both from shared memory; TransB is imm-trans-b.
template <int TransB>
__device__ __forceinline__ void wgmmaSS(float (&c)[32], uint64_t descA, uint64_t descB,
                                        int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " TFC_WGMMA_D
               ", %32, %33, p, 1, 1, 0, %35;\n}\n"
               : TFC_WGMMA_ACC
               : "l"(descA), "l"(descB), "r"(accumulate), "n"(TransB));
}

/// c (+)= A B, A from registers (a), B from shared memory.
template <int TransB>
__device__ __forceinline__ void wgmmaRS(float (&c)[32], const uint32_t (&a)[4], uint64_t descB,
                                        int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " TFC_WGMMA_D
               ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
               : TFC_WGMMA_ACC
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(accumulate),
                 "n"(TransB));
}
#endif

/// The probe: Steps k-steps of wgmma.mma_async, A from registers when Rs.
template <bool Rs, int TransB, int Steps>
__device__ __forceinline__ void probe(const uint4 *aImage, const uint4 *bImage,
                                      const uint32_t *aRegs, const unsigned long long *descs,
                                      float *d) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ __align__(1024) uint4 sA[kImageWords], sB[kImageWords];
  const int tid = int(threadIdx.x);
  for (int i = tid; i < kImageWords; i += 128) {
    sA[i] = aImage[i];
    sB[i] = bImage[i];
  }
  // The generic proxy's stores, seen by wgmma's reads (the async proxy).
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
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
  // Registers written before here (c, a) are the wgmma's to read.
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int s = 0; s < Steps; ++s) {
    const uint64_t descA = descs[2 * s] + baseA, descB = descs[2 * s + 1] + baseB;
    if (Rs)
      wgmmaRS<TransB>(c, a[s], descB, s > 0);
    else
      wgmmaSS<TransB>(c, descA, descB, s > 0);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int j = 0; j < 32; ++j)
    d[tid * 32 + j] = c[j];
#endif
}

} // namespace

#define TFC_PROBE(name, rs, transB, steps)                                                         \
  extern "C" __global__ void __launch_bounds__(128)                                                \
      name(const uint4 *aImage, const uint4 *bImage, const uint32_t *aRegs,                        \
           const unsigned long long *descs, float *d) {                                            \
    probe<rs, transB, steps>(aImage, bImage, aRegs, descs, d);                                     \
  }
TFC_PROBE(tfc_probe_wgmma_ss_k16_kernel, false, 0, 1)
TFC_PROBE(tfc_probe_wgmma_ss_k64_kernel, false, 0, 4)
TFC_PROBE(tfc_probe_wgmma_rs_k64_kernel, true, 0, 4)
TFC_PROBE(tfc_probe_wgmma_ss_k64_mn_kernel, false, 1, 4)
TFC_PROBE(tfc_probe_wgmma_rs_k64_mn_kernel, true, 1, 4)
