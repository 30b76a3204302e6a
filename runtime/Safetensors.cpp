//===- Safetensors.cpp - the safetensors format ---------------------------===//
//
// https://github.com/huggingface/safetensors: a u64 little-endian header
// length N, N bytes of JSON ({"name": {"dtype", "shape", "data_offsets"},
// optional "__metadata__"}), then the data buffer that the offsets index.
// Reading validates what the reference implementation does (offsets in
// range, sizes matching shapes, the buffer covered exactly, with no gaps or
// overlaps) and never lets a JSON exception escape.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include <unistd.h>

#include "runtime/FileIO.h"
#include "runtime/JsonLimits.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the runtime's file formats assume a little-endian host");

namespace tfc::rt {
namespace {

using detail::quote;
// The reader's JSON finds keys in a std::map. ordered_json would keep the
// header's key order, but it finds keys by linear search: a 9 MB header of
// 160,000 empty tensors took minutes to parse. So KeyOrderRecorder records
// the order (tensors with equal offsets, the empty ones, keep the file's).
using Json = nlohmann::json;
// The writer's header lists tensors in the order given.
using OrderedJson = nlohmann::ordered_json;

// The reference implementation's limit; it also bounds our allocation
// before the header is known to be sane.
constexpr uint64_t kMaxHeaderLen = 100u << 20;

/// nlohmann's own DOM builder, plus the top-level keys in file order. (Its
/// parse callback could record them too, but that builder rescans the
/// parent object after each child object: quadratic again.)
class KeyOrderRecorder : public nlohmann::detail::json_sax_dom_parser<Json> {
  using Base = nlohmann::detail::json_sax_dom_parser<Json>;
  int depth = 0;

public:
  std::vector<std::string> keys;

  explicit KeyOrderRecorder(Json &result)
      : Base(result, /*allow_exceptions=*/false) {}
  bool start_object(std::size_t n) {
    ++depth;
    return Base::start_object(n);
  }
  bool end_object() {
    --depth;
    return Base::end_object();
  }
  bool start_array(std::size_t n) {
    ++depth;
    return Base::start_array(n);
  }
  bool end_array() {
    --depth;
    return Base::end_array();
  }
  bool key(std::string &k) {
    if (depth == 1)
      keys.push_back(k);
    return Base::key(k);
  }
};

struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

bool parseDType(const std::string &s, DType &dtype) {
  if (s == "F32")
    dtype = DType::F32;
  else if (s == "I32")
    dtype = DType::I32;
  else if (s == "BOOL")
    dtype = DType::Bool;
  else
    return false;
  return true;
}

const char *safetensorsName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::I32:
    return "I32";
  case DType::Bool:
    return "BOOL";
  }
  return "?";
}

/// A JSON non-negative integer (not 2.0, not -1, not "2").
bool getUnsigned(const Json &j, uint64_t &out) {
  if (j.is_number_unsigned()) {
    out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    out = static_cast<uint64_t>(j.get<int64_t>());
    return true;
  }
  return false;
}

