//===- AttentionKernelTest.cpp - fused attention against a reference ------===//
//
// tfc_attention_forward and tfc_attention_backward against a naive
// double-precision attention (the whole score matrix, masked_fill with
// -9e15, softmax, and its gradients) on odd shapes, the models' head shapes,
// keys spanning several blocks and a single key; without a mask, with one
// mask shared by every head (a fully masked row, a causal mask) and with a
// mask per head. Outputs start as NaN, so anything not written over shows.
// Also: exact values where masking makes them exact (a row with one visible
// key, a fully masked row's gradients), and equal bits for 1, 2 and 3
// threads, and equal bits when the inputs are read through strides (the
// QKV projection's layout) instead of contiguous heads.
//
//===----------------------------------------------------------------------===//

#include "runtime/Abi.h"
#include "runtime/ThreadPool.h"
#include "runtime/cpu/Attention.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

enum class MaskKind { None, SharedWithEmptyRow, Causal, PerHead };

const char *name(MaskKind kind) {
  switch (kind) {
  case MaskKind::None:
    return "no mask";
  case MaskKind::SharedWithEmptyRow:
    return "shared mask with a fully masked row";
  case MaskKind::Causal:
    return "causal mask";
  case MaskKind::PerHead:
    return "mask per head";
  }
  return "?";
}

struct Shape {
  int64_t batch, tq, tk, d, dv;
  float scale;
  std::string str() const {
    return std::to_string(batch) + " heads, tq " + std::to_string(tq) + ", tk " +
           std::to_string(tk) + ", d " + std::to_string(d) + ", dv " + std::to_string(dv) +
           ", scale " + std::to_string(scale);
  }
};

/// One problem: inputs uniform in [-1, 1], outputs NaN.
struct Problem {
  Shape s;
  MaskKind kind;
  std::vector<float> q, k, v, dout, out, dq, dk, dv;
  std::vector<uint8_t> mask; // empty: none
  int64_t maskStride = 0;

  Problem(const Shape &shape, MaskKind maskKind, unsigned seed) : s(shape), kind(maskKind) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    auto fill = [&](std::vector<float> &x, int64_t rows, int64_t cols) {
      x.resize(size_t(s.batch * rows * cols));
      for (float &e : x)
        e = dist(rng);
    };
    fill(q, s.tq, s.d);
    fill(k, s.tk, s.d);
    fill(v, s.tk, s.dv);
    fill(dout, s.tq, s.dv);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    out.assign(dout.size(), nan);
    dq.assign(q.size(), nan);
    dk.assign(k.size(), nan);
    dv.assign(v.size(), nan);
    const size_t tile = size_t(s.tq * s.tk);
    std::bernoulli_distribution visible(0.7);
    switch (kind) {
    case MaskKind::None:
      break;
    case MaskKind::SharedWithEmptyRow:
      mask.resize(tile);
      for (uint8_t &m : mask)
        m = visible(rng);
      for (int64_t j = 0; j < s.tk; ++j) // row min(1, tq - 1) fully masked
        mask[size_t(std::min<int64_t>(1, s.tq - 1) * s.tk + j)] = 0;
      break;
    case MaskKind::Causal:
      mask.resize(tile);
      for (int64_t i = 0; i < s.tq; ++i)
        for (int64_t j = 0; j < s.tk; ++j)
          mask[size_t(i * s.tk + j)] = j <= i;
      break;
    case MaskKind::PerHead:
      maskStride = int64_t(tile);
      mask.resize(tile * size_t(s.batch));
      for (uint8_t &m : mask)
        m = visible(rng);
      // A fully masked row in head 0 and a fully visible one in the last head.
      for (int64_t j = 0; j < s.tk; ++j) {
        mask[size_t((s.tq - 1) * s.tk + j)] = 0;
        mask[size_t((s.batch - 1) * maskStride + j)] = 1;
      }
      break;
    }
  }

  intptr_t maskPtr() const { return mask.empty() ? 0 : intptr_t(mask.data()); }
  bool visible(int64_t b, int64_t i, int64_t j) const {
    return mask.empty() || mask[size_t(b * maskStride + i * s.tk + j)] != 0;
  }

  // Contiguous heads: one outer batch of `batch` inner ones.
  void forward() {
    tfc_attention_forward(1, s.batch, s.tq, s.tk, s.d, s.dv, s.scale, intptr_t(q.data()), 0,
                          s.tq * s.d, s.d, intptr_t(k.data()), 0, s.tk * s.d, s.d,
                          intptr_t(v.data()), 0, s.tk * s.dv, s.dv, maskPtr(), 0, maskStride, s.tk,
                          intptr_t(out.data()), 0, s.tq * s.dv, s.dv, 0, 0, 0);
  }
  // With `fromOut`, D comes from the forward's out (dO . out, as the GPU
  // kernels take it given the forward's statistics).
  void backward(bool fromOut = false) {
    const intptr_t o = fromOut ? intptr_t(out.data()) : 0;
    tfc_attention_backward(
        1, s.batch, s.tq, s.tk, s.d, s.dv, s.scale, intptr_t(q.data()), 0, s.tq * s.d, s.d,
        intptr_t(k.data()), 0, s.tk * s.d, s.d, intptr_t(v.data()), 0, s.tk * s.dv, s.dv, maskPtr(),
        0, maskStride, s.tk, intptr_t(dout.data()), 0, s.tq * s.dv, s.dv, intptr_t(dq.data()), 0,
        s.tq * s.d, s.d, intptr_t(dk.data()), 0, s.tk * s.d, s.d, intptr_t(dv.data()), 0,
        s.tk * s.dv, s.dv, o, 0, s.tq * s.dv, s.dv, 0, 0, 0, 0);
  }
};

