//===- LinalgBuilders.h - building linalg.generic ops on tensors ---------===//
//
// What tf-lower-to-linalg's patterns and a backend's kernel calls share: a
// generic from a scalar body and indexing maps, an elementwise generic, an
// empty tensor, an f32 constant, how dropout applies its mask.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_LINALGBUILDERS_H
#define TFC_COMPILER_LOWERING_LINALGBUILDERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace tfc {

using BodyFn = llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// A linalg.generic writing a fresh tensor of `resultType` from `inputs`
/// read through `inputMaps`, with `iterators` over the loop dims and the
/// scalar `body`. The output map is the identity on the parallel dims.
inline mlir::Value buildGeneric(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::RankedTensorType resultType, mlir::ValueRange inputs,
                                llvm::ArrayRef<mlir::AffineMap> inputMaps,
                                mlir::AffineMap outputMap, mlir::Value init,
                                llvm::ArrayRef<mlir::utils::IteratorType> iterators,
                                BodyFn body) {
  llvm::SmallVector<mlir::AffineMap> maps(inputMaps);
  maps.push_back(outputMap);
  auto generic = b.create<mlir::linalg::GenericOp>(
      loc, resultType, inputs, init, maps, iterators,
      [&](mlir::OpBuilder &nb, mlir::Location nl, mlir::ValueRange args) {
        nb.create<mlir::linalg::YieldOp>(nl, body(nb, nl, args));
      });
  return generic.getResult(0);
}

inline mlir::Value emptyLike(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType type) {
  return b.create<mlir::tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
}

/// An elementwise op over operands of the result's shape.
inline mlir::Value elementwise(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::RankedTensorType resultType, mlir::ValueRange inputs,
                               BodyFn body) {
  mlir::AffineMap id = b.getMultiDimIdentityMap(resultType.getRank());
  llvm::SmallVector<mlir::AffineMap> maps(inputs.size(), id);
  llvm::SmallVector<mlir::utils::IteratorType> iterators(resultType.getRank(),
                                                         mlir::utils::IteratorType::parallel);
  return buildGeneric(b, loc, resultType, inputs, maps, id, emptyLike(b, loc, resultType),
                      iterators, body);
}

inline mlir::Value f32Const(mlir::OpBuilder &b, mlir::Location loc, double v) {
  return b.create<mlir::arith::ConstantOp>(loc, b.getF32FloatAttr(v));
}

/// Inverted dropout of one element, as every lowering of tf.dropout applies
/// its mask: 0 where `dropped` (i1), else x / (1 - rate).
inline mlir::Value applyDropout(mlir::OpBuilder &b, mlir::Location loc, mlir::Value dropped,
                                mlir::Value x, double rate) {
  mlir::Value kept = b.create<mlir::arith::DivFOp>(loc, x, f32Const(b, loc, 1.0 - rate));
  return b.create<mlir::arith::SelectOp>(loc, dropped, f32Const(b, loc, 0.0), kept);
}

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_LINALGBUILDERS_H
