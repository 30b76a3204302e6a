//===- BufferEffects.h - what ops on buffers touch --------------------------===//
//
// Shared by the passes that move ops on buffers past one another
// (tf-gemm-to-runtime pairs a GEMM with its epilogue, tf-horizontal-loops
// merges independent loops, tf-bf16-gemm-operands copies GEMM operands,
// tf-updates-in-place moves an update after its parameter's readers) or
// order them (tf-plan-memory's concurrent plan, tf-graph-dependencies):
// which buffer a view reads, which ops touch no memory they did not
// allocate, which buffer a runtime call's pointer argument points into and
// which of them the call only reads, and what an op of an entry's block
// reads and writes.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_CPU_BUFFEREFFECTS_H
#define TFC_COMPILER_LOWERING_CPU_BUFFEREFFECTS_H

#include "runtime/Abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

/// Whether runtime function `callee` only reads the pointer at argument
/// `position` (runtime/Abi.h's layouts: a GEMM's A and B, the inputs of the
/// hand-written kernels); false for what it writes and for what this does
/// not know.
inline bool runtimeCallOnlyReads(llvm::StringRef callee, unsigned position) {
  using abi::RuntimeFunction;
  auto is = [&](RuntimeFunction f) { return callee == llvm::StringRef(abi::symbol(f)); };
  namespace g = abi::gemm;
  namespace at = abi::attention;
  if (is(RuntimeFunction::CudaSgemm) || is(RuntimeFunction::CudaSgemmFused) ||
      is(RuntimeFunction::CudaSgemmBiasGrad)) {
    if (position == g::A || position == g::B)
      return true;
    return is(RuntimeFunction::CudaSgemmFused) && (position == g::Bias || position == g::Residual);
  }
  // The tensors' pointers, each followed by its three strides.
  auto tensor = [](unsigned t) { return at::kSizes + 1 + at::kPerTensor * t; };
  if (is(RuntimeFunction::CudaAttentionForward)) {
    for (unsigned t = 0; t < at::kForwardInputs; ++t)
      if (position == tensor(t))
        return true;
    return false;
  }
  if (is(RuntimeFunction::CudaAttentionBackward)) {
    for (unsigned t = 0; t < at::kBackwardInputs; ++t)
      if (position == tensor(t))
        return true;
    // The forward's out and stats (dS's room after them is written).
    const unsigned out = tensor(at::kBackwardInputs + at::kBackwardOutputs);
    return position == out || position == out + at::kPerTensor;
  }
  // Sizes, then the inputs (Abi.h's comments on each function).
  if (is(RuntimeFunction::CudaLayerNormForward)) {
    namespace ln = abi::layer_norm;
    return (position >= ln::X && position <= ln::Beta) || position == ln::Residual ||
           position == ln::Seed || position == ln::SampleOffset;
  }
  if (is(RuntimeFunction::CudaLayerNormBackward)) {
    namespace lnb = abi::layer_norm_backward;
    return (position >= lnb::X && position <= lnb::Gate) || position == lnb::Seed ||
           position == lnb::SampleOffset; // x, gamma, the adjoint, its gate; the dropout's
  }
  if (is(RuntimeFunction::CudaCrossEntropy))
    return position >= 4 && position <= 5; // logits, labels
  if (is(RuntimeFunction::CudaCrossEntropyBackward) || is(RuntimeFunction::CudaCrossEntropyFused))
    return position >= 4 && position <= 6; // logits, labels, the loss's adjoint
  return false;
}

/// A buffer an op touches, and whether it writes it (an op that writes a
/// buffer may read it too: an init, a kernel's in-out argument).
struct BufferAccess {
  mlir::Value root;
  bool write;
};

/// What `op` (an op of an entry's block, on buffers) reads and writes, by
/// root buffer; false when it may touch a buffer it does not name (a
/// pointer of unknown origin, an op this does not know). A runtime call
/// writes each buffer it is given, or with `knownReads` only those
/// runtimeCallOnlyReads does not name.
inline bool bufferAccessesOf(mlir::Operation *op, llvm::SmallVectorImpl<BufferAccess> &accesses,
                             bool knownReads) {
  using namespace mlir;
  if (touchesNoMemory(op) || isa<func::ReturnOp>(op))
    return true;
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
    accesses.push_back({rootBuffer(dealloc.getMemref()), true});
    return true;
  }
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    accesses.push_back({rootBuffer(copy.getSource()), false});
    accesses.push_back({rootBuffer(copy.getTarget()), true});
    return true;
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (!linalgOp.hasPureBufferSemantics())
      return false;
    for (OpOperand &operand : op->getOpOperands())
      if (isa<MemRefType>(operand.get().getType()))
        accesses.push_back({rootBuffer(operand.get()), linalgOp.isDpsInit(&operand)});
    // What the body loads or stores itself (a cross-entropy's labels).
    WalkResult walk = op->walk([&](Operation *inner) {
      if (inner == op || isMemoryEffectFree(inner))
        return WalkResult::advance();
      if (auto load = dyn_cast<memref::LoadOp>(inner))
        accesses.push_back({rootBuffer(load.getMemRef()), false});
      else if (auto store = dyn_cast<memref::StoreOp>(inner))
        accesses.push_back({rootBuffer(store.getMemRef()), true});
      else
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return !walk.wasInterrupted();
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    // A kernel's buffers, as memrefs or as pointers.
    for (auto [position, operand] : llvm::enumerate(call.getOperands())) {
      const bool write = !knownReads || !runtimeCallOnlyReads(call.getCallee(), unsigned(position));
      if (isa<MemRefType>(operand.getType())) {
        accesses.push_back({rootBuffer(operand), write});
      } else if (operand.getType().isIndex() && !getConstantIntValue(operand)) {
        std::optional<RuntimePointer> pointer = runtimePointer(operand);
        if (!pointer)
          return false;
        accesses.push_back({rootBuffer(pointer->buffer), write});
      }
    }
    return true;
  }
  return false;
}

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_CPU_BUFFEREFFECTS_H
