//===- WinogradTest.cpp - tfc_conv1d_winograd against the direct sum ------===//
//
// F(4, 5) rounds differently from the direct sum, so its outputs are held to
// the direct convolution in double within a bound on the rounding (a few
// float ulps of the sum of |w x|), not to its bits; its own bits must not
// depend on the thread count, and whatever it does not compute by minimal
// filtering must be exactly the windows GEMM it stands for.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Gemm.h"
#include "runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

struct Conv {
  int64_t batch, outChannels, channels, kernel, width, pad;
  bool accumulate, fromPadded;
  int64_t padded() const { return width + 2 * pad; }
  int64_t out() const { return padded() - kernel + 1; }
};

struct Data {
  std::vector<float> w, x, xpad, c0;
};

Data makeData(const Conv &v) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Data d;
  d.w.resize(size_t(v.outChannels * v.channels * v.kernel));
  d.x.resize(size_t(v.batch * v.channels * v.width));
  d.c0.resize(size_t(v.batch * v.outChannels * v.out()));
  for (auto *buffer : {&d.w, &d.x, &d.c0})
    for (float &f : *buffer)
      f = dist(rng);
  d.xpad.assign(size_t(v.batch * v.channels * v.padded()), 0.0f);
  for (int64_t r = 0; r < v.batch * v.channels; ++r)
    std::copy(d.x.begin() + r * v.width, d.x.begin() + (r + 1) * v.width,
              d.xpad.begin() + r * v.padded() + v.pad);
  return d;
}

/// The call under test, on the padded input or on the unpadded one.
void run(const Conv &v, const Data &d, std::vector<float> &c,
         void (*epilogue)(void *, int64_t, int64_t) = nullptr, void *context = nullptr) {
  const int64_t k = v.channels * v.kernel;
  const std::vector<float> &input = v.fromPadded ? d.xpad : d.x;
  const int64_t pitch = v.fromPadded ? v.padded() : v.width;
  const intptr_t args[] = {v.batch,
                           v.outChannels,
                           v.out(),
                           k,
                           intptr_t(d.w.data()),
                           k,
                           0,
                           0,
                           intptr_t(input.data()),
                           pitch,
                           v.channels * pitch,
                           0,
                           intptr_t(c.data()),
                           v.out(),
                           v.outChannels * v.out(),
                           v.accumulate,
                           v.kernel,
                           1,
                           v.fromPadded ? 0 : v.pad,
                           v.fromPadded ? 0 : v.width};
  if (epilogue)
    tfc_conv1d_winograd_epilogue(args[0], args[1], args[2], args[3], args[4], args[5], args[6],
                                 args[7], args[8], args[9], args[10], args[11], args[12], args[13],
                                 args[14], args[15], args[16], args[17], args[18], args[19],
                                 epilogue, context);
  else
    tfc_conv1d_winograd(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7],
                        args[8], args[9], args[10], args[11], args[12], args[13], args[14],
                        args[15], args[16], args[17], args[18], args[19]);
}

/// `call(c)` on 1, 2 and 3 threads, each from a copy of c0: the same bits
/// every time (checked); the result.
template <class Call>
std::vector<float> sameBitsOnAnyThreads(const std::vector<float> &c0, Call call) {
  const int before = tfc::rt::numThreads();
  std::vector<float> reference;
  for (int threads : {1, 2, 3}) {
    tfc::rt::setNumThreads(threads);
    std::vector<float> got = c0;
    call(got);
    if (threads == 1)
      reference = got;
    else
      EXPECT_EQ(std::memcmp(got.data(), reference.data(), sizeof(float) * got.size()), 0)
          << threads << " threads gave other bits than 1";
  }
  tfc::rt::setNumThreads(before);
  return reference;
}

/// Whether a minimal-filtering result is within its rounding of the direct
/// sum in double: the transforms carry factors up to 16 and 5.25, so 2^-16
/// of the terms' magnitude (some 500 float ulps of it), which a wrong
/// transform or a misplaced tile exceeds by far.
bool withinRounding(float got, double expected, double magnitude) {
  return std::abs(double(got) - expected) <= std::ldexp(magnitude + 1.0, -16);
}

