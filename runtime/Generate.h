//===- Generate.h - `MODEL generate`: sampling with a KV cache ------------===//
//
// A model whose block declares `generate LOGITS from TOKENS` is compiled
// with two entries more (runtime/Abi.h): `prefill` runs the prompt (padded
// to the model's sequence length) and returns the logits at every position
// and each self-attention's key and value caches; `decode` runs one token
// at a position against the caches and returns its logits and the updated
// caches. `generate` prefills once, then decodes one token a step up to the
// model's length, in one process, sampling each token from the logits.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_GENERATE_H
#define TFC_RUNTIME_GENERATE_H

#include "runtime/Model.h"
#include "runtime/Sampling.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

struct GenerateOptions {
  std::string params;    // safetensors; empty: parameters initialised with seed 0
  std::string prompt;    // text: its bytes are the tokens (a byte-level model)
  std::string promptNpy; // or: token ids, i32 [n] or [1, n]
  bool promptGiven = false; // --prompt was given (it may be empty)
  int64_t maxNewTokens = 100;
  double temperature = 1.0; // 0: the most likely token (greedy)
  int64_t topK = 0;         // sample among the k most likely; 0: all
  uint64_t seed = 0;
  std::string output; // also write every token (prompt, then new) as i32 .npy
};

/// Runs `MODEL generate`: prints the prompt and then each new token as it
/// comes (bytes as text for a --prompt, else ids), and the tokens per second
/// on stderr. Returns the exit status.
int generate(Model &model, const GenerateOptions &options);

} // namespace tfc::rt

#endif // TFC_RUNTIME_GENERATE_H
