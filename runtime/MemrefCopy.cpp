//===- MemrefCopy.cpp - the copy routine MLIR's memref lowering calls -----===//
//
// finalize-memref-to-llvm lowers a memref.copy between non-contiguous
// layouts (a slice into a concatenation, a transposed view) to a call of
// `memrefCopy` on unranked descriptors. Upstream ships it in
// libmlir_c_runner_utils; compiled models must not depend on an MLIR
// library, so the runtime defines it with the same ABI.
//
//===----------------------------------------------------------------------===//

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
} // namespace

extern "C" void memrefCopy(int64_t elementBytes, UnrankedMemRef *source,
                           UnrankedMemRef *target) {
  int64_t rank = source->rank;
  RankedView src = view(*source), dst = view(*target);
  char *s = src.aligned + src.offset * elementBytes;
  char *d = dst.aligned + dst.offset * elementBytes;
  for (int64_t i = 0; i < rank; ++i)
    if (src.sizes[i] == 0)
      return;
  if (rank == 0) {
    std::memcpy(d, s, size_t(elementBytes));
    return;
  }
  // Walk the index space with an odometer; the innermost dim is contiguous
  // on both sides in the common case and then one memcpy per row.
  std::vector<int64_t> index(size_t(rank), 0);
  int64_t inner = rank - 1;
  bool rows = src.strides[inner] == 1 && dst.strides[inner] == 1;
  for (;;) {
    if (rows) {
      std::memcpy(d, s, size_t(src.sizes[inner] * elementBytes));
    } else {
      for (int64_t j = 0; j < src.sizes[inner]; ++j)
        std::memcpy(d + j * dst.strides[inner] * elementBytes,
                    s + j * src.strides[inner] * elementBytes, size_t(elementBytes));
    }
    int64_t dim = inner - 1;
    for (; dim >= 0; --dim) {
      s += src.strides[dim] * elementBytes;
      d += dst.strides[dim] * elementBytes;
      if (++index[size_t(dim)] < src.sizes[dim])
        break;
      s -= src.strides[dim] * src.sizes[dim] * elementBytes;
      d -= dst.strides[dim] * dst.sizes[dim] * elementBytes;
      index[size_t(dim)] = 0;
    }
    if (dim < 0)
      return;
  }
}
