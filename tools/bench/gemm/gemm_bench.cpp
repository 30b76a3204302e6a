// gemm_bench: tfc_sgemm against OpenBLAS's cblas_sgemm on the seed models' GEMMs.
//
//   gemm_bench --threads N [--shapes shapes.txt] [--samples 21] [--filter MODEL] [--best]
//   gemm_bench --threads N --ceilings
//
// Reads the calls shapes.py wrote (model, pass, calls per step, then
// tfc_sgemm's arguments without pointers) and prints one row per call: the
// median GFLOP/s of each library over --samples timings, each timing long
// enough (>= 1 ms of calls) for the clock not to matter, and their ratio (on
// 1 thread the median over pairs of timings taken one after the other, with
// the middle half of the pairs' ratios; a call below 1.0 whose upper quartile
// reaches 1.0 is marked "< (noise)"). Each row also shows the call's
// ceiling on this machine (ceiling.h: the lower of the cores' FMA rate and
// the rate at which they read the bytes the call must touch, A, B and C once
// each, from the cache level that holds them), measured in the same run; a
// call below 1.0 where both libraries run at 90% of it or more is marked
// "< (at ceiling)". --ceilings prints the FMA rate and the read rates of a
// few buffer sizes, from L1 to beyond L2, and stops. Both libraries get
// the same thread count; a batched call is one tfc_sgemm and a loop of
// cblas_sgemm (OpenBLAS has no batched SGEMM). A convolution's
// tfc_sgemm_windows (B's rows the input's channels shifted by each tap) and
// a weight gradient's tfc_sgemm_taps (A's rows likewise) run on the input as
// it lies; OpenBLAS gets the same product on an im2col copy made before the
// clock starts (so its side never pays for the copy). Not a test: nothing
// fails.

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/GemmKernels.h"
#include "runtime/ThreadPool.h"
#include "tools/bench/gemm/ceiling.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" void openblas_set_num_threads(int);
extern "C" char *openblas_get_corename(void);

namespace {

struct Call {
  std::string model, pass;
  int perStep;
  long batch, m, n, k, lda, strideA, transA, ldb, strideB, transB, ldc, strideC, acc;
  std::string kind = "gemm"; // or "windows" (kInner ldbInner pad width), "taps" (mInner ldaOuter pad width)
  long extra[4] = {0, 0, 0, 0};
  // "winograd" and "winograd_taps" are windows and taps run by Winograd's
  // minimal filtering (tfc_conv1d_winograd, tfc_conv1d_winograd_taps).
  bool winograd = false;
  // The entry point, decided once: the timed loop compares no strings (two
  // std::string compares are a tenth of a 50 ns call).
  enum class Entry { Sgemm, Windows, Taps, WinogradWindows, WinogradTaps } entry = Entry::Sgemm;
};

std::vector<Call> readCalls(const std::string &path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "gemm_bench: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::vector<Call> calls;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream s(line);
    Call c;
    s >> c.model >> c.pass >> c.perStep >> c.batch >> c.m >> c.n >> c.k >> c.lda >> c.strideA >>
        c.transA >> c.ldb >> c.strideB >> c.transB >> c.ldc >> c.strideC >> c.acc;
    if (!s)
      continue;
    if (s >> c.kind) {
      if (c.kind == "winograd" || c.kind == "winograd_taps")
        c.winograd = true, c.kind = c.kind == "winograd" ? "windows" : "taps";
      int extras = c.kind == "windows" || c.kind == "taps" ? 4 : 0;
      for (int i = 0; i < extras; ++i)
        s >> c.extra[i];
      if (!s || extras == 0)
        continue; // a kind this bench does not know
    }
    c.entry = c.kind == "windows"
                  ? (c.winograd ? Call::Entry::WinogradWindows : Call::Entry::Windows)
              : c.kind == "taps" ? (c.winograd ? Call::Entry::WinogradTaps : Call::Entry::Taps)
                                 : Call::Entry::Sgemm;
    calls.push_back(c);
  }
  return calls;
}

