//===- IndexBounds.h - random integer inputs every indexing op accepts ----===//

#ifndef TFC_TESTS_UNIT_INDEXBOUNDS_H
#define TFC_TESTS_UNIT_INDEXBOUNDS_H

#include "dialect/TfDialect.h"

#include <algorithm>

namespace tfc {

/// The smallest bound of any operand an op under `root` indexes with
/// (tf::IndexingOpInterface: one_hot's depth, gather's rows, cross_entropy's
/// classes), 2^20 when none does: random integers below it are valid
/// indices for all of them.
inline int64_t smallestIndexBound(mlir::Operation *root) {
  int64_t bound = 1 << 20;
  root->walk([&](tf::IndexingOpInterface op) {
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
      if (std::optional<int64_t> b = op.indexBound(i))
        bound = std::min(bound, *b);
  });
  return bound;
}

} // namespace tfc

#endif // TFC_TESTS_UNIT_INDEXBOUNDS_H
