//===- ModelRegistry.h - C++ DSL models, found by name --------------------===//
//
// A C++ model is a function that builds one model with the DSL. TFC_MODEL
// registers it at static-initialisation time, so a model program (see
// tfc_add_model) or a test links model sources and looks them up by name.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_DSL_MODELREGISTRY_H
#define TFC_COMPILER_DSL_MODELREGISTRY_H

#include "compiler/dsl/DSL.h"

#include "mlir/IR/Diagnostics.h"

#include <string>

namespace tfc {

struct ModelDef {
  const char *name;
  /// The batch of the model's `train` settings, used unless overridden.
  int64_t defaultBatch;
  void (*build)(Builder &);
};

bool registerModel(const ModelDef &model);
llvm::ArrayRef<ModelDef> registeredModels();
const ModelDef *findModel(llvm::StringRef name);

/// Builds a registered model into a verified module (null after a
/// diagnostic). `batch` <= 0 takes the model's default.
mlir::OwningOpRef<mlir::ModuleOp> buildModel(mlir::MLIRContext &context,
                                             const ModelDef &model,
                                             int64_t batch = 0,
                                             ModelOptions options = {});

/// A diagnostic of a C++ model as a C++ compiler prints its own: the model
/// (the NameLoc the DSL gives every location), then the file and line of the
/// call that failed, the severity and the message, and its notes alike:
///
///   my_model.cpp: In model 'my_model':
///   my_model.cpp:12: error: operator+: shapes [64, 8] and [64, 24, 32] cannot be broadcast together
std::string formatModelDiagnostic(const mlir::Diagnostic &diag);

} // namespace tfc

/// TFC_MODEL(reverse, 128) { ...build with `b`... }
#define TFC_MODEL(NAME, BATCH)                                                 \
  static void tfcModel_##NAME(::tfc::Builder &b);                              \
  [[maybe_unused]] static const bool tfcModelRegistered_##NAME =               \
      ::tfc::registerModel({#NAME, BATCH, &tfcModel_##NAME});                  \
  static void tfcModel_##NAME(::tfc::Builder &b)

#endif // TFC_COMPILER_DSL_MODELREGISTRY_H
