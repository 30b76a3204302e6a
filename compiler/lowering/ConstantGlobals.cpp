//===- ConstantGlobals.cpp - tensor constants' globals in program order ---===//
//
// One-Shot Bufferize turns each tensor arith.constant into a memref.global
// (bufferization::getGlobalFor: the first global of the same value and
// alignment, else a new one named after its shape, moved to the module's
// front). It bufferizes a module's functions in an order MLIR 19 takes from
// a pointer-keyed map, so which function's constants come first, the
// globals' order and their names' suffixes (__constant_4xf32_0) changed
// from run to run: the same model gave different IR and objects. This pass
// makes the globals first, walking the module in program order, and the
// bufferization finds them: the same output on every run.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace tfc {
#define GEN_PASS_DEF_TFCONSTANTGLOBALS
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

struct TfConstantGlobalsPass : tfc::impl::TfConstantGlobalsBase<TfConstantGlobalsPass> {
  using TfConstantGlobalsBase::TfConstantGlobalsBase;

  void runOnOperation() override {
    SmallVector<arith::ConstantOp> constants;
    getOperation().walk([&](arith::ConstantOp constant) {
      if (isa<RankedTensorType>(constant.getType()))
        constants.push_back(constant);
    });
    for (arith::ConstantOp constant : constants)
      if (failed(bufferization::getGlobalFor(constant, alignment)))
        return signalPassFailure();
  }
};

} // namespace
