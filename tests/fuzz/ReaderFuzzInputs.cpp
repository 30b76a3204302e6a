//===- ReaderFuzzInputs.cpp - seeds and mutations for the reader fuzzer ---===//

#include "ReaderFuzzInputs.h"

#include "runtime/Tensor.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

using namespace tfc::rt;

namespace tfc::fuzz {

bool readerNamed(std::string_view name, Reader &reader) {
  if (name == "npy")
    reader = Reader::Npy;
  else if (name == "safetensors")
    reader = Reader::Safetensors;
  else if (name == "manifest")
    reader = Reader::Manifest;
  else
    return false;
  return true;
}

namespace {

//===- Seeds --------------------------------------------------------------===//

/// A tensor of `dtype` and `shape` whose elements differ (and include
/// negatives, and bools other than 0 and 1 before they are normalised).
Tensor sample(DType dtype, std::vector<int64_t> shape) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < t.bytes.size(); ++i)
    t.bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  if (dtype == DType::Bool)
    for (uint8_t &b : t.bytes)
      b &= 1;
  return t;
}

std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

/// A writer's output, through `scratch`; a failing writer is a bug here.
template <typename Write> std::string written(const std::string &scratch, Write write) {
  std::string error;
  if (!write(scratch, error)) {
    std::fprintf(stderr, "tfc-reader-fuzz: cannot write a seed: %s\n", error.c_str());
    std::exit(2);
  }
  return slurp(scratch);
}

std::string le(uint64_t v, int width) {
  std::string s;
  for (int i = 0; i < width; ++i)
    s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

/// A .npy file as numpy lays it out: magic, version, length, the dict
/// padded to 64 bytes with spaces and '\n', the data.
std::string npy(const std::string &dict, const std::string &data, int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  std::string header = dict + std::string(total - prefix - dict.size() - 1, ' ') + "\n";
  return std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0' +
         le(header.size(), major == 1 ? 2 : 4) + header + data;
}
std::string npyDict(const char *descr, const char *shape) {
  return std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape +
         ", }";
}

std::string safetensors(const std::string &header, const std::string &data) {
  return le(header.size(), 8) + header + data;
}

std::string nested(int depth, const char *open, const char *inner, const char *close) {
  std::string s;
  for (int i = 0; i < depth; ++i)
    s += open;
  s += inner;
  for (int i = 0; i < depth; ++i)
    s += close;
  return s;
}

// 2^62: times 3 overflows int64, times 0 is a valid byte count.
constexpr const char *kHugeDim = "4611686018427387904";

std::vector<std::string> npySeeds(const std::string &scratch) {
  std::vector<std::string> seeds;
  for (const Tensor &t : {sample(DType::F32, {2, 3}), sample(DType::F32, {}),
                          sample(DType::F32, {0}), sample(DType::I32, {7}),
                          sample(DType::I32, {3, 1, 2}), sample(DType::I32, {4, 0, 2}),
                          sample(DType::Bool, {2, 2}), sample(DType::Bool, {})})
    seeds.push_back(written(scratch, [&](const std::string &p, std::string &e) {
      return writeNpy(p, t, e);
    }));
  // What numpy writes besides: the converted dtypes, versions 2.0 and 3.0.
  std::string f8 = le(0x3ff8000000000000, 8) + le(0xc000000000000000, 8) + le(0, 8);
  seeds.push_back(npy(npyDict("<f8", "(3,)"), f8));
  seeds.push_back(npy(npyDict("<i8", "(2, 2)"), le(1, 8) + le(-2, 8) + le(3, 8) + le(4, 8)));
  seeds.push_back(npy(npyDict("|i1", "(2,)"), "\x7f\x80"));
  seeds.push_back(npy(npyDict("<i2", "(1,)"), std::string("\x00\x80", 2)));
  seeds.push_back(npy(npyDict("|u1", "(1,)"), "\xff"));
  seeds.push_back(npy(npyDict("|b1", "()"), "\x02"));
  seeds.push_back(npy(npyDict("f4", "(1,)"), le(0, 4)));
  for (int major : {2, 3})
    seeds.push_back(npy("{\"shape\":(2L,1),\"fortran_order\" : False ,\"descr\":\"<f4\"}",
                        le(0x3f800000, 4) + le(0x40000000, 4), major));
  // Past bugs: an empty shape whose other dimensions overflow numel();
  // a repeated key (its tuples were concatenated).
  seeds.push_back(npy(npyDict("<f4", (std::string("(3, ") + kHugeDim + ", 0)").c_str()), ""));
  seeds.push_back(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                      "'shape': (3,), }",
                      std::string(24, '\0')));
  // Lying lengths and sizes.
  seeds.push_back(std::string("\x93NUMPY\x01\x00\xff\xff{}", 12));
  seeds.push_back(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14));
  seeds.push_back(npy(npyDict("<f4", "(4294967296, 4294967296, 16)"), le(0, 4)));
  seeds.push_back(npy(npyDict("<i8", "(1,)"), le(uint64_t(1) << 40, 8)));
  return seeds;
}

