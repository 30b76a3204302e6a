//===- ModelMain.cpp - main() of a C++ DSL model program ------------------===//
//
// Linked with one or more TFC_MODEL sources, it prints the model's tf IR:
//   PROGRAM [--model NAME] [--batch N] [--list]
// (tfc_add_model will run this program at build time and feed the IR to the
// same pipeline as `tfc compile`.)
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"
#include "compiler/dsl/ModelRegistry.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::opt<std::string> modelName("model",
                                      cl::desc("The model to build (default: the only one)"),
                                      cl::value_desc("name"), cl::init(""));
static cl::opt<int64_t> batchSize("batch", cl::desc("Batch size (default: the model's)"),
                                  cl::init(0));
static cl::opt<bool> listModels("list", cl::desc("List the models of this program"));
static cl::opt<bool> recordAttention(
    "attention-maps", cl::desc("Return every attention layer's weights as results"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "tfc C++ model program\n");
  llvm::ArrayRef<tfc::ModelDef> models = tfc::registeredModels();
  if (listModels) {
    for (const tfc::ModelDef &m : models)
      llvm::outs() << m.name << "\n";
    return 0;
  }
  const tfc::ModelDef *model = nullptr;
  if (!modelName.empty())
    model = tfc::findModel(modelName);
  else if (models.size() == 1)
    model = &models.front();
  if (!model) {
    llvm::errs() << "error: "
                 << (modelName.empty() ? "this program holds several models; pick one with --model"
                                       : "no model named '" + modelName + "'")
                 << " (--list shows them)\n";
    return 1;
  }
  mlir::DialectRegistry registry;
  tfc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::ScopedDiagnosticHandler printer(&context, [](mlir::Diagnostic &diag) {
    llvm::errs() << tfc::formatModelDiagnostic(diag);
    return mlir::success();
  });
  tfc::ModelOptions options;
  options.recordAttention = recordAttention;
  auto module = tfc::buildModel(context, *model, batchSize, options);
  if (!module)
    return 1;
  module->print(llvm::outs());
  return 0;
}
