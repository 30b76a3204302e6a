//===- kernel_check.cpp - the CUDA kernels on a GPU against the CPU's -----===//
//
// Built on a CPU machine (it links no CUDA library: the driver is dlopen()ed
// through runtime/cuda/Driver.h), run on a GPU machine:
//
//   build/tools/gpu/tfc-kernel-check [--device N] [--bench-attention]
//
// loads the embedded fatbins (Kernels.h), runs every kernel of
// runtime/cuda/kernels on random data (the seed models' attention shapes
// among them) and compares with the CPU kernels (runtime/cpu/): attention
// forward within 1e-5 and backward within 1e-4 of the output's largest
// magnitude, layer norm and cross-entropy against double-precision
// references, the dropout mask and the batch gather (gather.cu, against a
// host gather) bit for bit; each kernel is run twice and
// must give the same bits. The attention backward runs with a stats buffer
// (the dq launch hands the dkv launch the rows' statistics, as the runtime
// does with its cuBLASLt workspace) and without one (dkv recomputes them):
// each is compared with the CPU, and the two must be the same bits. Shapes
// whose heads the tensor-core kernels (attention_tc.cu) take run those too,
// the same way, within 2e-2 (bf16 products). Prints
// a line a check and `N passed, N failed`;
// exits 0 when all pass, 1 when one fails, 2 when there is no GPU to run on
// (the message says what is missing). --bench-attention checks nothing: it
// times attention forward + backward (32 heads, seq 1024 and 2048, d 64) on
// both families of kernels and prints TFLOPS (benchAttention says how they
// are counted).
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/Attention.h"
#include "runtime/cpu/Dropout.h"
#include "runtime/cpu/LayerNorm.h"
#include "runtime/cuda/Driver.h"
#include "runtime/cuda/kernels/Kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace tfc::rt::cuda;
namespace k = tfc::rt::cuda::kernels;

namespace {

int passed = 0, failed = 0;

void report(bool ok, const std::string &what, const std::string &detail = "") {
  (ok ? passed : failed)++;
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(), detail.empty() ? "" : ": ",
              detail.c_str());
  std::fflush(stdout);
}

[[noreturn]] void fatal(const std::string &message, int code = 1) {
  std::fprintf(stderr, "tfc-kernel-check: %s\n", message.c_str());
  std::exit(code);
}

/// The GPU: the driver's context, the loaded modules and their kernels.
class Gpu {
public:
  Gpu(CudaDriver &driver, CudaContext &context) : driver_(driver), context_(context) {}

  void load() {
    for (const k::KernelImage &image : k::kImages) {
      CUmodule module = nullptr;
      check(api().moduleLoadData(&module, image.data), std::string("cuModuleLoadData(") + image.name + ")");
      modules_[image.name] = module;
    }
    for (const k::KernelInfo &info : k::kKernels) {
      CUfunction f = nullptr;
      check(api().moduleGetFunction(&f, modules_.at(info.image), info.name),
            std::string("cuModuleGetFunction(") + info.name + ")");
      functions_[info.name] = {f, info.threads, info.paramCount};
    }
  }

