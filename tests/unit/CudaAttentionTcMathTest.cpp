//===- CudaAttentionTcMathTest.cpp - the tensor-core attention's tiles ----===//
//
// runtime/cuda/kernels/attention_tc.cu on the host, row by row: the same
// blocks of 64 queries (64 keys for dk/dv), key tiles of 64, the operands
// rounded to bf16 where the kernels stage them (Q, K, V, dO) or feed them to
// a product (P, dS), round to nearest even (KernelMath.h's roundBf16), fp32
// accumulation, and the softmax in the kernels' order: a row's 64 scores of
// a tile held by 4 lanes (lane t the keys 8n + 2t + {0, 1}), each lane's sum
// in (n, e) order, then butterflies by 2 and 1, attention.cu's online fold,
// in base 2 as the kernels: scores times scale log2(e), P = fastExp2(s2 -
// m2) (the host's exp2f for the GPU's ex2.approx: within an ulp or two),
// dS by attentionTcDs.
// Compared with the CPU kernels (runtime/cpu/Attention.h):
//  - without the bf16 rounding, within fp32 tolerances (1e-5 of the largest
//    magnitude): the tiling, masking, online softmax and statistics are
//    right, to the bit where the kernels' order is modelled;
//  - with it, within 2e-2 of the largest magnitude (bf16 keeps 8 bits: each
//    rounded operand is off by at most 2^-9 relative, a product by 2^-8; the
//    sums over d and over keys of such terms come near 1% of the largest
//    output: up to 9e-3 here (dq, 1024 masked rows, some with few keys),
//    so the bound is 2e-2, room for the tensor cores' own order of
//    addition; the errors seen are printed).
// What the host cannot model: the order in which an mma.sync adds its 16
// products and the accumulator (the hardware's; fp32 sums here in k order),
// and the fragment layout itself; tools/gpu/kernel_check.cpp runs the kernels.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Attention.h"
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

constexpr int64_t kBlock = kAttentionTcRows; // queries (keys) a block, keys a tile

/// The kernels on the host; `bf16` rounds the operands as they do, else
/// every operand stays fp32 (the tiling and softmax alone).
struct TcModel {
  const Problem &p;
  bool bf16;

  float r(float x) const { return bf16 ? roundBf16(x) : x; }
  /// A product's element: fp32 accumulation of rounded operands.
  float dot(const float *a, const float *b, int64_t n) const {
    float s = 0.0f;
    for (int64_t c = 0; c < n; ++c)
      s = fusedMulAdd(r(a[c]), r(b[c]), s);
    return s;
  }
  const float *Q(int64_t b, int64_t i) const { return p.q.head(b, p.inner) + i * p.q.row; }
  const float *K(int64_t b, int64_t j) const { return p.k.head(b, p.inner) + j * p.k.row; }
  const float *V(int64_t b, int64_t j) const { return p.v.head(b, p.inner) + j * p.v.row; }
  const float *dO(int64_t b, int64_t i) const {
    return p.dout.head(b, p.inner) + i * p.dout.row;
  }
  bool masked(int64_t i, int64_t j) const { return !p.mask.empty() && !p.mask[size_t(i * p.tk + j)]; }

  /// scoreTile's element for query i, key j (base 2); `live` set by an
  /// unmasked key.
  float score(int64_t b, int64_t i, int64_t j, bool &live) const {
    if (j >= p.tk)
      return -INFINITY;
    if (masked(i, j))
      return kMaskedScore;
    live = true;
    return dot(Q(b, i), K(b, j), p.d) * attentionTcScale(p.scale);
  }

  /// A row's sum over a tile of 64 values as the 4 lanes add them (with
  /// y, of the products x y, each lane's by FMAs, as rowStats' Σ P dP).
  static float quadSum(const float (&x)[kBlock], const float *y = nullptr) {
    float v[4];
    for (int t = 0; t < 4; ++t) {
      v[t] = 0.0f;
      for (int n = 0; n < kBlock / 8; ++n)
        for (int e = 0; e < 2; ++e) {
          const int jj = n * 8 + 2 * t + e;
          v[t] = y ? fusedMulAdd(x[jj], y[jj], v[t]) : v[t] + x[jj];
        }
    }
    for (int o = 2; o > 0; o /= 2) {
      float next[4];
      for (int t = 0; t < 4; ++t)
        next[t] = v[t] + v[t ^ o];
      std::copy(next, next + 4, v);
    }
    return v[0];
  }

