//===- Philox.h - counter-based random numbers (Philox4x32-10) ------------===//
//
// Header-only and free of LLVM: the interpreter, the runtime and generated
// code all draw dropout masks from this one definition, so a run is a pure
// function of (seed, op key, element index) and reproducible bitwise.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_PHILOX_H
#define TFC_RUNTIME_PHILOX_H

#include <array>
#include <cmath>
#include <cstdint>

namespace tfc {

/// Philox4x32-10's round multipliers and the key's Weyl increments (the
/// generated code that draws masks itself uses them too).
namespace philox {
inline constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
} // namespace philox

/// Philox4x32 with 10 rounds (Salmon et al., SC'11), as in cuRAND and JAX.
inline std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                          std::array<uint32_t, 2> key) {
  using namespace philox;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(kMul0) * counter[0];
    uint64_t p1 = uint64_t(kMul1) * counter[2];
    counter = {uint32_t(p1 >> 32) ^ counter[1] ^ key[0], uint32_t(p1),
               uint32_t(p0 >> 32) ^ counter[3] ^ key[1], uint32_t(p0)};
    key = {key[0] + kWeyl0, key[1] + kWeyl1};
  }
  return counter;
}

/// The four words that decide elements 4g .. 4g + 3 of the dropout op with
/// key `key` under `seed` (one Philox call a group of four):
///   philox4x32(counter = {g lo, g hi, key hi, 0}, key = {seed, key lo}).
inline std::array<uint32_t, 4> dropoutWords(uint32_t seed, uint64_t key, uint64_t group) {
  return philox4x32({uint32_t(group), uint32_t(group >> 32), uint32_t(key >> 32), 0u},
                    {seed, uint32_t(key)});
}

/// The uniform in [0, 1) that decides whether dropout keeps element `index`:
/// word index % 4 of dropoutWords(seed, key, index / 4) times 2^-32. An
/// element is dropped when this value is < rate.
inline double dropoutUniform(uint32_t seed, uint64_t key, uint64_t index) {
  return dropoutWords(seed, key, index / 4)[index % 4] * (1.0 / 4294967296.0);
}

/// The integer form of the same test, for compiled code: an element is
/// dropped when its word is below ceil(rate * 2^32) (rate < 1: 32 bits).
inline uint32_t dropoutThreshold(double rate) {
  return static_cast<uint32_t>(std::ceil(rate * 4294967296.0));
}

} // namespace tfc

#endif // TFC_RUNTIME_PHILOX_H