  CUdeviceptr alloc(size_t bytes) {
    CUdeviceptr p = 0;
    check(api().memAlloc(&p, std::max<size_t>(bytes, 4)), "cuMemAlloc(" + formatBytes(bytes) + ")");
    allocations_.push_back(p);
    return p;
  }
  template <typename T> CUdeviceptr upload(const std::vector<T> &host) {
    CUdeviceptr p = alloc(host.size() * sizeof(T));
    if (!host.empty())
      check(api().memcpyHtoD(p, host.data(), host.size() * sizeof(T)), "cuMemcpyHtoD");
    return p;
  }
  template <typename T> std::vector<T> download(CUdeviceptr p, size_t count) {
    std::vector<T> host(count);
    check(api().ctxSynchronize(), "cuCtxSynchronize (a kernel failed)");
    if (count)
      check(api().memcpyDtoH(host.data(), p, count * sizeof(T)), "cuMemcpyDtoH");
    return host;
  }
  /// Milliseconds `work` (launches) takes on the GPU, by two events on
  /// the stream the launches go to.
  template <typename Work> float time(Work work) {
    CUevent start = nullptr, stop = nullptr;
    check(api().eventCreate(&start, 0), "cuEventCreate");
    check(api().eventCreate(&stop, 0), "cuEventCreate");
    check(api().eventRecord(start, nullptr), "cuEventRecord");
    work();
    check(api().eventRecord(stop, nullptr), "cuEventRecord");
    check(api().eventSynchronize(stop), "cuEventSynchronize (a kernel failed)");
    float ms = 0.0f;
    check(api().eventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    api().eventDestroy(start);
    api().eventDestroy(stop);
    return ms;
  }
  void copyIn(CUdeviceptr p, const void *host, size_t bytes) {
    check(api().memcpyHtoD(p, host, bytes), "cuMemcpyHtoD");
  }
  void fill(CUdeviceptr p, size_t bytes, unsigned char value) {
    check(api().memsetD8(p, value, bytes), "cuMemsetD8");
  }

  /// Launches kernel `name` on `blocks` blocks with parameters `params`
  /// (pointers to each value, as cuLaunchKernel takes them).
  void launch(const char *name, unsigned blocks, std::vector<void *> params) {
    const Function &f = functions_.at(name);
    if (int(params.size()) != f.paramCount)
      fatal(std::string(name) + ": " + std::to_string(params.size()) + " parameters given, " +
            std::to_string(f.paramCount) + " expected");
    check(api().launchKernel(f.function, std::max(blocks, 1u), 1, 1, unsigned(f.threads), 1, 1, 0,
                             nullptr, params.data(), nullptr),
          std::string("cuLaunchKernel(") + name + ")");
  }

  ~Gpu() {
    for (CUdeviceptr p : allocations_)
      api().memFree(p);
    for (auto &[name, module] : modules_)
      api().moduleUnload(module);
  }

private:
  struct Function {
    CUfunction function;
    int threads, paramCount;
  };
  const DriverApi &api() const { return driver_.api(); }
  void check(CUresult result, const std::string &call) {
    std::string error;
    if (!driver_.check(result, call, error))
      fatal(error);
  }
  CudaDriver &driver_;
  CudaContext &context_;
  std::map<std::string, CUmodule> modules_;
  std::map<std::string, Function> functions_;
  std::vector<CUdeviceptr> allocations_;
};

std::mt19937 rng(2026);

std::vector<float> randomFloats(size_t n, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  double err = 0, mag = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i]))
      return INFINITY;
    err = std::max(err, std::fabs(double(a[i]) - double(b[i])));
    mag = std::max(mag, std::fabs(double(b[i])));
  }
  return err / mag;
}

void compare(const std::string &what, const std::vector<float> &gpu, const std::vector<float> &cpu,
             double tolerance) {
  const double err = relativeError(gpu, cpu);
  char detail[96];
  std::snprintf(detail, sizeof detail, "relative error %.3g (limit %.0e)", err, tolerance);
  report(err <= tolerance, what, detail);
}

