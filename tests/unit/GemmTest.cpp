//===- GemmTest.cpp - tfc_sgemm against a double-precision reference ------===//
//
// Every layout tfc_sgemm accepts (transposes, padded leading dims, batch
// strides including 0, batch reductions, accumulate) on every kernel set
// this CPU runs, edges around the tile sizes and the seed models' shapes;
// the epilogue hook (every row once, final when it runs, any thread count);
// a convolution's windows read in place equal to its im2col GEMM;
// and bitwise equality across thread counts, between the AVX2 and AVX-512
// kernels (both are the same FMA chains, see runtime/cpu/GemmKernels.h), and
// between a batch reduction and the one GEMM over its items' K.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Gemm.h"
#include "runtime/Abi.h"
#include "runtime/ThreadPool.h"
#include "runtime/cpu/GemmKernels.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using tfc::rt::gemm::Isa;

/// tfc_sgemm's arguments, less the pointers.
struct Call {
  int64_t batch, m, n, k, lda, strideA, transA, ldb, strideB, transB, ldc, strideC, acc;

  std::string str() const {
    return std::to_string(batch) + "x" + std::to_string(m) + "x" + std::to_string(n) + "x" +
           std::to_string(k) + (transA ? " tA" : "") + (transB ? " tB" : "") +
           (acc ? " acc" : "") + " ld " + std::to_string(lda) + "," + std::to_string(ldb) + "," +
           std::to_string(ldc) + " strides " + std::to_string(strideA) + "," +
           std::to_string(strideB) + "," + std::to_string(strideC);
  }
};

/// Dense operands (leading dims `pad` floats beyond the minimum), batch items
/// a few floats apart, or one shared A or B (batch stride 0).
Call dense(int64_t batch, int64_t m, int64_t n, int64_t k, bool transA, bool transB,
           bool acc = false, int64_t padA = 0, int64_t padB = 0, int64_t padC = 0,
           bool sharedA = false, bool sharedB = false) {
  Call c{batch, m, n, k, 0, 0, transA, 0, 0, transB, n + padC, 0, acc};
  c.lda = (transA ? m : k) + padA;
  c.ldb = (transB ? k : n) + padB;
  c.strideA = sharedA ? 0 : (transA ? k : m) * c.lda + 3;
  c.strideB = sharedB ? 0 : (transB ? n : k) * c.ldb + 5;
  c.strideC = m * c.ldc + 7;
  return c;
}

/// The operands of a call, filled with uniform values in [-1, 1].
struct Buffers {
  std::vector<float> a, b, c;

  static size_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t ld) {
    return size_t(stride * (batch - 1) + rows * ld);
  }
  Buffers(const Call &g, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    a.resize(extent(g.batch, g.strideA, g.transA ? g.k : g.m, g.lda));
    b.resize(extent(g.batch, g.strideB, g.transB ? g.n : g.k, g.ldb));
    c.resize(extent(g.batch, g.strideC, g.m, g.ldc));
    for (auto *v : {&a, &b, &c})
      for (float &x : *v)
        x = dist(rng);
  }
  void run(const Call &g) {
    tfc_sgemm(g.batch, g.m, g.n, g.k, intptr_t(a.data()), g.lda, g.strideA, g.transA,
              intptr_t(b.data()), g.ldb, g.strideB, g.transB, intptr_t(c.data()), g.ldc,
              g.strideC, g.acc);
  }
};

/// A batch reduction (strideC 0): C (+)= sum_b op(A[b]) op(B[b]). With
/// `concatenated`, op(A[b]) is columns b*K..(b+1)*K of an M x batch*K matrix
/// and op(B[b]) rows b*K..(b+1)*K of a batch*K x N one (`wide` is then the
/// same product as one GEMM), else the items lie as dense() puts them.
Call reduction(int64_t batch, int64_t m, int64_t n, int64_t k, bool transA, bool transB,
               bool acc, bool concatenated) {
  Call c = dense(batch, m, n, k, transA, transB, acc);
  c.strideC = 0;
  if (concatenated) {
    c.lda = transA ? m : batch * k;
    c.strideA = transA ? k * c.lda : k;
    c.ldb = transB ? batch * k : n;
    c.strideB = transB ? k : k * c.ldb;
  }
  return c;
}

/// The single GEMM over batch * K that a concatenated reduction is.
Call wide(const Call &r) {
  return {1, r.m, r.n, r.batch * r.k, r.lda, 0, r.transA, r.ldb, 0, r.transB, r.ldc, 0, r.acc};
}

/// The exact result (in double) of every float of C's buffer, with the
/// rounding bound of a float FMA chain; floats outside C must keep their bits.
/// A batch reduction's chain runs through every item.
struct Reference {
  std::vector<double> value, bound;
  std::vector<bool> inside;

  Reference(const Call &g, const Buffers &in)
      : value(in.c.size()), bound(in.c.size()), inside(in.c.size(), false) {
    const double eps = std::numeric_limits<float>::epsilon();
    const bool reduce = g.strideC == 0 && g.batch > 1;
    std::vector<double> magnitude(in.c.size());
    for (int64_t item = 0; item < g.batch; ++item) {
      const float *a = in.a.data() + item * g.strideA;
      const float *b = in.b.data() + item * g.strideB;
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
          size_t at = size_t(item * g.strideC + i * g.ldc + j);
          if (!reduce || item == 0) {
            value[at] = g.acc ? in.c[at] : 0.0;
            magnitude[at] = std::fabs(value[at]);
          }
          for (int64_t p = 0; p < g.k; ++p) {
            double x = g.transA ? a[p * g.lda + i] : a[i * g.lda + p];
            double y = g.transB ? b[j * g.ldb + p] : b[p * g.ldb + j];
            value[at] += x * y;
            magnitude[at] += std::fabs(x * y);
          }
          double chain = double((reduce ? g.batch : 1) * g.k + 2);
          bound[at] = chain * eps * magnitude[at] + 1e-30;
          inside[at] = true;
        }
    }
  }

  void expectMatches(const Call &g, const Buffers &in, const std::vector<float> &out) const {
    int failures = 0;
    for (size_t at = 0; at < out.size() && failures < 5; ++at) {
      if (!inside[at]) {
        if (std::memcmp(&out[at], &in.c[at], sizeof(float)) != 0 && ++failures)
          ADD_FAILURE() << g.str() << ": wrote outside C at float " << at;
      } else if (!(std::fabs(out[at] - value[at]) <= bound[at]) && ++failures) {
        ADD_FAILURE() << g.str() << ": C at float " << at << " = " << out[at] << ", expected "
                      << value[at] << " +- " << bound[at];
      }
    }
  }
};

std::vector<Isa> supportedIsas() {
  std::vector<Isa> isas{Isa::Scalar};
  if (tfc::rt::gemm::bestIsa() >= Isa::Avx2)
    isas.push_back(Isa::Avx2);
  if (tfc::rt::gemm::bestIsa() >= Isa::Avx512)
    isas.push_back(Isa::Avx512);
  return isas;
}

