//===- CpAsync.cuh - global to shared memory copies without registers ----===//
//
// cp.async (sm_80 and later): a thread's copy of 16 or 8 bytes from global
// into shared memory that does not pass through its registers and does
// not block it; the copies committed as a group are waited for with
// cp.async.wait_group. attention_wgmma.cu stages bf16 tiles with them
// straight into wgmma's swizzled layout: no registers held for the next
// tile during the products, unlike f32 tiles, which are rounded on the
// way. On the SIMT emulator (TFC_SIMT) tests/simt's model: the
// destination is poisoned at issue and written at the wait.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_KERNELS_CPASYNC_CUH
#define TFC_RUNTIME_CUDA_KERNELS_CPASYNC_CUH

#include <cstdint>

#if defined(TFC_SIMT)
/// The emulator's cp.async (tests/simt/Simt.h): as below.
template <int Bytes>
inline void cpAsync(void *dst, const void *src, bool present, const char *file = __builtin_FILE(),
                    int line = __builtin_LINE()) {
  ::tfc::simt::cpAsync(dst, src, Bytes, present ? Bytes : 0, file, line);
}
inline void cpAsyncCommit(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::cpAsyncCommitGroup(file, line);
}
template <int Pending>
inline void cpAsyncWait(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::cpAsyncWaitGroup(Pending, file, line);
}
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
/// Bytes (16 or 8) bytes from global memory at src to shared memory at
/// dst, both aligned to Bytes; zeros where !present (src is not read, but
/// must be a global address). 16 bytes bypass L1 (.cg), 8 cannot (.ca).
template <int Bytes>
__device__ __forceinline__ void cpAsync(void *dst, const void *src, bool present) {
  static_assert(Bytes == 16 || Bytes == 8, "cp.async copies 16 or 8 bytes here");
  const uint32_t to = uint32_t(__cvta_generic_to_shared(dst));
  const uint32_t srcBytes = present ? Bytes : 0;
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(src),
                 "r"(srcBytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(to), "l"(src), "r"(srcBytes)
                 : "memory");
}
/// This thread's copies since its last commit, as one group.
__device__ __forceinline__ void cpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
/// Waits until at most Pending of this thread's latest groups are in
/// flight: the others' bytes are in shared memory, for this thread (a
/// barrier after it: for the block; wgmma's reads need
/// sharedStoresToAsyncProxy too).
template <int Pending> __device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}
#endif

#endif // TFC_RUNTIME_CUDA_KERNELS_CPASYNC_CUH
