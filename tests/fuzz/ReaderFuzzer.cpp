//===- ReaderFuzzer.cpp - the runtime's file readers on arbitrary bytes ---===//
//
// One driver for the runtime's three readers of untrusted bytes, picked by
// --reader: `npy` (readNpy), `safetensors` (readSafetensors) and `manifest`
// (parseManifest). The contract: a reader returns false with an error (one
// that names the file), or true with tensors whose bytes match their shapes
// and that write and read back unchanged. It never crashes, overflows the
// stack, allocates far beyond the input's size or trips a sanitizer.
//
// Two builds, as ParserFuzzer.cpp:
//  - with libFuzzer (clang, -DTFC_LIBFUZZER -DTFC_FUZZ_READER="npy"):
//      tfc-npy-libfuzzer -max_total_time=600 CORPUS_DIR
//    (`tfc-reader-fuzz --reader npy --write-seeds CORPUS_DIR` starts one);
//  - standalone (the default, run by ctest):
//      tfc-reader-fuzz --reader R [--mutations N] [--max-seconds S]
//                      [--seed K] [--write-failing FILE]
//    runs the built-in seeds (ReaderFuzzInputs.cpp), then N mutations from
//    a fixed-seed RNG, so a failure reproduces; `--write-failing FILE` holds
//    each input while it runs, so a crash leaves it behind.
//
//===----------------------------------------------------------------------===//

#include "ReaderFuzzInputs.h"

#include "runtime/FileIO.h"
#include "runtime/Manifest.h"
#include "runtime/Tensor.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

using namespace tfc::rt;
using tfc::fuzz::Reader;

// The inputs are at most a few MiB: an allocation past this is a length or
// shape taken on trust, and ASan reports it (allocation-size-too-big).
extern "C" const char *__asan_default_options() { return "max_allocation_size_mb=256"; }

namespace {

/// The readers take paths: the input goes to a memfd (no disk, nothing left
/// behind on a crash) read as /proc/self/fd/N; round trips and seeds are
/// written to a temporary directory.
struct Scratch {
  int fd = -1;
  std::string input, dir;

  Scratch() {
    fd = ::memfd_create("tfc-reader-fuzz", MFD_CLOEXEC);
    input = "/proc/self/fd/" + std::to_string(fd);
    const char *tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/tfc-reader-fuzz-XXXXXX";
    if (fd < 0 || !::mkdtemp(tmpl.data())) {
      std::perror("tfc-reader-fuzz: scratch space");
      std::exit(2);
    }
    dir = tmpl;
  }
  ~Scratch() {
    for (const char *name : {"copy", "seed"})
      ::unlink(file(name).c_str());
    ::rmdir(dir.c_str());
  }
  std::string file(const char *name) const { return dir + "/" + name; }

  void load(std::string_view bytes) const {
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, bytes.data(), bytes.size(), 0) != ssize_t(bytes.size())) {
      std::perror("tfc-reader-fuzz: memfd");
      std::exit(2);
    }
  }
};

/// Inputs the reader accepted: a fuzz run that never gets past the checks
/// tests little.
long accepted = 0;

const Scratch &scratch() {
  static Scratch s;
  return s;
}

bool consistent(const Tensor &t) {
  return detail::shapeProductFits(t.shape) &&
         t.bytes.size() == size_t(t.numel()) * dtypeSize(t.dtype);
}
bool same(const Tensor &a, const Tensor &b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
}
std::string unlessNamesInput(const std::string &error) {
  return error.find(scratch().input) != std::string::npos ? "" : "error without the path: " + error;
}

// Each returns "" when the contract holds, else what broke.

std::string runNpy(std::string_view input) {
  scratch().load(input);
  Tensor t, back;
  std::string error, copy = scratch().file("copy");
  if (!readNpy(scratch().input, t, error))
    return unlessNamesInput(error);
  if (!consistent(t))
    return "a tensor whose bytes do not match its shape";
  if (!writeNpy(copy, t, error) || !readNpy(copy, back, error))
    return "round trip: " + error;
  ++accepted;
  return same(t, back) ? "" : "the round trip changed the tensor";
}

std::string runSafetensors(std::string_view input) {
  scratch().load(input);
  std::vector<std::pair<std::string, Tensor>> tensors, back;
  std::string error, copy = scratch().file("copy");
  if (!readSafetensors(scratch().input, tensors, error))
    return unlessNamesInput(error);
  std::vector<std::pair<std::string, const Tensor *>> refs;
  for (const auto &[name, t] : tensors) {
    if (!consistent(t))
      return "tensor '" + name + "' has bytes that do not match its shape";
    refs.push_back({name, &t});
  }
  if (!writeSafetensors(copy, refs, error) || !readSafetensors(copy, back, error))
    return "round trip: " + error;
  if (back.size() != tensors.size())
    return "the round trip changed the number of tensors";
  ++accepted;
  for (size_t i = 0; i < back.size(); ++i)
    if (back[i].first != tensors[i].first || !same(back[i].second, tensors[i].second))
      return "the round trip changed tensor '" + tensors[i].first + "'";
  return "";
}

