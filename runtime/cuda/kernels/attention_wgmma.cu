//===- attention_wgmma.cu - attention on Hopper's wgmma -------------------===//
//
// defines: tfc_cuda_attention_wgmma_forward_kernel,
//          tfc_cuda_attention_wgmma_forward_bf16_kernel,
//          tfc_cuda_attention_wgmma_forward_serial_kernel,
//          tfc_cuda_attention_wgmma_forward_wide_kernel,
//          tfc_cuda_attention_wgmma_backward_dq_kernel,
//          tfc_cuda_attention_wgmma_backward_dq_serial_kernel,
//          tfc_cuda_attention_wgmma_backward_dq_bf16_kernel,
//          tfc_cuda_attention_wgmma_backward_dq_wide_kernel,
//          tfc_cuda_attention_wgmma_backward_dkv_kernel,
//          tfc_cuda_attention_wgmma_backward_dkv_serial_kernel,
//          tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel
//
// attention_tc.cu's three kernels on Hopper's warpgroup MMA, behind
// TFC_ATTENTION_WGMMA=1 (off: never yet run on a GPU). Its image has SASS
// for sm_90a alone (Kernels.h's optional image): elsewhere the runtime
// loads none of it and keeps attention_tc.cu's kernels. tfc-kernel-check
// checks these against the CPU as its "wgmma" family and --bench-attention
// times them; the wgmma probe (tools/gpu/wgmma_probe.cu) checks the layouts
// they rest on. On the SIMT emulator's wgmma (tests/simt) they pass those
// checks and give attention_tc.cu's bytes (SimtKernelsTest). The
// tensor-core kernels' mma.sync reaches about two thirds of the dense peak
// at best; issue 28 asks for half of it.
//
// attention_tc.cu's forward kernel (its parameters, its semantics and its
// softmax: scoreTile's base-2 scores, the online maximum, fastExp2, the
// statistics it stores), for heads of d = dv = 64 (others return at once),
// with both products on wgmma.mma_async m64n64k16 (Wgmma.cuh): a block is
// one warpgroup (4 warps) and 64 queries; warp w's rows of S and O are
// 16w .. 16w + 15 in mma.sync's C layout (WgmmaProbe.h's accumulatorAt), so
// the tile code of attention_tc.cu (scoreTile, accA, quadMax, quadSum)
// applies to them unchanged.
//  - Q, K and V tiles are staged in shared memory as bf16 in the 128-byte
//    swizzle (rows of 64: 128 bytes; row r's 16-byte chunk c at chunk
//    c ^ (r % 8)), 1024-byte aligned: Q and K as K-major operands (SBO
//    1,024 bytes, k-steps 32 bytes apart), V as P V's B, MN-major
//    (imm-trans-b 1; k-steps 16 rows, 2,048 bytes apart): the layouts the
//    wgmma probe checks (wgmma_probe.cu).
//  - S = Q K^T: 4 wgmma from shared memory, then the online softmax in
//    registers as attention_tc.cu's forward; P, rounded to bf16, is the A
//    operand of O += P V straight from registers (accA: the C fragments of
//    keys 16s .. 16s + 15 are k-step s's A fragment), 4 wgmma.
//  - Staging: a thread's 4 chunks of 8 columns a tile (rows f / 8 for f =
//    thread + 128 i), 2 float4 loads a chunk, one 16-byte store (a
//    quarter-warp's 8 stores fill a row: no bank conflict). Aligned rows:
//    the next tiles are loaded into registers during this tile's products
//    and stored into the other buffers after them (one barrier a tile), as
//    attention_tc.cu's forward. q, k and v as bf16 bits (kAttentionQkvBf16)
//    are chunks of the swizzled tile as they are: cp.async copies them
//    (CpAsync.cuh) into the buffers as soon as those are free, waited for
//    where f32 tiles are stored (TileStaging); the forward's bf16 kernel
//    runs that path alone, in 3 blocks an SM.
//  - Pipelined within the warpgroup (FlashAttention-3's intra-warpgroup
//    overlap): key tile t's S is issued with tile t - 1's P V, and waited
//    for alone (wait_group 1): the softmax runs while the tensor cores
//    still add P V, waited for before O is rescaled. O's operations keep
//    attention_tc.cu's order, so its bits. The _serial kernels wait for
//    each group at once (3 blocks an SM against 2): tfc-kernel-check's
//    "wgmma, serial" family, an A/B for the first GPU that runs these.
//  - The wide forward and dq (_wide, the "wide" family, another A/B): two
//    warpgroups a block (256 threads), 128 queries sharing each staged key
//    tile: half the loads and conversions of K and V a query. dq's eight
//    tiles (64 KiB) are dynamic shared memory, past the static 48 KiB.
// The backward's dq and dkv (attention_tc.cu's, the same parameters) take
// wgmma on the runtime's way, rows' statistics given (the forward's, or for
// dkv dq's in scratch) and no dS stored: dq per key tile S = Q K^T and
// dP = dO V^T from shared memory, dQ += dS K (dS from registers, K
// MN-major: the tile S read K-major), that product issued with the next
// tile's S and dP (pipelined as the forward; _serial: not); dkv with its 64
// keys' K and V staged once, per query tile S^T = K Q^T and dP^T = V dO^T,
// dV += P^T dO and dK += dS^T Q (Q and dO MN-major), the latter two issued
// with the next query tile's S^T and dP^T where dq's statistics are given
// (scratch, the runtime's way: Q and dO double-buffered in 48 KiB, the
// rows' statistics read from scratch as used), unpipelined on the
// forward's (and in _serial). Other ways (no statistics, dS stored) run
// attention_tc.cu's own loops (mma.sync) in the same shared memory. The
// wide dkv: 128 keys, each warpgroup's K, V and P^T (dV's A, through
// shared memory: in registers it spilled) its own, on dq's statistics alone.
// The bf16 dq and dkv: q, k, v and dO as bits (dkv: dk and dv stored as
// bits) on the runtime's statistics, K (dkv: Q and dO) in three buffers
// (tile t - 1's is read by the products issued at iteration t), copied by
// cp.async. ptxas (sm_90a): forward 212 (bf16 164, serial 164, wide 175),
// dq 249 (bf16 168, serial 249, wide 254), dkv 255 (bf16 255, serial 255,
// wide 255) registers, no spills.
// Launch: 128 threads (the wide kernels 256), grid.x any (heads x
// ceil(tq / 64) units, the wide kernels' ceil(tq / 128); dkv heads x
// ceil(tk / 64), the wide dkv's ceil(tk / 128)). Static shared memory 40
// (wide 48), 48 and 48 KiB; the bf16 dq 57 and dkv 65 KiB dynamic, the wide dq 65 KiB dynamic
// (kAttentionWgmmaWideDqShared), the wide dkv 81 (...DkvShared). Compiled
// for sm_90a only; the bodies are empty elsewhere.
//
//===----------------------------------------------------------------------===//

#define TFC_ATTENTION_TC_NO_KERNELS // its loops and tiles, not its kernels
#include "runtime/cuda/kernels/CpAsync.cuh"
#include "runtime/cuda/kernels/Wgmma.cuh"
#include "runtime/cuda/kernels/attention_tc.cu"

#include <type_traits>

namespace {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// A 64 x 64 bf16 tile in the 128-byte swizzle: row r's chunk c (columns
/// 8c .. 8c + 7) at chunk 8r + (c ^ r % 8).
struct alignas(1024) SwizzledTile {
  uint4 chunk[kRows * 8];
};

/// A thread's share of a tile between its loads and its store, Items of
/// the tile's 512 chunks (a block of 512 / Items threads): chunk f =
/// thread + (512 / Items) i is row f / 8, columns 8 (f % 8) .. + 7.
template <int Items> struct SwizzledItems { float4 v[Items][2]; };
using SwizzledLoad = SwizzledItems<4>; // a warpgroup's block
template <bool Vec, int Items>
__device__ __forceinline__ void loadSwizzled(SwizzledItems<Items> &x, const SourceOf<float> &s) {
  const int f0 = int(thread());
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int f = f0 + 512 / Items * i, r = f / 8, c = 8 * (f % 8);
    x.v[i][0] = load4<Vec>(s, r, c);
    x.v[i][1] = load4<Vec>(s, r, c + 4);
  }
}
template <int Items>
__device__ __forceinline__ void storeSwizzled(SwizzledTile &t, const SwizzledItems<Items> &x) {
  const int f0 = int(thread());
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int f = f0 + 512 / Items * i, r = f / 8, c = f % 8;
    const float4 &a = x.v[i][0], &b = x.v[i][1];
    t.chunk[8 * r + (c ^ (r & 7))] = make_uint4(packFloats(a.x, a.y), packFloats(a.z, a.w),
                                                packFloats(b.x, b.y), packFloats(b.z, b.w));
  }
}