// Five taps: outputs within the rounding bound of the direct sum in double,
// with output widths that are and are not whole tiles of 4, padding of 0 to
// 3, a few channels and many, one sample and batches of several chunks, on
// padded and unpadded inputs, accumulating or not; the same bits on 1, 2 and
// 3 threads.
TEST(Winograd, FiveTapsMatchTheDirectSum) {
  const Conv convs[] = {{1, 4, 2, 5, 8, 2, false, false},     {3, 5, 1, 5, 17, 2, true, false},
                        {2, 64, 64, 5, 100, 2, true, true},   {40, 64, 64, 5, 100, 2, false, false},
                        {5, 16, 24, 5, 37, 0, false, true},   {7, 3, 9, 5, 10, 3, true, false},
                        {2, 33, 17, 5, 203, 1, false, false}, {1, 2, 2, 5, 1, 2, false, false}};
  for (const Conv &v : convs) {
    const Data d = makeData(v);
    const int64_t out = v.out();
    const std::vector<float> got =
        sameBitsOnAnyThreads(d.c0, [&](std::vector<float> &c) { run(v, d, c); });
    int failures = 0;
    for (int64_t n = 0; n < v.batch; ++n)
      for (int64_t o = 0; o < v.outChannels; ++o)
        for (int64_t t = 0; t < out; ++t) {
          double sum = 0, magnitude = 0;
          for (int64_t c = 0; c < v.channels; ++c)
            for (int64_t j = 0; j < v.kernel; ++j) {
              const double term = double(d.w[size_t((o * v.channels + c) * v.kernel + j)]) *
                                  double(d.xpad[size_t((n * v.channels + c) * v.padded() + t + j)]);
              sum += term, magnitude += std::abs(term);
            }
          const size_t at = size_t((n * v.outChannels + o) * out + t);
          const double expected = (v.accumulate ? double(d.c0[at]) : 0.0) + sum;
          if (!withinRounding(got[at], expected, magnitude) && ++failures <= 5)
            ADD_FAILURE() << v.batch << "x" << v.outChannels << "x" << v.channels << " over "
                          << v.width << " pad " << v.pad << ": sample " << n << " channel " << o
                          << " position " << t << " gave " << got[at] << ", expected " << expected;
        }
  }
}

struct RowProbe {
  float *c;
  int64_t rowsPerItem, out;
  std::vector<int> calls;
  static void run(void *self, int64_t r0, int64_t r1) {
    auto *probe = static_cast<RowProbe *>(self);
    for (int64_t r = r0; r < r1; ++r) {
      ++probe->calls[size_t(r)];
      for (int64_t t = 0; t < probe->out; ++t)
        probe->c[r * probe->out + t] = std::max(probe->c[r * probe->out + t], 0.0f);
    }
  }
};

// The epilogue runs once on every row, after the row is final.
TEST(Winograd, EpilogueRunsOnceOnFinalRows) {
  const Conv v{23, 8, 12, 5, 50, 2, false, false};
  const Data d = makeData(v);
  std::vector<float> plain = d.c0;
  run(v, d, plain);
  const int before = tfc::rt::numThreads();
  for (int threads : {1, 2}) {
    tfc::rt::setNumThreads(threads);
    std::vector<float> got = d.c0;
    RowProbe probe{got.data(), v.outChannels, v.out(),
                   std::vector<int>(size_t(v.batch * v.outChannels))};
    run(v, d, got, &RowProbe::run, &probe);
    for (int64_t r = 0; r < v.batch * v.outChannels; ++r) {
      EXPECT_EQ(probe.calls[size_t(r)], 1) << "row " << r;
      for (int64_t t = 0; t < v.out(); ++t)
        EXPECT_EQ(got[size_t(r * v.out() + t)], std::max(plain[size_t(r * v.out() + t)], 0.0f))
            << "row " << r << " position " << t;
    }
  }
  tfc::rt::setNumThreads(before);
}

// Other kernel widths are the windows GEMM, bit for bit.
TEST(Winograd, OtherKernelsAreTheWindowsGemm) {
  for (const Conv &v :
       {Conv{3, 8, 4, 3, 20, 1, false, false}, Conv{2, 5, 3, 7, 30, 3, true, true}}) {
    const Data d = makeData(v);
    std::vector<float> got = d.c0, expected = d.c0;
    run(v, d, got);
    const int64_t k = v.channels * v.kernel;
    tfc_sgemm_windows(v.batch, v.outChannels, v.out(), k, intptr_t(d.w.data()), k, 0, 0,
                      intptr_t(v.fromPadded ? d.xpad.data() : d.x.data()),
                      v.fromPadded ? v.padded() : v.width,
                      v.channels * (v.fromPadded ? v.padded() : v.width), 0,
                      intptr_t(expected.data()), v.out(), v.outChannels * v.out(), v.accumulate,
                      v.kernel, 1, v.fromPadded ? 0 : v.pad, v.fromPadded ? 0 : v.width);
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), sizeof(float) * got.size()), 0)
        << "kernel " << v.kernel;
  }
}

