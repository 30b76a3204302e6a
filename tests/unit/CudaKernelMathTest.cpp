//===- CudaKernelMathTest.cpp - the CUDA kernels' math against the CPU ----===//
//
// The hand-written CUDA kernels (runtime/cuda/kernels/*.cu) do their
// arithmetic through KernelMath.h's __host__ __device__ functions. Here the
// host runs those functions composed as the kernels compose them (a lane a
// column, KernelMath.h's butterflySum where a kernel has warpSum; attention's
// key tiles of 64 and attentionTileSum, the same FMA chains) and compares the results with the CPU
// kernels (runtime/cpu/): the dropout mask bit for bit, layer norm, cross-
// entropy and attention within float tolerances. With -ffp-contract=off here
// and -fmad=false for nvcc, these are the roundings the GPU makes; what only
// a GPU can check (the launch geometry, shuffles, shared memory) is
// tools/gpu/kernel_check.cpp's.
//
//===----------------------------------------------------------------------===//

#include "runtime/Philox.h"
#include "runtime/cpu/Attention.h"
#include "runtime/cpu/CrossEntropy.h"
#include "runtime/cpu/Dropout.h"
#include "runtime/cpu/LayerNorm.h"
#include "runtime/cuda/kernels/KernelMath.h"
#include "tests/unit/AttentionProblem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using namespace tfc::rt::cuda::kernels;
using namespace tfc::test;
using Problem = AttentionProblem;
using Shape = AttentionShape;

constexpr int W = kWarp;

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

TEST(CudaKernelMath, PhiloxWordsAreRuntimePhilox) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 2000; ++trial) {
    const uint32_t seed = uint32_t(rng());
    const uint64_t group = trial % 2 ? rng() : rng() % 4096;
    const uint64_t key = trial % 3 ? rng() : rng() % 64;
    const std::array<uint32_t, 4> expected = tfc::dropoutWords(seed, key, group);
    const PhiloxWords got = dropoutWords(seed, key, group);
    for (int w = 0; w < 4; ++w)
      ASSERT_EQ(got.w[w], expected[size_t(w)]) << "seed " << seed << " key " << key;
  }
}

/// The mask kernel, a thread a group (from the group of element `first`),
/// against tfc_dropout_mask.
TEST(CudaKernelMath, DropoutMaskIsTheCpuMask) {
  for (int64_t first : {int64_t(0), int64_t(6), (int64_t(1) << 34) - 10})
    for (int64_t n : {1, 3, 4, 5, 63, 64, 65, 1000, 4099})
      for (uint64_t key : {uint64_t(0), uint64_t(7), (uint64_t(3) << 32) | 11})
        for (double rate : {0.1, 0.5}) {
          const uint32_t seed = uint32_t(n * 2654435761u + key);
          const auto threshold = int64_t(std::ceil(rate * 4294967296.0));
          std::vector<uint8_t> cpu(static_cast<size_t>(n)), gpu(static_cast<size_t>(n), 7);
          tfc_dropout_mask(intptr_t(cpu.data()), n, first, seed, intptr_t(key), threshold);
          for (int64_t group = first / 4; group < (first + n + 3) / 4; ++group) {
            const PhiloxWords words = dropoutWords(seed, key, uint64_t(group));
            for (int e = 0; e < 4; ++e)
              if (4 * group + e >= first && 4 * group + e < first + n)
                gpu[size_t(4 * group + e - first)] = dropped(words.w[e], uint32_t(threshold));
          }
          ASSERT_EQ(gpu, cpu) << "n " << n << " from " << first << " key " << key << " rate "
                              << rate;
        }
}

//===----------------------------------------------------------------------===//
// exp and the butterfly
//===----------------------------------------------------------------------===//

TEST(CudaKernelMath, ExpApproxIsCloseToExp) {
  double worst = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.0137f) {
    const double exact = std::exp(double(x));
    worst = std::max(worst, std::fabs(double(expApprox(x)) - exact) / exact);
  }
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(expApprox(-INFINITY), 0.0f);
  EXPECT_EQ(expApprox(kMaskedScore), 0.0f);
  EXPECT_EQ(expApprox(0.0f), 1.0f);
}

// The host side of fastExp2 (the GPU's is ex2.approx.ftz.f32, which
// tools/gpu/kernel_check.cpp exercises through the tensor-core attention).
TEST(CudaKernelMath, FastExp2IsExp2FlushedToZero) {
  double worst = 0;
  for (float x = -126.0f; x <= 127.0f; x += 0.0137f) {
    const double exact = std::exp2(double(x));
    worst = std::max(worst, std::fabs(double(fastExp2(x)) - exact) / exact);
  }
  EXPECT_LT(worst, 2.4e-7); // 2^-22, the GPU's bound
  EXPECT_EQ(fastExp2(0.0f), 1.0f);
  EXPECT_EQ(fastExp2(-1.0f), 0.5f);
  EXPECT_EQ(fastExp2(10.0f), 1024.0f);
  // Masked scores and keys past tk: exactly +0, as on the GPU.
  EXPECT_EQ(floatBits(fastExp2(-INFINITY)), 0u);
  EXPECT_EQ(floatBits(fastExp2(kMaskedScore)), 0u);
  EXPECT_EQ(floatBits(fastExp2(kMaskedScore - 3.0f)), 0u);
  // Results below 2^-126 (subnormal) flush to +0, as ex2.approx.ftz does.
  EXPECT_EQ(fastExp2(-126.0f), 1.17549435e-38f);
  EXPECT_EQ(floatBits(fastExp2(-126.5f)), 0u);
  EXPECT_EQ(floatBits(fastExp2(-149.0f)), 0u);
  EXPECT_TRUE(std::isnan(fastExp2(NAN)));
  EXPECT_EQ(fastExp2(INFINITY), INFINITY);
  // A fully masked row: every score -9e15, its maximum too, P = 2^0 = 1.
  EXPECT_EQ(fastExp2(kMaskedScore - kMaskedScore), 1.0f);
}

