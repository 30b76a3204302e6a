//===- Passes.h - tfc's passes --------------------------------------------===//
#ifndef TFC_COMPILER_PASSES_H
#define TFC_COMPILER_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
}
namespace linalg {
class LinalgDialect;
}
namespace math {
class MathDialect;
}
namespace tensor {
class TensorDialect;
}
} // namespace mlir

namespace tfc {
#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"
} // namespace tfc

#endif // TFC_COMPILER_PASSES_H
