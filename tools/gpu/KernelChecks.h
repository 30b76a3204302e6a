//===- KernelChecks.h - the CUDA kernels' checks against the CPU's --------===//
//
// What tfc-kernel-check (kernel_check.cpp) runs on a GPU and SimtKernelsTest
// (tests/unit) runs on the SIMT emulator (tests/simt): every kernel of
// runtime/cuda/kernels on random data against the CPU kernels
// (runtime/cpu/) or double-precision references, each run twice for the
// same bits. Each check is a template on the device it launches on, which
// provides kernel_check's Gpu interface:
//
//   using Ptr = ...;                        // a device address, an integer
//   Ptr alloc(size_t bytes);
//   template <typename T> Ptr upload(const std::vector<T> &);
//   template <typename T> std::vector<T> download(Ptr, size_t count);
//   void copyIn(Ptr, const void *host, size_t bytes);
//   void fill(Ptr, size_t bytes, unsigned char value);
//   void launch(const char *kernel, unsigned blocks, std::vector<void *> params);
//
// report() prints a PASS or FAIL line a check and counts them in passed and
// failed.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_GPU_KERNELCHECKS_H
#define TFC_TOOLS_GPU_KERNELCHECKS_H

#include "runtime/Philox.h"
#include "runtime/cpu/Attention.h"
#include "runtime/cpu/CrossEntropy.h"
#include "runtime/cpu/Dropout.h"
#include "runtime/cpu/LayerNorm.h"
#include "runtime/cuda/kernels/Kernels.h"
#include "tools/gpu/WgmmaProbe.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tfc::kernelcheck {

namespace k = tfc::rt::cuda::kernels;

inline int passed = 0, failed = 0;

inline void report(bool ok, const std::string &what, const std::string &detail = "") {
  (ok ? passed : failed)++;
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(), detail.empty() ? "" : ": ",
              detail.c_str());
  std::fflush(stdout);
}

inline std::mt19937 rng(2026);

inline std::vector<float> randomFloats(size_t n, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// The largest |a - b| over the largest |b| (at least `floor`).
inline double relativeError(const std::vector<float> &a, const std::vector<float> &b,
                            double floor = 1e-30) {
  double err = 0, mag = floor;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i]))
      return INFINITY;
    err = std::max(err, std::fabs(double(a[i]) - double(b[i])));
    mag = std::max(mag, std::fabs(double(b[i])));
  }
  return err / mag;
}

inline void compare(const std::string &what, const std::vector<float> &gpu,
                    const std::vector<float> &cpu, double tolerance, double floor = 1e-30) {
  const double err = relativeError(gpu, cpu, floor);
  char detail[96];
  std::snprintf(detail, sizeof detail, "relative error %.3g (limit %.0e)", err, tolerance);
  report(err <= tolerance, what, detail);
}

inline void sameBits(const std::string &what, const std::vector<float> &a,
                     const std::vector<float> &b, const std::string &than = "on a second run") {
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
  /// k and v broadcast over the inner heads (inner stride 0, one K and V
  /// an outer index, as multi-query attention reads them); dk and dv are
  /// still written a head each.
  bool broadcastKv = false;
  /// Rows packed (row stride d or dv, every row 16-byte aligned when d and
  /// dv are multiples of 4) instead of padded to odd strides: the tensor-
  /// core kernels' float4 staging path.
  bool packed = false;
};

/// A family of attention_wgmma.cu's kernels (tfc-kernel-check, on a GPU
/// with wgmma); label " wgmma" or " wgmma, ..."; queryRows: the queries a
/// forward or dq block takes (the wide ones' 128); dkvWide: a dkv of 128
/// keys a block that takes dq's statistics alone (scratch, no dS: the
/// runtime's way), launched there instead of dkv; forwardBf16: a forward
/// for bf16 q, k and v alone, checked beside forward on them; dqBf16 and
/// dkvBf16: a dq and a dkv for bf16 q, k, v and dO alone on the forward's
/// and on dq's statistics.
struct WgmmaKernels {
  const char *forward, *dq, *dkv, *label;
  long long queryRows = 64;
  const char *dkvWide = nullptr;
  const char *forwardBf16 = nullptr, *dqBf16 = nullptr, *dkvBf16 = nullptr;
};

