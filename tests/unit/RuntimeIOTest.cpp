//===- RuntimeIOTest.cpp - .npy, safetensors, atomic writes, threads ------===//
//
// Round trips, files built byte by byte as numpy and the safetensors
// reference writer lay them out, every error the readers promise, every
// truncation of a valid file, and parallelFor's coverage.
//
//===----------------------------------------------------------------------===//

#include "runtime/FloatMode.h"
#include "runtime/JsonLimits.h"
#include "runtime/Model.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/Tensor.h"
#include "runtime/ThreadPool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::rt;
using ::testing::HasSubstr;

namespace {

/// A fresh directory per test, removed (with its files) afterwards.
class RuntimeIOTest : public ::testing::Test {
protected:
  std::string dir;

  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "tfc_rtio_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    ASSERT_NE(::mkdtemp(buf.data()), nullptr);
    dir = buf.data();
  }
  void TearDown() override {
    ::chmod(dir.c_str(), 0700);
    for (const std::string &name : listDir())
      ::unlink((dir + "/" + name).c_str());
    ::rmdir(dir.c_str());
  }

  std::string file(const std::string &name) const { return dir + "/" + name; }

  std::vector<std::string> listDir() const {
    std::vector<std::string> names;
    if (DIR *d = ::opendir(dir.c_str())) {
      while (dirent *e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
          names.push_back(e->d_name);
      ::closedir(d);
    }
    return names;
  }

  void writeRaw(const std::string &path, const std::string &bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(f.good());
  }
  std::string readRaw(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
};

Tensor makeF32(std::vector<int64_t> shape) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.f32()[i] = 0.5f * static_cast<float>(i) - 3.25f;
  return t;
}
Tensor makeI32(std::vector<int64_t> shape) {
  Tensor t(DType::I32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.i32()[i] = static_cast<int32_t>(i * 7919 - 100000);
  return t;
}
Tensor makeBool(std::vector<int64_t> shape) {
  Tensor t(DType::Bool, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.bytes[i] = (i % 3) == 0;
  return t;
}

void expectSame(const Tensor &a, const Tensor &b) {
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.bytes, b.bytes); // bitwise
}

template <typename T> std::string le(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

/// A .npy file as numpy writes it: version 1.0 (or `major`), the dict padded
/// with spaces to a 64-byte boundary and '\n', then `data`.
std::string npyBytes(const std::string &dict, const std::string &data,
                     int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  std::string header =
      dict + std::string(total - prefix - dict.size() - 1, ' ') + "\n";
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  if (major == 1)
    s += le<uint16_t>(static_cast<uint16_t>(header.size()));
  else
    s += le<uint32_t>(static_cast<uint32_t>(header.size()));
  return s + header + data;
}

/// A safetensors file from a raw header text and data.
std::string stBytes(const std::string &header, const std::string &data) {
  return le<uint64_t>(header.size()) + header + data;
}

//===----------------------------------------------------------------------===//
// Basics
//===----------------------------------------------------------------------===//

TEST(RuntimeTensor, DTypeHelpersAndNumel) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::I32), 4u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_STREQ(dtypeName(DType::F32), "f32");
  EXPECT_STREQ(dtypeName(DType::I32), "i32");
  EXPECT_STREQ(dtypeName(DType::Bool), "bool");
  EXPECT_EQ(shapeString({128, 16}), "[128, 16]");
  EXPECT_EQ(shapeString({}), "[]");
  Tensor scalar(DType::F32, {});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.bytes.size(), 4u);
  Tensor t(DType::Bool, {2, 3, 4});
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.bytes, std::vector<uint8_t>(24, 0));
  EXPECT_EQ(Tensor(DType::I32, {5, 0}).bytes.size(), 0u);
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

TEST_F(RuntimeIOTest, NpyRoundTrip) {
  std::vector<Tensor> tensors = {
      makeF32({2, 3}),     makeF32({}),        makeF32({2, 3, 4}), makeI32({7}),
      makeI32({}),         makeI32({3, 1, 2}), makeBool({5}),      makeBool({}),
      makeBool({2, 2, 3}), makeF32({0}),       makeI32({4, 0, 2}),
  };
  for (size_t i = 0; i < tensors.size(); ++i) {
    SCOPED_TRACE(i);
    std::string path = file("t" + std::to_string(i) + ".npy");
    std::string error;
    ASSERT_TRUE(writeNpy(path, tensors[i], error)) << error;
    std::string bytes = readRaw(path);
    ASSERT_GE(bytes.size(), 10u);
    size_t headerLen =
        static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
    EXPECT_EQ((10 + headerLen) % 64, 0u);
    EXPECT_EQ(bytes[9 + headerLen], '\n');
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    Tensor back;
    ASSERT_TRUE(readNpy(path, back, error)) << error;
    expectSame(tensors[i], back);
  }
  EXPECT_EQ(listDir().size(), tensors.size()); // no temp files left
}

TEST_F(RuntimeIOTest, NpyHeaderTextMatchesNumpy) {
  std::string error;
  ASSERT_TRUE(writeNpy(file("v.npy"), makeF32({5}), error));
  ASSERT_TRUE(writeNpy(file("s.npy"), makeI32({}), error));
  ASSERT_TRUE(writeNpy(file("m.npy"), makeBool({2, 3}), error));
  EXPECT_THAT(
      readRaw(file("v.npy")),
      HasSubstr("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"));
  EXPECT_THAT(
      readRaw(file("s.npy")),
      HasSubstr("{'descr': '<i4', 'fortran_order': False, 'shape': (), }"));
  EXPECT_THAT(
      readRaw(file("m.npy")),
      HasSubstr("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }"));
}