/// 64-byte aligned floats, filled with uniform values in [-1, 1].
struct Buffer {
  float *data;
  size_t size;
  Buffer(size_t n, std::mt19937 &rng) : size(n) {
    data = static_cast<float *>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (size_t i = 0; i < n; ++i)
      data[i] = dist(rng);
  }
  ~Buffer() { std::free(data); }
};

size_t extent(long batch, long stride, long rows, long ld) {
  return size_t(stride * (batch - 1) + rows * ld);
}

void runTfc(const Call &c, const float *a, const float *b, float *out) {
  switch (c.entry) {
  case Call::Entry::WinogradWindows:
    return tfc_conv1d_winograd(c.batch, c.m, c.n, c.k, intptr_t(a), c.lda, c.strideA, c.transA,
                               intptr_t(b), c.ldb, c.strideB, c.transB, intptr_t(out), c.ldc,
                               c.strideC, c.acc, c.extra[0], c.extra[1], c.extra[2], c.extra[3]);
  case Call::Entry::WinogradTaps:
    return tfc_conv1d_winograd_taps(c.batch, c.m, c.n, c.k, intptr_t(a), c.lda, c.strideA, c.transA,
                                    intptr_t(b), c.ldb, c.strideB, c.transB, intptr_t(out), c.ldc,
                                    c.strideC, c.acc, c.extra[0], c.extra[1], c.extra[2],
                                    c.extra[3]);
  case Call::Entry::Windows:
    return tfc_sgemm_windows(c.batch, c.m, c.n, c.k, intptr_t(a), c.lda, c.strideA, c.transA,
                             intptr_t(b), c.ldb, c.strideB, c.transB, intptr_t(out), c.ldc,
                             c.strideC, c.acc, c.extra[0], c.extra[1], c.extra[2], c.extra[3]);
  case Call::Entry::Taps:
    return tfc_sgemm_taps(c.batch, c.m, c.n, c.k, intptr_t(a), c.lda, c.strideA, c.transA,
                          intptr_t(b), c.ldb, c.strideB, c.transB, intptr_t(out), c.ldc,
                          c.strideC, c.acc, c.extra[0], c.extra[1], c.extra[2], c.extra[3]);
  case Call::Entry::Sgemm:
    return tfc_sgemm(c.batch, c.m, c.n, c.k, intptr_t(a), c.lda, c.strideA, c.transA, intptr_t(b),
                     c.ldb, c.strideB, c.transB, intptr_t(out), c.ldc, c.strideC, c.acc);
  }
}

/// The floats the operands of `c` span as tfc reads them.
size_t extentA(const Call &c) {
  if (c.kind == "taps" && c.extra[3] > 0) // an unpadded input: channels of `width`
    return size_t(c.strideA * (c.batch - 1) + (c.extra[0] - 1) * c.lda + c.extra[3]);
  if (c.kind == "taps") // rows (j, i) at j * ldaOuter + i * lda, K columns
    return size_t(c.strideA * (c.batch - 1) + (c.extra[0] - 1) * c.lda +
                  (c.m / c.extra[0] - 1) * c.extra[1] + c.k);
  return extent(c.batch, c.strideA, c.transA ? c.k : c.m, c.lda);
}
size_t extentB(const Call &c) {
  if (c.kind == "windows") { // rows (c, j): channel c from j - pad, the input's width (or N + taps)
    long channels = c.k / c.extra[0];
    long width = c.extra[3] > 0 ? c.extra[3] : c.n + (c.extra[0] - 1) * c.extra[1];
    return size_t(c.strideB * (c.batch - 1) + (channels - 1) * c.ldb + width);
  }
  return extent(c.batch, c.strideB, c.transB ? c.n : c.k, c.ldb);
}