/// bf16 bits (q, k and v under kAttentionQkvBf16) copied by cp.async
/// straight into the swizzle, the chunks of SwizzledItems' threads (Vec:
/// one 16-byte copy a chunk, every head's rows 16-byte aligned; else two
/// of 8 bytes), zeros past the rows: the tile storeSwizzled makes of f32
/// holding the same values, without registers.
template <bool Vec, int Items>
__device__ __forceinline__ void copySwizzled(SwizzledTile &t, const SourceOf<uint16_t> &s) {
  const int f0 = int(thread());
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int f = f0 + 512 / Items * i, r = f / 8, c = f % 8;
    const bool present = s.row0 + r < s.rows;
    const uint16_t *from = present ? s.base + (s.row0 + r) * s.row + 8 * c : s.base;
    uint4 *to = &t.chunk[8 * r + (c ^ (r & 7))];
    if (Vec) {
      cpAsync<16>(to, from, present);
    } else {
      cpAsync<8>(to, from, present);
      cpAsync<8>(reinterpret_cast<char *>(to) + 8, from + 4, present);
    }
  }
}
/// Whether every head's rows of bf16 bits are 16-byte aligned
/// (copySwizzled's Vec; the runtime guarantees 8).
__device__ __forceinline__ bool rowsAligned16(const uint16_t *base, i64 outer, i64 inner, i64 row) {
  return reinterpret_cast<uintptr_t>(base) % 16 == 0 && outer % 8 == 0 && inner % 8 == 0 &&
         row % 8 == 0;
}

/// A tile's way into shared memory, for inputs of type T: f32 through
/// the thread's registers (x: loaded, then rounded and stored), bf16 bits
/// by cp.async. fetch starts it (bf16: the copies; f32: the loads, where
/// Vec, so that they land during the products), land ends it (f32: the
/// loads where not Vec, the stores); the copies are committed as a group
/// and waited for (commit, wait) before the barrier after land.
template <typename T, bool Vec, int Items> struct TileStaging {
  static constexpr bool kAsync = std::is_same<T, uint16_t>::value;
  SwizzledItems<Items> x;
  __device__ __forceinline__ void fetch(SwizzledTile &t, const SourceOf<T> &s) {
    if constexpr (kAsync)
      copySwizzled<Vec, Items>(t, s);
    else if (Vec)
      loadSwizzled<Vec>(x, s);
  }
  __device__ __forceinline__ void land(SwizzledTile &t, const SourceOf<T> &s) {
    if constexpr (!kAsync) {
      if (!Vec)
        loadSwizzled<Vec>(x, s);
      storeSwizzled(t, x);
    }
  }
  __device__ __forceinline__ static void commit() {
    if constexpr (kAsync)
      cpAsyncCommit();
  }
  __device__ __forceinline__ static void wait() {
    if constexpr (kAsync)
      cpAsyncWait<0>();
  }
};

/// k-step s of a K-major operand (Q, K: rows of the product's M or N, 64
/// of K), and of V as P V's MN-major B (rows of K).
__device__ __forceinline__ uint64_t kMajor(const SwizzledTile &t, int s) {
  return wgmmaDescriptor(&t, 32u * uint32_t(s), 16, 1024, 1);
}
__device__ __forceinline__ uint64_t mnMajor(const SwizzledTile &t, int s) {
  return wgmmaDescriptor(&t, 2048u * uint32_t(s), 8192, 1024, 1);
}