/// Checks one tensor's header entry against the data buffer's size.
/// `unsupported` tells an unsupported dtype (a valid file we cannot load)
/// from corruption.
bool parseEntry(const std::string &name, const Json &j, uint64_t dataSize,
                Entry &e, std::string &why, bool &unsupported) {
  unsupported = false;
  auto bad = [&](const std::string &msg) {
    why = "tensor '" + name + "' " + msg;
    return false;
  };
  if (!j.is_object())
    return bad("is not a JSON object");
  auto dtypeIt = j.find("dtype"), shapeIt = j.find("shape"),
       offsetsIt = j.find("data_offsets");
  if (dtypeIt == j.end() || shapeIt == j.end() || offsetsIt == j.end())
    return bad("lacks 'dtype', 'shape' or 'data_offsets'");
  if (!dtypeIt->is_string())
    return bad("has a 'dtype' that is not a string");
  const std::string &dtypeStr = dtypeIt->get_ref<const std::string &>();
  if (!parseDType(dtypeStr, e.dtype)) {
    unsupported = true;
    return bad("has dtype " + dtypeStr + "; expected F32, I32 or BOOL");
  }

  if (!shapeIt->is_array())
    return bad("has a 'shape' that is not an array");
  uint64_t numel = 1;
  bool overflow = false;
  for (const Json &d : *shapeIt) {
    uint64_t v;
    if (!getUnsigned(d, v) ||
        v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return bad("has a 'shape' that is not a list of non-negative integers");
    e.shape.push_back(static_cast<int64_t>(v));
    overflow |= __builtin_mul_overflow(numel, v, &numel);
  }
  uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(numel, dtypeSize(e.dtype), &bytes);

  if (!offsetsIt->is_array() || offsetsIt->size() != 2 ||
      !getUnsigned((*offsetsIt)[0], e.begin) ||
      !getUnsigned((*offsetsIt)[1], e.end))
    return bad("has 'data_offsets' that are not two non-negative integers");
  if (e.end < e.begin)
    return bad("has data_offsets [" + std::to_string(e.begin) + ", " +
               std::to_string(e.end) + "] that end before they begin");
  if (e.end > dataSize)
    return bad("has data_offsets [" + std::to_string(e.begin) + ", " +
               std::to_string(e.end) + "] beyond the " +
               std::to_string(dataSize) + " bytes of data");
  if (overflow || bytes != e.end - e.begin)
    return bad(
        "has " + std::to_string(e.end - e.begin) +
        " bytes of data but its shape " + shapeString(e.shape) + " and dtype " +
        dtypeStr + " need " +
        (overflow ? std::string("more than 2^64") : std::to_string(bytes)));
  if (!detail::shapeProductFits(e.shape))
    return bad("has a 'shape' " + shapeString(e.shape) +
               " whose dimensions multiply past 2^63");
  return true;
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

bool readSafetensors(const std::string &path,
                     std::vector<std::pair<std::string, Tensor>> &out,
                     std::string &error) {
  int fd = -1;
  uint64_t fileSize = 0;
  if (!detail::openForRead(path, fd, fileSize, error))
    return false;
  FdCloser closer{fd};
  auto corrupt = [&](const std::string &why) {
    error = quote(path) + " is not a valid safetensors file: " + why;
    return false;
  };

  if (fileSize < 8)
    return corrupt("it is " + std::to_string(fileSize) +
                   " bytes long, too short for the header length");
  unsigned char lenBytes[8];
  if (!detail::readAt(fd, 0, lenBytes, 8, path, error))
    return false;
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | lenBytes[i];
  if (headerLen > fileSize - 8)
    return corrupt("the header length " + std::to_string(headerLen) +
                   " exceeds the " + std::to_string(fileSize - 8) +
                   " bytes after it (truncated?)");
  if (headerLen > kMaxHeaderLen)
    return corrupt("the header length " + std::to_string(headerLen) +
                   " is over the 100 MiB limit");

  std::string text(headerLen, '\0');
  if (!detail::readAt(fd, 8, text.data(), headerLen, path, error))
    return false;
  if (!detail::jsonDepthWithin(text))
    return corrupt("the header's JSON nests deeper than " +
                   std::to_string(detail::kMaxJsonDepth) + " levels");
  Json header;
  KeyOrderRecorder recorder(header);
  if (!Json::sax_parse(text, &recorder))
    return corrupt("the header is not valid JSON");
  if (!header.is_object())
    return corrupt("the header is not a JSON object");

  uint64_t dataStart = 8 + headerLen;
  uint64_t dataSize = fileSize - dataStart;
  std::vector<Entry> entries;
  std::set<std::string> done; // a repeated key: its last value, first place
  for (const std::string &key : recorder.keys) {
    if (!done.insert(key).second)
      continue;
    const Json &value = *header.find(key); // present: the parser saw it
    if (key == "__metadata__") {
      // Metadata is not returned, but it must be what the format says.
      bool ok = value.is_object() || value.is_null();
      if (value.is_object())
        for (const Json &v : value)
          ok &= v.is_string();
      if (!ok)
        return corrupt("'__metadata__' is not a map of strings to strings");
      continue;
    }
    Entry e;
    e.name = key;
    std::string why;
    bool unsupported;
    if (!parseEntry(e.name, value, dataSize, e, why, unsupported)) {
      if (!unsupported)
        return corrupt(why);
      error = quote(path) + ": " + why;
      return false;
    }
    entries.push_back(std::move(e));
  }

  // The buffer must be covered exactly: sorted by offset, each tensor
  // starts where the previous one ended and the last ends at the file's end.
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const Entry &a, const Entry &b) { return a.begin < b.begin; });
  uint64_t covered = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry &e = entries[i];
    if (e.begin < covered)
      return corrupt("tensor '" + e.name + "' overlaps tensor '" +
                     entries[i - 1].name + "'");
    if (e.begin > covered)
      return corrupt("the data has a gap of " +
                     std::to_string(e.begin - covered) +
                     " bytes before tensor '" + e.name + "'");
    covered = e.end;
  }
  if (covered != dataSize)
    return corrupt("the data has " + std::to_string(dataSize - covered) +
                   " bytes after the last tensor");

  std::vector<std::pair<std::string, Tensor>> result;
  result.reserve(entries.size());
  for (const Entry &e : entries) {
    Tensor t(e.dtype, e.shape);
    if (!detail::readAt(fd, dataStart + e.begin, t.bytes.data(), t.bytes.size(),
                        path, error))
      return false;
    if (t.dtype == DType::Bool)
      for (uint8_t &b : t.bytes)
        b = b != 0;
    result.emplace_back(e.name, std::move(t));
  }
  out = std::move(result);
  return true;
}