/// Runs `g` on every kernel set, checks each against the reference, and the
/// AVX2 and AVX-512 results against each other bit for bit.
void checkAllIsas(const Call &g, unsigned seed = 1) {
  const Buffers in(g, seed);
  const Reference ref(g, in);
  std::vector<float> fmaResult;
  for (Isa isa : supportedIsas()) {
    tfc::rt::gemm::forceIsa(isa);
    SCOPED_TRACE(tfc::rt::gemm::activeKernels().name);
    Buffers out = in;
    out.run(g);
    ref.expectMatches(g, in, out.c);
    if (isa == Isa::Scalar)
      continue;
    if (fmaResult.empty())
      fmaResult = out.c;
    else
      EXPECT_EQ(std::memcmp(fmaResult.data(), out.c.data(), sizeof(float) * out.c.size()), 0)
          << g.str() << ": AVX2 and AVX-512 differ";
  }
  tfc::rt::gemm::forceIsa(tfc::rt::gemm::bestIsa());
}

/// Runs each call on every kernel set with 1, 2 and 3 threads: the 1-thread
/// result against the reference, the others bitwise equal to it.
void checkThreadCounts(std::initializer_list<Call> calls, unsigned seed) {
  int before = tfc::rt::numThreads();
  for (Isa isa : supportedIsas()) {
    tfc::rt::gemm::forceIsa(isa);
    for (const Call &g : calls) {
      const Buffers in(g, seed);
      std::vector<float> first;
      for (int threads : {1, 2, 3}) {
        tfc::rt::setNumThreads(threads);
        Buffers out = in;
        out.run(g);
        if (threads == 1) {
          Reference(g, in).expectMatches(g, in, out.c);
          first = out.c;
        } else {
          EXPECT_EQ(std::memcmp(first.data(), out.c.data(), sizeof(float) * first.size()), 0)
              << g.str() << " on " << threads << " threads ("
              << tfc::rt::gemm::activeKernels().name << ")";
        }
      }
    }
  }
  tfc::rt::setNumThreads(before);
  tfc::rt::gemm::forceIsa(tfc::rt::gemm::bestIsa());
}

// Every set's transposing packer against its definition (GemmKernels.h), on
// the panels packB hands it: pitch one or two vectors, any nr up to the
// pitch, kc on either side of the transposes' 8 and 16 steps. Nothing past
// the panel's kc rows is written.
TEST(Gemm, PackTransposedPanels) {
  const float sentinel = -7.0f;
  for (Isa isa : supportedIsas()) {
    tfc::rt::gemm::forceIsa(isa);
    const tfc::rt::gemm::KernelSet &ks = tfc::rt::gemm::activeKernels();
    SCOPED_TRACE(ks.name);
    for (int64_t pitch : {int64_t(ks.lanes), int64_t(2 * ks.lanes)})
      for (int64_t nr = 1; nr <= pitch; ++nr)
        for (int64_t kc = 1; kc <= 70; ++kc) {
          int64_t ld = kc + 3;
          std::vector<float> src(size_t(nr * ld)), dst(size_t(kc * pitch + 2 * pitch), sentinel);
          for (size_t i = 0; i < src.size(); ++i)
            src[i] = float(i);
          ks.packTransposed(src.data(), ld, kc, nr, pitch, dst.data());
          int failures = 0;
          for (int64_t p = 0; p < kc; ++p)
            for (int64_t j = 0; j < nr; ++j)
              if (dst[size_t(p * pitch + j)] != src[size_t(j * ld + p)] && failures++ < 3)
                ADD_FAILURE() << "kc " << kc << " nr " << nr << " pitch " << pitch << ": step "
                              << p << " column " << j;
          for (size_t i = size_t(kc * pitch); i < dst.size(); ++i)
            if (dst[i] != sentinel && failures++ < 3)
              ADD_FAILURE() << "kc " << kc << " nr " << nr << " pitch " << pitch
                            << ": wrote past the panel at float " << i;
        }
  }
  tfc::rt::gemm::forceIsa(tfc::rt::gemm::bestIsa());
}

TEST(Gemm, OneByOne) {
  for (int layout = 0; layout < 4; ++layout)
    for (bool acc : {false, true})
      checkAllIsas(dense(1, 1, 1, 1, layout & 1, layout & 2, acc));
}

// Outer products (K = 1, a one-step chain): every layout of A, batches of
// products, accumulating or not, a C wider than its columns.
TEST(Gemm, OuterProducts) {
  for (bool tA : {false, true})
    for (bool acc : {false, true}) {
      checkAllIsas(dense(1, 640, 256, 1, tA, false, acc));
      checkAllIsas(dense(3, 37, 50, 1, tA, false, acc, 2, 1, 3));
      checkAllIsas(dense(2, 5, 16, 1, tA, false, acc, 0, 0, 0, /*sharedA=*/true));
      checkAllIsas(dense(2, 9, 40, 1, tA, /*transB=*/true, acc, 1, 2, 5));
    }
}

// M and N around the tile sizes (AVX-512: 12 x 32 and 24 x 16, AVX2: 6 x 16
// and 12 x 8, scalar: 4 x 8 and 8 x 4; M is cut into strips of equal
// heights), every layout.
TEST(Gemm, TileEdges) {
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= 26; ++m)
    ms.push_back(m);
  for (int64_t m : {35, 36, 37, 47, 48, 49, 50})
    ms.push_back(m);
  for (int64_t m : ms)
    for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24, 31, 32, 33,
                      47, 48, 63, 64, 65})
      for (int layout = 0; layout < 4; ++layout)
        checkAllIsas(dense(1, m, n, 7, layout & 1, layout & 2), unsigned(m * 100 + n));
}

// K around the KC step (256; K is cut into equal steps): the chains continue
// through C across steps.
TEST(Gemm, KSteps) {
  for (int64_t k : {0, 1, 2, 255, 256, 257, 600})
    for (int layout = 0; layout < 4; ++layout)
      for (bool acc : {false, true})
        checkAllIsas(dense(1, 13, 37, k, layout & 1, layout & 2, acc), unsigned(k));
}

// M and N across the MC (128) and NC (512) blocks; B packed (transposed, or
// many rows and a long K step) and read in place.
TEST(Gemm, LargeBlocks) {
  for (int layout = 0; layout < 4; ++layout) {
    checkAllIsas(dense(1, 300, 1100, 40, layout & 1, layout & 2));
    checkAllIsas(dense(1, 150, 70, 300, layout & 1, layout & 2));
    checkAllIsas(dense(1, 3, 1030, 20, layout & 1, layout & 2));
  }
}

TEST(Gemm, PaddedLeadingDimsAndAccumulate) {
  for (int layout = 0; layout < 4; ++layout)
    for (bool acc : {false, true}) {
      checkAllIsas(dense(3, 19, 45, 23, layout & 1, layout & 2, acc, 3, 17, 5));
      checkAllIsas(dense(1, 70, 40, 9, layout & 1, layout & 2, acc, 1, 2, 33));
    }
}

TEST(Gemm, SharedOperands) {
  for (int layout = 0; layout < 4; ++layout) {
    checkAllIsas(dense(5, 12, 20, 9, layout & 1, layout & 2, false, 0, 0, 0, true, false));
    checkAllIsas(dense(5, 12, 20, 9, layout & 1, layout & 2, false, 0, 0, 0, false, true));
  }
}

