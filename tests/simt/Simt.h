//===- Simt.h - the CUDA a kernel source sees on the SIMT emulator --------===//
//
// Included before a kernel file of runtime/cuda/kernels, in a namespace of
// its own (tests/simt/kernels/*.cpp), so that the kernel's own source
// compiles as host C++ and runs on Simt.cpp's emulator:
//
//   #include "tests/simt/Simt.h"
//   namespace tfc_simt_gather {
//   #include "runtime/cuda/kernels/gather.cu"
//   }
//   TFC_SIMT_KERNEL(tfc_simt_gather, tfc_cuda_gather_rows_kernel)
//
// The kernels see __CUDACC__ and __CUDA_ARCH__, so KernelMath.h takes its
// device branch (__fmaf_rn, __fsqrt_rn, __float_as_uint, CUDA's logf: here
// glibc's, which may differ from the GPU's by an ulp), the intrinsics below.
// Compiled with -ffp-contract=off (the kernels' -fmad=false), every other
// operation rounds as on the GPU; the tensor-core product's addition order
// is the one thing not the hardware's (mmaM16n8k16Bf16).
//
// __shared__ variables are static: a launch runs one block at a time, so
// the block's threads share them and no two blocks are alive at once. They
// live in one section, which is filled with 0xff bytes (NaN) before every
// block: a kernel that reads shared memory it did not write this block
// sees NaNs, not the last block's values.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TESTS_SIMT_SIMT_H
#define TFC_TESTS_SIMT_SIMT_H

#include "tests/simt/SimtLaunch.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <math.h>

// What the kernel sources test for: the emulator, and nvcc's device pass.
#define TFC_SIMT 1
#define __CUDACC__ 1
#define __CUDA_ARCH__ 800

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static __attribute__((section("tfc_simt_shared")))

// Built-in types and variables (x only is launched; y and z are 0 and 1).
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

/// Set by the emulator before it resumes a thread.
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

namespace tfc::simt {

/// The warp collectives the kernels use, and wgmma.wait_group (a
/// warpgroup's: 4 warps).
enum class Collective { ShflXor, Shfl, Any, Mma, WgmmaWait };

/// The calling thread's part of a warp collective: it waits until all 32
/// lanes of its warp are at the same collective (the same source line),
/// then each lane gets its result in `out`. Only the full mask is emulated.
void collective(Collective kind, unsigned mask, const uint32_t *in, int inWords, int arg,
                uint32_t *out, const char *file, int line);
void syncThreads(const char *file, int line);
/// Ends the launch with `message` (a trap, an unsupported use).
[[noreturn]] void fail(const std::string &message, const char *file, int line);

template <typename T> uint32_t wordOf(T value) {
  static_assert(sizeof(T) == 4, "the emulated shuffles move 32-bit values");
  uint32_t word;
  std::memcpy(&word, &value, sizeof word);
  return word;
}
template <typename T> T valueOf(uint32_t word) {
  T value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

/// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 with c as both C
/// and D: the warp's 16x8x16 product from every lane's fragments, the
/// layouts of the PTX ISA (Simt.cpp).
inline void mmaM16n8k16Bf16(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                            const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  const uint32_t in[10] = {a[0], a[1], a[2], a[3], b[0], b[1],
                           wordOf(c[0]), wordOf(c[1]), wordOf(c[2]), wordOf(c[3])};
  uint32_t out[4];
  collective(Collective::Mma, 0xffffffffu, in, 10, 0, out, file, line);
  for (int i = 0; i < 4; ++i)
    c[i] = valueOf<float>(out[i]);
}

/// Hopper's warpgroup MMA as Wgmma.cuh issues it (sm_90a's
/// wgmma.mma_async m64n64k16, bf16 in, fp32 accumulators), modelled in
/// Simt.cpp from the PTX ISA: the calling thread's part of a wgmma (c its
/// 32 accumulators, a its 4 A registers or null for A from shared memory,
/// the matrix descriptors, scale-d, imm-trans-b). Issuing does not block;
/// the products are made at wgmma.wait_group, a warpgroup's collective,
/// from the shared memory and registers then, and checked against what
/// they held when the first thread issued the wgmma: an operand changed
/// in between (a tile staged without the barrier before, or overwritten
/// before the wait) fails the launch, and so do a wgmma without a
/// wgmma.fence since the thread's last wait, threads of a warpgroup
/// issuing different wgmmas, and a thread returning with wgmmas not waited
/// for. Not modelled: the async proxy (fence.proxy.async is not checked).
void wgmmaMmaAsync(float *c, const uint32_t *a, uint64_t descA, uint64_t descB, bool scaleD,
                   int transB, const char *file, int line);
void wgmmaFence(const char *file, int line);
void wgmmaCommitGroup(const char *file, int line);
void wgmmaWaitGroup(int pending, const char *file, int line);
/// cp.async as CpAsync.cuh issues it (sm_80's cp.async.ca/cg.shared.global):
/// the calling thread's copy of `bytes` bytes from global memory at src to
/// shared memory at dst, srcBytes of them read from src (the rest zeros).
/// The source is read at issue; the destination is poisoned then (0xff
/// bytes: NaN) and written when the thread's cp.async.wait_group covers the
/// copy's group, so that a tile read before its wait (and its barrier)
/// and a copy issued into a tile others still read (or an in-flight wgmma:
/// its operand check) both show. A copy outside shared memory, misaligned
/// or not waited for before the thread returns fails the launch; copies
/// not yet committed are not waited for, as on the GPU.
void cpAsync(void *dst, const void *src, int bytes, int srcBytes, const char *file, int line);
void cpAsyncCommitGroup(const char *file, int line);
void cpAsyncWaitGroup(int pending, const char *file, int line);
/// `p`'s address in shared memory as __cvta_generic_to_shared gives it: an
/// offset into the launch's shared window (Simt.cpp), which wgmma's
/// descriptors carry and the emulator turns back into host memory.
size_t sharedAddress(const void *p, const char *file, int line);

} // namespace tfc::simt

inline size_t __cvta_generic_to_shared(const void *p, const char *file = __builtin_FILE(),
                                       int line = __builtin_LINE()) {
  return ::tfc::simt::sharedAddress(p, file, line);
}
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

// Intrinsics. The call site (__builtin_FILE, __builtin_LINE) is what tells
// one collective from another, and what an error names.
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T value, int laneMask, int width = 32,
                         const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (width != 32)
    ::tfc::simt::fail("__shfl_xor_sync with width " + std::to_string(width) + " is not emulated",
                      file, line);
  const uint32_t in = ::tfc::simt::wordOf(value);
  uint32_t out;
  ::tfc::simt::collective(::tfc::simt::Collective::ShflXor, mask, &in, 1, laneMask, &out, file,
                          line);
  return ::tfc::simt::valueOf<T>(out);
}