void sameBits(const std::string &what, const std::vector<float> &a, const std::vector<float> &b,
              const std::string &than = "on a second run") {
  report(a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0,
         what + " is the same bits " + than);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct Shape {
  const char *name;
  long long outer, inner, tq, tk, d, dv;
  bool masked;
};

void checkAttention(Gpu &gpu, const Shape &s) {
  typedef long long i64;
  const i64 heads = s.outer * s.inner;
  // Packed heads with padded rows (q and dout padded, v packed).
  i64 qRow = s.d + 3, kRow = s.d + 1, vRow = s.dv, dRow = s.dv + 2;
  const i64 qHead = s.tq * qRow, kHead = s.tk * kRow, vHead = s.tk * vRow, dHead = s.tq * dRow;
  const auto q = randomFloats(size_t(heads * qHead)), kk = randomFloats(size_t(heads * kHead)),
             v = randomFloats(size_t(heads * vHead)), dout = randomFloats(size_t(heads * dHead));
  std::vector<unsigned char> mask;
  if (s.masked) {
    mask.resize(size_t(s.tq * s.tk));
    for (i64 i = 0; i < s.tq; ++i)
      for (i64 j = 0; j < s.tk; ++j)
        mask[size_t(i * s.tk + j)] = i == 1 ? 0 : (j <= i + 3 || (i + j) % 5 == 0);
  }
  float scale = 1.0f / std::sqrt(float(s.d));
  i64 outer = s.outer, inner = s.inner, tq = s.tq, tk = s.tk, d = s.d, dv = s.dv;
  i64 qO = s.inner * qHead, qI = qHead, kO = s.inner * kHead, kI = kHead, vO = s.inner * vHead,
      vI = vHead, dO_ = s.inner * dHead, dI = dHead;
  i64 mO = 0, mI = 0, mR = s.tk;
  i64 oRow = s.dv, oHead = s.tq * oRow, oO = s.inner * oHead, oI = oHead;
  i64 dqO = s.inner * qHead, dqI = qHead, dkO = s.inner * kHead, dkI = kHead, dvO = s.inner * vHead,
      dvI = vHead;

  // The CPU kernels.
  std::vector<float> out(size_t(heads * oHead)), dq(q.size()), dk(kk.size()), dvv(v.size());
  const intptr_t maskPtr = mask.empty() ? 0 : intptr_t(mask.data());
  tfc_attention_forward(outer, inner, tq, tk, d, dv, scale, intptr_t(q.data()), qO, qI, qRow,
                        intptr_t(kk.data()), kO, kI, kRow, intptr_t(v.data()), vO, vI, vRow,
                        maskPtr, mO, mI, mR, intptr_t(out.data()), oO, oI, oRow);
  tfc_attention_backward(outer, inner, tq, tk, d, dv, scale, intptr_t(q.data()), qO, qI, qRow,
                         intptr_t(kk.data()), kO, kI, kRow, intptr_t(v.data()), vO, vI, vRow,
                         maskPtr, mO, mI, mR, intptr_t(dout.data()), dO_, dI, dRow,
                         intptr_t(dq.data()), dqO, dqI, qRow, intptr_t(dk.data()), dkO, dkI, kRow,
                         intptr_t(dvv.data()), dvO, dvI, vRow);

  CUdeviceptr gq = gpu.upload(q), gk = gpu.upload(kk), gv = gpu.upload(v), gd = gpu.upload(dout);
  CUdeviceptr gm = mask.empty() ? 0 : gpu.upload(mask);
  CUdeviceptr gout = gpu.alloc(out.size() * 4), gdq = gpu.alloc(dq.size() * 4),
              gdk = gpu.alloc(dk.size() * 4), gdv = gpu.alloc(dvv.size() * 4);
  // The backward's last parameter: 4 floats a query row, or 0.
  const CUdeviceptr gstats = gpu.alloc(size_t(heads * tq) * 16);
  CUdeviceptr stats = 0;
  std::vector<void *> forward = {&outer, &inner, &tq, &tk, &d, &dv, &scale, &gq, &qO, &qI, &qRow,
                                 &gk,    &kO,    &kI, &kRow, &gv, &vO, &vI, &vRow, &gm, &mO, &mI,
                                 &mR,    &gout,  &oO, &oI, &oRow};
  std::vector<void *> backward = {&outer, &inner, &tq, &tk, &d, &dv, &scale, &gq, &qO, &qI, &qRow,
                                  &gk,    &kO,    &kI, &kRow, &gv, &vO, &vI, &vRow, &gm, &mO, &mI,
                                  &mR,    &gd,    &dO_, &dI, &dRow, &gdq, &dqO, &dqI, &qRow, &gdk,
                                  &dkO,   &dkI,   &kRow, &gdv, &dvO, &dvI, &vRow, &stats};
  // Only the rows' first d / dv floats are written (the padding stays NaN
  // on the GPU, 0 or input on the CPU side): compare those.
  auto rows = [&](const std::vector<float> &x, i64 headSize, i64 count, i64 row, i64 width) {
    std::vector<float> r;
    for (i64 b = 0; b < heads; ++b)
      for (i64 i = 0; i < count; ++i)
        for (i64 c = 0; c < width; ++c)
          r.push_back(x[size_t(b * headSize + i * row + c)]);
    return r;
  };
  // One family of kernels (attention.cu's, or attention_tc.cu's), its grids
  // and its tolerances against the CPU.
  struct Kernels {
    const char *forward, *dq, *dkv, *label;
    unsigned forwardBlocks, dqBlocks, dkvBlocks;
    double forwardLimit, backwardLimit;
  };
  const unsigned rowBlocks = unsigned((heads * tq + 3) / 4);
  const unsigned tcQueryBlocks = unsigned(heads * ((tq + 63) / 64));
  std::vector<Kernels> families = {{"tfc_cuda_attention_forward_kernel",
                                    "tfc_cuda_attention_backward_dq_kernel",
                                    "tfc_cuda_attention_backward_dkv_kernel", "", rowBlocks,
                                    rowBlocks, unsigned(heads * ((tk + 31) / 32)), 1e-5, 1e-4}};
  // The tensor-core kernels where they take the heads: bf16 products, so
  // within 2e-2 of the largest magnitude (CudaAttentionTcMathTest models
  // their tiles and roundings on the host: up to 9e-3 there).
  if (k::attentionTensorCoreShape(d, dv))
    families.push_back({"tfc_cuda_attention_tc_forward_kernel",
                        "tfc_cuda_attention_tc_backward_dq_kernel",
                        "tfc_cuda_attention_tc_backward_dkv_kernel", " tensor cores",
                        tcQueryBlocks, tcQueryBlocks, unsigned(heads * ((tk + 63) / 64)), 2e-2,
                        2e-2});
  for (const Kernels &f : families) {
    // Runs 0 and 1 with the stats buffer (NaN first: a row dq did not store
    // would show), run 2 without.
    std::vector<float> runs[3][4];
    for (int run = 0; run < 3; ++run) {
      stats = run < 2 ? gstats : 0;
      gpu.fill(gstats, size_t(heads * tq) * 16, 0xff);
      gpu.fill(gout, out.size() * 4, 0xff);
      gpu.fill(gdq, dq.size() * 4, 0xff);
      gpu.fill(gdk, dk.size() * 4, 0xff);
      gpu.fill(gdv, dvv.size() * 4, 0xff);
      gpu.launch(f.forward, f.forwardBlocks, forward);
      gpu.launch(f.dq, f.dqBlocks, backward);
      gpu.launch(f.dkv, f.dkvBlocks, backward);
      runs[run][0] = gpu.download<float>(gout, out.size());
      runs[run][1] = gpu.download<float>(gdq, dq.size());
      runs[run][2] = gpu.download<float>(gdk, dk.size());
      runs[run][3] = gpu.download<float>(gdv, dvv.size());
    }
    const std::string n = std::string("attention ") + s.name + f.label;
    compare(n + " forward", rows(runs[0][0], oHead, tq, oRow, dv), rows(out, oHead, tq, oRow, dv),
            f.forwardLimit);
    for (int run : {0, 2}) {
      const std::string b = n + (run == 0 ? " (stored stats)" : " (recomputed stats)");
      compare(b + " dq", rows(runs[run][1], qHead, tq, qRow, d), rows(dq, qHead, tq, qRow, d),
              f.backwardLimit);
      compare(b + " dk", rows(runs[run][2], kHead, tk, kRow, d), rows(dk, kHead, tk, kRow, d),
              f.backwardLimit);
      compare(b + " dv", rows(runs[run][3], vHead, tk, vRow, dv), rows(dvv, vHead, tk, vRow, dv),
              f.backwardLimit);
    }
    for (int t = 0; t < 4; ++t)
      sameBits(n + " output " + std::to_string(t), runs[0][t], runs[1][t]);
    // The same rowStats on the same inputs, stored or recomputed: the same
    // bits (the padding included: NaN in both).
    for (int t = 1; t < 4; ++t)
      sameBits(n + " backward output " + std::to_string(t) + " with stored stats", runs[0][t],
               runs[2][t], "as with recomputed ones");
  }
}

/// --bench-attention: forward + backward (dq, dkv with stored statistics)
/// of `heads` heads of seq x seq, d 64, unmasked, by CUDA events, for both
/// families of kernels. TFLOPS count the products' useful work, as
/// FlashAttention does: 4 seq^2 d forward (Q K^T, P V) and 10 seq^2 d
/// backward (S, dP, dV, dK, dQ; the kernels' recomputations, dq's pass 1
/// and dkv's S and dP, are not counted).
void benchAttention(Gpu &gpu, long long heads, long long seq) {
  typedef long long i64;
  i64 outer = 1, inner = heads, tq = seq, tk = seq, d = 64, dv = 64;
  float scale = 0.125f;
  const size_t n = size_t(heads * seq * d);
  CUdeviceptr gq = gpu.upload(randomFloats(n)), gk = gpu.upload(randomFloats(n)),
              gv = gpu.upload(randomFloats(n)), gd = gpu.upload(randomFloats(n));
  CUdeviceptr gout = gpu.alloc(n * 4), gdq = gpu.alloc(n * 4), gdk = gpu.alloc(n * 4),
              gdv = gpu.alloc(n * 4), stats = gpu.alloc(size_t(heads * seq) * 16), gm = 0;
  i64 hO = heads * seq * d, hI = seq * d, row = d, zero = 0;
  std::vector<void *> forward = {&outer, &inner, &tq, &tk, &d, &dv, &scale, &gq, &hO, &hI, &row,
                                 &gk, &hO, &hI, &row, &gv, &hO, &hI, &row, &gm, &zero, &zero,
                                 &zero, &gout, &hO, &hI, &row};
  std::vector<void *> backward = {&outer, &inner, &tq, &tk, &d, &dv, &scale, &gq, &hO, &hI, &row,
                                  &gk, &hO, &hI, &row, &gv, &hO, &hI, &row, &gm, &zero, &zero,
                                  &zero, &gd, &hO, &hI, &row, &gdq, &hO, &hI, &row, &gdk, &hO,
                                  &hI, &row, &gdv, &hO, &hI, &row, &stats};
  const double flops = 14.0 * double(seq) * double(seq) * double(d) * double(heads);
  const unsigned rowBlocks = unsigned(heads * seq / 4), tcBlocks = unsigned(heads * (seq / 64));
  struct Family {
    const char *label, *forward, *dq, *dkv;
    unsigned forwardBlocks, dkvBlocks;
  } families[] = {{"fp32        ", "tfc_cuda_attention_forward_kernel",
                   "tfc_cuda_attention_backward_dq_kernel",
                   "tfc_cuda_attention_backward_dkv_kernel", rowBlocks, unsigned(heads * (seq / 32))},
                  {"tensor cores", "tfc_cuda_attention_tc_forward_kernel",
                   "tfc_cuda_attention_tc_backward_dq_kernel",
                   "tfc_cuda_attention_tc_backward_dkv_kernel", tcBlocks, tcBlocks}};
  for (const Family &f : families) {
    const int iterations = 5;
    auto step = [&] {
      gpu.launch(f.forward, f.forwardBlocks, forward);
      gpu.launch(f.dq, f.forwardBlocks, backward);
      gpu.launch(f.dkv, f.dkvBlocks, backward);
    };
    step(); // warm up
    const float ms = gpu.time([&] {
      for (int i = 0; i < iterations; ++i)
        step();
    }) / float(iterations);
    const double tflops = flops / (double(ms) * 1e-3) / 1e12;
    std::printf("bench attention %s: %lld heads x %lld x %lld, d 64, forward + backward %.3f ms, "
                "%.1f TFLOPS (%.1f%% of 989 dense bf16)\n",
                f.label, heads, seq, seq, double(ms), tflops, 100.0 * tflops / 989.0);
    std::fflush(stdout);
  }
}

//===----------------------------------------------------------------------===//
// Layer norm, cross-entropy, dropout
//===----------------------------------------------------------------------===//

void checkLayerNorm(Gpu &gpu, long long rows, long long d, long long blockRows) {
  float eps = 1e-5f;
  auto x = randomFloats(size_t(rows * d), 2.0f);
  for (float &v : x)
    v += 1.5f;
  const auto gamma = randomFloats(size_t(d)), beta = randomFloats(size_t(d)),
             g = randomFloats(size_t(rows * d));
  std::vector<float> y(x.size());
  for (long long r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (long long j = 0; j < d; ++j)
      mu += x[size_t(r * d + j)] / double(d);
    for (long long j = 0; j < d; ++j)
      var += (x[size_t(r * d + j)] - mu) * (x[size_t(r * d + j)] - mu) / double(d);
    for (long long j = 0; j < d; ++j)
      y[size_t(r * d + j)] = float((x[size_t(r * d + j)] - mu) / std::sqrt(var + eps) *
                                       gamma[size_t(j)] + beta[size_t(j)]);
  }
  const long long blocks = (rows + blockRows - 1) / blockRows;
  std::vector<float> dx(x.size()), dgamma(static_cast<size_t>(d)), dbeta(static_cast<size_t>(d)),
      scratch(static_cast<size_t>(2 * blocks * d));
  tfc_layer_norm_backward(rows, d, blockRows, eps, intptr_t(x.data()), intptr_t(gamma.data()),
                          intptr_t(g.data()), intptr_t(dx.data()), intptr_t(dgamma.data()),
                          intptr_t(dbeta.data()), intptr_t(scratch.data()));
  CUdeviceptr gx = gpu.upload(x), gg = gpu.upload(gamma), gb = gpu.upload(beta), gd = gpu.upload(g);
  CUdeviceptr gy = gpu.alloc(y.size() * 4), gdx = gpu.alloc(dx.size() * 4),
              gdg = gpu.alloc(size_t(d) * 4), gdb = gpu.alloc(size_t(d) * 4),
              gs = gpu.alloc(scratch.size() * 4);
  std::vector<float> runs[2][4];
  for (int run = 0; run < 2; ++run) {
    gpu.launch("tfc_cuda_layer_norm_forward_kernel", unsigned((rows + 7) / 8),
               {&rows, &d, &eps, &gx, &gg, &gb, &gy});
    gpu.launch("tfc_cuda_layer_norm_backward_kernel", unsigned(blocks),
               {&rows, &d, &blockRows, &eps, &gx, &gg, &gd, &gdx, &gs});
    gpu.launch("tfc_cuda_layer_norm_backward_reduce_kernel", unsigned((d + 255) / 256),
               {&rows, &d, &blockRows, &gs, &gdg, &gdb});
    runs[run][0] = gpu.download<float>(gy, y.size());
    runs[run][1] = gpu.download<float>(gdx, dx.size());
    runs[run][2] = gpu.download<float>(gdg, size_t(d));
    runs[run][3] = gpu.download<float>(gdb, size_t(d));
  }
  const std::string n = "layer_norm " + std::to_string(rows) + "x" + std::to_string(d);
  compare(n + " forward", runs[0][0], y, 1e-5);
  compare(n + " dx", runs[0][1], dx, 1e-5);
  compare(n + " dgamma", runs[0][2], dgamma, 1e-5);
  compare(n + " dbeta", runs[0][3], dbeta, 1e-5);
  for (int t = 0; t < 4; ++t)
    sameBits(n + " output " + std::to_string(t), runs[0][t], runs[1][t]);
}

void checkCrossEntropy(Gpu &gpu, long long outer, long long classes, long long inner) {
  const long long rows = outer * inner;
  const auto logits = randomFloats(size_t(rows * classes), 3.0f);
  std::vector<int> labels(static_cast<size_t>(rows));
  for (long long r = 0; r < rows; ++r)
    labels[size_t(r)] = r == 0 ? -2 : (r == 1 ? int(classes + 3) : int(rng() % classes));
  float count = float(rows), dlossValue = 0.7f;
  std::vector<float> grad(logits.size());
  double total = 0;
  for (long long o = 0; o < outer; ++o)
    for (long long i = 0; i < inner; ++i) {
      auto at = [&](long long c) { return size_t((o * classes + c) * inner + i); };
      double m = -INFINITY, s = 0;
      for (long long c = 0; c < classes; ++c)
        m = std::max(m, double(logits[at(c)]));
      for (long long c = 0; c < classes; ++c)
        s += std::exp(logits[at(c)] - m);
      const long long label = std::clamp<long long>(labels[size_t(o * inner + i)], 0, classes - 1);
      total -= (logits[at(label)] - m) - std::log(s);
      for (long long c = 0; c < classes; ++c)
        grad[at(c)] = float((std::exp(logits[at(c)] - m) / s - (c == label)) * dlossValue / count);
    }
  const std::vector<float> loss = {float(total / count)};
  CUdeviceptr gl = gpu.upload(logits), glab = gpu.upload(labels),
              gdl = gpu.upload(std::vector<float>{dlossValue});
  CUdeviceptr glosses = gpu.alloc(size_t(rows) * 4), gout = gpu.alloc(4),
              ggrad = gpu.alloc(grad.size() * 4);
  // runs[run][0, 1]: the loss and grad of forward, mean and backward;
  // [2, 3]: of the fused kernel (tfc_cuda_cross_entropy_fused) and mean.
  std::vector<float> runs[2][4];
  const unsigned blocks = unsigned((rows + 7) / 8);
  for (int run = 0; run < 2; ++run) {
    gpu.launch("tfc_cuda_cross_entropy_forward_kernel", blocks,
               {&outer, &classes, &inner, &gl, &glab, &glosses});
    long long n = rows;
    gpu.launch("tfc_cuda_cross_entropy_mean_kernel", 1, {&n, &count, &glosses, &gout});
    gpu.launch("tfc_cuda_cross_entropy_backward_kernel", blocks,
               {&outer, &classes, &inner, &count, &gl, &glab, &gdl, &ggrad});
    runs[run][0] = gpu.download<float>(gout, 1);
    runs[run][1] = gpu.download<float>(ggrad, grad.size());
    gpu.fill(gout, 4, 0xff); // NaN: the fused kernel must write everything
    gpu.fill(ggrad, grad.size() * 4, 0xff);
    gpu.launch("tfc_cuda_cross_entropy_fused_kernel", blocks,
               {&outer, &classes, &inner, &count, &gl, &glab, &gdl, &glosses, &ggrad});
    gpu.launch("tfc_cuda_cross_entropy_mean_kernel", 1, {&n, &count, &glosses, &gout});
    runs[run][2] = gpu.download<float>(gout, 1);
    runs[run][3] = gpu.download<float>(ggrad, grad.size());
  }
  const std::string n = "cross_entropy " + std::to_string(outer) + "x" + std::to_string(classes) +
                        "x" + std::to_string(inner);
  compare(n + " loss", runs[0][0], loss, 1e-5);
  compare(n + " grad", runs[0][1], grad, 1e-5);
  compare(n + " fused loss", runs[0][2], loss, 1e-5);
  compare(n + " fused grad", runs[0][3], grad, 1e-5);
  for (int t = 0; t < 4; ++t)
    sameBits(n + " output " + std::to_string(t), runs[0][t], runs[1][t]);
  // The fused kernel computes the pair's operations in the pair's order.
  sameBits(n + " fused loss as forward's", runs[0][2], runs[0][0]);
  sameBits(n + " fused grad as backward's", runs[0][3], runs[0][1]);
}

void checkDropout(Gpu &gpu, long long n, long long first, long long key, double rate) {
  long long seed = (n * 2654435761LL + key) & 0xffffffffLL;
  long long threshold = (long long)std::ceil(rate * 4294967296.0);
  std::vector<unsigned char> cpu(static_cast<size_t>(n));
  tfc_dropout_mask(intptr_t(cpu.data()), n, first, seed, key, threshold);
  CUdeviceptr gm = gpu.alloc(size_t(n));
  gpu.launch("tfc_cuda_dropout_mask_kernel", unsigned(((n + 3 + first % 4) / 4 + 255) / 256),
             {&gm, &n, &first, &seed, &key, &threshold});
  const auto mask = gpu.download<unsigned char>(gm, size_t(n));
  report(mask == cpu, "dropout mask n=" + std::to_string(n) + " first=" + std::to_string(first) +
                          " key=" + std::to_string(key) + " is the CPU's bit for bit");
}

/// gather.cu: `count` rows of `rowBytes` gathered by random int64 indices
/// (repeats included) from `samples` rows, at byte offsets `toShift` and
/// `rowsShift` from 256-byte aligned memory (0: the 16-byte path where
/// rowBytes allows; else the 4-byte or the byte path), against the host's
/// gather: bit for bit, and on a grid of one block (grid-stride) too.
void checkGather(Gpu &gpu, long long samples, long long rowBytes, long long count,
                 long long toShift, long long rowsShift) {
  std::vector<unsigned char> rows(size_t(samples * rowBytes));
  for (unsigned char &b : rows)
    b = static_cast<unsigned char>(rng());
  std::vector<long long> indices(static_cast<size_t>(count));
  for (long long &i : indices)
    i = (long long)(rng() % uint64_t(samples));
  std::vector<unsigned char> host(size_t(count * rowBytes));
  for (long long i = 0; i < count; ++i)
    std::memcpy(host.data() + i * rowBytes, rows.data() + indices[size_t(i)] * rowBytes,
                size_t(rowBytes));
  CUdeviceptr grows = gpu.alloc(rows.size() + size_t(rowsShift)) + CUdeviceptr(rowsShift);
  CUdeviceptr gto = gpu.alloc(host.size() + size_t(toShift)) + CUdeviceptr(toShift);
  gpu.copyIn(grows, rows.data(), rows.size());
  CUdeviceptr gindices = gpu.upload(indices);
  const long long aligned = (long long)(grows | gto) | rowBytes;
  const long long word = aligned % 16 == 0 ? 16 : aligned % 4 == 0 ? 4 : 1;
  const unsigned blocks = unsigned((count * (rowBytes / word) + 255) / 256);
  const std::string n = "gather " + std::to_string(count) + " of " + std::to_string(samples) +
                        " rows of " + std::to_string(rowBytes) + " bytes (" +
                        std::to_string(word) + "-byte words)";
  for (unsigned grid : {blocks, 1u}) {
    gpu.fill(gto, host.size(), 0xA5);
    gpu.launch("tfc_cuda_gather_rows_kernel", grid, {&gto, &grows, &rowBytes, &gindices, &count});
    const auto gathered = gpu.download<unsigned char>(gto, host.size());
    report(gathered == host, n + ", grid " + std::to_string(grid) + ", is the host's bit for bit");
  }
}

} // namespace

