//===- Npy.cpp - numpy's .npy format --------------------------------------===//
//
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html:
// "\x93NUMPY", a version (1.0: u16 header length; 2.0/3.0: u32), a Python
// dict literal padded with spaces and '\n', then the raw array. The header
// is parsed by hand and every size is checked before use, so a corrupt file
// is an error message, never a crash or a huge allocation.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"

#include <cctype>
#include <cstring>
#include <limits>

#include <unistd.h>

#include "runtime/FileIO.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the runtime's file formats assume a little-endian host");

namespace tfc::rt {
namespace {

using detail::quote;

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// numpy itself refuses headers over 10000 bytes by default; 1 MiB bounds
// what we read before knowing the file is sane.
constexpr uint64_t kMaxHeaderLen = 1 << 20;

/// What the header's 'descr' names: the on-disk element and how to convert.
enum class DiskType { F32, I32, Bool, F64, I64, I8, I16, U8 };

struct Header {
  bool haveDescr = false, haveOrder = false, haveShape = false;
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A recursive-descent parser for the one dict literal numpy writes; it
/// accepts either quote style, arbitrary spaces, a trailing comma and
/// Python 2's "3L" integers.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : s(text) {}

  bool parse(Header &h, std::string &why) {
    skipSpace();
    if (!eat('{'))
      return fail("expected '{'", why);
    skipSpace();
    while (!eat('}')) {
      std::string key;
      if (!parseString(key))
        return fail("expected a quoted key", why);
      skipSpace();
      if (!eat(':'))
        return fail("expected ':' after '" + key + "'", why);
      skipSpace();
      // Python keeps a repeated key's last value; refuse rather than guess
      // (parseShape would append the second tuple to the first).
      if ((key == "descr" && h.haveDescr) ||
          (key == "fortran_order" && h.haveOrder) ||
          (key == "shape" && h.haveShape))
        return fail("'" + key + "' is repeated", why);
      if (key == "descr") {
        if (peek() == '[')
          return fail("structured dtypes are not supported", why);
        if (!parseString(h.descr))
          return fail("'descr' is not a string", why);
        h.haveDescr = true;
      } else if (key == "fortran_order") {
        if (!parseBool(h.fortranOrder))
          return fail("'fortran_order' is not True or False", why);
        h.haveOrder = true;
      } else if (key == "shape") {
        if (!parseShape(h.shape, why))
          return false;
        h.haveShape = true;
      } else {
        return fail("unexpected key '" + key + "'", why);
      }
      skipSpace();
      if (eat(','))
        skipSpace();
      else if (peek() != '}')
        return fail("expected ',' or '}'", why);
    }
    skipSpace();
    if (pos != s.size())
      return fail("unexpected text after the dict", why);
    if (!h.haveDescr || !h.haveOrder || !h.haveShape)
      return fail("the dict lacks 'descr', 'fortran_order' or 'shape'", why);
    return true;
  }

private:
  const std::string &s;
  size_t pos = 0;

  char peek() const { return pos < s.size() ? s[pos] : '\0'; }
  bool eat(char c) {
    if (peek() != c)
      return false;
    ++pos;
    return true;
  }
  void skipSpace() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' ||
                              s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }
  bool fail(const std::string &msg, std::string &why) {
    why = msg;
    return false;
  }

  bool parseString(std::string &out) {
    char q = peek();
    if (q != '\'' && q != '"')
      return false;
    size_t end = s.find(q, pos + 1);
    if (end == std::string::npos)
      return false;
    out = s.substr(pos + 1, end - pos - 1);
    // Escapes never occur in what numpy writes; refuse rather than misread.
    if (out.find('\\') != std::string::npos)
      return false;
    pos = end + 1;
    return true;
  }

  bool parseBool(bool &out) {
    if (s.compare(pos, 4, "True") == 0) {
      pos += 4;
      out = true;
      return true;
    }
    if (s.compare(pos, 5, "False") == 0) {
      pos += 5;
      out = false;
      return true;
    }
    return false;
  }

  bool parseShape(std::vector<int64_t> &shape, std::string &why) {
    if (!eat('('))
      return fail("'shape' is not a tuple", why);
    skipSpace();
    bool needComma = false; // "(5)" is an int, not a tuple
    while (!eat(')')) {
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        return fail("'shape' holds something other than non-negative "
                    "integers",
                    why);
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        int digit = s[pos++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return fail("a dimension in 'shape' is too large", why);
        v = v * 10 + digit;
      }
      if (peek() == 'L' || peek() == 'l')
        ++pos;
      shape.push_back(v);
      skipSpace();
      if (eat(',')) {
        needComma = false;
        skipSpace();
      } else if (peek() != ')') {
        return fail("expected ',' or ')' in 'shape'", why);
      } else {
        needComma = true;
      }
    }
    if (needComma && shape.size() == 1)
      return fail("'shape' is not a tuple", why);
    return true;
  }
};

/// Maps a descr to its on-disk type; `why` explains a refusal.
bool parseDescr(const std::string &descr, DiskType &type, size_t &itemSize,
                std::string &why) {
  if (descr.size() < 2) {
    why = "unsupported";
    return false;
  }
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    order = '='; // no byte-order character at all, e.g. "f4"
    code = descr;
  }
  struct Known {
    const char *code;
    DiskType type;
    size_t size;
  };
  static const Known known[] = {
      {"f4", DiskType::F32, 4},  {"i4", DiskType::I32, 4},
      {"b1", DiskType::Bool, 1}, {"f8", DiskType::F64, 8},
      {"i8", DiskType::I64, 8},  {"i1", DiskType::I8, 1},
      {"i2", DiskType::I16, 2},  {"u1", DiskType::U8, 1},
  };
  for (const Known &k : known) {
    if (code != k.code)
      continue;
    if (order == '>' && k.size > 1) {
      why = "big-endian";
      return false;
    }
    type = k.type;
    itemSize = k.size;
    return true;
  }
  why = "unsupported";
  return false;
}

