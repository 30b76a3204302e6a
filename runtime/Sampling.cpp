//===- Sampling.cpp - drawing the next token from a model's logits --------===//

#include "runtime/Sampling.h"

#include "runtime/Philox.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <vector>

namespace tfc::rt {

double sampleUniform(uint64_t seed, uint64_t step) {
  // 0x67656e ("gen") keeps these draws apart from dropout's counters.
  std::array<uint32_t, 4> words = philox4x32(
      {uint32_t(step), uint32_t(step >> 32), 0x67656eu, 0u}, {uint32_t(seed), uint32_t(seed >> 32)});
  uint64_t bits = (uint64_t(words[0]) << 21) ^ (uint64_t(words[1]) >> 11); // 53 bits
  return double(bits & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}

int32_t sampleToken(const float *logits, int64_t vocab, double temperature, int64_t topK,
                    double u) {
  // Largest first; the lower id first among equal logits, so ties break the
  // same way on every machine.
  auto before = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  if (temperature <= 0) {
    int32_t best = 0;
    for (int32_t i = 1; i < vocab; ++i)
      if (before(i, best))
        best = i;
    return best;
  }
  std::vector<int32_t> ids(vocab);
  std::iota(ids.begin(), ids.end(), 0);
  int64_t keep = topK > 0 && topK < vocab ? topK : vocab;
  std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(), before);
  ids.resize(keep);
  double top = logits[ids[0]], total = 0;
  std::vector<double> weights(keep);
  for (int64_t i = 0; i < keep; ++i)
    total += weights[i] = std::exp((double(logits[ids[i]]) - top) / temperature);
  double target = u * total, cumulative = 0;
  for (int64_t i = 0; i < keep; ++i) {
    cumulative += weights[i];
    if (target < cumulative)
      return ids[i];
  }
  return ids[keep - 1];
}

} // namespace tfc::rt
