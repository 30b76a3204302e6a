//===- Autodiff.h - reverse-mode differentiation of tf functions ----------===//
//
// A generic reverse sweep over tf::GradientOpInterface: it knows no op by
// name. Each op builds its own vector-Jacobian product (dialect/TfGradients.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_TRANSFORMS_AUTODIFF_H
#define TFC_COMPILER_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace tfc {

/// Appends, at `builder`'s insertion point (after every op that computes
/// `loss`, in the same block), the adjoints d loss / d v for each v in `wrt`
/// (block arguments or values of that block). `loss` is a scalar f32 tensor.
/// A `wrt` value the loss does not depend on gets a zero tensor. Fails with a
/// diagnostic at the op when an op on the path cannot be differentiated.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildAdjoints(mlir::OpBuilder &builder, mlir::Value loss, mlir::ValueRange wrt);

/// A new function `name` beside `forward`, with the same arguments, returning
/// forward's result 0 (the scalar loss) followed by d loss / d argument for
/// every floating-point argument, in argument order. For tests and tools.
mlir::FailureOr<mlir::func::FuncOp> createGradientFunction(mlir::func::FuncOp forward,
                                                           llvm::StringRef name);

} // namespace tfc

#endif // TFC_COMPILER_TRANSFORMS_AUTODIFF_H
