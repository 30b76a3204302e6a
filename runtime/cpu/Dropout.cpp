//===- Dropout.cpp - dropout masks for generated code ---------------------===//
//
// Philox4x32-10 on 32 counters at once with AVX-512 (128 elements a step),
// on 16 with AVX2 (64 elements); other CPUs, and the groups left over, take
// runtime/Philox.h's scalar code. All give dropoutWords' bits.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Dropout.h"
#include "runtime/Philox.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace {

/// Mask bytes of the elements of groups [begin, end) (4 a group) that lie in
/// [first, first + n): element i in byte out[i - first].
void scalarGroups(uint8_t *out, int64_t n, int64_t first, uint32_t seed, uint64_t key,
                  uint32_t bound, int64_t begin, int64_t end) {
  for (int64_t g = begin; g < end; ++g) {
    std::array<uint32_t, 4> words = tfc::dropoutWords(seed, key, uint64_t(g));
    for (int64_t i = std::max(4 * g, first); i < std::min(4 * g + 4, first + n); ++i)
      out[i - first] = words[i - 4 * g] < bound;
  }
}

#if defined(__AVX512F__)
/// Groups [begin, begin + 16 * kSets) whole (64 * kSets bytes of the mask
/// from `dst` on, counters below 2^32), eight a vector: group begin + 2i + j
/// of set pair s in lane i of set 2s + j. Each word sits in the low half of a 64-bit lane,
/// so a 32 x 32-bit product fills its lane whole (_mm512_mul_epu32 reads
/// only the low halves): its low word is the product as it stands, its high
/// word one shift away, and what the other ops leave in the high halves is
/// never read. (Sixteen groups in 32-bit lanes took two multiplies, three
/// shifts and two blends a product.) The sets' rounds interleave, so that
/// the multiplies' latency is hidden: 0.57 -> 0.40 ns an element on Zen 4.
constexpr int kSetPairs = 2;
constexpr int64_t kStepGroups = 16 * kSetPairs; // the groups a call draws
inline void vectorGroups(uint8_t *dst, uint32_t seed, uint64_t key, uint32_t bound,
                         int64_t begin) {
  constexpr int kSets = 2 * kSetPairs;
  const __m512i m0 = _mm512_set1_epi64(0xD2511F53), m1 = _mm512_set1_epi64(0xCD9E8D57);
  const __m512i lanes = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  __m512i c0[kSets], c1[kSets], c2[kSets], c3[kSets];
  for (int s = 0; s < kSets; ++s) {
    const int64_t group = begin + 16 * (s / 2) + (s % 2);
    c0[s] = _mm512_add_epi64(_mm512_set1_epi64(int64_t(uint32_t(group))), lanes);
    c1[s] = c3[s] = _mm512_setzero_si512();
    c2[s] = _mm512_set1_epi64(int64_t(key >> 32));
  }
  uint32_t k0 = seed, k1 = uint32_t(key);
  for (int round = 0; round < 10; ++round) {
    const __m512i key0 = _mm512_set1_epi32(int(k0)), key1 = _mm512_set1_epi32(int(k1));
#pragma GCC unroll 8
    for (int s = 0; s < kSets; ++s) {
      const __m512i p0 = _mm512_mul_epu32(c0[s], m0), p1 = _mm512_mul_epu32(c2[s], m1);
      // 0x96: a ^ b ^ c.
      c0[s] = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p1, 32), c1[s], key0, 0x96);
      c2[s] = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p0, 32), c3[s], key1, 0x96);
      c1[s] = p1;
      c3[s] = p0;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  const __m512i threshold = _mm512_set1_epi32(int(bound));
  for (int pair = 0; pair < kSetPairs; ++pair) {
    // Lane 2i of a merged word is the even set's lane i, lane 2i + 1 the odd
    // set's: sixteen groups in order.
    const int e = 2 * pair, o = e + 1;
    auto word = [&](const __m512i *c) {
      return _mm512_mask_blend_epi32(0xAAAA, c[e], _mm512_slli_epi64(c[o], 32));
    };
    // Lane g's four words decide bytes 4g .. 4g + 3: one little-endian word.
    __m512i bytes = _mm512_maskz_mov_epi32(_mm512_cmplt_epu32_mask(word(c0), threshold),
                                           _mm512_set1_epi32(0x1));
    bytes =
        _mm512_or_si512(bytes, _mm512_maskz_mov_epi32(_mm512_cmplt_epu32_mask(word(c1), threshold),
                                                      _mm512_set1_epi32(0x100)));
    bytes =
        _mm512_or_si512(bytes, _mm512_maskz_mov_epi32(_mm512_cmplt_epu32_mask(word(c2), threshold),
                                                      _mm512_set1_epi32(0x10000)));
    bytes =
        _mm512_or_si512(bytes, _mm512_maskz_mov_epi32(_mm512_cmplt_epu32_mask(word(c3), threshold),
                                                      _mm512_set1_epi32(0x1000000)));
    _mm512_storeu_si512(dst + 64 * pair, bytes);
  }
}
#elif defined(__AVX2__)
/// vectorGroups with four 64-bit lanes a vector: groups [begin, begin + 8 *
/// kSetPairs) whole, group begin + 8s + 2i + j in lane i of set 2s + j (no
/// ternary logic: two XORs; no unsigned compare: both sides' sign bits
/// flipped). About 1.0 ns an element on a Zen 3 core, against 4.4 for the
/// scalar code, which had taken 13% of set anomaly's train step there.
constexpr int kSetPairs = 2;
constexpr int64_t kStepGroups = 8 * kSetPairs;
inline void vectorGroups(uint8_t *dst, uint32_t seed, uint64_t key, uint32_t bound, int64_t begin) {
  constexpr int kSets = 2 * kSetPairs;
  const __m256i m0 = _mm256_set1_epi64x(0xD2511F53), m1 = _mm256_set1_epi64x(0xCD9E8D57);
  const __m256i lanes = _mm256_setr_epi64x(0, 2, 4, 6);
  __m256i c0[kSets], c1[kSets], c2[kSets], c3[kSets];
  for (int s = 0; s < kSets; ++s) {
    const int64_t group = begin + 8 * (s / 2) + (s % 2);
    c0[s] = _mm256_add_epi64(_mm256_set1_epi64x(int64_t(uint32_t(group))), lanes);
    c1[s] = c3[s] = _mm256_setzero_si256();
    c2[s] = _mm256_set1_epi64x(int64_t(key >> 32));
  }
  uint32_t k0 = seed, k1 = uint32_t(key);
  for (int round = 0; round < 10; ++round) {
    const __m256i key0 = _mm256_set1_epi32(int(k0)), key1 = _mm256_set1_epi32(int(k1));
#pragma GCC unroll 8
    for (int s = 0; s < kSets; ++s) {
      const __m256i p0 = _mm256_mul_epu32(c0[s], m0), p1 = _mm256_mul_epu32(c2[s], m1);
      c0[s] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[s]), key0);
      c2[s] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[s]), key1);
      c1[s] = p1;
      c3[s] = p0;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  const __m256i sign = _mm256_set1_epi32(int(0x80000000u));
  const __m256i threshold = _mm256_xor_si256(_mm256_set1_epi32(int(bound)), sign);
  for (int pair = 0; pair < kSetPairs; ++pair) {
    const int e = 2 * pair, o = e + 1;
    // Lane 2i of a merged word is the even set's lane i, lane 2i + 1 the odd
    // set's: eight groups in order; a lane's byte 1 where the word < bound.
    auto byte = [&](const __m256i *c, int value) {
      const __m256i word = _mm256_blend_epi32(c[e], _mm256_slli_epi64(c[o], 32), 0xAA);
      const __m256i below = _mm256_cmpgt_epi32(threshold, _mm256_xor_si256(word, sign));
      return _mm256_and_si256(below, _mm256_set1_epi32(value));
    };
    const __m256i bytes = _mm256_or_si256(_mm256_or_si256(byte(c0, 0x1), byte(c1, 0x100)),
                                          _mm256_or_si256(byte(c2, 0x10000), byte(c3, 0x1000000)));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + 32 * pair), bytes);
  }
}
#endif

} // namespace

