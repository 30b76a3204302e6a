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

} // namespace tfc

/// TFC_MODEL(reverse, 128) { ...build with `b`... }
#define TFC_MODEL(NAME, BATCH)                                                 \
  static void tfcModel_##NAME(::tfc::Builder &b);                              \
  [[maybe_unused]] static const bool tfcModelRegistered_##NAME =               \
      ::tfc::registerModel({#NAME, BATCH, &tfcModel_##NAME});                  \
  static void tfcModel_##NAME(::tfc::Builder &b)

#endif // TFC_COMPILER_DSL_MODELREGISTRY_H
