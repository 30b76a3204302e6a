//===- KernelMath.h - the CUDA kernels' arithmetic, for device and host ---===//
//
// Every rounding the hand-written CUDA kernels (runtime/cuda/kernels/*.cu)
// make is spelled here once, as __host__ __device__ inline functions: the
// kernels call them per element or per lane, and CudaKernelMathTest
// (tests/unit) calls the same functions on the host, composing them in the
// kernels' order (lanes, warp butterflies, key tiles), and compares them with
// the CPU kernels (runtime/cpu/). The .cu files are compiled with
// -fmad=false and the test with -ffp-contract=off, so neither compiler fuses
// a multiply and an add behind our back: where a kernel wants an FMA it
// calls fmaf (correctly rounded on both), as the CPU kernels' contracted
// inner products and polynomials do. Division and sqrtf are IEEE on both
// (nvcc's -prec-div/-prec-sqrt defaults), so host and device compute the
// same bits for everything here except logf (cross-entropy: a few ulps).
//
// Plain C++17 without CUDA headers: under nvcc TFC_HD is __host__
// __device__, elsewhere it is nothing.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_KERNELS_KERNELMATH_H
#define TFC_RUNTIME_CUDA_KERNELS_KERNELMATH_H

#include <cstdint>
#if defined(__CUDACC__)
#define TFC_HD __host__ __device__ __forceinline__
#else
#include <cmath>
#include <cstring>
#define TFC_HD inline
#endif