template <typename T>
inline T __shfl_sync(unsigned mask, T value, int srcLane, int width = 32,
                     const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (width != 32)
    ::tfc::simt::fail("__shfl_sync with width " + std::to_string(width) + " is not emulated", file,
                      line);
  const uint32_t in = ::tfc::simt::wordOf(value);
  uint32_t out;
  ::tfc::simt::collective(::tfc::simt::Collective::Shfl, mask, &in, 1, srcLane, &out, file, line);
  return ::tfc::simt::valueOf<T>(out);
}

inline int __any_sync(unsigned mask, int predicate, const char *file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  const uint32_t in = predicate != 0;
  uint32_t out;
  ::tfc::simt::collective(::tfc::simt::Collective::Any, mask, &in, 1, 0, &out, file, line);
  return int(out);
}

/// A warp's lanes of `mask` meet here: what each wrote before, the others
/// read after (a collective that exchanges nothing).
inline void __syncwarp(unsigned mask = 0xffffffffu, const char *file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
  const uint32_t in = 0;
  uint32_t out;
  ::tfc::simt::collective(::tfc::simt::Collective::Any, mask, &in, 1, 0, &out, file, line);
}

inline void __syncthreads(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::syncThreads(file, line);
}

[[noreturn]] inline void __trap(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::tfc::simt::fail("__trap()", file, line);
}

// Atomics: a block's threads run one at a time between barriers here.
inline unsigned atomicOr(unsigned *address, unsigned value) {
  const unsigned old = *address;
  *address = old | value;
  return old;
}
inline unsigned atomicAnd(unsigned *address, unsigned value) {
  const unsigned old = *address;
  *address = old & value;
  return old;
}
inline unsigned atomicAdd(unsigned *address, unsigned value) {
  const unsigned old = *address;
  *address = old + value;
  return old;
}
// Blocks run one after another, each to its end: a block's writes are
// there for every later one without a fence, and no cache to bypass.
inline void __threadfence() {}
template <typename T> inline T __ldcg(const T *address) { return *address; }
template <typename T> inline T __ldg(const T *address) { return *address; }
inline unsigned __float_as_uint(float x) { return ::tfc::simt::wordOf(x); }
inline float __uint_as_float(unsigned u) { return ::tfc::simt::valueOf<float>(u); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }

/// Registers kernel `kernel` of namespace `ns` (SimtLaunch.h's findKernel).
#define TFC_SIMT_KERNEL(ns, kernel)                                                                \
  static const ::tfc::simt::Registration tfcSimt_##kernel(#kernel, &ns::kernel);

#endif // TFC_TESTS_SIMT_SIMT_H