uint64_t loadLE(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

/// Widens or narrows `count` elements of `disk` into `out` (already sized).
/// Integers must fit in i32: silently wrapping an index would be a bug far
/// from its cause.
bool convert(DiskType disk, const unsigned char *src, int64_t count,
             Tensor &out, const std::string &path, std::string &error) {
  for (int64_t i = 0; i < count; ++i) {
    switch (disk) {
    case DiskType::F64: {
      double d;
      std::memcpy(&d, src + 8 * i, 8);
      out.f32()[i] = static_cast<float>(d);
      break;
    }
    case DiskType::I64: {
      int64_t v;
      std::memcpy(&v, src + 8 * i, 8);
      if (v < std::numeric_limits<int32_t>::min() ||
          v > std::numeric_limits<int32_t>::max()) {
        error = quote(path) + " holds the int64 value " + std::to_string(v) +
                " (element " + std::to_string(i) +
                "), which is out of i32 range";
        return false;
      }
      out.i32()[i] = static_cast<int32_t>(v);
      break;
    }
    case DiskType::I16: {
      int16_t v;
      std::memcpy(&v, src + 2 * i, 2);
      out.i32()[i] = v;
      break;
    }
    case DiskType::I8:
      out.i32()[i] = static_cast<int8_t>(src[i]);
      break;
    case DiskType::U8:
      out.i32()[i] = src[i];
      break;
    case DiskType::Bool:
      out.bytes[i] = src[i] != 0;
      break;
    case DiskType::F32:
    case DiskType::I32:
      break; // read in place, never converted
    }
  }
  return true;
}

/// Closes the descriptor on every path out of readNpy.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

bool readNpy(const std::string &path, Tensor &out, std::string &error) {
  int fd = -1;
  uint64_t fileSize = 0;
  if (!detail::openForRead(path, fd, fileSize, error))
    return false;
  FdCloser closer{fd};

  unsigned char prefix[12];
  size_t prefixRead = fileSize < sizeof(prefix) ? fileSize : sizeof(prefix);
  if (!detail::readAt(fd, 0, prefix, prefixRead, path, error))
    return false;
  if (prefixRead < kMagicLen || std::memcmp(prefix, kMagic, kMagicLen) != 0) {
    error = quote(path) + " is not a .npy file";
    return false;
  }
  auto truncatedHeader = [&] {
    error = quote(path) + " is truncated: the header is incomplete";
    return false;
  };
  if (prefixRead < 8)
    return truncatedHeader();
  unsigned major = prefix[6], minor = prefix[7];
  uint64_t headerLen, headerStart;
  if (major == 1) {
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    headerStart = 12;
  } else {
    error = quote(path) + " has .npy format version " + std::to_string(major) +
            "." + std::to_string(minor) + "; expected 1.0, 2.0 or 3.0";
    return false;
  }
  if (prefixRead < headerStart)
    return truncatedHeader();
  headerLen = loadLE(prefix + 8, static_cast<int>(headerStart - 8));
  if (headerLen > fileSize - headerStart)
    return truncatedHeader();
  if (headerLen > kMaxHeaderLen) {
    error = quote(path) + " has a corrupt header: it is " +
            std::to_string(headerLen) + " bytes long";
    return false;
  }

  std::string text(headerLen, '\0');
  if (!detail::readAt(fd, headerStart, text.data(), headerLen, path, error))
    return false;
  Header header;
  std::string why;
  if (!HeaderParser(text).parse(header, why)) {
    error = quote(path) + " has a corrupt header: " + why;
    return false;
  }

  DiskType disk;
  size_t itemSize = 0;
  if (!parseDescr(header.descr, disk, itemSize, why)) {
    if (why == "big-endian")
      error = quote(path) + " holds big-endian data ('" + header.descr +
              "'); only little-endian is supported";
    else
      error = quote(path) + " holds dtype '" + header.descr +
              "'; expected f32, i32 or bool";
    return false;
  }
  if (header.fortranOrder) {
    error = quote(path) +
            " is in Fortran order (fortran_order: True); only C order is "
            "supported";
    return false;
  }

  // Every product is checked: the data must fit in the file, so a shape
  // whose size overflows or exceeds the file is corrupt, not an allocation;
  // so is an empty one whose other dimensions overflow (numel() would).
  uint64_t dataStart = headerStart + headerLen;
  uint64_t available = fileSize - dataStart;
  uint64_t numel = 1;
  bool overflow = false;
  for (int64_t d : header.shape)
    overflow |= __builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel);
  uint64_t dataBytes = 0;
  overflow |= __builtin_mul_overflow(numel, itemSize, &dataBytes);
  if (overflow || !detail::shapeProductFits(header.shape) ||
      numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 8)) {
    error = quote(path) + " has a corrupt header: shape " +
            shapeString(header.shape) + " is too large";
    return false;
  }
  if (dataBytes > available) {
    error = quote(path) + " is truncated: expected " +
            std::to_string(dataBytes) + " bytes of data, found " +
            std::to_string(available);
    return false;
  }
  if (dataBytes < available) {
    error = quote(path) + " is corrupt: expected " + std::to_string(dataBytes) +
            " bytes of data, found " + std::to_string(available);
    return false;
  }

  DType dtype = disk == DiskType::F32 || disk == DiskType::F64 ? DType::F32
                : disk == DiskType::Bool                       ? DType::Bool
                                                               : DType::I32;
  Tensor result(dtype, header.shape);
  if (disk == DiskType::F32 || disk == DiskType::I32) {
    if (!detail::readAt(fd, dataStart, result.bytes.data(), dataBytes, path,
                        error))
      return false;
  } else {
    std::vector<unsigned char> raw(dataBytes);
    if (!detail::readAt(fd, dataStart, raw.data(), dataBytes, path, error))
      return false;
    if (!convert(disk, raw.data(), static_cast<int64_t>(numel), result, path,
                 error))
      return false;
  }
  out = std::move(result);
  return true;
}