  /// The forward kernel's row i of head b (its block's tiles of 64 keys).
  void forwardRow(int64_t b, int64_t i, float *out) const {
    std::vector<float> o(size_t(p.dv), 0.0f);
    OnlineRow row{-INFINITY, 0.0f, 0.0f};
    bool live = false;
    for (int64_t j0 = 0; j0 < p.tk; j0 += kBlock) {
      float x[kBlock], prob[kBlock], tileMax = -INFINITY;
      for (int64_t jj = 0; jj < kBlock; ++jj) {
        x[jj] = score(b, i, j0 + jj, live);
        tileMax = maxOf(tileMax, x[jj]);
      }
      const float mNew = maxOf(row.m, tileMax);
      for (int64_t jj = 0; jj < kBlock; ++jj)
        prob[jj] = fastExp2(x[jj] - mNew);
      const float alpha = alpha2(j0 == 0, row.m, mNew);
      row = onlineFold(row, mNew, alpha, quadSum(prob), 0.0f);
      for (int64_t c = 0; c < p.dv; ++c) {
        float acc = o[size_t(c)] * alpha;
        for (int64_t jj = 0; jj < std::min(kBlock, p.tk - j0); ++jj)
          acc = fusedMulAdd(r(prob[jj]), r(V(b, j0 + jj)[c]), acc);
        o[size_t(c)] = acc;
      }
    }
    const float inv = 1.0f / row.l;
    for (int64_t c = 0; c < p.dv; ++c)
      out[c] = o[size_t(c)] * inv;
  }

  /// The kernels' onlineAlpha, in base 2.
  static float alpha2(bool first, float m, float mNew) { return first ? 0.0f : fastExp2(m - mNew); }

  struct Stats {
    float m, inv, DScaled, scaleLive;
  };

  /// rowStats (pass 1 of dq; dkv's statistics) for query row i of head b.
  Stats rowStats(int64_t b, int64_t i) const {
    OnlineRow row{-INFINITY, 0.0f, 0.0f};
    bool live = p.mask.empty();
    for (int64_t j0 = 0; j0 < p.tk; j0 += kBlock) {
      float x[kBlock], prob[kBlock], dp[kBlock], tileMax = -INFINITY;
      for (int64_t jj = 0; jj < kBlock; ++jj) {
        x[jj] = score(b, i, j0 + jj, live);
        tileMax = maxOf(tileMax, x[jj]);
      }
      const float mNew = maxOf(row.m, tileMax);
      for (int64_t jj = 0; jj < kBlock; ++jj) {
        const int64_t j = j0 + jj;
        dp[jj] = j < p.tk ? dot(dO(b, i), V(b, j), p.dv) : 0.0f;
        prob[jj] = fastExp2(x[jj] - mNew);
      }
      const float alpha = alpha2(j0 == 0, row.m, mNew);
      row = onlineFold(row, mNew, alpha, quadSum(prob), quadSum(prob, dp));
    }
    const float scaleLive = live ? p.scale : 0.0f;
    return {row.m, 1.0f / row.l, row.dot / row.l * scaleLive, scaleLive};
  }

  /// P_ij and dS_ij as both backward kernels recompute them (the scale
  /// and the maximum in one FMA).
  void probAndDs(int64_t b, int64_t i, int64_t j, const Stats &st, float &prob, float &ds) const {
    const float x = masked(i, j)
                        ? kMaskedScore - st.m
                        : fusedMulAdd(dot(Q(b, i), K(b, j), p.d), attentionTcScale(p.scale), -st.m);
    prob = fastExp2(x) * st.inv;
    ds = attentionTcDs(prob, dot(dO(b, i), V(b, j), p.dv), st.DScaled, st.scaleLive);
  }

  /// dq (a row of a query block, key tiles in order), then dk and dv (a
  /// row of a key block, query tiles in order).
  void backward(Strided &dq, Strided &dk, Strided &dv) const {
    for (int64_t b = 0; b < p.heads(); ++b) {
      std::vector<Stats> stats(size_t(p.tq));
      for (int64_t i = 0; i < p.tq; ++i) {
        const Stats st = stats[size_t(i)] = rowStats(b, i);
        float *out = dq.head(b, p.inner) + i * dq.row;
        for (int64_t c = 0; c < p.d; ++c)
          out[c] = 0.0f;
        for (int64_t j = 0; j < p.tk; ++j) {
          float prob, ds;
          probAndDs(b, i, j, st, prob, ds);
          for (int64_t c = 0; c < p.d; ++c)
            out[c] = fusedMulAdd(r(ds), r(K(b, j)[c]), out[c]);
        }
      }
      for (int64_t j = 0; j < p.tk; ++j) {
        float *outK = dk.head(b, p.inner) + j * dk.row, *outV = dv.head(b, p.inner) + j * dv.row;
        std::fill(outK, outK + p.d, 0.0f);
        std::fill(outV, outV + p.dv, 0.0f);
        for (int64_t i = 0; i < p.tq; ++i) {
          float prob, ds;
          probAndDs(b, i, j, stats[size_t(i)], prob, ds);
          for (int64_t c = 0; c < p.dv; ++c)
            outV[c] = fusedMulAdd(r(prob), r(dO(b, i)[c]), outV[c]);
          for (int64_t c = 0; c < p.d; ++c)
            outK[c] = fusedMulAdd(r(ds), r(Q(b, i)[c]), outK[c]);
        }
      }
    }
  }
};

