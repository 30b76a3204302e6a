//===- LinalgBuilders.h - building linalg.generic ops on tensors ---------===//
//
// What tf-lower-to-linalg's patterns and a backend's kernel calls share: a
// generic from a scalar body and indexing maps, an elementwise generic, an
// empty tensor, an f32 constant.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_LINALGBUILDERS_H
#define TFC_COMPILER_LOWERING_LINALGBUILDERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace tfc {
using namespace mlir;

using BodyFn = llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// A linalg.generic writing a fresh tensor of `resultType` from `inputs`
/// read through `inputMaps`, with `iterators` over the loop dims and the
/// scalar `body`. The output map is the identity on the parallel dims.
inline Value buildGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                   ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                   AffineMap outputMap, Value init,
                   ArrayRef<utils::IteratorType> iterators, BodyFn body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(outputMap);
  auto generic = b.create<linalg::GenericOp>(
      loc, resultType, inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        nb.create<linalg::YieldOp>(nl, body(nb, nl, args));
      });
  return generic.getResult(0);
}

inline Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type) {
  return b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
}

/// An elementwise op over operands of the result's shape.
inline Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange inputs, BodyFn body) {
  AffineMap id = b.getMultiDimIdentityMap(resultType.getRank());
  SmallVector<AffineMap> maps(inputs.size(), id);
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  return buildGeneric(b, loc, resultType, inputs, maps, id,
                      emptyLike(b, loc, resultType), iterators, body);
}

inline Value f32Const(OpBuilder &b, Location loc, double v) {
  return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(v));
}

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_LINALGBUILDERS_H
