//===- LayerNormKernelTest.cpp - the fused layer-norm backward ------------===//
//
// tfc_layer_norm_backward against the formulas of tf.layer_norm_grad in
// double precision, on widths below, at and around its 16 lanes, the
// models' widths, rows that fill its blocks of 64 partly, once and many
// times; outputs start as NaN. Equal bits for 1, 2 and 3 threads (the
// parameter gradients are summed per block, then in block order), and for a
// row whether the kernel takes it among eight or alone.
//
//===----------------------------------------------------------------------===//

#include "runtime/Philox.h"
#include "runtime/ThreadPool.h"
#include "runtime/cpu/LayerNorm.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

constexpr int64_t kBlockRows = 64;
constexpr float kEps = 1e-5f;

struct Case {
  int64_t rows, d;
  std::vector<float> x, gamma, g;
  Case(int64_t rows, int64_t d, unsigned seed) : rows(rows), d(d), x(rows * d), gamma(d), g(rows * d) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float &v : x)
      v = 3.0f * dist(rng) + 0.5f; // an offset mean, a spread above 1
    for (float &v : gamma)
      v = 1.0f + 0.5f * dist(rng);
    for (float &v : g)
      v = dist(rng);
  }
};

struct Result {
  std::vector<float> dx, dgamma, dbeta;
};

Result run(const Case &c, const void *gate = nullptr, bool gateBits = false) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Result r{std::vector<float>(c.rows * c.d, nan), std::vector<float>(c.d, nan),
           std::vector<float>(c.d, nan)};
  int64_t blocks = (c.rows + kBlockRows - 1) / kBlockRows;
  std::vector<float> scratch(std::max<int64_t>(1, 2 * blocks * c.d), nan);
  tfc_layer_norm_backward(c.rows, c.d, kBlockRows, kEps, intptr_t(c.x.data()),
                          intptr_t(c.gamma.data()), intptr_t(c.g.data()), intptr_t(gate),
                          intptr_t(r.dx.data()), intptr_t(r.dgamma.data()),
                          intptr_t(r.dbeta.data()), intptr_t(scratch.data()), 0, 0, 0, 0, 0, 0, 0,
                          1.0f, intptr_t(gateBits));
  return r;
}

/// The formulas in double.
Result reference(const Case &c, std::vector<double> &dx, std::vector<double> &dgamma,
                 std::vector<double> &dbeta) {
  dx.assign(c.rows * c.d, 0);
  dgamma.assign(c.d, 0);
  dbeta.assign(c.d, 0);
  std::vector<double> xhat(c.d), dxhat(c.d);
  for (int64_t i = 0; i < c.rows; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < c.d; ++j)
      mean += c.x[i * c.d + j] / double(c.d);
    for (int64_t j = 0; j < c.d; ++j)
      var += (c.x[i * c.d + j] - mean) * (c.x[i * c.d + j] - mean) / double(c.d);
    double rstd = 1 / std::sqrt(var + double(kEps)), a = 0, b = 0;
    for (int64_t j = 0; j < c.d; ++j) {
      xhat[j] = (c.x[i * c.d + j] - mean) * rstd;
      dxhat[j] = double(c.g[i * c.d + j]) * c.gamma[j];
      a += dxhat[j] / double(c.d);
      b += dxhat[j] * xhat[j] / double(c.d);
      dgamma[j] += c.g[i * c.d + j] * xhat[j];
      dbeta[j] += c.g[i * c.d + j];
    }
    for (int64_t j = 0; j < c.d; ++j)
      dx[i * c.d + j] = rstd * (dxhat[j] - a - xhat[j] * b);
  }
  return {};
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want, double scale,
                const char *what, int64_t rows, int64_t d) {
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 5; ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-4 * scale) && ++failures)
      ADD_FAILURE() << what << " [" << i << "] of " << rows << "x" << d << " = " << got[i]
                    << ", expected " << want[i];
}

