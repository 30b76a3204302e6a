//===- BufferEffects.h - what ops on buffers touch --------------------------===//
//
// Shared by the passes that move ops on buffers past one another
// (tf-gemm-to-runtime pairs a GEMM with its epilogue, tf-horizontal-loops
// merges independent loops, tf-bf16-gemm-operands copies GEMM operands,
// tf-updates-in-place moves an update after its parameter's readers):
// which buffer a view reads, which ops touch no memory they did not
// allocate, and which buffer a runtime call's pointer argument points into.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_CPU_BUFFEREFFECTS_H
#define TFC_COMPILER_LOWERING_CPU_BUFFEREFFECTS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace tfc {

/// The buffer `v` is a view of (through view-like ops), or `v` itself.
inline mlir::Value rootBuffer(mlir::Value v) {
  while (auto view = v.getDefiningOp<mlir::ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// True for ops that touch no memory but what they allocate (allocations,
/// views, constants): other ops may move past them.
inline bool touchesNoMemory(mlir::Operation *op) {
  if (mlir::isMemoryEffectFree(op))
    return true;
  auto effects = llvm::dyn_cast<mlir::MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions() != 0)
    return false;
  llvm::SmallVector<mlir::MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::all_of(list, [](const mlir::MemoryEffects::EffectInstance &e) {
    return llvm::isa<mlir::MemoryEffects::Allocate>(e.getEffect());
  });
}

/// A pointer argument of a runtime call as tf-gemm-to-runtime's CallArgs
/// makes it: the aligned pointer of `buffer` plus `bytes` (when a constant).
struct RuntimePointer {
  mlir::Value buffer;
  std::optional<int64_t> bytes;
};

inline std::optional<RuntimePointer> runtimePointer(mlir::Value pointer) {
  std::optional<int64_t> bytes = 0;
  if (auto add = pointer.getDefiningOp<mlir::arith::AddIOp>()) {
    bytes = mlir::getConstantIntValue(add.getRhs());
    pointer = add.getLhs();
  }
  auto extract = pointer.getDefiningOp<mlir::memref::ExtractAlignedPointerAsIndexOp>();
  if (!extract)
    return std::nullopt;
  return RuntimePointer{extract.getSource(), bytes};
}

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_CPU_BUFFEREFFECTS_H