// A weight gradient of 5 taps over the batch (tfc_conv1d_winograd_taps,
// F(5, 4)): dW^T[(j, c)][o] = sum_n sum_t xpad[n][c][t + j] dy[n][o][t],
// within the rounding bound of the direct sum in double, for batches of one
// sample to several groups of chunks, on padded and unpadded inputs,
// accumulating or not; the same bits on 1, 2 and 3 threads.
TEST(Winograd, WeightGradientMatchesTheDirectSum) {
  const Conv convs[] = {{3, 5, 4, 5, 17, 2, false, false},    {40, 64, 64, 5, 100, 2, true, false},
                        {5, 24, 16, 5, 37, 0, false, true},   {7, 3, 9, 5, 10, 3, true, false},
                        {2, 17, 33, 5, 203, 1, false, false}, {1, 2, 2, 5, 1, 2, false, false}};
  for (const Conv &v : convs) {
    // Conv's outChannels are dy's channels here, its channels x's.
    const Data d = makeData(v);
    const int64_t out = v.out(), rows = v.kernel * v.channels;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> dy(size_t(v.batch * v.outChannels * out)), c0(size_t(rows * v.outChannels));
    for (float &f : dy)
      f = dist(rng);
    for (float &f : c0)
      f = dist(rng);
    const std::vector<float> &input = v.fromPadded ? d.xpad : d.x;
    const int64_t pitch = v.fromPadded ? v.padded() : v.width;
    const std::vector<float> got = sameBitsOnAnyThreads(c0, [&](std::vector<float> &c) {
      tfc_conv1d_winograd_taps(v.batch, rows, v.outChannels, out, intptr_t(input.data()), pitch,
                               v.channels * pitch, 0, intptr_t(dy.data()), out, v.outChannels * out,
                               1, intptr_t(c.data()), v.outChannels, 0, v.accumulate, v.channels, 1,
                               v.fromPadded ? 0 : v.pad, v.fromPadded ? 0 : v.width);
    });
    int failures = 0;
    for (int64_t j = 0; j < v.kernel; ++j)
      for (int64_t c = 0; c < v.channels; ++c)
        for (int64_t o = 0; o < v.outChannels; ++o) {
          double sum = 0, magnitude = 0;
          for (int64_t n = 0; n < v.batch; ++n)
            for (int64_t t = 0; t < out; ++t) {
              const double term =
                  double(d.xpad[size_t((n * v.channels + c) * v.padded() + t + j)]) *
                  double(dy[size_t((n * v.outChannels + o) * out + t)]);
              sum += term, magnitude += std::abs(term);
            }
          const size_t at = size_t((j * v.channels + c) * v.outChannels + o);
          const double expected = (v.accumulate ? double(c0[at]) : 0.0) + sum;
          if (!withinRounding(got[at], expected, magnitude) && ++failures <= 5)
            ADD_FAILURE() << v.batch << " samples, " << v.channels << " -> " << v.outChannels
                          << " over " << v.width << " pad " << v.pad << ": tap " << j << " channel "
                          << c << " output channel " << o << " gave " << got[at] << ", expected "
                          << expected;
        }
  }
}

// A weight gradient of other than 5 taps, or with dy's rows along o, is the
// taps GEMM, bit for bit.
TEST(Winograd, OtherWeightGradientsAreTheTapsGemm) {
  const Conv v{3, 4, 6, 3, 20, 1, true, false};
  const Data d = makeData(v);
  const int64_t out = v.out(), rows = v.kernel * v.channels;
  std::vector<float> dy(size_t(v.batch * v.outChannels * out), 0.5f),
      got(size_t(rows * v.outChannels), 1.0f), expected = got;
  for (size_t i = 0; i < dy.size(); ++i)
    dy[i] = float(i % 7) - 3.0f;
  tfc_conv1d_winograd_taps(v.batch, rows, v.outChannels, out, intptr_t(d.x.data()), v.width,
                           v.channels * v.width, 0, intptr_t(dy.data()), out, v.outChannels * out,
                           1, intptr_t(got.data()), v.outChannels, 0, 1, v.channels, 1, v.pad,
                           v.width);
  tfc_sgemm_taps(v.batch, rows, v.outChannels, out, intptr_t(d.x.data()), v.width,
                 v.channels * v.width, 0, intptr_t(dy.data()), out, v.outChannels * out, 1,
                 intptr_t(expected.data()), v.outChannels, 0, 1, v.channels, 1, v.pad, v.width);
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), sizeof(float) * got.size()), 0);
}

} // namespace