// The right edge of C a few columns wide (N mod 32 in 1..12, as N = 100
// or the reverse task's ten classes): AVX-512 computes it with vectors along
// the rows, from a transposed A or from a transposed copy of an A the batch
// shares (four items or more); checkAllIsas holds its bits to AVX2's tiles.
// Rows across the edge kernel's 16-row vectors and its blocks of 64, 48 or
// 32 rows (by the edge's width), K across a K step; a product all edge runs
// its whole K in one step (the reverse task's 32 x 10 x 2048 weight
// gradient), the same bits as the tiles' eight.
TEST(Gemm, RightEdgeAlongTheRows) {
  checkAllIsas(dense(1, 32, 10, 2048, true, false, false), 3);
  checkAllIsas(dense(1, 40, 12, 1500, true, false, true, 2, 1, 3), 4);
  for (int64_t m : {1, 15, 17, 64, 100, 130})
    for (int64_t n : {1, 4, 10, 35, 39, 44, 100})
      for (int64_t k : {5, 300})
        for (bool acc : {false, true}) {
          unsigned seed = unsigned(m * 7 + n * 3 + k);
          checkAllIsas(dense(2, m, n, k, true, false, acc, 3, 0, 2), seed);
          checkAllIsas(dense(5, m, n, k, false, acc, acc, 0, 1, 0, /*sharedA=*/true), seed);
          Call reduced = dense(4, m, n, k, true, true, acc, 0, 0, 0, /*sharedA=*/false);
          reduced.strideC = 0;
          checkAllIsas(reduced, seed);
        }
}

// The last n % 32 columns (1 to 4, beside whole panels) of a product over a
// plain A that no batch shares go by dot products along K (dotEdgeColumns):
// within the reference's bound, AVX2 and AVX-512 alike (the same columns on
// both: 32 is AVX-512's panel, two of AVX2's), with B plain, transposed or
// padded, K on either side of a vector of 16, from 0 or from C, item by
// item and in a batch reduction; and the same bits on 1, 2 and 3 threads
// (cut along M, along N, by items).
TEST(Gemm, RightEdgeByDotProducts) {
  for (int64_t m : {1, 5, 64, 97})
    for (int64_t n : {33, 36, 100, 130})
      for (int64_t k : {16, 100, 301})
        for (bool transB : {false, true}) {
          unsigned seed = unsigned(m * 5 + n * 3 + k + transB);
          checkAllIsas(dense(1, m, n, k, false, transB), seed);
          checkAllIsas(dense(3, m, n, k, false, transB, true, 1, 2, 3), seed);
          checkAllIsas(reduction(4, m, n, k, false, transB, true, false), seed);
        }
  checkThreadCounts({dense(1, 640, 100, 300, false, false), dense(1, 96, 1000, 64, false, true),
                     dense(128, 96, 100, 100, false, false),
                     reduction(16, 200, 36, 300, false, false, false, false)},
                    5);
}

// Two independent products in one call (a backward pass's dW and dx), one
// a thread on two threads: the same bits as the two calls, for any count.
// (On two threads the product with the shorter K goes in row blocks: both
// layouts of its A, first or second in the call.)
TEST(Gemm, PairIsTheTwoCalls) {
  const std::pair<Call, Call> pairs[] = {
      {dense(1, 2048, 32, 64, true, false, false), dense(3, 37, 19, 300, false, true, true)},
      {dense(1, 24, 20, 512, true, true, true), dense(1, 300, 20, 16, false, false, false)}};
  int before = tfc::rt::numThreads();
  for (const auto &[first, second] : pairs) {
    for (int threads : {1, 2, 3}) {
      const Buffers in0(first, 3), in1(second, 4);
      Buffers expected0 = in0, expected1 = in1;
      tfc::rt::setNumThreads(1);
      expected0.run(first);
      expected1.run(second);
      tfc::rt::setNumThreads(threads);
      Buffers got0 = in0, got1 = in1;
      auto args = [](const Call &g, Buffers &b) {
        return std::array<intptr_t, 16>{g.batch, g.m, g.n, g.k, intptr_t(b.a.data()), g.lda,
                                        g.strideA, g.transA, intptr_t(b.b.data()), g.ldb,
                                        g.strideB, g.transB, intptr_t(b.c.data()), g.ldc,
                                        g.strideC, g.acc};
      };
      auto x = args(first, got0), y = args(second, got1);
      tfc_sgemm_pair(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11],
                     x[12], x[13], x[14], x[15], y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7],
                     y[8], y[9], y[10], y[11], y[12], y[13], y[14], y[15]);
      EXPECT_EQ(std::memcmp(got0.c.data(), expected0.c.data(), sizeof(float) * got0.c.size()), 0)
          << threads << " threads, first product";
      EXPECT_EQ(std::memcmp(got1.c.data(), expected1.c.data(), sizeof(float) * got1.c.size()), 0)
          << threads << " threads, second product";
    }
  }
  tfc::rt::setNumThreads(before);
}

/// `v`'s floats as bf16 bits (round to nearest even), and those widened back.
std::vector<uint16_t> bf16Of(const std::vector<float> &v, std::vector<float> &widened) {
  namespace k = tfc::rt::cuda::kernels;
  std::vector<uint16_t> bits(v.size());
  widened.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    widened[i] = k::bf16Float(bits[i] = k::bf16Bits(v[i]));
  return bits;
}

// tf-bf16-gemm-operands' gemm-results on the CPU (tfc_cuda_sgemm's twin):
// kBf16 in Accumulate stores C as bf16, each element of the matrices the
// fp32 product's (with bf16 operands) rounded to nearest even; accumulating
// adds the product to C's bf16 values widened; what lies between rows and
// items stays as it was.
TEST(Gemm, Bf16ResultIsTheProductRounded) {
  namespace gemm = tfc::abi::gemm;
  namespace k = tfc::rt::cuda::kernels;
  const Call calls[] = {dense(1, 37, 19, 45, false, false),
                        dense(1, 16, 24, 33, true, true, false, 3, 2, 5),
                        dense(3, 9, 40, 17, false, true, true, 0, 0, 2)};
  for (const Call &g : calls) {
    Buffers in(g, 13);
    std::vector<float> roundedA, roundedB, roundedC;
    std::vector<uint16_t> bitsA = bf16Of(in.a, roundedA), bitsB = bf16Of(in.b, roundedB),
                          bitsC = bf16Of(in.c, roundedC);
    Buffers expected = in;
    expected.a = roundedA, expected.b = roundedB, expected.c = roundedC;
    expected.run(g);
    std::vector<uint16_t> got = bitsC;
    tfc_sgemm(g.batch, g.m, g.n, g.k, intptr_t(bitsA.data()), g.lda, g.strideA,
              g.transA | gemm::kBf16, intptr_t(bitsB.data()), g.ldb, g.strideB,
              g.transB | gemm::kBf16, intptr_t(got.data()), g.ldc, g.strideC, g.acc | gemm::kBf16);
    size_t wrong = 0, inside = 0, changed = 0;
    for (int64_t item = 0; item < g.batch; ++item)
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
          const size_t at = size_t(item * g.strideC + i * g.ldc + j);
          wrong += got[at] != k::bf16Bits(expected.c[at]);
          changed += got[at] != bitsC[at];
          ++inside;
        }
    EXPECT_EQ(wrong, 0u) << g.str();
    EXPECT_GT(changed, inside / 2) << g.str();
    // Outside the matrices: as it was.
    size_t outside = 0;
    for (size_t at = 0; at < got.size(); ++at) {
      const int64_t item = int64_t(at) / g.strideC, offset = int64_t(at) % g.strideC;
      const bool in = item < g.batch && offset / g.ldc < g.m && offset % g.ldc < g.n;
      outside += !in && got[at] != bitsC[at];
    }
    EXPECT_EQ(outside, 0u) << g.str();
  }
}

