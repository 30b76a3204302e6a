//===- gather.cu - a training batch gathered from samples on the GPU ------===//
//
// defines: tfc_cuda_gather_rows_kernel, tfc_cuda_advance_first_kernel
//
// The twins of Device.h's BatchGather: row i of `to` is row
// order[*first + i] of `rows`, each `rowBytes` long, for i < count; then
// *first += count (the advance kernel, after every input's gather). The
// training loop keeps each split's samples on the device (one array an
// input, in sample order) and an order beside them (int64 sample indices:
// the epoch's for training, the samples' own, padded with a zero row, for
// evaluation); each batch is gathered straight into the entry's input
// buffer (runtime/Train.cpp's SamplesOnDevice). `first` is device memory, so
// the launches are the same every step: captured in the step's CUDA graph
// with the entry, a replay gathers the next batch without the host.
//
// A thread a word of the batch, the words of a row consecutive and the rows
// one after another, so a warp writes consecutive words of `to` and reads
// consecutive words of each source row (coalesced both ways). The word is
// 16 bytes when `to`, `rows` and `rowBytes` are multiples of 16 (a training
// input's rows usually are: the device's buffers are 256-byte aligned), else
// 4 bytes when multiples of 4, else a byte. A copy: no arithmetic on the
// values, no atomics; the same bytes for any grid.
//
// Launch: 256 threads a block, grid.x any (ceil(count x rowBytes / word /
// 256) blocks is a word a thread).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/kernels/KernelMath.h"
#include "runtime/cuda/kernels/Warp.cuh"

using namespace tfc::rt::cuda::kernels;

typedef long long i64;

namespace {

/// The batch's words of type Word (rowBytes a multiple of its size).
template <typename Word>
__device__ void gatherWords(unsigned char *__restrict__ to, const unsigned char *__restrict__ rows,
                            i64 rowBytes, const i64 *__restrict__ indices, i64 count) {
  const i64 rowWords = rowBytes / i64(sizeof(Word)), words = rowWords * count;
  Word *out = reinterpret_cast<Word *>(to);
  for (i64 w = i64(blockIdx.x) * kGatherThreads + threadIdx.x; w < words;
       w += i64(gridDim.x) * kGatherThreads) {
    const i64 row = w / rowWords, word = w - row * rowWords;
    const Word *from = reinterpret_cast<const Word *>(rows + indices[row] * rowBytes);
    out[w] = from[word];
  }
}

} // namespace

/// to[i] = rows[order[*first + i]] for i < count, rows of rowBytes bytes;
/// the order holds int64 row numbers (in range: the caller's promise).
extern "C" __global__ void __launch_bounds__(kGatherThreads)
    tfc_cuda_gather_rows_kernel(unsigned char *__restrict__ to,
                                const unsigned char *__restrict__ rows, i64 rowBytes,
                                const i64 *__restrict__ order, const i64 *__restrict__ first,
                                i64 count) {
  awaitPreviousKernel();
  trapUnlessBlockSize(kGatherThreads);
  const i64 *__restrict__ indices = order + *first;
  const unsigned long long aligned =
      reinterpret_cast<unsigned long long>(to) | reinterpret_cast<unsigned long long>(rows) |
      static_cast<unsigned long long>(rowBytes);
  if (aligned % 16 == 0)
    gatherWords<uint4>(to, rows, rowBytes, indices, count);
  else if (aligned % 4 == 0)
    gatherWords<unsigned>(to, rows, rowBytes, indices, count);
  else
    gatherWords<unsigned char>(to, rows, rowBytes, indices, count);
}

/// *first += count: the next batch's first row of the order. One block of
/// a warp (the smallest block a SIMT emulator runs), thread 0 writing;
/// launched after the batch's gathers, which read *first (the stream, or
/// the graph's chain of nodes, orders them).
extern "C" __global__ void __launch_bounds__(kAdvanceThreads)
    tfc_cuda_advance_first_kernel(i64 *first, i64 count) {
  awaitPreviousKernel();
  if (blockIdx.x == 0 && threadIdx.x == 0)
    *first += count;
}
