//===- ResultsInPlace.cpp - entries compute their results in the out-params ===//
//
// buffer-results-to-out-params turns every result into an out-param filled
// by a copy at the end of the entry; for a train step those are the new
// parameters and optimizer state, three extra passes over every parameter.
// Where the copied buffer is an allocation of the same type used by nothing
// after the copy, the out-param simply takes its place.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace tfc {
#define GEN_PASS_DEF_TFRESULTSINPLACE
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

/// Replaces the allocation `copy` reads by the out-param it writes, when
/// that changes nothing the entry computes.
void computeInPlace(memref::CopyOp copy, Block &block) {
  auto out = dyn_cast<BlockArgument>(copy.getTarget());
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  if (!out || out.getOwner() != &block || !out.hasOneUse() || !alloc ||
      alloc->getBlock() != &block || alloc.getType() != out.getType())
    return;
  // The copy is the buffer's last reader: nothing after it may see the
  // out-param's bytes in its place.
  for (Operation *user : alloc->getUsers()) {
    Operation *top = block.findAncestorOpInBlock(*user);
    if (!top || (top != copy.getOperation() && copy->isBeforeInBlock(top)))
      return;
  }
  copy.erase();
  alloc.replaceAllUsesWith(out);
  alloc.erase();
}

struct TfResultsInPlacePass : tfc::impl::TfResultsInPlaceBase<TfResultsInPlacePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(kEntryAttr) || func.isDeclaration())
        continue;
      Block &block = func.getBody().front();
      SmallVector<memref::CopyOp> copies(block.getOps<memref::CopyOp>());
      for (memref::CopyOp copy : copies)
        computeInPlace(copy, block);
    }
  }
};

} // namespace