/// The exact results in double, and for each element a magnitude (the sum of
/// the absolute values of its terms, dS's counted before the cancellation of
/// dP - D) that scales the tolerance.
struct Reference {
  std::vector<double> out, dq, dk, dv, magOut, magDq, magDk, magDv;

  explicit Reference(const Problem &p) {
    const Shape &s = p.s;
    out.assign(p.out.size(), 0.0);
    dq.assign(p.dq.size(), 0.0);
    dk.assign(p.dk.size(), 0.0);
    dv.assign(p.dv.size(), 0.0);
    magOut = out, magDq = dq, magDk = dk, magDv = dv;
    std::vector<double> P(size_t(s.tq * s.tk)), dP(P.size()), dS(P.size()), D(size_t(s.tq));
    for (int64_t b = 0; b < s.batch; ++b) {
      const float *Q = p.q.data() + b * s.tq * s.d, *K = p.k.data() + b * s.tk * s.d;
      const float *V = p.v.data() + b * s.tk * s.dv, *dO = p.dout.data() + b * s.tq * s.dv;
      for (int64_t i = 0; i < s.tq; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < s.tk; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < s.d; ++c)
            dot += double(Q[i * s.d + c]) * K[j * s.d + c];
          double x = p.visible(b, i, j) ? s.scale * dot : -9e15;
          P[size_t(i * s.tk + j)] = x;
          mx = std::max(mx, x);
        }
        double sum = 0;
        for (int64_t j = 0; j < s.tk; ++j)
          sum += P[size_t(i * s.tk + j)] = std::exp(P[size_t(i * s.tk + j)] - mx);
        D[size_t(i)] = 0;
        for (int64_t j = 0; j < s.tk; ++j) {
          double &pij = P[size_t(i * s.tk + j)];
          pij /= sum;
          double dot = 0;
          for (int64_t c = 0; c < s.dv; ++c)
            dot += double(dO[i * s.dv + c]) * V[j * s.dv + c];
          dP[size_t(i * s.tk + j)] = dot;
          D[size_t(i)] += pij * dot;
        }
      }
      for (int64_t i = 0; i < s.tq; ++i)
        for (int64_t j = 0; j < s.tk; ++j) {
          size_t ij = size_t(i * s.tk + j);
          dS[ij] = p.visible(b, i, j) ? P[ij] * (dP[ij] - D[size_t(i)]) : 0.0;
          double pij = P[ij], ds = dS[ij];
          double dsMag = P[ij] * (std::fabs(dP[ij]) + std::fabs(D[size_t(i)]));
          for (int64_t c = 0; c < s.dv; ++c) {
            size_t o = size_t((b * s.tq + i) * s.dv + c), w = size_t((b * s.tk + j) * s.dv + c);
            out[o] += pij * V[j * s.dv + c];
            magOut[o] += pij * std::fabs(V[j * s.dv + c]);
            dv[w] += pij * dO[i * s.dv + c];
            magDv[w] += pij * std::fabs(dO[i * s.dv + c]);
          }
          for (int64_t c = 0; c < s.d; ++c) {
            size_t qi = size_t((b * s.tq + i) * s.d + c), kj = size_t((b * s.tk + j) * s.d + c);
            dq[qi] += s.scale * ds * K[j * s.d + c];
            magDq[qi] += s.scale * dsMag * std::fabs(K[j * s.d + c]);
            dk[kj] += s.scale * ds * Q[i * s.d + c];
            magDk[kj] += s.scale * dsMag * std::fabs(Q[i * s.d + c]);
          }
        }
    }
  }
};