TEST_F(RuntimeIOTest, NpyReadsNumpyLayouts) {
  std::string error;
  Tensor t;

  // '<i8' converts to i32 when every value fits.
  std::string i8 = le<int64_t>(-5) + le<int64_t>(0) + le<int64_t>(2147483647) +
                   le<int64_t>(-2147483648LL);
  writeRaw(
      file("i8.npy"),
      npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }",
               i8));
  ASSERT_TRUE(readNpy(file("i8.npy"), t, error)) << error;
  EXPECT_EQ(t.dtype, DType::I32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(std::vector<int32_t>(t.i32(), t.i32() + 4),
            (std::vector<int32_t>{-5, 0, 2147483647, -2147483647 - 1}));

  // '<f8' converts to f32.
  writeRaw(file("f8.npy"),
           npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                    le<double>(1.5) + le<double>(-2.0) + le<double>(0.1)));
  ASSERT_TRUE(readNpy(file("f8.npy"), t, error)) << error;
  EXPECT_EQ(t.dtype, DType::F32);
  EXPECT_EQ(t.f32()[0], 1.5f);
  EXPECT_EQ(t.f32()[1], -2.0f);
  EXPECT_EQ(t.f32()[2], 0.1f);

  // '|i1', '<i2', '|u1' widen to i32.
  writeRaw(file("i1.npy"),
           npyBytes("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }",
                    std::string("\xff\x7f", 2)));
  ASSERT_TRUE(readNpy(file("i1.npy"), t, error)) << error;
  EXPECT_EQ(t.i32()[0], -1);
  EXPECT_EQ(t.i32()[1], 127);
  writeRaw(file("i2.npy"),
           npyBytes("{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }",
                    le<int16_t>(-300)));
  ASSERT_TRUE(readNpy(file("i2.npy"), t, error)) << error;
  EXPECT_EQ(t.i32()[0], -300);
  writeRaw(file("u1.npy"),
           npyBytes("{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }",
                    std::string("\xff", 1)));
  ASSERT_TRUE(readNpy(file("u1.npy"), t, error)) << error;
  EXPECT_EQ(t.dtype, DType::I32);
  EXPECT_EQ(t.i32()[0], 255);

  // '|b1' scalar; version 2.0 and 3.0 headers; double quotes, no trailing
  // comma, odd spacing, key order shuffled, Python 2's long suffix.
  writeRaw(file("b.npy"),
           npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (), }",
                    std::string("\x01", 1)));
  ASSERT_TRUE(readNpy(file("b.npy"), t, error)) << error;
  EXPECT_EQ(t.dtype, DType::Bool);
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(t.bytes, std::vector<uint8_t>{1});
  for (int major : {2, 3}) {
    writeRaw(file("v2.npy"),
             npyBytes("{\"shape\":(2L,1),\"fortran_order\" : False ,"
                      "  \"descr\":\"<f4\"}",
                      le<float>(1) + le<float>(2), major));
    ASSERT_TRUE(readNpy(file("v2.npy"), t, error)) << error;
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(t.f32()[1], 2.0f);
  }
}

TEST_F(RuntimeIOTest, NpyErrors) {
  std::string error;
  Tensor t;
  auto expectError = [&](const std::string &name, const std::string &bytes,
                         std::vector<std::string> words) {
    SCOPED_TRACE(name);
    writeRaw(file(name), bytes);
    error.clear();
    EXPECT_FALSE(readNpy(file(name), t, error));
    EXPECT_THAT(error, HasSubstr("'" + file(name) + "'"));
    for (const std::string &w : words)
      EXPECT_THAT(error, HasSubstr(w));
  };
  const std::string f4x6(24, '\0');

  EXPECT_FALSE(readNpy(file("missing.npy"), t, error));
  EXPECT_EQ(error, "cannot open '" + file("missing.npy") +
                       "': No such file or directory");
  EXPECT_FALSE(readNpy(dir, t, error));
  EXPECT_THAT(error, HasSubstr("Is a directory"));

  expectError("magic.npy", "PK\x03\x04 this is a zip", {"is not a .npy file"});
  expectError("empty.npy", "", {"is not a .npy file"});
  expectError("version.npy",
              std::string("\x93NUMPY\x04\x00", 8) + std::string(60, ' '),
              {"version 4.0"});
  expectError(
      "trunc.npy",
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
               f4x6.substr(0, 20)),
      {"is truncated: expected 24 bytes of data, found 20"});
  expectError(
      "extra.npy",
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
               f4x6 + "xx"),
      {"expected 24 bytes of data, found 26"});
  expectError(
      "c8.npy",
      npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }",
               f4x6),
      {"holds dtype '<c8'; expected f32, i32 or bool"});
  expectError(
      "u4.npy",
      npyBytes("{'descr': '<u4', 'fortran_order': False, 'shape': (6,), }",
               f4x6),
      {"holds dtype '<u4'"});
  expectError(
      "struct.npy",
      npyBytes(
          "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }",
          f4x6),
      {"structured"});
  expectError(
      "fortran.npy",
      npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
               f4x6),
      {"Fortran order"});
  expectError(
      "big.npy",
      npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
               f4x6),
      {"big-endian"});
  expectError(
      "range.npy",
      npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
               le<int64_t>(1) + le<int64_t>(int64_t(1) << 40)),
      {"1099511627776", "out of i32 range"});
  expectError(
      "rangeneg.npy",
      npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }",
               le<int64_t>(-2147483649LL)),
      {"out of i32 range"});
  // Shapes whose product overflows, or merely exceeds the file.
  expectError("overflow.npy",
              npyBytes("{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (4294967296, 4294967296, 16), }",
                       f4x6),
              {"too large"});
  expectError("overflow2.npy",
              npyBytes("{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (99999999999999999999,), }",
                       f4x6),
              {"too large"});
  expectError("huge.npy",
              npyBytes("{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (1000000, 1000000), }",
                       f4x6),
              {"is truncated: expected 4000000000000 bytes of data, found 24"});
  // Header corruptions.
  expectError("hdrlen.npy", std::string("\x93NUMPY\x01\x00\xff\xff", 10) + "{}",
              {"truncated"});
  expectError("nodict.npy", npyBytes("descr", ""), {"corrupt header"});
  expectError("nokey.npy",
              npyBytes("{'descr': '<f4', 'shape': (2, 3), }", f4x6),
              {"corrupt header"});
  expectError(
      "negdim.npy",
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
               f4x6),
      {"corrupt header"});
  expectError(
      "notuple.npy",
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (6), }",
               f4x6),
      {"corrupt header"});
  expectError(
      "unterminated.npy",
      npyBytes("{'descr': '<f4, 'fortran_order': False, 'shape': (6,), }",
               f4x6),
      {"corrupt header"});
  expectError(
      "badbool.npy",
      npyBytes("{'descr': '<f4', 'fortran_order': 0, 'shape': (6,), }", f4x6),
      {"corrupt header"});
  expectError(
      "trailing.npy",
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), } x",
               f4x6),
      {"corrupt header"});

  // A failed read leaves the output alone.
  Tensor keep = makeI32({2});
  EXPECT_FALSE(readNpy(file("trunc.npy"), keep, error));
  expectSame(keep, makeI32({2}));
}