int main(int argc, char **argv) {
  int device = 0;
  bool bench = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      device = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--bench-attention") == 0)
      bench = true;
    else
      fatal(std::string("usage: ") + argv[0] + " [--device N] [--bench-attention]", 2);
  }
  std::string error;
  std::unique_ptr<CudaDriver> driver = CudaDriver::load(error);
  if (!driver)
    fatal(error + " (nothing was checked: run this on a GPU machine)", 2);
  std::unique_ptr<CudaContext> context = CudaContext::open(*driver, device, error);
  if (!context)
    fatal(error + " (nothing was checked)", 2);
  std::string name;
  CUdevice dev = context->device();
  int major = 0, minor = 0;
  if (driver->deviceName(dev, name, error) &&
      driver->computeCapability(dev, major, minor, error))
    std::printf("device %d: %s (sm_%d%d), driver %d\n", device, name.c_str(), major, minor,
                driver->version());
  {
    Gpu gpu(*driver, *context);
    gpu.load();
    if (bench) {
      for (long long seq : {1024LL, 2048LL})
        benchAttention(gpu, 32, seq);
      return 0;
    }
    const Shape shapes[] = {{"reverse 16x16 d32", 1, 128, 16, 16, 32, 32, false},
                            {"set_anomaly 10x10 d64", 64, 4, 10, 10, 64, 64, false},
                            {"encoder_decoder 2x2 d2 masked", 16, 3, 2, 2, 2, 2, true},
                            {"40x100 d24/40 masked", 2, 3, 40, 100, 24, 40, true},
                            {"40x100 d32/48 masked", 2, 3, 40, 100, 32, 48, true},
                            {"33x65 d7/5", 2, 1, 33, 65, 7, 5, false},
                            {"9x70 d96/80 masked (wide heads)", 1, 2, 9, 70, 96, 80, true},
                            {"300x300 d64", 2, 2, 300, 300, 64, 64, false},
                            {"1024x1024 d64 masked (long rows)", 1, 4, 1024, 1024, 64, 64, true},
                            {"1024x1024 d64", 1, 4, 1024, 1024, 64, 64, false}};
    for (const Shape &s : shapes)
      checkAttention(gpu, s);
    checkLayerNorm(gpu, 2048, 32, 64);
    checkLayerNorm(gpu, 640, 256, 64);
    checkLayerNorm(gpu, 37, 100, 8);
    checkCrossEntropy(gpu, 2048, 10, 1);
    checkCrossEntropy(gpu, 16, 1000, 1);
    checkCrossEntropy(gpu, 8, 12, 5);
    checkCrossEntropy(gpu, 8192, 1000, 1); // the medium encoder's train step
    checkCrossEntropy(gpu, 6, 1500, 3);    // rows beyond the fused kernel's registers
    for (long long first : {0LL, 6LL, (1LL << 34) - 10})
      for (long long n : {1LL, 5LL, 1000LL, 1LL << 20})
        for (long long key : {0LL, 3LL, (5LL << 32) | 9})
          checkDropout(gpu, n, first, key, 0.1);
    // A training batch's rows (reverse's 64 bytes, 16-byte words), odd
    // rows (bytes), rows of 4-byte words, a shifted base (4-byte words),
    // and a large batch over many blocks.
    checkGather(gpu, 200, 64, 4, 0, 0);
    checkGather(gpu, 1000, 7, 37, 0, 0);
    checkGather(gpu, 1000, 12, 300, 0, 0);
    checkGather(gpu, 500, 64, 64, 4, 0);
    checkGather(gpu, 500, 64, 64, 0, 3);
    checkGather(gpu, 20000, 3072, 512, 0, 0);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