// tfc_sgemm_fused with a bf16 C (tf-bf16-gemm-operands' attention inputs,
// cuBLASLt's bf16 D with its bias): the bias is bf16 bits too, and each
// element is the fp32 product plus the widened bias, rounded once.
TEST(Gemm, Bf16ResultWithItsBf16Bias) {
  namespace gemm = tfc::abi::gemm;
  namespace k = tfc::rt::cuda::kernels;
  const Call g = dense(1, 21, 35, 40, false, true, false, 0, 3, 2);
  Buffers in(g, 17);
  std::vector<float> roundedA, roundedB, roundedC, bias(size_t(g.n)), roundedBias;
  for (int64_t j = 0; j < g.n; ++j)
    bias[size_t(j)] = 0.25f * float(j % 7) - 0.7f + 1e-3f * float(j);
  std::vector<uint16_t> bitsA = bf16Of(in.a, roundedA), bitsB = bf16Of(in.b, roundedB),
                        bitsC = bf16Of(in.c, roundedC), bitsBias = bf16Of(bias, roundedBias);
  Buffers expected = in;
  expected.a = roundedA, expected.b = roundedB;
  expected.run(g);
  std::vector<uint16_t> got = bitsC;
  tfc_sgemm_fused(g.batch, g.m, g.n, g.k, intptr_t(bitsA.data()), g.lda, g.strideA,
                  g.transA | gemm::kBf16, intptr_t(bitsB.data()), g.ldb, g.strideB,
                  g.transB | gemm::kBf16, intptr_t(got.data()), g.ldc, g.strideC, gemm::kBf16,
                  gemm::kNoActivation, intptr_t(bitsBias.data()), 0, 0, 0, 0);
  size_t wrong = 0, outside = 0, biasSeen = 0;
  for (size_t at = 0; at < got.size(); ++at) {
    const int64_t i = int64_t(at) / g.ldc, j = int64_t(at) % g.ldc;
    if (i >= g.m || j >= g.n) {
      outside += got[at] != bitsC[at];
      continue;
    }
    const float product = expected.c[at];
    wrong += got[at] != k::bf16Bits(product + roundedBias[size_t(j)]);
    biasSeen += got[at] != k::bf16Bits(product);
  }
  EXPECT_EQ(wrong, 0u) << g.str();
  EXPECT_GT(biasSeen, size_t(g.m * g.n) / 2) << g.str();
  EXPECT_EQ(outside, 0u) << g.str();
}

// tf-bf16-gemm-operands' copies on the CPU (--target=cuda-emulated): a
// transpose flag with abi::gemm::kBf16 reads that operand as bf16 bits,
// widened exactly, so the product has the bits of the fp32 GEMM of the
// rounded values, for every layout (transposes, padded rows, batches, a
// shared operand, accumulation); the fused and bias-gradient twins too.
TEST(Gemm, Bf16OperandsAreTheRoundedValues) {
  namespace gemm = tfc::abi::gemm;
  const Call calls[] = {dense(1, 37, 19, 45, false, false),
                        dense(1, 16, 24, 33, true, true, true, 3, 2, 1),
                        dense(3, 9, 40, 17, false, true, false, 0, 0, 0, false, true),
                        dense(2, 64, 8, 70, true, false, true, 5, 0, 0, true, false)};
  for (const Call &g : calls) {
    Buffers in(g, 11);
    Buffers expected = in;
    std::vector<float> roundedA, roundedB;
    std::vector<uint16_t> bitsA = bf16Of(in.a, roundedA), bitsB = bf16Of(in.b, roundedB);
    expected.a = roundedA, expected.b = roundedB;
    expected.run(g);
    std::vector<float> got = in.c;
    tfc_sgemm(g.batch, g.m, g.n, g.k, intptr_t(bitsA.data()), g.lda, g.strideA,
              g.transA | gemm::kBf16, intptr_t(bitsB.data()), g.ldb, g.strideB,
              g.transB | gemm::kBf16, intptr_t(got.data()), g.ldc, g.strideC, g.acc);
    EXPECT_EQ(std::memcmp(got.data(), expected.c.data(), sizeof(float) * got.size()), 0) << g.str();
    // One operand bf16, the other fp32: each read as it is stored.
    got = in.c;
    Buffers onlyB = in;
    onlyB.b = roundedB;
    onlyB.run(g);
    tfc_sgemm(g.batch, g.m, g.n, g.k, intptr_t(in.a.data()), g.lda, g.strideA, g.transA,
              intptr_t(bitsB.data()), g.ldb, g.strideB, g.transB | gemm::kBf16,
              intptr_t(got.data()), g.ldc, g.strideC, g.acc);
    EXPECT_EQ(std::memcmp(got.data(), onlyB.c.data(), sizeof(float) * got.size()), 0)
        << g.str() << ", B alone bf16";
  }
  // A weight gradient with its bias gradient: dW = dY^T X, db the sums of
  // dY's rows (A, transposed), from the bf16 values.
  const Call g = dense(1, 12, 20, 50, true, false);
  Buffers in(g, 5);
  std::vector<float> roundedA, roundedB;
  std::vector<uint16_t> bitsA = bf16Of(in.a, roundedA), bitsB = bf16Of(in.b, roundedB);
  std::vector<float> expectedC = in.c, gotC = in.c, expectedSums(12, -1.0f), gotSums(12, -2.0f);
  tfc_sgemm_bias_grad(1, g.m, g.n, g.k, intptr_t(roundedA.data()), g.lda, 0, 1,
                      intptr_t(roundedB.data()), g.ldb, 0, 0, intptr_t(expectedC.data()), g.ldc, 0,
                      0, gemm::kBiasGradOfA, intptr_t(expectedSums.data()));
  tfc_sgemm_bias_grad(1, g.m, g.n, g.k, intptr_t(bitsA.data()), g.lda, 0, 1 | gemm::kBf16,
                      intptr_t(bitsB.data()), g.ldb, 0, gemm::kBf16, intptr_t(gotC.data()), g.ldc,
                      0, 0, gemm::kBiasGradOfA, intptr_t(gotSums.data()));
  EXPECT_EQ(std::memcmp(gotC.data(), expectedC.data(), sizeof(float) * gotC.size()), 0);
  EXPECT_EQ(std::memcmp(gotSums.data(), expectedSums.data(), sizeof(float) * 12), 0);
  // And a ReLU with a bias (tfc_sgemm_fused calls tfc_sgemm).
  const Call plain = dense(1, 12, 20, 50, false, true);
  Buffers fusedIn(plain, 6);
  std::vector<uint16_t> fusedA = bf16Of(fusedIn.a, roundedA), fusedB = bf16Of(fusedIn.b, roundedB);
  std::vector<float> bias(20, 0.25f);
  std::vector<float> wantC = fusedIn.c, haveC = fusedIn.c;
  tfc_sgemm_fused(1, plain.m, plain.n, plain.k, intptr_t(roundedA.data()), plain.lda, 0, 0,
                  intptr_t(roundedB.data()), plain.ldb, 0, 1, intptr_t(wantC.data()), plain.ldc, 0,
                  0, gemm::kRelu, intptr_t(bias.data()), 0, 0, 0, 0);
  tfc_sgemm_fused(1, plain.m, plain.n, plain.k, intptr_t(fusedA.data()), plain.lda, 0, gemm::kBf16,
                  intptr_t(fusedB.data()), plain.ldb, 0, 1 | gemm::kBf16, intptr_t(haveC.data()),
                  plain.ldc, 0, 0, gemm::kRelu, intptr_t(bias.data()), 0, 0, 0, 0);
  EXPECT_EQ(std::memcmp(haveC.data(), wantC.data(), sizeof(float) * haveC.size()), 0);
  // The rounding is real: the fp32 product differs.
  std::vector<float> fp32C = fusedIn.c;
  tfc_sgemm_fused(1, plain.m, plain.n, plain.k, intptr_t(fusedIn.a.data()), plain.lda, 0, 0,
                  intptr_t(fusedIn.b.data()), plain.ldb, 0, 1, intptr_t(fp32C.data()), plain.ldc, 0,
                  0, gemm::kRelu, intptr_t(bias.data()), 0, 0, 0, 0);
  EXPECT_NE(std::memcmp(haveC.data(), fp32C.data(), sizeof(float) * haveC.size()), 0);
}