TEST_F(RuntimeIOTest, NpyEveryTruncationErrors) {
  for (const Tensor &t : {makeF32({2, 3}), makeBool({3}), makeI32({})}) {
    std::string error;
    ASSERT_TRUE(writeNpy(file("full.npy"), t, error)) << error;
    std::string full = readRaw(file("full.npy"));
    for (size_t len = 0; len < full.size(); ++len) {
      SCOPED_TRACE(len);
      writeRaw(file("cut.npy"), full.substr(0, len));
      Tensor out;
      error.clear();
      EXPECT_FALSE(readNpy(file("cut.npy"), out, error));
      EXPECT_FALSE(error.empty());
      EXPECT_THAT(error, HasSubstr(file("cut.npy")));
    }
  }
}

TEST_F(RuntimeIOTest, NpyCorruptBytesNeverCrash) {
  // Flip each header byte through a few values: any result is fine as long
  // as it is a clean true/false (run under ASan for the real check).
  std::string error;
  ASSERT_TRUE(writeNpy(file("full.npy"), makeF32({2, 3}), error));
  std::string full = readRaw(file("full.npy"));
  for (size_t i = 0; i < 80; ++i) {
    for (char c : {'\0', '(', ')', ',', '\'', '9', '\xff', '}'}) {
      std::string bad = full;
      bad[i] = c;
      writeRaw(file("bad.npy"), bad);
      Tensor out;
      if (readNpy(file("bad.npy"), out, error)) {
        EXPECT_EQ(out.bytes.size(), out.numel() * dtypeSize(out.dtype));
      }
    }
  }
}

TEST_F(RuntimeIOTest, NpyWriteRejectsInconsistentTensor) {
  Tensor t = makeF32({2, 3});
  t.bytes.pop_back();
  std::string error;
  EXPECT_FALSE(writeNpy(file("x.npy"), t, error));
  EXPECT_THAT(error, HasSubstr(file("x.npy")));
  EXPECT_TRUE(listDir().empty());
}

//===----------------------------------------------------------------------===//
// safetensors
//===----------------------------------------------------------------------===//

TEST_F(RuntimeIOTest, SafetensorsRoundTrip) {
  Tensor a = makeF32({2, 3, 4}), b = makeI32({5}), c = makeBool({}),
         d = makeI32({0, 3}), e = makeBool({3, 1});
  std::vector<std::pair<std::string, const Tensor *>> in = {
      {"z.weight", &a},
      {"a.index", &b},
      {"m.mask", &c},
      {"empty", &d},
      {"\xc3\xa9t\xc3\xa9", &e}};
  std::string error;
  ASSERT_TRUE(writeSafetensors(file("m.safetensors"), in, error)) << error;
  EXPECT_EQ(listDir().size(), 1u);

  std::string bytes = readRaw(file("m.safetensors"));
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  EXPECT_EQ(bytes.size(), 8 + n + 96 + 20 + 1 + 0 + 3);

  std::vector<std::pair<std::string, Tensor>> out;
  ASSERT_TRUE(readSafetensors(file("m.safetensors"), out, error)) << error;
  ASSERT_EQ(out.size(), in.size());
  std::map<std::string, const Tensor *> byName;
  for (auto &[name, t] : out)
    byName[name] = &t;
  for (auto &[name, t] : in) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(byName.count(name));
    expectSame(*t, *byName[name]);
  }
}

TEST_F(RuntimeIOTest, SafetensorsReadsReferenceLayout) {
  // As the Python reference writes it: sorted keys, metadata, padding.
  std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},)"
      R"("a":{"dtype":"F32","shape":[],"data_offsets":[8,12]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  writeRaw(file("ref.safetensors"),
           stBytes(header, le<int32_t>(-1) + le<int32_t>(7) + le<float>(2.5f)));
  std::vector<std::pair<std::string, Tensor>> out;
  std::string error;
  ASSERT_TRUE(readSafetensors(file("ref.safetensors"), out, error)) << error;
  ASSERT_EQ(out.size(), 2u);
  // File order is data order.
  EXPECT_EQ(out[0].first, "b");
  EXPECT_EQ(out[0].second.i32()[1], 7);
  EXPECT_EQ(out[1].first, "a");
  EXPECT_TRUE(out[1].second.shape.empty());
  EXPECT_EQ(out[1].second.f32()[0], 2.5f);

  writeRaw(file("none.safetensors"), stBytes("{}      ", ""));
  ASSERT_TRUE(readSafetensors(file("none.safetensors"), out, error)) << error;
  EXPECT_TRUE(out.empty());
}

