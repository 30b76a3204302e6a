//===- GlobalsToDevice.cpp - constant tables the runtime reads, on the GPU -===//
//
// A constant table (memref.global: a causal mask, a positional encoding)
// lives in the host's memory; a kernel of tf-map-to-gpu reads it inside the
// GPU module instead (it moves there with the kernel), but a runtime call
// (a hand-written attention kernel's mask) is handed its pointer, which on
// a GPU must be device memory. Each table a call reads is copied, once an
// entry, into a buffer of the entry's arena (the copy is a kernel like any
// other), and the call reads the buffer. Runs before the memory plan, which
// places the buffer.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace tfc {
#define GEN_PASS_DEF_TFGLOBALSTODEVICE
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

/// Whether `value` (a table or a view of one) is used other than by loop
/// nests (which read it on the GPU) and views of it.
bool usedOnHost(Value value) {
  for (Operation *user : value.getUsers()) {
    if (isa<linalg::LinalgOp, memref::CopyOp>(user))
      continue;
    if (isa<ViewLikeOpInterface>(user) && user->getNumResults() == 1 &&
        user->getOperand(0) == value) {
      if (usedOnHost(user->getResult(0)))
        return true;
      continue;
    }
    return true;
  }
  return false;
}

struct TfGlobalsToDevicePass : tfc::impl::TfGlobalsToDeviceBase<TfGlobalsToDevicePass> {
  void runOnOperation() override {
    SmallVector<memref::GetGlobalOp> tables;
    getOperation().walk([&](memref::GetGlobalOp op) {
      if (op->getParentOfType<func::FuncOp>() && usedOnHost(op.getResult()))
        tables.push_back(op);
    });
    for (memref::GetGlobalOp table : tables) {
      OpBuilder b(table->getContext());
      b.setInsertionPointAfter(table);
      auto type = cast<MemRefType>(table.getType());
      Value copy = b.create<memref::AllocOp>(
          table.getLoc(), MemRefType::get(type.getShape(), type.getElementType()));
      auto fill = b.create<memref::CopyOp>(table.getLoc(), table.getResult(), copy);
      table.getResult().replaceAllUsesExcept(copy, fill);
    }
  }
};

} // namespace