/// |got - want| <= 3e-6 (magnitude + |want|) + 1e-7 everywhere (NaN fails);
/// reports the first few misses. The kernel's errors stay below a tenth of
/// 1e-5 (magnitude + |want|) here, with or without AVX; 3e-6 still leaves a
/// margin and catches an exp off by 1e-5.
void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 const std::vector<double> &magnitude, const char *what) {
  ASSERT_EQ(got.size(), want.size());
  int misses = 0;
  for (size_t e = 0; e < got.size(); ++e) {
    double tol = 3e-6 * (magnitude[e] + std::fabs(want[e])) + 1e-7;
    if (!(std::fabs(double(got[e]) - want[e]) <= tol) && ++misses <= 5)
      ADD_FAILURE() << what << "[" << e << "] = " << got[e] << ", want " << want[e]
                    << " (tolerance " << tol << ")";
  }
  EXPECT_EQ(misses, 0) << what << ": " << misses << " of " << got.size() << " elements off";
}

void check(const Shape &shape, MaskKind kind, unsigned seed) {
  SCOPED_TRACE(shape.str() + ", " + name(kind));
  Problem p(shape, kind, seed);
  p.forward();
  p.backward();
  Reference ref(p);
  expectClose(p.out, ref.out, ref.magOut, "out");
  expectClose(p.dq, ref.dq, ref.magDq, "dq");
  expectClose(p.dk, ref.dk, ref.magDk, "dk");
  expectClose(p.dv, ref.dv, ref.magDv, "dv");
  // D from the forward's out: the same gradients within the same tolerance.
  p.backward(/*fromOut=*/true);
  expectClose(p.dq, ref.dq, ref.magDq, "dq (D from out)");
  expectClose(p.dk, ref.dk, ref.magDk, "dk (D from out)");
  expectClose(p.dv, ref.dv, ref.magDv, "dv (D from out)");
}

constexpr MaskKind kAllMasks[] = {MaskKind::None, MaskKind::SharedWithEmptyRow, MaskKind::Causal,
                                  MaskKind::PerHead};

void checkAllMasks(const Shape &shape) {
  unsigned seed = 1;
  for (MaskKind kind : kAllMasks)
    check(shape, kind, seed++);
}

TEST(AttentionKernel, SmallOddShapes) {
  checkAllMasks({3, 5, 7, 3, 4, 0.57735f});
  checkAllMasks({2, 7, 5, 9, 1, 0.5f});
  checkAllMasks({1, 1, 1, 1, 1, 1.0f});
  checkAllMasks({2, 3, 2, 17, 11, 0.25f});
}