template <typename Device>
void checkAttention(Device &gpu, const Shape &s, const std::vector<WgmmaKernels> &wgmma = {}) {
  using Ptr = typename Device::Ptr;
  typedef long long i64;
  const i64 heads = s.outer * s.inner;
  // Packed heads with padded rows (q and dout padded, v packed), or all
  // rows packed.
  i64 qRow = s.packed ? s.d : s.d + 3, kRow = s.packed ? s.d : s.d + 1, vRow = s.dv,
      dRow = s.packed ? s.dv : s.dv + 2;
  const i64 qHead = s.tq * qRow, kHead = s.tk * kRow, vHead = s.tk * vRow, dHead = s.tq * dRow;
  const i64 kvHeads = s.broadcastKv ? s.outer : heads;
  const auto q = randomFloats(size_t(heads * qHead)), kk = randomFloats(size_t(kvHeads * kHead)),
             v = randomFloats(size_t(kvHeads * vHead)), dout = randomFloats(size_t(heads * dHead));
  // Row 1 has every key masked (uniform weights, dS = 0), row 2 its first
  // 70 (a whole first key tile of the fp32 kernels: the online softmax
  // starts from -9e15 and moves on).
  std::vector<unsigned char> mask;
  if (s.masked) {
    mask.resize(size_t(s.tq * s.tk));
    for (i64 i = 0; i < s.tq; ++i)
      for (i64 j = 0; j < s.tk; ++j)
        mask[size_t(i * s.tk + j)] =
            i == 1 ? 0 : i == 2 ? j >= 70 : (j <= i + 3 || (i + j) % 5 == 0);
  }
  float scale = 1.0f / std::sqrt(float(s.d));
  i64 outer = s.outer, inner = s.inner, tq = s.tq, tk = s.tk, d = s.d, dv = s.dv;
  i64 qO = s.inner * qHead, qI = qHead, kO = s.inner * kHead, kI = kHead, vO = s.inner * vHead,
      vI = vHead, dO_ = s.inner * dHead, dI = dHead;
  if (s.broadcastKv) {
    kO = kHead;
    vO = vHead;
    kI = vI = 0;
  }
  i64 mO = 0, mI = 0, mR = s.tk;
  i64 oRow = s.dv, oHead = s.tq * oRow, oO = s.inner * oHead, oI = oHead;
  i64 dqO = s.inner * qHead, dqI = qHead, dkO = s.inner * kHead, dkI = kHead, dvO = s.inner * vHead,
      dvI = vHead;

  // The CPU kernels.
  std::vector<float> out(size_t(heads * oHead)), dq(q.size()), dk(size_t(heads * kHead)),
      dvv(size_t(heads * vHead));
  const intptr_t maskPtr = mask.empty() ? 0 : intptr_t(mask.data());
  tfc_attention_forward(outer, inner, tq, tk, d, dv, scale, intptr_t(q.data()), qO, qI, qRow,
                        intptr_t(kk.data()), kO, kI, kRow, intptr_t(v.data()), vO, vI, vRow,
                        maskPtr, mO, mI, mR, intptr_t(out.data()), oO, oI, oRow, 0, 0, 0);
  tfc_attention_backward(outer, inner, tq, tk, d, dv, scale, intptr_t(q.data()), qO, qI, qRow,
                         intptr_t(kk.data()), kO, kI, kRow, intptr_t(v.data()), vO, vI, vRow,
                         maskPtr, mO, mI, mR, intptr_t(dout.data()), dO_, dI, dRow,
                         intptr_t(dq.data()), dqO, dqI, qRow, intptr_t(dk.data()), dkO, dkI, kRow,
                         intptr_t(dvv.data()), dvO, dvI, vRow, 0, 0, 0, 0, 0, 0, 0, 0);

  Ptr gq = gpu.upload(q), gk = gpu.upload(kk), gv = gpu.upload(v), gd = gpu.upload(dout);
  Ptr gm = mask.empty() ? 0 : gpu.upload(mask);
  Ptr gout = gpu.alloc(out.size() * 4), gdq = gpu.alloc(dq.size() * 4),
              gdk = gpu.alloc(dk.size() * 4), gdv = gpu.alloc(dvv.size() * 4);
  // The backward's last parameter, scratch: 4 floats a query row, or 0.
  // The forward's stats (4 floats a query row, or 0), which the backward
  // takes with the forward's out (or 0).
  const size_t statsBytes = size_t(heads * tq) * 16;
  const Ptr gstats = gpu.alloc(statsBytes), gsaved = gpu.alloc(statsBytes);
  Ptr scratch = 0, saved = 0, savedOut = 0;
  // The backward's dS ([head][query][key], rows of tk rounded up to 8: bf16
  // for the tensor-core kernels, f32 for the others), or 0.
  i64 dsRow = (tk + 7) / 8 * 8;
  const size_t dsBytes = size_t(std::max<i64>(heads * tq * dsRow, 1)) * 4;
  const Ptr gds = gpu.alloc(dsBytes);
  Ptr dS = 0;
  // The forward's out16 and the backward's gradsBf16 (0: f32 outputs alone),
  // and room for out's bits and for dq, dk, dv as bits (2-byte elements).
  Ptr out16 = 0;
  i64 gradsBf16 = 0;
  // Both's inputsBf16 (0: q, k and v f32; Abi.h's attention::kQkvBf16).
  i64 inputsBf16 = 0;
  const Ptr gout16 = gpu.alloc(out.size() * 2), gdq16 = gpu.alloc(dq.size() * 2),
            gdk16 = gpu.alloc(dk.size() * 2), gdv16 = gpu.alloc(dvv.size() * 2);
  std::vector<void *> forward = {&outer, &inner, &tq,   &tk,    &d,     &dv,        &scale, &gq,
                                 &qO,    &qI,    &qRow, &gk,    &kO,    &kI,        &kRow,  &gv,
                                 &vO,    &vI,    &vRow, &gm,    &mO,    &mI,        &mR,    &gout,
                                 &oO,    &oI,    &oRow, &saved, &out16, &inputsBf16};
  std::vector<void *> backward = {
      &outer, &inner, &tq,   &tk,    &d,       &dv,  &scale, &gq,        &qO,        &qI,
      &qRow,  &gk,    &kO,   &kI,    &kRow,    &gv,  &vO,    &vI,        &vRow,      &gm,
      &mO,    &mI,    &mR,   &gd,    &dO_,     &dI,  &dRow,  &gdq,       &dqO,       &dqI,
      &qRow,  &gdk,   &dkO,  &dkI,   &kRow,    &gdv, &dvO,   &dvI,       &vRow,      &savedOut,
      &oO,    &oI,    &oRow, &saved, &scratch, &dS,  &dsRow, &gradsBf16, &inputsBf16};
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
    const char *dkvWide = nullptr; // WgmmaKernels's
    unsigned dkvWideBlocks = 0;
    const char *forwardBf16 = nullptr, *dqBf16 = nullptr, *dkvBf16 = nullptr;
  };
  // attention.cu's: one unit a block (KernelMath.h counts them).
  const unsigned forwardBlocks = unsigned(k::attentionForwardUnits(heads, tq, dv)),
                 dqBlocks = unsigned(k::attentionDqUnits(heads, tq, d)),
                 dkvBlocks = unsigned(k::attentionDkvUnits(heads, tk, d, dv));
  const unsigned tcQueryBlocks = unsigned(heads * ((tq + 63) / 64));
  std::vector<Kernels> families = {{"tfc_cuda_attention_forward_kernel",
                                    "tfc_cuda_attention_backward_dq_kernel",
                                    "tfc_cuda_attention_backward_dkv_kernel", "", forwardBlocks,
                                    dqBlocks, dkvBlocks, 1e-5, 1e-4}};
  // The tensor-core kernels where they take the heads: bf16 products, so
  // within 2e-2 of the largest magnitude (CudaAttentionTcMathTest models
  // their tiles and roundings on the host: up to 9e-3 there).
  // Their lean forward and dq next: the same bits as the default ones in
  // every run (checked against the family before, kept in `previous`).
  if (k::attentionTensorCoreShape(d, dv)) {
    families.push_back({"tfc_cuda_attention_tc_forward_kernel",
                        "tfc_cuda_attention_tc_backward_dq_kernel",
                        "tfc_cuda_attention_tc_backward_dkv_kernel", " tensor cores",
                        tcQueryBlocks, tcQueryBlocks, unsigned(heads * ((tk + 63) / 64)), 2e-2,
                        2e-2});
    families.push_back({"tfc_cuda_attention_tc_forward_lean_kernel",
                        "tfc_cuda_attention_tc_backward_dq_lean_kernel",
                        "tfc_cuda_attention_tc_backward_dkv_kernel", " tensor cores, lean",
                        tcQueryBlocks, tcQueryBlocks, unsigned(heads * ((tk + 63) / 64)), 2e-2,
                        2e-2});
  }
  // On a GPU with wgmma (tfc-kernel-check): attention_wgmma.cu's kernels
  // (heads of 64), whose dq and dkv take wgmma where they have rows'
  // statistics and no dS, mma.sync (attention_tc.cu's loops) otherwise.
  // wgmma may round S otherwise than mma.sync (its own order of adding the
  // products), so its row maxima are not held to dq's pass 1's bits, nor
  // dk and dv with the forward's statistics to those with dS stored (an
  // mma.sync loop); everything else is.
  for (const WgmmaKernels &w : wgmma)
    if (d == 64 && dv == 64)
      families.push_back({w.forward, w.dq, w.dkv, w.label,
                          unsigned(heads * ((tq + w.queryRows - 1) / w.queryRows)),
                          unsigned(heads * ((tq + w.queryRows - 1) / w.queryRows)),
                          unsigned(heads * ((tk + 63) / 64)), 2e-2, 2e-2, w.dkvWide,
                          unsigned(heads * ((tk + 127) / 128)), w.forwardBf16, w.dqBf16,
                          w.dkvBf16});
  std::vector<float> previous[8][4];
  for (const Kernels &f : families) {
    // Runs 0 and 1 with scratch (NaN first: a row dq did not store would
    // show), run 2 without; runs 3 and 4 with the statistics the forward
    // saved (NaN first too) and its out, no scratch; runs 5 and 6 so too,
    // dkv first storing dS (NaN first) and dq reading it; run 7 with the
    // forward's statistics for dq, which stores its rows' and D in scratch
    // (NaN first), and dkv reading those instead (what the runtime does).
    const bool tc = f.label[0] != '\0';
    const int count = 8;
    std::vector<float> runs[8][4], scratchRows, savedRows;
    for (int run = 0; run < count; ++run) {
      scratch = run < 2 || run == 7 ? gstats : 0;
      saved = run >= 3 ? gsaved : 0;
      savedOut = run >= 3 ? gout : 0;
      dS = run == 5 || run == 6 ? gds : 0;
      gpu.fill(gds, dsBytes, 0xff);
      gpu.fill(gstats, statsBytes, 0xff);
      gpu.fill(gsaved, statsBytes, 0xff);
      gpu.fill(gout, out.size() * 4, 0xff);
      gpu.fill(gdq, dq.size() * 4, 0xff);
      gpu.fill(gdk, dk.size() * 4, 0xff);
      gpu.fill(gdv, dvv.size() * 4, 0xff);
      gpu.launch(f.forward, f.forwardBlocks, forward);
      if (dS)
        gpu.launch(f.dkv, f.dkvBlocks, backward);
      gpu.launch(f.dq, f.dqBlocks, backward);
      if (run == 7)
        saved = 0; // dkv: the statistics dq stored
      if (!dS) {
        const bool wide = f.dkvWide && scratch && !saved; // on dq's statistics
        gpu.launch(wide ? f.dkvWide : f.dkv, wide ? f.dkvWideBlocks : f.dkvBlocks, backward);
      }
      runs[run][0] = gpu.template download<float>(gout, out.size());
      runs[run][1] = gpu.template download<float>(gdq, dq.size());
      runs[run][2] = gpu.template download<float>(gdk, dk.size());
      runs[run][3] = gpu.template download<float>(gdv, dvv.size());
      if (run == 0)
        scratchRows = gpu.template download<float>(gstats, size_t(heads * tq) * 4);
      if (run == 3)
        savedRows = gpu.template download<float>(gsaved, size_t(heads * tq) * 4);
    }
    const std::string n = std::string("attention ") + s.name + f.label;
    compare(n + " forward", rows(runs[0][0], oHead, tq, oRow, dv), rows(out, oHead, tq, oRow, dv),
            f.forwardLimit);
    // With the forward's statistics D is dO . out, rounded otherwise than
    // sum P dP: where dq and dk are 0 exactly (one key: dS = dP - D = 0),
    // they are that rounding instead. So that run's errors are relative to
    // the largest of the three gradients (the CPU's), not each one's own.
    double gradients = 1e-30;
    for (const std::vector<float> *g : {&dq, &dk, &dvv})
      for (float x : *g)
        gradients = std::max(gradients, double(std::fabs(x)));
    for (int run : {0, 2, 3, 5}) {
      if (run >= count)
        continue;
      const std::string b = n + (run == 0   ? " (stored stats)"
                                 : run == 2 ? " (recomputed stats)"
                                 : run == 3 ? " (the forward's stats)"
                                            : " (dS stored by dkv)");
      const double floor = run >= 3 ? gradients : 1e-30;
      compare(b + " dq", rows(runs[run][1], qHead, tq, qRow, d), rows(dq, qHead, tq, qRow, d),
              f.backwardLimit, floor);
      compare(b + " dk", rows(runs[run][2], kHead, tk, kRow, d), rows(dk, kHead, tk, kRow, d),
              f.backwardLimit, floor);
      compare(b + " dv", rows(runs[run][3], vHead, tk, vRow, dv), rows(dvv, vHead, tk, vRow, dv),
              f.backwardLimit, floor);
    }
    for (int t = 0; t < 4; ++t)
      sameBits(n + " output " + std::to_string(t), runs[0][t], runs[1][t]);
    // The same rowStats on the same inputs, stored or recomputed: the same
    // bits (the padding included: NaN in both).
    for (int t = 1; t < 4; ++t)
      sameBits(n + " backward output " + std::to_string(t) + " with stored stats", runs[0][t],
               runs[2][t], "as with recomputed ones");
    // The forward's statistics: its out unchanged by storing them, the
    // same backward twice, and each row's maximum, 1/l and scale the same
    // bits as dq's pass 1 stores (only D, the third, is dq's own).
    sameBits(n + " forward output with saved stats", runs[3][0], runs[0][0], "as without");
    for (int t = 1; t < 4; ++t)
      sameBits(n + " backward output " + std::to_string(t) + " with the forward's stats",
               runs[3][t], runs[4][t]);
    // dS stored by dkv: the same bits twice, dk and dv as without it (dkv
    // only stores more), every dq element written; in fp32 dq too (dkv's
    // scores are dq's, the same operations in the same order; the
    // tensor cores' S^T = K Q^T may round otherwise on a GPU).
    for (int t = 1; t < 4; ++t)
      sameBits(n + " backward output " + std::to_string(t) + " with dS stored", runs[5][t],
               runs[6][t]);
    for (int t = tc ? 2 : 1; t < 4 && !std::strstr(f.label, "wgmma"); ++t)
      sameBits(n + " backward output " + std::to_string(t) + " with dS stored", runs[5][t],
               runs[3][t], "as without");
    // dkv on the statistics and D dq stored: the same bits as on the
    // forward's, computing D itself (the same rows, lanes, order).
    for (int t = 1; t < 4; ++t)
      sameBits(n + " backward output " + std::to_string(t) + " with dq's D", runs[7][t], runs[3][t],
               "as with dkv's own");
    if (tq > 0 && !std::strstr(f.label, "wgmma")) {
      std::vector<float> a, b;
      for (size_t r = 0; r < size_t(heads * tq); ++r)
        for (size_t field : {0, 1, 3}) {
          a.push_back(savedRows[4 * r + field]);
          b.push_back(scratchRows[4 * r + field]);
        }
      sameBits(n + " the forward's row maxima, 1/l and scales", a, b, "as dq's pass 1");
    }
    // The bf16 outputs (tf-bf16-gemm-operands' copies), the runtime's way
    // as run 7: out16 the bf16Bits of out beside it, then dq, dk and dv as
    // bits alone, then dk and dv alone so (dq f32): each bit pattern that of
    // run 7's f32 output (the padding too: bf16Bits of the NaN fill is the
    // 0xffff fill), the f32 outputs run 7's bits.
    auto bitsOf = [](const std::vector<float> &x) {
      std::vector<uint16_t> bits;
      for (float v : x)
        bits.push_back(k::bf16Bits(v));
      return bits;
    };
    // The pipelined wgmma dkvs (one warpgroup, and wide) store f32
    // gradients alone: the runtime takes the tensor-core dkv for bf16 ones,
    // and so do these runs, the f32 outputs they are held to those of the
    // same kernels (which 0).
    const char *dkv =
        f.dkvWide || std::strcmp(f.dkv, "tfc_cuda_attention_wgmma_backward_dkv_kernel") == 0
            ? "tfc_cuda_attention_tc_backward_dkv_kernel"
            : f.dkv;
    // The runtime's way (run 7's): the forward saving its statistics, dq
    // storing its rows' and D in scratch, dkv reading those.
    auto runtimeWay = [&] {
      scratch = gstats;
      saved = gsaved;
      savedOut = gout;
      dS = 0;
      gpu.launch(f.forward, f.forwardBlocks, forward);
      gpu.launch(f.dq, f.dqBlocks, backward);
      saved = 0; // dkv: the statistics dq stored
      gpu.launch(dkv, f.dkvBlocks, backward);
    };
    std::vector<float> reference[4], referenceStats;
    for (const i64 which : {i64(0), i64(7), i64(6)}) {
      out16 = which ? gout16 : 0;
      gradsBf16 = which;
      const Ptr f32[3] = {gdq, gdk, gdv}, b16[3] = {gdq16, gdk16, gdv16};
      Ptr *outputs[3] = {&gdq, &gdk, &gdv};
      for (int t = 0; t < 3; ++t)
        if (which & (i64(1) << t))
          *outputs[t] = b16[t];
      gpu.fill(gout, out.size() * 4, 0xff);
      gpu.fill(gout16, out.size() * 2, 0xff);
      gpu.fill(f32[0], dq.size() * 4, 0xff);
      gpu.fill(f32[1], dk.size() * 4, 0xff);
      gpu.fill(f32[2], dvv.size() * 4, 0xff);
      gpu.fill(gdq16, dq.size() * 2, 0xff);
      gpu.fill(gdk16, dk.size() * 2, 0xff);
      gpu.fill(gdv16, dvv.size() * 2, 0xff);
      runtimeWay();
      const size_t sizes[3] = {dq.size(), dk.size(), dvv.size()};
      const char *names[3] = {"dq", "dk", "dv"};
      if (which == 0) {
        reference[0] = gpu.template download<float>(gout, out.size());
        referenceStats = gpu.template download<float>(gsaved, size_t(heads * tq) * 4);
        for (int t = 0; t < 3; ++t)
          reference[t + 1] = gpu.template download<float>(f32[t], sizes[t]);
        // Run 7 again: its bits (dk and dv where the same dkv ran).
        for (int t = 0; t < 4; ++t)
          if (t < 2 || (dkv == f.dkv && !f.dkvWide))
            sameBits(n + " output " + std::to_string(t) + " before out16 and gradsBf16",
                     reference[t], runs[7][t], "as run 7's");
        continue;
      }
      const std::string b = n + (which == 7 ? " bf16 dq, dk, dv" : " bf16 dk, dv");
      if (which == 7) {
        sameBits(b + ": f32 out", gpu.template download<float>(gout, out.size()), reference[0],
                 "as without out16");
        report(gpu.template download<uint16_t>(gout16, out.size()) == bitsOf(reference[0]),
               b + ": out16 is bf16Bits of out");
      }
      for (int t = 0; t < 3; ++t) {
        if (which & (i64(1) << t))
          report(gpu.template download<uint16_t>(b16[t], sizes[t]) == bitsOf(reference[t + 1]),
                 b + ": " + names[t] + " is bf16Bits of the f32 " + names[t]);
        else
          sameBits(b + ": f32 " + names[t], gpu.template download<float>(f32[t], sizes[t]),
                   reference[t + 1], "as without gradsBf16");
        *outputs[t] = f32[t];
      }
      out16 = 0;
      gradsBf16 = 0;
    }
    // q, k and v as bf16 bits (inputsBf16: a QKV projection stored in
    // bf16), the runtime's way as above: the tensor-core kernels stage
    // the bits as they are, which are the bits they round f32 inputs to, so
    // every output is the f32 inputs' (reference) bit for bit. Where the
    // rows are 8-byte aligned (the runtime refuses others).
    const bool bf16Rows = qO % 4 == 0 && qI % 4 == 0 && qRow % 4 == 0 && kO % 4 == 0 &&
                          kI % 4 == 0 && kRow % 4 == 0 && vO % 4 == 0 && vI % 4 == 0 &&
                          vRow % 4 == 0;
    // The wgmma forward copies bf16 tiles by cp.async (16 bytes a copy where
    // every head's rows are 16-byte aligned, else 8): its out and statistics
    // are those of the f32 inputs, bit for bit, both ways (the bits from
    // their buffers' start, and 4 elements in: 8-byte aligned alone). Its
    // dq and dkv take f32 inputs alone (the runtime takes the tensor-core
    // ones for bf16, whose bits are checked above).
    if (std::strstr(f.label, "wgmma") && bf16Rows) {
      const Ptr f32q = gq, f32k = gk, f32v = gv;
      // The bits after 4 elements of padding: rows 8 bytes from their
      // buffers' (aligned) start.
      auto padded = [&](const std::vector<float> &x) {
        std::vector<uint16_t> bits(4, 0xffff);
        for (uint16_t b : bitsOf(x))
          bits.push_back(b);
        return bits;
      };
      const Ptr fromStart[3] = {gpu.upload(bitsOf(q)), gpu.upload(bitsOf(kk)),
                                gpu.upload(bitsOf(v))},
                eightIn[3] = {gpu.upload(padded(q)) + 8, gpu.upload(padded(kk)) + 8,
                              gpu.upload(padded(v)) + 8};
      inputsBf16 = k::kAttentionQkvBf16;
      scratch = 0;
      saved = gsaved;
      for (const char *kernel : {f.forward, f.forwardBf16})
        for (const Ptr *inputs : {fromStart, eightIn}) {
          if (!kernel)
            continue;
          gq = inputs[0], gk = inputs[1], gv = inputs[2];
          gpu.fill(gout, out.size() * 4, 0xff);
          gpu.fill(gsaved, statsBytes, 0xff);
          gpu.launch(kernel, f.forwardBlocks, forward);
          const std::string b = n + (kernel == f.forwardBf16 ? " (its bf16 forward)" : "") +
                                " bf16 q, k, v" +
                                (inputs == eightIn ? " 8 bytes in" : " from their start");
          sameBits(b + ": output 0", gpu.template download<float>(gout, out.size()), reference[0],
                   "as of the f32 ones");
          sameBits(b + ": the forward's statistics",
                   gpu.template download<float>(gsaved, size_t(heads * tq) * 4), referenceStats,
                   "as of the f32 ones");
        }
      // Its bf16 dq (q, k, v and dO bits, the forward's statistics, its
      // rows' statistics and D into scratch): dq and scratch those of its
      // f32 dq on the f32 values the bits are (dO rounded), bit for bit, the
      // bits from their start and 8 bytes in.
      if (f.dqBf16 && dO_ % 4 == 0 && dI % 4 == 0 && dRow % 4 == 0) {
        std::vector<float> roundedDout(dout.size());
        for (size_t i = 0; i < dout.size(); ++i)
          roundedDout[i] = k::roundBf16(dout[i]);
        const Ptr f32d = gd, rounded = gpu.upload(roundedDout);
        const size_t rowFloats = size_t(heads * tq) * 4;
        auto dqWay = [&](const char *dqKernel, i64 forwardFlags, i64 dqFlags) {
          saved = gsaved;
          savedOut = gout;
          scratch = gstats;
          dS = 0;
          inputsBf16 = forwardFlags;
          gpu.launch(forwardFlags ? f.forwardBf16 : f.forward, f.forwardBlocks, forward);
          inputsBf16 = dqFlags;
          gpu.fill(gdq, dq.size() * 4, 0xff);
          gpu.fill(gstats, statsBytes, 0xff);
          gpu.launch(dqKernel, f.dqBlocks, backward);
        };
        // Then dkv on dq's statistics (the f32 family's, or its bf16 dkv),
        // dk and dv as f32 or (grads) as bf16 bits.
        auto dkvWay = [&](const char *dkvKernel, i64 grads) {
          saved = 0;
          gradsBf16 = grads;
          const Ptr dk32 = gdk, dv32 = gdv;
          if (grads)
            gdk = gdk16, gdv = gdv16;
          gpu.fill(gdk, dk.size() * (grads ? 2 : 4), 0xff);
          gpu.fill(gdv, dvv.size() * (grads ? 2 : 4), 0xff);
          gpu.launch(dkvKernel, f.dkvBlocks, backward);
          gdk = dk32, gdv = dv32;
          gradsBf16 = 0;
        };
        gq = f32q, gk = f32k, gv = f32v, gd = rounded;
        dqWay(f.dq, 0, 0);
        const std::vector<float> refDq = gpu.template download<float>(gdq, dq.size()),
                                 refRows = gpu.template download<float>(gstats, rowFloats);
        dkvWay(f.dkv, 0);
        const std::vector<float> refDk = gpu.template download<float>(gdk, dk.size()),
                                 refDv = gpu.template download<float>(gdv, dvv.size());
        const Ptr dBits[2] = {gpu.upload(bitsOf(dout)), gpu.upload(padded(dout)) + 8};
        for (int way = 0; way < 2; ++way) {
          const Ptr *inputs = way == 0 ? fromStart : eightIn;
          gq = inputs[0], gk = inputs[1], gv = inputs[2], gd = dBits[way];
          dqWay(f.dqBf16, k::kAttentionQkvBf16, k::kAttentionQkvBf16 | k::kAttentionDoBf16);
          const std::string b = n + " (its bf16 dq) bf16 q, k, v, dO" +
                                (way == 1 ? " 8 bytes in" : " from their start");
          sameBits(b + ": dq", gpu.template download<float>(gdq, dq.size()), refDq,
                   "as of the f32 values they are");
          sameBits(b + ": its rows' statistics and D",
                   gpu.template download<float>(gstats, rowFloats), refRows,
                   "as of the f32 values they are");
          if (!f.dkvBf16)
            continue;
          const std::string c = n + " (its bf16 dkv) bf16 q, k, v, dO" +
                                (way == 1 ? " 8 bytes in" : " from their start");
          dkvWay(f.dkvBf16, k::kAttentionDkBf16 | k::kAttentionDvBf16); // its gradients' way
          report(gpu.template download<uint16_t>(gdk16, dk.size()) == bitsOf(refDk),
                 c + ": bf16 dk is bf16Bits of the f32 dk");
          report(gpu.template download<uint16_t>(gdv16, dvv.size()) == bitsOf(refDv),
                 c + ": bf16 dv is bf16Bits of the f32 dv");
        }
        gd = f32d;
        scratch = saved = savedOut = 0;
      }
      gq = f32q;
      gk = f32k;
      gv = f32v;
      inputsBf16 = 0;
    }
    if (tc && !std::strstr(f.label, "wgmma") && bf16Rows) {
      const Ptr f32q = gq, f32k = gk, f32v = gv;
      gq = gpu.upload(bitsOf(q));
      gk = gpu.upload(bitsOf(kk));
      gv = gpu.upload(bitsOf(v));
      inputsBf16 = k::kAttentionQkvBf16;
      gpu.fill(gout, out.size() * 4, 0xff);
      gpu.fill(gdq, dq.size() * 4, 0xff);
      gpu.fill(gdk, dk.size() * 4, 0xff);
      gpu.fill(gdv, dvv.size() * 4, 0xff);
      runtimeWay();
      const Ptr got[4] = {gout, gdq, gdk, gdv};
      const size_t sizes[4] = {out.size(), dq.size(), dk.size(), dvv.size()};
      for (int t = 0; t < 4; ++t)
        sameBits(n + " output " + std::to_string(t) + " of bf16 q, k, v",
                 gpu.template download<float>(got[t], sizes[t]), reference[t],
                 "as of the f32 ones");
      // And dO as bf16 bits too (kAttentionDoBf16: an out projection's
      // input gradient stored in bf16), where its rows are 8-byte aligned:
      // dq, dk and dv are those of the f32 dO those bits are, bit for bit
      // (its staging rounds to them, dO . out reads them widened).
      if (dO_ % 4 == 0 && dI % 4 == 0 && dRow % 4 == 0) {
        const Ptr f32d = gd;
        std::vector<float> roundedDout(dout.size());
        for (size_t i = 0; i < dout.size(); ++i)
          roundedDout[i] = k::roundBf16(dout[i]);
        std::vector<float> ofRounded[3];
        for (const i64 flags : {k::kAttentionQkvBf16, k::kAttentionQkvBf16 | k::kAttentionDoBf16}) {
          const bool bits = flags & k::kAttentionDoBf16;
          gd = bits ? gpu.upload(bitsOf(dout)) : gpu.upload(roundedDout);
          inputsBf16 = flags;
          gpu.fill(gdq, dq.size() * 4, 0xff);
          gpu.fill(gdk, dk.size() * 4, 0xff);
          gpu.fill(gdv, dvv.size() * 4, 0xff);
          runtimeWay();
          for (int t = 0; t < 3; ++t) {
            std::vector<float> grad = gpu.template download<float>(got[t + 1], sizes[t + 1]);
            if (!bits)
              ofRounded[t] = std::move(grad);
            else
              sameBits(n + " output " + std::to_string(t + 1) + " of bf16 q, k, v, dO", grad,
                       ofRounded[t], "as of the f32 dO they are");
          }
        }
        gd = f32d;
      }
      gq = f32q;
      gk = f32k;
      gv = f32v;
      inputsBf16 = 0;
    }
    if (std::strstr(f.label, "lean"))
      for (int run = 0; run < count; ++run)
        for (int t = 0; t < 4; ++t)
          sameBits(n + " output " + std::to_string(t) + " of run " + std::to_string(run),
                   runs[run][t], previous[run][t], "as the default kernels'");
    for (int run = 0; run < count; ++run)
      for (int t = 0; t < 4; ++t)
        previous[run][t] = std::move(runs[run][t]);
  }
}

