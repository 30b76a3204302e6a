//===- ReaderFuzzInputs.h - seeds and mutations for the reader fuzzer -----===//
//
// What tfc-reader-fuzz feeds the runtime's readers: seed files of each
// format and a reproducible mutator that knows where each format keeps its
// header and the header's length, so most mutations reach the parser
// behind the length check rather than stopping at it.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TESTS_FUZZ_READERFUZZINPUTS_H
#define TFC_TESTS_FUZZ_READERFUZZINPUTS_H

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::fuzz {

enum class Reader { Npy, Safetensors, Manifest };

/// "npy", "safetensors" or "manifest"; false for anything else.
bool readerNamed(std::string_view name, Reader &reader);

/// Valid files from the runtime's writers, the other layouts the reader
/// accepts, and the inputs of past bugs. The writers go through
/// `scratchFile`.
std::vector<std::string> readerSeeds(Reader reader, const std::string &scratchFile);

class ReaderMutator {
public:
  ReaderMutator(Reader reader, uint64_t seed) : reader_(reader), rng_(seed) {}
  /// A seed of `corpus` after 1 to 4 mutations.
  std::string mutate(const std::vector<std::string> &corpus);

private:
  size_t pick(size_t n) { return n == 0 ? 0 : rng_() % n; }
  void mutateHeader(std::string &s, const std::vector<std::string> &corpus);
  void mutateText(std::string &s, const std::vector<std::string> &corpus);
  void mutateBytes(std::string &s, const std::vector<std::string> &corpus);
  void mutateLengthField(std::string &s);

  Reader reader_;
  std::mt19937_64 rng_;
};

} // namespace tfc::fuzz

#endif // TFC_TESTS_FUZZ_READERFUZZINPUTS_H