TEST(LayerNormKernel, MatchesTheFormulas) {
  for (auto [rows, d] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {3, 7}, {5, 16}, {2048, 32}, {64, 33}, {65, 64}, {130, 256}, {7, 768}}) {
    Case c(rows, d, unsigned(rows * 31 + d));
    Result r = run(c);
    std::vector<double> dx, dgamma, dbeta;
    reference(c, dx, dgamma, dbeta);
    expectNear(r.dx, dx, 1.0, "dx", rows, d);
    // A parameter gradient sums `rows` terms of magnitude ~1.
    expectNear(r.dgamma, dgamma, std::sqrt(double(rows)), "dgamma", rows, d);
    expectNear(r.dbeta, dbeta, std::sqrt(double(rows)), "dbeta", rows, d);
  }
}

TEST(LayerNormKernel, BitwiseIdenticalForAnyThreadCount) {
  Case c(1000, 48, 9);
  int before = tfc::rt::numThreads();
  tfc::rt::setNumThreads(1);
  Result first = run(c);
  for (int threads : {2, 3}) {
    tfc::rt::setNumThreads(threads);
    Result r = run(c);
    EXPECT_EQ(std::memcmp(r.dx.data(), first.dx.data(), sizeof(float) * r.dx.size()), 0);
    EXPECT_EQ(std::memcmp(r.dgamma.data(), first.dgamma.data(), sizeof(float) * c.d), 0);
    EXPECT_EQ(std::memcmp(r.dbeta.data(), first.dbeta.data(), sizeof(float) * c.d), 0);
  }
  tfc::rt::setNumThreads(before);
}

TEST(LayerNormKernel, RowsByEightsGiveEachRowsOwnBits) {
  // 21 rows: two groups of eight, whose horizontal sums go side by side, and
  // five alone; each row alone again must give its dx bit for bit.
  for (int64_t d : {32, 64, 48, 256}) {
    Case c(21, d, unsigned(d));
    Result all = run(c);
    for (int64_t r = 0; r < c.rows; ++r) {
      Case one(1, d, 0);
      std::copy(c.x.begin() + r * d, c.x.begin() + (r + 1) * d, one.x.begin());
      std::copy(c.g.begin() + r * d, c.g.begin() + (r + 1) * d, one.g.begin());
      one.gamma = c.gamma;
      Result alone = run(one);
      EXPECT_EQ(std::memcmp(alone.dx.data(), all.dx.data() + r * d, sizeof(float) * d), 0)
          << "row " << r << " of d = " << d;
    }
  }
}

// With a gate (a ReLU's output), the adjoint where the gate is above 0 and
// +0 elsewhere: the same bits as the adjoint gated first, tf.select's
// (relu's gradient); a -0, a +0 and a NaN gate close it.
TEST(LayerNormKernel, AGateIsReluGradientsSelect) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t d : {32, 48}) {
    Case c(70, d, unsigned(d) + 5);
    std::vector<float> gate(c.g.size());
    std::mt19937 rng{unsigned(d)};
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float &v : gate)
      v = dist(rng);
    gate[0] = -0.0f, gate[1] = 0.0f, gate[2] = nan, gate[3] = 1e-30f;
    Case gated = c;
    for (size_t i = 0; i < gate.size(); ++i)
      gated.g[i] = gate[i] > 0 ? c.g[i] : 0.0f;
    Result withGate = run(c, gate.data()), first = run(gated);
    EXPECT_EQ(std::memcmp(withGate.dx.data(), first.dx.data(), sizeof(float) * c.g.size()), 0);
    EXPECT_EQ(std::memcmp(withGate.dgamma.data(), first.dgamma.data(), sizeof(float) * d), 0);
    EXPECT_EQ(std::memcmp(withGate.dbeta.data(), first.dbeta.data(), sizeof(float) * d), 0);
    // And not the ungated adjoint's.
    Result ungated = run(c);
    EXPECT_NE(std::memcmp(ungated.dbeta.data(), first.dbeta.data(), sizeof(float) * d), 0);
  }
}