//===----------------------------------------------------------------------===//
// Layer norm, cross-entropy, dropout
//===----------------------------------------------------------------------===//

template <typename Device>
void checkLayerNorm(Device &gpu, long long rows, long long d, long long blockRows) {
  using Ptr = typename Device::Ptr;
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
                          intptr_t(g.data()), 0, intptr_t(dx.data()), intptr_t(dgamma.data()),
                          intptr_t(dbeta.data()), intptr_t(scratch.data()), 0, 0, 0, 0, 0, 0, 0,
                          1.0f, 0);
  Ptr gx = gpu.upload(x), gg = gpu.upload(gamma), gb = gpu.upload(beta), gd = gpu.upload(g);
  Ptr gy = gpu.alloc(y.size() * 4), gdx = gpu.alloc(dx.size() * 4), gdg = gpu.alloc(size_t(d) * 4),
      gdb = gpu.alloc(size_t(d) * 4), gs = gpu.alloc(scratch.size() * 4), counter = gpu.alloc(4);
  gpu.fill(counter, 4, 0);
  long long noRelu = 0, noDropoutBits = 0, noSampleSize = 0, noKey = 0, noThreshold = 0,
            noGateBits = 0;
  Ptr noGate = 0, noBits = 0, noDropout = 0, noSeed = 0, noOffset = 0, noResidual = 0, noPre = 0;
  float noKeep = 1.0f;
  // Runs 0 and 1 in one launch (the last block adds the partials; run 1
  // takes the counter as run 0 left it), runs 2 and 3 with counter 0 and
  // the reduce kernel. The outputs NaN first: one not written would show.
  std::vector<float> runs[4][4], partials[2];
  for (int run = 0; run < 4; ++run) {
    const bool oneLaunch = run < 2;
    Ptr runCounter = oneLaunch ? counter : 0;
    gpu.fill(gdx, dx.size() * 4, 0xff);
    gpu.fill(gdg, size_t(d) * 4, 0xff);
    gpu.fill(gdb, size_t(d) * 4, 0xff);
    gpu.launch("tfc_cuda_layer_norm_forward_kernel", unsigned(std::max(1LL, (rows + 7) / 8)),
               {&rows, &d, &eps, &gx, &gg, &gb, &gy, &noRelu, &noBits, &noResidual, &noPre, &noSeed,
                &noOffset, &noSampleSize, &noKey, &noThreshold, &noKeep});
    gpu.launch(
        "tfc_cuda_layer_norm_backward_kernel", unsigned(std::max(1LL, blocks)),
        {&rows,      &d,        &blockRows,    &eps,   &gx,          &gg,        &gd,
         &noGate,    &gdx,      &gdg,          &gdb,   &gs,          &noDropout, &noDropoutBits,
         &noSeed,    &noOffset, &noSampleSize, &noKey, &noThreshold, &noKeep,    &noGateBits,
         &runCounter});
    if (!oneLaunch)
      gpu.launch("tfc_cuda_layer_norm_backward_reduce_kernel",
                 unsigned((d + k::kLayerNormReduceColumns - 1) / k::kLayerNormReduceColumns),
                 {&rows, &d, &blockRows, &gs, &gdg, &gdb});
    runs[run][0] = gpu.template download<float>(gy, y.size());
    runs[run][1] = gpu.template download<float>(gdx, dx.size());
    runs[run][2] = gpu.template download<float>(gdg, size_t(d));
    runs[run][3] = gpu.template download<float>(gdb, size_t(d));
    if (oneLaunch) {
      partials[run] = gpu.template download<float>(gs, scratch.size());
      const unsigned left = gpu.template download<unsigned>(counter, 1)[0];
      report(left == 0,
             "layer_norm backward leaves its counter 0 (run " + std::to_string(run) + ")",
             left ? "it is " + std::to_string(left) : "");
    }
  }
  const std::string n = "layer_norm " + std::to_string(rows) + "x" + std::to_string(d) + " (" +
                        std::to_string(blocks) + " row blocks)";
  compare(n + " forward", runs[0][0], y, 1e-5);
  for (int run : {0, 2}) {
    const std::string b = n + (run == 0 ? " one launch" : " two launches");
    compare(b + " dx", runs[run][1], dx, 1e-5);
    compare(b + " dgamma", runs[run][2], dgamma, 1e-5);
    compare(b + " dbeta", runs[run][3], dbeta, 1e-5);
  }
  // dgamma and dbeta are the row blocks' partials added in segments
  // (KernelMath.h): each segment's in block order from 0, then the
  // segments' sums in order from 0, empty ones skipped: the same bits as
  // that sum on the host.
  std::vector<float> sums[2] = {std::vector<float>(size_t(d)), std::vector<float>(size_t(d))};
  const long long per = k::layerNormSegmentBlocks(blocks);
  for (long long j = 0; j < d; ++j)
    for (int t = 0; t < 2; ++t) {
      float sum = 0.0f;
      for (long long first = 0; first < blocks; first += per) {
        float segment = 0.0f;
        for (long long block = first; block < std::min(first + per, blocks); ++block)
          segment += partials[0][size_t((t * blocks + block) * d + j)];
        sum += segment;
      }
      sums[t][size_t(j)] = sum;
    }
  sameBits(n + " dgamma", runs[0][2], sums[0], "as the partials added in segments");
  sameBits(n + " dbeta", runs[0][3], sums[1], "as the partials added in segments");
  for (int t = 0; t < 4; ++t)
    sameBits(n + " output " + std::to_string(t), runs[0][t], runs[1][t]);
  for (int t = 1; t < 4; ++t) {
    sameBits(n + " output " + std::to_string(t) + " in one launch", runs[0][t], runs[2][t],
             "as in two");
    sameBits(n + " output " + std::to_string(t) + " in two launches", runs[2][t], runs[3][t]);
  }
  sameBits(n + " partials", partials[0], partials[1]);

  // relu(layer_norm(x)) in one pass: the plain forward's relu, bit for bit,
  // and its bf16 bits beside it (y16, a GEMM's bf16 operand): bf16Bits of
  // each value. Then relu's gradient as the backward's gate (that output):
  // the same bits as the backward of the adjoint gated on the host.
  long long relu = 1;
  Ptr gy16 = gpu.alloc(std::max<size_t>(2, y.size() * 2));
  gpu.fill(gy, y.size() * 4, 0xff);
  gpu.fill(gy16, std::max<size_t>(2, y.size() * 2), 0xff);
  gpu.launch("tfc_cuda_layer_norm_forward_kernel", unsigned(std::max(1LL, (rows + 7) / 8)),
             {&rows, &d, &eps, &gx, &gg, &gb, &gy, &relu, &gy16, &noResidual, &noPre, &noSeed,
              &noOffset, &noSampleSize, &noKey, &noThreshold, &noKeep});
  const std::vector<float> gate = gpu.template download<float>(gy, y.size());
  const std::vector<uint16_t> bits = gpu.template download<uint16_t>(gy16, y.size());
  std::vector<float> relus(y.size()), gated(g.size());
  size_t wrongBits = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    relus[i] = k::reluOf(runs[0][0][i]);
    gated[i] = k::gatedGrad(g[i], gate[i]);
    wrongBits += bits[i] != k::bf16Bits(gate[i]);
  }
  sameBits(n + " forward with relu", gate, relus, "as the forward's relu");
  report(wrongBits == 0, n + " forward's bf16 copy is bf16Bits of each value",
         wrongBits ? std::to_string(wrongBits) + " differ" : "");
  Ptr gGated = gpu.upload(gated);
  std::vector<float> gateRuns[2][3];
  for (int run = 0; run < 2; ++run) {
    Ptr runCounter = counter, runGate = run == 0 ? gy : 0, runGrad = run == 0 ? gd : gGated;
    gpu.fill(gdx, dx.size() * 4, 0xff);
    gpu.launch(
        "tfc_cuda_layer_norm_backward_kernel", unsigned(std::max(1LL, blocks)),
        {&rows,      &d,        &blockRows,    &eps,   &gx,          &gg,        &runGrad,
         &runGate,   &gdx,      &gdg,          &gdb,   &gs,          &noDropout, &noDropoutBits,
         &noSeed,    &noOffset, &noSampleSize, &noKey, &noThreshold, &noKeep,    &noGateBits,
         &runCounter});
    gateRuns[run][0] = gpu.template download<float>(gdx, dx.size());
    gateRuns[run][1] = gpu.template download<float>(gdg, size_t(d));
    gateRuns[run][2] = gpu.template download<float>(gdb, size_t(d));
  }
  for (int t = 0; t < 3; ++t)
    sameBits(n + " gated output " + std::to_string(t + 1), gateRuns[0][t], gateRuns[1][t],
             "as the adjoint gated first");
  tfc_layer_norm_backward(rows, d, blockRows, eps, intptr_t(x.data()), intptr_t(gamma.data()),
                          intptr_t(g.data()), intptr_t(gate.data()), intptr_t(dx.data()),
                          intptr_t(dgamma.data()), intptr_t(dbeta.data()), intptr_t(scratch.data()),
                          0, 0, 0, 0, 0, 0, 0, 1.0f, 0);
  compare(n + " gated dx", gateRuns[0][0], dx, 1e-5);
  compare(n + " gated dgamma", gateRuns[0][1], dgamma, 1e-5);

  // The gate as the forward's bf16 bits (runtime/Abi.h's GateBits, y not
  // stored: tf-bf16-gemm-operands): the forward without y stores the same
  // bits alone, and the backward reading them as its gate gives the same
  // bits as the adjoint gated on the host by their widening; the CPU twin
  // within rounding.
  {
    Ptr noY = 0, gAlone = gpu.alloc(std::max<size_t>(2, y.size() * 2));
    gpu.fill(gAlone, std::max<size_t>(2, y.size() * 2), 0xff);
    gpu.launch("tfc_cuda_layer_norm_forward_kernel", unsigned(std::max(1LL, (rows + 7) / 8)),
               {&rows, &d, &eps, &gx, &gg, &gb, &noY, &relu, &gAlone, &noResidual, &noPre, &noSeed,
                &noOffset, &noSampleSize, &noKey, &noThreshold, &noKeep});
    const std::vector<uint16_t> alone = gpu.template download<uint16_t>(gAlone, y.size());
    report(alone == bits, n + " forward without y stores the same bf16 bits alone");
    std::vector<float> gatedByBits(g.size());
    for (size_t i = 0; i < g.size(); ++i)
      gatedByBits[i] = k::gatedGradBits(g[i], bits[i]);
    Ptr gGatedBits = gpu.upload(gatedByBits);
    std::vector<float> bitsRuns[2][3];
    for (int run = 0; run < 2; ++run) {
      long long gateBits = run == 0;
      Ptr runCounter = counter, runGate = run == 0 ? gAlone : 0,
          runGrad = run == 0 ? gd : gGatedBits;
      gpu.fill(gdx, dx.size() * 4, 0xff);
      gpu.launch(
          "tfc_cuda_layer_norm_backward_kernel", unsigned(std::max(1LL, blocks)),
          {&rows,      &d,        &blockRows,    &eps,   &gx,          &gg,        &runGrad,
           &runGate,   &gdx,      &gdg,          &gdb,   &gs,          &noDropout, &noDropoutBits,
           &noSeed,    &noOffset, &noSampleSize, &noKey, &noThreshold, &noKeep,    &gateBits,
           &runCounter});
      bitsRuns[run][0] = gpu.template download<float>(gdx, dx.size());
      bitsRuns[run][1] = gpu.template download<float>(gdg, size_t(d));
      bitsRuns[run][2] = gpu.template download<float>(gdb, size_t(d));
    }
    for (int t = 0; t < 3; ++t)
      sameBits(n + " output " + std::to_string(t + 1) + " gated by bf16 bits", bitsRuns[0][t],
               bitsRuns[1][t], "as the adjoint gated first by their widening");
    std::vector<float> twinDx(dx.size()), twinDgamma(static_cast<size_t>(d)),
        twinDbeta(static_cast<size_t>(d));
    tfc_layer_norm_backward(rows, d, blockRows, eps, intptr_t(x.data()), intptr_t(gamma.data()),
                            intptr_t(g.data()), intptr_t(bits.data()), intptr_t(twinDx.data()),
                            intptr_t(twinDgamma.data()), intptr_t(twinDbeta.data()),
                            intptr_t(scratch.data()), 0, 0, 0, 0, 0, 0, 0, 1.0f, 1);
    compare(n + " dx gated by bf16 bits on the CPU twin", bitsRuns[0][0], twinDx, 1e-5);
    compare(n + " dbeta gated by bf16 bits on the CPU twin", bitsRuns[0][2], twinDbeta, 1e-5);
  }

  // dx's dropout beside it (a post-norm layer's dropout gradient): f32 and
  // bf16 bits, with dx and without (dx null), from element 0 and after a
  // sample offset of 3 samples of 5 (element 15: a Philox call an element)
  // or of 8 (element 24; from 0 or 24, where d is a multiple of 4, a lane's
  // four share one). Each
  // element is runtime/Philox.h's mask (not KernelMath.h's, which the
  // kernel runs) applied to the plain run's dx: 0 where its word is below
  // the threshold, else dx / (1 - rate), bit for bit; dx the plain run's.
  {
    long long key = (7LL << 32) | 11, threshold = (long long)tfc::dropoutThreshold(0.1);
    float keep = float(1.0 - 0.1);
    const int seedValue = 1234, offsetValue = 3;
    Ptr gseed = gpu.upload(std::vector<int>{seedValue}),
        goffset = gpu.upload(std::vector<int>{offsetValue}), gdrop = gpu.alloc(dx.size() * 4);
    const std::vector<float> &plain = runs[0][1];
    for (int variant = 0; variant < 12; ++variant) {
      long long bits = variant & 1, sampleSize = variant & 8 ? 8 : 5;
      if ((variant & 8) && !(variant & 2))
        continue; // (the sample size matters only with an offset)
      Ptr runOffset = variant & 2 ? goffset : 0, runDx = variant & 4 ? 0 : gdx,
          runCounter = counter;
      gpu.fill(gdx, dx.size() * 4, 0xff);
      gpu.fill(gdrop, dx.size() * 4, 0xff);
      gpu.launch("tfc_cuda_layer_norm_backward_kernel", unsigned(std::max(1LL, blocks)),
                 {&rows,       &d,   &blockRows, &eps,  &gx,         &gg,        &gd,    &noGate,
                  &runDx,      &gdg, &gdb,       &gs,   &gdrop,      &bits,      &gseed, &runOffset,
                  &sampleSize, &key, &threshold, &keep, &noGateBits, &runCounter});
      const uint64_t first = variant & 2 ? uint64_t(offsetValue * sampleSize) : 0;
      const std::vector<float> asF32 = gpu.template download<float>(gdrop, dx.size());
      const std::vector<uint16_t> asBits = gpu.template download<uint16_t>(gdrop, dx.size());
      size_t wrong = 0, zeros = 0;
      for (size_t i = 0; i < plain.size(); ++i) {
        const uint64_t index = first + i;
        const uint32_t word =
            tfc::dropoutWords(uint32_t(seedValue), uint64_t(key), index / 4)[index % 4];
        const float want = word < uint32_t(threshold) ? 0.0f : plain[i] / keep;
        zeros += word < uint32_t(threshold);
        if (bits)
          wrong += asBits[i] != k::bf16Bits(want);
        else
          wrong += std::memcmp(&asF32[i], &want, 4) != 0;
      }
      const std::string what = n + " dx's dropout" + (bits ? " as bf16 bits" : "") +
                               (variant & 2 ? " after " + std::to_string(offsetValue) +
                                                  " samples of " + std::to_string(sampleSize)
                                            : "") +
                               (variant & 4 ? " without dx" : "");
      // (Some dropped and some kept, where there are enough to tell.)
      const bool mixed = plain.size() < 100 || (zeros > 0 && zeros < plain.size());
      report(wrong == 0 && mixed, what + " is Philox.h's mask of dx",
             std::to_string(wrong) + " differ, " + std::to_string(zeros) + " dropped");
      if (!(variant & 4))
        sameBits(what + ": dx", gpu.template download<float>(gdx, dx.size()), plain,
                 "as without the dropout");
    }
    // Without a seed, no mask: dx itself there (its bf16 bits, a GEMM's
    // copy, with dx not stored; or f32 beside dx), from the same launch.
    for (long long bits : {1LL, 0LL}) {
      Ptr runDx = bits ? 0 : gdx, runCounter = counter, unseeded = 0;
      long long sampleSize = 0;
      gpu.fill(gdx, dx.size() * 4, 0xff);
      gpu.fill(gdrop, dx.size() * 4, 0xff);
      gpu.launch("tfc_cuda_layer_norm_backward_kernel", unsigned(std::max(1LL, blocks)),
                 {&rows,      &d,      &blockRows,  &eps,       &gx,         &gg,
                  &gd,        &noGate, &runDx,      &gdg,       &gdb,        &gs,
                  &gdrop,     &bits,   &unseeded,   &noOffset,  &sampleSize, &key,
                  &threshold, &keep,   &noGateBits, &runCounter});
      const std::string what = n + " dx's copy without a seed" + (bits ? " as bf16 bits" : "");
      if (bits) {
        const std::vector<uint16_t> asBits = gpu.template download<uint16_t>(gdrop, dx.size());
        size_t wrong = 0;
        for (size_t i = 0; i < plain.size(); ++i)
          wrong += asBits[i] != k::bf16Bits(plain[i]);
        report(wrong == 0, what + " is bf16Bits of dx", std::to_string(wrong) + " differ");
      } else {
        sameBits(what, gpu.template download<float>(gdrop, dx.size()), plain, "as dx");
        sameBits(what + ": dx", gpu.template download<float>(gdx, dx.size()), plain,
                 "as without it");
      }
    }
    // The CPU twin (--target=cuda-emulated's): the same bytes.
    long long f32 = 0, sampleSize = 5;
    std::vector<float> twin(dx.size());
    tfc_layer_norm_backward(rows, d, blockRows, eps, intptr_t(x.data()), intptr_t(gamma.data()),
                            intptr_t(g.data()), 0, 0, intptr_t(dgamma.data()),
                            intptr_t(dbeta.data()), intptr_t(scratch.data()), intptr_t(twin.data()),
                            0, intptr_t(&seedValue), intptr_t(&offsetValue), sampleSize, key,
                            threshold, keep, 0);
    Ptr noDx = 0, runCounter = counter, runOffset = goffset;
    gpu.launch("tfc_cuda_layer_norm_backward_kernel", unsigned(std::max(1LL, blocks)),
               {&rows,       &d,   &blockRows, &eps,  &gx,         &gg,        &gd,    &noGate,
                &noDx,       &gdg, &gdb,       &gs,   &gdrop,      &f32,       &gseed, &runOffset,
                &sampleSize, &key, &threshold, &keep, &noGateBits, &runCounter});
    compare(n + " dx's dropout on the CPU twin", twin,
            gpu.template download<float>(gdrop, dx.size()), 1e-5);
    // And without a seed: dx's bits, within the twin's own dx's rounding.
    std::vector<uint16_t> twinBits(dx.size(), 0xffff);
    long long one = 1;
    tfc_layer_norm_backward(rows, d, blockRows, eps, intptr_t(x.data()), intptr_t(gamma.data()),
                            intptr_t(g.data()), 0, intptr_t(twin.data()), intptr_t(dgamma.data()),
                            intptr_t(dbeta.data()), intptr_t(scratch.data()),
                            intptr_t(twinBits.data()), one, 0, 0, 0, key, threshold, keep, 0);
    size_t wrongTwin = 0;
    for (size_t i = 0; i < twin.size(); ++i)
      wrongTwin += twinBits[i] != k::bf16Bits(twin[i]);
    report(wrongTwin == 0, n + " dx's copy without a seed on the CPU twin is bf16Bits of its dx",
           std::to_string(wrongTwin) + " differ");
  }

  // The residual sum before the norm (a post-norm layer's residual +
  // dropout, made by the forward's kernel): pre is residual + runtime/
  // Philox.h's mask of x (not KernelMath.h's), bit for bit, and y the plain
  // forward's of that sum, bit for bit; with and without the residual and
  // the dropout, from element 0 and after 3 samples of 8 (a lane's four
  // elements one Philox call, where d is a multiple of 4) or of 5 (a call
  // an element), in place (pre the residual's or x's buffer), one float off
  // 16-byte alignment (no float4), and with the relu and y16. Then the CPU
  // twin: pre the same bytes, y within rounding (another order of sums).
  {
    long long key = (5LL << 32) | 9, threshold = (long long)tfc::dropoutThreshold(0.25);
    float keep = float(1.0 - 0.25);
    const int seedValue = 4321, offsetValue = 3;
    const auto residual = randomFloats(x.size());
    Ptr gseed = gpu.upload(std::vector<int>{seedValue}),
        goffset = gpu.upload(std::vector<int>{offsetValue});
    // Room for one float more: the unaligned variants start at element 1.
    auto withRoom = [&](const std::vector<float> &v) {
      std::vector<float> room(v.size() + 1);
      std::copy(v.begin(), v.end(), room.begin());
      return room;
    };
    auto shifted = [&](const std::vector<float> &v) {
      std::vector<float> room(v.size() + 1);
      std::copy(v.begin(), v.end(), room.begin() + 1);
      return room;
    };
    Ptr gpre = gpu.alloc((x.size() + 1) * 4), gy16r = gpu.alloc(std::max<size_t>(2, y.size() * 2));
    struct Variant {
      const char *what;
      bool dropout, residual, offset, eight, inPlaceResidual, inPlaceX, unaligned, relu;
    };
    const Variant variants[] = {
        {"dropout and residual", true, true, false, false, false, false, false, false},
        {"after 3 samples of 8", true, true, true, true, false, false, false, false},
        {"after 3 samples of 5", true, true, true, false, false, false, false, false},
        {"dropout alone", true, false, false, false, false, false, false, false},
        {"residual alone", false, true, false, false, false, false, false, false},
        {"in the residual's buffer", true, true, true, true, true, false, false, false},
        {"in x's buffer", true, true, false, false, false, true, false, false},
        {"a float off alignment", true, true, true, true, false, false, true, false},
        {"with the relu and y16", true, true, false, false, false, false, false, true},
    };
    for (const Variant &v : variants) {
      long long sampleSize = v.eight ? 8 : 5;
      const uint64_t first = v.offset ? uint64_t(offsetValue * sampleSize) : 0;
      std::vector<float> sum(x.size());
      size_t zeros = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        float value = x[i];
        if (v.dropout) {
          const uint64_t index = first + i;
          const uint32_t word =
              tfc::dropoutWords(uint32_t(seedValue), uint64_t(key), index / 4)[index % 4];
          zeros += word < uint32_t(threshold);
          value = word < uint32_t(threshold) ? 0.0f : value / keep;
        }
        sum[i] = v.residual ? residual[i] + value : value;
      }
      const size_t at = v.unaligned ? 1 : 0;
      Ptr rx = gpu.upload(v.unaligned ? shifted(x) : withRoom(x)) + at * 4;
      Ptr rres = v.residual
                     ? gpu.upload(v.unaligned ? shifted(residual) : withRoom(residual)) + at * 4
                     : Ptr(0);
      Ptr rpre = v.inPlaceResidual ? rres : v.inPlaceX ? rx : gpre + at * 4;
      if (!v.inPlaceResidual && !v.inPlaceX)
        gpu.fill(gpre, (x.size() + 1) * 4, 0xff);
      gpu.fill(gy, y.size() * 4, 0xff);
      Ptr rseed = v.dropout ? gseed : 0, roffset = v.offset ? goffset : 0,
          ry16 = v.relu ? gy16r : 0;
      long long rrelu = v.relu ? 1 : 0;
      gpu.launch("tfc_cuda_layer_norm_forward_kernel", unsigned(std::max(1LL, (rows + 7) / 8)),
                 {&rows, &d, &eps, &rx, &gg, &gb, &gy, &rrelu, &ry16, &rres, &rpre, &rseed,
                  &roffset, &sampleSize, &key, &threshold, &keep});
      const std::vector<float> pre = gpu.template download<float>(rpre, x.size()),
                               fusedY = gpu.template download<float>(gy, y.size());
      const std::vector<uint16_t> fusedBits =
          v.relu ? gpu.template download<uint16_t>(gy16r, y.size()) : std::vector<uint16_t>();
      const std::string what = n + " forward's residual sum, " + v.what;
      const bool mixed = x.size() < 100 || (zeros > 0 && zeros < x.size());
      sameBits(what + ": pre", pre, sum, "as Philox.h's mask of x plus the residual");
      if (v.dropout)
        report(mixed, what + ": some dropped, some kept", std::to_string(zeros) + " dropped");
      // The plain forward of that sum.
      Ptr gsum = gpu.upload(sum);
      gpu.fill(gy, y.size() * 4, 0xff);
      gpu.launch("tfc_cuda_layer_norm_forward_kernel", unsigned(std::max(1LL, (rows + 7) / 8)),
                 {&rows, &d, &eps, &gsum, &gg, &gb, &gy, &rrelu, &noBits, &noResidual, &noPre,
                  &noSeed, &noOffset, &noSampleSize, &noKey, &noThreshold, &noKeep});
      const std::vector<float> plainY = gpu.template download<float>(gy, y.size());
      sameBits(what + ": y", fusedY, plainY, "as the plain forward's of the sum");
      if (v.relu) {
        size_t wrong = 0;
        for (size_t i = 0; i < y.size(); ++i)
          wrong += fusedBits[i] != k::bf16Bits(plainY[i]);
        report(wrong == 0, what + ": y16 is bf16Bits of each value",
               std::to_string(wrong) + " differ");
      }
      if (v.unaligned || v.inPlaceX || v.inPlaceResidual)
        continue;
      // The CPU twin (--target=cuda-emulated's).
      std::vector<float> twinY(y.size()), twinPre(x.size());
      tfc_layer_norm_forward(
          rows, d, eps, intptr_t(x.data()), intptr_t(gamma.data()), intptr_t(beta.data()),
          intptr_t(twinY.data()), rrelu, 0, v.residual ? intptr_t(residual.data()) : 0,
          intptr_t(twinPre.data()), v.dropout ? intptr_t(&seedValue) : 0,
          v.offset ? intptr_t(&offsetValue) : 0, sampleSize, key, threshold, keep);
      sameBits(what + " on the CPU twin: pre", twinPre, sum, "as Philox.h's");
      compare(what + " on the CPU twin: y", twinY, fusedY, 1e-5);
    }
  }
}