// Batch reductions (strideC 0): every layout, with and without accumulate,
// K = 0, items spread out (padded leading dims) and side by side (run as one
// GEMM over batch * K), and the convolution weight gradients the compiler
// emits (A's items slices of a wide matrix, B transposed).
TEST(Gemm, BatchReduction) {
  for (int layout = 0; layout < 4; ++layout)
    for (bool acc : {false, true}) {
      bool tA = layout & 1, tB = layout & 2;
      checkAllIsas(reduction(2, 13, 37, 7, tA, tB, acc, false));
      checkAllIsas(reduction(3, 13, 37, 0, tA, tB, acc, false));
      checkAllIsas(reduction(5, 19, 45, 23, tA, tB, acc, true));
      Call padded = dense(3, 19, 45, 23, tA, tB, acc, 3, 17, 5);
      padded.strideC = 0;
      checkAllIsas(padded);
      checkAllIsas(reduction(9, 30, 20, 300, tA, tB, acc, false)); // K steps
    }
  Call conv = reduction(128, 64, 64, 100, false, true, false, false);
  conv.lda = 6400;
  conv.strideA = 50; // items overlap: they are only read
  checkAllIsas(conv);
  checkAllIsas(reduction(64, 64, 64, 128, false, true, false, true));
  checkAllIsas(reduction(64, 64, 64, 128, false, false, true, false));
}

// A GEMV over a plain A (N = 1) reads A's rows as they lie, sixteen FMA
// chains a row added in a fixed tree (KernelSet::dot): AVX2 and AVX-512 give
// the same bits, within the reference's bound; K around the 16 lanes, rows
// around the kernel's 4 and the 64-row blocks, b contiguous either way (B
// one column, or op(B) a transposed row), items apart, shared or summed.
TEST(Gemm, GemvReadsRowsAsTheyLie) {
  for (int64_t m : {1, 3, 4, 5, 64, 65, 200, 640})
    for (int64_t k : {16, 17, 31, 100, 256, 300})
      for (bool tB : {false, true})
        for (bool acc : {false, true}) {
          unsigned seed = unsigned(m * 13 + k);
          checkAllIsas(dense(1, m, 1, k, false, tB, acc), seed);
          checkAllIsas(dense(3, m, 1, k, false, tB, acc, 5, 0, 2), seed);
          checkAllIsas(dense(4, m, 1, k, false, tB, acc, 0, 0, 0, /*sharedA=*/true), seed);
          checkAllIsas(reduction(6, m, 1, k, false, tB, acc, false), seed);
        }
  // One row times a transposed B: a GEMV of B's rows (dot products).
  for (int64_t n : {2, 5, 64, 203})
    for (int64_t k : {16, 17, 100, 300})
      for (bool acc : {false, true}) {
        unsigned seed = unsigned(n * 7 + k);
        checkAllIsas(dense(1, 1, n, k, false, true, acc), seed);
        checkAllIsas(dense(3, 1, n, k, false, true, acc, 5, 2, 1), seed);
        checkAllIsas(reduction(6, 1, n, k, false, true, acc, false), seed);
      }
  // A bias gradient's shape: 128 samples of 64 x 100 summed, A's rows padded.
  Call bias = reduction(128, 64, 1, 100, false, false, false, false);
  bias.lda = 104;
  bias.strideA = 64 * 104;
  checkAllIsas(bias);
}

/// `r`'s operands copied to a layout with the items apart (dense()'s), so
/// that tfc_sgemm cannot run it as one GEMM.
Buffers spreadOut(const Call &r, const Buffers &in, Call &spread) {
  spread = dense(r.batch, r.m, r.n, r.k, r.transA, r.transB, r.acc, 1, 2, 0);
  spread.strideC = 0;
  Buffers out(spread, 0);
  out.c = in.c;
  for (int64_t item = 0; item < r.batch; ++item)
    for (int64_t p = 0; p < r.k; ++p) {
      for (int64_t i = 0; i < r.m; ++i) {
        auto at = [&](const Call &g) {
          return item * g.strideA + (g.transA ? p * g.lda + i : i * g.lda + p);
        };
        out.a[size_t(at(spread))] = in.a[size_t(at(r))];
      }
      for (int64_t j = 0; j < r.n; ++j) {
        auto at = [&](const Call &g) {
          return item * g.strideB + (g.transB ? j * g.ldb + p : p * g.ldb + j);
        };
        out.b[size_t(at(spread))] = in.b[size_t(at(r))];
      }
    }
  return out;
}

// A reduction is the GEMM over its items' K side by side, bit for bit (the
// same chains in the same order), whether the items are side by side in
// memory or apart.
TEST(Gemm, BatchReductionIsOneGemmOverBatchTimesK) {
  const Call calls[] = {
      reduction(4, 13, 37, 7, false, false, false, true),
      reduction(5, 30, 50, 60, true, false, true, true),
      reduction(3, 70, 20, 300, false, true, false, true),
      reduction(128, 64, 64, 100, false, true, false, true),
      reduction(64, 64, 64, 128, true, true, true, true),
  };
  for (Isa isa : supportedIsas()) {
    tfc::rt::gemm::forceIsa(isa);
    for (const Call &g : calls) {
      const Buffers in(g, 5);
      Buffers one = in, together = in;
      one.run(wide(g));
      together.run(g);
      Call spread;
      Buffers apart = spreadOut(g, in, spread);
      apart.run(spread);
      Reference(g, in).expectMatches(g, in, together.c);
      EXPECT_EQ(std::memcmp(one.c.data(), together.c.data(), sizeof(float) * one.c.size()), 0)
          << g.str() << ": side by side (" << tfc::rt::gemm::activeKernels().name << ")";
      EXPECT_EQ(std::memcmp(one.c.data(), apart.c.data(), sizeof(float) * one.c.size()), 0)
          << spread.str() << ": apart (" << tfc::rt::gemm::activeKernels().name << ")";
    }
  }
  tfc::rt::gemm::forceIsa(tfc::rt::gemm::bestIsa());
}

