//===- MaskedTokens.cpp - masked_tokens: BERT-style masked-token task -----===//
//
// Issue 29's BERT-style example predicts masked tokens of synthetic
// sequences whose masked tokens follow from their context. The tokens other
// than the mask id are the vocab - 1 symbols 0 .. vocab-2 (a symbol at or
// above `mask_id` is written one higher, so that the mask id is never a
// symbol; with the default mask_id = vocab - 1 a symbol is its token). Each
// sequence follows one of three rules, drawn with equal chance:
//
//   count   a, a+d, a+2d, ... modulo the symbols, a uniform, d = +1 or -1:
//           counting up or down with wrap-around;
//   copy    the first h = ceil(seq/2) symbols uniform, then repeated: symbol
//           i is symbol i - h;
//   mirror  a palindrome: the first h symbols uniform, symbol i is symbol
//           seq-1-i.
//
// As BERT's create_pretraining_data does, max(1, round(mask_rate * seq))
// distinct positions, uniformly drawn, are masked (the mask id replaces them
// all: no 80/10/10). The labels hold the original token at those positions
// and -100 elsewhere, PyTorch's ignore_index: `cross_entropy(logits, labels,
// ignore_index: -100)`. A sample is Philox on "masked_tokens.SPLIT" at
// counter = its index: the rule, its parameters, then the masked positions.
//
// What is achievable: a counting sequence is determined by any two unmasked
// tokens, so its masked tokens all are; a copied or mirrored token is
// determined exactly when its partner (i +- h, or seq-1-i) is unmasked, and
// otherwise is one of the vocab-1 symbols with equal chance (with an odd seq
// the middle one has no partner). With k masked positions, a masked partner
// happens with chance (k-1)/(seq-1), so an oracle that knows the rule scores
//   (1 + 2 (1 - p + p / (vocab-1))) / 3,   p = (k-1)/(seq-1)
// on the masked tokens: 91.7% at the defaults (vocab 32, seq 32, mask_rate
// 0.15: k = 5, p = 4/31). DatasetsTest checks this oracle on the data.
//
//===----------------------------------------------------------------------===//

#include "runtime/DatasetSupport.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace tfc::rt {
using namespace datasets;

namespace {

/// The masked positions of a sequence: max(1, round(rate * seq)), at most seq.
int64_t maskedCount(int64_t seq, double rate) {
  return std::min(seq, std::max<int64_t>(1, int64_t(std::llround(rate * double(seq)))));
}

MaskedSample drawMasked(Draws &d, int64_t vocab, int64_t seq, double maskRate, int64_t maskId) {
  MaskedSample s;
  const int64_t symbols = vocab - 1, half = (seq + 1) / 2;
  std::vector<int64_t> sym(size_t(seq), 0);
  s.rule = MaskedRule(d.below(3));
  switch (s.rule) {
  case MaskedRule::Count: {
    int64_t a = int64_t(d.below(uint64_t(symbols)));
    int64_t step = d.below(2) ? 1 : symbols - 1; // +1 or -1 modulo the symbols
    for (int64_t i = 0; i < seq; ++i)
      sym[size_t(i)] = (a + step * (i % symbols)) % symbols;
    break;
  }
  case MaskedRule::Copy:
    for (int64_t i = 0; i < seq; ++i)
      sym[size_t(i)] = i < half ? int64_t(d.below(uint64_t(symbols))) : sym[size_t(i - half)];
    break;
  case MaskedRule::Mirror:
    for (int64_t i = 0; i < seq; ++i)
      sym[size_t(i)] = i < half ? int64_t(d.below(uint64_t(symbols))) : sym[size_t(seq - 1 - i)];
    break;
  }
  s.original.resize(size_t(seq));
  for (int64_t i = 0; i < seq; ++i)
    s.original[size_t(i)] = int32_t(sym[size_t(i)] < maskId ? sym[size_t(i)] : sym[size_t(i)] + 1);
  s.tokens = s.original;
  s.labels.assign(size_t(seq), -100);
  // The first k of a partial Fisher-Yates shuffle of the positions.
  std::vector<int64_t> positions(static_cast<size_t>(seq));
  std::iota(positions.begin(), positions.end(), 0);
  int64_t k = maskedCount(seq, maskRate);
  for (int64_t i = 0; i < k; ++i) {
    std::swap(positions[size_t(i)], positions[size_t(i + int64_t(d.below(uint64_t(seq - i))))]);
    size_t p = size_t(positions[size_t(i)]);
    s.labels[p] = s.original[p];
    s.tokens[p] = int32_t(maskId);
  }
  return s;
}

} // namespace

MaskedSample maskedTokensSample(uint64_t seed, const std::string &split, int64_t index,
                                int64_t vocab, int64_t seq, double maskRate, int64_t maskId) {
  Draws d(seed, streamId("masked_tokens." + split), uint64_t(index));
  return drawMasked(d, vocab, seq, maskRate, maskId);
}

namespace datasets {

bool makeMaskedTokens(const DataArgs &args, uint64_t seed, const std::vector<TensorSpec> &inputs,
                      Dataset &out, std::string &error) {
  const std::string name = "masked_tokens";
  if (!checkArgs(name, args,
                 {{"vocab", ArgKind::Positive},
                  {"seq", ArgKind::Positive},
                  {"mask_rate", ArgKind::Real},
                  {"mask_id", ArgKind::Count},
                  {"train", ArgKind::Count},
                  {"val", ArgKind::Count},
                  {"test", ArgKind::Count}},
                 error))
    return false;
  int64_t vocab = intArg(args, "vocab", 32);
  int64_t seq = intArg(args, "seq", sampleDim(inputs, 0, 0, 32));
  int64_t maskId = intArg(args, "mask_id", vocab - 1);
  double maskRate = realArg(args, "mask_rate", 0.15);
  int64_t sizes[3];
  std::vector<ArraySpec> arrays = {{"tokens", DType::I32, {seq}}, {"labels", DType::I32, {seq}}};
  if (!splitSizes(name, args, {20000, 1000, 1000}, sizes, error) ||
      !checkInputs(name, arrays, inputs, error))
    return false;
  if (vocab < 3 || vocab > (int64_t(1) << 31)) {
    error = "dataset 'masked_tokens' needs a vocab of at least 3 (two symbols and the mask id), "
            "not " + std::to_string(vocab);
    return false;
  }
  if (maskId >= vocab) {
    error = "dataset 'masked_tokens': mask_id " + std::to_string(maskId) +
            " is not a token of the vocab of " + std::to_string(vocab) + " (0 .. " +
            std::to_string(vocab - 1) + ")";
    return false;
  }
  if (!(maskRate > 0 && maskRate <= 1)) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%g", maskRate);
    error = std::string("dataset 'masked_tokens': mask_rate must be in (0, 1], not ") + rate;
    return false;
  }
  if (seq < 2) {
    error = "dataset 'masked_tokens' needs sequences of at least 2 tokens (seq: 1)";
    return false;
  }
  for (int k = 0; k < 3; ++k) {
    Split &split = *splitNamed(out, k);
    split.samples = sizes[k];
    std::string splitName = kSplitNames[k];
    split.fill = [=](int64_t index, std::vector<Tensor> &batch, int64_t row) {
      MaskedSample s = maskedTokensSample(seed, splitName, index, vocab, seq, maskRate, maskId);
      std::copy(s.tokens.begin(), s.tokens.end(), batch[0].i32() + row * seq);
      std::copy(s.labels.begin(), s.labels.end(), batch[1].i32() + row * seq);
    };
  }
  return true;
}

} // namespace datasets
} // namespace tfc::rt
