//===- ceiling.cpp - FMA and read rates of this machine, measured ---------===//
//
// Built with -march=native (tools/bench/gemm/run.sh). The vectors are the
// CPU's own width and the FMAs explicit: GCC splits a vector wider than the
// registers through memory, and under -std=c++17 never contracts a * b + c
// (64-byte vectors on an AVX2 Zen 3 measured 7.9 GFLOP/s and 20 GB/s from
// L1, a tenth of the truth, and marked every call "at ceiling").
//
//===----------------------------------------------------------------------===//

#include "tools/bench/gemm/ceiling.h"

#include "runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <immintrin.h>
#include <unistd.h>
#include <vector>

namespace ceiling {
namespace {

#if defined(__AVX512F__)
constexpr int kLanes = 16, kChains = 16; // 32 registers
#elif defined(__AVX__)
constexpr int kLanes = 8, kChains = 12; // 16 registers, two for x and y
#else
constexpr int kLanes = 4, kChains = 12;
#endif
typedef float Vector __attribute__((vector_size(4 * kLanes)));
using Clock = std::chrono::steady_clock;

/// x * y + z in one rounding: an FMA instruction where the CPU has one.
inline Vector fma(Vector x, Vector y, Vector z) {
#if defined(__AVX512F__)
  return _mm512_fmadd_ps(x, y, z);
#elif defined(__FMA__)
  return _mm256_fmadd_ps(x, y, z);
#else
  return x * y + z;
#endif
}

/// Independent chains of `steps` FMAs each, as many as the registers hold:
/// more than the FMA latency times the FMA units of any core here, so the
/// units never wait.
__attribute__((noipa)) float fmaChains(long steps, float scale) {
  Vector acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = Vector{} + float(i);
  const Vector x = Vector{} + scale, y = Vector{} + 1e-7f;
  for (long s = 0; s < steps; ++s)
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i)
      acc[i] = fma(acc[i], x, y);
  float total = 0;
  for (int i = 0; i < kChains; ++i)
    total += acc[i][0];
  return total;
}

/// The sum of `vectors` vectors in eight chains (one chain would wait on its
/// add: the loads are what is measured). noipa, here and above: GCC would
/// find the function pure and call it once for every pass.
__attribute__((noipa)) float sumVectors(const Vector *b, long vectors) {
  Vector s[8] = {};
  for (long i = 0; i + 8 <= vectors; i += 8)
#pragma GCC unroll 8
    for (int v = 0; v < 8; ++v)
      s[v] += b[i + v];
  for (int v = 1; v < 8; ++v)
    s[0] += s[v];
  return s[0][0];
}

/// The median seconds of `samples` runs of `run` on every thread at once.
template <class F> double medianSeconds(int samples, F &&run) {
  std::vector<double> seconds;
  const int threads = tfc::rt::numThreads();
  for (int s = 0; s < samples; ++s) {
    auto start = Clock::now();
    tfc::rt::parallelFor(threads, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t)
        run(t);
    });
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + samples / 2, seconds.end());
  return seconds[size_t(samples / 2)];
}

volatile float sink;

} // namespace

double fmaPeak() {
  constexpr long kSteps = 1 << 18; // some 2.5 ms a thread
  const double seconds = medianSeconds(7, [](int64_t) { sink = fmaChains(kSteps, 0.9999999f); });
  return 2.0 * kLanes * kChains * double(kSteps) * tfc::rt::numThreads() / seconds * 1e-9;
}

double readRate(size_t bytes) {
  const int threads = tfc::rt::numThreads();
  const long vectors = std::max<long>(8, long(bytes / threads / sizeof(Vector)) / 8 * 8);
  std::vector<Vector *> buffers(static_cast<size_t>(threads));
  for (Vector *&b : buffers) {
    b = static_cast<Vector *>(std::aligned_alloc(64, size_t(vectors) * sizeof(Vector)));
    for (long i = 0; i < vectors; ++i)
      b[i] = Vector{} + 1.0f;
  }
  // Some 5 ms of reading a sample, the first pass (from wherever the
  // buffer was) a small part of it.
  const long passes = std::max<long>(4, (1L << 27) / (vectors * long(sizeof(Vector))));
  const double seconds = medianSeconds(7, [&](int64_t t) {
    float total = 0;
    for (long p = 0; p < passes; ++p)
      total += sumVectors(buffers[size_t(t)], vectors);
    sink = total;
  });
  for (Vector *b : buffers)
    std::free(b);
  return double(threads) * double(passes) * double(vectors) * sizeof(Vector) / seconds * 1e-9;
}

const char *levelOf(size_t bytes) {
  const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const size_t perThread = bytes / size_t(tfc::rt::numThreads());
  if (l1 > 0 && perThread <= size_t(l1))
    return "L1";
  if (l2 > 0 && perThread <= size_t(l2))
    return "L2";
  return "L3";
}

} // namespace ceiling
