//===- ApproximateMath.cpp - vectorisable exp, log, tanh, erf -------------===//
//
// LLVM lowers llvm.exp/log and the libm calls for tanh and erf to one scalar
// call per element, and a call in a loop body keeps the whole fused loop
// scalar (softmax, cross_entropy and gelu loops, with everything fused into
// them). MLIR's polynomial approximations are plain arithmetic instead, so
// the loop vectoriser handles them like any other op.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tfc {
#define GEN_PASS_DEF_TFAPPROXIMATEMATH
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {
struct TfApproximateMathPass : tfc::impl::TfApproximateMathBase<TfApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