std::vector<std::string> safetensorsSeeds(const std::string &scratch) {
  std::vector<std::string> seeds;
  Tensor a = sample(DType::F32, {2, 3}), b = sample(DType::I32, {5}),
         c = sample(DType::Bool, {}), d = sample(DType::F32, {0}),
         e = sample(DType::Bool, {2, 2});
  using Named = std::vector<std::pair<std::string, const Tensor *>>;
  for (const Named &tensors :
       {Named{{"a", &a}, {"b", &b}, {"c", &c}, {"d", &d}, {"e", &e}}, Named{{"w", &a}},
        Named{{"ids", &b}}, Named{{"mask", &e}}, Named{{"empty", &d}, {"x", &c}}, Named{}})
    seeds.push_back(written(scratch, [&](const std::string &p, std::string &err) {
      return writeSafetensors(p, tensors, err);
    }));
  // The reference writer's extras: metadata, and keys out of data order.
  std::string entry = R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  seeds.push_back(safetensors(
      R"({"__metadata__":{"format":"pt"},)"
      R"("b":{"dtype":"I32","shape":[1],"data_offsets":[8,12]},"a":)" + entry + "}  ",
      std::string(12, '\x01')));
  seeds.push_back(safetensors(R"({"__metadata__":null})", ""));
  // Past bugs: the issue's file (a 75,000-deep __metadata__ overflowed the
  // stack), an empty tensor whose shape overflows numel(), a repeated key.
  seeds.push_back(safetensors(R"({"__metadata__":{"k":)" + nested(75000, "[", "", "]") +
                                  R"(,"k2":"v"},"a":)" + entry + "}",
                              std::string(8, '\0')));
  seeds.push_back(safetensors(std::string(R"({"x":{"dtype":"F32","shape":[3,)") + kHugeDim +
                                  R"(,0],"data_offsets":[0,0]}})",
                              ""));
  seeds.push_back(safetensors(R"({"a":)" + entry + R"(,"a":)" + entry + "}", std::string(8, 0)));
  // Lying lengths and sizes.
  seeds.push_back(le(~uint64_t(0), 8) + "{}");
  seeds.push_back(le(uint64_t(1) << 40, 8) + "{}");
  seeds.push_back(safetensors(
      R"({"x":{"dtype":"F32","shape":[18446744073709551615,2],"data_offsets":[0,8]}})",
      std::string(8, '\0')));
  return seeds;
}

/// A compiled model's manifest, as tf-pack-entry-abi writes it.
const char kManifest[] =
    R"({"batch":4,"entries":[{"arena_bytes":65536,"args":[)"
    R"({"dtype":"i32","kind":"input","name":"tokens","shape":[4,16]},)"
    R"({"dtype":"f32","kind":"param","name":"embed.weight","shape":[10,32]},)"
    R"({"dtype":"f32","kind":"param","name":"out.bias","shape":[10]}],"name":"predict",)"
    R"("results":[{"dtype":"f32","kind":"output","name":"logits","shape":[4,16,10]},)"
    R"({"dtype":"f32","kind":"attention","name":"attn","shape":[4,1,16,16]}],)"
    R"("symbol":"tfc_entry_predict"},{"arena_bytes":262144,"args":[)"
    R"({"dtype":"i32","kind":"input","name":"tokens","shape":[4,16]},)"
    R"({"dtype":"i32","kind":"input","name":"labels","shape":[4,16]},)"
    R"({"dtype":"bool","kind":"input","name":"mask","shape":[4]},)"
    R"({"dtype":"i32","kind":"seed","name":"seed","shape":[2]}],"name":"train_step",)"
    R"("results":[{"dtype":"f32","kind":"loss","name":"loss","shape":[]},)"
    R"({"dtype":"f32","kind":"metric","name":"accuracy","shape":[]}],)"
    R"("symbol":"tfc_entry_train_step"}],"inputs":[)"
    R"({"dtype":"i32","index_bound":10,"name":"tokens","shape":[4,16]},)"
    R"({"dtype":"i32","index_bound":10,"name":"labels","shape":[4,16]}],)"
    R"("model":"reverse","params":[)"
    R"({"dtype":"f32","init":{"kind":"normal","scale":0.5},"name":"embed.weight","shape":[10,32]},)"
    R"({"dtype":"f32","init":{"kind":"zeros","scale":0.0},"name":"out.bias","shape":[10]}],)"
    R"("train":{"batch":4,"clip_grad_norm":5.0,)"
    R"("data":{"args":{"classes":10,"seq":16,"train":5000,"shuffle":true},)"
    R"("name":"reverse_sequences"},)"
    R"("epochs":2,"optimizer":{"args":{"lr":0.0005},"name":"adam"},)"
    R"("schedule":{"args":{"warmup":50},"name":"cosine_warmup"},"seed":42},"version":1})";

