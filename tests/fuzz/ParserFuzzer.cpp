//===- ParserFuzzer.cpp - the .tf front end on arbitrary bytes ------------===//
//
// LLVMFuzzerTestOneInput parses any bytes as a .tf file and builds its first
// model. The contract: it returns a verified module or has emitted at least
// one error diagnostic; it never crashes, hangs, overflows the stack or
// trips a sanitizer.
//
// Two builds:
//  - with libFuzzer (clang, -DTFC_LIBFUZZER): open-ended fuzzing,
//      tfc-parser-libfuzzer -max_total_time=600 CORPUS_DIR
//  - standalone (the default, sanitized with g++ or clang, run by ctest):
//      tfc-parser-fuzz [--mutations N] [--max-seconds S] [--seed K] PATH...
//    runs the built-in seeds, every .tf file of each PATH (files or
//    directories), then N mutations of them drawn from a fixed-seed RNG, so
//    a failure reproduces; `--write-failing FILE` writes each input there
//    before it runs, so a crash leaves it behind (`tfc compile FILE`
//    reproduces it).
//
//===----------------------------------------------------------------------===//

#include "compiler/frontend/Parser.h"

#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringRef.h"


#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

mlir::DialectRegistry &registry() {
  static mlir::DialectRegistry *r = [] {
    auto *reg = new mlir::DialectRegistry;
    reg->insert<tfc::tf::TFDialect, mlir::func::FuncDialect>();
    return reg;
  }();
  return *r;
}

/// Parses one input in a fresh context; returns false if the contract is
/// broken in a way a sanitizer would not notice.
bool runOne(llvm::StringRef input) {
  mlir::MLIRContext context(registry(), mlir::MLIRContext::Threading::DISABLED);
  int errors = 0;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++errors;
    return mlir::success();
  });
  tfc::FrontendOptions options;
  tfc::FrontendResult result = tfc::parseTfSource(input, "fuzz.tf", context, options);
  if (!result.module)
    return errors > 0; // a failure must say why
  return errors == 0 && mlir::succeeded(mlir::verify(*result.module));
}

} // namespace

// LLVM's BumpPtrAllocator poisons and unpoisons its slabs from inline code
// when compiled with ASan; libMLIR.so is not, so memory it hands out from a
// slab our code poisoned reads as "use-after-poison". Ignore manual poisoning.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_odr_violation=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!runOne(llvm::StringRef(reinterpret_cast<const char *>(data), size)))
    std::abort();
  return 0;
}

#ifndef TFC_LIBFUZZER

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

namespace {

const char *const kSeeds[] = {
    R"(# The reverse task of the UvA tutorial: reverse a sequence of digits.
model reverse {
  param classes = 10
  param seq = 16
  param dim = 32

  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]

  let x = linear(one_hot(tokens, classes), dim, name: "input_net")
  x = x + positional_encoding(seq, dim)
  x = encoder(x, layers: 1, heads: 1, ffn: 2 * dim, dropout: 0.0, norm: "post")
  x = relu(layer_norm(linear(x, dim)))
  let logits = linear(x, classes, name: "output")

  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
}

train reverse {
  data reverse_sequences(classes: 10, seq: 16, train: 50000, val: 1000, test: 10000)
  batch 128
  epochs 10
  optimizer adam(lr: 5e-4)
  schedule cosine_warmup(warmup: 50)
  clip_grad_norm 5.0
  seed 42
}
)",
    R"(def attention_layer(x, out, key) {          # x: [batch, channels, time]
  let q = conv1d(x, key, kernel: 1, bias: false)
  let k = conv1d(x, key, kernel: 1, bias: false)
  let v = conv1d(x, out, kernel: 1, bias: false)
  let a = softmax(transpose(q, [0, 2, 1]) @ k, axis: -1)
  return transpose(a @ transpose(v, [0, 2, 1]), [0, 2, 1])
}
model fleuret {
  input x: f32[batch, 1, 20]
  input y: f32[batch, 1, 20]
  let h = relu(conv1d(x, 16, kernel: 5, padding: 2))
  h = h + attention_layer(h, 16, 8, name: "attn")
  let v, w = scaled_dot_product(h, h, h, mask: causal_mask(16))
  loss mse(conv1d(h + v, 1, kernel: 5, padding: 2), y)
  output w
}
train fleuret { batch 4 }
)",
    R"(model seq2seq {
  input src: i32[batch, 6]
  input tgt: i32[batch, 6]
  let m = encoder(embedding(src, 11, 8), layers: 1, heads: 2, norm: "pre")
  let d = decoder(embedding(tgt, 11, 8), m, layers: 1, heads: 2, mask: causal_mask(6))
  let logits = linear(d, 11)
  loss cross_entropy(logits, tgt)
  output p = softmax(logits, axis: -1)
}
)",
    "",
    "model m {\n  let x = \"unterminated\n}\n",
    "model m {\n  param n = 99999999999999999999999\n}\n",
    R"(def f(x) {
  return g(x)
}
def g(x) {
  return f(x)
}
model m {
  input x: f32[2]
  output y = f(x)
}
)",
};

