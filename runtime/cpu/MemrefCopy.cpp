//===- MemrefCopy.cpp - the copy routine MLIR's memref lowering calls -----===//
//
// finalize-memref-to-llvm lowers a memref.copy between non-contiguous
// layouts (a slice into a concatenation, a transposed view) to a call of
// `memrefCopy` on unranked descriptors. Upstream ships it in
// libmlir_c_runner_utils; compiled models must not depend on an MLIR
// library, so the runtime defines it with the same ABI.
//
//===----------------------------------------------------------------------===//

#include "runtime/ThreadPool.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {
/// MLIR's unranked memref: the rank and a pointer to the ranked descriptor
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

struct RankedView {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
};

RankedView view(const UnrankedMemRef &m) {
  auto *words = static_cast<int64_t *>(m.descriptor);
  RankedView v;
  v.aligned = reinterpret_cast<char *>(words[1]);
  v.offset = words[2];
  v.sizes = words + 3;
  v.strides = words + 3 + m.rank;
  return v;
}

/// Copies rows [begin, end) of the index space without its innermost dim
/// (row r is the odometer's r-th position), a row at a time.
void copyRows(int64_t elementBytes, int64_t rank, const RankedView &src, const RankedView &dst,
              int64_t begin, int64_t end) {
  const int64_t inner = rank - 1;
  const bool contiguous = src.strides[inner] == 1 && dst.strides[inner] == 1;
  std::vector<int64_t> index(size_t(rank), 0);
  char *s = src.aligned + src.offset * elementBytes;
  char *d = dst.aligned + dst.offset * elementBytes;
  for (int64_t dim = inner - 1, rest = begin; dim >= 0; --dim) {
    index[size_t(dim)] = rest % src.sizes[dim];
    rest /= src.sizes[dim];
    s += index[size_t(dim)] * src.strides[dim] * elementBytes;
    d += index[size_t(dim)] * dst.strides[dim] * elementBytes;
  }
  for (int64_t row = begin; row < end; ++row) {
    if (contiguous) {
      std::memcpy(d, s, size_t(src.sizes[inner] * elementBytes));
    } else {
      for (int64_t j = 0; j < src.sizes[inner]; ++j)
        std::memcpy(d + j * dst.strides[inner] * elementBytes,
                    s + j * src.strides[inner] * elementBytes, size_t(elementBytes));
    }
    for (int64_t dim = inner - 1; dim >= 0; --dim) {
      s += src.strides[dim] * elementBytes;
      d += dst.strides[dim] * elementBytes;
      if (++index[size_t(dim)] < src.sizes[dim])
        break;
      s -= src.strides[dim] * src.sizes[dim] * elementBytes;
      d -= dst.strides[dim] * dst.sizes[dim] * elementBytes;
      index[size_t(dim)] = 0;
    }
  }
}
} // namespace

extern "C" void memrefCopy(int64_t elementBytes, UnrankedMemRef *source,
                           UnrankedMemRef *target) {
  int64_t rank = source->rank;
  RankedView src = view(*source), dst = view(*target);
  for (int64_t i = 0; i < rank; ++i)
    if (src.sizes[i] == 0)
      return;
  if (rank == 0) {
    std::memcpy(dst.aligned + dst.offset * elementBytes, src.aligned + src.offset * elementBytes,
                size_t(elementBytes));
    return;
  }
  // Rows (the innermost dim, contiguous on both sides in the common case:
  // one memcpy each) go to the pool in chunks of at least kChunkBytes: a
  // convolution's zero-padded input (a few MB) is copied on every core.
  constexpr int64_t kChunkBytes = int64_t(1) << 16;
  int64_t rows = 1;
  for (int64_t i = 0; i + 1 < rank; ++i)
    rows *= src.sizes[i];
  int64_t rowBytes = std::max<int64_t>(1, src.sizes[rank - 1] * elementBytes);
  tfc::rt::parallelFor(rows, std::max<int64_t>(1, kChunkBytes / rowBytes),
                       [&](int64_t begin, int64_t end) {
                         copyRows(elementBytes, rank, src, dst, begin, end);
                       });
}
