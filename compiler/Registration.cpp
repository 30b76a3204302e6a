//===- Registration.cpp - every dialect and pass tfc uses -----------------===//
#include "compiler/Registration.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void tfc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<tf::TFDialect, mlir::func::FuncDialect>();
}

void tfc::registerAllPasses() {
  // Upstream passes the tf pipelines use (canonicalize, cse, inline, ...).
  mlir::registerTransformsPasses();
}