template <typename Device>
void checkCrossEntropy(Device &gpu, long long outer, long long classes, long long inner) {
  using Ptr = typename Device::Ptr;
  const long long rows = outer * inner;
  auto logits = randomFloats(size_t(rows * classes), 3.0f);
  std::vector<int> labels(static_cast<size_t>(rows));
  for (long long r = 0; r < rows; ++r)
    labels[size_t(r)] = r == 0 ? -2 : (r == 1 ? int(classes + 3) : int(rng() % classes));
  // The accuracy's argmax: the first maximum (tf.argmax's strict '>' from
  // -inf, index 0). Row 2 ties its classes 1 and 2 at the top, labelled 1;
  // row 3 is labelled its argmax (so that some rows are right whatever
  // the draw).
  auto logitAt = [&](long long row, long long c) -> float & {
    return logits[size_t(((row / inner) * classes + c) * inner + row % inner)];
  };
  if (rows > 2 && classes > 2) {
    logitAt(2, 1) = logitAt(2, 2) = 100.0f;
    labels[2] = 1;
  }
  auto argmaxOf = [&](long long row) {
    float best = -INFINITY;
    long long first = 0;
    for (long long c = 0; c < classes; ++c)
      if (logitAt(row, c) > best) {
        best = logitAt(row, c);
        first = c;
      }
    return first;
  };
  if (rows > 3)
    labels[3] = int(argmaxOf(3));
  float right = 0.0f;
  for (long long r = 0; r < rows; ++r)
    right += argmaxOf(r) == labels[size_t(r)] ? 1.0f : 0.0f;
  const std::vector<float> accuracy = {right / float(rows)};
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
  Ptr gl = gpu.upload(logits), glab = gpu.upload(labels),
      gdl = gpu.upload(std::vector<float>{dlossValue});
  Ptr glosses = gpu.alloc(size_t(rows) * 4), gout = gpu.alloc(4),
      ggrad = gpu.alloc(grad.size() * 4), counter = gpu.alloc(4),
      gcorrects = gpu.alloc(size_t(rows) * 4), gacc = gpu.alloc(4);
  gpu.fill(counter, 4, 0);
  // runs[run][0, 1]: the loss and grad of forward (and mean) and backward;
  // [2, 3]: of the fused kernel (tfc_cuda_cross_entropy_fused, and mean).
  // Runs 0 and 1 in one launch each (the last block adds the losses; run 1
  // takes the counter as run 0 left it), runs 2 and 3 with counter 0 and
  // the mean kernel. The losses and outputs NaN first: a loss read before
  // its block wrote it, or an output not written, would show.
  std::vector<float> runs[4][4], losses, accuracies[4];
  long long f32 = 0;
  const unsigned blocks = unsigned(std::max(1LL, (rows + 7) / 8));
  const std::string n = "cross_entropy " + std::to_string(outer) + "x" + std::to_string(classes) +
                        "x" + std::to_string(inner);
  for (int run = 0; run < 4; ++run) {
    const bool oneLaunch = run < 2;
    Ptr runCounter = oneLaunch ? counter : 0;
    long long lossCount = rows;
    float rowCount = float(rows);
    auto meanUnlessCounted = [&](const char *kernel) {
      if (!oneLaunch) {
        gpu.launch("tfc_cuda_cross_entropy_mean_kernel", 1, {&lossCount, &count, &glosses, &gout});
        if (std::string(kernel) == "fused")
          gpu.launch("tfc_cuda_cross_entropy_mean_kernel", 1,
                     {&lossCount, &rowCount, &gcorrects, &gacc});
        return;
      }
      const unsigned left = gpu.template download<unsigned>(counter, 1)[0];
      report(left == 0,
             std::string("cross_entropy ") + kernel + " leaves its counter 0 (run " +
                 std::to_string(run) + ")",
             left ? "it is " + std::to_string(left) : "");
    };
    gpu.fill(glosses, size_t(rows) * 4, 0xff);
    gpu.fill(gout, 4, 0xff);
    gpu.fill(ggrad, grad.size() * 4, 0xff);
    gpu.launch("tfc_cuda_cross_entropy_forward_kernel", blocks,
               {&outer, &classes, &inner, &count, &gl, &glab, &glosses, &gout, &runCounter});
    meanUnlessCounted("forward");
    gpu.launch("tfc_cuda_cross_entropy_backward_kernel", blocks,
               {&outer, &classes, &inner, &count, &gl, &glab, &gdl, &ggrad});
    runs[run][0] = gpu.template download<float>(gout, 1);
    runs[run][1] = gpu.template download<float>(ggrad, grad.size());
    if (run == 0)
      losses = gpu.template download<float>(glosses, size_t(rows));
    gpu.fill(glosses, size_t(rows) * 4, 0xff);
    gpu.fill(gout, 4, 0xff);
    gpu.fill(ggrad, grad.size() * 4, 0xff);
    gpu.fill(gcorrects, size_t(rows) * 4, 0xff);
    gpu.fill(gacc, 4, 0xff);
    gpu.launch("tfc_cuda_cross_entropy_fused_kernel", blocks,
               {&outer, &classes, &inner, &count, &gl, &glab, &gdl, &glosses, &gout, &ggrad,
                &gcorrects, &gacc, &f32, &runCounter});
    meanUnlessCounted("fused");
    runs[run][2] = gpu.template download<float>(gout, 1);
    runs[run][3] = gpu.template download<float>(ggrad, grad.size());
    accuracies[run] = gpu.template download<float>(gacc, 1);
  }
  // The accuracy: the host's bits (a sum of ones and zeros is exact in any
  // order), one launch and two.
  for (int run = 0; run < 4; ++run)
    sameBits(n + " accuracy (run " + std::to_string(run) + ")", accuracies[run], accuracy,
             "as the host's argmax");
  for (int run : {0, 2}) {
    const std::string b = n + (run == 0 ? " one launch" : " two launches");
    compare(b + " loss", runs[run][0], loss, 1e-5);
    compare(b + " grad", runs[run][1], grad, 1e-5);
    compare(b + " fused loss", runs[run][2], loss, 1e-5);
    compare(b + " fused grad", runs[run][3], grad, 1e-5);
  }
  // The mean kernel's tree on the host: thread t adds losses t, t + 256,
  // ... in order, then halving; the last block must add them so too.
  std::vector<float> partial(k::kReduceThreads, 0.0f);
  for (size_t r = 0; r < losses.size(); ++r)
    partial[r % k::kReduceThreads] += losses[r];
  for (int width = k::kReduceThreads / 2; width > 0; width /= 2)
    for (int t = 0; t < width; ++t)
      partial[size_t(t)] += partial[size_t(t + width)];
  sameBits(n + " loss", runs[0][0], {partial[0] / count}, "as the mean kernel's tree on the host");
  for (int t = 0; t < 4; ++t) {
    sameBits(n + " output " + std::to_string(t), runs[0][t], runs[1][t]);
    sameBits(n + " output " + std::to_string(t) + " in one launch", runs[0][t], runs[2][t],
             "as in two");
    sameBits(n + " output " + std::to_string(t) + " in two launches", runs[2][t], runs[3][t]);
  }
  // The fused kernel computes the pair's operations in the pair's order.
  sameBits(n + " fused loss as forward's", runs[0][2], runs[0][0]);
  sameBits(n + " fused grad as backward's", runs[0][3], runs[0][1]);
  // dlogits as bf16 bits alone (a GEMM's operand): bf16Bits of each of the
  // f32 run's gradients, the loss the same bits; and on the CPU twin.
  {
    long long bitsFlag = 1;
    Ptr runCounter = counter, noCorrects = 0, noAccuracy = 0;
    gpu.fill(ggrad, grad.size() * 4, 0xff);
    gpu.launch("tfc_cuda_cross_entropy_fused_kernel", blocks,
               {&outer, &classes, &inner, &count, &gl, &glab, &gdl, &glosses, &gout, &ggrad,
                &noCorrects, &noAccuracy, &bitsFlag, &runCounter});
    const std::vector<uint16_t> bits = gpu.template download<uint16_t>(ggrad, grad.size());
    size_t wrong = 0;
    for (size_t i = 0; i < grad.size(); ++i)
      wrong += bits[i] != k::bf16Bits(runs[0][3][i]);
    report(wrong == 0, n + " fused grad as bf16 bits is bf16Bits of the f32 grad",
           std::to_string(wrong) + " differ");
    sameBits(n + " fused loss with the grad as bits", gpu.template download<float>(gout, 1),
             runs[0][2]);
    std::vector<uint16_t> twinBits(grad.size(), 0xffff);
    std::vector<float> twinLosses(static_cast<size_t>(rows));
    float twinLoss = 0.0f, dlossHost = dlossValue;
    tfc_cross_entropy_fused(outer, classes, inner, count, intptr_t(logits.data()),
                            intptr_t(labels.data()), intptr_t(&dlossHost),
                            intptr_t(twinLosses.data()), intptr_t(&twinLoss),
                            intptr_t(twinBits.data()), 0, 0, 1);
    size_t far = 0;
    for (size_t i = 0; i < grad.size(); ++i) { // within a bf16 step of the GPU's
      const int diff = int(twinBits[i]) - int(bits[i]);
      far += diff > 1 || diff < -1;
    }
    report(far == 0, n + " fused grad as bf16 bits on the CPU twin: within one bf16 step",
           std::to_string(far) + " further");
  }
}

