//===- FileIO.h - the runtime's file helpers (private to runtime/) --------===//
//
// Shared by the .npy and safetensors readers; defined in Tensor.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_FILEIO_H
#define TFC_RUNTIME_FILEIO_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace tfc::rt::detail {
/// 'path', as error messages name files.
std::string quote(const std::string &path);
/// Opens `path` for reading and reports its size; false with `error` set.
bool openForRead(const std::string &path, int &fd, uint64_t &size, std::string &error);
/// Reads exactly `n` bytes at `offset`; a short read is an error naming `path`.
bool readAt(int fd, uint64_t offset, void *buffer, size_t n, const std::string &path,
            std::string &error);
} // namespace tfc::rt::detail

#endif // TFC_RUNTIME_FILEIO_H