TEST_F(RuntimeIOTest, SafetensorsErrors) {
  std::string error;
  std::vector<std::pair<std::string, Tensor>> out;
  auto expectError = [&](const std::string &name, const std::string &bytes,
                         std::vector<std::string> words) {
    SCOPED_TRACE(name);
    writeRaw(file(name), bytes);
    error.clear();
    EXPECT_FALSE(readSafetensors(file(name), out, error));
    EXPECT_THAT(error, HasSubstr("'" + file(name) + "'"));
    for (const std::string &w : words)
      EXPECT_THAT(error, HasSubstr(w));
  };
  auto one = [](const std::string &entry) {
    return std::string(R"({"x.weight":)") + entry + "}";
  };
  const std::string data8(8, '\0');
  const std::string goodEntry =
      R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

  EXPECT_FALSE(readSafetensors(file("missing.safetensors"), out, error));
  EXPECT_THAT(error, HasSubstr("No such file or directory"));

  expectError("short", "abc", {"too short"});
  expectError("bign", le<uint64_t>(1000) + "{}", {"header length 1000"});
  expectError("hugen", le<uint64_t>(~uint64_t(0)) + "{}", {"header length"});
  expectError("json", stBytes("{\"x\": [1, 2", ""), {"not valid JSON"});
  expectError("array", stBytes("[1, 2]", ""), {"not a JSON object"});
  expectError("binary", stBytes(std::string("\xff\xfe\x00", 3), ""),
              {"not valid JSON"});
  expectError("entry", stBytes(one("3"), data8), {"x.weight", "JSON object"});
  expectError("nodtype",
              stBytes(one(R"({"shape":[2],"data_offsets":[0,8]})"), data8),
              {"x.weight", "lacks"});
  expectError(
      "dtypetype",
      stBytes(one(R"({"dtype":1,"shape":[2],"data_offsets":[0,8]})"), data8),
      {"'dtype' that is not a string"});
  expectError(
      "f16",
      stBytes(one(R"({"dtype":"F16","shape":[4],"data_offsets":[0,8]})"),
              data8),
      {"tensor 'x.weight' has dtype F16; expected F32, I32 or BOOL"});
  expectError(
      "shapetype",
      stBytes(one(R"({"dtype":"F32","shape":"2","data_offsets":[0,8]})"),
              data8),
      {"'shape'"});
  expectError(
      "shapeneg",
      stBytes(one(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"),
              data8),
      {"non-negative"});
  expectError(
      "shapefloat",
      stBytes(one(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})"),
              data8),
      {"non-negative"});
  expectError(
      "offsetscount",
      stBytes(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0]})"), data8),
      {"data_offsets"});
  expectError(
      "offsetsneg",
      stBytes(one(R"({"dtype":"F32","shape":[2],"data_offsets":[-8,0]})"),
              data8),
      {"data_offsets"});
  expectError(
      "backwards",
      stBytes(one(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})"),
              data8),
      {"end before they begin"});
  expectError(
      "beyond",
      stBytes(one(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})"),
              data8),
      {"beyond the 8 bytes of data"});
  expectError(
      "beyondhuge",
      stBytes(
          one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]})"),
          data8),
      {"beyond"});
  expectError(
      "size",
      stBytes(one(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})"),
              data8),
      {"has 8 bytes of data but its shape [3]", "need 12"});
  expectError(
      "overflow",
      stBytes(
          one(R"({"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,8]})"),
          data8),
      {"more than 2^64"});
  expectError(
      "gap",
      stBytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
              data8),
      {"gap of 4 bytes"});
  expectError(
      "overlap",
      stBytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
              data8),
      {"overlaps"});
  expectError("tail", stBytes(one(goodEntry), data8 + "xx"),
              {"2 bytes after the last tensor"});
  expectError(
      "metadata",
      stBytes(R"({"__metadata__":{"k":1},"x.weight":)" + goodEntry + "}",
              data8),
      {"__metadata__"});
}

TEST_F(RuntimeIOTest, SafetensorsEveryTruncationErrors) {
  Tensor a = makeF32({2}), b = makeBool({3});
  std::string error;
  ASSERT_TRUE(
      writeSafetensors(file("full.safetensors"), {{"a", &a}, {"b", &b}}, error))
      << error;
  std::string full = readRaw(file("full.safetensors"));
  for (size_t len = 0; len < full.size(); ++len) {
    SCOPED_TRACE(len);
    writeRaw(file("cut.safetensors"), full.substr(0, len));
    std::vector<std::pair<std::string, Tensor>> out;
    error.clear();
    EXPECT_FALSE(readSafetensors(file("cut.safetensors"), out, error));
    EXPECT_THAT(error, HasSubstr(file("cut.safetensors")));
  }
}

TEST_F(RuntimeIOTest, SafetensorsCorruptBytesNeverCrash) {
  Tensor a = makeF32({2}), b = makeI32({1, 2});
  std::string error;
  ASSERT_TRUE(writeSafetensors(file("full.safetensors"), {{"a", &a}, {"b", &b}},
                               error));
  std::string full = readRaw(file("full.safetensors"));
  for (size_t i = 0; i < full.size(); ++i) {
    for (char c : {'\0', '"', '9', '\xff'}) {
      std::string bad = full;
      bad[i] = c;
      writeRaw(file("bad.safetensors"), bad);
      std::vector<std::pair<std::string, Tensor>> out;
      if (readSafetensors(file("bad.safetensors"), out, error)) {
        for (auto &[name, t] : out)
          EXPECT_EQ(t.bytes.size(), t.numel() * dtypeSize(t.dtype));
      }
    }
  }
}