/// The forward's loop (attention_tc.cu's forward, its products on wgmma),
/// software-pipelined as FlashAttention-3 does within a warpgroup: key
/// tile t's S = Q K_t^T and the previous tile's O += P V are issued
/// together, and tile t's softmax runs while the tensor cores still add
/// P V (waited for only before O is rescaled). O's operations stay in
/// attention_tc.cu's order (... O += P_{t-1} V_{t-1}, O *= alpha_t,
/// O += P_t V_t ...): the same bits. V lags K by a tile: iteration t
/// stages K_{t+1} and V_t (registers during the products, Vec; stored
/// after them into the buffers the last iteration's products read).
/// Groups warpgroups a block (the wide forward: 2), each 64 of the unit's
/// 64 Groups queries, sharing the key tiles (each thread stages 1 / Groups
/// of what a warpgroup's would). Not Pipelined (the _serial kernel, one
/// warpgroup): each tile's S, softmax and P V in turn, each group waited
/// for at once, K and V staged together (164 registers: 3 blocks an SM).
/// q, k and v of type T (TileStaging): bf16 bits are copied by cp.async
/// into the buffers as soon as they are free (where f32 tiles are loaded
/// into registers), the same tiles, so the same bits.
template <bool Vec, int Groups, bool Pipelined, typename T>
__device__ __forceinline__ void
wgmmaForward(i64 outer, i64 inner, i64 tq, i64 tk, float scale, const T *__restrict__ q, i64 qOuter,
             i64 qInner, i64 qRow, const T *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow,
             const T *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
             const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
             float *__restrict__ out, i64 outOuter, i64 outInner, i64 outRow,
             float *__restrict__ stats, uint16_t *__restrict__ out16, SwizzledTile (&sQ)[Groups],
             SwizzledTile (&sK)[2], SwizzledTile (&sV)[2]) {
  constexpr i64 kDim = 64, kUnit = kRows * Groups;
  constexpr int kItems = 4 / Groups;
  const i64 heads = outer * inner;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp % 4, g = lane / 4, t = lane % 4;
  // This warpgroup's 64 queries (0 where the block is one: fewer registers).
  const int group = Groups == 1 ? 0 : int(threadIdx.x) / kAttentionTcThreads;
  const i64 queryBlocks = (tq + kUnit - 1) / kUnit, keyTiles = (tk + kRows - 1) / kRows;
  for (i64 unit = blockIdx.x; unit < heads * queryBlocks; unit += gridDim.x) {
    const i64 b = unit / queryBlocks, i0 = (unit % queryBlocks) * kUnit,
              r0 = i0 + kRows * group + warp * 16; // this warp's first query
    const T *K = headOf(k, kOuter, kInner, b, inner);
    const T *V = headOf(v, vOuter, vInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    using Staging = TileStaging<T, Vec, kItems>;
    Staging kx, vx;
    __syncthreads(); // the last unit's tiles are read
#pragma unroll
    for (int qt = 0; qt < Groups; ++qt) {
      const SourceOf<T> sq =
          source(headOf(q, qOuter, qInner, b, inner), qRow, i0 + kRows * qt, tq, kDim);
      kx.fetch(sQ[qt], sq);
      kx.land(sQ[qt], sq);
    }
    kx.fetch(sK[0], source(K, kRow, 0, tk, kDim));
    kx.land(sK[0], source(K, kRow, 0, tk, kDim));
    if constexpr (!Pipelined) { // V_0 too: each tile's P V follows its softmax at once
      vx.fetch(sV[0], source(V, vRow, 0, tk, kDim));
      vx.land(sV[0], source(V, vRow, 0, tk, kDim));
    }
    Staging::commit();
    Staging::wait();
    sharedStoresToAsyncProxy();
    __syncthreads();
    float o[8][4] = {}, m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    bool live[2] = {};
    if constexpr (!Pipelined) { // each group waited for at once
      for (i64 j0 = 0; j0 < tk; j0 += kRows) {
        const int cur = int(j0 / kRows) & 1;
        const bool next = j0 + kRows < tk;
        if (next) { // the next tile lands while the tensor cores work (Vec, bf16)
          kx.fetch(sK[cur ^ 1], source(K, kRow, j0 + kRows, tk, kDim));
          vx.fetch(sV[cur ^ 1], source(V, vRow, j0 + kRows, tk, kDim));
          Staging::commit();
        }
        float s[8][4];
        wgmmaFence();
#pragma unroll
        for (int step = 0; step < 4; ++step)
          wgmmaSS<0>(reinterpret_cast<float(&)[32]>(s), kMajor(sQ[group], step),
                     kMajor(sK[cur], step), step > 0);
        wgmmaCommitAndWait();
        scoreTile(s, attentionTcScale(scale), M, maskRow, r0, tq, j0, tk, g, t, live);
        softmaxTile<4>(s, o, m, l, j0 == 0);
        uint32_t pa[4][4];
#pragma unroll
        for (int step = 0; step < 4; ++step)
          accA(pa[step], s[2 * step], s[2 * step + 1]);
        wgmmaFence();
#pragma unroll
        for (int step = 0; step < 4; ++step)
          wgmmaRS<1>(reinterpret_cast<float(&)[32]>(o), pa[step], mnMajor(sV[cur], step), 1);
        wgmmaCommitAndWait();
        if (next) { // into the other buffers, last read before the last barrier
          kx.land(sK[cur ^ 1], source(K, kRow, j0 + kRows, tk, kDim));
          vx.land(sV[cur ^ 1], source(V, vRow, j0 + kRows, tk, kDim));
          Staging::wait();
          sharedStoresToAsyncProxy();
        }
        __syncthreads(); // the next tile staged, this one read
      }
    } else {
      uint32_t pa[4][4]; // the last tile's P: its P V's A
      // Tile t's S = Q K_t^T issued (and the last tile's P V with it).
      auto issueScores = [&](float(&s)[8][4], int cur) {
        wgmmaFence();
#pragma unroll
        for (int step = 0; step < 4; ++step)
          wgmmaSS<0>(reinterpret_cast<float(&)[32]>(s), kMajor(sQ[group], step),
                     kMajor(sK[cur], step), step > 0);
        wgmmaCommit();
      };
    auto issueValues = [&](const SwizzledTile &sVt) {
#pragma unroll
      for (int step = 0; step < 4; ++step)
        wgmmaRS<1>(reinterpret_cast<float(&)[32]>(o), pa[step], mnMajor(sVt, step), 1);
      wgmmaCommit();
    };
    // K_{t+1} (if any) and V_t, loaded (Vec: already, during the
    // products) and stored into the buffers the last products read, or
    // copied there (bf16: since prefetch).
    auto stage = [&](i64 j0, int cur, bool nextK) {
      if (nextK)
        kx.land(sK[cur ^ 1], source(K, kRow, j0 + kRows, tk, kDim));
      vx.land(sV[cur], source(V, vRow, j0, tk, kDim));
      Staging::wait();
      sharedStoresToAsyncProxy();
      __syncthreads(); // K_{t+1} and V_t staged, this iteration's tiles read
    };
    // K_{t+1} and V_t land while the tensor cores work (Vec, bf16): their
    // buffers were last read by products waited for before the last barrier.
    auto prefetch = [&](i64 j0, int cur, bool nextK) {
      if (nextK)
        kx.fetch(sK[cur ^ 1], source(K, kRow, j0 + kRows, tk, kDim));
      vx.fetch(sV[cur], source(V, vRow, j0, tk, kDim));
      Staging::commit();
    };
    { // tile 0: its S alone
      const bool nextK = keyTiles > 1;
      prefetch(0, 0, nextK);
      float s[8][4];
      issueScores(s, 0);
      wgmmaWait<0>();
      scoreTile(s, attentionTcScale(scale), M, maskRow, r0, tq, 0, tk, g, t, live);
      float alpha[2];
      softmaxProbabilities(s, m, l, true, alpha);
      rescaleRows<4>(o, alpha);
#pragma unroll
      for (int step = 0; step < 4; ++step)
        accA(pa[step], s[2 * step], s[2 * step + 1]);
      stage(0, 0, nextK);
    }
    for (i64 tile = 1; tile < keyTiles; ++tile) { // S_t beside P_{t-1} V_{t-1}
      const i64 j0 = tile * kRows;
      const int cur = int(tile & 1); // K_t in sK[cur], V_{t-1} in sV[cur ^ 1]
      const bool nextK = tile + 1 < keyTiles;
      prefetch(j0, cur, nextK);
      float s[8][4];
      issueScores(s, cur);
      issueValues(sV[cur ^ 1]);
      wgmmaWait<1>(); // S; P V may still run
      scoreTile(s, attentionTcScale(scale), M, maskRow, r0, tq, j0, tk, g, t, live);
      float alpha[2];
      softmaxProbabilities(s, m, l, false, alpha);
      wgmmaWait<0>(); // P V added: O may be rescaled, pa and sV[cur ^ 1] reused
      rescaleRows<4>(o, alpha);
#pragma unroll
      for (int step = 0; step < 4; ++step)
        accA(pa[step], s[2 * step], s[2 * step + 1]);
      stage(j0, cur, nextK);
    }
    wgmmaFence(); // the last tile's P V
    issueValues(sV[int((keyTiles - 1) & 1)]);
    wgmmaWait<0>();
    }
    storeForwardRows<4>(out, headIndex(outOuter, outInner, b, inner), outRow, stats, o, m, l, live,
                        scale, b, r0, tq, kDim, g, t, out16);
  }
}

/// The dq kernel's loop on the forward's statistics (stats, not dS: what
/// the runtime launches): attention_tc.cu's backwardDq without its pass 1,
/// its products on wgmma. Per key tile: S = Q K^T and dP = dO V^T from
/// shared memory, P and dS = P (dP scale - D scale) in registers, dQ += dS K
/// with dS from registers and K MN-major (the tile S read K-major), issued
/// with the next tile's S and dP (Pipelined as the forward: dQ's sums in
/// the same order; else each group waited for at once, the _serial
/// kernel). With scratch, the rows' statistics and D stored for dkv, as
/// there. q, k, v and dO of type T (TileStaging): f32, or bf16 bits
/// (pipelined, one warpgroup: the bf16 dq kernel) copied by cp.async as
/// soon as their buffers are free; K_{t-1} is the B of dQ += dS K issued
/// at iteration t, so bf16 K tiles take three buffers (sK: KBuffers
/// tiles), K_{t+1} copied into K_{t-2}'s during the products.
template <bool Vec, bool Pipelined, int Groups, typename T>
__device__ __forceinline__ void
wgmmaDq(i64 outer, i64 inner, i64 tq, i64 tk, float scale, const T *__restrict__ q, i64 qOuter,
        i64 qInner, i64 qRow, const T *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow,
        const T *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
        const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
        const T *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
        float *__restrict__ dq, i64 dqOuter, i64 dqInner, i64 dqRow, const float *__restrict__ out,
        i64 outOuter, i64 outInner, i64 outRow, const float *__restrict__ stats,
        float *__restrict__ scratch, i64 gradsBf16, SwizzledTile *sQ, SwizzledTile *sdO,
        SwizzledTile *sK, SwizzledTile (&sV)[2]) {
  constexpr i64 kDim = 64, kUnit = kRows * Groups;
  constexpr int kItems = 4 / Groups;
  using Staging = TileStaging<T, Vec, kItems>;
  static_assert(!Staging::kAsync || (Pipelined && Groups == 1),
                "bf16 inputs: the pipelined one-warpgroup loop alone");
  constexpr int kKBuffers = Staging::kAsync ? 3 : 2;
  auto kBuffer = [](i64 tile) { return int(tile % kKBuffers); }; // K_tile's
  const i64 heads = outer * inner;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp % 4, g = lane / 4, t = lane % 4;
  const int group = Groups == 1 ? 0 : int(threadIdx.x) / kAttentionTcThreads;
  const i64 queryBlocks = (tq + kUnit - 1) / kUnit, keyTiles = (tk + kRows - 1) / kRows;
  const float scale2 = attentionTcScale(scale);
  for (i64 unit = blockIdx.x; unit < heads * queryBlocks; unit += gridDim.x) {
    const i64 b = unit / queryBlocks, i0 = (unit % queryBlocks) * kUnit,
              r0 = i0 + kRows * group + warp * 16; // this warp's first query
    const T *K = headOf(k, kOuter, kInner, b, inner);
    const T *V = headOf(v, vOuter, vInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    Staging kx, vx;
    __syncthreads(); // the last unit's tiles are read
#pragma unroll
    for (int qt = 0; qt < Groups; ++qt) { // each warpgroup's Q and dO
      const i64 q0 = i0 + kRows * qt;
      const SourceOf<T> sq = source(headOf(q, qOuter, qInner, b, inner), qRow, q0, tq, kDim),
                        sd = source(headOf(dout, doutOuter, doutInner, b, inner), doutRow, q0, tq,
                                    kDim);
      kx.fetch(sQ[qt], sq);
      vx.fetch(sdO[qt], sd);
      kx.land(sQ[qt], sq);
      vx.land(sdO[qt], sd);
    }
    kx.fetch(sK[0], source(K, kRow, 0, tk, kDim));
    vx.fetch(sV[0], source(V, vRow, 0, tk, kDim));
    kx.land(sK[0], source(K, kRow, 0, tk, kDim));
    vx.land(sV[0], source(V, vRow, 0, tk, kDim));
    Staging::commit();
    Staging::wait();
    sharedStoresToAsyncProxy();
    RowStats st[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) { // the forward's, D = dO . out (attention_tc.cu's savedRow)
      const float4 r = savedRow(stats, headOf(dout, doutOuter, doutInner, b, inner), doutRow,
                                headOf(out, outOuter, outInner, b, inner), outRow, b,
                                r0 + g + h * 8, tq, kDim, t);
      st[h] = {r.x, r.y, r.z, r.w};
    }
    if (scratch && t == 0)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const i64 i = r0 + g + h * 8;
        if (i < tq)
          reinterpret_cast<float4 *>(scratch)[b * tq + i] =
              make_float4(st[h].m, st[h].inv, st[h].DScaled, st[h].scaleLive);
      }
    __syncthreads(); // the tiles staged
    float acc[8][4] = {};
    if constexpr (!Pipelined) { // each group waited for at once
      for (i64 j0 = 0; j0 < tk; j0 += kRows) {
        const int cur = int(j0 / kRows) & 1;
        const bool next = j0 + kRows < tk;
        if (next) { // Vec: loaded during the products
          kx.fetch(sK[cur ^ 1], source(K, kRow, j0 + kRows, tk, kDim));
          vx.fetch(sV[cur ^ 1], source(V, vRow, j0 + kRows, tk, kDim));
        }
        float s[8][4], dp[8][4];
        wgmmaFence();
#pragma unroll
        for (int step = 0; step < 4; ++step)
          wgmmaSS<0>(reinterpret_cast<float(&)[32]>(s), kMajor(sQ[group], step),
                     kMajor(sK[cur], step), step > 0);
#pragma unroll
        for (int step = 0; step < 4; ++step)
          wgmmaSS<0>(reinterpret_cast<float(&)[32]>(dp), kMajor(sdO[group], step),
                     kMajor(sV[cur], step), step > 0);
        wgmmaCommitAndWait();
        probTile(s, scale2, st, M, maskRow, r0, tq, j0, tk, g, t);
        uint32_t da[4][4];
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const RowStats &r = st[e >> 1];
            s[n][e] = attentionTcDs(s[n][e], dp[n][e], r.DScaled, r.scaleLive); // now dS
          }
#pragma unroll
        for (int step = 0; step < 4; ++step)
          accA(da[step], s[2 * step], s[2 * step + 1]);
        wgmmaFence();
#pragma unroll
        for (int step = 0; step < 4; ++step)
          wgmmaRS<1>(reinterpret_cast<float(&)[32]>(acc), da[step], mnMajor(sK[cur], step), 1);
        wgmmaCommitAndWait();
        if (next) {
          kx.land(sK[cur ^ 1], source(K, kRow, j0 + kRows, tk, kDim));
          vx.land(sV[cur ^ 1], source(V, vRow, j0 + kRows, tk, kDim));
          sharedStoresToAsyncProxy();
        }
        __syncthreads();
      }
    } else {
      uint32_t da[4][4]; // the last tile's dS: its dQ += dS K's A
      // Tile t's S = Q K_t^T and dP = dO V_t^T issued.
      auto issueScores = [&](float(&s)[8][4], float(&dp)[8][4], i64 tile) {
        wgmmaFence();
#pragma unroll
        for (int step = 0; step < 4; ++step)
          wgmmaSS<0>(reinterpret_cast<float(&)[32]>(s), kMajor(sQ[group], step),
                     kMajor(sK[kBuffer(tile)], step), step > 0);
#pragma unroll
        for (int step = 0; step < 4; ++step)
          wgmmaSS<0>(reinterpret_cast<float(&)[32]>(dp), kMajor(sdO[group], step),
                     kMajor(sV[tile & 1], step), step > 0);
        wgmmaCommit();
      };
    auto issueDq = [&](const SwizzledTile &sKt) {
#pragma unroll
      for (int step = 0; step < 4; ++step)
        wgmmaRS<1>(reinterpret_cast<float(&)[32]>(acc), da[step], mnMajor(sKt, step), 1);
      wgmmaCommit();
    };
    // dS = P (dP scale - D scale) in s.
    auto gradients = [&](float(&s)[8][4], const float(&dp)[8][4], i64 j0) {
      probTile(s, scale2, st, M, maskRow, r0, tq, j0, tk, g, t);
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const RowStats &r = st[e >> 1];
          s[n][e] = attentionTcDs(s[n][e], dp[n][e], r.DScaled, r.scaleLive);
        }
    };
    // K_{t+1} and V_{t+1} land while the tensor cores work (Vec, bf16):
    // bf16 copied into K_{t-2}'s buffer (read by dQ += dS K waited for
    // before the last barrier) and V_{t-1}'s (read by dP_{t-1}, so too).
    auto prefetch = [&](i64 tile, bool next) {
      if (next) {
        const i64 j1 = (tile + 1) * kRows;
        kx.fetch(sK[kBuffer(tile + 1)], source(K, kRow, j1, tk, kDim));
        vx.fetch(sV[(tile + 1) & 1], source(V, vRow, j1, tk, kDim));
        Staging::commit();
      }
    };
    // da from dS; f32 K_{t+1} and V_{t+1} stored into K_{t-1}'s and
    // V_{t-1}'s buffers, read by now: by this warpgroup's wgmmas (its wait
    // covers the warpgroup's, as CUTLASS's pipelines take it), and in the
    // wide kernel by the other's too once both are at a barrier (K_{t-1} is
    // the B of both warpgroups' dQ += dS K, waited for by each alone); bf16
    // ones waited for.
    auto stage = [&](const float(&s)[8][4], i64 tile, bool next) {
#pragma unroll
      for (int step = 0; step < 4; ++step)
        accA(da[step], s[2 * step], s[2 * step + 1]);
      if constexpr (Groups > 1)
        if (next)
          __syncthreads(); // both warpgroups' dQ += dS_{t-1} K_{t-1} done
      if (next) {
        const i64 j1 = (tile + 1) * kRows;
        kx.land(sK[kBuffer(tile + 1)], source(K, kRow, j1, tk, kDim));
        vx.land(sV[(tile + 1) & 1], source(V, vRow, j1, tk, kDim));
        Staging::wait();
        sharedStoresToAsyncProxy();
      }
      __syncthreads();
    };
    { // tile 0: its S and dP alone
      const bool next = keyTiles > 1;
      prefetch(0, next);
      float s[8][4], dp[8][4];
      issueScores(s, dp, 0);
      wgmmaWait<0>();
      gradients(s, dp, 0);
      stage(s, 0, next);
    }
    for (i64 tile = 1; tile < keyTiles; ++tile) { // S_t, dP_t beside dQ += dS_{t-1} K_{t-1}
      const i64 j0 = tile * kRows;
      const bool next = tile + 1 < keyTiles;
      prefetch(tile, next);
      float s[8][4], dp[8][4];
      issueScores(s, dp, tile);
      issueDq(sK[kBuffer(tile - 1)]);
      wgmmaWait<1>(); // S and dP; dQ += dS K may still run
      gradients(s, dp, j0);
      wgmmaWait<0>(); // da and K_{t-1}'s buffer read
      stage(s, tile, next);
    }
    wgmmaFence(); // the last tile's dQ += dS K
    issueDq(sK[kBuffer(keyTiles - 1)]);
    wgmmaWait<0>();
    }
    storeWarpRows(dq, headIndex(dqOuter, dqInner, b, inner), dqRow, acc, r0, tq, kDim, g, t,
                  gradsBf16 & kAttentionDqBf16);
  }
}