namespace tfc::rt::cuda::kernels {

//===----------------------------------------------------------------------===//
// Launch shapes (Kernels.h lists them per kernel)
//===----------------------------------------------------------------------===//

/// Lanes of a warp: the unit that owns a row (of attention, layer norm or
/// cross-entropy) in every kernel here.
constexpr int kWarp = 32;
/// Threads a block of each kernel; a kernel traps on any other block size
/// (a launch error, never a silent wrong result). Grids may be any size >= 1:
/// every kernel walks its work units in a grid-stride loop.
constexpr int kAttentionThreads = 256;    // forward, dQ: 16 x 16 threads, 4 x 4 each
constexpr int kAttentionDkvThreads = 256; // dK/dV: the same
constexpr int kAttentionDkvKeys = 64;     // keys a dK/dV work unit
constexpr int kLayerNormThreads = 256;    // a warp a row
constexpr int kLayerNormChunk = 32;       // rows a backward block keeps stats of
constexpr int kCrossEntropyThreads = 256; // a warp a row
/// Logits a lane of the fused cross-entropy kernel keeps in registers: rows
/// of up to 32 x 32 = 1,024 classes are read from memory once.
constexpr int kCrossEntropyRegisterClasses = 32;
constexpr int kReduceThreads = 256;       // the one-block reductions
constexpr int kDropoutThreads = 256;      // a thread a group of 4 elements
constexpr int kGatherThreads = 256;       // a thread a word of the batch (gather.cu)
constexpr int kAdvanceThreads = 32;       // gather.cu's advance: one warp, thread 0 writes
/// The fp32 attention kernels (attention.cu): a block owns a tile of 64
/// query rows (keys in dk/dv) of one head and kAttentionColumns of its
/// output columns (wider heads go in slices, the scores recomputed for
/// each); the other side goes by tiles of 64 rows staged in shared memory,
/// the head dimension of the scores by chunks of kAttentionChunk columns.
constexpr int kAttentionRows = 64;
constexpr int kAttentionColumns = 64;
constexpr int kAttentionChunk = 16;
/// The tensor-core attention kernels (attention_tc.cu): 4 warps a block,
/// each 16 rows (queries in the forward and dq, keys in dk/dv) of a 64-row
/// block; tiles of 64 keys (queries for dk/dv) staged in shared memory as
/// bf16, rows of 64 elements (attention_tc.cu says in what order);
/// head dims d and dv multiples of 16 up to 64 (attentionTensorCoreShape).
constexpr int kAttentionTcThreads = 128;
/// attention_wgmma.cu's wide kernels: two warpgroups a block, 128 queries
/// sharing each key tile (forward, dq) or 128 keys sharing each query tile
/// (dkv).
constexpr int kAttentionWgmmaWideThreads = 256;
/// The wide dq's dynamic shared memory: 8 tiles of 64 x 64 bf16, and 1 KiB
/// to align them to 1,024 bytes; the wide dkv's: 10 tiles (each warpgroup's
/// K, V and P^T, Q and dO double-buffered) and the 1 KiB.
constexpr int kAttentionWgmmaWideDqShared = 8 * 8192 + 1024;
constexpr int kAttentionWgmmaWideDkvShared = 10 * 8192 + 1024;
constexpr int kAttentionTcRows = 64; // rows a block owns, and rows a staged tile
constexpr int kAttentionTcMaxDim = 64;
constexpr int kAttentionTcStride = kAttentionTcMaxDim; // bf16 a staged row
/// The lean forward and dq kernels (TFC_ATTENTION_LEAN): the same work
/// without the next key tile's loads held in registers, compiled for this
/// many blocks an SM (12 warps against the others' 8, which ~230 registers
/// a thread allow): more warps to hide latency, none of it in registers.
constexpr int kAttentionTcLeanBlocks = 3;

//===----------------------------------------------------------------------===//
// Bits
//===----------------------------------------------------------------------===//

TFC_HD uint32_t floatBits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

TFC_HD float bitsFloat(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

TFC_HD float fusedMulAdd(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

TFC_HD float squareRoot(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

TFC_HD float maxOf(float a, float b) { return a > b ? a : b; }

//===----------------------------------------------------------------------===//
// exp: runtime/cpu/Attention.cpp's exp8, one lane
//===----------------------------------------------------------------------===//

/// exp(x) as the CPU attention kernel computes it (Cephes: x = n ln2 + r,
/// 1 + r + r^2 p(r), 2^n through the exponent bits; relative error below
/// 2e-7), with the FMAs GCC makes of its vector code under -march=native.
/// x is clamped to [-88, 88], so exp(-inf) and exp(-9e15 - m) are exactly 0.
TFC_HD float expApprox(float x) {
  x = x < -88.0f ? -88.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float magic = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
  const float t = fusedMulAdd(x, 1.44269504088896341f, magic);
  const float n = t - magic;
  float r = fusedMulAdd(-n, 0.693359375f, x); // ln 2 in two parts
  r = fusedMulAdd(-n, -2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fusedMulAdd(p, r, 1.3981999507e-3f);
  p = fusedMulAdd(p, r, 8.3334519073e-3f);
  p = fusedMulAdd(p, r, 4.1665795894e-2f);
  p = fusedMulAdd(p, r, 1.6666665459e-1f);
  p = fusedMulAdd(p, r, 5.0000001201e-1f);
  p = fusedMulAdd(p, r * r, r) + 1.0f;
  // t's low bits hold n + 0x400000; 2^n has the biased exponent n + 127
  // (>= 0: x >= -88 gives n >= -127, where 2^n is the float 0).
  return p * bitsFloat((floatBits(t) - (0x4B400000u - 127u)) << 23);
}

/// 2^x on the GPU's special function unit, for the tensor-core attention
/// only (its probabilities are rounded to bf16, 8 bits, before they enter a
/// product, so an exp good to ~2^-22 changes nothing that shows):
/// ex2.approx.ftz.f32, one MUFU.EX2 instead of expApprox's ~20 instructions.
/// The PTX ISA bounds its error to about 2 ulp (relative ~2^-22); it
/// flushes subnormal inputs and results to 0, and 2^-inf = +0, so masked
/// scores give exactly 0. The host (and the SIMT emulator) compute exp2f,
/// correctly rounded or within an ulp of it, and flush results below 2^-126
/// to +0 as the GPU does: host and GPU may differ by an ulp or two.
TFC_HD float fastExp2(float x) {
#if defined(__CUDA_ARCH__) && !defined(TFC_SIMT)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
#if defined(__CUDACC__)
  const float y = exp2f(x);
#else
  const float y = std::exp2(x);
#endif
  return y < 1.17549435e-38f ? 0.0f : y; // FLT_MIN: ftz
#endif
}

//===----------------------------------------------------------------------===//
// Warp butterflies
//===----------------------------------------------------------------------===//

/// The order every warp reduction here uses, on the host: step o = 16, 8, 4,
/// 2, 1 (from Lanes / 2: Warp.cuh's warpSum<Lanes>) sets lane l to v[l] +
/// v[l ^ o] (__shfl_xor_sync on the device, where lane l adds what lane
/// l ^ o holds). Addition commutes, so after each step lanes l and l ^ o
/// hold the same bits and at the end all do.
template <int Lanes = kWarp> TFC_HD float butterflySum(const float (&lanes)[Lanes]) {
  float v[Lanes], next[Lanes];
  for (int l = 0; l < Lanes; ++l)
    v[l] = lanes[l];
  for (int o = Lanes / 2; o > 0; o /= 2) {
    for (int l = 0; l < Lanes; ++l)
      next[l] = v[l] + v[l ^ o];
    for (int l = 0; l < Lanes; ++l)
      v[l] = next[l];
  }
  return v[0];
}

//===----------------------------------------------------------------------===//
// Dropout: runtime/Philox.h's stream
//===----------------------------------------------------------------------===//

struct PhiloxWords {
  uint32_t w[4];
};

/// Philox4x32-10 (runtime/Philox.h's philox4x32, without std::array).
TFC_HD PhiloxWords philox4x32(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0,
                              uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(0xD2511F53u) * c0, p1 = uint64_t(0xCD9E8D57u) * c2;
    const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    c1 = uint32_t(p1);
    c3 = uint32_t(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

/// The words that decide elements 4g .. 4g + 3 of dropout op `key` under
/// `seed`: counter {g lo, g hi, key hi, 0}, key {seed, key lo} (Philox.h's
/// dropoutWords).
TFC_HD PhiloxWords dropoutWords(uint32_t seed, uint64_t key, uint64_t group) {
  return philox4x32(uint32_t(group), uint32_t(group >> 32), uint32_t(key >> 32), 0u, seed,
                    uint32_t(key));
}

/// tfc_dropout_mask's byte: 1 (dropped) when the word is below threshold =
/// ceil(rate * 2^32).
TFC_HD uint8_t dropped(uint32_t word, uint32_t threshold) { return word < threshold ? 1 : 0; }

/// Inverted dropout of one element as tf.dropout's lowerings apply it
/// (LinalgBuilders.h's applyDropout): 0 when its word is below threshold,
/// else value / keep (keep = the f32 1 - rate; an IEEE division).
TFC_HD float droppedOut(float value, uint32_t word, uint32_t threshold, float keep) {
  return word < threshold ? 0.0f : value / keep;
}

/// The word of dropout op `key` under `seed` that decides its element
/// `index` (word index % 4 of dropoutWords(index / 4)), chosen by selects:
/// indexed by a run-time lane, the words would go to a GPU's local memory.
TFC_HD uint32_t dropoutWord(uint32_t seed, uint64_t key, uint64_t index) {
  const PhiloxWords words = dropoutWords(seed, key, index / 4);
  const uint64_t lane = index % 4;
  return lane == 0 ? words.w[0] : lane == 1 ? words.w[1] : lane == 2 ? words.w[2] : words.w[3];
}

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

/// Forward, as tf.layer_norm lowers (LowerToLinalg.cpp LayerNormLowering;
/// separate roundings, no FMA): mean = sum / d, var = Σ (x - mean)^2 / d,
/// y = (x - mean) rstd gamma + beta with rstd = 1 / sqrt(var + eps).
TFC_HD float layerNormMean(float sum, int64_t d) { return sum / float(d); }
TFC_HD float layerNormSquare(float x, float mean) {
  const float c = x - mean;
  return c * c;
}
TFC_HD float layerNormRstd(float squares, int64_t d, float eps) {
  return 1.0f / squareRoot(squares / float(d) + eps);
}
TFC_HD float layerNormOut(float x, float mean, float rstd, float gamma, float beta) {
  return (x - mean) * rstd * gamma + beta;
}
/// tf.relu as it lowers (arith.maximumf(x, 0)): NaN stays NaN, -0 becomes
/// +0. The forward kernel's relu flag (relu(layer_norm(x)) in one pass).
TFC_HD float reluOf(float x) { return x > 0.0f || x != x ? x : 0.0f; }
/// An adjoint through a ReLU whose output is `gate`, as relu's gradient
/// selects it (tf.select of gate > 0): g, or +0 (a NaN gate too).
TFC_HD float gatedGrad(float g, float gate) { return gate > 0.0f ? g : 0.0f; }

/// Backward, as runtime/cpu/LayerNorm.cpp's rowBackward (its products
/// summed with FMAs, as GCC contracts them): mean = Σx / d (times 1/d),
/// rstd = 1 / sqrt(Σ(x - mean)^2 / d + eps), x̂ = (x - mean) rstd,
/// dx̂ = g gamma, a = mean(dx̂), b = mean(dx̂ x̂), dx = rstd (dx̂ - a - x̂ b).
TFC_HD float layerNormBackwardRstd(float squares, float invD, float eps) {
  return 1.0f / squareRoot(fusedMulAdd(squares, invD, eps));
}
TFC_HD float layerNormXhat(float x, float mean, float rstd) { return (x - mean) * rstd; }
TFC_HD float layerNormDx(float dxhat, float xhat, float rstd, float a, float b) {
  return rstd * fusedMulAdd(-xhat, b, dxhat - a);
}

/// Rows a block of the backward on the GPU (the compiled code's blockRows
/// there; the CPU's are 64): two a warp, so that the medium encoder's 8,192
/// rows are 512 blocks, four an SM at 64 registers. With 64 rows they were
/// 128 blocks, one an SM: ncu on an H200 saw 8 warps an SM (12.5%
/// occupancy, 0.24 waves) waiting on L1, 99 us a call, 1.1 ms of the step.
constexpr int64_t kLayerNormBackwardBlockRows = 16;
/// The backward's blocks an SM (__launch_bounds__): at most 64 registers a
/// thread (ptxas took 128 for the segments' loads, two blocks an SM).
constexpr int kLayerNormBackwardBlocksPerSm = 4;
/// The forward's blocks an SM (__launch_bounds__): at most 48 registers a
/// thread. Left to itself ptxas took 40 with its residual sum's divisions
/// (their slow path a call) and saved registers around the calls in a
/// 12-24 byte stack frame; 48 (sm_80 and sm_90) need none, 40 warps an SM.
constexpr int kLayerNormForwardBlocksPerSm = 5;

/// The backward's dgamma and dbeta: each row block's partial sums (2 x blocks
/// x d floats of scratch), added in kLayerNormSegments segments of
/// layerNormSegmentBlocks consecutive row blocks each (the last ones short or
/// empty), each segment in block order from 0 and the segments' sums in
/// segment order from 0, empty ones skipped: a warp a segment and a lane a
/// column, so a block's 8 warps all load. The last block of the backward
/// launch adds them itself (one launch) when they are at most
/// kLayerNormLastBlockPartials floats; past that the reduce kernel does, a
/// block a slice of kLayerNormReduceColumns columns, in a second launch. The
/// bound is an estimate: each thread keeps 16 loads in flight
/// (kLayerNormPartialsStage blocks of both sums), 16 KiB a block at an L2
/// latency of ~0.5 us, so 2^17 floats take one SM ~4 us, about what a second
/// graph node costs on an H200.
constexpr int64_t kLayerNormLastBlockPartials = int64_t(1) << 17;
constexpr int kLayerNormPartialsStage = 8;  // blocks' partials a thread loads before adding
constexpr int kLayerNormReduceColumns = 32; // the reduce kernel's columns a block
constexpr int kLayerNormSegments = kLayerNormThreads / kWarp; // a warp a segment
TFC_HD int64_t layerNormSegmentBlocks(int64_t blocks) {
  return (blocks + kLayerNormSegments - 1) / kLayerNormSegments;
}
TFC_HD bool layerNormLastBlockAdds(int64_t blocks, int64_t d) {
  return 2 * blocks * d <= kLayerNormLastBlockPartials;
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

/// The label as the CPU lowering reads it: clamped into [0, classes).
TFC_HD int64_t clampLabel(int32_t label, int64_t classes) {
  const int64_t l = label < 0 ? 0 : int64_t(label);
  return l > classes - 1 ? classes - 1 : l;
}

/// A row's loss, -log_softmax(x)[label] = -((x[label] - max) - log Σ
/// exp(x - max)), as the lowering's 0 - logp[label].
TFC_HD float crossEntropyLoss(float xLabel, float max, float sumExp) {
#if defined(__CUDA_ARCH__)
  const float logSum = logf(sumExp);
#else
  const float logSum = std::log(sumExp);
#endif
  return 0.0f - ((xLabel - max) - logSum);
}

/// d loss / d x for one logit: (softmax - onehot) coef, coef the adjoint of
/// the row's loss (the mean's adjoint / label count).
TFC_HD float crossEntropyGrad(float x, float max, float sumExp, bool isLabel, float coef) {
  const float p = expApprox(x - max) / sumExp;
  return (p - (isLabel ? 1.0f : 0.0f)) * coef;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Whether the tensor-core kernels take heads of these widths (the
/// runtime launches the fp32 kernels for any other).
TFC_HD bool attentionTensorCoreShape(int64_t d, int64_t dv) {
  return d > 0 && dv > 0 && d % 16 == 0 && dv % 16 == 0 && d <= kAttentionTcMaxDim &&
         dv <= kAttentionTcMaxDim;
}

/// x rounded to bf16, round to nearest even (__float2bfloat16_rn; NaN stays
/// a NaN): the upper 16 bits of the float this returns are the bf16.
TFC_HD uint16_t bf16Bits(float x) {
  const uint32_t bits = floatBits(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40u); // a quiet NaN
  return uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
TFC_HD float bf16Float(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }
TFC_HD float roundBf16(float x) { return bf16Float(bf16Bits(x)); }
/// gatedGrad with the gate as its bf16 bits (a layer norm forward's y16,
/// runtime/Abi.h's layer_norm_backward GateBits): the bits widened, so a
/// NaN still closes the gate; a positive y of at most 2^-134 (a bf16 zero)
/// closes it too.
TFC_HD float gatedGradBits(float g, uint16_t gate) { return gatedGrad(g, bf16Float(gate)); }

/// The attention backward's gradsBf16: which of dq, dk and dv it stores as
/// bf16 bits alone (runtime/Abi.h's attention::kDqBf16, kDkBf16, kDvBf16;
/// dk and dv together or neither).
inline constexpr int64_t kAttentionDqBf16 = 1, kAttentionDkBf16 = 2, kAttentionDvBf16 = 4;
/// The attention kernels' inputsBf16: q, k and v as bf16 bits
/// (runtime/Abi.h's attention::kQkvBf16; the tensor-core kernels'), and,
/// with it, the backward's dO (kDoBf16).
inline constexpr int64_t kAttentionQkvBf16 = 1, kAttentionDoBf16 = 2;
/// gradsBf16 when it is 0: a kernel body instantiated with it stores f32
/// alone, with no test and no register for the flags (the tensor-core dq
/// and the wgmma dkv spilled with them, at 168 and 255 registers).
struct NoBf16Grads {
  TFC_HD int64_t operator&(int64_t) const { return 0; }
};
/// gradsBf16 when every gradient a kernel stores is bf16 (dq; dk and dv):
/// no test either.
struct AllBf16Grads {
  TFC_HD int64_t operator&(int64_t bit) const { return bit; }
};
/// An attention output's element `index`: the f32 value, or its bf16Bits
/// in a tensor of 2-byte elements (tf-bf16-gemm-operands: a GEMM's copy).
TFC_HD void storeAs(float *base, long long index, float value) { base[index] = value; }
TFC_HD void storeAs(uint16_t *base, long long index, float value) { base[index] = bf16Bits(value); }
/// store(base): base the f32 tensor `f32`, or with `bits` the same memory
/// as 2-byte elements at the same indices. One branch a loop of stores,
/// not one an element: the kernels' loops run at 230-255 registers, and a
/// test at each store cost ptxas spills. Indices, not pointers, from the
/// kernel's parameters: nothing more is held across the loops.
template <typename Store> TFC_HD void asStored(float *f32, bool bits, const Store &store) {
  if (bits)
    store(reinterpret_cast<uint16_t *>(f32));
  else
    store(f32);
}

/// The fp32 kernels' work units, each a block's for one turn of its
/// grid-stride loop (a grid of this many blocks is one unit a block):
/// forward: heads x 64-row query tiles x 64-column slices of dv; dq: the
/// same with slices of d; dk/dv: heads x 64-key tiles x slices of the wider
/// of d and dv.
TFC_HD int64_t attentionCeil(int64_t n, int64_t tile) { return (n + tile - 1) / tile; }
TFC_HD int64_t attentionForwardUnits(int64_t heads, int64_t tq, int64_t dv) {
  return heads * attentionCeil(tq, kAttentionRows) * attentionCeil(dv, kAttentionColumns);
}
TFC_HD int64_t attentionDqUnits(int64_t heads, int64_t tq, int64_t d) {
  return heads * attentionCeil(tq, kAttentionRows) * attentionCeil(d, kAttentionColumns);
}
TFC_HD int64_t attentionDkvUnits(int64_t heads, int64_t tk, int64_t d, int64_t dv) {
  return heads * attentionCeil(tk, kAttentionDkvKeys) *
         attentionCeil(d > dv ? d : dv, kAttentionColumns);
}

/// The fp32 attention kernels' sum of one row's kAttentionRows values of a
/// tile (probabilities, or P dP), on the host: in attention.cu the row's 16
/// threads each add their 4 values in order from 0, then butterflies ^ 8,
/// 4, 2, 1 over the 16 (butterflySum's order on 16 lanes).
TFC_HD float attentionTileSum(const float (&x)[kAttentionRows]) {
  constexpr int threads = kAttentionRows / 4;
  float v[threads];
  for (int t = 0; t < threads; ++t) {
    float sum = 0.0f;
    for (int j = 0; j < 4; ++j)
      sum += x[4 * t + j];
    v[t] = sum;
  }
  return butterflySum<threads>(v);
}

/// The score of a masked-out key (the tutorials' masked_fill), as the CPU.
constexpr float kMaskedScore = -9e15f;

/// s = Σ_k q[k] (scale K[k]) in k order, one FMA chain from 0: the CPU
/// kernel's product with its pre-scaled K^T.
TFC_HD float attentionScore(const float *q, const float *k, int64_t d, float scale) {
  float s = 0.0f;
  for (int64_t c = 0; c < d; ++c)
    s = fusedMulAdd(q[c], scale * k[c], s);
  return s;
}

/// dP_ij = Σ_c dO[c] V[c], one FMA chain from 0.
TFC_HD float attentionDot(const float *a, const float *b, int64_t n) {
  float s = 0.0f;
  for (int64_t c = 0; c < n; ++c)
    s = fusedMulAdd(a[c], b[c], s);
  return s;
}

/// A row's online-softmax state after some key tiles: m the largest score,
/// l = Σ exp(s - m), and (backward) dot = Σ exp(s - m) dP.
struct OnlineRow {
  float m, l, dot;
};

/// The rescaling of a row's sums when its maximum grows from m to mNew:
/// exp(m - mNew), and 0 before the first tile (the sums are then empty).
TFC_HD float onlineAlpha(bool first, float m, float mNew) {
  return first ? 0.0f : expApprox(m - mNew);
}

/// One key tile folded into the row: tileSum = Σ_tile exp(s - mNew) (and
/// tileDot = Σ_tile exp(s - mNew) dP), alpha = onlineAlpha(...).
TFC_HD OnlineRow onlineFold(const OnlineRow &row, float mNew, float alpha, float tileSum,
                            float tileDot) {
  return {mNew, fusedMulAdd(row.l, alpha, tileSum), fusedMulAdd(row.dot, alpha, tileDot)};
}

/// dS_ij = (scale live) (P_ij (dP_ij - D_i)), 0 for a row with every key
/// masked (live = 0), as the CPU kernel.
TFC_HD float attentionDs(float p, float dp, float D, float scaleLive) {
  return scaleLive * (p * (dp - D));
}

/// The tensor-core kernels' softmax is in base 2: scores times
/// attentionTcScale(scale) = scale log2(e), one multiply a score, and
/// P = fastExp2(s2 - m2) with m2 the row's maximum of those (the same P as
/// exp(scale s - m), up to roundings of an ulp or two).
constexpr float kLog2e = 1.44269504088896341f;
TFC_HD float attentionTcScale(float scale) { return scale * kLog2e; }

/// The tensor-core kernels' dS_ij = P_ij (dP_ij scaleLive - DScaled), with
/// DScaled = D_i scaleLive once a row: one FMA and one multiply an element
/// instead of attentionDs' three operations, within an ulp or two of it
/// (and 0 for a dead row, scaleLive = 0) before dS is rounded to bf16.
TFC_HD float attentionTcDs(float p, float dp, float DScaled, float scaleLive) {
  return p * fusedMulAdd(dp, scaleLive, -DScaled);
}

/// Head b = (b / inner, b % inner) of a tensor with those strides (the
/// attention kernels' outer x inner heads).
template <typename T>
TFC_HD T *headOf(T *base, long long outerStride, long long innerStride, long long b,
                 long long inner) {
  return base + (b / inner) * outerStride + (b % inner) * innerStride;
}
/// headOf's offset: head b's first element's index in its tensor.
TFC_HD long long headIndex(long long outerStride, long long innerStride, long long b,
                           long long inner) {
  return (b / inner) * outerStride + (b % inner) * innerStride;
}

//===----------------------------------------------------------------------===//
// Small GEMMs (gemm_small.cu)
//===----------------------------------------------------------------------===//

constexpr int kSmallGemmThreads = 256; // 16 x 16 threads, 2 x 2 outputs each
constexpr int kSmallGemmTile = 32;     // a unit's tile of C, and K's chunk
/// The most multiply-adds (M N K, over the batch) sent to the small kernels:
/// the seed models' products; the medium encoder's (8.6 G) go to cuBLASLt.
constexpr long long kSmallGemmMaxWork = 1ll << 25;
/// The most the runtime sends them by default: tiny products, where a
/// cuBLASLt call costs more than the work. On an H200 (twenty-second
/// session) encoder_decoder's step (every product at most 3,456) took 0.77
/// ms with the small kernels against 0.97 on cuBLASLt, and reverse's (at
/// least 655,360: 2,048 rows) 0.39 against 0.32.
constexpr long long kSmallGemmDefaultWork = 1ll << 16;

/// Whether a product of `items` M x N x K goes to gemm_small.cu.
TFC_HD bool smallGemmFits(long long m, long long n, long long k, long long items) {
  return m > 0 && n > 0 && k > 0 && items > 0 && m * n <= (1ll << 20) &&
         m * n * k * items <= kSmallGemmMaxWork;
}

/// K's slice a work unit sums: all of K, unless the tiles are too few to
/// fill the GPU (a weight gradient's 32 x 32 over K = 2,048 is one tile):
/// then slices of at least 128 (a multiple of the tile) until about 64
/// units. A function of the shape alone, so the order of every sum is too.
TFC_HD long long smallGemmSlice(long long m, long long n, long long k, long long items) {
  const long long tiles = ((m + kSmallGemmTile - 1) / kSmallGemmTile) *
                          ((n + kSmallGemmTile - 1) / kSmallGemmTile) * items;
  long long slices = tiles >= 64 ? 1 : (64 + tiles - 1) / tiles;
  const long long most = (k + 127) / 128; // slices of at least 128
  if (slices > most)
    slices = most;
  if (slices <= 1)
    return k;
  const long long per = (k + slices - 1) / slices;
  return (per + kSmallGemmTile - 1) / kSmallGemmTile * kSmallGemmTile;
}

/// A bias gradient's column sums over K rows (tfc_cuda_column_sums_kernel):
/// parts of kColumnSumsPart rows, 32 columns a unit; more than one part goes
/// through scratch (parts x cols floats) and the finish kernel.
constexpr long long kColumnSumsPart = 256;
struct ColumnSumsPlan {
  long long part, parts, units;
};
TFC_HD ColumnSumsPlan columnSumsPlan(long long rows, long long cols) {
  const long long parts = rows > kColumnSumsPart ? (rows + kColumnSumsPart - 1) / kColumnSumsPart : 1;
  return {parts > 1 ? kColumnSumsPart : (rows > 0 ? rows : 1), parts, parts * ((cols + 31) / 32)};
}

/// How a product of `items` M x N x K runs on gemm_small.cu's kernels
/// (`reduction`: the items summed into one C): the slice of K a unit sums,
/// the units, and, when partial tiles are kept (several slices, or a
/// reduction), the finish kernel's outputs and parts and the scratch floats.
struct SmallGemmPlan {
  long long slice, units;
  bool partial;
  long long outputs, parts, partialFloats;
};
TFC_HD SmallGemmPlan smallGemmPlan(long long m, long long n, long long k, long long items,
                                   bool reduction) {
  SmallGemmPlan plan{};
  plan.slice = smallGemmSlice(m, n, k, items);
  const long long slices = (k + plan.slice - 1) / plan.slice;
  plan.units = ((m + kSmallGemmTile - 1) / kSmallGemmTile) *
               ((n + kSmallGemmTile - 1) / kSmallGemmTile) * slices * items;
  plan.partial = slices > 1 || (reduction && items > 1);
  plan.outputs = reduction ? 1 : items;
  plan.parts = reduction ? items * slices : slices;
  plan.partialFloats = plan.partial ? items * slices * m * n : 0;
  return plan;
}

/// Whether the product kernel's last block adds the partial tiles (`plan`)
/// and a bias gradient's parts (`sumParts` x `sumCols`, 0 without one), one
/// launch in all: where one block reads at most kLayerNormLastBlockPartials
/// of them (the layer norm backward's estimate); else the finish kernel
/// does, a launch each.
TFC_HD bool smallGemmLastBlockFinishes(const SmallGemmPlan &plan, long long m, long long n,
                                       long long sumParts, long long sumCols) {
  const long long reads = (plan.partial ? plan.outputs * plan.parts * m * n : 0) +
                          (sumParts > 1 ? sumParts * sumCols : 0);
  return reads <= kLayerNormLastBlockPartials;
}
/// The same for the column-sums kernel alone (a bias gradient beside a
/// cuBLASLt product): `parts` x `cols` partial sums.
TFC_HD bool columnSumsLastBlockAdds(long long parts, long long cols) {
  return parts * cols <= kLayerNormLastBlockPartials;
}

} // namespace tfc::rt::cuda::kernels

#endif // TFC_RUNTIME_CUDA_KERNELS_KERNELMATH_H
