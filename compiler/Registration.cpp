//===- Registration.cpp - every dialect and pass tfc uses -----------------===//
#include "compiler/Registration.h"
#include "compiler/Passes.h"
#include "compiler/lowering/cpu/Pipeline.h"
#include "compiler/lowering/cuda/Pipeline.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void tfc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<tf::TFDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect, mlir::tensor::TensorDialect,
                  // tf-map-to-gpu's 16-byte accesses: --dump-ir's files parse again.
                  mlir::vector::VectorDialect>();
  registerCpuCodegen(registry);
  registerCudaCodegen(registry);
}

void tfc::registerAllPasses() {
  // Upstream passes the tf pipelines use (canonicalize, cse, inline, ...).
  mlir::registerTransformsPasses();
  registerTfcPasses();
}