TEST(CudaKernelMath, ButterflySumAddsEveryLane) {
  float lanes[W];
  for (int l = 0; l < W; ++l)
    lanes[l] = float(l + 1);
  EXPECT_EQ(butterflySum(lanes), 528.0f);
}

TEST(CudaKernelMath, AttentionTileSumAddsEveryValueInTheKernelsOrder) {
  float x[kAttentionRows];
  for (int j = 0; j < kAttentionRows; ++j)
    x[j] = float(j + 1);
  EXPECT_EQ(attentionTileSum(x), 2080.0f);
  // Thread 0 adds 2^24 + 1 + 1 + 1 one at a time (each 1 rounds away: 2^24)
  // before the butterflies; summed the other way round the 1s would count.
  for (float &v : x)
    v = 0.0f;
  x[0] = 16777216.0f;
  x[1] = x[2] = x[3] = 1.0f;
  EXPECT_EQ(attentionTileSum(x), 16777216.0f);
}

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

/// The warp's sum of f(j) over j < d, lane l taking l, l + 32, ... in
/// order: what a kernel's lane loop and warpSum compute.
template <typename F>
float warpLoopSum(int64_t d, F &&term) {
  float lanes[W] = {};
  for (int l = 0; l < W; ++l)
    for (int64_t j = l; j < d; j += W)
      lanes[l] = term(j, lanes[l]);
  return butterflySum(lanes);
}

/// tfc_cuda_layer_norm_forward_kernel on the host.
std::vector<float> layerNormForward(const std::vector<float> &x, const std::vector<float> &gamma,
                                    const std::vector<float> &beta, int64_t rows, int64_t d,
                                    float eps) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x.data() + r * d;
    const float mean =
        layerNormMean(warpLoopSum(d, [&](int64_t j, float acc) { return acc + xr[j]; }), d);
    const float squares = warpLoopSum(
        d, [&](int64_t j, float acc) { return acc + layerNormSquare(xr[j], mean); });
    const float rstd = layerNormRstd(squares, d, eps);
    for (int64_t j = 0; j < d; ++j)
      y[size_t(r * d + j)] = layerNormOut(xr[j], mean, rstd, gamma[size_t(j)], beta[size_t(j)]);
  }
  return y;
}

TEST(CudaKernelMath, LayerNormForwardIsTheOpsDefinition) {
  std::mt19937 rng(2);
  for (int64_t d : {7, 32, 64, 100, 256}) {
    const int64_t rows = 13;
    const float eps = 1e-5f;
    std::vector<float> x = randomFloats(size_t(rows * d), rng, 3.0f);
    for (float &v : x)
      v += 2.0f; // an offset, so the centring matters
    const std::vector<float> gamma = randomFloats(size_t(d), rng), beta = randomFloats(size_t(d), rng);
    const std::vector<float> y = layerNormForward(x, gamma, beta, rows, d, eps);
    // The interpreter's formulas in double (Interpreter.cpp layerNorm).
    std::vector<float> expected(y.size());
    for (int64_t r = 0; r < rows; ++r) {
      double mu = 0, var = 0;
      for (int64_t j = 0; j < d; ++j)
        mu += x[size_t(r * d + j)] / double(d);
      for (int64_t j = 0; j < d; ++j)
        var += (x[size_t(r * d + j)] - mu) * (x[size_t(r * d + j)] - mu) / double(d);
      for (int64_t j = 0; j < d; ++j)
        expected[size_t(r * d + j)] =
            float((x[size_t(r * d + j)] - mu) / std::sqrt(var + eps) * gamma[size_t(j)] +
                  beta[size_t(j)]);
    }
    EXPECT_LT(relativeError(y, expected), 2e-6) << "d " << d;
  }
}

