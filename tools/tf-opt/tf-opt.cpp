//===- tf-opt.cpp - mlir-opt for the tf dialect ---------------------------===//
#include "compiler/Registration.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tfc::registerAllDialects(registry);
  tfc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tf-opt: the tf dialect optimizer\n", registry));
}