// q, k and v given as bf16 bits (inputsBf16, the GPU kernels' twin under
// --target=cuda-emulated), and the backward's dO too (kDoBf16): the kernels
// read them widened, so every output has the bits of f32 inputs holding the
// same values, a broadcast k and v (stride 0) and a mask included.
TEST(AttentionKernel, Bf16InputsAreReadWidened) {
  namespace km = tfc::rt::cuda::kernels;
  for (MaskKind kind : {MaskKind::None, MaskKind::Causal}) {
    Problem p({6, 13, 70, 16, 24, 0.25f}, kind, 11);
    const int64_t inner = 3, tq = p.s.tq, tk = p.s.tk, d = p.s.d, w = p.s.dv;
    // The values a bf16 holds, as f32, and their bits; k and v one head
    // each outer index, broadcast over the inner (stride 0).
    std::vector<uint16_t> q16, k16, v16, dout16;
    using Input = std::pair<std::vector<float> *, std::vector<uint16_t> *>;
    for (auto [x, bits] :
         {Input{&p.q, &q16}, Input{&p.k, &k16}, Input{&p.v, &v16}, Input{&p.dout, &dout16}})
      for (float &e : *x) {
        bits->push_back(km::bf16Bits(e));
        e = km::bf16Float(bits->back());
      }
    std::vector<float> out[2], dq[2], dk[2], dv[2];
    for (int bf16 = 0; bf16 < 2; ++bf16) {
      const intptr_t q = bf16 ? intptr_t(q16.data()) : intptr_t(p.q.data()),
                     k = bf16 ? intptr_t(k16.data()) : intptr_t(p.k.data()),
                     v = bf16 ? intptr_t(v16.data()) : intptr_t(p.v.data());
      out[bf16].assign(p.out.size(), NAN);
      dq[bf16].assign(p.dq.size(), NAN);
      dk[bf16].assign(p.dk.size(), NAN);
      dv[bf16].assign(p.dv.size(), NAN);
      namespace at = tfc::abi::attention;
      const intptr_t flag = bf16 ? at::kQkvBf16 : 0,
                     dout = bf16 ? intptr_t(dout16.data()) : intptr_t(p.dout.data());
      tfc_attention_forward(2, inner, tq, tk, d, w, p.s.scale, q, inner * tq * d, tq * d, d, k,
                            tk * d, 0, d, v, tk * w, 0, w, p.maskPtr(), 0, 0, tk,
                            intptr_t(out[bf16].data()), inner * tq * w, tq * w, w, 0, 0, flag);
      tfc_attention_backward(2, inner, tq, tk, d, w, p.s.scale, q, inner * tq * d, tq * d, d, k,
                             tk * d, 0, d, v, tk * w, 0, w, p.maskPtr(), 0, 0, tk, dout,
                             inner * tq * w, tq * w, w, intptr_t(dq[bf16].data()), inner * tq * d,
                             tq * d, d, intptr_t(dk[bf16].data()), inner * tk * d, tk * d, d,
                             intptr_t(dv[bf16].data()), inner * tk * w, tk * w, w,
                             intptr_t(out[bf16].data()), inner * tq * w, tq * w, w, 0, 0, 0,
                             bf16 ? flag | at::kDoBf16 : flag);
    }
    using Output = std::pair<const char *, std::vector<float> *>;
    for (auto [name, x] :
         {Output("out", out), Output("dq", dq), Output("dk", dk), Output("dv", dv)}) {
      ASSERT_EQ(x[0].size(), x[1].size());
      EXPECT_EQ(std::memcmp(x[0].data(), x[1].data(), x[0].size() * sizeof(float)), 0)
          << name << ", " << ::name(kind);
      EXPECT_FALSE(std::isnan(x[1][0])) << name;
    }
  }
}

TEST(AttentionKernel, ModelShapes) {
  checkAllMasks({128, 16, 16, 32, 32, 1 / std::sqrt(32.0f)});
  checkAllMasks({16, 10, 10, 64, 64, 1 / std::sqrt(64.0f)});
  checkAllMasks({4, 100, 100, 32, 32, 1 / std::sqrt(32.0f)});
  checkAllMasks({4, 99, 101, 32, 32, 1 / std::sqrt(32.0f)});
}

// Keys in several blocks (the kernel's are 128 keys; 64 and 128 both give a
// few full blocks and a ragged one here), queries not a multiple of the row
// block, and scores large enough that the running maximum moves a lot.
TEST(AttentionKernel, ManyKeyBlocks) {
  checkAllMasks({2, 13, 3 * 128 + 5, 5, 9, 0.45f});
  checkAllMasks({3, 9, 3 * 64 + 5, 16, 24, 0.25f});
  checkAllMasks({2, 11, 129, 8, 8, 2.0f});
  checkAllMasks({2, 21, 257, 32, 32, 1.0f});
}

TEST(AttentionKernel, SingleKey) {
  checkAllMasks({3, 4, 1, 8, 3, 0.35f});
  checkAllMasks({2, 9, 1, 5, 16, 1.0f});
}