// The seed models' heads the tensor-core kernels take (reverse: 16 x 16,
// d 32; set anomaly: 10 x 10, d 64; the medium encoder: 256 x 256, d 64),
// partial tiles and several of them, masked and not, and 1024 x 1024 (d 64).
const Shape kShapes[] = {{1, 4, 16, 16, 32, 32, false}, {2, 4, 10, 10, 64, 64, false},
                         {1, 2, 256, 256, 64, 64, true}, {1, 2, 40, 100, 32, 48, true},
                         {2, 1, 130, 70, 16, 64, false}, {1, 1, 1024, 1024, 64, 64, false},
                         {1, 1, 1024, 1024, 64, 64, true}};

::testing::Message where(const Shape &s) {
  return ::testing::Message() << "tq " << s.tq << " tk " << s.tk << " d " << s.d << " dv "
                              << s.dv << (s.masked ? " masked" : "");
}

TEST(CudaAttentionTcMath, EveryShapeTakesTheTensorCores) {
  for (const Shape &s : kShapes)
    EXPECT_TRUE(attentionTensorCoreShape(s.d, s.dv)) << where(s);
  EXPECT_FALSE(attentionTensorCoreShape(2, 2));    // the encoder-decoder's heads: fp32
  EXPECT_FALSE(attentionTensorCoreShape(96, 96));  // wider than 64
  EXPECT_FALSE(attentionTensorCoreShape(64, 24));  // not a multiple of 16
}

TEST(CudaAttentionTcMath, RoundBf16IsRoundToNearestEven) {
  EXPECT_EQ(bf16Bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16Bits(bitsFloat(0x3f808000u)), 0x3f80); // a tie, to even
  EXPECT_EQ(bf16Bits(bitsFloat(0x3f818000u)), 0x3f82); // a tie, to even (up)
  EXPECT_EQ(bf16Bits(bitsFloat(0x3f808001u)), 0x3f81); // above the tie
  EXPECT_EQ(bf16Bits(-INFINITY), 0xff80);
  EXPECT_EQ(bf16Bits(bitsFloat(0x7f7fffffu)), 0x7f80); // the largest float rounds to inf
  EXPECT_TRUE(std::isnan(roundBf16(NAN)));
}

void checkForward(bool bf16, double tolerance) {
  std::mt19937 rng(11);
  for (const Shape &s : kShapes) {
    Problem p = makeAttentionProblem(s.outer, s.inner, s.tq, s.tk, s.d, s.dv, s.masked, rng);
    Strided cpu = makeStrided(s.outer, s.inner, s.tq, s.dv, 1, rng), tc = cpu;
    cpuAttentionForward(p, cpu);
    const TcModel model{p, bf16};
    for (int64_t b = 0; b < p.heads(); ++b)
      for (int64_t i = 0; i < s.tq; ++i)
        model.forwardRow(b, i, tc.head(b, s.inner) + i * tc.row);
    const double err = relativeError(rowsOf(tc, p.heads(), s.inner, s.tq, s.dv),
                                     rowsOf(cpu, p.heads(), s.inner, s.tq, s.dv));
    EXPECT_LT(err, tolerance) << where(s);
    std::printf("  forward%s %s: %.2e\n", bf16 ? " bf16" : "", where(s).GetString().c_str(),
                err);
  }
}

void checkBackward(bool bf16, double tolerance) {
  std::mt19937 rng(12);
  for (const Shape &s : kShapes) {
    Problem p = makeAttentionProblem(s.outer, s.inner, s.tq, s.tk, s.d, s.dv, s.masked, rng);
    Strided cq = p.q, ck = p.k, cv = p.v, tq = p.q, tk = p.k, tv = p.v;
    cpuAttentionBackward(p, cq, ck, cv);
    TcModel{p, bf16}.backward(tq, tk, tv);
    const int64_t h = p.heads();
    const double eq = relativeError(rowsOf(tq, h, s.inner, s.tq, s.d), rowsOf(cq, h, s.inner, s.tq, s.d));
    const double ek = relativeError(rowsOf(tk, h, s.inner, s.tk, s.d), rowsOf(ck, h, s.inner, s.tk, s.d));
    const double ev =
        relativeError(rowsOf(tv, h, s.inner, s.tk, s.dv), rowsOf(cv, h, s.inner, s.tk, s.dv));
    EXPECT_LT(eq, tolerance) << "dq " << where(s);
    EXPECT_LT(ek, tolerance) << "dk " << where(s);
    EXPECT_LT(ev, tolerance) << "dv " << where(s);
    std::printf("  backward%s %s: dq %.2e dk %.2e dv %.2e\n", bf16 ? " bf16" : "",
                where(s).GetString().c_str(), eq, ek, ev);
  }
}

TEST(CudaAttentionTcMath, ForwardTilesAreTheCpuKernel) { checkForward(false, 1e-5); }
TEST(CudaAttentionTcMath, ForwardInBf16IsTheCpuKernelToBf16) { checkForward(true, 2e-2); }
TEST(CudaAttentionTcMath, BackwardTilesAreTheCpuKernel) { checkBackward(false, 1e-5); }
TEST(CudaAttentionTcMath, BackwardInBf16IsTheCpuKernelToBf16) { checkBackward(true, 2e-2); }

} // namespace