std::string runManifest(std::string_view input) {
  std::string text(input); // a C string in the model binary: ends at a NUL
  Manifest m;
  std::string error;
  if (!parseManifest(text.c_str(), m, error))
    return error.empty() ? "an error without a message" : "";
  ++accepted;
  // What the runtime computes from a manifest must be defined (UBSan
  // checks numel()'s products) and sane.
  std::vector<const TensorSpec *> specs;
  for (const TensorSpec &t : m.inputs)
    specs.push_back(&t);
  for (const EntrySpec &e : m.entries) {
    if (e.arenaBytes < 0)
      return "entry '" + e.name + "' has a negative arena";
    for (const auto *list : {&e.args, &e.results})
      for (const TensorSpec &t : *list)
        specs.push_back(&t);
  }
  for (const TensorSpec *t : specs)
    if (t->numel() < 0)
      return "tensor '" + t->name + "' has a negative size";
  for (const ParamSpec &p : m.params)
    if (p.numel() < 0)
      return "parameter '" + p.name + "' has a negative size";
  return m.batch >= 1 ? "" : "a batch below 1";
}

std::string runOne(Reader reader, std::string_view input) {
  switch (reader) {
  case Reader::Npy:
    return runNpy(input);
  case Reader::Safetensors:
    return runSafetensors(input);
  case Reader::Manifest:
    return runManifest(input);
  }
  return "no such reader";
}

} // namespace

#ifdef TFC_LIBFUZZER

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const Reader reader = [] {
    Reader r{};
    if (!tfc::fuzz::readerNamed(TFC_FUZZ_READER, r))
      std::abort();
    return r;
  }();
  std::string broken = runOne(reader, {reinterpret_cast<const char *>(data), size});
  if (!broken.empty()) {
    std::fprintf(stderr, "contract broken: %s\n", broken.c_str());
    std::abort();
  }
  return 0;
}

#else

namespace {

bool check(Reader reader, const std::string &input, const char *writeFailing,
           const std::string &what) {
  if (writeFailing) {
    if (FILE *f = std::fopen(writeFailing, "wb")) {
      std::fwrite(input.data(), 1, input.size(), f);
      std::fclose(f);
    }
  }
  std::string broken = runOne(reader, input);
  if (broken.empty())
    return true;
  std::fprintf(stderr, "tfc-reader-fuzz: contract broken on %s (%zu bytes): %s\n",
               what.c_str(), input.size(), broken.c_str());
  return false;
}

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s --reader npy|safetensors|manifest [--mutations N] "
               "[--max-seconds S] [--seed K] [--write-failing FILE] [--write-seeds DIR]\n",
               argv0);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  const char *readerName = "", *writeFailing = nullptr, *seedDir = nullptr;
  long mutations = 20000;
  double maxSeconds = 25;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (i + 1 == argc)
      return usage(argv[0]); // every option takes a value
    if (arg == "--reader")
      readerName = argv[++i];
    else if (arg == "--mutations")
      mutations = std::atol(argv[++i]);
    else if (arg == "--max-seconds")
      maxSeconds = std::atof(argv[++i]);
    else if (arg == "--seed")
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--write-failing")
      writeFailing = argv[++i];
    else if (arg == "--write-seeds")
      seedDir = argv[++i];
    else
      return usage(argv[0]);
  }
  Reader reader;
  if (!tfc::fuzz::readerNamed(readerName, reader))
    return usage(argv[0]);

  std::vector<std::string> seeds = tfc::fuzz::readerSeeds(reader, scratch().file("seed"));
  if (seedDir) {
    std::string error;
    for (size_t i = 0; i < seeds.size(); ++i)
      if (!writeFileAtomically(std::string(seedDir) + "/seed-" + std::to_string(i), seeds[i],
                               error)) {
        std::fprintf(stderr, "tfc-reader-fuzz: %s\n", error.c_str());
        return 1;
      }
    return 0;
  }
  std::fprintf(stderr, "tfc-reader-fuzz --reader %s: %zu seeds\n", readerName, seeds.size());
  if (writeFailing)
    std::fprintf(stderr, "tfc-reader-fuzz: each input is written to %s before it runs\n",
                 writeFailing);

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (size_t i = 0; i < seeds.size(); ++i)
    if (!check(reader, seeds[i], writeFailing, "seed #" + std::to_string(i)))
      return 1;

  // The huge seeds (past bugs) would dominate the time: mutate the others.
  std::vector<std::string> small;
  for (const std::string &s : seeds)
    if (s.size() < 65536)
      small.push_back(s);
  tfc::fuzz::ReaderMutator mutator(reader, seed);
  long done = 0;
  for (; done < mutations && elapsed() < maxSeconds; ++done)
    if (!check(reader, mutator.mutate(small), writeFailing,
               "mutation #" + std::to_string(done) + " of --seed " + std::to_string(seed)))
      return 1;
  std::fprintf(stderr, "tfc-reader-fuzz: %ld mutations in %.1f s, no failure (%ld inputs read)\n",
               done, elapsed(), accepted);
  return 0;
}

#endif // TFC_LIBFUZZER