TEST_F(RuntimeIOTest, SafetensorsWriteRejects) {
  Tensor a = makeF32({2});
  std::string error;
  EXPECT_FALSE(
      writeSafetensors(file("d.safetensors"), {{"a", &a}, {"a", &a}}, error));
  EXPECT_THAT(error, HasSubstr("'a'"));
  EXPECT_FALSE(
      writeSafetensors(file("m.safetensors"), {{"__metadata__", &a}}, error));
  EXPECT_FALSE(writeSafetensors(file("u.safetensors"), {{"\xff", &a}}, error));
  EXPECT_THAT(error, HasSubstr("UTF-8"));
  Tensor bad = makeF32({2});
  bad.bytes.resize(3);
  EXPECT_FALSE(writeSafetensors(file("b.safetensors"), {{"bad", &bad}}, error));
  EXPECT_THAT(error, HasSubstr("'bad'"));
  EXPECT_TRUE(listDir().empty());
}

//===----------------------------------------------------------------------===//
// writeFileAtomically
//===----------------------------------------------------------------------===//

TEST_F(RuntimeIOTest, AtomicWrite) {
  std::string path = file("out.bin"), error;
  ASSERT_TRUE(writeFileAtomically(path, "first", error)) << error;
  ASSERT_TRUE(writeFileAtomically(path, std::string("sec\0nd", 6), error))
      << error;
  EXPECT_EQ(readRaw(path), std::string("sec\0nd", 6));
  EXPECT_EQ(listDir(), std::vector<std::string>{"out.bin"});

  // A missing directory: an error naming the path and the reason.
  EXPECT_FALSE(writeFileAtomically(file("no/such/dir/x"), "x", error));
  EXPECT_THAT(error, HasSubstr(file("no/such/dir/x")));
  EXPECT_THAT(error, HasSubstr("No such file or directory"));

  // The rename fails (the target is a non-empty directory): the temp file is
  // removed and the directory untouched, even for root.
  std::string sub = file("sub");
  ASSERT_EQ(::mkdir(sub.c_str(), 0700), 0);
  ASSERT_TRUE(writeFileAtomically(sub + "/keep", "k", error));
  EXPECT_FALSE(writeFileAtomically(sub, "data", error));
  EXPECT_THAT(error, HasSubstr("'" + sub + "'"));
  EXPECT_THAT(error, HasSubstr("Is a directory"));
  struct stat st;
  ASSERT_EQ(::stat(sub.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(readRaw(sub + "/keep"), "k");
  ::unlink((sub + "/keep").c_str());
  ::rmdir(sub.c_str());
  EXPECT_EQ(listDir(), std::vector<std::string>{"out.bin"});

  // An unwritable directory leaves the existing file alone. Root writes
  // anywhere, so this part only means something for other users.
  if (::geteuid() != 0) {
    ASSERT_EQ(::chmod(dir.c_str(), 0500), 0);
    EXPECT_FALSE(writeFileAtomically(path, "third", error));
    EXPECT_THAT(error, HasSubstr(path));
    EXPECT_THAT(error, HasSubstr("Permission denied"));
    ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
    EXPECT_EQ(readRaw(path), std::string("sec\0nd", 6));
    EXPECT_EQ(listDir(), std::vector<std::string>{"out.bin"});
  }
}

//===----------------------------------------------------------------------===//
// parallelFor
//===----------------------------------------------------------------------===//

class ThreadPoolTest : public ::testing::Test {
protected:
  void TearDown() override { setNumThreads(0); }
};

TEST_F(ThreadPoolTest, CoversEveryIndexOnce) {
  for (int threads : {1, 3, 2, 3}) { // 3 after 2 restarts the pool again
    setNumThreads(threads);
    EXPECT_EQ(numThreads(), threads);
    for (int64_t n : {0, 1, 7, 1000}) {
      for (int64_t grain : {1, 4, 2000}) {
        SCOPED_TRACE("threads " + std::to_string(threads) + " n " +
                     std::to_string(n) + " grain " + std::to_string(grain));
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<int> calls{0};
        std::atomic<bool> smallChunk{false};
        parallelFor(n, grain, [&](int64_t begin, int64_t end) {
          ++calls;
          if (end - begin < grain && end - begin < n)
            smallChunk = true;
          for (int64_t i = begin; i < end; ++i)
            ++hits[static_cast<size_t>(i)];
        });
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i;
        EXPECT_FALSE(smallChunk);
        EXPECT_LE(calls.load(), threads);
        if (n == 0) {
          EXPECT_EQ(calls.load(), 0);
        }
      }
    }
  }
}

TEST_F(ThreadPoolTest, UsesSeveralThreadsAndTheCaller) {
  setNumThreads(3);
  std::mutex m;
  std::vector<std::thread::id> ids;
  // Each chunk waits until three chunks have started, so all three must
  // run concurrently: the caller plus two workers.
  std::atomic<int> started{0};
  parallelFor(3, 1, [&](int64_t, int64_t) {
    ++started;
    while (started.load() < 3)
      std::this_thread::yield();
    std::lock_guard<std::mutex> lock(m);
    ids.push_back(std::this_thread::get_id());
  });
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_NE(ids[1], ids[2]);
  EXPECT_NE(ids[0], ids[2]);
  EXPECT_NE(std::find(ids.begin(), ids.end(), std::this_thread::get_id()),
            ids.end());
}

// Every thread of a job computes in the caller's float mode (FloatMode.h):
// a product whose exact value is subnormal is zero when the caller flushes
// and kept when it does not, on the workers as on the caller, whatever mode
// a worker last ran in.
TEST_F(ThreadPoolTest, WorkersTakeTheCallersFloatMode) {
  setNumThreads(3);
  const unsigned before = floatControl();
  for (bool flush : {true, false, true}) {
    SCOPED_TRACE(flush ? "flush" : "keep");
    ScopedFloatMode mode(flush);
    std::mutex m;
    std::vector<std::thread::id> ids;
    std::vector<float> products;
    std::atomic<int> started{0};
    parallelFor(3, 1, [&](int64_t, int64_t) {
      ++started;
      while (started.load() < 3) // one chunk a thread
        std::this_thread::yield();
      volatile float tiny = 1e-30f, scale = 1e-10f;
      float product = tiny * scale; // 1e-40: below FLT_MIN (1.18e-38)
      std::lock_guard<std::mutex> lock(m);
      ids.push_back(std::this_thread::get_id());
      products.push_back(product);
    });
    ASSERT_EQ(products.size(), 3u);
    EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), 3u);
    for (float product : products) {
      if (flush)
        EXPECT_EQ(product, 0.0f);
      else
        EXPECT_NEAR(product, 1e-40f, 1e-45f);
    }
  }
  EXPECT_EQ(floatControl(), before); // restored by the scope
}