extern "C" void tfc_dropout_mask(intptr_t mask, intptr_t n, intptr_t first, intptr_t seed,
                                 intptr_t key, intptr_t threshold) {
  auto *out = reinterpret_cast<uint8_t *>(mask);
  const auto seed32 = uint32_t(seed), bound = uint32_t(threshold);
  const auto key64 = uint64_t(key);
  // The groups elements [first, first + n) fall in (the first and the last
  // may be partial when first is not a multiple of 4).
  const int64_t firstGroup = int64_t(first) / 4, lastGroup = (int64_t(first) + n + 3) / 4;
  tfc::rt::parallelFor(lastGroup - firstGroup, 2048, [&](int64_t begin, int64_t end) {
    int64_t g = firstGroup + begin;
#if defined(__AVX512F__) || defined(__AVX2__)
    // Whole steps of a vector's groups inside [first, first + n) whose
    // counters fit 32 bits.
    constexpr int64_t step = kStepGroups;
    for (; g < firstGroup + end && 4 * g < int64_t(first); ++g)
      scalarGroups(out, n, first, seed32, key64, bound, g, g + 1);
    for (; g + step <= firstGroup + end && 4 * (g + step) <= int64_t(first) + n &&
           g + step <= (int64_t(1) << 32);
         g += step)
      vectorGroups(out + (4 * g - first), seed32, key64, bound, g);
#endif
    scalarGroups(out, n, first, seed32, key64, bound, g, firstGroup + end);
  });
}
