//===- WgmmaProbe.h - the host side of wgmma_probe.cu's hypotheses --------===//
//
// What tfc-kernel-check's wgmma probe (wgmma_probe.cu) assumes about
// Hopper's warpgroup MMA, as plain functions: where each operand element
// goes in a shared-memory image (core matrices without swizzle, 128-byte
// swizzled rows), the 64-bit matrix descriptor's fields, which accumulator
// register holds which element of D, and which of A's registers which
// element of A. The probe lays operands out by these, runs wgmma and
// checks D; WgmmaProbeTest checks these functions on the CPU (every
// element placed once, every accumulator element held once).
//
// Shapes: m64n64k16 a step (bf16 in, fp32 out); A is 64 x K (K = 16 a
// step), B is K x 64, D = A B is 64 x 64. Values are small integers: exact
// in bf16, and their products' sums exact in fp32.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_GPU_WGMMAPROBE_H
#define TFC_TOOLS_GPU_WGMMAPROBE_H

#include "runtime/cuda/kernels/KernelMath.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace tfc::wgmmaprobe {

constexpr int kM = 64, kN = 64, kThreads = 128, kRegisters = 32;
constexpr uint32_t kImageBytes = 16384;

inline int aValue(int m, int k) { return (m * 7 + k * 3) % 9 - 4; }
inline int bValue(int k, int n) { return (n * 5 + k * 11) % 7 - 3; }

/// D = A B over K, row-major 64 x 64.
inline std::vector<float> product(int depth) {
  std::vector<float> d(size_t(kM * kN));
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n) {
      int sum = 0;
      for (int k = 0; k < depth; ++k)
        sum += aValue(m, k) * bValue(k, n);
      d[size_t(m * kN + n)] = float(sum);
    }
  return d;
}

/// The byte of element (row, k) of a K-major operand without swizzle: core
/// matrices of 8 rows x 16 bytes (8 elements of k) stored contiguously, the
/// core of rows 8i.. and k 8j.. at i * sbo + j * lbo (sbo: between cores
/// adjacent in M or N, lbo: adjacent in K, as PTX's descriptor names them).
inline uint32_t interleaved(int row, int k, uint32_t lbo, uint32_t sbo) {
  return uint32_t(row / 8) * sbo + uint32_t(k / 8) * lbo + uint32_t(row % 8) * 16 +
         uint32_t(k % 8) * 2;
}

/// The byte of element (row, col) of rows of 64 bf16 (128 bytes) under the
/// 128-byte swizzle: the row's 16-byte chunk c stored at chunk c ^ (row % 8).
inline uint32_t swizzled128(int row, int col) {
  return uint32_t(row) * 128 + uint32_t((col / 8) ^ (row % 8)) * 16 + uint32_t(col % 8) * 2;
}

/// wgmma's matrix descriptor (sm_90): the start address, the leading and
/// the stride byte offsets, each in 16-byte units in 14 bits (bits 0-13,
/// 16-29, 32-45), the base offset 0 (bits 49-51), the layout in bits 62-63
/// (0: no swizzle, 1: 128-byte, 2: 64-byte, 3: 32-byte). The kernel adds its
/// tile's shared address to the start address.
inline uint64_t descriptor(uint32_t startBytes, uint32_t lbo, uint32_t sbo, uint64_t layout) {
  return uint64_t((startBytes >> 4) & 0x3fffu) | uint64_t((lbo >> 4) & 0x3fffu) << 16 |
         uint64_t((sbo >> 4) & 0x3fffu) << 32 | (layout & 3u) << 62;
}

/// The element of D that accumulator register j of thread i holds: warp w
/// owns rows 16w .. 16w + 15 and each 8 columns as mma.m16n8's C
/// fragment: lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4) and
/// the next, in registers 4 (col / 8) + {0, 1} and + {2, 3}.
inline std::pair<int, int> accumulatorAt(int thread, int j) {
  const int warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * ((j % 4) / 2), 8 * (j / 4) + 2 * (lane % 4) + (j % 2)};
}

/// The element of A whose bf16 is the low half of register r of thread i
/// at k-step s (the high half: the next column): mma.m16n8k16's A fragment
/// for warp w's 16 rows 16w ..: r 0 rows l / 4, 1 rows l / 4 + 8, columns
/// 2 (l % 4) (+ 8 for r 2 and 3).
inline std::pair<int, int> aRegisterAt(int thread, int r, int step) {
  const int warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * (r % 2), 16 * step + 2 * (lane % 4) + 8 * (r / 2)};
}

/// A 16 KiB image holding `value(row, col)` (rows x cols, small integers)
/// at byte place(row, col); every other 16-bit word holds bf16 100, which
/// no product here makes exact (a read of a wrong place shows).
template <typename Place, typename Value>
std::vector<uint16_t> imageOf(int rows, int cols, Place place, Value value) {
  namespace k = tfc::rt::cuda::kernels;
  std::vector<uint16_t> image(kImageBytes / 2, k::bf16Bits(100.0f));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      image[place(r, c) / 2] = k::bf16Bits(float(value(r, c)));
  return image;
}

/// Thread i's A registers for `steps` k-steps as aRegisterAt places them:
/// [(s * 128 + i) * 4 + r], bf16 pairs (low half first).
inline std::vector<uint32_t> aRegisters(int steps) {
  namespace k = tfc::rt::cuda::kernels;
  std::vector<uint32_t> regs(size_t(steps * kThreads * 4));
  for (int s = 0; s < steps; ++s)
    for (int i = 0; i < kThreads; ++i)
      for (int r = 0; r < 4; ++r) {
        auto [row, col] = aRegisterAt(i, r, s);
        regs[size_t((s * kThreads + i) * 4 + r)] =
            uint32_t(k::bf16Bits(float(aValue(row, col)))) |
            uint32_t(k::bf16Bits(float(aValue(row, col + 1)))) << 16;
      }
  return regs;
}

/// The accumulators (thread i's 32 at [i * 32 ..]) set out as D by
/// accumulatorAt.
inline std::vector<float> asMatrix(const std::vector<float> &accumulators) {
  std::vector<float> d(size_t(kM * kN), 0.0f);
  for (int i = 0; i < kThreads; ++i)
    for (int j = 0; j < kRegisters; ++j) {
      auto [row, col] = accumulatorAt(i, j);
      d[size_t(row * kN + col)] = accumulators[size_t(i * kRegisters + j)];
    }
  return d;
}

} // namespace tfc::wgmmaprobe

#endif // TFC_TOOLS_GPU_WGMMAPROBE_H