TEST_F(ThreadPoolTest, NestedRunsInline) {
  for (int threads : {1, 3}) {
    setNumThreads(threads);
    const int64_t outer = 10, inner = 50;
    std::vector<std::atomic<int>> hits(outer * inner);
    EXPECT_EQ(availableThreads(), threads);
    std::atomic<int> availableInside{0};
    parallelFor(outer, 1, [&](int64_t b, int64_t e) {
      availableInside.store(availableThreads()); // the GEMM plans for this many
      for (int64_t i = b; i < e; ++i) {
        std::thread::id self = std::this_thread::get_id();
        parallelFor(inner, 1, [&](int64_t b2, int64_t e2) {
          EXPECT_EQ(std::this_thread::get_id(), self); // inline
          for (int64_t j = b2; j < e2; ++j)
            ++hits[static_cast<size_t>(i * inner + j)];
        });
      }
    });
    for (auto &h : hits)
      ASSERT_EQ(h.load(), 1);
    EXPECT_EQ(availableInside.load(), 1);
    EXPECT_EQ(availableThreads(), threads); // outside again
  }
}

TEST_F(ThreadPoolTest, ManyJobsAndConcurrentCallers) {
  setNumThreads(3);
  // Many short jobs back to back exercise the generation hand-off.
  std::atomic<int64_t> sum{0};
  for (int rep = 0; rep < 2000; ++rep)
    parallelFor(16, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        sum += i;
    });
  EXPECT_EQ(sum.load(), 2000 * 120);
  // Two threads calling parallelFor at once take turns.
  std::atomic<int64_t> total{0};
  auto caller = [&] {
    for (int rep = 0; rep < 200; ++rep)
      parallelFor(100, 1, [&](int64_t b, int64_t e) { total += e - b; });
  };
  std::thread t1(caller), t2(caller);
  t1.join();
  t2.join();
  EXPECT_EQ(total.load(), 2 * 200 * 100);
}

TEST_F(ThreadPoolTest, DefaultIsHardwareConcurrency) {
  setNumThreads(0);
  unsigned hw = std::thread::hardware_concurrency();
  EXPECT_EQ(numThreads(), hw == 0 ? 1 : static_cast<int>(hw));
  EXPECT_GE(numThreads(), 1);
}