template <typename Device>
void checkDropout(Device &gpu, long long n, long long first, long long key, double rate) {
  using Ptr = typename Device::Ptr;
  long long seed = (n * 2654435761LL + key) & 0xffffffffLL;
  long long threshold = (long long)std::ceil(rate * 4294967296.0);
  std::vector<unsigned char> cpu(static_cast<size_t>(n));
  tfc_dropout_mask(intptr_t(cpu.data()), n, first, seed, key, threshold);
  Ptr gm = gpu.alloc(size_t(n));
  gpu.launch("tfc_cuda_dropout_mask_kernel", unsigned(((n + 3 + first % 4) / 4 + 255) / 256),
             {&gm, &n, &first, &seed, &key, &threshold});
  const auto mask = gpu.template download<unsigned char>(gm, size_t(n));
  report(mask == cpu, "dropout mask n=" + std::to_string(n) + " first=" + std::to_string(first) +
                          " key=" + std::to_string(key) + " is the CPU's bit for bit");
}

/// gather.cu: `count` rows of `rowBytes` gathered by random int64 indices
/// (repeats included) from `samples` rows, at byte offsets `toShift` and
/// `rowsShift` from 256-byte aligned memory (0: the 16-byte path where
/// rowBytes allows; else the 4-byte or the byte path), against the host's
/// gather: bit for bit, and on a grid of one block (grid-stride) too. The
/// indices are rows [first, first + count) of a longer order (the rows
/// around them out of range), `first` read from device memory; the advance
/// kernel then moves it on by `count`, and the gather after it reads the
/// order's next rows.
template <typename Device>
void checkGather(Device &gpu, long long samples, long long rowBytes, long long count,
                 long long toShift, long long rowsShift) {
  using Ptr = typename Device::Ptr;
  std::vector<unsigned char> rows(size_t(samples * rowBytes));
  for (unsigned char &b : rows)
    b = static_cast<unsigned char>(rng());
  // The order: 3 rows out of range, two batches' indices, 3 more.
  const long long start = 3;
  std::vector<long long> order(static_cast<size_t>(2 * count + 6), samples + 1000);
  for (long long i = 0; i < 2 * count; ++i)
    order[size_t(start + i)] = (long long)(rng() % uint64_t(samples));
  auto hostBatch = [&](long long first) {
    std::vector<unsigned char> host(size_t(count * rowBytes));
    for (long long i = 0; i < count; ++i)
      std::memcpy(host.data() + i * rowBytes,
                  rows.data() + order[size_t(first + i)] * rowBytes, size_t(rowBytes));
    return host;
  };
  const std::vector<unsigned char> host = hostBatch(start), next = hostBatch(start + count);
  Ptr grows = gpu.alloc(rows.size() + size_t(rowsShift)) + Ptr(rowsShift);
  Ptr gto = gpu.alloc(host.size() + size_t(toShift)) + Ptr(toShift);
  gpu.copyIn(grows, rows.data(), rows.size());
  Ptr gorder = gpu.upload(order);
  Ptr gfirst = gpu.alloc(sizeof(long long));
  const long long aligned = (long long)(grows | gto) | rowBytes;
  const long long word = aligned % 16 == 0 ? 16 : aligned % 4 == 0 ? 4 : 1;
  const unsigned blocks = unsigned((count * (rowBytes / word) + 255) / 256);
  const std::string n = "gather " + std::to_string(count) + " of " + std::to_string(samples) +
                        " rows of " + std::to_string(rowBytes) + " bytes (" +
                        std::to_string(word) + "-byte words)";
  long long advance = count;
  for (unsigned grid : {blocks, 1u}) {
    gpu.copyIn(gfirst, &start, sizeof start);
    gpu.fill(gto, host.size(), 0xA5);
    gpu.launch("tfc_cuda_gather_rows_kernel", grid,
               {&gto, &grows, &rowBytes, &gorder, &gfirst, &count});
    const auto gathered = gpu.template download<unsigned char>(gto, host.size());
    report(gathered == host, n + ", grid " + std::to_string(grid) + ", is the host's bit for bit");
    gpu.launch("tfc_cuda_advance_first_kernel", 1, {&gfirst, &advance});
    const long long first = gpu.template download<long long>(gfirst, 1)[0];
    report(first == start + count, n + ", grid " + std::to_string(grid) +
                                       ": the advance moves the first row to " +
                                       std::to_string(start + count) + " (it is " +
                                       std::to_string(first) + ")");
    gpu.launch("tfc_cuda_gather_rows_kernel", grid,
               {&gto, &grows, &rowBytes, &gorder, &gfirst, &count});
    report(gpu.template download<unsigned char>(gto, host.size()) == next,
           n + ", grid " + std::to_string(grid) + ", then the next batch's rows");
  }
}

