//===- Generate.cpp - `MODEL generate`: sampling with a KV cache ----------===//

#include "runtime/Generate.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace tfc::rt {
namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

/// The argument of `kind` an entry reads, or null when it has not exactly one.
const TensorSpec *onlyArg(const EntrySpec &entry, abi::ValueKind kind) {
  const TensorSpec *found = nullptr;
  for (const TensorSpec &a : entry.args)
    if (a.kind == kind) {
      if (found)
        return nullptr;
      found = &a;
    }
  return found;
}

/// The index of result "logits" (an output), or -1.
int64_t logitsResult(const EntrySpec &entry) {
  for (size_t i = 0; i < entry.results.size(); ++i)
    if (entry.results[i].kind == abi::ValueKind::Output && entry.results[i].name == "logits")
      return int64_t(i);
  return -1;
}

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

int generate(Model &model, const GenerateOptions &options) {
  const Manifest &m = model.manifest();
  const EntrySpec *prefill = m.entry(abi::kPrefill), *decode = m.entry(abi::kDecode);
  if (!prefill || !decode)
    return fail("model '" + m.model + "' does not generate: its model block declares no "
                "`generate LOGITS from TOKENS` (docs/generation.md)");
  const TensorSpec *prefillTokens = onlyArg(*prefill, abi::ValueKind::Input);
  const TensorSpec *decodeTokens = onlyArg(*decode, abi::ValueKind::Input);
  const TensorSpec *position = onlyArg(*decode, abi::ValueKind::Position);
  int64_t prefillLogits = logitsResult(*prefill), decodeLogits = logitsResult(*decode);
  if (!prefillTokens || !decodeTokens || !position || prefillLogits < 0 || decodeLogits < 0 ||
      prefillTokens->shape.size() != 2 || prefill->results[prefillLogits].shape.size() != 3)
    return fail("model '" + m.model + "': its prefill and decode entries are not what this "
                "runtime expects (a compiler/runtime mismatch)");
  const int64_t length = prefillTokens->shape[1];
  const int64_t vocab = prefill->results[prefillLogits].shape[2];
  // Tokens must be valid ids of the input (an embedding's rows, one_hot's classes).
  int64_t bound = vocab;
  if (const TensorSpec *input = m.input(prefillTokens->name); input && input->indexBound > 0)
    bound = std::min(bound, input->indexBound);

  if (options.temperature < 0 || !std::isfinite(options.temperature))
    return fail("--temperature must be 0 (the most likely token) or positive");
  if (options.topK < 0)
    return fail("--top-k must be 0 (every token) or positive");
  if (options.maxNewTokens < 1)
    return fail("--max-new-tokens must be at least 1");

  std::string error;
  if (options.params.empty()) {
    std::fprintf(stderr, "note: no --params given; using freshly initialised parameters "
                         "(seed 0)\n");
    model.initParams(0);
  } else if (!model.loadParams(options.params, error)) {
    return fail(error);
  }

  // The prompt.
  std::vector<int32_t> tokens;
  bool text = options.promptGiven;
  if (options.promptGiven == !options.promptNpy.empty())
    return fail(options.promptGiven ? "give --prompt or --prompt-npy, not both"
                                    : "give the prompt: --prompt TEXT or --prompt-npy FILE.npy");
  if (text) {
    for (unsigned char c : options.prompt) {
      if (c >= bound) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", c);
        return fail("--prompt: byte " + std::string(hex) + " is not a token of model '" +
                    m.model + "' (its tokens are 0 to " + std::to_string(bound - 1) +
                    "); give the ids with --prompt-npy");
      }
      tokens.push_back(c);
    }
  } else {
    Tensor ids;
    if (!readNpy(options.promptNpy, ids, error))
      return fail(error);
    bool flat = ids.shape.size() == 1 || (ids.shape.size() == 2 && ids.shape[0] == 1);
    if (ids.dtype != DType::I32 || !flat)
      return fail("--prompt-npy '" + options.promptNpy + "' is " + dtypeName(ids.dtype) + " " +
                  shapeString(ids.shape) + "; it must hold integer token ids, [n] or [1, n]");
    for (int64_t i = 0; i < ids.numel(); ++i) {
      int32_t id = ids.i32()[i];
      if (id < 0 || id >= bound)
        return fail("--prompt-npy '" + options.promptNpy + "': token " + std::to_string(i) +
                    " is " + std::to_string(id) + ", not an id of model '" + m.model +
                    "' (0 to " + std::to_string(bound - 1) + ")");
      tokens.push_back(id);
    }
  }
  const int64_t promptLength = int64_t(tokens.size());
  if (promptLength == 0)
    return fail("the prompt is empty: generation starts from at least one token");
  if (promptLength > length)
    return fail("the prompt has " + std::to_string(promptLength) + " tokens; model '" + m.model +
                "' reads at most " + std::to_string(length) + " (its sequence length)");
  // The token at position p is scored at position p - 1: the last one the
  // model can score is at position `length`.
  const int64_t wanted = std::min(options.maxNewTokens, length - promptLength + 1);


  auto print = [&](int32_t token, bool first) {
    if (text)
      std::fputc(token, stdout);
    else
      std::printf(first ? "%d" : " %d", token);
    std::fflush(stdout);
  };
  for (int64_t i = 0; i < promptLength; ++i)
    print(tokens[i], i == 0);

  auto nextToken = [&](const Tensor &logits, int64_t row, int64_t step, int32_t &token) {
    const float *scores = logits.f32() + row * vocab;
    for (int64_t i = 0; i < vocab; ++i)
      if (!std::isfinite(scores[i])) {
        error = "the model's logits at position " + std::to_string(row) + " are not finite (" +
                std::to_string(scores[i]) + " for token " + std::to_string(i) +
                "): are the parameters trained?";
        return false;
      }
    token = sampleToken(scores, vocab, options.temperature, options.topK,
                        sampleUniform(options.seed, uint64_t(step)));
    if (token >= bound) {
      error = "the model chose token " + std::to_string(token) + ", which its input '" +
              prefillTokens->name + "' cannot read (ids 0 to " + std::to_string(bound - 1) + ")";
      return false;
    }
    return true;
  };

  // Prefill: the prompt, padded; positions after it are never read (the
  // self-attention is causal, and decode overwrites their cache rows first).
  Clock::time_point start = Clock::now();
  Tensor sequence(DType::I32, {1, length});
  std::copy(tokens.begin(), tokens.end(), sequence.i32());
  std::vector<Tensor> results;
  if (!model.run(*prefill, {{prefillTokens->feedKey(), &sequence}}, results, error))
    return fail(error);
  std::map<std::string, Tensor> caches;
  for (size_t i = 0; i < prefill->results.size(); ++i)
    if (prefill->results[i].kind == abi::ValueKind::KvCache)
      caches[prefill->results[i].name] = std::move(results[i]);
  int32_t token = 0;
  if (!nextToken(results[prefillLogits], promptLength - 1, 0, token))
    return fail(error);
  double prefillSeconds = secondsSince(start);
  tokens.push_back(token);
  print(token, false);

  // Decode: one token a step at its position, against the caches.
  Clock::time_point decodeStart = Clock::now();
  Tensor step(DType::I32, {1, 1}), at(DType::I32, {});
  std::vector<Tensor> stepResults;
  for (int64_t produced = 1; produced < wanted; ++produced) {
    step.i32()[0] = token;
    at.i32()[0] = int32_t(promptLength + produced - 1);
    std::map<std::string, const Tensor *> feeds = {{decodeTokens->feedKey(), &step},
                                                   {position->feedKey(), &at}};
    for (const TensorSpec &a : decode->args)
      if (a.kind == abi::ValueKind::KvCache) {
        auto it = caches.find(a.name);
        if (it == caches.end())
          return fail("model '" + m.model + "': the decode step reads cache '" + a.name +
                      "', which the prefill does not make (a compiler/runtime mismatch)");
        feeds[a.feedKey()] = &it->second;
      }
    if (!model.run(*decode, feeds, stepResults, error))
      return fail(error);
    for (size_t i = 0; i < decode->results.size(); ++i)
      if (decode->results[i].kind == abi::ValueKind::KvCache)
        std::swap(caches[decode->results[i].name], stepResults[i]);
    if (!nextToken(stepResults[decodeLogits], 0, produced, token))
      return fail(error);
    tokens.push_back(token);
    print(token, false);
  }
  double decodeSeconds = secondsSince(decodeStart);
  std::fputc('\n', stdout);
  std::fflush(stdout);

  int64_t produced = int64_t(tokens.size()) - promptLength;
  double seconds = prefillSeconds + decodeSeconds;
  std::fprintf(stderr,
               "generated %lld tokens in %.3f s: %.1f tokens/s (prefill of %lld tokens %.1f ms, "
               "then %.2f ms a token)\n",
               (long long)produced, seconds, produced / std::max(seconds, 1e-9),
               (long long)promptLength, prefillSeconds * 1e3,
               produced > 1 ? decodeSeconds * 1e3 / double(produced - 1) : 0.0);
  if (produced < options.maxNewTokens)
    std::fprintf(stderr, "note: stopped at the model's sequence length, %lld tokens\n",
                 (long long)length);
  if (!options.output.empty()) {
    Tensor all(DType::I32, {int64_t(tokens.size())});
    std::copy(tokens.begin(), tokens.end(), all.i32());
    if (!writeNpy(options.output, all, error))
      return fail(error);
  }
  return 0;
}

} // namespace tfc::rt