// Where the mask leaves one visible key the weight is exactly 1 and every
// other exactly 0 (exp(-9e15 - m) underflows to 0): the output row is that
// key's value row, and the row's dS (dP - D with D = dP) is 0, so dq's row
// is 0. A fully masked row has uniform weights and dS = 0 as well.
TEST(AttentionKernel, ExactWhereMaskDecides) {
  for (const Shape &shape : {Shape{4, 6, 6, 8, 16, 0.35f}, Shape{2, 5, 300, 7, 5, 0.5f}}) {
    SCOPED_TRACE(shape.str());
    Problem causal(shape, MaskKind::Causal, 11);
    causal.forward();
    causal.backward();
    for (int64_t b = 0; b < shape.batch; ++b) {
      for (int64_t c = 0; c < shape.dv; ++c)
        EXPECT_EQ(causal.out[size_t(b * shape.tq * shape.dv + c)],
                  causal.v[size_t(b * shape.tk * shape.dv + c)])
            << "head " << b << ", column " << c;
      for (int64_t c = 0; c < shape.d; ++c)
        EXPECT_EQ(causal.dq[size_t(b * shape.tq * shape.d + c)], 0.0f)
            << "head " << b << ", column " << c;
    }
    Problem empty(shape, MaskKind::SharedWithEmptyRow, 12);
    empty.forward();
    empty.backward();
    Reference ref(empty);
    for (int64_t b = 0; b < shape.batch; ++b)
      for (int64_t c = 0; c < shape.dv; ++c) { // row 1: the mean of V's rows
        double mean = 0;
        for (int64_t j = 0; j < shape.tk; ++j)
          mean += empty.v[size_t((b * shape.tk + j) * shape.dv + c)];
        mean /= double(shape.tk);
        size_t o = size_t((b * shape.tq + 1) * shape.dv + c);
        EXPECT_NEAR(empty.out[o], mean, 1e-5 * (ref.magOut[o] + 1)) << "head " << b;
      }
    for (int64_t b = 0; b < shape.batch; ++b)
      for (int64_t c = 0; c < shape.d; ++c)
        EXPECT_EQ(empty.dq[size_t((b * shape.tq + 1) * shape.d + c)], 0.0f) << "head " << b;
  }
}

// The pool may be resized between jobs (ThreadPool.cpp restarts its
// workers), so one process can compare thread counts; every head is one
// thread's work in a fixed order, so the bits must not change.
TEST(AttentionKernel, BitwiseIdenticalForAnyThreadCount) {
  const Shape shapes[] = {{128, 16, 16, 32, 32, 0.17677670f}, {7, 13, 3 * 128 + 5, 5, 9, 0.45f}};
  int before = tfc::rt::numThreads();
  for (const Shape &shape : shapes)
    for (MaskKind kind : {MaskKind::None, MaskKind::PerHead}) {
      SCOPED_TRACE(shape.str() + ", " + name(kind));
      std::vector<float> first[4];
      for (int threads : {1, 2, 3}) {
        tfc::rt::setNumThreads(threads);
        Problem p(shape, kind, 5);
        p.forward();
        p.backward();
        const std::vector<float> *results[4] = {&p.out, &p.dq, &p.dk, &p.dv};
        for (int r = 0; r < 4; ++r) {
          if (threads == 1) {
            first[r] = *results[r];
            continue;
          }
          ASSERT_EQ(first[r].size(), results[r]->size());
          EXPECT_EQ(std::memcmp(first[r].data(), results[r]->data(),
                                sizeof(float) * first[r].size()),
                    0)
              << "output " << r << " on " << threads << " threads";
        }
      }
    }
  tfc::rt::setNumThreads(before);
}