//===----------------------------------------------------------------------===//
// Small GEMMs (gemm_small.cu)
//===----------------------------------------------------------------------===//

/// A product as tfc_cuda_sgemm asks for it (row-major), and its epilogue.
struct GemmCase {
  const char *name;
  long long items, m, n, k;
  bool transA, transB;
  bool reduction = false;  // the items summed into one C
  bool accumulate = false; // C += the product
  bool bias = false, residual = false, relu = false, writeMask = false, reluGrad = false;
  int biasGrad = 0; // 1: of A (transA), 2: of B (not transB)
};

/// The products checked, on the emulator and on a GPU: the reverse task's
/// shapes and epilogues, K in slices, batches, odd edges.
inline const std::vector<GemmCase> kSmallGemmCases = {
    // name, items, m, n, k, transA, transB, reduction, accumulate, bias, residual, relu,
    // writeMask, reluGrad, biasGrad
    {"reverse 2048x32x10 B^T, bias, residual", 1, 2048, 32, 10, false, true, false, false, true,
     true},
    {"reverse 32x32x2048 A^T, the bias gradient of A", 1, 32, 32, 2048, true, false, false,
     false, false, false, false, false, false, 1},
    {"70x33x5 B^T, bias, relu, relu mask", 1, 70, 33, 5, false, true, false, false, true, false,
     true, true},
    {"65x130x40 relu's gradient", 1, 65, 130, 40, false, false, false, false, false, false, false,
     false, true},
    {"40x96x333 the bias gradient of B", 1, 40, 96, 333, false, false, false, false, false,
     false, false, false, false, 2},
    {"batch 3, 33x17x50 A^T B^T, accumulate", 3, 33, 17, 50, true, true, false, true},
    {"batch 3, 9x70x700 in slices", 3, 9, 70, 700, false, true},
    {"batch 4 summed, 20x30x300, accumulate", 4, 20, 30, 300, true, false, true, true},
    {"1x1x1 relu", 1, 1, 1, 1, false, false, false, false, false, false, true},
};