/// dkv's P^T and dS^T element from its S^T and dP^T (s, dp) and its
/// query's statistics {m in base 2, 1/l, D scale, scale or 0}: 0 and 0
/// outside the shape, the masked score's where masked (attention_tc.cu's
/// dkv, the same operations).
__device__ __forceinline__ void keyGradient(float &s, float &dp, const float4 &st, float scale2,
                                            bool inside, bool masked) {
  float p = 0.0f, ds = 0.0f;
  if (inside) {
    const float xs = masked ? kMaskedScore - st.x : fusedMulAdd(s, scale2, -st.x);
    p = fastExp2(xs) * st.y;
    ds = attentionTcDs(p, dp, st.z, st.w);
  }
  s = p;
  dp = ds;
}

/// dkv's accumulators (the warp's 16 keys from r0, in the C fragment
/// layout) into those keys' rows of dK and dV (64 columns), the keys below
/// tk; dK from element k0 of dk, dV from v0 of dv, as bf16 bits alone
/// where gradsBf16 says (storeWarpRows).
template <typename Grads>
__device__ __forceinline__ void
storeKeyRows(float *dk, i64 k0, i64 dkRow, float *dv, i64 v0, i64 dvRow, const float (&accK)[8][4],
             const float (&accV)[8][4], i64 r0, i64 tk, int g, int t, Grads gradsBf16) {
  if constexpr (std::is_same_v<Grads, NoBf16Grads>) {
    // f32 alone, each row's dV and dK together: the pipelined kernel's loop
    // at 255 registers spilled with the stores of storeWarpRows.
    float *dK = dk + k0, *dV = dv + v0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i64 j = r0 + g + h * 8;
      if (j >= tk)
        continue;
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const int c = n * 8 + 2 * t + (e & 1);
          dV[j * dvRow + c] = accV[n][e];
          dK[j * dkRow + c] = accK[n][e];
        }
    }
  } else {
    storeWarpRows(dv, v0, dvRow, accV, r0, tk, 64, g, t, gradsBf16 & kAttentionDvBf16);
    storeWarpRows(dk, k0, dkRow, accK, r0, tk, 64, g, t, gradsBf16 & kAttentionDkBf16);
  }
}

