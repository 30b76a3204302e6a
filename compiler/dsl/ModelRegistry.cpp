//===- ModelRegistry.cpp - C++ DSL models, found by name ------------------===//

#include "compiler/dsl/ModelRegistry.h"

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
  return b.finish();
}

} // namespace tfc
