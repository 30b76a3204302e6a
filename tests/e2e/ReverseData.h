//===- ReverseData.h - the reverse task's data, written for `--data` -----===//

#ifndef TFC_TESTS_E2E_REVERSEDATA_H
#define TFC_TESTS_E2E_REVERSEDATA_H

#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

namespace tfc::e2e {

/// DIR/SPLIT/{tokens,labels}.npy for each split of `samples`: sequences of 16
/// digits (from `seed`) and their reversals, for `train --data DIR`.
inline void writeReverseData(const std::string &dir, const std::map<std::string, int64_t> &samples,
                             unsigned seed = 11) {
  std::mt19937 rng(seed);
  for (auto &[split, n] : samples) {
    ASSERT_EQ(run("mkdir -p " + dir + "/" + split).status, 0);
    rt::Tensor tokens(rt::DType::I32, {n, 16}), labels(rt::DType::I32, {n, 16});
    for (int64_t i = 0; i < n * 16; ++i)
      tokens.i32()[i] = int32_t(rng() % 10);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t t = 0; t < 16; ++t)
        labels.i32()[i * 16 + t] = tokens.i32()[i * 16 + 15 - t];
    std::string error;
    ASSERT_TRUE(rt::writeNpy(dir + "/" + split + "/tokens.npy", tokens, error)) << error;
    ASSERT_TRUE(rt::writeNpy(dir + "/" + split + "/labels.npy", labels, error)) << error;
  }
}

} // namespace tfc::e2e

#endif // TFC_TESTS_E2E_REVERSEDATA_H