// Generated code passes q, k and v where the QKV projection wrote them:
// [outer, T, inner, 3 d] (and dO as [outer, T, inner, dv], a per-head mask
// as [outer, tq, inner, tk]), and has the outputs written where their
// readers want them. The kernel must compute the same numbers through
// those strides as with contiguous heads, so the bits must match.
TEST(AttentionKernel, StridedOperandsGiveTheSameBits) {
  const int64_t outer = 2, inner = 3;
  const Shape shapes[] = {{outer * inner, 16, 16, 32, 32, 0.17677670f},
                          {outer * inner, 10, 10, 5, 5, 0.4472136f},
                          {outer * inner, 9, 261, 8, 8, 0.35355339f}};
  for (const Shape &shape : shapes)
    for (MaskKind kind : {MaskKind::None, MaskKind::Causal, MaskKind::PerHead}) {
      SCOPED_TRACE(shape.str() + ", " + name(kind));
      ASSERT_EQ(shape.d, shape.dv);
      Problem dense(shape, kind, 21);
      dense.forward();
      dense.backward();

      const int64_t tq = shape.tq, tk = shape.tk, d = shape.d, width = 3 * d;
      // q's rows and k's, v's share one buffer per side ([T, inner, 3 d]
      // rows); queries and keys have their own T.
      std::vector<float> qkvQ(size_t(outer * tq * inner * width), NAN);
      std::vector<float> qkvK(size_t(outer * tk * inner * width), NAN);
      std::vector<float> dO(size_t(outer * tq * inner * d), NAN);
      std::vector<uint8_t> mask;
      for (int64_t b = 0; b < shape.batch; ++b) {
        const int64_t o = b / inner, i = b % inner;
        for (int64_t t = 0; t < tq; ++t)
          for (int64_t c = 0; c < d; ++c) {
            qkvQ[size_t(((o * tq + t) * inner + i) * width + c)] = dense.q[size_t((b * tq + t) * d + c)];
            dO[size_t(((o * tq + t) * inner + i) * d + c)] = dense.dout[size_t((b * tq + t) * d + c)];
          }
        for (int64_t t = 0; t < tk; ++t)
          for (int64_t c = 0; c < d; ++c) {
            qkvK[size_t(((o * tk + t) * inner + i) * width + d + c)] = dense.k[size_t((b * tk + t) * d + c)];
            qkvK[size_t(((o * tk + t) * inner + i) * width + 2 * d + c)] = dense.v[size_t((b * tk + t) * d + c)];
          }
      }
      int64_t mOuter = 0, mInner = 0, mRow = tk;
      if (kind == MaskKind::PerHead) {
        mask.resize(dense.mask.size());
        for (int64_t b = 0; b < shape.batch; ++b)
          for (int64_t t = 0; t < tq; ++t)
            for (int64_t j = 0; j < tk; ++j)
              mask[size_t((((b / inner) * tq + t) * inner + b % inner) * tk + j)] =
                  dense.mask[size_t((b * tq + t) * tk + j)];
        mOuter = tq * inner * tk, mInner = tk, mRow = inner * tk;
      } else {
        mask = dense.mask; // one [tq, tk] matrix: batch strides 0
      }
      const intptr_t maskPtr = mask.empty() ? 0 : intptr_t(mask.data());
      const int64_t qOuter = tq * inner * width, kOuter = tk * inner * width, row = inner * width;
      // Outputs go back into the same layouts: out and dq as [outer, tq,
      // inner, d] (the heads merged), dk and dv side by side as [outer, tk,
      // inner, 2 d] (the concatenation of their adjoints).
      std::vector<float> outS(size_t(outer * tq * inner * d), NAN), dqS(outS.size(), NAN),
          dkvS(size_t(outer * tk * inner * 2 * d), NAN);
      const int64_t headOuter = tq * inner * d, kvOuter = tk * inner * 2 * d;
      tfc_attention_forward(outer, inner, tq, tk, d, d, shape.scale, intptr_t(qkvQ.data()), qOuter,
                            width, row, intptr_t(qkvK.data() + d), kOuter, width, row,
                            intptr_t(qkvK.data() + 2 * d), kOuter, width, row, maskPtr, mOuter,
                            mInner, mRow, intptr_t(outS.data()), headOuter, d, inner * d, 0, 0, 0);
      tfc_attention_backward(outer, inner, tq, tk, d, d, shape.scale, intptr_t(qkvQ.data()), qOuter,
                             width, row, intptr_t(qkvK.data() + d), kOuter, width, row,
                             intptr_t(qkvK.data() + 2 * d), kOuter, width, row, maskPtr, mOuter,
                             mInner, mRow, intptr_t(dO.data()), tq * inner * d, d, inner * d,
                             intptr_t(dqS.data()), headOuter, d, inner * d, intptr_t(dkvS.data()),
                             kvOuter, 2 * d, inner * 2 * d, intptr_t(dkvS.data() + d), kvOuter,
                             2 * d, inner * 2 * d, 0, 0, 0, 0, 0, 0, 0, 0);
      std::vector<float> out(dense.out.size()), dq(dense.dq.size()), dk(dense.dk.size()),
          dv(dense.dv.size());
      for (int64_t b = 0; b < shape.batch; ++b) {
        const int64_t o = b / inner, i = b % inner;
        for (int64_t t = 0; t < tq; ++t)
          for (int64_t c = 0; c < d; ++c) {
            out[size_t((b * tq + t) * d + c)] = outS[size_t(((o * tq + t) * inner + i) * d + c)];
            dq[size_t((b * tq + t) * d + c)] = dqS[size_t(((o * tq + t) * inner + i) * d + c)];
          }
        for (int64_t t = 0; t < tk; ++t)
          for (int64_t c = 0; c < d; ++c) {
            dk[size_t((b * tk + t) * d + c)] = dkvS[size_t(((o * tk + t) * inner + i) * 2 * d + c)];
            dv[size_t((b * tk + t) * d + c)] = dkvS[size_t(((o * tk + t) * inner + i) * 2 * d + d + c)];
          }
      }
      const std::vector<float> *got[4] = {&out, &dq, &dk, &dv};
      const std::vector<float> *want[4] = {&dense.out, &dense.dq, &dense.dk, &dense.dv};
      for (int r = 0; r < 4; ++r)
        EXPECT_EQ(std::memcmp(got[r]->data(), want[r]->data(), sizeof(float) * got[r]->size()), 0)
            << "output " << r;

      // The bf16 outputs (tf-bf16-gemm-operands): out's bits beside it,
      // and dq, dk, dv as bits alone, at the same element strides: each
      // bf16Bits of the f32 result, every element written (these layouts
      // leave none out). Then dk alone in bf16, dq and dv still f32.
      namespace at = tfc::abi::attention;
      std::vector<uint16_t> out16(outS.size(), 0xffff), dq16(dqS.size(), 0xffff),
          dkv16(dkvS.size(), 0xffff);
      std::vector<float> outAgain(outS.size(), NAN), dqF(dqS.size(), NAN), dvF(dkvS.size(), NAN);
      tfc_attention_forward(outer, inner, tq, tk, d, d, shape.scale, intptr_t(qkvQ.data()), qOuter,
                            width, row, intptr_t(qkvK.data() + d), kOuter, width, row,
                            intptr_t(qkvK.data() + 2 * d), kOuter, width, row, maskPtr, mOuter,
                            mInner, mRow, intptr_t(outAgain.data()), headOuter, d, inner * d, 0,
                            intptr_t(out16.data()), 0);
      auto backward = [&](intptr_t dqAt, intptr_t dkAt, intptr_t dvAt, int64_t bf16) {
        tfc_attention_backward(outer, inner, tq, tk, d, d, shape.scale, intptr_t(qkvQ.data()),
                               qOuter, width, row, intptr_t(qkvK.data() + d), kOuter, width, row,
                               intptr_t(qkvK.data() + 2 * d), kOuter, width, row, maskPtr, mOuter,
                               mInner, mRow, intptr_t(dO.data()), tq * inner * d, d, inner * d,
                               dqAt, headOuter, d, inner * d, dkAt, kvOuter, 2 * d, inner * 2 * d,
                               dvAt, kvOuter, 2 * d, inner * 2 * d, 0, 0, 0, 0, 0, 0, bf16, 0);
      };
      backward(intptr_t(dq16.data()), intptr_t(dkv16.data()), intptr_t(dkv16.data() + d),
               at::kDqBf16 | at::kDkBf16 | at::kDvBf16);
      auto bitsOf = [](const std::vector<float> &x) {
        std::vector<uint16_t> bits;
        for (float v : x)
          bits.push_back(tfc::rt::cuda::kernels::bf16Bits(v));
        return bits;
      };
      EXPECT_EQ(std::memcmp(outAgain.data(), outS.data(), sizeof(float) * outS.size()), 0);
      EXPECT_EQ(out16, bitsOf(outS));
      EXPECT_EQ(dq16, bitsOf(dqS));
      EXPECT_EQ(dkv16, bitsOf(dkvS));
      std::vector<uint16_t> dk16(dkvS.size(), 0xffff);
      backward(intptr_t(dqF.data()), intptr_t(dk16.data()), intptr_t(dvF.data() + d), at::kDkBf16);
      EXPECT_EQ(std::memcmp(dqF.data(), dqS.data(), sizeof(float) * dqS.size()), 0);
      for (int64_t b = 0; b < outer * tk * inner; ++b)
        for (int64_t c = 0; c < d; ++c) {
          const size_t k = size_t(b * 2 * d + c), v = k + size_t(d);
          ASSERT_EQ(dk16[k], tfc::rt::cuda::kernels::bf16Bits(dkvS[k])) << "dk " << k;
          ASSERT_EQ(dk16[v], 0xffff) << "past dk " << k;
          ASSERT_EQ(std::memcmp(&dvF[v], &dkvS[v], sizeof(float)), 0) << "dv " << v;
        }
    }
}

} // namespace