/// The dkv kernel's loop on dq's rows' statistics and D (scratch, the
/// runtime's way), pipelined as the forward: query tile t's S^T = K Q_t^T
/// and dP^T = V dO_t^T issued with tile t - 1's dV += P^T dO and
/// dK += dS^T Q, waited for alone; P^T and dS^T computed while those run.
/// Q and dO double-buffered (six tiles: 48 KiB, static shared memory's
/// limit, so no staged statistics: each element's query row's are read
/// from scratch, in L1 after the first warp), loaded when stored.
/// dV's and dK's sums in attention_tc.cu's order: the same bits.
/// Groups warpgroups a block (the wide dkv: 2), each 64 of the unit's
/// 64 Groups keys with its own K and V, sharing the staged Q and dO tiles
/// (each thread stages 1 / Groups of what a warpgroup's would).
template <bool Vec, int Groups, typename Grads, typename T = float>
__device__ __forceinline__ void
wgmmaDkvPipelined(i64 outer, i64 inner, i64 tq, i64 tk, float scale, const T *__restrict__ q,
                  i64 qOuter, i64 qInner, i64 qRow, const T *__restrict__ k, i64 kOuter, i64 kInner,
                  i64 kRow, const T *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
                  const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
                  const T *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
                  float *__restrict__ dk, i64 dkOuter, i64 dkInner, i64 dkRow,
                  float *__restrict__ dvOut, i64 dvOuter, i64 dvInner, i64 dvRow, Grads gradsBf16,
                  const float *__restrict__ scratch, SwizzledTile *sKs, SwizzledTile *sVs,
                  SwizzledTile *sQ, SwizzledTile *sdO, SwizzledTile *sPs) {
  constexpr i64 kDim = 64, kUnit = kRows * Groups;
  constexpr int kItems = 4 / Groups;
  // bf16 bits (the bf16 dkv: one warpgroup) are copied by cp.async: Q_{t+1}
  // and dO_{t+1} while the products run, into Q_{t-2}'s and dO_{t-2}'s
  // buffers (Q_{t-1} and dO_{t-1} are read by the products issued at
  // iteration t): three of each. f32 tiles are loaded when stored, into
  // two (at 255 registers nothing more is held across the products).
  constexpr bool kAsync = std::is_same<T, uint16_t>::value;
  static_assert(!kAsync || Groups == 1, "bf16 inputs: the one-warpgroup loop");
  constexpr int kQBuffers = kAsync ? 3 : 2;
  auto qBuffer = [](i64 tile) { return int(tile % kQBuffers); }; // Q_tile's and dO_tile's
  const i64 heads = outer * inner;
  const i64 keyBlocks = (tk + kUnit - 1) / kUnit, queryTiles = (tq + kRows - 1) / kRows;
  const float scale2 = attentionTcScale(scale);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp % 4, g = lane / 4, t = lane % 4;
  const int group = Groups == 1 ? 0 : int(threadIdx.x) / kAttentionTcThreads;
  const SwizzledTile &sK = sKs[group], &sV = sVs[group];
  // The wide loop keeps the last query tile's P^T (dV's A) in shared memory,
  // not registers: with them it spilled at 255.
  constexpr bool kPShared = Groups > 1;
  SwizzledTile *sP = kPShared ? &sPs[group] : nullptr;
  const float4 *rows = reinterpret_cast<const float4 *>(scratch);
  for (i64 unit = blockIdx.x; unit < heads * keyBlocks; unit += gridDim.x) {
    const i64 b = unit / keyBlocks, u0 = (unit % keyBlocks) * kUnit,
              j0 = u0 + kRows * group; // this warpgroup's first key
    const T *Q = headOf(q, qOuter, qInner, b, inner);
    const T *dO = headOf(dout, doutOuter, doutInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    __syncthreads(); // the last unit's tiles are read
    SwizzledItems<kItems> x;
#pragma unroll
    for (int kt = 0; kt < Groups; ++kt) { // each warpgroup's K and V
      const SourceOf<T> sk =
          source(headOf(k, kOuter, kInner, b, inner), kRow, u0 + kRows * kt, tk, kDim);
      const SourceOf<T> sv =
          source(headOf(v, vOuter, vInner, b, inner), vRow, u0 + kRows * kt, tk, kDim);
      if constexpr (kAsync) {
        copySwizzled<Vec, kItems>(sKs[kt], sk);
        copySwizzled<Vec, kItems>(sVs[kt], sv);
      } else {
        loadSwizzled<Vec>(x, sk);
        storeSwizzled(sKs[kt], x);
        loadSwizzled<Vec>(x, sv);
        storeSwizzled(sVs[kt], x);
      }
    }
    // Query tile i0's Q and dO into buffer `buffer`: f32 loaded and stored
    // (then the barrier), bf16 copies issued (fetch; land waits for them,
    // then the barrier).
    auto stage = [&](i64 i0, int buffer) {
      if constexpr (!kAsync) {
        loadSwizzled<Vec>(x, source(Q, qRow, i0, tq, kDim));
        storeSwizzled(sQ[buffer], x);
        loadSwizzled<Vec>(x, source(dO, doutRow, i0, tq, kDim));
        storeSwizzled(sdO[buffer], x);
        sharedStoresToAsyncProxy();
        __syncthreads();
      }
    };
    auto fetch = [&](i64 i0, int buffer) {
      if constexpr (kAsync) {
        copySwizzled<Vec, kItems>(sQ[buffer], source(Q, qRow, i0, tq, kDim));
        copySwizzled<Vec, kItems>(sdO[buffer], source(dO, doutRow, i0, tq, kDim));
        cpAsyncCommit();
      }
    };
    auto land = [&] {
      if constexpr (kAsync) {
        cpAsyncWait<0>();
        sharedStoresToAsyncProxy();
        __syncthreads();
      }
    };
    float accK[8][4] = {}, accV[8][4] = {};
    uint32_t pa[kPShared ? 1 : 4][4], da[4][4]; // the last tile's P^T and dS^T: A of dV's, dK's
    auto issueScores = [&](float(&s)[8][4], float(&dp)[8][4], int cur) {
      wgmmaFence();
#pragma unroll
      for (int step = 0; step < 4; ++step)
        wgmmaSS<0>(reinterpret_cast<float(&)[32]>(s), kMajor(sK, step), kMajor(sQ[cur], step),
                   step > 0);
#pragma unroll
      for (int step = 0; step < 4; ++step)
        wgmmaSS<0>(reinterpret_cast<float(&)[32]>(dp), kMajor(sV, step), kMajor(sdO[cur], step),
                   step > 0);
      wgmmaCommit();
    };
    auto issueGradients = [&](int buffer) {
#pragma unroll
      for (int step = 0; step < 4; ++step)
        if constexpr (kPShared)
          wgmmaSS<1>(reinterpret_cast<float(&)[32]>(accV), kMajor(*sP, step),
                     mnMajor(sdO[buffer], step), 1);
        else
          wgmmaRS<1>(reinterpret_cast<float(&)[32]>(accV), pa[step], mnMajor(sdO[buffer], step), 1);
#pragma unroll
      for (int step = 0; step < 4; ++step)
        wgmmaRS<1>(reinterpret_cast<float(&)[32]>(accK), da[step], mnMajor(sQ[buffer], step), 1);
      wgmmaCommit();
    };
    // S^T and dP^T into P^T and dS^T: element (n, e) key j0 + 16w + g
    // (+ 8 for e >= 2), query i0 + 8n + 2t + (e & 1), as attention_tc.cu's
    // dkv, the query's statistics {m, 1/l, D scale, scale or 0} dq's.
    auto probabilities = [&](float(&s)[8][4], float(&dp)[8][4], i64 i0) {
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          // One row's statistics live at a time: the compiler may not hoist
          // the next ones' loads above here (their 64 registers would spill).
          asm volatile("" ::: "memory");
          const i64 i = i0 + n * 8 + 2 * t + c;
          const float4 st = i < tq ? rows[b * tq + i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
          for (int e = c; e < 4; e += 2) {
            const i64 j = j0 + warp * 16 + g + (e >= 2 ? 8 : 0);
            keyGradient(s[n][e], dp[n][e], st, scale2, i < tq && j < tk,
                        M && i < tq && j < tk && !M[i * maskRow + j]);
          }
        }
    };
    // P^T into pa, or into sP (rows keys, columns queries: K-major, as K
    // in S^T; each element rounded as accA rounds it); dS^T into da.
    auto pack = [&](const float(&s)[8][4], const float(&dp)[8][4]) {
      if constexpr (kPShared) {
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = warp * 16 + g + 8 * h;
            reinterpret_cast<uint32_t *>(&sP->chunk[8 * r + (n ^ (r & 7))])[t] =
                packFloats(s[n][2 * h], s[n][2 * h + 1]);
          }
        sharedStoresToAsyncProxy();
      } else {
#pragma unroll
        for (int step = 0; step < 4; ++step)
          accA(pa[step], s[2 * step], s[2 * step + 1]);
      }
#pragma unroll
      for (int step = 0; step < 4; ++step)
        accA(da[step], dp[2 * step], dp[2 * step + 1]);
    };
    fetch(0, 0); // with K and V
    stage(0, 0);
    land();
    { // query tile 0: its S^T and dP^T alone
      if (queryTiles > 1)
        fetch(kRows, 1);
      float s[8][4], dp[8][4];
      issueScores(s, dp, 0);
      wgmmaWait<0>();
      probabilities(s, dp, 0);
      pack(s, dp);
      if (queryTiles > 1) {
        stage(kRows, 1);
        land();
      }
    }
    for (i64 tile = 1; tile < queryTiles; ++tile) {
      const i64 i0 = tile * kRows;
      const bool next = tile + 1 < queryTiles;
      if (next) // bf16: into Q_{t-2}'s buffers, read by products waited for before the barrier
        fetch(i0 + kRows, qBuffer(tile + 1));
      float s[8][4], dp[8][4];
      issueScores(s, dp, qBuffer(tile));
      issueGradients(qBuffer(tile - 1));
      wgmmaWait<1>(); // S^T and dP^T; the last tile's dV and dK may still run
      probabilities(s, dp, i0);
      wgmmaWait<0>(); // pa or sP, da and Q_{t-1}'s buffers read (this warpgroup's wgmmas)
      pack(s, dp);
      if (next) {
        // The other warpgroup's dV and dK have read Q_{t-1}'s buffers too.
        if constexpr (Groups > 1)
          __syncthreads();
        stage(i0 + kRows, qBuffer(tile + 1)); // its barrier: sP stored
        land();
      }
    }
    if constexpr (kPShared)
      __syncthreads(); // sP stored
    wgmmaFence(); // the last tile's dV and dK
    issueGradients(qBuffer(queryTiles - 1));
    wgmmaWait<0>();
    storeKeyRows(dk, headIndex(dkOuter, dkInner, b, inner), dkRow, dvOut,
                 headIndex(dvOuter, dvInner, b, inner), dvRow, accK, accV, j0 + warp * 16, tk, g, t,
                 gradsBf16);
  }
}