// An arena of 2 MiB or more starts on a 2 MiB boundary (where a huge page
// can back it); a smaller one on a cache line. Every byte is writable.
TEST(RuntimeArena, LargeArenasStartOnHugePageBoundaries) {
  for (size_t bytes : {size_t(64), size_t(100), size_t(2) << 20, (size_t(5) << 20) + 7}) {
    void *p = allocateArena(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    const uintptr_t align = bytes >= (size_t(2) << 20) ? uintptr_t(2) << 20 : 64;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << bytes;
    std::memset(p, 0xab, bytes);
    std::free(p);
  }
}

//===----------------------------------------------------------------------===//
// Bounded parsing: what the reader fuzzers (tests/fuzz) found, and the issue
// "a safetensors header nested 75,000 levels deep overflows the stack"
//===----------------------------------------------------------------------===//

std::string nestedJson(int depth, const std::string &open, const std::string &inner,
                       const std::string &close) {
  std::string s;
  for (int i = 0; i < depth; ++i)
    s += open;
  s += inner;
  for (int i = 0; i < depth; ++i)
    s += close;
  return s;
}

TEST(RuntimeJsonLimits, DepthCountsBracketsOutsideStrings) {
  using detail::jsonDepthWithin;
  using detail::kMaxJsonDepth;
  EXPECT_TRUE(jsonDepthWithin(nestedJson(kMaxJsonDepth, "[", "", "]")));
  EXPECT_FALSE(jsonDepthWithin(nestedJson(kMaxJsonDepth + 1, "[", "", "]")));
  EXPECT_FALSE(jsonDepthWithin(nestedJson(kMaxJsonDepth + 1, R"({"a":)", "1", "}")));
  EXPECT_TRUE(jsonDepthWithin(R"(")" + std::string(1000, '[') + R"(")"));
  EXPECT_TRUE(jsonDepthWithin(R"(["\"[[[", "\\", "{{{"])", 1));
  EXPECT_FALSE(jsonDepthWithin(R"(["\\"[[[", 1])", 1));
  EXPECT_TRUE(jsonDepthWithin("]]]]" + nestedJson(2, "[", "", "]"), 2)); // unbalanced
}

// The issue's file: deep nesting inside __metadata__, then more keys. The
// 1,000,000-deep one overflowed even an optimized build's 8 MiB stack: the
// header's ordered_json copied the deep value, recursively, when it grew.
TEST_F(RuntimeIOTest, SafetensorsDeepHeaderIsRefused) {
  const std::string entry = R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  for (int depth : {75000, 1000000}) {
    for (auto [open, inner, close] : {std::tuple{"[", "", "]"}, std::tuple{R"({"a":)", "1", "}"}}) {
      SCOPED_TRACE(std::to_string(depth) + open);
      std::string header = R"({"__metadata__":{"k":)" + nestedJson(depth, open, inner, close) +
                           R"(,"k2":"v"},"w":)" + entry + "}";
      writeRaw(file("deep.safetensors"), stBytes(header, std::string(8, '\0')));
      std::vector<std::pair<std::string, Tensor>> out;
      std::string error;
      EXPECT_FALSE(readSafetensors(file("deep.safetensors"), out, error));
      EXPECT_THAT(error, HasSubstr("'" + file("deep.safetensors") + "'"));
      EXPECT_THAT(error, HasSubstr("nests deeper than 64 levels"));
    }
  }
}

/// A manifest as tf-pack-entry-abi writes it, small.
const char kManifest[] =
    R"({"batch":2,"entries":[{"arena_bytes":256,"args":[)"
    R"({"dtype":"i32","kind":"input","name":"ids","shape":[2,5]},)"
    R"({"dtype":"f32","kind":"param","name":"w","shape":[5]}],"name":"predict",)"
    R"("results":[{"dtype":"f32","kind":"output","name":"y","shape":[2]}],)"
    R"("symbol":"tfc_entry_predict"}],)"
    R"("inputs":[{"dtype":"i32","name":"ids","shape":[2,5]}],"model":"m",)"
    R"("params":[{"dtype":"f32","init":{"kind":"normal","scale":0.5},"name":"w","shape":[5]}],)"
    R"("train":{"optimizer":{"args":{"lr":0.001},"name":"adam"}},"version":1})";

/// kManifest with `from` replaced by `to`.
std::string manifestWith(const std::string &from, const std::string &to) {
  std::string s = kManifest;
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

TEST(RuntimeManifest, DeepNestingIsRefused) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(kManifest, m, error)) << error;
  for (int depth : {75000, 1000000}) {
    for (const std::string &deep : {nestedJson(depth, "[", "", "]"),
                                    nestedJson(depth, R"({"a":)", "1", "}")}) {
      SCOPED_TRACE(depth);
      Manifest deepM;
      error.clear();
      EXPECT_FALSE(parseManifest(manifestWith("0.001", deep).c_str(), deepM, error));
      EXPECT_THAT(error, HasSubstr("nested deeper than 64 levels"));
    }
  }
}

// json::value() threw on a key of another type: parseManifest aborted.
// Batch 0 divides by zero in training; a negative arena and an overflowing
// shape are as malformed.
TEST(RuntimeManifest, MalformedFieldsAreErrorsNotAborts) {
  const std::pair<const char *, std::string> cases[] = {
      {R"("version":1)", R"("version":"1")"},
      {R"("version":1)", R"("version":4294967297)"},
      {R"("model":"m")", R"("model":7)"},
      {R"("batch":2)", R"("batch":null)"},
      {R"("batch":2)", R"("batch":0)"},
      {R"("arena_bytes":256)", R"("arena_bytes":"big")"},
      {R"("arena_bytes":256)", R"("arena_bytes":-1)"},
      {R"("scale":0.5)", R"("scale":"half")"},
      {R"("kind":"normal")", R"("kind":1)"},
      {R"("shape":[5]})", R"("shape":[3,4611686018427387904,4]})"},
      {R"("shape":[2,5]})", R"("shape":[0,4611686018427387904,4]})"},
      {R"("arena_bytes":256)", R"("arena_bytes":256,"graph":7)"},
      {R"("arena_bytes":256)", R"("arena_bytes":256,"graph":{"ops":-3,"longest_path":0})"},
      {R"("arena_bytes":256)", R"("arena_bytes":256,"graph":{"ops":3,"longest_path":4})"},
  };
  for (const auto &[from, to] : cases) {
    SCOPED_TRACE(to);
    Manifest m;
    std::string error;
    EXPECT_FALSE(parseManifest(manifestWith(from, to).c_str(), m, error));
    EXPECT_THAT(error, HasSubstr("manifest is malformed"));
  }
}

// An entry's "graph" (tf-graph-dependencies): its device ops and the most on
// one path; absent, none.
TEST(RuntimeManifest, EntryGraph) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(kManifest, m, error)) << error;
  EXPECT_EQ(m.entries[0].graphOps, 0);
  Manifest graph;
  ASSERT_TRUE(parseManifest(manifestWith(R"("arena_bytes":256)",
                                         R"("arena_bytes":256,"graph":{"longest_path":9,"ops":12})")
                                .c_str(),
                            graph, error))
      << error;
  EXPECT_EQ(graph.entries[0].graphOps, 12);
  EXPECT_EQ(graph.entries[0].graphLongestPath, 9);
}

// A CUDA model's "cuda" record: its "precision" (tfc compile --precision)
// is fp32 when absent, fp32, tf32 or bf16 when present, and anything else is
// malformed.
TEST(RuntimeManifest, CudaPrecision) {
  const std::string cuda =
      R"("device":"cuda","cuda":{"arch":["sm_90"],"image":"fatbin","kernels":["tfc_k0"])";
  auto parse = [&](const std::string &precision, Manifest &m, std::string &error) {
    return parseManifest(manifestWith(R"("version":1)", cuda + precision + R"(},"version":1)")
                             .c_str(),
                         m, error);
  };
  for (const auto &[field, want] :
       {std::pair<std::string, std::string>{"", "fp32"}, {R"(,"precision":"fp32")", "fp32"},
        {R"(,"precision":"tf32")", "tf32"}, {R"(,"precision":"bf16")", "bf16"}}) {
    SCOPED_TRACE(field);
    Manifest m;
    std::string error;
    ASSERT_TRUE(parse(field, m, error)) << error;
    ASSERT_TRUE(m.cuda);
    EXPECT_EQ(m.cuda->precision, want);
  }
  for (const std::string field : {R"(,"precision":"fp16")", R"(,"precision":"TF32")",
                                  R"(,"precision":32)", R"(,"precision":null)"}) {
    SCOPED_TRACE(field);
    Manifest m;
    std::string error;
    EXPECT_FALSE(parse(field, m, error));
    EXPECT_THAT(error, HasSubstr("manifest is malformed (the cuda record)"));
  }
}