/// gemm_small.cu's kernels against the product and epilogue in double
/// precision on the host: C, ReLU's mask bits, the bias gradient; and a
/// second run the same bits. Launched as CudaDevice::sgemm launches them
/// (smallGemmPlan).
template <typename Device> void checkSmallGemm(Device &gpu, const GemmCase &g) {
  using Ptr = typename Device::Ptr;
  // Not const: the launches take their addresses.
  long long lda = g.transA ? g.m + 3 : g.k + 1, ldb = g.transB ? g.k + 2 : g.n + 5, ldc = g.n + 1,
            ldResidual = g.n + 2;
  long long strideA = (g.transA ? g.k : g.m) * lda, strideB = (g.transB ? g.n : g.k) * ldb;
  const long long outputs = g.reduction ? 1 : g.items;
  long long strideC = g.reduction ? 0 : g.m * ldc;
  long long ldMask = (g.n + 127) / 128 * 128; // bits
  const auto a = randomFloats(size_t(g.items * strideA)),
             b = randomFloats(size_t(g.items * strideB)),
             c0 = randomFloats(size_t(outputs * g.m * ldc)),
             residual = randomFloats(size_t(g.m * ldResidual)), bias = randomFloats(size_t(g.n));
  std::vector<unsigned> mask0(size_t(g.m * ldMask / 32));
  for (unsigned &w : mask0)
    w = unsigned(rng());

  // The host's answer (the fake cuBLASLt's order of the epilogue).
  std::vector<float> want = c0;
  std::vector<unsigned> wantMask = mask0;
  for (long long o = 0; o < outputs; ++o)
    for (long long i = 0; i < g.m; ++i)
      for (long long j = 0; j < g.n; ++j) {
        double sum = 0;
        for (long long item = g.reduction ? 0 : o; item < (g.reduction ? g.items : o + 1); ++item)
          for (long long p = 0; p < g.k; ++p) {
            const double x = g.transA ? a[size_t(item * strideA + p * lda + i)]
                                      : a[size_t(item * strideA + i * lda + p)];
            const double y = g.transB ? b[size_t(item * strideB + j * ldb + p)]
                                      : b[size_t(item * strideB + p * ldb + j)];
            sum += x * y;
          }
        const size_t at = size_t(o * g.m * ldc + i * ldc + j);
        if (g.accumulate)
          sum += c0[at];
        if (g.residual)
          sum += residual[size_t(i * ldResidual + j)];
        if (g.bias)
          sum += bias[size_t(j)];
        const long long bit = j + i * ldMask;
        unsigned &word = wantMask[size_t(bit / 32)];
        const unsigned flag = 1u << (bit % 32);
        if (g.reluGrad)
          sum = (mask0[size_t(bit / 32)] & flag) ? sum : 0.0;
        else if (g.writeMask)
          word = sum > 0 ? word | flag : word & ~flag;
        if (g.relu && sum < 0)
          sum = 0;
        want[at] = float(sum);
      }
  const long long sums = g.biasGrad == 1 ? g.m : g.n;
  std::vector<float> wantSums(static_cast<size_t>(sums));
  for (long long x = 0; g.biasGrad && x < sums; ++x) {
    double sum = 0;
    for (long long p = 0; p < g.k; ++p)
      sum += g.biasGrad == 1 ? a[size_t(p * lda + x)] : b[size_t(p * ldb + x)];
    wantSums[size_t(x)] = float(sum);
  }

  const k::SmallGemmPlan plan = k::smallGemmPlan(g.m, g.n, g.k, g.items, g.reduction);
  Ptr ga = gpu.upload(a), gb = gpu.upload(b), gc = gpu.alloc(c0.size() * 4),
      gr = gpu.upload(residual), gbias = gpu.upload(bias), gm = gpu.alloc(mask0.size() * 4),
      gp = gpu.alloc(size_t(std::max(plan.partialFloats, 1ll)) * 4),
      gs = gpu.alloc(size_t(sums) * 4), counter = gpu.alloc(4);
  const k::ColumnSumsPlan sumsPlan = k::columnSumsPlan(g.k, sums);
  Ptr gsp = gpu.alloc(size_t(sumsPlan.parts * sums) * 4);
  gpu.fill(counter, 4, 0);
  Ptr none = 0, noResidual = g.residual ? gr : none, noBias = g.bias ? gbias : none,
      maskArg = g.writeMask || g.reluGrad ? gm : none, partials = plan.partial ? gp : none;
  long long acc = g.accumulate, relu = g.relu, reluGrad = g.reluGrad, transA = g.transA,
            transB = g.transB, items = g.items, m = g.m, n = g.n, kk = g.k, slice = plan.slice,
            parts = plan.parts, outs = plan.outputs, one = 1, zero = 0, sumParts = sumsPlan.parts,
            count = sums, part = sumsPlan.part, sumsLd = g.biasGrad == 1 ? lda : ldb,
            sumsCols = g.biasGrad ? sums : 0;
  const bool finishes = plan.partial || (g.biasGrad && sumsPlan.parts > 1);
  // Runs 0 and 1: one launch, its last block adding the partials (where
  // CudaDevice::smallGemm makes it so; else as run 2). Run 2: counter 0, the
  // finish kernel adding them. Run 3: the product alone, the bias gradient
  // by the column-sums kernel and the finish kernel (as beside cuBLASLt).
  // Every run the same bits.
  const bool lastBlock = finishes && k::smallGemmLastBlockFinishes(
                                         plan, g.m, g.n, g.biasGrad ? sumsPlan.parts : 0, sums);
  std::vector<float> runs[4], runSums[4];
  std::vector<unsigned> runMasks[4];
  for (int run = 0; run < 4; ++run) {
    gpu.copyIn(gc, c0.data(), c0.size() * 4);
    gpu.copyIn(gm, mask0.data(), mask0.size() * 4);
    gpu.fill(gs, size_t(sums) * 4, 0xff);
    Ptr runCounter = run < 2 && lastBlock ? counter : none;
    Ptr sumsOf = run < 3 && g.biasGrad ? (g.biasGrad == 1 ? ga : gb) : none,
        sumTo = g.biasGrad ? gs : none;
    const unsigned units = unsigned(plan.units + (sumsOf ? sumsPlan.units : 0));
    gpu.launch("tfc_cuda_small_gemm_kernel", units,
               {&m,       &n,        &kk,       &slice,  &items,      &ga,         &lda,
                &strideA, &transA,   &gb,       &ldb,    &strideB,    &transB,     &gc,
                &ldc,     &strideC,  &partials, &acc,    &noResidual, &ldResidual, &noBias,
                &relu,    &reluGrad, &maskArg,  &ldMask, &outs,       &parts,      &sumsOf,
                &sumsLd,  &sumsCols, &gsp,      &sumTo,  &runCounter});
    if (plan.partial && !runCounter)
      gpu.launch("tfc_cuda_small_gemm_finish_kernel",
                 unsigned((outs * m * n + k::kSmallGemmThreads - 1) / k::kSmallGemmThreads),
                 {&m, &n, &outs, &parts, &gp, &gc, &ldc, &strideC, &acc, &noResidual, &ldResidual,
                  &noBias, &relu, &reluGrad, &maskArg, &ldMask});
    if (g.biasGrad) {
      // Run 3: the column-sums kernel's last block adds the parts, where
      // CudaDevice::launchColumnSums makes it so (else the finish kernel).
      const bool sumsLastBlock =
          run == 3 && sumsPlan.parts > 1 && k::columnSumsLastBlockAdds(sumsPlan.parts, sums);
      if (run == 3) {
        Ptr from = g.biasGrad == 1 ? ga : gb, to = sumsPlan.parts > 1 ? gsp : gs,
            sumsCounter = sumsLastBlock ? counter : none;
        gpu.launch("tfc_cuda_column_sums_kernel", unsigned(sumsPlan.units),
                   {&kk, &count, &from, &sumsLd, &part, &to, &gs, &sumsCounter});
      }
      if (sumsPlan.parts > 1 && !runCounter && !sumsLastBlock)
        gpu.launch("tfc_cuda_small_gemm_finish_kernel",
                   unsigned((count + k::kSmallGemmThreads - 1) / k::kSmallGemmThreads),
                   {&one, &count, &one, &sumParts, &gsp, &gs, &count, &zero, &zero, &none, &zero,
                    &none, &zero, &zero, &none, &zero});
      runSums[run] = gpu.template download<float>(gs, size_t(sums));
    }
    runs[run] = gpu.template download<float>(gc, c0.size());
    runMasks[run] = gpu.template download<unsigned>(gm, mask0.size());
  }
  const std::string name = std::string("small gemm ") + g.name;
  compare(name, runs[0], want, 1e-5);
  sameBits(name, runs[0], runs[1]);
  const char *ways[] = {"", "", "as by the finish kernel", "as by the column-sums kernel"};
  for (int run : {2, 3}) {
    sameBits(name, runs[run], runs[0], std::string(ways[run]) + " (one launch before)");
    if (g.writeMask)
      report(runMasks[run] == runMasks[0], name + " ReLU mask bits the same " + ways[run]);
    if (g.biasGrad)
      sameBits(name + " bias gradient", runSums[run], runSums[0],
               std::string(ways[run]) + " (one launch before)");
  }
  if (lastBlock || (g.biasGrad && sumsPlan.parts > 1))
    report(gpu.template download<unsigned>(counter, 1)[0] == 0,
           name + " leaves the last-block counter 0");
  if (g.writeMask)
    report(runMasks[0] == wantMask, name + " ReLU mask bits");
  if (g.biasGrad) {
    compare(name + " bias gradient", runSums[0], wantSums, 1e-5);
    sameBits(name + " bias gradient", runSums[0], runSums[1]);
  }
}

