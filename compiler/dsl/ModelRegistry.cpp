//===- ModelRegistry.cpp - C++ DSL models, found by name ------------------===//

#include "compiler/dsl/ModelRegistry.h"

#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace tfc {

static std::vector<ModelDef> &registry() {
  static std::vector<ModelDef> models;
  return models;
}

bool registerModel(const ModelDef &model) {
  registry().push_back(model);
  return true;
}

llvm::ArrayRef<ModelDef> registeredModels() { return registry(); }

const ModelDef *findModel(llvm::StringRef name) {
  for (const ModelDef &m : registry())
    if (name == m.name)
      return &m;
  return nullptr;
}

mlir::OwningOpRef<mlir::ModuleOp> buildModel(mlir::MLIRContext &context,
                                             const ModelDef &model,
                                             int64_t batch,
                                             ModelOptions options) {
  options.batch = batch > 0 ? batch : model.defaultBatch;
  Builder b(context, model.name, options);
  model.build(b);
  mlir::OwningOpRef<mlir::ModuleOp> module = b.finish();
  if (!module || !b.generation())
    return module;
  // A model that generates: its prefill and decode functions too.
  return buildGenerationFunctions(std::move(module), *b.generation(), options,
                                  [&](const ModelOptions &passOptions) {
                                    Builder pass(context, model.name, passOptions);
                                    model.build(pass);
                                    return pass.finish();
                                  });
}

namespace {
const char *severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

/// "file:line: severity: message" ("severity: message" where no file is known).
void printLine(llvm::raw_ostream &os, mlir::Location loc,
               mlir::DiagnosticSeverity severity, const mlir::Diagnostic &diag) {
  if (auto file = loc->findInstanceOf<mlir::FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ": ";
  os << severityName(severity) << ": " << diag.str() << "\n";
}
} // namespace

std::string formatModelDiagnostic(const mlir::Diagnostic &diag) {
  std::string out;
  llvm::raw_string_ostream os(out);
  mlir::Location loc = diag.getLocation();
  if (auto model = loc->findInstanceOf<mlir::NameLoc>()) {
    if (auto file = loc->findInstanceOf<mlir::FileLineColLoc>())
      os << file.getFilename().getValue() << ": ";
    os << "In model '" << model.getName().getValue() << "':\n";
  }
  printLine(os, loc, diag.getSeverity(), diag);
  for (const mlir::Diagnostic &note : diag.getNotes())
    printLine(os, note.getLocation(), note.getSeverity(), note);
  return out;
}

} // namespace tfc
