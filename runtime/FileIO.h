//===- FileIO.h - the runtime's file helpers (private to runtime/) --------===//
//
// Shared by the .npy and safetensors readers (and the manifest's shape
// check); defined in Tensor.cpp, except the inline shape check.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_FILEIO_H
#define TFC_RUNTIME_FILEIO_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt::detail {
/// 'path', as error messages name files.
std::string quote(const std::string &path);
/// Opens `path` for reading and reports its size; false with `error` set.
bool openForRead(const std::string &path, int &fd, uint64_t &size, std::string &error);
/// Reads exactly `n` bytes at `offset`; a short read is an error naming `path`.
bool readAt(int fd, uint64_t offset, void *buffer, size_t n, const std::string &path,
            std::string &error);

/// True when the product of `shape`'s non-zero dimensions fits in int64_t,
/// so Tensor::numel() and any stride cannot overflow. Checking the byte
/// count alone is not enough: [3, 2^62, 0] holds 0 bytes, yet multiplying
/// its first two dimensions overflows.
inline bool shapeProductFits(const std::vector<int64_t> &shape) {
  int64_t product = 1;
  for (int64_t d : shape)
    if (d < 0 || (d != 0 && __builtin_mul_overflow(product, d, &product)))
      return false;
  return true;
}
} // namespace tfc::rt::detail

#endif // TFC_RUNTIME_FILEIO_H