//===----------------------------------------------------------------------===//
// The wgmma probe
//===----------------------------------------------------------------------===//

/// wgmma_probe.cu's kernels (loaded by the caller) on operand images laid
/// out by WgmmaProbe.h's hypotheses, D checked against the product on the
/// host. Each hypothesis a kernel built on wgmma would rest on is a check;
/// where one fails, what the alternatives give is printed (`info`), so that
/// one GPU call says which layout is right. On the SIMT emulator the same
/// checks hold its model of wgmma to WgmmaProbe.h's.
template <typename Device> void checkWgmmaLayouts(Device &gpu) {
  namespace w = tfc::wgmmaprobe;
  using Ptr = typename Device::Ptr;
  const size_t accBytes = size_t(w::kThreads * w::kRegisters) * 4;
  const Ptr gd = gpu.alloc(accBytes), gdesc = gpu.alloc(8 * 8);
  // D as accumulatorAt sets the registers out, and how many elements differ from A B.
  struct Result {
    std::vector<float> registers;
    int wrong;
  };
  auto run = [&](const char *kernel, const std::vector<uint16_t> &a, const std::vector<uint16_t> &b,
                 const std::vector<uint32_t> &regs, const std::vector<uint64_t> &descs, int depth) {
    Ptr ga = gpu.upload(a), gb = gpu.upload(b), gr = regs.empty() ? 0 : gpu.upload(regs);
    gpu.copyIn(gdesc, descs.data(), descs.size() * 8);
    gpu.fill(gd, accBytes, 0xff);
    Ptr dPtr = gd, descPtr = gdesc;
    gpu.launch(kernel, 1, {&ga, &gb, &gr, &descPtr, &dPtr});
    Result r{gpu.template download<float>(gd, size_t(w::kThreads * w::kRegisters)), 0};
    const std::vector<float> expected = w::product(depth), got = w::asMatrix(r.registers);
    for (size_t i = 0; i < got.size(); ++i)
      r.wrong += !(got[i] == expected[i]);
    return r;
  };
  // Where a check fails: thread 0-3's first registers and where in A B
  // their values are (the accumulators' layout, if that is what is off).
  auto explain = [&](const Result &r, int depth) {
    const std::vector<float> expected = w::product(depth);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const float v = r.registers[size_t(i * w::kRegisters + j)];
        auto [row, col] = w::accumulatorAt(i, j);
        std::string at;
        int found = 0;
        for (int e = 0; e < w::kM * w::kN && found < 3; ++e)
          if (expected[size_t(e)] == v)
            at += " (" + std::to_string(e / w::kN) + "," + std::to_string(e % w::kN) + ")", ++found;
        std::printf("info wgmma probe: thread %d register %d holds %g; expected D(%d,%d) = %g; "
                    "that value is at%s\n",
                    i, j, double(v), row, col, double(expected[size_t(row * w::kN + col)]),
                    found ? at.c_str() : " no element");
      }
  };
  auto detail = [](const Result &r) {
    return r.wrong ? std::to_string(r.wrong) + " of 4096 elements differ" : std::string();
  };
  const auto aOf = [](int m, int k) { return w::aValue(m, k); };
  const auto bKMajor = [](int n, int k) { return w::bValue(k, n); };  // rows n, columns k
  const auto bMnMajor = [](int k, int n) { return w::bValue(k, n); }; // rows k, columns n

  // 1. No swizzle, K-major: core matrices [row / 8][k / 8], 128 bytes apart
  // along K (LBO) and 256 along M and N (SBO); then the fields swapped.
  const auto core = [](int r, int k) { return w::interleaved(r, k, 128, 256); };
  const std::vector<uint16_t> aCore = w::imageOf(w::kM, 16, core, aOf),
                              bCore = w::imageOf(w::kN, 16, core, bKMajor);
  const uint64_t coreDesc = w::descriptor(0, 128, 256, 0), swapped = w::descriptor(0, 256, 128, 0);
  Result r = run("tfc_probe_wgmma_ss_k16_kernel", aCore, bCore, {}, {coreDesc, coreDesc}, 16);
  report(r.wrong == 0,
         "wgmma probe: A and B from shared memory, K-major core matrices without swizzle "
         "(LBO 128 bytes along K, SBO 256 along M and N), one k-step",
         detail(r));
  if (r.wrong) {
    explain(r, 16);
    const Result s = run("tfc_probe_wgmma_ss_k16_kernel", aCore, bCore, {}, {swapped, swapped}, 16);
    std::printf("info wgmma probe: the same with LBO and SBO swapped: %s\n",
                s.wrong ? detail(s).c_str() : "D = A B");
  }

  // 2. 128-byte swizzle, K-major, K 64 (rows of 128 bytes, 8-row atoms of
  // 1,024 bytes: SBO; LBO unused): k-step s starts 32 bytes further.
  const std::vector<uint16_t> aSw = w::imageOf(w::kM, 64, w::swizzled128, aOf),
                              bSw = w::imageOf(w::kN, 64, w::swizzled128, bKMajor);
  std::vector<uint64_t> swDescs;
  for (uint32_t s = 0; s < 4; ++s)
    for (int operand = 0; operand < 2; ++operand)
      swDescs.push_back(w::descriptor(32 * s, 16, 1024, 1));
  r = run("tfc_probe_wgmma_ss_k64_kernel", aSw, bSw, {}, swDescs, 64);
  report(r.wrong == 0,
         "wgmma probe: A and B from shared memory, K-major, 128-byte swizzle (SBO 1,024 "
         "bytes), four k-steps 32 bytes apart",
         detail(r));
  if (r.wrong)
    explain(r, 64);

  // 3. A from registers (mma.m16n8k16's A fragment a warp), B as in 2.
  const std::vector<uint32_t> regs = w::aRegisters(4);
  r = run("tfc_probe_wgmma_rs_k64_kernel", aSw, bSw, regs, swDescs, 64);
  report(r.wrong == 0,
         "wgmma probe: A from registers (mma.m16n8k16's fragments, warp w rows 16w..), B "
         "K-major with the 128-byte swizzle, four k-steps",
         detail(r));

  // 4. B MN-major (imm-trans-b 1): rows of k, 64 n each (128 bytes),
  // swizzled; k-step s starts 16 rows (2,048 bytes) further. Which LBO and
  // SBO give D: 1,024 (8 rows of k) expected for SBO, LBO unused (one
  // 64-column atom).
  const std::vector<uint16_t> bMn = w::imageOf(64, w::kN, w::swizzled128, bMnMajor);
  std::string matching;
  bool expectedMatches = false;
  for (uint32_t lbo : {16u, 1024u, 2048u, 8192u})
    for (uint32_t sbo : {1024u, 2048u, 4096u}) {
      std::vector<uint64_t> descs;
      for (uint32_t s = 0; s < 4; ++s) {
        descs.push_back(w::descriptor(32 * s, 16, 1024, 1));
        descs.push_back(w::descriptor(2048 * s, lbo, sbo, 1));
      }
      const Result m = run("tfc_probe_wgmma_rs_k64_mn_kernel", aSw, bMn, regs, descs, 64);
      if (m.wrong == 0) {
        matching += " (LBO " + std::to_string(lbo) + ", SBO " + std::to_string(sbo) + ")";
        expectedMatches = expectedMatches || (sbo == 1024 && lbo == 8192);
      }
      if (lbo == 8192 && sbo == 1024) {
        // And with A from shared memory too (what P V with P staged would do).
        const Result ss = run("tfc_probe_wgmma_ss_k64_mn_kernel", aSw, bMn, {}, descs, 64);
        report(ss.wrong == 0,
               "wgmma probe: A K-major and B MN-major (imm-trans-b 1) from shared memory, "
               "128-byte swizzle, SBO 1,024 bytes, four k-steps 2,048 bytes apart in B",
               detail(ss));
      }
    }
  report(expectedMatches,
         "wgmma probe: A from registers, B MN-major (imm-trans-b 1) with the 128-byte swizzle, "
         "SBO 1,024 bytes",
         matching.empty() ? "no LBO and SBO tried gives D" : "D from" + matching);
}

} // namespace tfc::kernelcheck

#endif // TFC_TOOLS_GPU_KERNELCHECKS_H