TEST(CudaKernelMath, LayerNormBackwardIsTheCpuKernel) {
  std::mt19937 rng(3);
  for (int64_t d : {7, 32, 64, 100, 256})
    for (int64_t blockRows : {1, 8, 40}) {
      const int64_t rows = 37, blocks = (rows + blockRows - 1) / blockRows;
      const float eps = 1e-5f, invD = 1.0f / float(d);
      const std::vector<float> x = randomFloats(size_t(rows * d), rng, 2.0f),
                               g = randomFloats(size_t(rows * d), rng),
                               gamma = randomFloats(size_t(d), rng);
      std::vector<float> dx(x.size()), dgamma(static_cast<size_t>(d)), dbeta(static_cast<size_t>(d)),
          scratch(static_cast<size_t>(2 * blocks * d));
      tfc_layer_norm_backward(rows, d, blockRows, eps, intptr_t(x.data()), intptr_t(gamma.data()),
                              intptr_t(g.data()), 0, intptr_t(dx.data()), intptr_t(dgamma.data()),
                              intptr_t(dbeta.data()), intptr_t(scratch.data()), 0, 0, 0, 0, 0, 0, 0,
                              1.0f, 0);
      // tfc_cuda_layer_norm_backward_kernel: a warp a row for the statistics
      // and dx, a thread a column for the block's partials (rows in order),
      // then the reduce kernel (blocks in order).
      std::vector<float> gdx(x.size()), partial(size_t(2 * blocks * d), 0.0f);
      std::vector<float> means(static_cast<size_t>(rows)), rstds(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x.data() + r * d, *gr = g.data() + r * d;
        const float mean = warpLoopSum(d, [&](int64_t j, float a) { return a + xr[j]; }) * invD;
        const float squares = warpLoopSum(d, [&](int64_t j, float a) {
          const float c = xr[j] - mean;
          return fusedMulAdd(c, c, a);
        });
        const float rstd = layerNormBackwardRstd(squares, invD, eps);
        const float a = warpLoopSum(d, [&](int64_t j, float acc) {
                          return acc + gr[j] * gamma[size_t(j)];
                        }) * invD;
        const float b = warpLoopSum(d, [&](int64_t j, float acc) {
                          return fusedMulAdd(gr[j] * gamma[size_t(j)],
                                             layerNormXhat(xr[j], mean, rstd), acc);
                        }) * invD;
        for (int64_t j = 0; j < d; ++j)
          gdx[size_t(r * d + j)] = layerNormDx(gr[j] * gamma[size_t(j)],
                                               layerNormXhat(xr[j], mean, rstd), rstd, a, b);
        means[size_t(r)] = mean;
        rstds[size_t(r)] = rstd;
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t block = r / blockRows;
        for (int64_t j = 0; j < d; ++j) {
          const float gj = g[size_t(r * d + j)];
          float &pg = partial[size_t(block * d + j)], &pb = partial[size_t((blocks + block) * d + j)];
          pg = fusedMulAdd(gj, layerNormXhat(x[size_t(r * d + j)], means[size_t(r)], rstds[size_t(r)]),
                           pg);
          pb += gj;
        }
      }
      std::vector<float> gdgamma(size_t(d), 0.0f), gdbeta(size_t(d), 0.0f);
      for (int64_t block = 0; block < blocks; ++block)
        for (int64_t j = 0; j < d; ++j) {
          gdgamma[size_t(j)] += partial[size_t(block * d + j)];
          gdbeta[size_t(j)] += partial[size_t((blocks + block) * d + j)];
        }
      EXPECT_LT(relativeError(gdx, dx), 1e-5) << "d " << d << " blockRows " << blockRows;
      EXPECT_LT(relativeError(gdgamma, dgamma), 1e-5) << "d " << d;
      EXPECT_LT(relativeError(gdbeta, dbeta), 1e-6) << "d " << d;
    }
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

TEST(CudaKernelMath, CrossEntropyRowIsLogSoftmax) {
  std::mt19937 rng(4);
  for (int64_t classes : {1, 2, 10, 33, 1000}) {
    const std::vector<float> x = randomFloats(size_t(classes), rng, 4.0f);
    // The forward kernel's row: the maximum, then Σ exp(x - max) by lanes.
    float m = -INFINITY;
    for (float v : x)
      m = maxOf(m, v);
    const float sumExp = warpLoopSum(
        classes, [&](int64_t c, float acc) { return acc + expApprox(x[size_t(c)] - m); });
    double dm = -INFINITY, ds = 0;
    for (float v : x)
      dm = std::max(dm, double(v));
    for (float v : x)
      ds += std::exp(v - dm);
    for (int32_t label : {-3, 0, int32_t(classes / 2), int32_t(classes - 1), int32_t(classes + 5)}) {
      const int64_t at = clampLabel(label, classes);
      ASSERT_EQ(at, std::clamp<int64_t>(label, 0, classes - 1));
      const double expected = -((x[size_t(at)] - dm) - std::log(ds));
      EXPECT_NEAR(crossEntropyLoss(x[size_t(at)], m, sumExp), expected,
                  2e-6 * std::max(1.0, std::fabs(expected)))
          << "classes " << classes;
      const float coef = 0.25f;
      for (int64_t c = 0; c < classes; ++c) {
        const double p = std::exp(x[size_t(c)] - dm) / ds;
        EXPECT_NEAR(crossEntropyGrad(x[size_t(c)], m, sumExp, c == at, coef),
                    (p - (c == at ? 1.0 : 0.0)) * coef, 1e-7);
      }
    }
  }
}

/// Logits laid out [outer, classes, inner].
struct Layout {
  int64_t outer, classes, inner;
};

/// A cross-entropy twin's inputs for `l`: N(0, 3) logits, labels from -2 to
/// classes + 1 (out of range ones are clamped), the mean over every row, an
/// upstream gradient of 0.75.
struct CrossEntropyInputs {
  int64_t rows, n;
  std::vector<float> x;
  std::vector<int32_t> labels;
  float count, dloss;
};

CrossEntropyInputs crossEntropyInputs(const Layout &l, std::mt19937 &rng) {
  const int64_t rows = l.outer * l.inner, n = rows * l.classes;
  std::vector<int32_t> labels(static_cast<size_t>(rows));
  std::vector<float> x = randomFloats(size_t(n), rng, 3.0f);
  std::uniform_int_distribution<int32_t> label(-2, int32_t(l.classes) + 1);
  for (int32_t &y : labels)
    y = label(rng);
  return {rows, n, std::move(x), std::move(labels), float(rows), 0.75f};
}

/// The CPU twins tfc_cross_entropy and tfc_cross_entropy_backward (what
/// --target=cuda-emulated calls for the CUDA kernels) on logits laid out
/// [outer, classes, inner], labels out of range included (clamped): the
/// loss and dlogits against tf.cross_entropy's and tf.cross_entropy_grad's
/// definitions in double (the interpreter's), and dlogits against the
/// backward kernel's rows composed on the host (Σ exp by lanes).
TEST(CudaKernelMath, CrossEntropyTwinsAreTheOpsDefinitions) {
  std::mt19937 rng(5);
  for (Layout l : {Layout{37, 10, 1}, Layout{4, 7, 6}, Layout{1, 33, 5}, Layout{3, 1, 2},
                   Layout{2, 1000, 1}}) {
    SCOPED_TRACE(testing::Message() << "outer " << l.outer << " classes " << l.classes
                                    << " inner " << l.inner);
    const auto [rows, n, x, labels, count, dloss] = crossEntropyInputs(l, rng);
    std::vector<float> dx(static_cast<size_t>(n), NAN), losses(static_cast<size_t>(rows));
    float loss = NAN;
    tfc_cross_entropy(l.outer, l.classes, l.inner, count, intptr_t(x.data()),
                      intptr_t(labels.data()), intptr_t(losses.data()), intptr_t(&loss));
    tfc_cross_entropy_backward(l.outer, l.classes, l.inner, count, intptr_t(x.data()),
                               intptr_t(labels.data()), intptr_t(&dloss), intptr_t(dx.data()));
    std::vector<float> expected(static_cast<size_t>(n)), kernel(static_cast<size_t>(n));
    double expectedLoss = 0;
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t o = row / l.inner, i = row % l.inner;
      auto at = [&](int64_t c) { return size_t((o * l.classes + c) * l.inner + i); };
      const int64_t y = std::clamp<int64_t>(labels[size_t(row)], 0, l.classes - 1);
      double m = -INFINITY, s = 0;
      for (int64_t c = 0; c < l.classes; ++c)
        m = std::max(m, double(x[at(c)]));
      for (int64_t c = 0; c < l.classes; ++c)
        s += std::exp(x[at(c)] - m);
      expectedLoss += (std::log(s) - (x[at(y)] - m)) / double(rows);
      for (int64_t c = 0; c < l.classes; ++c)
        expected[at(c)] =
            float((std::exp(x[at(c)] - m) / s - (c == y ? 1.0 : 0.0)) * dloss / double(rows));
      // tfc_cuda_cross_entropy_backward_kernel's row: a lane a class.
      float km = -INFINITY;
      for (int64_t c = 0; c < l.classes; ++c)
        km = maxOf(km, x[at(c)]);
      const float sumExp = warpLoopSum(
          l.classes, [&](int64_t c, float acc) { return acc + expApprox(x[at(c)] - km); });
      for (int64_t c = 0; c < l.classes; ++c)
        kernel[at(c)] = crossEntropyGrad(x[at(c)], km, sumExp, c == y, dloss / count);
    }
    EXPECT_NEAR(loss, expectedLoss, 2e-6 * std::max(1.0, std::fabs(expectedLoss)));
    EXPECT_LT(relativeError(dx, expected), 2e-6);
    EXPECT_LT(relativeError(dx, kernel), 1e-6);
  }
}