std::vector<std::string> manifestSeeds() {
  std::string m = kManifest;
  auto with = [&](const std::string &from, const std::string &to) {
    std::string s = m;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  return {
      m,
      R"({"version":1})",
      R"({"version":1,"entries":[{"name":"e","symbol":"s","args":[],"results":[]}]})",
      // Past bugs: json::value() threw on a wrong type, aborting; batch 0
      // divided by zero; shapes overflowing numel(); the issue's nesting.
      with(R"("version":1)", R"("version":"1")"),
      with(R"("model":"reverse")", R"("model":7)"),
      with(R"("batch":4,"entries")", R"("batch":null,"entries")"),
      with(R"("arena_bytes":65536)", R"("arena_bytes":"big")"),
      with(R"("scale":0.5)", R"("scale":"half")"),
      with(R"("kind":"normal")", R"("kind":1)"),
      with(R"("batch":4,"entries")", R"("batch":0,"entries")"),
      with(R"("arena_bytes":65536)", R"("arena_bytes":-1)"),
      with("[10,32]", std::string("[3,") + kHugeDim + ",4]"),
      with(R"("lr":0.0005)", R"("lr":)" + nested(75000, "[", "", "]")),
      with(R"("lr":0.0005)", R"("lr":)" + nested(75000, R"({"a":)", "1", "}")),
  };
}

//===- Mutations ----------------------------------------------------------===//

const char *const kJsonTokens[] = {
    "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u0000", "\\ud800", "\\\"", "null", "true",
    "false", "0", "-1", "1.5", "-0", "[]", "{}", "\"dtype\"", "\"shape\"", "\"data_offsets\"",
    "\"F32\"", "\"I32\"", "\"BOOL\"", "\"F16\"", "\"__metadata__\"", "\"version\"",
    "\"batch\"", "\"params\"", "\"inputs\"", "\"entries\"", "\"args\"", "\"results\"",
    "\"init\"", "\"train\"", "\"arena_bytes\"", "\"index_bound\"", "\"name\"", "\"kind\"",
    "\"f32\"", "\"i32\"", "\"bool\"", " ", "\n", "\xff", "\xc3\xa9",
};
const char *const kNpyTokens[] = {
    "{", "}", "(", ")", ",", ":", "'", "\"", "\\", " ", "\n", "True", "False", "L",
    "'descr'", "'shape'", "'fortran_order'", "'<f4'", "'<i4'", "'|b1'", "'<f8'", "'<i8'",
    "'|i1'", "'<i2'", "'|u1'", "'>f4'", "'<c8'", "'f4'", "[('a', '<f4')]", "()", "(0,)",
};
const char *const kNumbers[] = {
    "0", "1", "2", "7", "-1", "255", "65535", "65536", "2147483647", "2147483648",
    "4294967296", "4611686018427387904", "9223372036854775807", "9223372036854775808",
    "18446744073709551615", "18446744073709551616", "99999999999999999999", "1e309",
    "-0", "1.5",
};
uint64_t loadLE(const std::string &s, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i)
    v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}
void storeLE(std::string &s, size_t at, int width, uint64_t v) {
  for (int i = 0; i < width; ++i)
    s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

/// Where the header's length field lies: npy's u16 (1.0) or u32 after the
/// magic and version, safetensors' leading u64. A manifest has none.
bool lengthField(Reader reader, const std::string &s, size_t &at, int &width) {
  at = reader == Reader::Npy ? 8 : 0;
  width = reader == Reader::Safetensors ? 8 : s.size() > 6 && s[6] == 1 ? 2 : 4;
  return reader != Reader::Manifest && s.size() >= at + width;
}

} // namespace

std::vector<std::string> readerSeeds(Reader reader, const std::string &scratchFile) {
  switch (reader) {
  case Reader::Npy:
    return npySeeds(scratchFile);
  case Reader::Safetensors:
    return safetensorsSeeds(scratchFile);
  case Reader::Manifest:
    return manifestSeeds();
  }
  return {};
}

std::string ReaderMutator::mutate(const std::vector<std::string> &corpus) {
  std::string s = corpus[pick(corpus.size())];
  for (size_t steps = 1 + pick(4); steps > 0; --steps) {
    switch (pick(8)) {
    case 0:
    case 1:
    case 2:
    case 3:
      mutateHeader(s, corpus);
      break;
    case 4:
    case 5:
      mutateBytes(s, corpus);
      break;
    default:
      mutateLengthField(s);
      break;
    }
  }
  return s;
}

