//===- kernel_check.cpp - the CUDA kernels on a GPU against the CPU's -----===//
//
// Built on a CPU machine (it links no CUDA library: the driver is dlopen()ed
// through runtime/cuda/Driver.h), run on a GPU machine:
//
//   build/tools/gpu/tfc-kernel-check [--device N] [--bench-attention | --bench-gemm |
//                                     --bench-gemm-algorithms | --bench-layer-norm]
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
// the same way, within 2e-2 (bf16 products), and their lean forward and dq,
// which must give the default ones' bits. Prints
// a line a check and `N passed, N failed`;
// exits 0 when all pass, 1 when one fails, 2 when there is no GPU to run on
// (the message says what is missing). --bench-attention checks nothing: it
// times attention forward + backward (32 heads, seq 1024 and 2048, and the
// medium encoder's 256 heads of 256; d 64) on every family of kernels
// (fp32, tensor cores, lean, wgmma's) and prints TFLOPS (benchAttention says how
// they are counted). --bench-gemm checks nothing either: it times the medium encoder's GEMMs on
// cuBLASLt as tfc stores them (fp32) and with bf16 storage (benchGemms; --rows N for other than its
// 8192 rows);
// --bench-gemm-algorithms times each of them on each of the first 8
// algorithms cuBLASLt's heuristic offers (benchGemmAlgorithms). --bench-layer-norm
// times the layer norm backward for blocks of 8 to 64 rows, in one launch and
// two (benchLayerNorm). --probe-wgmma runs the wgmma probe alone (probeWgmma,
// wgmma_probe.cu; the checks run it too): whether Hopper's wgmma reads and
// writes its operands as WgmmaProbe.h assumes. The checks themselves are
// KernelChecks.h's, shared with SimtKernelsTest (tests/unit), which runs them on the SIMT emulator.
//
//===----------------------------------------------------------------------===//

#include "runtime/Abi.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/Driver.h"
#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Kernels.h"
#include "tools/gpu/KernelChecks.h"
#include "tools/gpu/WgmmaProbe.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace tfc::rt::cuda;
using namespace tfc::kernelcheck;

// wgmma_probe.cu's fatbin (sm_90a), embedded as runtime/cuda/kernels' are.
extern "C" const unsigned char tfc_wgmma_probe_fatbin[];
/// attention_wgmma.cu's kernels (TFC_ATTENTION_WGMMA), in Kernels.h's
/// optional sm_90a image: the runtime's (forward and dq pipelined) and the
/// unpipelined forward and dq, an A/B.
const WgmmaKernels kWgmma = {"tfc_cuda_attention_wgmma_forward_kernel",
                             "tfc_cuda_attention_wgmma_backward_dq_kernel",
                             "tfc_cuda_attention_wgmma_backward_dkv_kernel",
                             " wgmma",
                             64,
                             nullptr,
                             "tfc_cuda_attention_wgmma_forward_bf16_kernel",
                             "tfc_cuda_attention_wgmma_backward_dq_bf16_kernel",
                             "tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel"};
const WgmmaKernels kWgmmaSerial = {"tfc_cuda_attention_wgmma_forward_serial_kernel",
                                   "tfc_cuda_attention_wgmma_backward_dq_serial_kernel",
                                   "tfc_cuda_attention_wgmma_backward_dkv_serial_kernel",
                                   " wgmma, serial"};
const WgmmaKernels kWgmmaWide = {"tfc_cuda_attention_wgmma_forward_wide_kernel",
                                 "tfc_cuda_attention_wgmma_backward_dq_wide_kernel",
                                 kWgmma.dkv,
                                 " wgmma, wide",
                                 128,
                                 "tfc_cuda_attention_wgmma_backward_dkv_wide_kernel"};

namespace {

[[noreturn]] void fatal(const std::string &message, int code = 1) {
  std::fprintf(stderr, "tfc-kernel-check: %s\n", message.c_str());
  std::exit(code);
}

/// The GPU: the driver's context, the loaded modules and their kernels.
class Gpu {
public:
  using Ptr = CUdeviceptr;

  Gpu(CudaDriver &driver, CudaContext &context) : driver_(driver), context_(context) {}

  void load() {
    for (const k::KernelImage &image : k::kImages) {
      CUmodule module = nullptr;
      const CUresult result = api().moduleLoadData(&module, image.data);
      if (image.optional && result == CUDA_ERROR_NO_BINARY_FOR_GPU)
        continue; // SASS for another GPU alone: its kernels are left out (has())
      check(result, std::string("cuModuleLoadData(") + image.name + ")");
      modules_[image.name] = module;
    }
    for (const k::KernelInfo &info : k::kKernels) {
      if (!modules_.count(info.image))
        continue;
      CUfunction f = nullptr;
      check(api().moduleGetFunction(&f, modules_.at(info.image), info.name),
            std::string("cuModuleGetFunction(") + info.name + ")");
      const int shared = k::dynamicSharedBytes(info.name);
      if (shared > 48 * 1024)
        check(api().funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared),
              std::string("cuFuncSetAttribute(") + info.name + ")");
      functions_[info.name] = {f, info.threads, info.paramCount, shared};
    }
  }

