//===- TfDialect.h - the tf dialect: ops, attributes, interfaces ----------===//
#ifndef TFC_DIALECT_TFDIALECT_H
#define TFC_DIALECT_TFDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/TfDialect.h.inc"
#include "dialect/TfEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/TfAttrs.h.inc"

#include "dialect/TfInterfaces.h.inc"

namespace tfc::tf {
/// Marks an op computed element by element over its result (TfOps.td).
template <typename ConcreteType>
class LoopFusible : public mlir::OpTrait::TraitBase<ConcreteType, LoopFusible> {};
/// Marks a loop-fusible op that reads its operands of the result's shape
/// position by position, whatever that shape is called (TfOps.td).
template <typename ConcreteType>
class Positionwise : public mlir::OpTrait::TraitBase<ConcreteType, Positionwise> {};
/// Marks an op whose result elements are copies of operand elements (TfOps.td).
template <typename ConcreteType>
class CopiesElements : public mlir::OpTrait::TraitBase<ConcreteType, CopiesElements> {};
/// Marks an op that reduces (or normalises along) an axis of its first operand.
template <typename ConcreteType>
class ReductionFusible : public mlir::OpTrait::TraitBase<ConcreteType, ReductionFusible> {};
} // namespace tfc::tf

#define GET_OP_CLASSES
#include "dialect/TfOps.h.inc"

namespace tfc::tf {
/// "[4, 8]" for tensor<4x8xf32>: shapes in diagnostics read like the DSL.
std::string formatShape(mlir::Type type);

/// Whether `op` is computed element by element into its consumers' loops:
/// the LoopFusible trait, less a transpose its readers read through
/// (TransposeOp::isConvolutionView), which is no loop at all.
bool isLoopFusible(mlir::Operation *op);
} // namespace tfc::tf

#endif // TFC_DIALECT_TFDIALECT_H
