//===- BufferEffects.h - what ops on buffers touch --------------------------===//
//
// Shared by the passes that move ops on buffers past one another
// (tf-gemm-to-runtime pairs a GEMM with its epilogue, tf-horizontal-loops
// merges independent loops): which buffer a view reads, and which ops touch
// no memory they did not allocate.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_CPU_BUFFEREFFECTS_H
#define TFC_COMPILER_LOWERING_CPU_BUFFEREFFECTS_H

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

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_CPU_BUFFEREFFECTS_H