  /// Loads a fatbin beside Kernels.h's (a probe's, an experiment's) and its
  /// kernels, each of `threads` threads, by name and parameter count; false
  /// where the driver takes none of its images for this GPU (nothing is
  /// loaded then).
  bool loadExtra(const char *name, const unsigned char *image,
                 const std::vector<std::pair<const char *, int>> &kernels, int threads) {
    CUmodule module = nullptr;
    if (api().moduleLoadData(&module, image) != CUDA_SUCCESS)
      return false;
    modules_[name] = module;
    for (auto [kernel, params] : kernels) {
      CUfunction f = nullptr;
      check(api().moduleGetFunction(&f, module, kernel),
            std::string("cuModuleGetFunction(") + kernel + ")");
      functions_[kernel] = {f, threads, params, 0};
    }
    return true;
  }

  /// Whether kernel `name` was loaded (an optional image's may not be).
  bool has(const char *name) const { return functions_.count(name) != 0; }

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
    check(api().launchKernel(f.function, std::max(blocks, 1u), 1, 1, unsigned(f.threads), 1, 1,
                             unsigned(f.sharedBytes), nullptr, params.data(), nullptr),
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
    int threads, paramCount, sharedBytes; // dynamic shared memory a launch
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

/// Whether attention_wgmma.cu's kernels were loaded (a GPU that takes
/// sm_90a SASS).
bool hasWgmmaAttention(Gpu &gpu) {
  return gpu.has(kWgmma.forward) && gpu.has(kWgmma.forwardBf16) && gpu.has(kWgmma.dq) &&
         gpu.has(kWgmma.dqBf16) && gpu.has(kWgmma.dkvBf16) && gpu.has(kWgmma.dkv) &&
         gpu.has(kWgmmaSerial.forward) && gpu.has(kWgmmaSerial.dq) && gpu.has(kWgmmaSerial.dkv) &&
         gpu.has(kWgmmaWide.forward) && gpu.has(kWgmmaWide.dq) && gpu.has(kWgmmaWide.dkvWide);
}

/// --bench-attention: forward + backward (dq, dkv) of `heads` heads of
/// seq x seq, d 64, unmasked, by CUDA events, for both families of kernels,
/// each four ways: with dkv first, storing dS for dq (what compiled models
/// do on the fp32 kernels); the backward reading the statistics the forward
/// saved, dkv computing D = dO . out again or reading dq's from scratch
/// (what compiled models do on tensor cores); and dq's pass 1 recomputing
/// them (stored for dkv in scratch); then each kernel alone.
/// TFLOPS count the products' useful work, as FlashAttention does: 4 seq^2
/// d forward (Q K^T, P V) and 10 seq^2 d backward (S, dP, dV, dK, dQ; the
/// kernels' recomputations, dq's pass 1 and dkv's S and dP, are not
/// counted).
void benchAttention(Gpu &gpu, long long heads, long long seq, bool wgmma) {
  typedef long long i64;
  i64 outer = 1, inner = heads, tq = seq, tk = seq, d = 64, dv = 64;
  float scale = 0.125f;
  const size_t n = size_t(heads * seq * d);
  const std::vector<float> q = randomFloats(n), kk = randomFloats(n), v = randomFloats(n);
  const std::vector<float> dout = randomFloats(n);
  CUdeviceptr gq = gpu.upload(q), gk = gpu.upload(kk), gv = gpu.upload(v), gd = gpu.upload(dout);
  // q, k, v and dO as bf16 bits too (inputsBf16: a QKV projection and an
  // out projection's input gradient stored in bf16, what the issue's
  // "bf16" attention means).
  auto bits = [](const std::vector<float> &x) {
    std::vector<uint16_t> b(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      b[i] = k::bf16Bits(x[i]);
    return b;
  };
  const CUdeviceptr f32[4] = {gq, gk, gv, gd},
                    b16[4] = {gpu.upload(bits(q)), gpu.upload(bits(kk)), gpu.upload(bits(v)),
                              gpu.upload(bits(dout))};
  // The forward's and the backward's (kAttentionDoBf16 is the backward's alone),
  // and the backward's gradsBf16: with bf16 inputs dq, dk and dv as bits too,
  // as --precision bf16 models store them.
  i64 forwardInputsBf16 = 0, inputsBf16 = 0, gradsBf16 = 0;
  CUdeviceptr gout = gpu.alloc(n * 4), gdq = gpu.alloc(n * 4), gdk = gpu.alloc(n * 4),
              gdv = gpu.alloc(n * 4), gstats = gpu.alloc(size_t(heads * seq) * 16),
              gsaved = gpu.alloc(size_t(heads * seq) * 16), gm = 0;
  CUdeviceptr scratch = 0, saved = 0, savedOut = 0, dS = 0;
  i64 hO = heads * seq * d, hI = seq * d, row = d, zero = 0, dsRow = (seq + 7) / 8 * 8;
  const CUdeviceptr gds = gpu.alloc(size_t(heads * seq * dsRow) * 4); // f32 or bf16
  std::vector<void *> forward = {
      &outer, &inner, &tq,   &tk,   &d,   &dv, &scale, &gq,    &hO,   &hI,
      &row,   &gk,    &hO,   &hI,   &row, &gv, &hO,    &hI,    &row,  &gm,
      &zero,  &zero,  &zero, &gout, &hO,  &hI, &row,   &saved, &zero, &forwardInputsBf16};
  std::vector<void *> backward = {
      &outer, &inner, &tq,   &tk,    &d,       &dv,  &scale, &gq,        &hO,        &hI,
      &row,   &gk,    &hO,   &hI,    &row,     &gv,  &hO,    &hI,        &row,       &gm,
      &zero,  &zero,  &zero, &gd,    &hO,      &hI,  &row,   &gdq,       &hO,        &hI,
      &row,   &gdk,   &hO,   &hI,    &row,     &gdv, &hO,    &hI,        &row,       &savedOut,
      &hO,    &hI,    &row,  &saved, &scratch, &dS,  &dsRow, &gradsBf16, &inputsBf16};
  const double flops = 14.0 * double(seq) * double(seq) * double(d) * double(heads);
  const unsigned tcBlocks = unsigned(heads * (seq / 64));
  // The lean tensor-core forward and dq (TFC_ATTENTION_LEAN) the runtime's
  // way only (2 below).
  struct Family {
    const char *label, *forward, *dq, *dkv;
    unsigned forwardBlocks, dqBlocks, dkvBlocks;
    bool everyWay, bf16Inputs = false;
  } families[] = {
      {"fp32        ", "tfc_cuda_attention_forward_kernel", "tfc_cuda_attention_backward_dq_kernel",
       "tfc_cuda_attention_backward_dkv_kernel", unsigned(k::attentionForwardUnits(heads, seq, dv)),
       unsigned(k::attentionDqUnits(heads, seq, d)),
       unsigned(k::attentionDkvUnits(heads, seq, d, dv)), true},
      {"tensor cores", "tfc_cuda_attention_tc_forward_kernel",
       "tfc_cuda_attention_tc_backward_dq_kernel", "tfc_cuda_attention_tc_backward_dkv_kernel",
       tcBlocks, tcBlocks, tcBlocks, true},
      {"tensor cores, bf16 q, k, v, dO", "tfc_cuda_attention_tc_forward_kernel",
       "tfc_cuda_attention_tc_backward_dq_kernel", "tfc_cuda_attention_tc_backward_dkv_kernel",
       tcBlocks, tcBlocks, tcBlocks, false, true},
      {"tensor cores, lean forward and dq", "tfc_cuda_attention_tc_forward_lean_kernel",
       "tfc_cuda_attention_tc_backward_dq_lean_kernel", "tfc_cuda_attention_tc_backward_dkv_kernel",
       tcBlocks, tcBlocks, tcBlocks, false},
      {"wgmma", kWgmma.forward, kWgmma.dq, kWgmma.dkv, tcBlocks, tcBlocks, tcBlocks, false},
      // What the runtime launches for bf16 inputs under TFC_ATTENTION_WGMMA=1:
      // wgmma's bf16 forward, dq and dkv (cp.async copies the bits).
      {"wgmma, bf16 q, k, v, dO", kWgmma.forwardBf16, kWgmma.dqBf16, kWgmma.dkvBf16, tcBlocks,
       tcBlocks, tcBlocks, false, true},
      {"wgmma, serial", kWgmmaSerial.forward, kWgmmaSerial.dq, kWgmmaSerial.dkv, tcBlocks, tcBlocks,
       tcBlocks, false},
      {"wgmma, wide", kWgmmaWide.forward, kWgmmaWide.dq, kWgmmaWide.dkvWide,
       unsigned(heads * ((seq + 127) / 128)), unsigned(heads * ((seq + 127) / 128)),
       unsigned(heads * ((seq + 127) / 128)), false}};
  // Ways: 0 dS stored by dkv, 1 the forward's statistics (dkv computes D
  // again), 2 the forward's statistics with dkv reading dq's rows and D
  // from scratch (what the runtime does without dS), 3 dq's pass 1.
  const char *ways[] = {"dS stored by dkv", "the forward's stats", "the forward's stats, dq's D",
                        "dq's pass 1"};
  // The runtime's way (2) of each family, for the summary line.
  std::vector<std::pair<std::string, float>> runtimeWay;
  for (const Family &f : families)
    for (int way = f.everyWay ? 0 : 2; way < (f.everyWay ? 4 : 3); ++way) {
      if (std::strncmp(f.label, "wgmma", 5) == 0 && !wgmma)
        continue; // no sm_90a image on this GPU
      forwardInputsBf16 = f.bf16Inputs ? k::kAttentionQkvBf16 : 0;
      inputsBf16 = f.bf16Inputs ? k::kAttentionQkvBf16 | k::kAttentionDoBf16 : 0;
      gradsBf16 =
          f.bf16Inputs ? k::kAttentionDqBf16 | k::kAttentionDkBf16 | k::kAttentionDvBf16 : 0;
      gq = (f.bf16Inputs ? b16 : f32)[0];
      gk = (f.bf16Inputs ? b16 : f32)[1];
      gv = (f.bf16Inputs ? b16 : f32)[2];
      gd = (f.bf16Inputs ? b16 : f32)[3];
      const bool forwardStats = way < 3;
      saved = forwardStats ? gsaved : 0;
      savedOut = forwardStats ? gout : 0;
      scratch = way >= 2 ? gstats : 0;
      dS = way == 0 ? gds : 0;
      const int iterations = 5;
      // dkv's parameters: in way 2, scratch's statistics, not the forward's.
      auto dkv = [&] {
        const CUdeviceptr forwardSaved = saved;
        if (way == 2)
          saved = 0;
        gpu.launch(f.dkv, f.dkvBlocks, backward);
        saved = forwardSaved;
      };
      auto step = [&] {
        gpu.launch(f.forward, f.forwardBlocks, forward);
        if (dS)
          dkv();
        gpu.launch(f.dq, f.dqBlocks, backward);
        if (!dS)
          dkv();
      };
      step(); // warm up
      const float ms = gpu.time([&] {
        for (int i = 0; i < iterations; ++i)
          step();
      }) / float(iterations);
      const double tflops = flops / (double(ms) * 1e-3) / 1e12;
      // Each kernel alone, the same launches in a loop (dq after dkv's dS).
      auto alone = [&](const char *kernel, unsigned blocks, std::vector<void *> &params) {
        return gpu.time([&] {
          for (int i = 0; i < iterations; ++i)
            gpu.launch(kernel, blocks, params);
        }) / float(iterations);
      };
      const float forwardMs = alone(f.forward, f.forwardBlocks, forward),
                  dqMs = alone(f.dq, f.dqBlocks, backward);
      if (way == 2)
        saved = 0;
      const float dkvMs = alone(f.dkv, f.dkvBlocks, backward);
      std::printf("bench attention %s (%s): %lld heads x %lld x %lld, d 64, forward + backward "
                  "%.3f ms, %.1f TFLOPS (%.1f%% of 989 dense bf16); alone: forward %.3f, dq "
                  "%.3f, dkv %.3f ms\n",
                  f.label, ways[way], heads, seq, seq, double(ms), tflops, 100.0 * tflops / 989.0,
                  double(forwardMs), double(dqMs), double(dkvMs));
      std::fflush(stdout);
      if (way == 2) {
        std::string label = f.label;
        label.erase(label.find_last_not_of(' ') + 1);
        runtimeWay.emplace_back(label, ms);
      }
    }
  // Which family a model should take at this shape: the fastest on the
  // runtime's way, against mma.sync's tensor cores (the default).
  auto fastest = std::min_element(runtimeWay.begin(), runtimeWay.end(),
                                  [](const auto &a, const auto &b) { return a.second < b.second; });
  auto tensorCores = std::find_if(runtimeWay.begin(), runtimeWay.end(),
                                  [](const auto &r) { return r.first == "tensor cores"; });
  if (fastest != runtimeWay.end() && tensorCores != runtimeWay.end()) {
    const double tflops = flops / (double(fastest->second) * 1e-3) / 1e12;
    std::printf("bench attention fastest on the runtime's way (%s) at %lld heads x %lld: %s "
                "%.3f ms, %.1f%% of 989 dense bf16; tensor cores %.3f ms, %.2fx\n",
                ways[2], heads, seq, fastest->first.c_str(), double(fastest->second),
                100.0 * tflops / 989.0, double(tensorCores->second),
                double(tensorCores->second) / double(fastest->second));
    std::fflush(stdout);
  }
}

/// --bench-gemm: the 79 GEMMs of a medium encoder train step
/// (models/medium_encoder.tf: 8192 rows, d 512, ffn 2048, 6 layers, 1000
/// classes; forward, input and weight gradients), each alone on cuBLASLt by
/// CUDA events (median of 5 after a warm-up), in five forms: fp32 data in
/// fp32, tf32 and bf16 (today's --precision bf16: fp32 data rounded as it
/// is read), and bf16 storage, A and B in bf16 with an fp32 C, or all three
/// in bf16 (CUBLAS_COMPUTE_32F). The step's sums say what storing the GEMMs'
/// operands in bf16 would gain; a form cuBLASLt refuses prints why.
/// A GEMM of the medium encoder's train step (models/medium_encoder.tf).
struct Product {
  const char *what;
  long long m, n, k;
  bool transA, transB;
  int count; // in a step
  /// A weight gradient (A = dY, m the layer's outputs, transposed; B its
  /// input): in the step cuBLASLt also sums A's columns, the bias gradient
  /// (BGRADB: our A is cuBLASLt's B).
  bool weightGradient() const { return transA && !transB; }
};

/// The step's products for `rows` rows (batch x sequence).
std::vector<Product> mediumEncoderGemms(long long rows) {
  return {
      {"qkv", rows, 1536, 512, false, true, 6},
      {"attention out", rows, 512, 512, false, true, 6},
      {"ffn 1", rows, 2048, 512, false, true, 6},
      {"ffn 2", rows, 512, 2048, false, true, 6},
      {"output net", rows, 512, 512, false, true, 1},
      {"classifier", rows, 1000, 512, false, true, 1},
      {"qkv dx", rows, 512, 1536, false, false, 6},
      {"attention out dx", rows, 512, 512, false, false, 6},
      {"ffn 1 dx", rows, 512, 2048, false, false, 6},
      {"ffn 2 dx", rows, 2048, 512, false, false, 6},
      {"output net dx", rows, 512, 512, false, false, 1},
      {"classifier dx", rows, 512, 1000, false, false, 1},
      {"qkv dw", 1536, 512, rows, true, false, 6},
      {"attention out dw", 512, 512, rows, true, false, 6},
      {"ffn 1 dw", 2048, 512, rows, true, false, 6},
      {"ffn 2 dw", 512, 2048, rows, true, false, 6},
      {"output net dw", 512, 512, rows, true, false, 1},
      {"classifier dw", 1000, 512, rows, true, false, 1},
      {"input dw", 512, 1000, rows, true, false, 1},
  };
}

/// reverse's (models/reverse.tf: `rows` 2,048, d 32, ffn 64, 10 classes,
/// one layer), whose products are too small to fill the GPU.
std::vector<Product> reverseGemms(long long rows) {
  return {
      {"input", rows, 32, 10, false, true, 1},
      {"qkv", rows, 96, 32, false, true, 1},
      {"attention out", rows, 32, 32, false, true, 1},
      {"ffn 1", rows, 64, 32, false, true, 1},
      {"ffn 2", rows, 32, 64, false, true, 1},
      {"output net", rows, 32, 32, false, true, 1},
      {"classifier", rows, 10, 32, false, true, 1},
      {"qkv dx", rows, 32, 96, false, false, 1},
      {"attention out dx", rows, 32, 32, false, false, 1},
      {"ffn 1 dx", rows, 32, 64, false, false, 1},
      {"ffn 2 dx", rows, 64, 32, false, false, 1},
      {"output net dx", rows, 32, 32, false, false, 1},
      {"classifier dx", rows, 32, 10, false, false, 1},
      {"qkv dw", 96, 32, rows, true, false, 1},
      {"attention out dw", 32, 32, rows, true, false, 1},
      {"ffn 1 dw", 64, 32, rows, true, false, 1},
      {"ffn 2 dw", 32, 64, rows, true, false, 1},
      {"output net dw", 32, 32, rows, true, false, 1},
      {"classifier dw", 10, 32, rows, true, false, 1},
      {"input dw", 32, 10, rows, true, false, 1},
  };
}

/// How a bench multiplies: the precision asked and the storage of A, B, C.
struct GemmForm {
  const char *label;
  GemmPrecision precision;
  GemmStorage storage;
};

/// Random matrices every product of the benches fits in (max(rows, 2048) x
/// 2048 elements), as fp32 and as their bf16 bits, and a C of each kind.
struct GemmOperands {
  CUdeviceptr a32, b32, c32, a16, b16, c16;
};
GemmOperands uploadGemmOperands(Gpu &gpu, long long rows) {
  const size_t most = size_t(std::max(rows, 2048LL)) * 2048;
  std::vector<float> values = randomFloats(most);
  std::vector<uint16_t> bits(most);
  for (size_t i = 0; i < most; ++i)
    bits[i] = kernels::bf16Bits(values[i]);
  return {gpu.upload(values), gpu.upload(values), gpu.alloc(most * 4),
          gpu.upload(bits),   gpu.upload(bits),   gpu.alloc(most * 2)};
}

/// Product p's tfc_sgemm arguments (row-major, packed) on `o` in `storage`.
GemmArgs productArgs(const Product &p, const GemmOperands &o, GemmStorage storage) {
  const bool bf16 = storage != GemmStorage::F32;
  return {1,
          p.m,
          p.n,
          p.k,
          intptr_t(bf16 ? o.a16 : o.a32),
          p.transA ? p.m : p.k,
          0,
          p.transA,
          intptr_t(bf16 ? o.b16 : o.b32),
          p.transB ? p.k : p.n,
          0,
          p.transB,
          intptr_t(storage == GemmStorage::Bf16 ? o.c16 : o.c32),
          p.n,
          0,
          0};
}

void benchGemms(Gpu &gpu, long long rows) {
  std::string error;
  std::unique_ptr<CublasLt> lt = CublasLt::load(error);
  if (!lt)
    fatal(error);
  const std::vector<Product> products = mediumEncoderGemms(rows);
  const GemmForm forms[] = {{"fp32", GemmPrecision::Fp32, GemmStorage::F32},
                            {"tf32", GemmPrecision::Tf32, GemmStorage::F32},
                            {"bf16 on fp32", GemmPrecision::Bf16, GemmStorage::F32},
                            {"bf16 A B", GemmPrecision::Bf16, GemmStorage::Bf16Operands},
                            {"bf16 A B C", GemmPrecision::Bf16, GemmStorage::Bf16}};
  constexpr int kForms = sizeof forms / sizeof forms[0];
  const GemmOperands operands = uploadGemmOperands(gpu, rows);
  const CUdeviceptr workspace = gpu.alloc(kCublasLtWorkspaceBytes);
  double stepMs[kForms] = {}, stepFlops = 0;
  bool complete[kForms];
  std::fill(complete, complete + kForms, true);
  for (const Product &p : products) {
    stepFlops += 2.0 * double(p.m) * double(p.n) * double(p.k) * p.count;
    std::printf("bench gemm %-16s %5lldx%lldx%lld%s%s x%d:", p.what, p.m, p.n, p.k,
                p.transA ? " A^T" : "", p.transB ? " B^T" : "", p.count);
    for (int f = 0; f < kForms; ++f) {
      const GemmForm &form = forms[f];
      const GemmArgs args = productArgs(p, operands, form.storage);
      auto run = [&] {
        return lt->sgemm(args, {}, form.precision, nullptr, workspace, kCublasLtWorkspaceBytes,
                         error, form.storage);
      };
      if (!run()) {
        std::printf(" %s n/a (%s)", form.label, error.c_str());
        complete[f] = false;
        continue;
      }
      std::vector<float> times;
      for (int i = 0; i < 5; ++i)
        times.push_back(gpu.time([&] { run(); }));
      std::sort(times.begin(), times.end());
      const double ms = times[2];
      stepMs[f] += ms * p.count;
      std::printf(" %s %.4f", form.label, ms);
    }
    std::printf(" ms\n");
    std::fflush(stdout);
  }
  std::printf("bench gemm: the medium encoder's 79 GEMMs a step (%lld rows), %.1f GFLOP:", rows,
              stepFlops / 1e9);
  for (int f = 0; f < kForms; ++f)
    if (complete[f])
      std::printf("%s %s %.3f ms (%.0f TFLOPS)", f ? "," : "", forms[f].label, stepMs[f],
                  stepFlops / (stepMs[f] * 1e-3) / 1e12);
    else
      std::printf("%s %s n/a", f ? "," : "", forms[f].label);
  std::printf("\n");
  std::fflush(stdout);
}

/// --bench-gemm-algorithms: each GEMM of a medium encoder step (as
/// benchGemms; in tf32 on fp32 data and in bf16 A and B) and of a reverse
/// step (in fp32 and tf32; its 2,048 rows, or `rows` if fewer) on each of the first kChoices
/// algorithms cuBLASLt's heuristic offers (CublasLt::useHeuristicChoice; the runtime always takes
/// the first), the weight gradients with their bias gradient as the step runs them (BGRADB). Median
/// of 5 by CUDA events. Prints each product's first and fastest with their configurations, and the
/// step's sums: what choosing among the heuristic's algorithms (autotuning, or a rule such as
/// split-K for the weight gradients' few output tiles) could gain.
void benchGemmAlgorithms(Gpu &gpu, long long rows) {
  constexpr int kChoices = 8;
  std::string error;
  std::unique_ptr<CublasLt> lt = CublasLt::load(error);
  if (!lt)
    fatal(error);
  const GemmOperands operands = uploadGemmOperands(gpu, rows);
  const CUdeviceptr bias = gpu.alloc(size_t(std::max(rows, 2048LL)) * 4);
  const CUdeviceptr workspace = gpu.alloc(kCublasLtWorkspaceBytes);
  const GemmForm fp32{"fp32", GemmPrecision::Fp32, GemmStorage::F32},
      tf32{"tf32", GemmPrecision::Tf32, GemmStorage::F32},
      bf16{"bf16 A B", GemmPrecision::Bf16, GemmStorage::Bf16Operands};
  // reverse's products take microseconds: each time is of 20 in a row.
  struct Model {
    const char *name;
    std::vector<Product> products;
    std::vector<GemmForm> forms;
    int repeats;
  };
  const Model models[] = {{"medium encoder", mediumEncoderGemms(rows), {tf32, bf16}, 1},
                          {"reverse", reverseGemms(std::min(rows, 2048LL)), {fp32, tf32}, 20}};
  for (const Model &model : models)
    for (const GemmForm &form : model.forms) {
      double firstMs = 0, bestMs = 0;
      for (const Product &p : model.products) {
        const GemmArgs args = productArgs(p, operands, form.storage);
        GemmEpilogue epilogue;
        if (p.weightGradient()) {
          epilogue.biasGrad = bias;
          epilogue.biasGradOfB = false;
        }
        std::printf("bench gemm algorithms %s %s %-16s %5lldx%lldx%lld%s%s%s x%d:", model.name,
                    form.label, p.what, p.m, p.n, p.k, p.transA ? " A^T" : "",
                    p.transB ? " B^T" : "", p.weightGradient() ? " +bias grad" : "", p.count);
        double first = -1, best = -1;
        int bestChoice = -1, offered = 0;
        std::string firstAlgorithm, bestAlgorithm;
        for (int choice = 0; choice < kChoices; ++choice) {
          lt->useHeuristicChoice(choice);
          auto run = [&] {
            return lt->sgemm(args, epilogue, form.precision, nullptr, workspace,
                             kCublasLtWorkspaceBytes, error, form.storage);
          };
          if (!run()) {
            // Past what the heuristic offers: done; another failure: say it, go on.
            if (error.find("cuBLASLt offers") != std::string::npos)
              break;
            std::printf(" #%d n/a (%s)", choice, error.c_str());
            continue;
          }
          ++offered;
          const std::string algorithm = lt->lastAlgorithm();
          std::vector<float> times;
          for (int i = 0; i < 5; ++i)
            times.push_back(gpu.time([&] {
              for (int r = 0; r < model.repeats; ++r)
                run();
            }) / float(model.repeats));
          std::sort(times.begin(), times.end());
          const double ms = times[2];
          std::printf(" #%d %.4f", choice, ms);
          if (choice == 0)
            first = ms, firstAlgorithm = algorithm;
          if (best < 0 || ms < best)
            best = ms, bestChoice = choice, bestAlgorithm = algorithm;
        }
        lt->useHeuristicChoice(0);
        if (first < 0) {
          std::printf("\n");
          continue;
        }
        firstMs += first * p.count;
        bestMs += best * p.count;
        std::printf(" ms; of %d, the first [%s], the fastest #%d [%s] %.2fx\n", offered,
                    firstAlgorithm.c_str(), bestChoice, bestAlgorithm.c_str(), first / best);
        std::fflush(stdout);
      }
      std::printf("bench gemm algorithms %s %s: the step's GEMMs %.3f ms on the heuristic's "
                  "first, %.3f ms on each one's fastest of its first %d\n",
                  model.name, form.label, firstMs, bestMs, kChoices);
      std::fflush(stdout);
    }
}

/// --bench-layer-norm: the layer norm backward of the medium encoder's
/// 8,192 rows of 512 (and reverse's 2,048 of 32), by CUDA events, for
/// blocks of 8 to 64 rows (the compiled code passes
/// kLayerNormBackwardBlockRows on the GPU), in one launch (the last block
/// adds the partials) and in two (the reduce kernel does): what to choose
/// kLayerNormBackwardBlockRows and kLayerNormLastBlockPartials by.
void benchLayerNorm(Gpu &gpu) {
  typedef long long i64;
  for (auto [rows, d] : {std::pair<i64, i64>{8192, 512}, {2048, 32}}) {
    const size_t n = size_t(rows * d);
    float eps = 1e-5f;
    CUdeviceptr x = gpu.upload(randomFloats(n)), gamma = gpu.upload(randomFloats(size_t(d))),
                g = gpu.upload(randomFloats(n)), dx = gpu.alloc(n * 4),
                dgamma = gpu.alloc(size_t(d) * 4), dbeta = gpu.alloc(size_t(d) * 4),
                scratch = gpu.alloc(size_t(2 * (rows / 8 + 1) * d) * 4), counter = gpu.alloc(4),
                noGate = 0, none = 0;
    i64 zero = 0;
    float keep = 1.0f;
    gpu.fill(counter, 4, 0);
    std::printf("bench layer_norm backward %lld x %lld:", rows, d);
    for (i64 blockRows : {8LL, 16LL, 32LL, 64LL}) {
      const unsigned blocks = unsigned((rows + blockRows - 1) / blockRows);
      const unsigned slices =
          unsigned((d + k::kLayerNormReduceColumns - 1) / k::kLayerNormReduceColumns);
      for (bool oneLaunch : {true, false}) {
        std::vector<void *> backward = {&rows,
                                        &d,
                                        &blockRows,
                                        &eps,
                                        &x,
                                        &gamma,
                                        &g,
                                        &noGate,
                                        &dx,
                                        &dgamma,
                                        &dbeta,
                                        &scratch,
                                        &none, // no dropout (its 8 arguments)
                                        &zero,
                                        &none,
                                        &none,
                                        &zero,
                                        &zero,
                                        &zero,
                                        &keep,
                                        &zero, // f32 gate
                                        oneLaunch ? &counter : &none};
        std::vector<void *> reduce = {&rows, &d, &blockRows, &scratch, &dgamma, &dbeta};
        auto run = [&] {
          gpu.launch("tfc_cuda_layer_norm_backward_kernel", blocks, backward);
          if (!oneLaunch)
            gpu.launch("tfc_cuda_layer_norm_backward_reduce_kernel", slices, reduce);
        };
        run(); // warm up
        const int iterations = 20;
        const float ms = gpu.time([&] {
          for (int i = 0; i < iterations; ++i)
            run();
        }) / float(iterations);
        std::printf(" %lld rows a block %s %.1f us;", blockRows, oneLaunch ? "one" : "two",
                    double(ms) * 1000.0);
      }
    }
    std::printf("\n");
    std::fflush(stdout);
  }
}

/// --probe-wgmma (and part of the checks): wgmma_probe.cu's kernels loaded
/// and KernelChecks.h's checkWgmmaLayouts run on them.
void probeWgmma(Gpu &gpu) {
  if (!gpu.loadExtra("wgmma_probe", tfc_wgmma_probe_fatbin,
                     {{"tfc_probe_wgmma_ss_k16_kernel", 5},
                      {"tfc_probe_wgmma_ss_k64_kernel", 5},
                      {"tfc_probe_wgmma_rs_k64_kernel", 5},
                      {"tfc_probe_wgmma_ss_k64_mn_kernel", 5},
                      {"tfc_probe_wgmma_rs_k64_mn_kernel", 5}},
                     tfc::wgmmaprobe::kThreads)) {
    std::printf("SKIP wgmma probe: the driver loads no sm_90a image on this GPU\n");
    return;
  }
  checkWgmmaLayouts(gpu);
}

} // namespace

int main(int argc, char **argv) {
  int device = 0;
  bool bench = false, benchGemm = false, benchGemmChoices = false, benchNorm = false,
       wgmmaOnly = false;
  long long gemmRows = 8192; // the medium encoder's batch x sequence
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      device = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--bench-attention") == 0)
      bench = true;
    else if (std::strcmp(argv[i], "--bench-gemm") == 0)
      benchGemm = true;
    else if (std::strcmp(argv[i], "--bench-gemm-algorithms") == 0)
      benchGemmChoices = true;
    else if (std::strcmp(argv[i], "--bench-layer-norm") == 0)
      benchNorm = true;
    else if (std::strcmp(argv[i], "--probe-wgmma") == 0)
      wgmmaOnly = true;
    else if (std::strcmp(argv[i], "--rows") == 0 && i + 1 < argc && std::atoll(argv[i + 1]) > 0)
      gemmRows = std::atoll(argv[++i]);
    else
      fatal(std::string("usage: ") + argv[0] +
                " [--device N] [--bench-attention | --bench-gemm [--rows N] |"
                " --bench-gemm-algorithms [--rows N] | --bench-layer-norm | --probe-wgmma]",
            2);
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
    if (benchGemm) {
      benchGemms(gpu, gemmRows);
      return 0;
    }
    if (benchGemmChoices) {
      benchGemmAlgorithms(gpu, gemmRows);
      return 0;
    }
    if (benchNorm) {
      benchLayerNorm(gpu);
      return 0;
    }
    if (bench) {
      const bool wgmma = hasWgmmaAttention(gpu);
      for (long long seq : {1024LL, 2048LL})
        benchAttention(gpu, 32, seq, wgmma);
      benchAttention(gpu, 256, 256, wgmma); // the medium encoder's: batch 32 x 8 heads of 256
      return 0;
    }
    if (wgmmaOnly) {
      probeWgmma(gpu);
      std::printf("%d passed, %d failed\n", passed, failed);
      return failed == 0 ? 0 : 1;
    }
    const Shape shapes[] = {{"reverse 16x16 d32", 1, 128, 16, 16, 32, 32, false},
                            {"set_anomaly 10x10 d64", 64, 4, 10, 10, 64, 64, false},
                            {"encoder_decoder 2x2 d2 masked", 16, 3, 2, 2, 2, 2, true},
                            {"40x100 d24/40 masked", 2, 3, 40, 100, 24, 40, true},
                            {"40x100 d32/48 masked", 2, 3, 40, 100, 32, 48, true},
                            {"33x65 d7/5", 2, 1, 33, 65, 7, 5, false},
                            {"9x70 d96/80 masked (wide heads)", 1, 2, 9, 70, 96, 80, true},
                            {"300x300 d64", 2, 2, 300, 300, 64, 64, false},
                            {"300x300 d64 masked, packed rows", 2, 2, 300, 300, 64, 64, true,
                             false, true},
                            // attention.cu's tile edges: tq, tk around 64, d and dv odd,
                            // apart and past a 64-column slice, k and v broadcast
                            {"63x65 d81/24 masked", 2, 2, 63, 65, 81, 24, true},
                            {"130x17 d24/67 masked", 1, 3, 130, 17, 24, 67, true},
                            {"1x130 d3 masked", 2, 1, 1, 130, 3, 3, true},
                            {"65x130 d33/17 masked, k and v broadcast", 2, 4, 65, 130, 33, 17,
                             true, true},
                            {"1024x1024 d64 masked (long rows)", 1, 4, 1024, 1024, 64, 64, true},
                            {"1024x1024 d64", 1, 4, 1024, 1024, 64, 64, false}};
    const bool wgmma = hasWgmmaAttention(gpu);
    if (!wgmma)
      std::printf("SKIP attention on wgmma: the driver loads no sm_90a image on this GPU\n");
    for (const Shape &s : shapes)
      checkAttention(gpu, s,
                     wgmma ? std::vector<WgmmaKernels>{kWgmma, kWgmmaSerial, kWgmmaWide}
                           : std::vector<WgmmaKernels>{});
    probeWgmma(gpu);
    checkLayerNorm(gpu, 2048, 32, 64);
    checkLayerNorm(gpu, 640, 256, 64);
    checkLayerNorm(gpu, 37, 100, 8);
    checkLayerNorm(gpu, 2048, 32, 16);  // reverse's on the GPU (kLayerNormBackwardBlockRows)
    checkLayerNorm(gpu, 8192, 512, 64); // the medium encoder's on the CPU: 128 row blocks
    checkLayerNorm(gpu, 8192, 512, 16); // and on the GPU: 512
    checkLayerNorm(gpu, 20000, 100, 4); // 5,000 row blocks
    for (const GemmCase &g : kSmallGemmCases)
      checkSmallGemm(gpu, g);
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
