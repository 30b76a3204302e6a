//===- DropoutKernelTest.cpp - tfc_dropout_mask against Philox.h ----------===//
//
// The mask generated code applies must be the interpreter's bit for bit:
// element i dropped exactly when dropoutUniform(seed, key, i) < rate, for
// any length (whole and partial groups of four, vector steps of 64), first
// element's index (a rank's share of a data-parallel batch), key, rate and
// thread count.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Dropout.h"
#include "runtime/Philox.h"
#include "runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

TEST(DropoutKernel, MaskIsDropoutUniformBelowRate) {
  const int64_t lengths[] = {1, 3, 4, 5, 63, 64, 65, 127, 1000, 8192 * 4 + 7};
  const uint64_t keys[] = {0, 3, 0xFFFFFFFFull, (uint64_t(5) << 32) | 9};
  // The index of the mask's first element: 0 (one process), a rank's share
  // (not a multiple of 4: partial groups at both ends), and one whose groups
  // cross 2^32 (the counter's high word).
  const int64_t firsts[] = {0, 3, 130, (int64_t(1) << 34) - 70};
  int before = tfc::rt::numThreads();
  for (int threads : {1, 2, 3}) {
    tfc::rt::setNumThreads(threads);
    for (int64_t first : firsts)
      for (int64_t n : lengths)
        for (uint64_t key : keys)
          for (double rate : {0.1, 0.5, 0.9}) {
            const uint32_t seed = uint32_t(n * 2654435761u + key);
            const auto threshold = int64_t(std::ceil(rate * 4294967296.0));
            std::vector<uint8_t> mask(size_t(n) + 1, 7); // one sentinel past the end
            tfc_dropout_mask(intptr_t(mask.data()), n, first, seed, intptr_t(key), threshold);
            int64_t wrong = 0, dropped = 0;
            for (int64_t i = 0; i < n; ++i) {
              bool expected = tfc::dropoutUniform(seed, key, uint64_t(first + i)) < rate;
              wrong += mask[size_t(i)] != uint8_t(expected);
              dropped += expected;
            }
            EXPECT_EQ(wrong, 0) << n << " elements from " << first << ", key " << key << ", rate "
                                << rate << ", " << threads << " threads";
            EXPECT_EQ(mask[size_t(n)], 7) << "wrote past the mask";
            if (n >= 1000) // the stream is uniform: about rate * n dropped
              EXPECT_NEAR(double(dropped) / double(n), rate, 0.05);
          }
  }
  tfc::rt::setNumThreads(before);
}

} // namespace
