//===- Tensor.h - host tensors and their files (.npy, safetensors) --------===//
//
// The runtime's one tensor type: a dtype, a shape and the bytes, row-major.
// Readers and writers report failure through an error string (the binary's
// CLI prints it and exits 1); writers go through a temporary file and a
// rename, so a failed or interrupted write never leaves a torn file.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TENSOR_H
#define TFC_RUNTIME_TENSOR_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tfc::rt {

/// Element types of compiled models; Bool is one byte (0 or 1), as MLIR
/// lowers i1 memrefs and as numpy stores '|b1'.
enum class DType { F32, I32, Bool };

size_t dtypeSize(DType dtype);
/// "f32", "i32", "bool": the names of the .tf language.
const char *dtypeName(DType dtype);
/// "1,234,567".
std::string withThousands(int64_t n);
/// "[128, 16]".
std::string shapeString(const std::vector<int64_t> &shape);

struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // numel() * dtypeSize(dtype)

  Tensor() = default;
  Tensor(DType dtype, std::vector<int64_t> shape); // zero-filled
  int64_t numel() const;
  float *f32() { return reinterpret_cast<float *>(bytes.data()); }
  const float *f32() const { return reinterpret_cast<const float *>(bytes.data()); }
  int32_t *i32() { return reinterpret_cast<int32_t *>(bytes.data()); }
  const int32_t *i32() const { return reinterpret_cast<const int32_t *>(bytes.data()); }
};

/// Reads a .npy file (format 1.0-3.0, C order, little-endian). Accepts '<f4',
/// '<i4', '|b1'; also '<f8' (converted to f32), '<i8' and '|i1'/'<i2'
/// (converted to i32 when every value fits) and '|u1'. Anything else, a
/// Fortran-order array, a truncated or corrupt file: false with a message
/// naming the file and the problem.
bool readNpy(const std::string &path, Tensor &out, std::string &error);
/// Writes '<f4', '<i4' or '|b1' (version 1.0), atomically.
bool writeNpy(const std::string &path, const Tensor &tensor, std::string &error);
/// Writes '<f8' (version 1.0), atomically: the reference interpreter's
/// float64 results (`tfc interpret`).
bool writeNpyF64(const std::string &path, const std::vector<int64_t> &shape,
                 const std::vector<double> &values, std::string &error);

/// A safetensors file's tensors, in file order (F32, I32, BOOL dtypes; other
/// dtypes are an error naming the tensor). Checks the header's JSON, every
/// offset against the file size, and overlapping or out-of-order data.
bool readSafetensors(const std::string &path,
                     std::vector<std::pair<std::string, Tensor>> &out,
                     std::string &error);
/// Writes the tensors in the given order (header keys sorted as the format's
/// reference writer does is not required), atomically.
bool writeSafetensors(const std::string &path,
                      const std::vector<std::pair<std::string, const Tensor *>> &tensors,
                      std::string &error);

/// Writes `contents` to `path` through `path.tmp.PID` and rename(2).
bool writeFileAtomically(const std::string &path, const std::string &contents,
                         std::string &error);

} // namespace tfc::rt

#endif // TFC_RUNTIME_TENSOR_H