// A gate as the bf16 bits its forward stored (runtime/Abi.h's GateBits):
// the adjoint gated by the bits widened, the same bits as the f32 gate of
// those widened values; a -0, a +0, a NaN and a positive that rounds to a
// bf16 zero (2^-135) close it, the smallest bf16 above zero opens it.
TEST(LayerNormKernel, AGateOfBf16BitsIsTheirWidening) {
  namespace k = tfc::rt::cuda::kernels;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t d : {32, 48}) {
    Case c(70, d, unsigned(d) + 9);
    std::vector<float> gate(c.g.size());
    std::mt19937 rng{unsigned(d) + 1};
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float &v : gate)
      v = dist(rng);
    gate[0] = -0.0f, gate[1] = 0.0f, gate[2] = nan, gate[3] = std::ldexp(1.0f, -135);
    gate[4] = std::ldexp(1.0f, -133);
    std::vector<uint16_t> bits(gate.size());
    std::vector<float> widened(gate.size());
    for (size_t i = 0; i < gate.size(); ++i) {
      bits[i] = k::bf16Bits(gate[i]);
      widened[i] = k::bf16Float(bits[i]);
    }
    ASSERT_EQ(widened[3], 0.0f);
    ASSERT_GT(widened[4], 0.0f);
    Case gated = c;
    for (size_t i = 0; i < gate.size(); ++i)
      gated.g[i] = widened[i] > 0 ? c.g[i] : 0.0f;
    Result withBits = run(c, bits.data(), true), first = run(gated), f32 = run(c, widened.data());
    EXPECT_EQ(std::memcmp(withBits.dx.data(), first.dx.data(), sizeof(float) * c.g.size()), 0);
    EXPECT_EQ(std::memcmp(withBits.dgamma.data(), first.dgamma.data(), sizeof(float) * d), 0);
    EXPECT_EQ(std::memcmp(withBits.dbeta.data(), first.dbeta.data(), sizeof(float) * d), 0);
    EXPECT_EQ(std::memcmp(withBits.dx.data(), f32.dx.data(), sizeof(float) * c.g.size()), 0);
    // The bits read as floats would be another gate.
    Result misread = run(c, bits.data());
    EXPECT_NE(std::memcmp(misread.dbeta.data(), first.dbeta.data(), sizeof(float) * d), 0);
  }
}

// The forward's y16 (tf-bf16-gemm-operands' copy beside its producer): each
// value's bf16Bits, y itself the same bits as without it, with and without
// the relu.
TEST(LayerNormKernel, ForwardWritesBf16BitsBesideY) {
  Case c(37, 48, 11);
  std::vector<float> beta(c.d);
  for (int64_t j = 0; j < c.d; ++j)
    beta[j] = 0.25f * float(j % 5) - 0.5f;
  for (intptr_t relu : {0, 1}) {
    std::vector<float> y(c.x.size()), plain(c.x.size());
    std::vector<uint16_t> bits(c.x.size(), 0xffff);
    tfc_layer_norm_forward(c.rows, c.d, kEps, intptr_t(c.x.data()), intptr_t(c.gamma.data()),
                           intptr_t(beta.data()), intptr_t(plain.data()), relu, 0, 0, 0, 0, 0, 0, 0,
                           0, 1.0f);
    tfc_layer_norm_forward(c.rows, c.d, kEps, intptr_t(c.x.data()), intptr_t(c.gamma.data()),
                           intptr_t(beta.data()), intptr_t(y.data()), relu, intptr_t(bits.data()),
                           0, 0, 0, 0, 0, 0, 0, 1.0f);
    EXPECT_EQ(std::memcmp(y.data(), plain.data(), sizeof(float) * y.size()), 0) << relu;
    size_t wrong = 0, nonzero = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      wrong += bits[i] != tfc::rt::cuda::kernels::bf16Bits(y[i]);
      nonzero += bits[i] != 0;
    }
    EXPECT_EQ(wrong, 0u) << relu;
    EXPECT_GT(nonzero, y.size() / 4) << relu;
    // Without y, the bits alone: the same bits.
    std::vector<uint16_t> alone(c.x.size(), 0xffff);
    tfc_layer_norm_forward(c.rows, c.d, kEps, intptr_t(c.x.data()), intptr_t(c.gamma.data()),
                           intptr_t(beta.data()), 0, relu, intptr_t(alone.data()), 0, 0, 0, 0, 0, 0,
                           0, 1.0f);
    EXPECT_EQ(alone, bits) << relu;
  }
}