/// The dkv kernel's loop on rows' statistics from the forward (stats, D =
/// dO . out computed here) or from dq (scratch): attention_tc.cu's
/// backwardDkv, its products on wgmma. The unit's K and V are staged once;
/// per query tile, Q and dO: S^T = K Q^T and dP^T = V dO^T from shared
/// memory, P^T and dS^T in registers, dV += P^T dO and dK += dS^T Q with
/// dO and Q MN-major (the tiles S^T and dP^T read K-major).
template <bool Vec, typename Grads>
__device__ __forceinline__ void
wgmmaDkv(i64 outer, i64 inner, i64 tq, i64 tk, float scale, const float *__restrict__ q, i64 qOuter,
         i64 qInner, i64 qRow, const float *__restrict__ k, i64 kOuter, i64 kInner, i64 kRow,
         const float *__restrict__ v, i64 vOuter, i64 vInner, i64 vRow,
         const unsigned char *__restrict__ mask, i64 maskOuter, i64 maskInner, i64 maskRow,
         const float *__restrict__ dout, i64 doutOuter, i64 doutInner, i64 doutRow,
         float *__restrict__ dk, i64 dkOuter, i64 dkInner, i64 dkRow, float *__restrict__ dvOut,
         i64 dvOuter, i64 dvInner, i64 dvRow, Grads gradsBf16, const float *__restrict__ out,
         i64 outOuter, i64 outInner, i64 outRow, const float *__restrict__ stats,
         const float *__restrict__ scratch, SwizzledTile &sK, SwizzledTile &sV, SwizzledTile &sQ,
         SwizzledTile &sdO, float4 (&sStats)[kRows]) {
  constexpr i64 kDim = 64;
  const i64 heads = outer * inner;
  const i64 keyBlocks = (tk + kRows - 1) / kRows;
  const float scale2 = attentionTcScale(scale);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, g = lane / 4, t = lane % 4;
  for (i64 unit = blockIdx.x; unit < heads * keyBlocks; unit += gridDim.x) {
    const i64 b = unit / keyBlocks, j0 = (unit % keyBlocks) * kRows;
    const float *Q = headOf(q, qOuter, qInner, b, inner);
    const float *dO = headOf(dout, doutOuter, doutInner, b, inner);
    const unsigned char *M = mask ? headOf(mask, maskOuter, maskInner, b, inner) : nullptr;
    SwizzledLoad x;
    __syncthreads(); // the last unit's tiles are read
    loadSwizzled<Vec>(x, source(headOf(k, kOuter, kInner, b, inner), kRow, j0, tk, kDim));
    storeSwizzled(sK, x);
    loadSwizzled<Vec>(x, source(headOf(v, vOuter, vInner, b, inner), vRow, j0, tk, kDim));
    storeSwizzled(sV, x);
    float accK[8][4] = {}, accV[8][4] = {};
    for (i64 i0 = 0; i0 < tq; i0 += kRows) {
      if (i0 > 0)
        __syncthreads(); // the last query tile's products are read
      loadSwizzled<Vec>(x, source(Q, qRow, i0, tq, kDim));
      storeSwizzled(sQ, x);
      loadSwizzled<Vec>(x, source(dO, doutRow, i0, tq, kDim));
      storeSwizzled(sdO, x);
      sharedStoresToAsyncProxy();
      if (stats) { // the forward's, D as dq takes it (the same rows, lanes, bits)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float4 r = savedRow(stats, dO, doutRow, headOf(out, outOuter, outInner, b, inner),
                                    outRow, b, i0 + warp * 16 + g + h * 8, tq, kDim, t);
          if (t == 0)
            sStats[warp * 16 + g + h * 8] = r;
        }
      } else {
        for (int r = threadIdx.x; r < kRows; r += kAttentionTcThreads)
          sStats[r] = i0 + r < tq ? reinterpret_cast<const float4 *>(scratch)[b * tq + i0 + r]
                                  : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
      __syncthreads(); // the tiles and the statistics staged
      float s[8][4], dp[8][4];
      wgmmaFence();
#pragma unroll
      for (int step = 0; step < 4; ++step)
        wgmmaSS<0>(reinterpret_cast<float(&)[32]>(s), kMajor(sK, step), kMajor(sQ, step), step > 0);
#pragma unroll
      for (int step = 0; step < 4; ++step)
        wgmmaSS<0>(reinterpret_cast<float(&)[32]>(dp), kMajor(sV, step), kMajor(sdO, step),
                   step > 0);
      wgmmaCommitAndWait();
      // S^T and dP^T: element (n, e) key j0 + 16w + g (+ 8 for e >= 2),
      // query i0 + 8n + 2t + (e & 1), as attention_tc.cu's dkv.
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = n * 8 + 2 * t + (e & 1);
          const i64 i = i0 + r, j = j0 + warp * 16 + g + (e >= 2 ? 8 : 0);
          keyGradient(s[n][e], dp[n][e], sStats[r], scale2, i < tq && j < tk,
                      M && i < tq && j < tk && !M[i * maskRow + j]);
        }
      uint32_t pa[4][4], da[4][4];
#pragma unroll
      for (int step = 0; step < 4; ++step) {
        accA(pa[step], s[2 * step], s[2 * step + 1]);
        accA(da[step], dp[2 * step], dp[2 * step + 1]);
      }
      wgmmaFence();
#pragma unroll
      for (int step = 0; step < 4; ++step)
        wgmmaRS<1>(reinterpret_cast<float(&)[32]>(accV), pa[step], mnMajor(sdO, step), 1);
#pragma unroll
      for (int step = 0; step < 4; ++step)
        wgmmaRS<1>(reinterpret_cast<float(&)[32]>(accK), da[step], mnMajor(sQ, step), 1);
      wgmmaCommitAndWait();
    }
    storeKeyRows(dk, headIndex(dkOuter, dkInner, b, inner), dkRow, dvOut,
                 headIndex(dvOuter, dvInner, b, inner), dvRow, accK, accV, j0 + warp * 16, tk, g, t,
                 gradsBf16);
  }
}
#endif

} // namespace

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace {

/// The forward kernels' body in their shared memory: Pipelined (the
/// default) or serial.
template <bool Pipelined, int Groups, typename T>
__device__ __forceinline__ void forwardOnWgmma(TFC_TC_FORWARD_PARAMS_OF(T),
                                               SwizzledTile (&sQ)[Groups], SwizzledTile (&sK)[2],
                                               SwizzledTile (&sV)[2]) {
  // f32: 16-byte loads; bf16 bits: 16-byte copies (else 8-byte ones).
  auto alignedRows = [](const T *base, i64 outer, i64 inner, i64 row) {
    if constexpr (std::is_same<T, uint16_t>::value)
      return rowsAligned16(base, outer, inner, row);
    else
      return rowsAligned(base, outer, inner, row);
  };
  const bool aligned = alignedRows(q, qOuter, qInner, qRow) &&
                       alignedRows(k, kOuter, kInner, kRow) && alignedRows(v, vOuter, vInner, vRow);
#define TFC_WGMMA_FORWARD_ARGS                                                                     \
  outer, inner, tq, tk, scale, q, qOuter, qInner, qRow, k, kOuter, kInner, kRow, v, vOuter,        \
      vInner, vRow, mask, maskOuter, maskInner, maskRow, out, outOuter, outInner, outRow, stats,   \
      out16
  if (aligned)
    wgmmaForward<true, Groups, Pipelined>(TFC_WGMMA_FORWARD_ARGS, sQ, sK, sV);
  else
    wgmmaForward<false, Groups, Pipelined>(TFC_WGMMA_FORWARD_ARGS, sQ, sK, sV);
#undef TFC_WGMMA_FORWARD_ARGS
}

/// The dq kernels' body in their shared memory (six tiles): wgmma's loop,
/// Pipelined or serial, on the forward's statistics without dS, or
/// attention_tc.cu's own loop (mma.sync).
template <bool Pipelined, int Groups>
__device__ __forceinline__ void dqOnWgmma(TFC_TC_DQ_PARAMS, SwizzledTile *tiles) {
  if (inputsBf16)
    __trap(); // as forwardOnWgmma
  const bool aligned =
      rowsAligned(q, qOuter, qInner, qRow) && rowsAligned(k, kOuter, kInner, kRow) &&
      rowsAligned(v, vOuter, vInner, vRow) && rowsAligned(dout, doutOuter, doutInner, doutRow);
  if (d == 64 && dv == 64 && stats && !dS) {
    // Q and dO a warpgroup, then K and V double-buffered.
    SwizzledTile *sK = &tiles[2 * Groups];
    SwizzledTile(&sV)[2] = *reinterpret_cast<SwizzledTile(*)[2]>(&tiles[2 * Groups + 2]);
#define TFC_WGMMA_DQ_ARGS                                                                          \
  outer, inner, tq, tk, scale, q, qOuter, qInner, qRow, k, kOuter, kInner, kRow, v, vOuter,        \
      vInner, vRow, mask, maskOuter, maskInner, maskRow, dout, doutOuter, doutInner, doutRow, dq,  \
      dqOuter, dqInner, dqRow, out, outOuter, outInner, outRow, stats, scratch, gradsBf16,         \
      &tiles[0], &tiles[Groups], sK, sV
    if (aligned)
      wgmmaDq<true, Pipelined, Groups>(TFC_WGMMA_DQ_ARGS);
    else
      wgmmaDq<false, Pipelined, Groups>(TFC_WGMMA_DQ_ARGS);
#undef TFC_WGMMA_DQ_ARGS
    return;
  }
  Tile *tc = reinterpret_cast<Tile *>(tiles);
  dispatch<float>(aligned, d, dv, [&](auto vec, auto w) {
    backwardDq<bool(decltype(vec)::value), decltype(w)::value, false>(TFC_TC_LOOP_ARGS, tc[0],
                                                                      tc[1], tc[2], tc[3], tc[4]);
  });
}

} // namespace
#endif

// The kernels declare their shared memory themselves (the SIMT emulator
// places a template's statics outside its shared memory).
// The wide dq's and dkv's `count` tiles: dynamic shared memory aligned to
// the swizzle's 1,024 bytes (on the emulator, a static array: its shared
// section holds no dynamic memory).
#if defined(TFC_SIMT)
#define TFC_WIDE_TILES(tiles, count)                                                               \
  __shared__ SwizzledTile tiles##Static[count];                                                    \
  SwizzledTile *tiles = tiles##Static
