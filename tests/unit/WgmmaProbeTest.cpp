//===- WgmmaProbeTest.cpp - the wgmma probe's hypotheses, on the CPU ------===//
//
// tools/gpu/WgmmaProbe.h's functions, which tfc-kernel-check's wgmma probe
// lays operands out and reads accumulators by: every operand element has a
// place of its own inside the 16 KiB image, every element of D one
// register, every element of A one half of one register, the descriptor's
// fields sit where sm_90's wgmma reads them, and D is exact. A probe that
// fails on a GPU then says the hypothesis is wrong, not this arithmetic.
//
//===----------------------------------------------------------------------===//

#include "tools/gpu/WgmmaProbe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace {

namespace w = tfc::wgmmaprobe;
namespace k = tfc::rt::cuda::kernels;

TEST(WgmmaProbe, EveryAccumulatorElementInOneRegister) {
  std::set<std::pair<int, int>> seen;
  for (int i = 0; i < w::kThreads; ++i)
    for (int j = 0; j < w::kRegisters; ++j) {
      auto at = w::accumulatorAt(i, j);
      EXPECT_TRUE(at.first >= 0 && at.first < w::kM && at.second >= 0 && at.second < w::kN);
      EXPECT_TRUE(seen.insert(at).second) << i << " " << j;
    }
  EXPECT_EQ(seen.size(), size_t(w::kM * w::kN));
  // mma.m16n8's C fragment in warp 0: lane 5 (g 1, t 1), registers 0-3.
  EXPECT_EQ(w::accumulatorAt(5, 0), std::make_pair(1, 2));
  EXPECT_EQ(w::accumulatorAt(5, 1), std::make_pair(1, 3));
  EXPECT_EQ(w::accumulatorAt(5, 2), std::make_pair(9, 2));
  EXPECT_EQ(w::accumulatorAt(5, 7), std::make_pair(9, 11));
  EXPECT_EQ(w::accumulatorAt(32, 0), std::make_pair(16, 0)); // warp 1's first row
}

TEST(WgmmaProbe, EveryElementOfAInOneRegisterHalf) {
  std::set<std::pair<int, int>> seen;
  for (int s = 0; s < 4; ++s)
    for (int i = 0; i < w::kThreads; ++i)
      for (int r = 0; r < 4; ++r) {
        auto [row, col] = w::aRegisterAt(i, r, s);
        EXPECT_EQ(col % 2, 0);
        EXPECT_TRUE(seen.insert({row, col}).second);
        EXPECT_TRUE(seen.insert({row, col + 1}).second);
      }
  EXPECT_EQ(seen.size(), size_t(w::kM * 64));
  const std::vector<uint32_t> regs = w::aRegisters(4);
  // Thread 33 (warp 1, g 0, t 1), step 2, register 3: row 16 + 8, column 32 + 2 + 8.
  const uint32_t word = regs[size_t((2 * w::kThreads + 33) * 4 + 3)];
  EXPECT_EQ(word & 0xffffu, k::bf16Bits(float(w::aValue(24, 42))));
  EXPECT_EQ(word >> 16, k::bf16Bits(float(w::aValue(24, 43))));
}

/// Whether `place` puts rows x cols elements at distinct, even, in-image bytes.
template <typename Place> void expectDistinctPlaces(int rows, int cols, Place place) {
  std::set<uint32_t> bytes;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const uint32_t at = place(r, c);
      EXPECT_EQ(at % 2, 0u);
      EXPECT_LT(at, w::kImageBytes);
      EXPECT_TRUE(bytes.insert(at).second) << r << " " << c;
    }
}

TEST(WgmmaProbe, LayoutsPlaceEachElementOnce) {
  expectDistinctPlaces(64, 16, [](int r, int c) { return w::interleaved(r, c, 128, 256); });
  expectDistinctPlaces(64, 64, w::swizzled128);
  // Core matrices: 8 rows of 16 contiguous bytes; the next core along K 128
  // bytes on, along the rows 256.
  EXPECT_EQ(w::interleaved(1, 0, 128, 256), 16u);
  EXPECT_EQ(w::interleaved(0, 8, 128, 256), 128u);
  EXPECT_EQ(w::interleaved(8, 0, 128, 256), 256u);
  // The 128-byte swizzle: row 3's chunk 1 at chunk 2; a row 128 bytes.
  EXPECT_EQ(w::swizzled128(3, 8), 3u * 128 + 2 * 16);
  EXPECT_EQ(w::swizzled128(0, 63), 126u);
}

TEST(WgmmaProbe, DescriptorFields) {
  const uint64_t d = w::descriptor(32, 16, 1024, 1);
  EXPECT_EQ(d & 0x3fff, 2u);          // start address / 16
  EXPECT_EQ((d >> 16) & 0x3fff, 1u);  // LBO / 16
  EXPECT_EQ((d >> 32) & 0x3fff, 64u); // SBO / 16
  EXPECT_EQ(d >> 62, 1u);             // the 128-byte swizzle
  EXPECT_EQ((d >> 46) & 0xffffu, 0u); // bits 46-61: base offset 0, nothing else
  EXPECT_EQ(w::descriptor(0, 128, 256, 0), (uint64_t(16) << 32) | (uint64_t(8) << 16));
}

TEST(WgmmaProbe, ImagesAndProductAreExact) {
  // The values are exact in bf16, and D's sums (at most 64 products of 4 x 3) in fp32.
  for (int m = 0; m < 64; ++m)
    for (int c = 0; c < 64; ++c) {
      EXPECT_EQ(k::bf16Float(k::bf16Bits(float(w::aValue(m, c)))), float(w::aValue(m, c)));
      EXPECT_EQ(k::bf16Float(k::bf16Bits(float(w::bValue(m, c)))), float(w::bValue(m, c)));
    }
  const std::vector<float> d = w::product(64);
  double largest = 0;
  for (float v : d)
    largest = std::max(largest, double(std::fabs(v)));
  EXPECT_GT(largest, 10.0);
  EXPECT_LE(largest, 64.0 * 12.0);
  // An image holds the values where the layout says, bf16 100 elsewhere.
  const std::vector<uint16_t> image =
      w::imageOf(64, 64, w::swizzled128, [](int r, int c) { return w::aValue(r, c); });
  EXPECT_EQ(image[w::swizzled128(5, 17) / 2], k::bf16Bits(float(w::aValue(5, 17))));
  EXPECT_EQ(image[9000 / 2], k::bf16Bits(100.0f));
  // Registers laid out by accumulatorAt read back as D.
  std::vector<float> registers(size_t(w::kThreads * w::kRegisters));
  for (int i = 0; i < w::kThreads; ++i)
    for (int j = 0; j < w::kRegisters; ++j) {
      auto [row, col] = w::accumulatorAt(i, j);
      registers[size_t(i * w::kRegisters + j)] = d[size_t(row * w::kN + col)];
    }
  EXPECT_EQ(w::asMatrix(registers), d);
}

} // namespace
