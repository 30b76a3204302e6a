//===- Dropout.h - dropout masks for generated code -----------------------===//
//
// tf.dropout's CPU lowering draws its mask here and applies it in the loop
// that reads it (fused with its neighbours): one Philox call decides four
// elements (runtime/Philox.h's dropoutWords), where generated code drew one
// call an element.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_DROPOUT_H
#define TFC_RUNTIME_DROPOUT_H

#include <cstdint>

extern "C" {
/// mask[j] = 1 where element i = first + j of dropout op `key` under `seed`
/// is dropped, word i % 4 of dropoutWords(seed, key, i / 4) < threshold, else
/// 0, for j < n (threshold = ceil(rate * 2^32)). The same bits as
/// dropoutUniform(seed, key, i) < rate for any thread count. `first` is 0
/// but for a rank's share of a data-parallel batch: the index its first
/// element has in the global batch's tensor.
void tfc_dropout_mask(intptr_t mask, intptr_t n, intptr_t first, intptr_t seed, intptr_t key,
                      intptr_t threshold);
}

#endif // TFC_RUNTIME_DROPOUT_H
