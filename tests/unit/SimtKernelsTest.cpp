//===- SimtKernelsTest.cpp - the CUDA kernels on the SIMT emulator --------===//
//
// tfc-kernel-check's checks (tools/gpu/KernelChecks.h) with no GPU: the
// kernels of runtime/cuda/kernels, their own source compiled for the host,
// run on tests/simt's emulator of CUDA's execution model (blocks of fibers,
// __syncthreads, warp shuffles, the tensor cores' mma) against the CPU
// kernels, at shapes small enough for a CPU. A kernel's n-th launch runs
// under schedule n % 3 (in order, reversed, shuffled) and, n odd, on a
// third of the grid, so every "the same bits on a second run" compares two
// schedules and two grids: a missing barrier shows, and so does a
// grid-stride loop that leaves state behind.
// A launch that fails (__trap, divergence, deadlock) is a FAIL line.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/SimtLaunch.h"
#include "tools/gpu/KernelChecks.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>

namespace {

using namespace tfc::kernelcheck;
namespace simt = tfc::simt;

/// kernel_check's Gpu on the emulator: device memory is host memory
/// (256-byte aligned, as cuMemAlloc's), a launch looks the kernel up by name
/// (its block size is Kernels.h's) and runs it to the end. A kernel's n-th
/// launch runs under schedule n % 3 and, n odd, on a third of the grid.
class SimtDevice {
public:
  using Ptr = unsigned long long;

  Ptr alloc(size_t bytes) {
    const size_t size = (std::max<size_t>(bytes, 4) + 255) / 256 * 256;
    buffers_.emplace_back(static_cast<unsigned char *>(std::aligned_alloc(256, size)));
    std::memset(buffers_.back().get(), 0xA5, size);
    return Ptr(uintptr_t(buffers_.back().get()));
  }
  template <typename T> Ptr upload(const std::vector<T> &host) {
    const Ptr p = alloc(host.size() * sizeof(T));
    copyIn(p, host.data(), host.size() * sizeof(T));
    return p;
  }
  template <typename T> std::vector<T> download(Ptr p, size_t count) {
    std::vector<T> host(count);
    if (count)
      std::memcpy(host.data(), address(p), count * sizeof(T));
    return host;
  }
  void copyIn(Ptr p, const void *host, size_t bytes) {
    if (bytes)
      std::memcpy(address(p), host, bytes);
  }
  void fill(Ptr p, size_t bytes, unsigned char value) { std::memset(address(p), value, bytes); }

  /// A kernel that is not in Kernels.h (the wgmma probe's), as
  /// kernel_check's Gpu::loadExtra names it.
  void addKernel(const char *name, int threads, int params) {
    extra_.push_back({"wgmma_probe", name, threads, params, ""});
  }

