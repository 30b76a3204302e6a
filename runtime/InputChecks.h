//===- InputChecks.h - input values checked before a step uses them -------===//
//
// An integer input that some op indexes with (embedding ids, one_hot tokens,
// cross_entropy labels) carries its bound in the manifest (`index_bound`).
// Each command checks the data it feeds where it enters the runtime (the
// .npy files of predict, attention and run; every split of a dataset before
// train or eval starts), so a bad value is refused before anything runs or
// is written, and the compiled step pays nothing for it.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_INPUTCHECKS_H
#define TFC_RUNTIME_INPUTCHECKS_H

#include "runtime/Datasets.h"
#include "runtime/Manifest.h"
#include "runtime/Tensor.h"

#include <string>

namespace tfc::rt {

/// Checks every value of `t`, samples of model input `spec` along its first
/// dim (a scalar is one value), against spec.indexBound. On the first value
/// out of range, false with an `error` naming the input, `source` (e.g.
/// "'tokens.npy'"), the sample (counted from `firstSample`), the position in
/// it, the value and the valid range.
bool checkInputValues(const TensorSpec &spec, const Tensor &t, const std::string &source,
                      int64_t firstSample, std::string &error);

/// checkInputValues over every sample of `split` (named `splitName`) for
/// each of `inputs` with an index bound; true at once when none has one.
bool checkSplitValues(const Split &split, const std::vector<TensorSpec> &inputs,
                      const std::string &splitName, std::string &error);

/// checkSplitValues over the train, val and test splits.
bool checkDatasetValues(const Dataset &data, const std::vector<TensorSpec> &inputs,
                        std::string &error);

} // namespace tfc::rt

#endif // TFC_RUNTIME_INPUTCHECKS_H
