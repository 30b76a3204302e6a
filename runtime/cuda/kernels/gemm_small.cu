//===- gemm_small.cu - GEMMs too small for cuBLASLt's kernels ---------------===//
//
// defines: tfc_cuda_small_gemm_kernel,
//          tfc_cuda_small_gemm_finish_kernel,
//          tfc_cuda_column_sums_kernel
//
// tfc_cuda_sgemm's products (runtime/Abi.h's GemmArgs, row-major: C = op(A)
// op(B), M x N over K, a batch of them) and its epilogues, for the sizes of
// the seed models: a few MFLOP, where one cuBLASLt kernel costs 7-38 µs on
// an H200 (a fixed cost: its tiles and pipeline are sized for big products)
// and plain SIMT code needs 1-3. CudaDevice::sgemm sends a product here
// when smallGemmFits says so (KernelMath.h), cuBLASLt otherwise.
//
// A work unit is a 32 x 32 tile of C (of one batch item) over one slice of
// K: 256 threads, each 2 x 2 outputs; the slice goes through shared memory
// 32 columns of K at a time, summed in k order (one fmaf chain an output).
//  - One slice (K up to smallGemmSlice) and no batch reduction: the unit
//    applies the epilogue and writes C.
//  - Otherwise (the weight gradients' long K, a batch summed into one C):
//    each unit writes its partial tile to scratch, and the finish kernel adds
//    an output's partials in a fixed order (item, then slice) and applies the
//    epilogue. So the order of every sum is the shape's, never the grid's or
//    the timing's: the same bits on every run.
// The epilogue, per output (the order of the fake cuBLASLt, tests/unit/
// FakeCublasLt.cpp): the product; plus C when accumulating, or the residual;
// plus the bias (a float a column of C); then ReLU's bit-mask read (reluGrad:
// the value where its bit is set, else 0) or written (set where the value is
// above 0; bit n + m * ldMask, cuBLASLt's layout, atomicOr/And on 32-bit
// words: each bit has one writer, so the bits do not depend on the order);
// then the ReLU. The bias gradient (a sum over K of every column of the
// stored operand) is K in parts of up to 256 rows, each by 8 warps (a unit
// of 32 columns: columnSumsUnit), and the parts added in order.
// One launch: the product kernel also runs the bias gradient's units (after
// its own), and, given a counter, its last block to finish (Warp.cuh's
// lastBlockDone) adds the partial tiles and the parts as the finish kernel
// would (the same functions, the same order: the same bits), then sets the
// counter back to 0. With counter 0 the finish kernel does, a launch each
// (CudaDevice::smallGemm takes that way where the partials are too many
// for one block: smallGemmLastBlockFinishes). tfc_cuda_column_sums_kernel
// runs the same units alone, for a bias gradient beside a cuBLASLt product.
// Products are fp32 FMAs whatever the model's --precision: more exact than
// cuBLASLt's TF32 or bf16 roundings, which these sizes do not need.
//
// Launch: 256 threads a block (kSmallGemmThreads), grid.x any; units are
// tiles x slices x items (smallGemmPlan), then the column sums' (columnSumsPlan).
// Static shared memory 9.4 KiB.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

using namespace tfc::rt::cuda::kernels;

namespace {

typedef long long i64;
constexpr int kTile = kSmallGemmTile;

/// The epilogue's arguments (see the header); one of them for both kernels.
struct Epilogue {
  i64 accumulate;
  const float *residual;
  i64 ldResidual;
  const float *bias;
  i64 relu, reluGrad;
  unsigned *mask;
  i64 ldMask;
};

/// C[row][col] = the epilogue of `sum` (the product), written.
__device__ __forceinline__ void finishOutput(float sum, i64 row, i64 col, float *c, i64 ldc,
                                             const Epilogue &e) {
  float v = sum;
  if (e.accumulate)
    v = c[row * ldc + col] + v;
  if (e.residual)
    v = v + e.residual[row * e.ldResidual + col];
  if (e.bias)
    v = v + e.bias[col];
  if (e.mask) {
    const i64 bit = col + row * e.ldMask;
    unsigned *word = e.mask + bit / 32;
    const unsigned flag = 1u << unsigned(bit % 32);
    if (e.reluGrad)
      v = (*word & flag) ? v : 0.0f;
    else if (v > 0.0f)
      atomicOr(word, flag);
    else
      atomicAnd(word, ~flag);
  }
  if (e.relu && v < 0.0f)
    v = 0.0f;
  c[row * ldc + col] = v;
}

/// Output x (of `outputs` m x n) of the finish: its `parts` partials added
/// in order (partials of output o at partials + (o * parts + p) * m * n),
/// then the epilogue. L2: read past L1 (__ldcg), where other blocks of this
/// launch wrote them; the same values and additions either way.
template <bool L2>
__device__ __forceinline__ void finishPartials(i64 x, i64 m, i64 n, i64 parts,
                                               const float *partials, float *c, i64 ldc,
                                               i64 strideC, const Epilogue &e) {
  const i64 o = x / (m * n), row = x / n % m, col = x % n;
  const float *p = partials + o * parts * m * n + row * n + col;
  float sum = L2 ? __ldcg(p) : p[0];
  for (i64 part = 1; part < parts; ++part)
    sum = sum + (L2 ? __ldcg(p + part * m * n) : p[part * m * n]);
  finishOutput(sum, row, col, c + o * strideC, ldc, e);
}

/// Column sums of x (rows x cols, row pitch ld) by parts of `part` rows, a
/// unit 32 columns of one part: 8 warps, each a contiguous eighth of the
/// part's rows (a lane a column), then the eighths in order, at sums[p *
/// cols + col]. Every thread of the block calls it (it holds barriers).
__device__ __forceinline__ void
columnSumsUnit(i64 unit, i64 rows, i64 cols, const float *x, i64 ld, i64 part, float *sums,
               float (&warpSums)[kSmallGemmThreads / kWarp][kWarp]) {
  constexpr int kWarps = kSmallGemmThreads / kWarp;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const i64 groups = (cols + kWarp - 1) / kWarp;
  const i64 per = (part + kWarps - 1) / kWarps;
  const i64 col = unit % groups * kWarp + lane, p = unit / groups;
  const i64 end = (p + 1) * part < rows ? (p + 1) * part : rows;
  const i64 first = p * part + warp * per, last = first + per < end ? first + per : end;
  float sum = 0.0f;
  if (col < cols)
    for (i64 r = first; r < last; ++r)
      sum = sum + x[r * ld + col];
  __syncthreads(); // the last unit's sums are read
  warpSums[warp][lane] = sum;
  __syncthreads();
  if (warp == 0 && col < cols) {
    float total = warpSums[0][lane];
    for (int w = 1; w < kWarps; ++w)
      total = total + warpSums[w][lane];
    sums[p * cols + col] = total;
  }
}

} // namespace