// "kernel_sources" (each kernel's entry and model lines, for bench
// --profile) is optional; present, it has one string a kernel. So is
// "dependent_launch", an array of archs.
TEST(RuntimeManifest, CudaKernelSources) {
  auto parse = [&](const std::string &sources, Manifest &m, std::string &error) {
    return parseManifest(
        manifestWith(R"("version":1)",
                     R"("device":"cuda","cuda":{"arch":["sm_90"],"image":"fatbin",)"
                     R"("kernels":["tfc_k0","tfc_k1"])" +
                         sources + R"(},"version":1)")
            .c_str(),
        m, error);
  };
  Manifest m;
  std::string error;
  ASSERT_TRUE(parse("", m, error)) << error;
  EXPECT_TRUE(m.cuda->kernelSources.empty());
  ASSERT_TRUE(parse(R"(,"kernel_sources":["train_step: m.tf:3","predict"])", m, error)) << error;
  EXPECT_EQ(m.cuda->kernelSources,
            (std::vector<std::string>{"train_step: m.tf:3", "predict"}));
  // "dependent_launch": optional, the archs whose SASS waits.
  EXPECT_TRUE(m.cuda->dependentLaunch.empty());
  ASSERT_TRUE(parse(R"(,"dependent_launch":["sm_90"])", m, error)) << error;
  EXPECT_EQ(m.cuda->dependentLaunch, std::vector<std::string>{"sm_90"});
  for (const std::string field :
       {R"(,"kernel_sources":["one"])", R"(,"kernel_sources":[1,2])",
        R"(,"kernel_sources":"train_step")", R"(,"kernel_sources":[])",
        R"(,"dependent_launch":"sm_90")", R"(,"dependent_launch":[90])"}) {
    SCOPED_TRACE(field);
    Manifest bad;
    EXPECT_FALSE(parse(field, bad, error));
    EXPECT_THAT(error, HasSubstr("manifest is malformed (the cuda record)"));
  }
}

// An empty tensor's byte count is 0 however large its other dimensions,
// but numel() and strides multiply them: 3 * 2^62 overflowed int64.
TEST_F(RuntimeIOTest, EmptyShapesThatOverflowAreRefused) {
  for (const char *shape : {"(3, 4611686018427387904, 0)", "(0, 4611686018427387904, 4)"}) {
    SCOPED_TRACE(shape);
    writeRaw(file("e.npy"),
             npyBytes(std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") +
                          shape + ", }",
                      ""));
    Tensor t;
    std::string error;
    EXPECT_FALSE(readNpy(file("e.npy"), t, error));
    EXPECT_THAT(error, HasSubstr("too large"));
  }
  for (const char *shape : {"[3,4611686018427387904,0]", "[0,4611686018427387904,4]"}) {
    SCOPED_TRACE(shape);
    writeRaw(file("e.safetensors"),
             stBytes(std::string(R"({"x":{"dtype":"F32","shape":)") + shape +
                         R"(,"data_offsets":[0,0]}})",
                     ""));
    std::vector<std::pair<std::string, Tensor>> out;
    std::string error;
    EXPECT_FALSE(readSafetensors(file("e.safetensors"), out, error));
    EXPECT_THAT(error, HasSubstr("multiply past 2^63"));
  }
}

// A repeated key's tuples were concatenated: (2,) then (3,) read as (2, 3).
TEST_F(RuntimeIOTest, NpyRepeatedKeyIsRefused) {
  writeRaw(file("r.npy"), npyBytes("{'descr': '<f4', 'fortran_order': False, "
                                   "'shape': (2,), 'shape': (3,), }",
                                   std::string(24, '\0')));
  Tensor t;
  std::string error;
  EXPECT_FALSE(readNpy(file("r.npy"), t, error));
  EXPECT_THAT(error, HasSubstr("'shape' is repeated"));
}

// 200,000 tensors keep the file's order, a repeated name its first place and
// its last value. (The reader parses them in 0.7 s; ordered_json's linear key
// lookups took 72 s. No test times anything: tools/bench measures speed.)
TEST_F(RuntimeIOTest, SafetensorsManyTensorsKeepTheFilesOrder) {
  const int n = 200000;
  auto empty = [](const char *dtype) {
    return std::string(R"({"dtype":")") + dtype + R"(","shape":[0],"data_offsets":[0,0]})";
  };
  std::string header = "{";
  for (int i = n; i > 0; --i) // names out of order: the file's order wins
    header += "\"t" + std::to_string(i) + "\":" + empty("F32") + ",";
  header += "\"t" + std::to_string(n) + "\":" + empty("I32") + "}"; // repeated: last wins
  writeRaw(file("many.safetensors"), stBytes(header, ""));
  std::vector<std::pair<std::string, Tensor>> out;
  std::string error;
  ASSERT_TRUE(readSafetensors(file("many.safetensors"), out, error)) << error;
  ASSERT_EQ(out.size(), size_t(n));
  EXPECT_EQ(out.front().first, "t" + std::to_string(n)); // in its first place
  EXPECT_EQ(out.front().second.dtype, DType::I32);
  EXPECT_EQ(out.back().first, "t1");
}

} // namespace
