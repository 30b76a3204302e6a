//===- Pipeline.cpp - the stages every backend shares --------------------===//

#include "compiler/lowering/Pipeline.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tfc::addAutodiffPasses(OpPassManager &pm, bool splitStep) {
  pm.addPass(createTfAutodiff(TfAutodiffOptions{splitStep}));
}

void tfc::addFusionPasses(OpPassManager &pm, bool fuse, bool gemmEpilogues,
                          bool horizontal, bool decompose, bool crossEntropyGradKernel) {
  pm.addPass(createTfEntryPoints());
  if (decompose) {
    pm.addPass(createTfDecompose());
  } else if (!crossEntropyGradKernel) {
    // (The options hold an ArrayRef: the names must outlive the pass's creation.)
    static const std::string ceGrad[] = {"cross_entropy_grad"};
    pm.addPass(createTfDecompose(TfDecomposeOptions{ceGrad}));
  }
  pm.nest<func::FuncOp>().addPass(createCanonicalizerPass());
  // CSE on tf ops, not after lowering: merged `linalg.fill` inits would be
  // shared destinations, which bufferization must copy.
  pm.nest<func::FuncOp>().addPass(createCSEPass());
  if (!fuse)
    return;
  pm.addPass(createTfFuse(TfFuseOptions{gemmEpilogues, horizontal}));
  // Broadcasts cloned into every group that reads them are dead outside.
  pm.nest<func::FuncOp>().addPass(createCanonicalizerPass());
}

void tfc::addLinalgPassesWithoutKernels(OpPassManager &pm) {
  pm.addPass(createTfLowerToLinalg(TfLowerToLinalgOptions{"none"}));
  pm.nest<func::FuncOp>().addPass(createCanonicalizerPass());
}

void tfc::addBufferizationPasses(OpPassManager &pm, bool updatesInPlace) {
  bufferization::OneShotBufferizationOptions options;
  options.bufferizeFunctionBoundaries = true;
  options.setFunctionBoundaryTypeConversion(bufferization::LayoutMapOption::IdentityLayoutMap);
  // The constants' globals in program order: the same IR on every run.
  pm.addPass(createTfConstantGlobals(TfConstantGlobalsOptions{options.bufferAlignment}));
  pm.addPass(bufferization::createOneShotBufferizePass(options));
  // Results become out-params, each filled by a copy, which
  // tf-results-in-place then saves where it can. (The pass's
  // hoistStaticAllocs option would save the copy too but crashes in MLIR 19
  // when an entry returns an argument, e.g. eval-mode dropout of an input.)
  pm.addPass(bufferization::createBufferResultsToOutParamsPass({}));
  pm.nest<func::FuncOp>().addPass(createCanonicalizerPass());
  pm.addPass(createTfResultsInPlace());
  if (updatesInPlace)
    pm.addPass(createTfUpdatesInPlace());
}

void tfc::addMemoryPlanAndEntryAbiPasses(OpPassManager &pm) {
  pm.addPass(createTfPlanMemory());
  pm.addPass(createTfPackEntryAbi());
}