// The seed models' GEMMs as `tfc compile --emit=buffers` prints them (a
// selection of tools/bench/gemm/shapes.txt: every layout, skinny, batched,
// and strided slices of a fused QKV projection).
TEST(Gemm, ModelShapes) {
  const Call calls[] = {
      {1, 2048, 32, 10, 10, 0, 0, 10, 0, 1, 32, 0, 0},         // reverse: embedding
      {1, 2048, 96, 32, 32, 0, 0, 32, 0, 1, 96, 0, 0},         // reverse: QKV
      {128, 16, 16, 32, 96, 1536, 0, 96, 1536, 1, 16, 256, 0}, // reverse: Q K^T
      {128, 16, 32, 16, 16, 256, 0, 96, 1536, 0, 32, 512, 0},  // reverse: P V
      {128, 16, 32, 16, 16, 256, 1, 96, 1536, 0, 32, 512, 0},  // reverse: dV
      {1, 2048, 32, 10, 10, 0, 0, 32, 0, 0, 32, 0, 1},         // reverse: dX, accumulated
      {1, 10, 32, 2048, 10, 0, 1, 32, 0, 0, 32, 0, 0},         // reverse: dW
      {1, 640, 256, 512, 512, 0, 0, 512, 0, 1, 256, 0, 0},     // set_anomaly
      {1, 640, 768, 256, 256, 0, 0, 256, 0, 1, 768, 0, 0},
      {256, 10, 10, 64, 192, 1920, 0, 192, 1920, 1, 10, 100, 0},
      {256, 10, 64, 10, 10, 100, 1, 64, 640, 0, 64, 640, 0},
      {1, 640, 1, 256, 256, 0, 0, 256, 0, 1, 1, 0, 0},
      {1, 1, 256, 640, 1, 0, 1, 256, 0, 0, 256, 0, 0},
      {1, 1, 256, 640, 640, 0, 0, 256, 0, 0, 256, 0, 0}, // one pass of 16 vectors
      {1, 1, 200, 64, 64, 0, 0, 200, 0, 0, 200, 0, 1},   // a ragged last vector
      {1, 1, 300, 64, 64, 0, 0, 300, 0, 0, 300, 0, 0},   // 256 columns, then 44
      {1, 512, 256, 640, 512, 0, 1, 256, 0, 0, 256, 0, 0},
      {1, 64, 1600, 5, 5, 0, 0, 1600, 0, 0, 1600, 0, 0}, // fleuret (N or K cut to 1600)
      {1, 64, 1600, 320, 320, 0, 0, 1600, 0, 0, 1600, 0, 0},
      {1, 64, 320, 1600, 1600, 0, 0, 320, 0, 0, 320, 0, 0},
      {1, 64, 5, 1600, 1600, 0, 0, 5, 0, 0, 5, 0, 0},
      {16, 100, 100, 96, 96, 9600, 0, 100, 9600, 0, 100, 10000, 0},
      {16, 96, 100, 100, 96, 9600, 1, 100, 10000, 0, 100, 9600, 0},
      {48, 2, 2, 2, 6, 12, 0, 6, 12, 1, 2, 4, 0}, // encoder_decoder
      {1, 2, 6, 32, 2, 0, 1, 6, 0, 0, 6, 0, 0},
  };
  for (const Call &g : calls)
    checkAllIsas(g, 7);
}

// The pool may be resized between jobs (ThreadPool.cpp restarts its workers),
// so one process can compare 1, 2 and 3 threads. The shapes are large enough
// to be split (2^24 multiply-adds): along M, along N, and across the items
// of a batch (but a reduction's only by blocks of C).
TEST(Gemm, BitwiseIdenticalForAnyThreadCount) {
  checkThreadCounts({
      dense(1, 2048, 96, 96, false, true),
      dense(1, 64, 3000, 320, false, false),
      dense(1, 700, 300, 300, true, false),
      dense(1, 37, 45, 12000, true, true, true),
      dense(128, 100, 100, 96, false, true),
      dense(3, 301, 77, 300, false, false, false, 0, 0, 3),
      // a short K over a plain B, cut along N: the short-K kernel's columns
      // start past the first
      dense(1, 64, 4000, 6, false, false),
      // one row times a plain B, cut along N: each thread's columns in
      // blocks of 256 and a ragged rest
      dense(1, 1, 4000, 300, false, false),
      // batch reductions: cut along N, along M and N, along M only
      reduction(128, 64, 64, 100, false, true, false, false),
      reduction(64, 100, 24, 128, true, false, true, false),
      reduction(16, 200, 16, 400, false, false, false, false),
      // GEMVs: rows in blocks over the pool, items apart and summed
      dense(2, 4000, 1, 300, false, false),
      reduction(64, 640, 1, 256, false, true, true, false),
      // outer products: rows of the batch in ranges over the pool
      dense(4, 640, 256, 1, false, false),
      dense(3, 700, 100, 1, true, true, true),
  }, 3);
}

/// What the test's epilogue sees: C, and for each row of the batch (row
/// b * m + i is row i of C[b]; C's own in a reduction) how often it ran and
/// the row as it found it.
struct EpilogueProbe {
  float *c;
  int64_t m, ldc, strideC, n;
  std::vector<std::atomic<int>> calls;
  std::vector<float> seen;
  EpilogueProbe(float *c, int64_t rows, int64_t m, int64_t ldc, int64_t strideC, int64_t n)
      : c(c), m(m), ldc(ldc), strideC(strideC), n(n), calls(size_t(rows)),
        seen(size_t(rows * n)) {}
  /// Where the batch's row r starts in C.
  int64_t row(int64_t r) const { return r / m * strideC + r % m * ldc; }

  /// Records rows [i0, i1) and applies relu to them in place.
  static void run(void *context, int64_t i0, int64_t i1) {
    auto *probe = static_cast<EpilogueProbe *>(context);
    for (int64_t i = i0; i < i1; ++i) {
      probe->calls[size_t(i)].fetch_add(1);
      for (int64_t j = 0; j < probe->n; ++j) {
        float &x = probe->c[probe->row(i) + j];
        probe->seen[size_t(i * probe->n + j)] = x;
        x = std::max(x, 0.0f);
      }
    }
  }
};