#else
#define TFC_WIDE_TILES(tiles, count)                                                               \
  extern __shared__ __align__(16) unsigned char tiles##Dynamic[];                                  \
  SwizzledTile *tiles = reinterpret_cast<SwizzledTile *>(                                          \
      tiles##Dynamic + (1024 - uint32_t(__cvta_generic_to_shared(tiles##Dynamic)) % 1024) % 1024)
#endif

/// out[b] = softmax(scale q[b] k[b]^T, masked) v[b] for heads of 64: the
/// tensor-core forward with its products on wgmma.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_wgmma_forward_kernel(TFC_TC_FORWARD_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionTcThreads);
  if (outer * inner <= 0 || tq <= 0 || tk <= 0 || d != 64 || dv != 64)
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ SwizzledTile sQ[1], sK[2], sV[2];
  if (inputsBf16 & kAttentionQkvBf16)
    forwardOnWgmma<true, 1, uint16_t>(TFC_TC_FORWARD_ARGS_BF16, sQ, sK, sV);
  else
    forwardOnWgmma<true, 1, float>(TFC_TC_FORWARD_ARGS, sQ, sK, sV);
#endif
}

/// Blocks an SM the bf16 forward and dq are compiled for: without the f32
/// path's staging registers the forward's loop needs 141 (ptxas, sm_90a),
/// under the 168 three blocks of 128 threads allow, where the forward
/// above, which has that path too, takes 212 (two blocks); dq 168 (the f32
/// one 249).
constexpr int kWgmmaBf16Blocks = 3;

/// The same for q, k and v as bf16 bits alone (kAttentionQkvBf16: what the
/// runtime launches for them), its tiles copied by cp.async: 12 warps an SM
/// against the forward's 8. Traps on f32 inputs.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads, kWgmmaBf16Blocks)
    tfc_cuda_attention_wgmma_forward_bf16_kernel(TFC_TC_FORWARD_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionTcThreads);
  if (!(inputsBf16 & kAttentionQkvBf16))
    __trap(); // f32 inputs: the forward above
  if (outer * inner <= 0 || tq <= 0 || tk <= 0 || d != 64 || dv != 64)
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ SwizzledTile sQ[1], sK[2], sV[2];
  forwardOnWgmma<true, 1, uint16_t>(TFC_TC_FORWARD_ARGS_BF16, sQ, sK, sV);
#endif
}

/// The same on two warpgroups a block (256 threads), 128 queries sharing
/// each key tile (with the wide dq, tfc-kernel-check's "wgmma, wide" family).
extern "C" __global__ void __launch_bounds__(kAttentionWgmmaWideThreads)
    tfc_cuda_attention_wgmma_forward_wide_kernel(TFC_TC_FORWARD_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionWgmmaWideThreads);
  if (outer * inner <= 0 || tq <= 0 || tk <= 0 || d != 64 || dv != 64)
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ SwizzledTile sQ[2], sK[2], sV[2]; // 48 KiB
  if (inputsBf16 & kAttentionQkvBf16)
    forwardOnWgmma<true, 2, uint16_t>(TFC_TC_FORWARD_ARGS_BF16, sQ, sK, sV);
  else
    forwardOnWgmma<true, 2, float>(TFC_TC_FORWARD_ARGS, sQ, sK, sV);
#endif
}

/// The same, unpipelined (tfc-kernel-check's "wgmma, serial" family).
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_wgmma_forward_serial_kernel(TFC_TC_FORWARD_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionTcThreads);
  if (outer * inner <= 0 || tq <= 0 || tk <= 0 || d != 64 || dv != 64)
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ SwizzledTile sQ[1], sK[2], sV[2];
  if (inputsBf16 & kAttentionQkvBf16)
    forwardOnWgmma<false, 1, uint16_t>(TFC_TC_FORWARD_ARGS_BF16, sQ, sK, sV);
  else
    forwardOnWgmma<false, 1, float>(TFC_TC_FORWARD_ARGS, sQ, sK, sV);
#endif
}

/// dq[b] = dS K: the tensor-core dq kernel, its products on wgmma where it
/// has the forward's statistics and no stored dS (the runtime's way for
/// heads of 64); otherwise attention_tc.cu's own loop (mma.sync) runs, in
/// the same shared memory.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_wgmma_backward_dq_kernel(TFC_TC_DQ_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionTcThreads);
  if (outer * inner <= 0 || tq <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ SwizzledTile tiles[6]; // 48 KiB: wgmma's loop's six, or attention_tc.cu's five
  dqOnWgmma<true, 1>(TFC_TC_BACKWARD_ARGS, tiles);
#endif
}

/// The same, unpipelined (the "wgmma, serial" family).
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_wgmma_backward_dq_serial_kernel(TFC_TC_DQ_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionTcThreads);
  if (outer * inner <= 0 || tq <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ SwizzledTile tiles[6];
  dqOnWgmma<false, 1>(TFC_TC_BACKWARD_ARGS, tiles);
#endif
}

/// dq[b] = dS K for q, k, v and dO as bf16 bits alone (kAttentionQkvBf16 |
/// kAttentionDoBf16: what the runtime launches for them), on the forward's
/// statistics without dS (the runtime's way; any other traps): wgmma's
/// pipelined loop, its tiles copied by cp.async, K in three buffers. Seven
/// tiles: 57 KiB of dynamic shared memory (Kernels.h's
/// kAttentionWgmmaDqBf16Shared, 1 KiB more to align them).
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads, kWgmmaBf16Blocks)
    tfc_cuda_attention_wgmma_backward_dq_bf16_kernel(TFC_TC_DQ_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionTcThreads);
  if (outer * inner <= 0 || tq <= 0 || tk <= 0)
    return;
  if (inputsBf16 != (kAttentionQkvBf16 | kAttentionDoBf16) || d != 64 || dv != 64 || !stats || dS)
    __trap(); // bf16 inputs on the forward's statistics alone: the others' kernels
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  TFC_WIDE_TILES(tiles, 7); // Q, dO, K in three buffers, V in two
  const uint16_t *qb = bf16In(q), *kb = bf16In(k), *vb = bf16In(v), *db = bf16In(dout);
  const bool aligned =
      rowsAligned16(qb, qOuter, qInner, qRow) && rowsAligned16(kb, kOuter, kInner, kRow) &&
      rowsAligned16(vb, vOuter, vInner, vRow) && rowsAligned16(db, doutOuter, doutInner, doutRow);
  SwizzledTile(&sV)[2] = *reinterpret_cast<SwizzledTile(*)[2]>(&tiles[5]);
#define TFC_WGMMA_DQ_BF16_ARGS                                                                     \
  outer, inner, tq, tk, scale, qb, qOuter, qInner, qRow, kb, kOuter, kInner, kRow, vb, vOuter,     \
      vInner, vRow, mask, maskOuter, maskInner, maskRow, db, doutOuter, doutInner, doutRow, dq,    \
      dqOuter, dqInner, dqRow, out, outOuter, outInner, outRow, stats, scratch, gradsBf16,         \
      &tiles[0], &tiles[1], &tiles[2], sV
  if (aligned)
    wgmmaDq<true, true, 1>(TFC_WGMMA_DQ_BF16_ARGS);
  else
    wgmmaDq<false, true, 1>(TFC_WGMMA_DQ_BF16_ARGS);
#undef TFC_WGMMA_DQ_BF16_ARGS
#endif
}

/// dk[b] = dS^T Q and dvOut[b] = P^T dO for q, k, v and dO as bf16 bits
/// alone (kAttentionQkvBf16 | kAttentionDoBf16: what the runtime launches
/// for them), on the rows' statistics and D dq stored in scratch (the
/// runtime's way; any other traps): wgmma's pipelined loop, its tiles
/// copied by cp.async, Q and dO in three buffers each. Eight tiles: 65 KiB
/// of dynamic shared memory (Kernels.h's kAttentionWgmmaDkvBf16Shared).
/// dk and dv as bf16 bits (gradsBf16 kAttentionDkBf16 | kAttentionDvBf16,
/// what --precision bf16 models pass): with f32 ones beside them, ptxas
/// spilled 4 bytes at 255 registers (each alone: 253 and 255, none).
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel(TFC_TC_DKV_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionTcThreads);
  if (outer * inner <= 0 || tk <= 0)
    return;
  if (inputsBf16 != (kAttentionQkvBf16 | kAttentionDoBf16) || d != 64 || dv != 64 || tq <= 0 ||
      !scratch || stats || dS || !(gradsBf16 & kAttentionDkBf16) || !(gradsBf16 & kAttentionDvBf16))
    __trap(); // bf16 inputs and gradients on dq's statistics alone: the others' kernels
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  TFC_WIDE_TILES(tiles, 8); // K, V, then Q and dO in three buffers each
  const uint16_t *qb = bf16In(q), *kb = bf16In(k), *vb = bf16In(v), *db = bf16In(dout);
  const bool aligned =
      rowsAligned16(qb, qOuter, qInner, qRow) && rowsAligned16(kb, kOuter, kInner, kRow) &&
      rowsAligned16(vb, vOuter, vInner, vRow) && rowsAligned16(db, doutOuter, doutInner, doutRow);
  // Each way a call, not a lambda's: inlined (dkvOnWgmmaStoring's note).