// The forward's residual sum (runtime/Abi.h's layer_norm): pre = residual +
// tf.dropout(x), element i drawn as Philox.h's element first + i of the
// op, then the norm of pre: the same bits as the plain forward of the sum
// made by hand, in place too (pre the residual's buffer); a key off by
// one changes them.
TEST(LayerNormKernel, ForwardMakesTheResidualSumFirst) {
  Case c(37, 48, 13);
  std::vector<float> residual(c.x.size()), beta(c.d);
  for (int64_t j = 0; j < c.d; ++j)
    beta[j] = 0.125f * float(j % 3);
  for (size_t i = 0; i < residual.size(); ++i)
    residual[i] = 0.125f * float(i % 11) - 0.5f;
  const int32_t seed = 1234, offset = 3;
  const int64_t sampleSize = 48 * 7;
  const double rate = 0.25;
  const uint32_t threshold = tfc::dropoutThreshold(rate);
  const uint64_t key = 5, first = uint64_t(offset) * sampleSize;
  auto sumByHand = [&](uint64_t k) {
    std::vector<float> sum(c.x.size());
    for (size_t i = 0; i < sum.size(); ++i) {
      const bool drop = tfc::dropoutUniform(uint32_t(seed), k, first + i) < rate;
      sum[i] = residual[i] + (drop ? 0.0f : c.x[i] / float(1.0 - rate));
    }
    return sum;
  };
  const std::vector<float> sum = sumByHand(key);
  std::vector<float> plain(c.x.size()), y(c.x.size()), pre(c.x.size(), -1.0f);
  tfc_layer_norm_forward(c.rows, c.d, kEps, intptr_t(sum.data()), intptr_t(c.gamma.data()),
                         intptr_t(beta.data()), intptr_t(plain.data()), 0, 0, 0, 0, 0, 0, 0, 0, 0,
                         1.0f);
  auto fused = [&](uint64_t k, float *preAt) {
    tfc_layer_norm_forward(
        c.rows, c.d, kEps, intptr_t(c.x.data()), intptr_t(c.gamma.data()), intptr_t(beta.data()),
        intptr_t(y.data()), 0, 0, intptr_t(residual.data()), intptr_t(preAt), intptr_t(&seed),
        intptr_t(&offset), sampleSize, intptr_t(k), intptr_t(threshold), float(1.0 - rate));
  };
  fused(key, pre.data());
  EXPECT_EQ(std::memcmp(pre.data(), sum.data(), sizeof(float) * sum.size()), 0);
  EXPECT_EQ(std::memcmp(y.data(), plain.data(), sizeof(float) * y.size()), 0);
  size_t dropped = 0;
  for (size_t i = 0; i < sum.size(); ++i)
    dropped += sum[i] == residual[i];
  EXPECT_GT(dropped, sum.size() / 8);
  EXPECT_LT(dropped, sum.size() / 2);
  const std::vector<float> residualBefore = residual;
  fused(key, residual.data()); // in place: pre is the residual's buffer
  EXPECT_EQ(std::memcmp(residual.data(), sum.data(), sizeof(float) * sum.size()), 0);
  EXPECT_EQ(std::memcmp(y.data(), plain.data(), sizeof(float) * y.size()), 0);
  residual = residualBefore;
  fused(key + 1, pre.data());
  EXPECT_NE(std::memcmp(y.data(), plain.data(), sizeof(float) * y.size()), 0);
}

} // namespace
