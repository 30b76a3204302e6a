//===- DropoutInCode.h - tf.dropout's mask drawn in generated code --------===//

#ifndef TFC_COMPILER_LOWERING_DROPOUTINCODE_H
#define TFC_COMPILER_LOWERING_DROPOUTINCODE_H

#include "mlir/IR/PatternMatch.h"

namespace tfc {

/// tf.dropout as one elementwise generic that draws each element's Philox
/// word itself (no runtime call): the masks of runtime/Philox.h's
/// dropoutWords, bit for bit, for a backend without the CPU runtime's
/// tfc_dropout_mask (tf-lower-to-linalg with kernels=none).
void populateDropoutInCodePatterns(mlir::RewritePatternSet &patterns);

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_DROPOUTINCODE_H