/// `c` as the plain GEMM OpenBLAS runs: the windows or taps copied out of
/// the input into dense matrices (im2col), one per item; `a` and `b` then
/// point into `dense`.
Call densify(const Call &c, const float *&a, const float *&b, std::vector<float> &dense) {
  Call d = c;
  d.kind = "gemm", d.entry = Call::Entry::Sgemm;
  if (c.kind == "windows") { // B[n][(ch, j)][t] = x[n][ch][t + j * ldbInner - pad] or 0
    long kInner = c.extra[0], step = c.extra[1], pad = c.extra[2], width = c.extra[3];
    dense.assign(size_t(c.batch * c.k * c.n), 0.0f);
    for (long n = 0; n < c.batch; ++n)
      for (long p = 0; p < c.k; ++p)
        for (long t = 0; t < c.n; ++t) {
          long at = t + (p % kInner) * step - pad;
          if (width == 0 || (at >= 0 && at < width))
            dense[size_t((n * c.k + p) * c.n + t)] =
                b[n * c.strideB + (p / kInner) * c.ldb + at];
        }
    d.ldb = c.n, d.strideB = c.k * c.n, d.transB = 0;
    b = dense.data();
  } else if (c.kind == "taps") { // A[n][(j, i)][p] = x[n][i] at j * ldaOuter + p - pad, or 0
    long mInner = c.extra[0], outer = c.extra[1], pad = c.extra[2], width = c.extra[3];
    dense.assign(size_t(c.batch * c.m * c.k), 0.0f);
    for (long n = 0; n < c.batch; ++n)
      for (long r = 0; r < c.m; ++r)
        for (long p = 0; p < c.k; ++p) {
          long at = (r / mInner) * outer + p - pad;
          if (width == 0 || (at >= 0 && at < width))
            dense[size_t((n * c.m + r) * c.k + p)] = a[n * c.strideA + (r % mInner) * c.lda + at];
        }
    d.lda = c.k, d.strideA = c.m * c.k, d.transA = 0;
    a = dense.data();
  }
  return d;
}

/// A batch reduction (strideC 0) accumulates every item after the first.
void runBlas(const Call &c, const float *a, const float *b, float *out) {
  for (long i = 0; i < c.batch; ++i)
    cblas_sgemm(CblasRowMajor, c.transA ? CblasTrans : CblasNoTrans,
                c.transB ? CblasTrans : CblasNoTrans, int(c.m), int(c.n), int(c.k), 1.0f,
                a + i * c.strideA, int(c.lda), b + i * c.strideB, int(c.ldb),
                c.acc || (c.strideC == 0 && i > 0) ? 1.0f : 0.0f, out + i * c.strideC,
                int(c.ldc));
}

using Clock = std::chrono::steady_clock;

/// Keeps every thread of tfc's pool busy for `ms`: an idle vCPU of this VM
/// takes milliseconds to come back to speed, and OpenBLAS's workers spin
/// (sched_yield) for about 0.1 s after a call before they sleep.
void busyAllThreads(int ms) {
  auto until = Clock::now() + std::chrono::milliseconds(ms);
  tfc::rt::parallelFor(tfc::rt::numThreads(), 1, [&](int64_t, int64_t) {
    while (Clock::now() < until)
      ;
  });
}

/// Calls per timing so that one timing lasts about 1 ms.
template <class F> long calibrate(F &&call) {
  for (long reps = 1;; reps *= 2) {
    auto start = Clock::now();
    for (long r = 0; r < reps; ++r)
      call();
    if (std::chrono::duration<double>(Clock::now() - start).count() > 1e-3 || reps > (1 << 20))
      return reps;
  }
}

/// Seconds per call of `reps` calls.
template <class F> double timeCalls(F &&call, long reps) {
  auto start = Clock::now();
  for (long r = 0; r < reps; ++r)
    call();
  return std::chrono::duration<double>(Clock::now() - start).count() / double(reps);
}