  void launch(const char *name, unsigned blocks, std::vector<void *> params) {
    const k::KernelInfo *info = nullptr;
    for (const k::KernelInfo &candidate : k::kKernels)
      if (std::strcmp(candidate.name, name) == 0)
        info = &candidate;
    for (const k::KernelInfo &candidate : extra_)
      if (std::strcmp(candidate.name, name) == 0)
        info = &candidate;
    const simt::Kernel *kernel = simt::findKernel(name);
    const std::string what = std::string("launch ") + name;
    if (!info || !kernel)
      return report(false, what, info ? "not compiled for the emulator" : "not in Kernels.h");
    if (int(params.size()) != info->paramCount || kernel->paramCount != info->paramCount)
      return report(false, what,
                    std::to_string(params.size()) + " parameters given, the kernel has " +
                        std::to_string(kernel->paramCount) + ", Kernels.h says " +
                        std::to_string(info->paramCount));
    const int n = launches_[name]++;
    // Every other launch on a third of the grid: blocks walk several units
    // of work (the kernels' grid-stride loops), for the same bits.
    const unsigned grid = n % 2 ? (std::max(blocks, 1u) + 2) / 3 : std::max(blocks, 1u);
    const std::string error = simt::launch(name, grid, unsigned(info->threads),
                                           simt::Schedule(n % 3), uint64_t(n),
                                           kernel->bind(params.data()));
    if (!error.empty())
      report(false, error); // "kernel (block b of n): what went wrong"
  }

private:
  static void *address(Ptr p) { return reinterpret_cast<void *>(uintptr_t(p)); }
  struct Free {
    void operator()(unsigned char *p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<unsigned char, Free>> buffers_;
  std::map<std::string, int> launches_;
  std::vector<k::KernelInfo> extra_;
};

/// Runs one of KernelChecks.h's checks; each of its FAIL lines fails the test.
template <typename Check> void expectPasses(Check check) {
  const int failedBefore = failed, passedBefore = passed;
  SimtDevice device;
  check(device);
  EXPECT_EQ(failed, failedBefore) << "a check failed: its FAIL lines are above";
  EXPECT_GT(passed, passedBefore);
}

TEST(SimtKernels, AttentionReverse) {
  // reverse's heads at a batch of 8 (d 32: the tensor-core kernels too).
  expectPasses(
      [](SimtDevice &d) { checkAttention(d, {"reverse 16x16 d32", 1, 8, 16, 16, 32, 32, false}); });
}

TEST(SimtKernels, AttentionOddShapes) {
  expectPasses([](SimtDevice &d) {
    checkAttention(d, {"encoder_decoder 2x2 d2 masked", 4, 3, 2, 2, 2, 2, true});
    checkAttention(d, {"33x65 d7/5", 2, 1, 33, 65, 7, 5, false});
    checkAttention(d, {"9x70 d96/80 masked (wide heads)", 1, 2, 9, 70, 96, 80, true});
  });
}

TEST(SimtKernels, AttentionTileEdges) {
  // attention.cu's 64 x 64 tiles and 16-column chunks: tq and tk below,
  // at and past a tile (1, 17, 63, 64, 65, 130), d and dv odd, apart, and
  // past a 64-column slice (81/24, 24/67, 3), masked rows (row 1 all keys,
  // row 2 a whole first key tile), k and v broadcast over the heads.
  expectPasses([](SimtDevice &d) {
    checkAttention(d, {"0x17 d5 (no queries: dk and dv are 0)", 1, 2, 0, 17, 5, 5, false});
    checkAttention(d, {"1x17 d3 masked", 1, 2, 1, 17, 3, 3, true});
    checkAttention(d, {"17x1 d5/7 masked", 2, 1, 17, 1, 5, 7, true});
    checkAttention(d, {"63x65 d81/24 masked", 1, 1, 63, 65, 81, 24, true});
    checkAttention(d, {"65x63 d24/67 masked", 1, 1, 65, 63, 24, 67, true});
    checkAttention(d, {"130x130 d16 masked", 1, 1, 130, 130, 16, 16, true});
    checkAttention(d, {"64x128 d64 (whole tiles)", 1, 1, 64, 128, 64, 64, false});
    checkAttention(d, {"65x130 d33/17 masked, k and v broadcast", 2, 2, 65, 130, 33, 17, true,
                       true});
  });
}

TEST(SimtKernels, AttentionTensorCores) {
  // Several 64-row blocks and key tiles, partial ones, masked rows, d != dv,
  // and set_anomaly's heads.
  expectPasses([](SimtDevice &d) {
    checkAttention(d, {"100x130 d64/48 masked", 1, 2, 100, 130, 64, 48, true});
    checkAttention(d, {"70x70 d32", 2, 1, 70, 70, 32, 32, false});
    checkAttention(d, {"40x100 d32/48 masked", 2, 3, 40, 100, 32, 48, true});
    checkAttention(d, {"set_anomaly 10x10 d64", 8, 4, 10, 10, 64, 64, false});
    // Rows 16-byte aligned: the float4 staging and the prefetched tiles.
    checkAttention(d, {"100x130 d64/48 masked, packed rows", 1, 2, 100, 130, 64, 48, true, false,
                       true});
    checkAttention(d, {"70x200 d32/16 packed rows", 2, 1, 70, 200, 32, 16, false, false, true});
    checkAttention(d, {"65x130 d16/32 masked, k and v broadcast, packed rows", 2, 2, 65, 130, 16,
                       32, true, true, true});
    // Unmasked with a last key (query) tile short by 1 to 8: the edge of
    // the kernels' tests-free path for whole unmasked tiles.
    checkAttention(d, {"40x127 d32/16", 2, 1, 40, 127, 32, 16, false});
    checkAttention(d, {"127x120 d64 packed rows", 1, 1, 127, 120, 64, 64, false, false, true});
  });
}

/// A forward, dq and dkv kernel of the tensor cores; dkvWide, a dkv that
/// takes dq's statistics alone, launched there instead of dkv.
struct TcKernels {
  const char *forward, *dq, *dkv;
  const char *dkvWide = nullptr;
};
const TcKernels kMmaSync = {"tfc_cuda_attention_tc_forward_kernel",
                            "tfc_cuda_attention_tc_backward_dq_kernel",
                            "tfc_cuda_attention_tc_backward_dkv_kernel"};
/// The lean forward and dq (TFC_ATTENTION_LEAN), which must give the same
/// bytes.
const TcKernels kLean = {"tfc_cuda_attention_tc_forward_lean_kernel",
                         "tfc_cuda_attention_tc_backward_dq_lean_kernel",
                         "tfc_cuda_attention_tc_backward_dkv_kernel"};
/// attention_wgmma.cu's (TFC_ATTENTION_WGMMA): on the emulator, whose wgmma
/// rounds as its mma.sync does, the same bytes for heads of 64; and its
/// unpipelined forward and dq (tfc-kernel-check's A/B).
const TcKernels kWgmma = {"tfc_cuda_attention_wgmma_forward_kernel",
                          "tfc_cuda_attention_wgmma_backward_dq_kernel",
                          "tfc_cuda_attention_wgmma_backward_dkv_kernel"};
/// The wide forward, dq and dkv (two warpgroups, 128 queries or keys a
/// block; the wide dkv on dq's statistics alone).
const TcKernels kWgmmaWide = {"tfc_cuda_attention_wgmma_forward_wide_kernel",
                              "tfc_cuda_attention_wgmma_backward_dq_wide_kernel",
                              "tfc_cuda_attention_wgmma_backward_dkv_kernel",
                              "tfc_cuda_attention_wgmma_backward_dkv_wide_kernel"};
const TcKernels kWgmmaSerial = {"tfc_cuda_attention_wgmma_forward_serial_kernel",
                                "tfc_cuda_attention_wgmma_backward_dq_serial_kernel",
                                "tfc_cuda_attention_wgmma_backward_dkv_serial_kernel"};

/// The tensor-core kernels' outputs' bytes (forward, dq with its stats, dkv
/// with stored and with recomputed stats; padding included) hashed, FNV-1a
/// 64, inputs from a fixed integer generator (not <random>'s
/// distributions, which differ between standard libraries). runtimeWay:
/// instead, the forward saving its rows' statistics, dq reading them and
/// storing its rows' in scratch, dkv reading those (what the runtime does,
/// and where attention_wgmma.cu's dq and dkv take their pipelined wgmma),
/// then dkv again on the forward's.
uint64_t tensorCoreDigest(SimtDevice &gpu, long long outer, long long inner, long long tq,
                          long long tk, long long d, long long dv, bool masked, bool packed,
                          const TcKernels &kernels = kMmaSync, bool runtimeWay = false) {
  typedef long long i64;
  typedef SimtDevice::Ptr Ptr;
  uint32_t state = 12345;
  auto floats = [&](i64 n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float &x : v) {
      state = state * 1664525u + 1013904223u;
      x = float(int32_t(state >> 8) - (1 << 23)) / float(1 << 22); // [-2, 2)
    }
    return v;
  };
  i64 qRow = packed ? d : d + 3, kRow = packed ? d : d + 1,
      vRow = packed ? dv : dv + 1, dRow = packed ? dv : dv + 2, oRow = dv,
      heads = outer * inner;
  i64 qI = tq * qRow, kI = tk * kRow, vI = tk * vRow, dI = tq * dRow,
      oI = tq * oRow;
  i64 qO = inner * qI, kO = inner * kI, vO = inner * vI, dO_ = inner * dI,
      oO = inner * oI;
  std::vector<unsigned char> mask;
  if (masked) // row 1 every key masked, row 2 its first 70 keys, the rest
              // scattered
    for (i64 i = 0; i < tq; ++i)
      for (i64 j = 0; j < tk; ++j)
        mask.push_back(i == 1   ? 0
                       : i == 2 ? j >= 70
                                : (j <= i + 3 || (i + j) % 5 == 0));
  Ptr gq = gpu.upload(floats(heads * qI)), gk = gpu.upload(floats(heads * kI)),
      gv = gpu.upload(floats(heads * vI)), gd = gpu.upload(floats(heads * dI));
  Ptr gm = masked ? gpu.upload(mask) : 0;
  i64 mO = 0, mI = 0, mR = tk;
  float scale = 0.125f;
  const size_t outBytes = size_t(heads * oI) * 4,
               qBytes = size_t(heads * qI) * 4, kBytes = size_t(heads * kI) * 4,
               vBytes = size_t(heads * vI) * 4,
               statsBytes = size_t(heads * tq) * 16;
  Ptr gout = gpu.alloc(outBytes), gdq = gpu.alloc(qBytes), gdk = gpu.alloc(kBytes),
      gdv = gpu.alloc(vBytes), gstats = gpu.alloc(statsBytes), stats = gstats, none = 0,
      gsaved = gpu.alloc(statsBytes), saved = runtimeWay ? gsaved : 0,
      savedOut = runtimeWay ? gout : 0;
  // Without the forward's statistics (none): the kernels as they were.
  std::vector<void *> forward = {&outer, &inner, &tq,   &tk,    &d,    &dv,  &scale, &gq,
                                 &qO,    &qI,    &qRow, &gk,    &kO,   &kI,  &kRow,  &gv,
                                 &vO,    &vI,    &vRow, &gm,    &mO,   &mI,  &mR,    &gout,
                                 &oO,    &oI,    &oRow, &saved, &none, &none};
  long long gradsF32 = 0;
  std::vector<void *> backward = {
      &outer, &inner, &tq,   &tk,    &d,     &dv,   &scale, &gq,       &qO,   &qI,
      &qRow,  &gk,    &kO,   &kI,    &kRow,  &gv,   &vO,    &vI,       &vRow, &gm,
      &mO,    &mI,    &mR,   &gd,    &dO_,   &dI,   &dRow,  &gdq,      &qO,   &qI,
      &qRow,  &gdk,   &kO,   &kI,    &kRow,  &gdv,  &vO,    &vI,       &vRow, &savedOut,
      &oO,    &oI,    &oRow, &saved, &stats, &none, &oRow,  &gradsF32, &none};
  const unsigned queryBlocks = unsigned(heads * ((tq + 63) / 64)),
                 keyBlocks = unsigned(heads * ((tk + 63) / 64));
  uint64_t h = 1469598103934665603ull;
  auto hash = [&](Ptr p, size_t bytes) {
    for (unsigned char c : gpu.download<unsigned char>(p, bytes))
      h = (h ^ c) * 1099511628211ull;
  };
  for (Ptr b : {gout, gdq, gdk, gdv, gstats, gsaved})
    gpu.fill(b,
             b == gout  ? outBytes
             : b == gdq ? qBytes
             : b == gdk ? kBytes
             : b == gdv ? vBytes
                        : statsBytes,
             0xff);
  gpu.launch(kernels.forward, queryBlocks, forward);
  gpu.launch(kernels.dq, queryBlocks, backward);
  if (runtimeWay)
    saved = 0; // dkv reads dq's statistics and D, as LayerKernels.cpp launches it
  // On dq's statistics (both ways here), the wide dkv where there is one.
  gpu.launch(kernels.dkvWide ? kernels.dkvWide : kernels.dkv, keyBlocks, backward);
  // Written (not the fill's NaN): the first query row's output, dq and dk.
  for (Ptr b : {gout, gdq, gdk})
    EXPECT_TRUE(std::isfinite(gpu.download<float>(b, 1)[0]));
  hash(gout, outBytes), hash(gdq, qBytes), hash(gstats, statsBytes),
      hash(gdk, kBytes), hash(gdv, vBytes);
  if (runtimeWay) {
    hash(gsaved, statsBytes);
    // And dkv on the forward's statistics (computing D itself).
    saved = gsaved;
    gpu.fill(gdk, kBytes, 0xff);
    gpu.fill(gdv, vBytes, 0xff);
    gpu.launch(kernels.dkv, keyBlocks, backward);
    hash(gdk, kBytes), hash(gdv, vBytes);
    return h;
  }
  stats = 0; // dkv recomputing the statistics
  gpu.fill(gdk, kBytes, 0xff);
  gpu.fill(gdv, vBytes, 0xff);
  gpu.launch(kernels.dkv, keyBlocks, backward);
  hash(gdk, kBytes), hash(gdv, vBytes);
  return h;
}

TEST(SimtKernels, AttentionTensorCoresKeepTheirBits) {
  // The bytes attention_tc.cu's kernels gave before its staging was
  // rewritten (commit c9e77c8's source, on this emulator): whole and
  // partial tiles, masks, the float4 (packed) and scalar (padded) paths,
  // d < 64 (the staging's column tests). A change meant to keep every bit
  // keeps these; one that changes the results updates them.
  struct Case {
    long long outer, inner, tq, tk, d, dv;
    bool masked, packed;
    uint64_t digest;
  };
  const Case cases[] = {
      {1, 2, 130, 190, 64, 64, false, true, 0x48ce7a116d1d827aull},
      {1, 2, 100, 130, 64, 48, true, true, 0x3ceafbe1c10a9b4dull},
      {2, 1, 128, 128, 48, 32, false, true, 0x81246310a8d1de86ull},
      {1, 2, 70, 129, 32, 16, false, false, 0x79cb3ebfe1a9ae34ull},
      {2, 1, 65, 64, 16, 32, true, false, 0x939a8784592c1608ull},
      {1, 1, 128, 192, 64, 64, false, false, 0x342ec8bbaf9d2c15ull},
  };
  for (const Case &c : cases) {
    SimtDevice gpu;
    const int failedBefore = failed;
    const uint64_t digest = tensorCoreDigest(gpu, c.outer, c.inner, c.tq, c.tk,
                                             c.d, c.dv, c.masked, c.packed);
    EXPECT_EQ(failed, failedBefore)
        << "a launch failed: its FAIL line is above";
    EXPECT_EQ(digest, c.digest)
        << c.tq << "x" << c.tk << " d" << c.d << "/" << c.dv
        << (c.masked ? " masked" : "") << (c.packed ? " packed" : "") << ": 0x"
        << std::hex << digest;
    SimtDevice leanGpu;
    EXPECT_EQ(tensorCoreDigest(leanGpu, c.outer, c.inner, c.tq, c.tk, c.d, c.dv, c.masked, c.packed,
                               kLean),
              c.digest)
        << "the lean kernels, " << c.tq << "x" << c.tk << " d" << c.d << "/" << c.dv
        << (c.masked ? " masked" : "") << (c.packed ? " packed" : "");
  }
}

TEST(SimtKernels, WgmmaProbe) {
  // The emulator's wgmma (Simt.cpp, from the PTX ISA) under the probe's
  // hypotheses (WgmmaProbe.h): the layouts attention_wgmma.cu rests on.
  expectPasses([](SimtDevice &d) {
    for (const char *name : {"tfc_probe_wgmma_ss_k16_kernel", "tfc_probe_wgmma_ss_k64_kernel",
                             "tfc_probe_wgmma_rs_k64_kernel", "tfc_probe_wgmma_ss_k64_mn_kernel",
                             "tfc_probe_wgmma_rs_k64_mn_kernel"})
      d.addKernel(name, tfc::wgmmaprobe::kThreads, 5);
    checkWgmmaLayouts(d);
  });
}

TEST(SimtKernels, AttentionOnWgmma) {
  // attention_wgmma.cu's kernels against the CPU's as tfc-kernel-check
  // checks them on a GPU: heads of 64, whole and partial tiles, masks,
  // packed (float4 staging) and padded rows, k and v broadcast.
  const std::vector<WgmmaKernels> wgmma = {
      {kWgmma.forward, kWgmma.dq, kWgmma.dkv, " wgmma", 64, nullptr,
       "tfc_cuda_attention_wgmma_forward_bf16_kernel",
       "tfc_cuda_attention_wgmma_backward_dq_bf16_kernel",
       "tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel"},
      {kWgmmaSerial.forward, kWgmmaSerial.dq, kWgmmaSerial.dkv, " wgmma, serial"},
      {kWgmmaWide.forward, kWgmmaWide.dq, kWgmmaWide.dkv, " wgmma, wide", 128, kWgmmaWide.dkvWide}};
  expectPasses([&](SimtDevice &d) {
    checkAttention(d, {"100x130 d64 masked", 1, 2, 100, 130, 64, 64, true}, wgmma);
    checkAttention(d, {"set_anomaly 10x10 d64", 8, 4, 10, 10, 64, 64, false}, wgmma);
    checkAttention(d, {"127x120 d64 packed rows", 1, 1, 127, 120, 64, 64, false, false, true},
                   wgmma);
    // Three query tiles and more: the pipelined loops rewrite a buffer the
    // last products read; the wide dkv's second block (keys 128 to 255)
    // has both warpgroups' keys in the shape, so a tile one rewrites while
    // the other's wgmma reads it shows (the emulator makes an odd block's
    // wgmmas early).
    checkAttention(d, {"150x300 d64 packed rows", 1, 1, 150, 300, 64, 64, false, false, true},
                   wgmma);
    checkAttention(d,
                   {"65x130 d64 masked, k and v broadcast, packed rows", 2, 2, 65, 130, 64, 64,
                    true, true, true},
                   wgmma);
  });
}

TEST(SimtKernels, WgmmaGivesTheTensorCoresBits) {
  // On the emulator wgmma rounds as mma.sync does (each k-step's sum
  // rounded once), so attention_wgmma.cu's kernels must give
  // attention_tc.cu's bytes: every index, fragment, swizzle and barrier of
  // theirs checked bit for bit. Both ways: the digest's own (dq without the
  // forward's statistics runs attention_tc.cu's loop, dkv with dq's takes
  // wgmma) and the runtime's (all three on wgmma).
  struct Case {
    long long outer, inner, tq, tk;
    bool masked, packed;
  };
  const Case cases[] = {{1, 2, 130, 190, false, true},
                        {1, 2, 100, 130, true, true},
                        {1, 1, 128, 192, false, false},
                        {2, 1, 65, 64, true, false}};
  for (const Case &c : cases)
    for (bool runtimeWay : {false, true}) {
      SimtDevice mma;
      const int failedBefore = failed;
      const uint64_t expected = tensorCoreDigest(mma, c.outer, c.inner, c.tq, c.tk, 64, 64,
                                                 c.masked, c.packed, kMmaSync, runtimeWay);
      for (const TcKernels *kernels : {&kWgmma, &kWgmmaSerial, &kWgmmaWide}) {
        SimtDevice wgmma;
        EXPECT_EQ(tensorCoreDigest(wgmma, c.outer, c.inner, c.tq, c.tk, 64, 64, c.masked, c.packed,
                                   *kernels, runtimeWay),
                  expected)
            << kernels->forward << ", " << c.tq << "x" << c.tk << (c.masked ? " masked" : "")
            << (c.packed ? " packed" : "") << (runtimeWay ? ", the runtime's way" : "");
      }
      EXPECT_EQ(failed, failedBefore) << "a launch failed: its FAIL line is above";
    }
}

TEST(SimtKernels, LayerNorm) {
  // Few row blocks, and many: 350 (segments of 44, past the 8 blocks a
  // stage, not a multiple; 33 columns, a second slice of one); 9 (segments
  // of 2, one short, three empty); no rows at all (dgamma and dbeta 0).
  expectPasses([](SimtDevice &d) {
    checkLayerNorm(d, 37, 100, 8);
    checkLayerNorm(d, 200, 256, 64);
    checkLayerNorm(d, 700, 33, 2);
    checkLayerNorm(d, 144, 40, 16);
    checkLayerNorm(d, 0, 40, 8);
  });
}

TEST(SimtKernels, SmallGemm) {
  expectPasses([](SimtDevice &d) {
    for (const GemmCase &g : kSmallGemmCases)
      checkSmallGemm(d, g);
  });
}

TEST(SimtKernels, CrossEntropy) {
  // Each in one launch (the last block adds the losses) and in two (the
  // mean kernel); 700 rows: 88 blocks, and the mean's threads add 2 or 3.
  expectPasses([](SimtDevice &d) {
    checkCrossEntropy(d, 64, 10, 1);
    checkCrossEntropy(d, 700, 5, 1);
    checkCrossEntropy(d, 16, 1000, 1);
    checkCrossEntropy(d, 8, 12, 5);
    checkCrossEntropy(d, 6, 1500, 3); // rows beyond the fused kernel's registers
  });
}

TEST(SimtKernels, Dropout) {
  expectPasses([](SimtDevice &d) {
    for (long long first : {0LL, 6LL, (1LL << 34) - 10})
      for (long long n : {1LL, 5LL, 1000LL, 70000LL})
        for (long long key : {0LL, 3LL, (5LL << 32) | 9})
          checkDropout(d, n, first, key, 0.1);
  });
}

TEST(SimtKernels, Gather) {
  expectPasses([](SimtDevice &d) {
    checkGather(d, 200, 64, 4, 0, 0);
    checkGather(d, 1000, 7, 37, 0, 0);
    checkGather(d, 1000, 12, 300, 0, 0);
    checkGather(d, 500, 64, 64, 4, 0);
    checkGather(d, 500, 64, 64, 0, 3);
    checkGather(d, 2000, 3072, 128, 0, 0);
  });
}

//===----------------------------------------------------------------------===//
// The emulator itself: tests/simt/FaultKernels.cpp's faults are reported
//===----------------------------------------------------------------------===//

/// Runs fault kernel `name` on 2 blocks of 128 threads under `schedule`;
/// returns launch()'s message and the 128 floats it wrote.
std::string runFault(const char *name, simt::Schedule schedule, std::vector<float> &out) {
  const simt::Kernel *kernel = simt::findKernel(name);
  if (!kernel)
    return std::string(name) + " is not registered";
  out.assign(128, -1.0f);
  float *p = out.data();
  void *params[] = {&p};
  return simt::launch(name, 2, 128, schedule, 7, kernel->bind(params));
}

TEST(SimtEmulator, ReportsADivergentShuffle) {
  std::vector<float> out;
  const std::string error = runFault("simt_fault_divergent_shuffle", simt::Schedule::InOrder, out);
  EXPECT_NE(error.find("divergence"), std::string::npos) << error;
  EXPECT_NE(error.find("returned"), std::string::npos) << error;
  EXPECT_NE(error.find("__shfl_xor_sync (tests/simt/FaultKernels.cpp"), std::string::npos)
      << error;
}

TEST(SimtEmulator, AMissingBarrierChangesTheResult) {
  std::vector<float> inOrder, reversed, right;
  EXPECT_EQ(runFault("simt_fault_missing_barrier", simt::Schedule::InOrder, inOrder), "");
  EXPECT_EQ(runFault("simt_fault_missing_barrier", simt::Schedule::Reversed, reversed), "");
  EXPECT_NE(std::memcmp(inOrder.data(), reversed.data(), 128 * sizeof(float)), 0);
  for (simt::Schedule schedule :
       {simt::Schedule::InOrder, simt::Schedule::Reversed, simt::Schedule::Shuffled}) {
    ASSERT_EQ(runFault("simt_fault_none", schedule, right), "");
    for (int i = 0; i < 128; ++i)
      EXPECT_EQ(right[size_t(i)], float((i + 32) % 128));
  }
}

TEST(SimtEmulator, ReturnedThreadsCountAsArrived) {
  std::vector<float> out;
  EXPECT_EQ(runFault("simt_fault_early_return", simt::Schedule::Shuffled, out), "");
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[100], -1.0f);
}

TEST(SimtEmulator, ReportsTwoBarriersTrapsAndMasks) {
  std::vector<float> out;
  std::string error = runFault("simt_fault_two_barriers", simt::Schedule::InOrder, out);
  EXPECT_NE(error.find("while others wait at"), std::string::npos) << error;
  error = runFault("simt_fault_trap", simt::Schedule::Reversed, out);
  EXPECT_EQ(error.find("simt_fault_trap (block 1 of 2): __trap() at tests/simt/FaultKernels.cpp"),
            0u)
      << error;
  EXPECT_NE(error.find("thread 5 "), std::string::npos) << error;
  error = runFault("simt_fault_partial_mask", simt::Schedule::InOrder, out);
  EXPECT_NE(error.find("mask 0x0000ffff"), std::string::npos) << error;
}

/// The wgmma model's rules (Simt.cpp): a right use gives D = A B under
/// every schedule; a missing fence, an operand or accumulator written
/// while the wgmma is in flight, a thread returning without its wait each
/// fail the launch, saying so.
TEST(SimtEmulator, ChecksWgmmaUse) {
  std::vector<float> out;
  for (simt::Schedule schedule :
       {simt::Schedule::InOrder, simt::Schedule::Reversed, simt::Schedule::Shuffled}) {
    ASSERT_EQ(runFault("simt_fault_wgmma_none", schedule, out), "");
    for (int i = 0; i < 128; ++i)
      EXPECT_EQ(out[size_t(i)], 16.0f);
  }
  const std::pair<const char *, const char *> faults[] = {
      {"simt_fault_wgmma_unfenced", "without a wgmma.fence"},
      {"simt_fault_wgmma_overwritten",
       "B element (0, 0) in shared memory changed between the wgmma's issue and its wait_group"},
      {"simt_fault_wgmma_accumulator",
       "'s accumulators changed between the wgmma's issue and its wait_group"},
      {"simt_fault_wgmma_not_waited", "returned with wgmmas it did not wait for"}};
  for (auto [kernel, message] : faults)
    for (simt::Schedule schedule : {simt::Schedule::InOrder, simt::Schedule::Reversed}) {
      const std::string error = runFault(kernel, schedule, out);
      EXPECT_NE(error.find(message), std::string::npos) << kernel << ": " << error;
    }
}

TEST(SimtEmulator, ChecksCpAsyncUse) {
  std::vector<float> out;
  for (simt::Schedule schedule :
       {simt::Schedule::InOrder, simt::Schedule::Reversed, simt::Schedule::Shuffled}) {
    ASSERT_EQ(runFault("simt_fault_cp_async_none", schedule, out), "");
    for (int i = 0; i < 128; ++i)
      EXPECT_EQ(out[size_t(i)], 2.0f);
    // Read before the copier's wait: the first thread on after the barrier
    // reads another's copy in flight (NaN), whatever the order.
    ASSERT_EQ(runFault("simt_fault_cp_async_read_early", schedule, out), "");
    EXPECT_TRUE(std::any_of(out.begin(), out.end(), [](float x) { return std::isnan(x); }));
  }
  const std::pair<const char *, const char *> faults[] = {
      {"simt_fault_cp_async_not_waited", "returned with cp.async copies it did not wait for"},
      {"simt_fault_cp_async_misaligned",
       "cp.async of 16 bytes from or to an address not aligned to 16"}};
  for (auto [kernel, message] : faults) {
    const std::string error = runFault(kernel, simt::Schedule::InOrder, out);
    EXPECT_NE(error.find(message), std::string::npos) << kernel << ": " << error;
  }
}

/// A kernel's block-size check traps: the launch fails, naming the kernel.
TEST(SimtEmulator, AWrongBlockSizeFailsTheLaunch) {
  const simt::Kernel *kernel = simt::findKernel("tfc_cuda_gather_rows_kernel");
  ASSERT_NE(kernel, nullptr);
  unsigned long long to = 0, rows = 0, order = 0, first = 0;
  long long rowBytes = 4, count = 0;
  void *params[] = {&to, &rows, &rowBytes, &order, &first, &count};
  const std::string error = simt::launch("tfc_cuda_gather_rows_kernel", 1, 128,
                                         simt::Schedule::InOrder, 0, kernel->bind(params));
  EXPECT_EQ(error.find("tfc_cuda_gather_rows_kernel (block 0 of 1): __trap() at "
                       "runtime/cuda/kernels/Warp.cuh"),
            0u)
      << error;
}

} // namespace