bool writeSafetensors(
    const std::string &path,
    const std::vector<std::pair<std::string, const Tensor *>> &tensors,
    std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "cannot write " + quote(path) + ": " + why;
    return false;
  };
  OrderedJson header = OrderedJson::object();
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const auto &[name, tensor] : tensors) {
    if (!tensor)
      return fail("tensor '" + name + "' is null");
    if (name == "__metadata__" || !seen.insert(name).second)
      return fail("tensor name '" + name + "' is reserved or repeated");
    for (int64_t d : tensor->shape)
      if (d < 0)
        return fail("tensor '" + name + "' has a negative dimension");
    size_t expected =
        static_cast<size_t>(tensor->numel()) * dtypeSize(tensor->dtype);
    if (tensor->bytes.size() != expected)
      return fail("tensor '" + name + "' holds " +
                  std::to_string(tensor->bytes.size()) +
                  " bytes but its shape " + shapeString(tensor->shape) +
                  " needs " + std::to_string(expected));
    OrderedJson entry = OrderedJson::object();
    entry["dtype"] = safetensorsName(tensor->dtype);
    entry["shape"] = tensor->shape;
    entry["data_offsets"] = {offset, offset + expected};
    header[name] = std::move(entry);
    offset += expected;
  }

  std::string text;
  try {
    // Names that are not valid UTF-8 make dump throw; nothing else does.
    text = header.dump();
  } catch (const OrderedJson::exception &e) {
    return fail(std::string("a tensor name is not valid UTF-8 (") + e.what() +
                ")");
  }
  // Spaces pad the header so that the data starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');

  std::string contents;
  contents.reserve(8 + text.size() + offset);
  uint64_t len = text.size();
  for (int i = 0; i < 8; ++i)
    contents += static_cast<char>((len >> (8 * i)) & 0xff);
  contents += text;
  for (const auto &[name, tensor] : tensors)
    contents.append(reinterpret_cast<const char *>(tensor->bytes.data()),
                    tensor->bytes.size());
  return writeFileAtomically(path, contents, error);
}

} // namespace tfc::rt