/// The median, or with --best the fastest (steadier on a busy machine).
bool useBest = false;
double summary(std::vector<double> v) {
  if (useBest)
    return *std::min_element(v.begin(), v.end());
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  int threads = 1, samples = 21;
  bool ceilingsOnly = false;
  std::string shapes = "tools/bench/gemm/shapes.txt", filter;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--best" || flag == "--ceilings") {
      if (flag == "--best")
        useBest = true;
      else
        ceilingsOnly = true;
      --i;
    } else if (i + 1 == argc) {
      std::fprintf(stderr, "gemm_bench: %s needs a value\n", flag.c_str());
      return 1;
    } else if (flag == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (flag == "--samples")
      samples = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--shapes")
      shapes = argv[i + 1];
    else if (flag == "--filter")
      filter = argv[i + 1];
    else {
      std::fprintf(stderr, "gemm_bench: unknown flag %s\n", flag.c_str());
      return 1;
    }
  }
  tfc::rt::setNumThreads(threads);
  openblas_set_num_threads(threads);
  busyAllThreads(300); // bring the clocks up before the first timing
  if (ceilingsOnly) {
    std::printf("threads %d: FMAs %.1f GFLOP/s\n", threads, ceiling::fmaPeak());
    for (size_t kib : {16, 256, 640, 900, 4096})
      std::printf("  reading %5zu KiB (%s): %6.1f GB/s\n", kib, ceiling::levelOf(kib << 10),
                  ceiling::readRate(kib << 10));
    return 0;
  }
  std::printf("threads %d, tfc kernels %s, OpenBLAS core %s, %s of %d\n\n", threads,
              tfc::rt::gemm::activeKernels().name, openblas_get_corename(),
              useBest ? "best" : "median", samples);
  std::printf("%-17s %-4s %5s %6s %6s %6s %3s %3s %3s %10s %10s %10s %6s %11s\n", "model", "pass",
              "batch", "M", "N", "K", "tA", "tB", "acc", "tfc GF/s", "BLAS GF/s", "ceiling",
              "ratio", "middle half");

  std::mt19937 rng(1);
  double logRatioSum = 0;
  int rows = 0, below = 0, clearlyBelow = 0, belowAtCeiling = 0;
  std::map<size_t, double> readRates; // GB/s by footprint, measured once each
  for (const Call &c : readCalls(shapes)) {
    if (!filter.empty() && c.model != filter)
      continue;
    Buffer a(extentA(c), rng);
    Buffer b(extentB(c), rng);
    const float *denseA = a.data, *denseB = b.data;
    std::vector<float> dense;
    const Call plain = densify(c, denseA, denseB, dense);
    Buffer out(extent(c.batch, c.strideC, c.m, c.ldc), rng);
    Buffer check(out.size, rng);
    std::memcpy(check.data, out.data, out.size * sizeof(float));

    // Both libraries agree before anything is timed (accumulating calls
    // start from the same C).
    runTfc(c, a.data, b.data, out.data);
    runBlas(plain, denseA, denseB, check.data);
    double worst = 0;
    for (size_t i = 0; i < out.size; ++i)
      worst = std::max(worst, double(std::fabs(out.data[i] - check.data[i])) /
                                  (1.0 + std::fabs(check.data[i])));
    if (worst > 1e-3)
      std::printf("  (tfc and OpenBLAS differ by %.2g on this call)\n", worst);

    if (threads > 1)
      busyAllThreads(300);

    // The FMA rate now, call by call: this machine's clock drifts by a tenth
    // over the minutes a table takes.
    const double peak = ceiling::fmaPeak();
    auto tfc = [&] { runTfc(c, a.data, b.data, out.data); };
    auto blas = [&] { runBlas(plain, denseA, denseB, check.data); };
    std::vector<double> tTfcs, tBlases;
    if (threads == 1) {
      // Alternate, so that a change in the machine's load or clock hits both.
      long repsTfc = calibrate(tfc), repsBlas = calibrate(blas);
      for (int s = 0; s < samples; ++s) {
        tTfcs.push_back(timeCalls(tfc, repsTfc));
        tBlases.push_back(timeCalls(blas, repsBlas));
      }
    } else {
      // All of tfc first, before OpenBLAS wakes its workers again.
      long repsTfc = calibrate(tfc);
      for (int s = 0; s < samples; ++s)
        tTfcs.push_back(timeCalls(tfc, repsTfc));
      long repsBlas = calibrate(blas);
      for (int s = 0; s < samples; ++s)
        tBlases.push_back(timeCalls(blas, repsBlas));
    }
    double tTfc = summary(tTfcs), tBlas = summary(tBlases);

    double flops = 2.0 * double(c.batch) * double(c.m) * double(c.n) * double(c.k);
    // The ceiling: every byte of A, B and C (as tfc reads them) touched once
    // at the rate their cache level gives, or the FMAs at theirs.
    const size_t bytes = sizeof(float) * (a.size + b.size + out.size);
    auto [at, fresh] = readRates.try_emplace(bytes / 4096, 0.0);
    if (fresh)
      at->second = ceiling::readRate(bytes);
    const double roof = std::min(peak, flops / (double(bytes) / at->second));
    const bool memoryBound = roof < peak;
    // Winograd's rows count the direct product's FLOPs, more than it runs:
    // no ceiling applies to them.
    char roofText[24] = "-";
    if (!c.winograd)
      std::snprintf(roofText, sizeof roofText, "%.1f %s", roof,
                    memoryBound ? ceiling::levelOf(bytes) : "fma");
    // On 1 thread each tfc timing has an OpenBLAS one taken right after it:
    // the ratio is the median of those pairs' ratios (a drift in the
    // machine's speed moves both timings of a pair), and the middle half of
    // the pairs' ratios shows how far the machine's noise reaches. On 2
    // threads the sides run apart: the ratio of the two summaries.
    double ratio = tBlas / tTfc, low = 0, high = 0;
    if (threads == 1) {
      std::vector<double> pairs;
      for (size_t s = 0; s < tTfcs.size(); ++s)
        pairs.push_back(tBlases[s] / tTfcs[s]);
      std::sort(pairs.begin(), pairs.end());
      const size_t last = pairs.size() - 1;
      ratio = pairs[last / 2], low = pairs[last / 4], high = pairs[last - last / 4];
    }
    char band[32] = "-";
    if (threads == 1)
      std::snprintf(band, sizeof band, "%.2f-%.2f", low, high);
    // Both libraries at 90% of what the machine allows or more.
    const bool atCeiling =
        !c.winograd && std::min(flops / tTfc, flops / tBlas) * 1e-9 >= 0.9 * roof;
    std::printf("%-17s %-4s %5ld %6ld %6ld %6ld %3ld %3ld %3ld %10.1f %10.1f %10s %6.2f %11s%s%s\n",
                c.model.c_str(), c.pass.c_str(), c.batch, c.m, c.n, c.k, c.transA, c.transB, c.acc,
                flops / tTfc * 1e-9, flops / tBlas * 1e-9, roofText, ratio, band,
                c.kind == "gemm"      ? ""
                : c.winograd          ? (c.kind == "windows" ? " winograd" : " winograd taps")
                : c.kind == "windows" ? " windows"
                                      : " taps",
                ratio >= 1.0                  ? ""
                : atCeiling                   ? "  < (at ceiling)"
                : threads == 1 && high >= 1.0 ? "  < (noise)"
                                              : "  <");
    std::fflush(stdout);
    logRatioSum += std::log(ratio);
    ++rows;
    below += ratio < 1.0;
    clearlyBelow += ratio < 1.0 && !(threads == 1 && high >= 1.0);
    belowAtCeiling += ratio < 1.0 && atCeiling;
  }
  if (rows)
    std::printf("\n%d calls, geometric mean ratio %.2f, %d below 1.0 (%d of them with both "
                "libraries at 90%% of the ceiling or more%s)\n",
                rows, std::exp(logRatioSum / rows), below, belowAtCeiling,
                threads == 1 ? (", " + std::to_string(clearlyBelow) +
                                " with three quarters of the pairs below")
                                   .c_str()
                             : "");
}