/// Work units (tile, slice, item) of the product: C's tile (or the partial
/// tile at partials + ((item * slices + slice) * m * n), when `partials`)
/// from op(A)'s rows and op(B)'s columns over the slice's K. Then, with
/// sumsOf (A or B as stored, k rows of sumsCols floats, pitch sumsLd), the
/// bias gradient's column-sum units (columnSumsPlan): into biasGrad, or by
/// parts into partSums. With a counter, the last block to finish adds the
/// `parts` partials of each of the `outputs` outputs (the finish kernel's
/// work) and the parts of the sums, and leaves the counter 0. (Two blocks
/// an SM: without a minimum ptxas held it to 64 registers and spilled.)
extern "C" __global__ void __launch_bounds__(kSmallGemmThreads, 2)
    tfc_cuda_small_gemm_kernel(i64 m, i64 n, i64 k, i64 slice, i64 items,
                               const float *__restrict__ a, i64 lda, i64 strideA, i64 transA,
                               const float *__restrict__ b, i64 ldb, i64 strideB, i64 transB,
                               float *c, i64 ldc, i64 strideC, float *__restrict__ partials,
                               i64 accumulate, const float *residual, i64 ldResidual,
                               const float *bias, i64 relu, i64 reluGrad, unsigned *mask,
                               i64 ldMask, i64 outputs, i64 parts, const float *sumsOf, i64 sumsLd,
                               i64 sumsCols, float *partSums, float *biasGrad, unsigned *counter) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kSmallGemmThreads);
  __shared__ float sA[kTile][kTile + 1], sB[kTile][kTile + 1]; // [k][row], [k][col]
  __shared__ float warpSums[kSmallGemmThreads / kWarp][kWarp];
  const i64 tilesM = (m + kTile - 1) / kTile, tilesN = (n + kTile - 1) / kTile;
  const i64 slices = slice > 0 ? (k + slice - 1) / slice : 1;
  const i64 units = tilesM * tilesN * slices * items;
  // (The sums' plan is recomputed where it is needed: kept live across the
  // products it cost ptxas a spill on sm_80.)
  const i64 sumUnits = sumsOf ? columnSumsPlan(k, sumsCols).units : 0;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const Epilogue e{accumulate, residual, ldResidual, bias, relu, reluGrad, mask, ldMask};
  for (i64 unit = blockIdx.x; unit < units + sumUnits; unit += gridDim.x) {
    if (unit >= units) { // the same for every thread of the block
      const ColumnSumsPlan sums = columnSumsPlan(k, sumsCols);
      columnSumsUnit(unit - units, k, sumsCols, sumsOf, sumsLd, sums.part,
                     sums.parts > 1 ? partSums : biasGrad, warpSums);
      continue;
    }
    const i64 tile = unit % (tilesM * tilesN), rest = unit / (tilesM * tilesN);
    const i64 s = rest % slices, item = rest / slices;
    const i64 row0 = tile / tilesN * kTile, col0 = tile % tilesN * kTile;
    const i64 kBegin = s * slice, kEnd = slices > 1 && kBegin + slice < k ? kBegin + slice : k;
    const float *ai = a + item * strideA, *bi = b + item * strideB;
    float acc[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};
    for (i64 k0 = kBegin; k0 < kEnd; k0 += kTile) {
      __syncthreads(); // the last chunk is read
      for (int e = threadIdx.x; e < kTile * kTile; e += kSmallGemmThreads) {
        // Consecutive threads read consecutive addresses of either layout.
        const int along = e % kTile, across = e / kTile;
        const int ka = transA ? across : along, ra = transA ? along : across;
        const i64 ga = row0 + ra, gka = k0 + ka;
        sA[ka][ra] = ga < m && gka < kEnd ? (transA ? ai[gka * lda + ga] : ai[ga * lda + gka])
                                          : 0.0f;
        const int kb = transB ? along : across, cb = transB ? across : along;
        const i64 gb = col0 + cb, gkb = k0 + kb;
        sB[kb][cb] = gb < n && gkb < kEnd ? (transB ? bi[gb * ldb + gkb] : bi[gkb * ldb + gb])
                                          : 0.0f;
      }
      __syncthreads();
      const int depth = int(kEnd - k0 < kTile ? kEnd - k0 : kTile);
      for (int kk = 0; kk < depth; ++kk)
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < 2; ++j)
            acc[i][j] = fusedMulAdd(sA[kk][ty * 2 + i], sB[kk][tx * 2 + j], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const i64 row = row0 + ty * 2 + i, col = col0 + tx * 2 + j;
        if (row >= m || col >= n)
          continue;
        if (partials)
          partials[((item * slices + s) * m + row) * n + col] = acc[i][j];
        else
          finishOutput(acc[i][j], row, col, c + item * strideC, ldc, e);
      }
  }
  if (!counter || !lastBlockDone(counter))
    return; // (counter 0: the finish kernel adds the partials, if any)
  if (partials)
    for (i64 x = threadIdx.x; x < outputs * m * n; x += kSmallGemmThreads)
      finishPartials<true>(x, m, n, parts, partials, c, ldc, strideC, e);
  const i64 sumParts = sumUnits ? columnSumsPlan(k, sumsCols).parts : 0;
  if (sumParts > 1) {
    const Epilogue plain{0, nullptr, 0, nullptr, 0, 0, nullptr, 0};
    for (i64 col = threadIdx.x; col < sumsCols; col += kSmallGemmThreads)
      finishPartials<true>(col, 1, sumsCols, sumParts, partSums, biasGrad, sumsCols, 0, plain);
  }
  if (threadIdx.x == 0)
    *counter = 0; // every block has its ticket: ready for the next launch (a graph's replay)
}

