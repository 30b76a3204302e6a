//===- Wgmma.cuh - Hopper's warpgroup MMA (sm_90a) -----------------------===//
//
// wgmma.mma_async m64n64k16 (bf16 in, fp32 accumulators) with A and B from
// shared memory or A from registers, the fences and waits around it, and
// the shared-memory stores' fence for the async proxy that wgmma reads
// through. Defined only where nvcc compiles for sm_90a
// (__CUDA_ARCH_FEAT_SM90_ALL): wgmma_probe.cu and attention_wgmma.cu,
// whose kernels are empty elsewhere, and on the SIMT emulator (TFC_SIMT:
// tests/simt's model of wgmma, the kernels' own source compiled for the
// host). The accumulators c[32] are thread i's of the warpgroup's 64 x 64
// D (WgmmaProbe.h's accumulatorAt says which).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_KERNELS_WGMMA_CUH
#define TFC_RUNTIME_CUDA_KERNELS_WGMMA_CUH

#include <cstdint>

#if defined(TFC_SIMT)
// The emulator's wgmma (tests/simt/Simt.h); the call site names each.
template <int TransB>
inline void wgmmaSS(float (&c)[32], uint64_t descA, uint64_t descB, int accumulate,
                    const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::wgmmaMmaAsync(c, nullptr, descA, descB, accumulate != 0, TransB, file, line);
}
template <int TransB>
inline void wgmmaRS(float (&c)[32], const uint32_t (&a)[4], uint64_t descB, int accumulate,
                    const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::wgmmaMmaAsync(c, a, 0, descB, accumulate != 0, TransB, file, line);
}
inline void wgmmaFence(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::wgmmaFence(file, line);
}
inline void wgmmaCommit(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::wgmmaCommitGroup(file, line);
}
template <int Pending>
inline void wgmmaWait(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::wgmmaWaitGroup(Pending, file, line);
}
inline void wgmmaCommitAndWait(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::wgmmaCommitGroup(file, line);
  ::tfc::simt::wgmmaWaitGroup(0, file, line);
}
inline void sharedStoresToAsyncProxy() {}
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
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

/// Registers written by other instructions (accumulators, A) before here
/// are the next wgmma's to read.
__device__ __forceinline__ void wgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
/// The wgmmas issued since the last commit, as one group.
__device__ __forceinline__ void wgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/// Waits until at most Pending of the latest groups are in flight: the
/// others' results in the accumulators, their shared-memory reads done.
template <int Pending> __device__ __forceinline__ void wgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
/// The wgmmas issued so far as one group, waited for.
__device__ __forceinline__ void wgmmaCommitAndWait() {
  wgmmaCommit();
  wgmmaWait<0>();
}
/// This thread's shared-memory stores so far, seen by wgmma's reads (the
/// async proxy); a barrier after it makes every thread's so.
__device__ __forceinline__ void sharedStoresToAsyncProxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
#endif

#if defined(TFC_SIMT) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// wgmma's matrix descriptor (WgmmaProbe.h's descriptor) of the shared
/// memory at `tile` + offset bytes.
__device__ __forceinline__ uint64_t wgmmaDescriptor(const void *tile, uint32_t offset, uint32_t lbo,
                                                    uint32_t sbo, uint64_t layout) {
  const uint64_t address = uint64_t(__cvta_generic_to_shared(tile)) + offset;
  return ((address >> 4) & 0x3fffu) | uint64_t((lbo >> 4) & 0x3fffu) << 16 |
         uint64_t((sbo >> 4) & 0x3fffu) << 32 | (layout & 3u) << 62;
}
#endif

#endif // TFC_RUNTIME_CUDA_KERNELS_WGMMA_CUH