/// Tokens a mutation may insert: syntax, keywords, edge-case numbers.
const char *const kTokens[] = {
    "(", ")", "[", "]", "{", "}", ",", ":", "=", "==", "!=", "<", ">=", "+",
    "-", "*", "/", "@", "\"", "#", "\n", " ", "def", "model", "train", "let",
    "return", "param", "input", "output", "loss", "metric", "batch", "true",
    "false", "name:", "axis:", "0", "1", "-1", "2", "3", "7", "64", "0.5",
    "1e-3", "1e309", "9223372036854775807", "2147483648", "x", "f32", "i32",
    "bool", "relu(", "linear(", "float(", "mean(", "transpose(", "reshape(",
    "[0, 2, 1]", "\\", "\t", "\xff",
};

class Mutator {
public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  std::string mutate(const std::vector<std::string> &corpus) {
    std::string s = corpus[pick(corpus.size())];
    int steps = 1 + static_cast<int>(pick(6));
    for (int i = 0; i < steps; ++i)
      step(s, corpus);
    return s;
  }

private:
  size_t pick(size_t n) { return n == 0 ? 0 : rng_() % n; }

  void step(std::string &s, const std::vector<std::string> &corpus) {
    size_t at = pick(s.size() + 1);
    switch (pick(7)) {
    case 0: // overwrite a byte
      if (!s.empty())
        s[pick(s.size())] = static_cast<char>(rng_());
      break;
    case 1: { // insert a token
      size_t n = sizeof(kTokens) / sizeof(kTokens[0]);
      size_t k = pick(n + 1);
      s.insert(at, k == n ? std::string(1, '\0') : std::string(kTokens[k]));
      break;
    }
    case 2: // delete a range
      s.erase(at, 1 + pick(16));
      break;
    case 3: { // duplicate a range
      size_t len = std::min(s.size() - at, 1 + pick(64));
      s.insert(at, s.substr(at, len));
      break;
    }
    case 4: { // splice in a range of another seed
      const std::string &other = corpus[pick(corpus.size())];
      size_t from = pick(other.size() + 1);
      s.insert(at, other.substr(from, 1 + pick(128)));
      break;
    }
    case 5: { // replace a digit run with another number
      size_t d = s.find_first_of("0123456789", at);
      if (d == std::string::npos)
        break;
      size_t e = s.find_first_not_of("0123456789", d);
      static const char *const numbers[] = {"0", "1", "2", "3", "5", "8", "13",
                                            "100", "-1", "1000"};
      s.replace(d, (e == std::string::npos ? s.size() : e) - d,
                numbers[pick(sizeof(numbers) / sizeof(numbers[0]))]);
      break;
    }
    default: { // swap two lines
      size_t a = s.rfind('\n', at == 0 ? 0 : at - 1);
      size_t b = s.find('\n', at);
      if (a == std::string::npos || b == std::string::npos || b <= a)
        break;
      std::string line = s.substr(a, b - a);
      s.erase(a, b - a);
      size_t to = s.find('\n', pick(s.size() + 1));
      s.insert(to == std::string::npos ? s.size() : to, line);
      break;
    }
    }
  }