// tfc_sgemm_epilogue: the epilogue runs once on every row, after the row is
// final (it sees the plain GEMM's bits), and its writes are the result; on
// a GEMM cut along M (each thread finishing its own rows), along N (the
// epilogue after), run serially, a GEMV, a batch of products (each item's
// rows as they finish, small and large), a batch reduction (after its last
// item, folded into one GEMM or not) and K = 0, on any thread count.
TEST(Gemm, EpilogueRunsOnceOnFinishedRows) {
  const Call calls[] = {
      dense(1, 40, 24, 20, false, true),       dense(1, 2048, 96, 96, false, true),
      dense(1, 2048, 32, 64, true, false),     dense(1, 64, 3000, 320, false, false),
      dense(1, 300, 700, 700, false, false, true, 0, 0, 5),
      dense(1, 500, 1, 300, false, false),     dense(1, 30, 20, 0, false, false),
      dense(5, 40, 24, 20, false, true),       dense(3, 64, 100, 320, false, false, true),
      dense(40, 64, 100, 64, true, false, false, 0, 0, 0, /*sharedA=*/true),
      reduction(16, 200, 48, 400, false, false, false, true),
      reduction(16, 20, 48, 40, false, true, true, false),
  };
  int before = tfc::rt::numThreads();
  for (const Call &g : calls) {
    const Buffers in(g, 5);
    Buffers plain = in;
    plain.run(g);
    for (int threads : {1, 2, 3}) {
      tfc::rt::setNumThreads(threads);
      Buffers out = in;
      const int64_t rows = (g.strideC == 0 ? 1 : g.batch) * g.m;
      EpilogueProbe probe(out.c.data(), rows, g.m, g.ldc, g.strideC, g.n);
      tfc_sgemm_epilogue(g.batch, g.m, g.n, g.k, intptr_t(out.a.data()), g.lda, g.strideA,
                         g.transA, intptr_t(out.b.data()), g.ldb, g.strideB, g.transB,
                         intptr_t(out.c.data()), g.ldc, g.strideC, g.acc, &EpilogueProbe::run,
                         &probe);
      int failures = 0;
      for (int64_t i = 0; i < rows && failures < 5; ++i) {
        if (probe.calls[size_t(i)] != 1 && ++failures)
          ADD_FAILURE() << g.str() << " on " << threads << " threads: row " << i << " ran "
                        << probe.calls[size_t(i)] << " times";
        for (int64_t j = 0; j < g.n; ++j) {
          float final = plain.c[size_t(probe.row(i) + j)];
          float seen = probe.seen[size_t(i * g.n + j)];
          float result = out.c[size_t(probe.row(i) + j)];
          if (std::memcmp(&seen, &final, sizeof(float)) != 0 && ++failures)
            ADD_FAILURE() << g.str() << " on " << threads << " threads: C[" << i << "][" << j
                          << "] was " << seen << " when the epilogue ran, finally " << final;
          float relu = std::max(final, 0.0f);
          if (std::memcmp(&result, &relu, sizeof(float)) != 0 && ++failures)
            ADD_FAILURE() << g.str() << ": C[" << i << "][" << j << "] = " << result
                          << " after the epilogue, expected " << relu;
        }
      }
    }
  }
  tfc::rt::setNumThreads(before);
}

// tfc_sgemm_windows: a convolution's GEMM reading its windows in place
// (B's row (c, j) = x[c, j:], rows in two levels), from the padded input or
// from the unpadded one with the padding's zeros made up in packing, gives
// the bits of tfc_sgemm on the explicit im2col matrix, for one or many
// samples, K in one or several blocks, accumulating or not, with padding
// narrower than, equal to and wider than the kernel's reach, on any thread
// count, by the packed tiles and, for a few output channels, unpacked.
TEST(Gemm, WindowsAreTheIm2colGemm) {
  struct Conv {
    int64_t batch, outChannels, channels, kernel, width, pad;
    bool accumulate;
  };
  const Conv convs[] = {{1, 4, 2, 3, 5, 1, false},
                        {3, 5, 1, 5, 17, 2, true},
                        {2, 64, 64, 5, 100, 2, true},
                        {4, 7, 100, 3, 40, 0, false},
                        {2, 3, 2, 3, 6, 4, false},
                        {128, 64, 64, 5, 100, 2, false},
                        // A few output channels: read in place, unpacked
                        // (KernelSet::windows), past 128 columns too.
                        {128, 1, 64, 5, 100, 2, true},
                        {3, 2, 3, 5, 200, 2, false},
                        {2, 4, 5, 3, 37, 1, true},
                        {5, 3, 4, 1, 19, 0, false},
                        {2, 1, 3, 7, 16, 6, true},
                        {1, 1, 2, 16, 300, 7, false},
                        // K <= 10 over 16 rows or more: B's rows in registers
                        // (KernelSet::smallK), padding masked, 3 vectors a block.
                        {4, 64, 1, 5, 100, 2, false},
                        {3, 20, 2, 3, 37, 1, true},
                        {2, 17, 1, 5, 50, 0, true},
                        {2, 33, 5, 2, 70, 1, false}};
  int before = tfc::rt::numThreads();
  for (const Conv &v : convs) {
    const int64_t padded = v.width + 2 * v.pad, out = padded - v.kernel + 1,
                  k = v.channels * v.kernel;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> w(v.outChannels * k), x(v.batch * v.channels * v.width),
        c0(v.batch * v.outChannels * out);
    for (auto *buffer : {&w, &x, &c0})
      for (float &f : *buffer)
        f = dist(rng);
    std::vector<float> xpad(v.batch * v.channels * padded, 0.0f);
    for (int64_t r = 0; r < v.batch * v.channels; ++r)
      std::copy(x.begin() + r * v.width, x.begin() + (r + 1) * v.width,
                xpad.begin() + r * padded + v.pad);
    // im2col[n][(c, j)][t] = xpad[n][c][t + j], then plain GEMMs.
    std::vector<float> cols(v.batch * k * out);
    for (int64_t n = 0; n < v.batch; ++n)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t t = 0; t < out; ++t)
          cols[(n * k + p) * out + t] =
              xpad[(n * v.channels + p / v.kernel) * padded + p % v.kernel + t];
    std::vector<float> expected = c0;
    tfc::rt::setNumThreads(1);
    tfc_sgemm(v.batch, v.outChannels, out, k, intptr_t(w.data()), k, 0, 0,
              intptr_t(cols.data()), out, k * out, 0, intptr_t(expected.data()), out,
              v.outChannels * out, v.accumulate);
    for (int threads : {1, 2, 3}) {
      tfc::rt::setNumThreads(threads);
      for (bool fromPadded : {true, false}) {
        std::vector<float> got = c0;
        const std::vector<float> &input = fromPadded ? xpad : x;
        int64_t pitch = fromPadded ? padded : v.width;
        tfc_sgemm_windows(v.batch, v.outChannels, out, k, intptr_t(w.data()), k, 0, 0,
                          intptr_t(input.data()), pitch, v.channels * pitch, 0,
                          intptr_t(got.data()), out, v.outChannels * out, v.accumulate,
                          v.kernel, 1, fromPadded ? 0 : v.pad, fromPadded ? 0 : v.width);
        EXPECT_EQ(std::memcmp(got.data(), expected.data(), sizeof(float) * got.size()), 0)
            << v.batch << " samples, " << v.outChannels << "x" << v.channels << "x" << v.kernel
            << " over " << v.width << " padded by " << v.pad << ", " << threads << " threads, "
            << (fromPadded ? "padded input" : "padding made up");
        if (fromPadded)
          continue;
        // With an epilogue (tfc_sgemm_windows_epilogue): relu on every row of
        // every sample once, after the row is final.
        got = c0;
        const int64_t rows = v.batch * v.outChannels;
        EpilogueProbe probe(got.data(), rows, v.outChannels, out, v.outChannels * out, out);
        tfc_sgemm_windows_epilogue(v.batch, v.outChannels, out, k, intptr_t(w.data()), k, 0, 0,
                                   intptr_t(x.data()), v.width, v.channels * v.width, 0,
                                   intptr_t(got.data()), out, v.outChannels * out,
                                   v.accumulate, v.kernel, 1, v.pad, v.width,
                                   &EpilogueProbe::run, &probe);
        int failures = 0;
        for (int64_t r = 0; r < rows && failures < 5; ++r) {
          if (probe.calls[size_t(r)] != 1 && ++failures)
            ADD_FAILURE() << "windows, " << threads << " threads: row " << r << " ran "
                          << probe.calls[size_t(r)] << " times";
          for (int64_t t = 0; t < out; ++t) {
            const float final = expected[size_t(r * out + t)], relu = std::max(final, 0.0f);
            if ((std::memcmp(&probe.seen[size_t(r * out + t)], &final, sizeof(float)) != 0 ||
                 std::memcmp(&got[size_t(r * out + t)], &relu, sizeof(float)) != 0) &&
                ++failures)
              ADD_FAILURE() << "windows, " << threads << " threads: row " << r << " column "
                            << t << " saw " << probe.seen[size_t(r * out + t)] << " and left "
                            << got[size_t(r * out + t)] << ", expected " << final;
          }
        }
      }
    }
  }
  tfc::rt::setNumThreads(before);
}