/// Mutates the header text and then fixes its length field, so that the
/// mutation reaches the header's parser.
void ReaderMutator::mutateHeader(std::string &s, const std::vector<std::string> &corpus) {
  size_t at = 0, begin = 0;
  int width = 0;
  if (reader_ == Reader::Manifest)
    return mutateText(s, corpus);
  if (!lengthField(reader_, s, at, width))
    return mutateBytes(s, corpus);
  begin = at + width;
  uint64_t len = loadLE(s, at, width);
  if (len > s.size() - begin)
    return mutateBytes(s, corpus);
  std::string header = s.substr(begin, len);
  mutateText(header, corpus);
  s.replace(begin, len, header);
  storeLE(s, at, width, header.size());
}

void ReaderMutator::mutateText(std::string &s, const std::vector<std::string> &corpus) {
  size_t at = pick(s.size() + 1);
  switch (pick(7)) {
  case 0: // overwrite a byte
    if (!s.empty())
      s[pick(s.size())] = static_cast<char>(rng_());
    break;
  case 1: { // insert a token of the format
    bool npy = reader_ == Reader::Npy;
    size_t n = npy ? std::size(kNpyTokens) : std::size(kJsonTokens);
    s.insert(at, npy ? kNpyTokens[pick(n)] : kJsonTokens[pick(n)]);
    break;
  }
  case 2: // delete a range
    s.erase(at, 1 + pick(16));
    break;
  case 3: // duplicate a range (a key, a value, a whole entry)
    s.insert(at, s.substr(at, 1 + pick(64)));
    break;
  case 4: { // splice in a range of another seed
    const std::string &other = corpus[pick(corpus.size())];
    s.insert(at, other.substr(pick(other.size() + 1), 1 + pick(128)));
    break;
  }
  case 5: { // replace a number with an edge case
    size_t d = s.find_first_of("0123456789", at);
    if (d == std::string::npos)
      break;
    size_t e = s.find_first_not_of("0123456789", d);
    s.replace(d, (e == std::string::npos ? s.size() : e) - d, kNumbers[pick(std::size(kNumbers))]);
    break;
  }
  default: { // nest: around the limit, or far past it
    static const int depths[] = {2, 63, 64, 65, 1000, 100000};
    static const char *const opens[] = {"[", "{\"a\":", "("};
    static const char *const closes[] = {"]", "}", ")"};
    size_t kind = pick(3);
    int depth = depths[pick(std::size(depths))];
    s.insert(at, pick(2) ? nested(depth, opens[kind], "0", closes[kind])
                         : std::string(depth, opens[kind][0]));
    break;
  }
  }
}

void ReaderMutator::mutateBytes(std::string &s, const std::vector<std::string> &corpus) {
  size_t at = pick(s.size() + 1);
  switch (pick(6)) {
  case 0: // overwrite a byte
    if (!s.empty())
      s[pick(s.size())] = static_cast<char>(rng_());
    break;
  case 1: // insert bytes
    s.insert(at, std::string(1 + pick(8), static_cast<char>(rng_())));
    break;
  case 2: // delete a range
    s.erase(at, 1 + pick(64));
    break;
  case 3: // truncate
    s.resize(at);
    break;
  case 4: // append (data past the end, or a short file's missing bytes)
    s.append(1 + pick(64), pick(2) ? '\0' : static_cast<char>(rng_()));
    break;
  default: { // splice in a range of another seed
    const std::string &other = corpus[pick(corpus.size())];
    s.insert(at, other.substr(pick(other.size() + 1), 1 + pick(256)));
    break;
  }
  }
}

/// Sets the header's length field to an edge value: off by one, the file's
/// size, each width's maximum, past the readers' limits, 2^63.
void ReaderMutator::mutateLengthField(std::string &s) {
  size_t at;
  int width;
  if (reader_ == Reader::Npy && s.size() > 6 && pick(4) == 0)
    s[6] = static_cast<char>(pick(5)); // the version picks the field's width
  if (!lengthField(reader_, s, at, width))
    return;
  uint64_t now = loadLE(s, at, width);
  const uint64_t values[] = {0,          1,           now - 1,        now + 1,
                             s.size(),   s.size() - at - width,       0xffff,
                             0x10000,    0xffffffff,  (1u << 20) + 1, (100u << 20) + 1,
                             1ull << 62, 1ull << 63,  ~0ull,          rng_()};
  storeLE(s, at, width, values[pick(std::size(values))]);
}

} // namespace tfc::fuzz