  std::mt19937_64 rng_;
};

void collect(llvm::StringRef path, std::vector<std::string> &corpus) {
  auto add = [&](llvm::StringRef file) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (buffer)
      corpus.push_back((*buffer)->getBuffer().str());
  };
  if (!llvm::sys::fs::is_directory(path)) {
    add(path);
    return;
  }
  std::error_code ec;
  std::vector<std::string> files;
  for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".tf")
      files.push_back(it->path());
  std::sort(files.begin(), files.end()); // a reproducible order
  for (const std::string &f : files)
    add(f);
}

bool check(const std::string &input, const char *writeFailing, const char *what) {
  if (writeFailing) {
    if (FILE *f = std::fopen(writeFailing, "wb")) {
      std::fwrite(input.data(), 1, input.size(), f);
      std::fclose(f);
    }
  }
  if (runOne(input))
    return true;
  std::fprintf(stderr, "tfc-parser-fuzz: contract broken on %s (%zu bytes)\n", what,
               input.size());
  return false;
}

} // namespace

int main(int argc, char **argv) {
  long mutations = 20000;
  double maxSeconds = 45;
  uint64_t seed = 1;
  const char *writeFailing = nullptr;
  std::vector<std::string> corpus(std::begin(kSeeds), std::end(kSeeds));
  corpus.push_back(std::string("model m {\0}\n", 12));
  corpus.push_back("model m {\n  let x = " + std::string(200000, '(') + "1" +
                   std::string(200000, ')') + "\n}\n");
  corpus.push_back("model m {\n  let " + std::string(1 << 20, 'a') + " = 1\n}\n");
  std::string garbage;
  for (int i = 0; i < 4096; ++i)
    garbage += static_cast<char>((i * 7919) & 0xff);
  corpus.push_back(garbage);
  size_t builtinSeeds = corpus.size();

  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--mutations" && i + 1 < argc)
      mutations = std::atol(argv[++i]);
    else if (arg == "--max-seconds" && i + 1 < argc)
      maxSeconds = std::atof(argv[++i]);
    else if (arg == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--write-failing" && i + 1 < argc)
      writeFailing = argv[++i];
    else if (arg.starts_with("--")) {
      std::fprintf(stderr, "usage: %s [--mutations N] [--max-seconds S] [--seed K] "
                           "[--write-failing FILE] PATH...\n", argv[0]);
      return 2;
    } else
      collect(arg, corpus);
  }
  std::fprintf(stderr, "tfc-parser-fuzz: %zu seeds (%zu from files)\n", corpus.size(),
               corpus.size() - builtinSeeds);
  if (writeFailing)
    std::fprintf(stderr, "tfc-parser-fuzz: each input is written to %s before it runs\n",
                 writeFailing);

  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < corpus.size(); ++i)
    if (!check(corpus[i], writeFailing, ("seed #" + std::to_string(i)).c_str()))
      return 1;

  // The huge seeds would dominate the time: mutate the ordinary ones.
  std::vector<std::string> small;
  for (const std::string &s : corpus)
    if (s.size() < 65536)
      small.push_back(s);
  Mutator mutator(seed);
  long done = 0;
  for (; done < mutations; ++done) {
    std::string input = mutator.mutate(small);
    if (!check(input, writeFailing, ("mutation #" + std::to_string(done)).c_str()))
      return 1;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > maxSeconds)
      break;
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "tfc-parser-fuzz: %ld mutations in %.1f s, no failure\n", done, elapsed);
  return 0;
}

#endif // TFC_LIBFUZZER
