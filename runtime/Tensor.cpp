//===- Tensor.cpp - host tensors, dtypes and atomic file writes -----------===//
//
// The Tensor basics, and the POSIX file helpers the .npy and safetensors
// readers and writers share (declared again in Npy.cpp and Safetensors.cpp,
// in namespace detail, since the runtime has no private header for them).
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"
#include "runtime/FileIO.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tfc::rt {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 4;
  case DType::I32:
    return 4;
  case DType::Bool:
    return 1;
  }
  return 1;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::I32:
    return "i32";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

std::string withThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)) {
  bytes.assign(static_cast<size_t>(numel()) * dtypeSize(dtype), 0);
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d < 0 ? 0 : d;
  return n;
}

namespace detail {

std::string quote(const std::string &path) { return "'" + path + "'"; }

/// Opens `path` for reading and reports its size; a directory is an error
/// here rather than a confusing read failure later.
bool openForRead(const std::string &path, int &fd, uint64_t &size,
                 std::string &error) {
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open " + quote(path) + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
    ::close(fd);
    fd = -1;
    error = "cannot open " + quote(path) + ": " + std::strerror(err);
    return false;
  }
  size = static_cast<uint64_t>(st.st_size);
  return true;
}

/// Reads exactly `n` bytes at `offset` (pread, so no shared file position).
bool readAt(int fd, uint64_t offset, void *buffer, size_t n,
            const std::string &path, std::string &error) {
  auto *p = static_cast<char *>(buffer);
  while (n > 0) {
    ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      error = "cannot read " + quote(path) + ": " +
              (got < 0 ? std::strerror(errno) : "unexpected end of file");
      return false;
    }
    p += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

} // namespace detail

bool writeFileAtomically(const std::string &path, const std::string &contents,
                         std::string &error) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const char *what, int err, int fd) {
    if (fd >= 0)
      ::close(fd);
    ::unlink(tmp.c_str());
    error = std::string("cannot ") + what + " " + detail::quote(path) + ": " +
            std::strerror(err);
    return false;
  };

  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    // Nothing was created, so there is nothing to unlink (and a file of that
    // name that we could not open is not ours to remove).
    error = "cannot write " + detail::quote(path) + ": " + std::strerror(errno);
    return false;
  }
  const char *p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return fail("write", n < 0 ? errno : EIO, fd);
    p += n;
    left -= static_cast<size_t>(n);
  }
  // No fsync: rename alone guarantees readers never see a torn file if the
  // process dies; only a power loss could, and checkpoints are not worth an
  // fsync per file in tests and training loops.
  if (::close(fd) != 0)
    return fail("write", errno, -1);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail("write", errno, -1);
  return true;
}

} // namespace tfc::rt