/// tfc_cuda_cross_entropy_fused_kernel's warp on the host: each lane's first
/// kCrossEntropyRegisterClasses logits copied once (its registers), the rest
/// read where they are, the maximum, Σ exp by lanes and butterflies, the
/// loss from lane 0 and dlogits from the copies. Against the forward and
/// backward kernels' rows (rowSoftmax: every class read from memory each
/// sweep) it must give the same bits, rows longer than the registers hold
/// included; and the CPU twin tfc_cross_entropy_fused must give
/// tfc_cross_entropy's and tfc_cross_entropy_backward's bits.
TEST(CudaKernelMath, FusedCrossEntropyRowIsTheForwardAndBackwardRows) {
  std::mt19937 rng(6);
  constexpr int R = kCrossEntropyRegisterClasses;
  for (int64_t classes : {int64_t(1), int64_t(10), int64_t(33), int64_t(1000), int64_t(R) * W,
                          int64_t(R) * W + 1, int64_t(1500)}) {
    SCOPED_TRACE(testing::Message() << "classes " << classes);
    const std::vector<float> x = randomFloats(size_t(classes), rng, 5.0f);
    // The fused warp: lane l's registers hold classes l + 32 j, j < R.
    float regs[W][R];
    for (int l = 0; l < W; ++l)
      for (int j = 0; j < R; ++j) {
        const int64_t c = l + int64_t(j) * W;
        regs[l][j] = c < classes ? x[size_t(c)] : 0.0f;
      }
    auto forEach = [&](int l, auto f) {
      for (int j = 0; j < R; ++j)
        if (const int64_t c = l + int64_t(j) * W; c < classes)
          f(c, regs[l][j]);
      for (int64_t c = l + int64_t(R) * W; c < classes; c += W)
        f(c, x[size_t(c)]);
    };
    float laneMax[W], laneSum[W];
    for (int l = 0; l < W; ++l) {
      laneMax[l] = -INFINITY;
      forEach(l, [&](int64_t, float v) { laneMax[l] = maxOf(laneMax[l], v); });
    }
    float fusedMax = -INFINITY;
    for (float m : laneMax)
      fusedMax = maxOf(fusedMax, m);
    for (int l = 0; l < W; ++l) {
      laneSum[l] = 0.0f;
      forEach(l, [&](int64_t, float v) { laneSum[l] += expApprox(v - fusedMax); });
    }
    const float fusedSum = butterflySum(laneSum);
    // The forward and backward kernels' rowSoftmax.
    float m = -INFINITY;
    for (int l = 0; l < W; ++l)
      for (int64_t c = l; c < classes; c += W)
        m = maxOf(m, x[size_t(c)]);
    const float sumExp = warpLoopSum(
        classes, [&](int64_t c, float acc) { return acc + expApprox(x[size_t(c)] - m); });
    ASSERT_EQ(fusedMax, m);
    ASSERT_EQ(fusedSum, sumExp);
    const float coef = 0.75f / 3.0f;
    for (int32_t label : {-1, 0, int32_t(classes / 2), int32_t(classes - 1), int32_t(classes)}) {
      const int64_t y = clampLabel(label, classes);
      EXPECT_EQ(crossEntropyLoss(x[size_t(y)], fusedMax, fusedSum),
                crossEntropyLoss(x[size_t(y)], m, sumExp));
      for (int l = 0; l < W; ++l)
        forEach(l, [&](int64_t c, float v) {
          EXPECT_EQ(crossEntropyGrad(v, fusedMax, fusedSum, c == y, coef),
                    crossEntropyGrad(x[size_t(c)], m, sumExp, c == y, coef))
              << "class " << c;
        });
    }
  }

  for (Layout l : {Layout{37, 10, 1}, Layout{4, 7, 6}, Layout{1, 33, 5}, Layout{3, 1, 2},
                   Layout{2, 1000, 1}, Layout{3, 1100, 2}}) {
    SCOPED_TRACE(testing::Message() << "outer " << l.outer << " classes " << l.classes
                                    << " inner " << l.inner);
    const auto [rows, n, x, labels, count, dloss] = crossEntropyInputs(l, rng);
    std::vector<float> dx(static_cast<size_t>(n), NAN), losses(static_cast<size_t>(rows), NAN);
    std::vector<float> fusedDx(static_cast<size_t>(n), NAN);
    std::vector<float> fusedLosses(static_cast<size_t>(rows), NAN);
    float loss = NAN, fusedLoss = NAN;
    tfc_cross_entropy(l.outer, l.classes, l.inner, count, intptr_t(x.data()),
                      intptr_t(labels.data()), intptr_t(losses.data()), intptr_t(&loss));
    tfc_cross_entropy_backward(l.outer, l.classes, l.inner, count, intptr_t(x.data()),
                               intptr_t(labels.data()), intptr_t(&dloss), intptr_t(dx.data()));
    std::vector<float> corrects(static_cast<size_t>(rows), NAN);
    float accuracy = NAN;
    tfc_cross_entropy_fused(l.outer, l.classes, l.inner, count, intptr_t(x.data()),
                            intptr_t(labels.data()), intptr_t(&dloss), intptr_t(fusedLosses.data()),
                            intptr_t(&fusedLoss), intptr_t(fusedDx.data()),
                            intptr_t(corrects.data()), intptr_t(&accuracy), 0);
    EXPECT_EQ(fusedLoss, loss);
    EXPECT_EQ(fusedLosses, losses);
    for (size_t i = 0; i < dx.size(); ++i)
      ASSERT_EQ(fusedDx[i], dx[i]) << "element " << i;
    // The accuracy: tf.argmax's first maximum against the labels as given.
    float right = 0.0f;
    for (int64_t row = 0; row < rows; ++row) {
      int64_t first = 0;
      float best = -INFINITY;
      for (int64_t c = 0; c < l.classes; ++c) {
        const float v = x[size_t(((row / l.inner) * l.classes + c) * l.inner + row % l.inner)];
        if (v > best) {
          best = v;
          first = c;
        }
      }
      const float want = first == labels[size_t(row)] ? 1.0f : 0.0f;
      ASSERT_EQ(corrects[size_t(row)], want) << "row " << row;
      right += want;
    }
    EXPECT_EQ(accuracy, right / float(rows));
    // Without corrects and accuracy (no accuracy metric): the loss alone.
    fusedLoss = NAN;
    tfc_cross_entropy_fused(l.outer, l.classes, l.inner, count, intptr_t(x.data()),
                            intptr_t(labels.data()), intptr_t(&dloss), intptr_t(fusedLosses.data()),
                            intptr_t(&fusedLoss), intptr_t(fusedDx.data()), 0, 0, 0);
    EXPECT_EQ(fusedLoss, loss);
    // dlogits as bf16 bits alone: bf16Bits of each gradient.
    std::vector<uint16_t> bits(dx.size(), 0xffff);
    tfc_cross_entropy_fused(l.outer, l.classes, l.inner, count, intptr_t(x.data()),
                            intptr_t(labels.data()), intptr_t(&dloss), intptr_t(fusedLosses.data()),
                            intptr_t(&fusedLoss), intptr_t(bits.data()), 0, 0, 1);
    EXPECT_EQ(fusedLoss, loss);
    for (size_t i = 0; i < dx.size(); ++i)
      ASSERT_EQ(bits[i], tfc::rt::cuda::kernels::bf16Bits(dx[i])) << "element " << i;
  }
}

