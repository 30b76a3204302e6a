//===- Sampling.h - drawing the next token from a model's logits ----------===//

#ifndef TFC_RUNTIME_SAMPLING_H
#define TFC_RUNTIME_SAMPLING_H

#include <cstdint>

namespace tfc::rt {

/// The token drawn from `logits` (vocab values) at temperature `temperature`
/// among the `topK` largest (0: all) with the uniform `u` in [0, 1): the
/// first whose cumulative softmax weight exceeds u. Temperature 0 is the
/// argmax; ties go to the lower id, so a draw is the same on every machine.
int32_t sampleToken(const float *logits, int64_t vocab, double temperature, int64_t topK,
                    double u);

/// The uniform in [0, 1) that draws the token of generation step `step`
/// under `seed` (Philox4x32, as dropout's masks).
double sampleUniform(uint64_t seed, uint64_t step);

} // namespace tfc::rt

#endif // TFC_RUNTIME_SAMPLING_H