#define TFC_WGMMA_DKV_BF16(VEC, GRADS)                                                             \
  wgmmaDkvPipelined<VEC, 1>(outer, inner, tq, tk, scale, qb, qOuter, qInner, qRow, kb, kOuter,     \
                            kInner, kRow, vb, vOuter, vInner, vRow, mask, maskOuter, maskInner,    \
                            maskRow, db, doutOuter, doutInner, doutRow, dk, dkOuter, dkInner,      \
                            dkRow, dvOut, dvOuter, dvInner, dvRow, GRADS, scratch, &tiles[0],      \
                            &tiles[1], &tiles[2], &tiles[5], nullptr)
  if (aligned)
    TFC_WGMMA_DKV_BF16(true, AllBf16Grads());
  else
    TFC_WGMMA_DKV_BF16(false, AllBf16Grads());
#undef TFC_WGMMA_DKV_BF16
#endif
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace {

/// The dkv kernels' body in their shared memory (six tiles): wgmma's loop
/// pipelined on dq's statistics (scratch, Pipelined), or serial on
/// statistics from the forward or dq, without dS; else attention_tc.cu's
/// own loop. The latter two stage rows' statistics in the sixth tile. The
/// gradients are stored as `grads` says (gradsBf16, or NoBf16Grads: no test
/// of the flags); a function, not a lambda, so that it is inlined (a
/// lambda's body was not: a stack frame of 1 KB).
template <bool Pipelined, int Groups, typename Grads>
__device__ __forceinline__ void dkvOnWgmmaStoring(Grads grads, TFC_TC_DKV_PARAMS,
                                                  SwizzledTile *tiles) {
  const bool aligned =
      rowsAligned(q, qOuter, qInner, qRow) && rowsAligned(k, kOuter, kInner, kRow) &&
      rowsAligned(v, vOuter, vInner, vRow) && rowsAligned(dout, doutOuter, doutInner, doutRow);
  if constexpr (Pipelined) {
    if (d == 64 && dv == 64 && scratch && !stats && !dS && tq > 0) {
      // K and V a warpgroup, then Q and dO double-buffered.
      SwizzledTile(&sQ)[2] = *reinterpret_cast<SwizzledTile(*)[2]>(&tiles[2 * Groups]);
      SwizzledTile(&sdO)[2] = *reinterpret_cast<SwizzledTile(*)[2]>(&tiles[2 * Groups + 2]);
#define TFC_WGMMA_DKV_ARGS                                                                         \
  outer, inner, tq, tk, scale, q, qOuter, qInner, qRow, k, kOuter, kInner, kRow, v, vOuter,        \
      vInner, vRow, mask, maskOuter, maskInner, maskRow, dout, doutOuter, doutInner, doutRow, dk,  \
      dkOuter, dkInner, dkRow, dvOut, dvOuter, dvInner, dvRow, grads
      if (aligned)
        wgmmaDkvPipelined<true, Groups>(TFC_WGMMA_DKV_ARGS, scratch, &tiles[0], &tiles[Groups], sQ,
                                        sdO, Groups > 1 ? &tiles[2 * Groups + 4] : nullptr);
      else
        wgmmaDkvPipelined<false, Groups>(TFC_WGMMA_DKV_ARGS, scratch, &tiles[0], &tiles[Groups], sQ,
                                         sdO, Groups > 1 ? &tiles[2 * Groups + 4] : nullptr);
      return;
    }
  }
  if constexpr (Groups > 1)
    return; // the wide kernel calls this only on dq's statistics
  float4(&sStats)[kRows] = *reinterpret_cast<float4(*)[kRows]>(&tiles[5]);
  if (d == 64 && dv == 64 && (stats || scratch) && !dS && tq > 0) {
    if (aligned)
      wgmmaDkv<true>(TFC_WGMMA_DKV_ARGS, out, outOuter, outInner, outRow, stats, scratch, tiles[0],
                     tiles[1], tiles[2], tiles[3], sStats);
    else
      wgmmaDkv<false>(TFC_WGMMA_DKV_ARGS, out, outOuter, outInner, outRow, stats, scratch, tiles[0],
                      tiles[1], tiles[2], tiles[3], sStats);
    return;
  }
#undef TFC_WGMMA_DKV_ARGS
  Tile *tc = reinterpret_cast<Tile *>(tiles);
  dispatch<float>(aligned, d, dv, [&](auto vec, auto w) {
    backwardDkv<bool(decltype(vec)::value), decltype(w)::value>(
        outer, inner, tq, tk, d, dv, scale, q, qOuter, qInner, qRow, k, kOuter, kInner, kRow, v,
        vOuter, vInner, vRow, mask, maskOuter, maskInner, maskRow, dout, doutOuter, doutInner,
        doutRow, dq, dqOuter, dqInner, dqRow, dk, dkOuter, dkInner, dkRow, dvOut, dvOuter, dvInner,
        dvRow, out, outOuter, outInner, outRow, stats, scratch, dS, dsRow, grads, tc[0], tc[1],
        tc[2], tc[3], sStats);
  });
}

template <bool Pipelined, int Groups = 1>
__device__ __forceinline__ void dkvOnWgmma(TFC_TC_DKV_PARAMS, SwizzledTile *tiles) {
  if (inputsBf16)
    __trap();                                                          // as forwardOnWgmma
  const bool bf16 = gradsBf16 & (kAttentionDkBf16 | kAttentionDvBf16); // both or neither: Abi.h
  if constexpr (Pipelined) {
    // These kernels (one warpgroup, and wide) store f32 gradients alone:
    // with bf16 ones beside their loops at 255 registers, ptxas spilled
    // 8-64 bytes however they were stored. The runtime launches the
    // tensor-core dkv for bf16 gradients.
    if (bf16)
      __trap();
    dkvOnWgmmaStoring<Pipelined, Groups>(NoBf16Grads(), TFC_TC_BACKWARD_ARGS, tiles);
  } else if (bf16) {
    dkvOnWgmmaStoring<Pipelined, Groups>(AllBf16Grads(), TFC_TC_BACKWARD_ARGS, tiles);
  } else {
    dkvOnWgmmaStoring<Pipelined, Groups>(NoBf16Grads(), TFC_TC_BACKWARD_ARGS, tiles);
  }
}

} // namespace
#endif

/// The dq kernel on two warpgroups a block (256 threads): 128 queries
/// sharing each staged key tile, its Q and dO a warpgroup's (the wgmma
/// way: the forward's statistics, no dS); 8 tiles, 64 KiB of dynamic shared
/// memory (kAttentionWgmmaWideDqShared, 1 KiB more to align them to the
/// swizzle's 1,024 bytes). Other ways run attention_tc.cu's loop on the
/// first warpgroup, the second returning (threads that have returned count
/// as arrived at a barrier, sm_70 on).
extern "C" __global__ void __launch_bounds__(kAttentionWgmmaWideThreads)
    tfc_cuda_attention_wgmma_backward_dq_wide_kernel(TFC_TC_DQ_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionWgmmaWideThreads);
  if (outer * inner <= 0 || tq <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  TFC_WIDE_TILES(tiles, 8);
  if (d == 64 && dv == 64 && stats && !dS) {
    dqOnWgmma<true, 2>(TFC_TC_BACKWARD_ARGS, tiles);
    return;
  }
  if (threadIdx.x >= kAttentionTcThreads)
    return;
  dqOnWgmma<true, 1>(TFC_TC_BACKWARD_ARGS, tiles);
#endif
}

/// dk[b] = dS^T Q and dvOut[b] = P^T dO: the tensor-core dkv kernel, its
/// products on wgmma where it has rows' statistics (the forward's or
/// dq's) and stores no dS (pipelined on dq's: the runtime's way);
/// otherwise attention_tc.cu's own loop.
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_wgmma_backward_dkv_kernel(TFC_TC_DKV_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionTcThreads);
  if (outer * inner <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ SwizzledTile tiles[6]; // 48 KiB
  dkvOnWgmma<true>(TFC_TC_BACKWARD_ARGS, tiles);
#endif
}

/// The dkv kernel on two warpgroups a block (256 threads): 128 keys, each
/// warpgroup's K and V its own, sharing each staged Q and dO tile, on dq's
/// statistics (scratch, no dS: the runtime's way), P^T for dV's product
/// through shared memory (in registers the loop spilled); 10 tiles, 81 KiB
/// of dynamic shared memory (kAttentionWgmmaWideDkvShared). That way alone:
/// any other traps (with the one-warpgroup kernel's other loops in it, as
/// the wide dq has them, ptxas spilled 128 bytes); the runtime launches it
/// only there.
extern "C" __global__ void __launch_bounds__(kAttentionWgmmaWideThreads)
    tfc_cuda_attention_wgmma_backward_dkv_wide_kernel(TFC_TC_DKV_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionWgmmaWideThreads);
  if (outer * inner <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  TFC_WIDE_TILES(tiles, 10);
  if (!(d == 64 && dv == 64 && scratch && !stats && !dS && tq > 0))
    __trap();
  dkvOnWgmma<true, 2>(TFC_TC_BACKWARD_ARGS, tiles);
#endif
}

/// The same, unpipelined (the "wgmma, serial" family).
extern "C" __global__ void __launch_bounds__(kAttentionTcThreads)
    tfc_cuda_attention_wgmma_backward_dkv_serial_kernel(TFC_TC_DKV_PARAMS) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kAttentionTcThreads);
  if (outer * inner <= 0 || tk <= 0 || !attentionTensorCoreShape(d, dv))
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ SwizzledTile tiles[6];
  dkvOnWgmma<false>(TFC_TC_BACKWARD_ARGS, tiles);
#endif
}