namespace {

/// False, with a message naming `path`, for a shape with a negative dimension.
bool writableShape(const std::string &path, const std::vector<int64_t> &shape,
                   std::string &error) {
  for (int64_t d : shape) {
    if (d < 0) {
      error = "cannot write " + quote(path) + ": negative dimension in shape " +
              shapeString(shape);
      return false;
    }
  }
  return true;
}

/// A version 1.0 .npy file of `descr` elements (version 2.0 when the header
/// outgrows its u16 length: thousands of dimensions), written atomically;
/// `shape` is writable.
bool writeNpyData(const std::string &path, const char *descr,
                  const std::vector<int64_t> &shape, const void *data,
                  size_t bytes, std::string &error) {
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    if (i + 1 < shape.size() || shape.size() == 1)
      dict += ",";
    if (i + 1 < shape.size())
      dict += " ";
  }
  dict += "), }";

  // The data starts 64-byte aligned as numpy's writer does.
  size_t prefixLen = 10;
  size_t total = (prefixLen + dict.size() + 1 + 63) / 64 * 64;
  unsigned major = 1;
  if (total - prefixLen > 0xffff) {
    major = 2;
    prefixLen = 12;
    total = (prefixLen + dict.size() + 1 + 63) / 64 * 64;
  }
  size_t headerLen = total - prefixLen;
  dict.append(headerLen - dict.size() - 1, ' ');
  dict += '\n';

  std::string contents(kMagic, kMagicLen);
  contents += static_cast<char>(major);
  contents += '\0';
  for (size_t i = 0; i < prefixLen - 8; ++i)
    contents += static_cast<char>((headerLen >> (8 * i)) & 0xff);
  contents += dict;
  contents.append(static_cast<const char *>(data), bytes);
  return writeFileAtomically(path, contents, error);
}

} // namespace

bool writeNpy(const std::string &path, const Tensor &tensor,
              std::string &error) {
  if (!writableShape(path, tensor.shape, error))
    return false;
  size_t expected =
      static_cast<size_t>(tensor.numel()) * dtypeSize(tensor.dtype);
  if (tensor.bytes.size() != expected) {
    error = "cannot write " + quote(path) + ": the tensor holds " +
            std::to_string(tensor.bytes.size()) + " bytes but its shape " +
            shapeString(tensor.shape) + " needs " + std::to_string(expected);
    return false;
  }
  const char *descr = tensor.dtype == DType::F32   ? "<f4"
                      : tensor.dtype == DType::I32 ? "<i4"
                                                   : "|b1";
  return writeNpyData(path, descr, tensor.shape, tensor.bytes.data(),
                      tensor.bytes.size(), error);
}

bool writeNpyF64(const std::string &path, const std::vector<int64_t> &shape,
                 const std::vector<double> &values, std::string &error) {
  if (!writableShape(path, shape, error))
    return false;
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  if (values.size() != static_cast<size_t>(numel)) {
    error = "cannot write " + quote(path) + ": " + std::to_string(values.size()) +
            " values for the shape " + shapeString(shape);
    return false;
  }
  return writeNpyData(path, "<f8", shape, values.data(),
                      values.size() * sizeof(double), error);
}

} // namespace tfc::rt