// A weight gradient's taps: C[(j, c)][o] = sum_{n, t} xpad[n][c][j + t] *
// dy[n][o][t], A's rows in two levels (tap j, channel c), read in place;
// the same bits as one batch-reduction GEMM per tap over copied windows.
// With a padding, xpad is x zero-padded, and the taps read x itself as well
// (pad and width: each tap's chains over its columns inside x), down to taps
// that lie wholly in the padding.
TEST(Gemm, TapsAreOneReductionPerTap) {
  struct Grad {
    int64_t batch, outChannels, channels, taps, width;
    bool transB, accumulate;
    int64_t pad = 0; // 0: xpad is all data
  };
  const Grad grads[] = {{1, 4, 2, 3, 5, true, false},     {3, 5, 1, 5, 17, false, true},
                        {2, 64, 64, 5, 100, true, true},  {4, 7, 13, 3, 40, false, false},
                        {16, 64, 64, 5, 100, true, false}, {5, 1, 64, 5, 100, true, false},
                        // One input channel: dot products of dy's rows and x's shifts.
                        {128, 64, 1, 5, 100, true, true}, {3, 5, 1, 5, 17, true, false},
                        {1, 3, 1, 2, 9, true, true},
                        // Zero-padded inputs, also read unpadded.
                        {128, 64, 64, 5, 100, true, true, 2}, {3, 5, 1, 5, 17, true, false, 2},
                        {128, 64, 1, 5, 100, true, true, 2}, {2, 4, 3, 3, 9, false, false, 1},
                        {2, 3, 2, 7, 5, true, true, 4},    {2, 3, 2, 5, 3, true, false, 3},
                        {3, 2, 1, 5, 3, true, true, 3},
                        // One output channel: a GEMV per tap (KernelSet::dot).
                        {5, 1, 64, 5, 100, true, false}, {4, 1, 1, 5, 40, false, true, 2},
                        {3, 1, 3, 3, 20, true, true, 1},
                        // One channel in blocks of taps and output channels
                        // (KernelSet::dotTile): 7 and 16 taps, ragged blocks.
                        {4, 13, 1, 7, 33, true, true}, {2, 6, 1, 16, 40, true, false, 3},
                        {1, 9, 1, 11, 50, true, true}, {5, 3, 1, 4, 16, true, false, 1}};
  int before = tfc::rt::numThreads();
  // Every case's result on the first FMA set: AVX2 and AVX-512 agree.
  std::vector<std::vector<float>> fmaResults(std::size(grads));
  for (Isa isa : supportedIsas()) {
    tfc::rt::gemm::forceIsa(isa);
    SCOPED_TRACE(tfc::rt::gemm::activeKernels().name);
    for (const Grad &v : grads) {
      const int64_t padded = v.width + v.taps - 1, m = v.taps * v.channels,
                    inputWidth = padded - 2 * v.pad;
      std::mt19937 rng(5);
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> xpad(v.batch * v.channels * padded), dy(v.batch * v.outChannels * v.width),
          c0(m * v.outChannels), x(v.batch * v.channels * inputWidth);
      for (auto *buffer : {&xpad, &dy, &c0, &x})
        for (float &f : *buffer)
          f = dist(rng);
      if (v.pad > 0) { // xpad = x with pad zeros on each side
        std::fill(xpad.begin(), xpad.end(), 0.0f);
        for (int64_t r = 0; r < v.batch * v.channels; ++r)
          std::copy(x.begin() + r * inputWidth, x.begin() + (r + 1) * inputWidth,
                    xpad.begin() + r * padded + v.pad);
      }
      // B as the GEMM reads it: dy[n][o][t] (transposed) or dy[n][t][o].
      std::vector<float> b(dy.size());
      for (int64_t n = 0; n < v.batch; ++n)
        for (int64_t o = 0; o < v.outChannels; ++o)
          for (int64_t t = 0; t < v.width; ++t)
            b[v.transB ? (n * v.outChannels + o) * v.width + t
                       : (n * v.width + t) * v.outChannels + o] =
                dy[(n * v.outChannels + o) * v.width + t];
      const int64_t ldb = v.transB ? v.width : v.outChannels, strideB = v.outChannels * v.width;
      std::vector<float> expected = c0;
      tfc::rt::setNumThreads(1);
      std::vector<float> window(v.batch * v.channels * v.width);
      for (int64_t j = 0; j < v.taps; ++j) {
        for (int64_t r = 0; r < v.batch * v.channels; ++r)
          std::copy(xpad.begin() + r * padded + j, xpad.begin() + r * padded + j + v.width,
                    window.begin() + r * v.width);
        tfc_sgemm(v.batch, v.channels, v.outChannels, v.width, intptr_t(window.data()), v.width,
                  v.channels * v.width, 0, intptr_t(b.data()), ldb, strideB, v.transB,
                  intptr_t(expected.data() + j * v.channels * v.outChannels), v.outChannels, 0,
                  v.accumulate);
      }
      for (int threads : {1, 2, 3}) {
        tfc::rt::setNumThreads(threads);
        for (bool fromPadded : {true, false}) {
          if (!fromPadded && v.pad == 0)
            continue;
          std::vector<float> got = c0;
          const std::vector<float> &input = fromPadded ? xpad : x;
          const int64_t pitch = fromPadded ? padded : inputWidth;
          tfc_sgemm_taps(v.batch, m, v.outChannels, v.width, intptr_t(input.data()), pitch,
                         v.channels * pitch, 0, intptr_t(b.data()), ldb, strideB, v.transB,
                         intptr_t(got.data()), v.outChannels, 0, v.accumulate, v.channels, 1,
                         fromPadded ? 0 : v.pad, fromPadded ? 0 : inputWidth);
          EXPECT_EQ(std::memcmp(got.data(), expected.data(), sizeof(float) * got.size()), 0)
              << v.batch << " samples, " << v.outChannels << "x" << v.channels << "x" << v.taps
              << " over " << v.width << (v.transB ? ", B transposed, " : ", ") << threads
              << " threads, " << (fromPadded ? "padded input" : "padding made up");
          std::vector<float> &first = fmaResults[size_t(&v - grads)];
          if (isa == Isa::Scalar)
            continue;
          if (first.empty())
            first = got;
          else
            EXPECT_EQ(std::memcmp(got.data(), first.data(), sizeof(float) * got.size()), 0)
                << v.batch << " samples, " << v.outChannels << "x" << v.channels << "x" << v.taps
                << ": AVX2 and AVX-512 differ";
        }
      }
    }
  }
  tfc::rt::gemm::forceIsa(tfc::rt::gemm::bestIsa());
  tfc::rt::setNumThreads(before);
}

} // namespace
