//===- Dropout.cpp - dropout masks for generated code ---------------------===//
//
// Philox4x32-10 on 16 counters at once with AVX-512 (64 elements a step);
// other CPUs, and the groups left over, take runtime/Philox.h's scalar code.
// Both give dropoutWords' bits.
//
//===----------------------------------------------------------------------===//

#include "runtime/Dropout.h"
#include "runtime/Philox.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace {

/// Mask bytes of the elements of groups [begin, end) (4 a group, < n).
void scalarGroups(uint8_t *out, int64_t n, uint32_t seed, uint64_t key, uint32_t bound,
                  int64_t begin, int64_t end) {
  for (int64_t g = begin; g < end; ++g) {
    std::array<uint32_t, 4> words = tfc::dropoutWords(seed, key, uint64_t(g));
    for (int64_t i = 4 * g; i < std::min<int64_t>(4 * g + 4, n); ++i)
      out[i] = words[i - 4 * g] < bound;
  }
}

#if defined(__AVX512F__)
/// The high and low halves of the 32 x 32-bit products a * m, lane by lane.
inline void mulHiLo(__m512i a, __m512i m, __m512i &hi, __m512i &lo) {
  __m512i even = _mm512_mul_epu32(a, m);                        // lanes 0, 2, ...
  __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);  // lanes 1, 3, ...
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

/// Groups [begin, begin + 16) whole (64 elements < n, counters below 2^32).
inline void vectorGroups(uint8_t *out, uint32_t seed, uint64_t key, uint32_t bound,
                         int64_t begin) {
  const __m512i m0 = _mm512_set1_epi32(int(0xD2511F53u)), m1 = _mm512_set1_epi32(int(0xCD9E8D57u));
  __m512i c0 = _mm512_add_epi32(_mm512_set1_epi32(int(uint32_t(begin))),
                                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                  13, 14, 15));
  __m512i c1 = _mm512_setzero_si512(), c2 = _mm512_set1_epi32(int(uint32_t(key >> 32)));
  __m512i c3 = _mm512_setzero_si512();
  uint32_t k0 = seed, k1 = uint32_t(key);
  for (int round = 0; round < 10; ++round) {
    __m512i hi0, lo0, hi1, lo1;
    mulHiLo(c0, m0, hi0, lo0);
    mulHiLo(c2, m1, hi1, lo1);
    c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32(int(k0)));
    c1 = lo1;
    c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32(int(k1)));
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  // Lane g's four words decide bytes 4g .. 4g + 3: one little-endian word.
  const __m512i threshold = _mm512_set1_epi32(int(bound));
  __m512i bytes = _mm512_maskz_mov_epi32(_mm512_cmplt_epu32_mask(c0, threshold),
                                         _mm512_set1_epi32(0x1));
  bytes = _mm512_or_si512(bytes, _mm512_maskz_mov_epi32(_mm512_cmplt_epu32_mask(c1, threshold),
                                                        _mm512_set1_epi32(0x100)));
  bytes = _mm512_or_si512(bytes, _mm512_maskz_mov_epi32(_mm512_cmplt_epu32_mask(c2, threshold),
                                                        _mm512_set1_epi32(0x10000)));
  bytes = _mm512_or_si512(bytes, _mm512_maskz_mov_epi32(_mm512_cmplt_epu32_mask(c3, threshold),
                                                        _mm512_set1_epi32(0x1000000)));
  _mm512_storeu_si512(out + 4 * begin, bytes);
}
#endif

} // namespace

extern "C" void tfc_dropout_mask(intptr_t mask, intptr_t n, intptr_t seed, intptr_t key,
                                 intptr_t threshold) {
  auto *out = reinterpret_cast<uint8_t *>(mask);
  const auto seed32 = uint32_t(seed), bound = uint32_t(threshold);
  const auto key64 = uint64_t(key);
  const int64_t groups = (int64_t(n) + 3) / 4;
  tfc::rt::parallelFor(groups, 2048, [&](int64_t begin, int64_t end) {
    int64_t g = begin;
#if defined(__AVX512F__)
    // Whole steps of 16 groups inside [0, n) whose counters fit 32 bits.
    for (; g + 16 <= end && 4 * (g + 16) <= int64_t(n) && g + 16 <= (int64_t(1) << 32); g += 16)
      vectorGroups(out, seed32, key64, bound, g);
#endif
    scalarGroups(out, n, seed32, key64, bound, g, end);
  });
}