/// tfc_cuda_cross_entropy_fused_kernel's argmax (rowArgmax) on the host: each
/// lane's first maximum over its classes by a strict '>' from -inf, then
/// butterflies keeping the greater value, of equal ones the smaller class,
/// -1 (none) losing to any: on every lane the row's first maximum, as
/// tf.argmax's chain gives it (0 when no logit is above -inf), ties, NaN and
/// -inf included.
TEST(CudaKernelMath, FusedCrossEntropyArgmaxIsTheFirstMaximum) {
  std::mt19937 rng(9);
  auto chain = [](const std::vector<float> &x) {
    float best = -INFINITY;
    int first = 0;
    for (size_t c = 0; c < x.size(); ++c)
      if (x[c] > best) {
        best = x[c];
        first = int(c);
      }
    return first;
  };
  std::vector<std::vector<float>> rows;
  for (int64_t classes : {1, 10, 33, 64, 1000})
    rows.push_back(randomFloats(size_t(classes), rng, 5.0f));
  std::vector<float> ties(100, 1.0f); // every class the maximum: class 0
  rows.push_back(ties);
  ties[37] = ties[70] = 2.0f; // two maxima in different lanes: the first
  rows.push_back(ties);
  ties[5] = 2.0f; // and a third, earlier, in another lane
  rows.push_back(ties);
  rows.push_back(std::vector<float>(40, -INFINITY)); // none above -inf: 0
  std::vector<float> nans(40, NAN);
  rows.push_back(nans); // NaN never wins: 0
  nans[33] = -3.0f;
  rows.push_back(nans);
  for (const std::vector<float> &x : rows) {
    float best[W];
    int first[W];
    for (int l = 0; l < W; ++l) {
      best[l] = -INFINITY;
      first[l] = -1;
      for (size_t c = size_t(l); c < x.size(); c += W)
        if (x[c] > best[l]) {
          best[l] = x[c];
          first[l] = int(c);
        }
    }
    for (int o = W / 2; o > 0; o /= 2) {
      float nextBest[W];
      int nextFirst[W];
      for (int l = 0; l < W; ++l) {
        const float other = best[l ^ o];
        const int otherFirst = first[l ^ o];
        const bool take = other > best[l] || (other == best[l] && otherFirst >= 0 &&
                                              (first[l] < 0 || otherFirst < first[l]));
        nextBest[l] = take ? other : best[l];
        nextFirst[l] = take ? otherFirst : first[l];
      }
      std::copy(nextBest, nextBest + W, best);
      std::copy(nextFirst, nextFirst + W, first);
    }
    for (int l = 0; l < W; ++l)
      ASSERT_EQ(first[l] < 0 ? 0 : first[l], chain(x)) << "lane " << l << " of " << x.size();
  }
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

const uint8_t *maskRow(const Problem &p, int64_t i) {
  return p.mask.empty() ? nullptr : p.mask.data() + i * p.tk;
}

/// tfc_cuda_attention_forward_kernel for query row i of head b: tiles of
/// kAttentionRows keys, the row's sums as its 16 threads add them
/// (attentionTileSum), the output columns' FMA chains over the keys in
/// order (the kernel's zero-padded keys past tk add exactly 0).
constexpr int T = kAttentionRows;

void forwardRow(const Problem &p, int64_t b, int64_t i, float *out) {
  const float *Q = p.q.head(b, p.inner) + i * p.q.row, *K = p.k.head(b, p.inner),
              *V = p.v.head(b, p.inner);
  const uint8_t *M = maskRow(p, i);
  std::vector<float> acc(size_t(p.dv), 0.0f);
  OnlineRow row{-INFINITY, 0.0f, 0.0f};
  for (int64_t j0 = 0; j0 < p.tk; j0 += T) {
    float s[T], prob[T], tileMax = -INFINITY;
    for (int l = 0; l < T; ++l) {
      const int64_t j = j0 + l;
      s[l] = -INFINITY;
      if (j < p.tk) {
        s[l] = attentionScore(Q, K + j * p.k.row, p.d, p.scale);
        if (M && !M[j])
          s[l] = kMaskedScore;
      }
      tileMax = maxOf(tileMax, s[l]);
    }
    const float mNew = maxOf(row.m, tileMax);
    for (int l = 0; l < T; ++l)
      prob[l] = j0 + l < p.tk ? expApprox(s[l] - mNew) : 0.0f;
    const float alpha = onlineAlpha(j0 == 0, row.m, mNew);
    row = onlineFold(row, mNew, alpha, attentionTileSum(prob), 0.0f);
    for (int64_t c = 0; c < p.dv; ++c) {
      acc[size_t(c)] *= alpha;
      for (int64_t t = 0; t < std::min<int64_t>(T, p.tk - j0); ++t)
        acc[size_t(c)] = fusedMulAdd(prob[t], V[(j0 + t) * p.v.row + c], acc[size_t(c)]);
    }
  }
  const float inv = 1.0f / row.l;
  for (int64_t c = 0; c < p.dv; ++c)
    out[c] = acc[size_t(c)] * inv;
}

struct Stats {
  float m, inv, D, scaleLive;
};

/// The backward kernels' tileStats for query row i of head b.
Stats rowStats(const Problem &p, int64_t b, int64_t i) {
  const float *Q = p.q.head(b, p.inner) + i * p.q.row, *K = p.k.head(b, p.inner),
              *V = p.v.head(b, p.inner), *dO = p.dout.head(b, p.inner) + i * p.dout.row;
  const uint8_t *M = maskRow(p, i);
  OnlineRow row{-INFINITY, 0.0f, 0.0f};
  bool live = M == nullptr;
  for (int64_t j0 = 0; j0 < p.tk; j0 += T) {
    float s[T], dp[T], prob[T], pdp[T], tileMax = -INFINITY;
    for (int l = 0; l < T; ++l) {
      const int64_t j = j0 + l;
      s[l] = -INFINITY;
      dp[l] = 0.0f;
      if (j < p.tk) {
        s[l] = attentionScore(Q, K + j * p.k.row, p.d, p.scale);
        dp[l] = attentionDot(dO, V + j * p.v.row, p.dv);
        if (M && !M[j])
          s[l] = kMaskedScore;
        else
          live = true;
      }
      tileMax = maxOf(tileMax, s[l]);
    }
    const float mNew = maxOf(row.m, tileMax);
    for (int l = 0; l < T; ++l) {
      prob[l] = j0 + l < p.tk ? expApprox(s[l] - mNew) : 0.0f;
      pdp[l] = prob[l] * dp[l];
    }
    const float alpha = onlineAlpha(j0 == 0, row.m, mNew);
    row = onlineFold(row, mNew, alpha, attentionTileSum(prob), attentionTileSum(pdp));
  }
  return {row.m, 1.0f / row.l, row.dot / row.l, live ? p.scale : 0.0f};
}

/// P_ij and dS_ij as both backward kernels recompute them.
void probAndDs(const Problem &p, int64_t b, int64_t i, int64_t j, const Stats &st, float &prob,
               float &ds) {
  const float *Q = p.q.head(b, p.inner) + i * p.q.row, *K = p.k.head(b, p.inner),
              *V = p.v.head(b, p.inner), *dO = p.dout.head(b, p.inner) + i * p.dout.row;
  const uint8_t *M = maskRow(p, i);
  float s = attentionScore(Q, K + j * p.k.row, p.d, p.scale);
  if (M && !M[j])
    s = kMaskedScore;
  prob = expApprox(s - st.m) * st.inv;
  ds = attentionDs(prob, attentionDot(dO, V + j * p.v.row, p.dv), st.D, st.scaleLive);
}

struct Grads {
  Strided dq, dk, dv;
};

/// The dq kernel (64-row query tiles; a row's dQ one FMA chain over the
/// keys in order) and the dkv kernel (blocks of 64 keys; a key's dK and dV
/// one chain over the queries in order) on the host. With
/// `storedStats` dq stores each row's statistics at slot head * tq + row of
/// a scratch buffer (4 floats a slot, as attention.cu) and dkv reads them;
/// without, dkv recomputes them for every block of keys.
Grads backward(const Problem &p, bool storedStats) {
  Grads g{p.q, p.k, p.v};
  const int64_t heads = p.outer * p.inner;
  std::vector<float> scratch(size_t(heads * p.tq * 4), NAN);
  for (int64_t b = 0; b < heads; ++b) {
    const float *K = p.k.head(b, p.inner);
    for (int64_t i = 0; i < p.tq; ++i) {
      const Stats st = rowStats(p, b, i);
      if (storedStats) {
        float *slot = scratch.data() + (b * p.tq + i) * 4;
        slot[0] = st.m;
        slot[1] = st.inv;
        slot[2] = st.D;
        slot[3] = st.scaleLive;
      }
      std::vector<float> acc(size_t(p.d), 0.0f);
      for (int64_t j = 0; j < p.tk; ++j) {
        float prob, ds;
        probAndDs(p, b, i, j, st, prob, ds);
        for (int64_t c = 0; c < p.d; ++c)
          acc[size_t(c)] = fusedMulAdd(ds, K[j * p.k.row + c], acc[size_t(c)]);
      }
      std::copy(acc.begin(), acc.end(), g.dq.head(b, p.inner) + i * g.dq.row);
    }
  }
  for (int64_t b = 0; b < heads; ++b) {
    const float *Q = p.q.head(b, p.inner), *dO = p.dout.head(b, p.inner);
    for (int64_t j0 = 0; j0 < p.tk; j0 += kAttentionDkvKeys) {
      std::vector<Stats> stats(size_t(p.tq));
      for (int64_t i = 0; i < p.tq; ++i) {
        const float *slot = scratch.data() + (b * p.tq + i) * 4;
        stats[size_t(i)] =
            storedStats ? Stats{slot[0], slot[1], slot[2], slot[3]} : rowStats(p, b, i);
      }
      for (int64_t j = j0; j < std::min<int64_t>(j0 + kAttentionDkvKeys, p.tk); ++j) {
        std::vector<float> accK(size_t(p.d), 0.0f), accV(size_t(p.dv), 0.0f);
        for (int64_t i = 0; i < p.tq; ++i) {
          float prob, ds;
          probAndDs(p, b, i, j, stats[size_t(i)], prob, ds);
          for (int64_t c = 0; c < p.dv; ++c)
            accV[size_t(c)] = fusedMulAdd(prob, dO[i * p.dout.row + c], accV[size_t(c)]);
          for (int64_t c = 0; c < p.d; ++c)
            accK[size_t(c)] = fusedMulAdd(ds, Q[i * p.q.row + c], accK[size_t(c)]);
        }
        std::copy(accK.begin(), accK.end(), g.dk.head(b, p.inner) + j * g.dk.row);
        std::copy(accV.begin(), accV.end(), g.dv.head(b, p.inner) + j * g.dv.row);
      }
    }
  }
  return g;
}

// The seed models' shapes (reverse: 16 x 16, d 32; set anomaly: 10 x 10,
// d 64; the encoder-decoder: 2 x 2, d 2, masked), several key tiles, odd
// sizes, and heads wider than 64 (the kernels' column slices).
const Shape kShapes[] = {{1, 4, 16, 16, 32, 32, false}, {2, 4, 10, 10, 64, 64, false},
                         {3, 3, 2, 2, 2, 2, true},      {1, 2, 40, 100, 24, 40, true},
                         {2, 1, 33, 65, 7, 5, false},   {1, 1, 9, 70, 96, 80, true},
                         {1, 2, 140, 140, 16, 16, false}};

TEST(CudaKernelMath, AttentionForwardIsTheCpuKernel) {
  std::mt19937 rng(5);
  for (const Shape &s : kShapes) {
    Problem p = makeAttentionProblem(s.outer, s.inner, s.tq, s.tk, s.d, s.dv, s.masked, rng);
    const int64_t heads = s.outer * s.inner;
    Strided cpu = makeStrided(s.outer, s.inner, s.tq, s.dv, 1, rng), gpu = cpu;
    cpuAttentionForward(p, cpu);
    for (int64_t b = 0; b < heads; ++b)
      for (int64_t i = 0; i < s.tq; ++i)
        forwardRow(p, b, i, gpu.head(b, s.inner) + i * gpu.row);
    EXPECT_LT(relativeError(rowsOf(gpu, heads, s.inner, s.tq, s.dv),
                            rowsOf(cpu, heads, s.inner, s.tq, s.dv)),
              2e-6)
        << "tq " << s.tq << " tk " << s.tk << " d " << s.d << " dv " << s.dv;
  }
}

TEST(CudaKernelMath, AttentionBackwardIsTheCpuKernel) {
  std::mt19937 rng(6);
  for (const Shape &s : kShapes) {
    Problem p = makeAttentionProblem(s.outer, s.inner, s.tq, s.tk, s.d, s.dv, s.masked, rng);
    const int64_t heads = s.outer * s.inner;
    Grads cpu{p.q, p.k, p.v};
    cpuAttentionBackward(p, cpu.dq, cpu.dk, cpu.dv);
    const Grads gpu = backward(p, true);
    const auto where = ::testing::Message() << "tq " << s.tq << " tk " << s.tk << " d " << s.d
                                            << " dv " << s.dv;
    EXPECT_LT(relativeError(rowsOf(gpu.dq, heads, s.inner, s.tq, s.d),
                            rowsOf(cpu.dq, heads, s.inner, s.tq, s.d)),
              1e-5)
        << "dq " << where;
    EXPECT_LT(relativeError(rowsOf(gpu.dk, heads, s.inner, s.tk, s.d),
                            rowsOf(cpu.dk, heads, s.inner, s.tk, s.d)),
              1e-5)
        << "dk " << where;
    EXPECT_LT(relativeError(rowsOf(gpu.dv, heads, s.inner, s.tk, s.dv),
                            rowsOf(cpu.dv, heads, s.inner, s.tk, s.dv)),
              1e-5)
        << "dv " << where;
  }
}

// The runtime passes dkv the statistics dq stored when it has scratch, else
// dkv recomputes them with dq's function: the gradients must not depend on
// which (the GPU twin of this check is tfc-kernel-check's).
TEST(CudaKernelMath, AttentionBackwardStoredStatsAreTheRecomputedBits) {
  std::mt19937 rng(7);
  for (const Shape &s : kShapes) {
    Problem p = makeAttentionProblem(s.outer, s.inner, s.tq, s.tk, s.d, s.dv, s.masked, rng);
    const Grads stored = backward(p, true), recomputed = backward(p, false);
    const auto bits = [](const Strided &x) {
      std::vector<uint32_t> out;
      for (float f : x.data)
        out.push_back(floatBits(f));
      return out;
    };
    const auto where = ::testing::Message() << "tq " << s.tq << " tk " << s.tk << " d " << s.d
                                            << " dv " << s.dv;
    EXPECT_EQ(bits(stored.dq), bits(recomputed.dq)) << "dq " << where;
    EXPECT_EQ(bits(stored.dk), bits(recomputed.dk)) << "dk " << where;
    EXPECT_EQ(bits(stored.dv), bits(recomputed.dv)) << "dv " << where;
  }
}

} // namespace