/// C (items of it: `outputs` of them, strideC apart) = the epilogue of the
/// sum of each output's `parts` partials, in order (partials of output o at
/// partials + (o * parts + p) * m * n).
extern "C" __global__ void __launch_bounds__(kSmallGemmThreads)
    tfc_cuda_small_gemm_finish_kernel(i64 m, i64 n, i64 outputs, i64 parts,
                                      const float *__restrict__ partials, float *c, i64 ldc,
                                      i64 strideC, i64 accumulate, const float *residual,
                                      i64 ldResidual, const float *bias, i64 relu, i64 reluGrad,
                                      unsigned *mask, i64 ldMask) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kSmallGemmThreads);
  const Epilogue e{accumulate, residual, ldResidual, bias, relu, reluGrad, mask, ldMask};
  const i64 total = outputs * m * n;
  for (i64 x = i64(blockIdx.x) * kSmallGemmThreads + threadIdx.x; x < total;
       x += i64(gridDim.x) * kSmallGemmThreads)
    finishPartials<false>(x, m, n, parts, partials, c, ldc, strideC, e);
}

/// Column sums of x (rows x cols, row pitch ld) by parts of `part` rows:
/// the sum over part p's rows r of x[r * ld + col], in row order, at
/// sums[p * cols + col]. A unit is 32 columns of one part: 8 warps, each a
/// contiguous eighth of the part's rows (a lane a column), then the eighths
/// in order. One part: the column sums themselves; several: with a counter
/// the last block to finish adds the parts in order into columnSums (and
/// leaves the counter 0), else the finish kernel does, the same way.
extern "C" __global__ void __launch_bounds__(kSmallGemmThreads)
    tfc_cuda_column_sums_kernel(i64 rows, i64 cols, const float *__restrict__ x, i64 ld, i64 part,
                                float *sums, float *columnSums, unsigned *counter) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kSmallGemmThreads);
  __shared__ float warpSums[kSmallGemmThreads / kWarp][kWarp];
  const i64 groups = (cols + kWarp - 1) / kWarp, parts = part > 0 ? (rows + part - 1) / part : 1;
  for (i64 unit = blockIdx.x; unit < groups * parts; unit += gridDim.x)
    columnSumsUnit(unit, rows, cols, x, ld, part, sums, warpSums);
  if (!counter || !lastBlockDone(counter))
    return;
  const Epilogue plain{0, nullptr, 0, nullptr, 0, 0, nullptr, 0};
  for (i64 col = threadIdx.x; col < cols; col += kSmallGemmThreads)
    finishPartials<true>(col, 1, cols, parts, sums, columnSums, cols, 0, plain);
  if (threadIdx.x == 0)
    *counter = 0; // every block has its ticket: ready for the next launch (a graph's replay)
}
