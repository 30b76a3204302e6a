//===- EntryPoints.cpp - the model function becomes the binary's entries --===//
//
// A model function computes everything the file declares (loss, metrics,
// outputs, attention maps) from everything it declares (inputs, parameters,
// the dropout seed). A compiled binary calls narrower functions: `predict`
// returns the outputs and attention maps in eval mode, so it needs neither
// labels nor a seed. This pass builds them and records, for the runtime, what
// each argument and result is (`tfc.abi`), then drops the tf argument and
// result attributes, which only make sense on tensors.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"

namespace tfc {
#define GEN_PASS_DEF_TFENTRYPOINTS
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

bool isModelFunction(func::FuncOp func) {
  return !func.isDeclaration() && func->hasAttr(tf::TFDialect::kBatchAttr) &&
         !func->hasAttr(kEntryAttr);
}

/// {kind = KIND, name = NAME}: one entry argument or result in tfc.abi.
DictionaryAttr describe(Builder &b, StringRef kind, Attribute name) {
  return b.getDictionaryAttr(
      {b.getNamedAttr("kind", b.getStringAttr(kind)), b.getNamedAttr("name", name)});
}

/// {kind = "input"|"param"|"seed", name = ...} for each argument.
DictionaryAttr describeArgument(func::FuncOp func, unsigned i) {
  Builder b(func.getContext());
  auto named = [&](StringRef kind, Attribute name) { return describe(b, kind, name); };
  if (Attribute name = func.getArgAttr(i, tf::TFDialect::kInputAttr))
    return named("input", name);
  if (Attribute name = func.getArgAttr(i, tf::TFDialect::kParamAttr))
    return named("param", name);
  if (func.getArgAttr(i, tf::TFDialect::kSeedAttr))
    return named("seed", b.getStringAttr("seed"));
  return named("input", b.getStringAttr(llvm::formatv("arg{0}", i).str()));
}

/// {kind = "output"|"attention"|"loss"|"metric", name = ...} for a result.
DictionaryAttr describeResult(func::FuncOp func, unsigned i) {
  Builder b(func.getContext());
  auto named = [&](StringRef kind, Attribute name) { return describe(b, kind, name); };
  if (Attribute name = func.getResultAttr(i, tf::TFDialect::kOutputAttr))
    return named("output", name);
  if (Attribute name = func.getResultAttr(i, tf::TFDialect::kAttentionAttr))
    return named("attention", name);
  if (Attribute name = func.getResultAttr(i, tf::TFDialect::kMetricAttr))
    return named("metric", name);
  if (func.getResultAttr(i, tf::TFDialect::kLossAttr))
    return named("loss", b.getStringAttr("loss"));
  return named("output", b.getStringAttr(llvm::formatv("result{0}", i).str()));
}

/// The model-level facts every entry shares: name, batch, parameters (with
/// their initialisers) and inputs, as module attributes.
void recordModel(ModuleOp module, func::FuncOp model) {
  Builder b(module.getContext());
  SmallVector<Attribute> params, inputs;
  for (unsigned i = 0, e = model.getNumArguments(); i < e; ++i) {
    Type type = model.getArgument(i).getType();
    if (Attribute name = model.getArgAttr(i, tf::TFDialect::kParamAttr)) {
      SmallVector<NamedAttribute> fields = {b.getNamedAttr("name", name),
                                            b.getNamedAttr("type", TypeAttr::get(type))};
      if (Attribute init = model.getArgAttr(i, tf::TFDialect::kInitAttr))
        fields.push_back(b.getNamedAttr("init", init));
      params.push_back(b.getDictionaryAttr(fields));
    } else if (Attribute name = model.getArgAttr(i, tf::TFDialect::kInputAttr)) {
      inputs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("name", name), b.getNamedAttr("type", TypeAttr::get(type))}));
    }
  }
  module->setAttr("tfc.model", b.getStringAttr(model.getSymName()));
  module->setAttr("tfc.batch", model->getAttr(tf::TFDialect::kBatchAttr));
  module->setAttr("tfc.params", b.getArrayAttr(params));
  module->setAttr("tfc.inputs", b.getArrayAttr(inputs));
}

/// Clones `model` as entry `name` returning only the results `keep` selects;
/// dropout becomes the identity unless `training`. Arguments the entry does
/// not read are dropped.
func::FuncOp buildEntry(func::FuncOp model, StringRef name,
                        llvm::function_ref<bool(DictionaryAttr)> keep, bool training) {
  OpBuilder b(model);
  auto entry = cast<func::FuncOp>(b.clone(*model));
  entry.setSymName(name);
  entry->removeAttr(tf::TFDialect::kBatchAttr);

  SmallVector<Attribute> argInfo, resultInfo;
  for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i)
    argInfo.push_back(describeArgument(entry, i));
  llvm::BitVector dropResults(entry.getNumResults());
  for (unsigned i = 0, e = entry.getNumResults(); i < e; ++i) {
    DictionaryAttr info = describeResult(entry, i);
    if (keep(info))
      resultInfo.push_back(info);
    else
      dropResults.set(i);
  }

  if (!training)
    entry.walk([](tf::DropoutOp op) {
      op.replaceAllUsesWith(op.getX());
      op.erase();
    });
  auto ret = cast<func::ReturnOp>(entry.getBody().front().getTerminator());
  SmallVector<Value> kept;
  for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i)
    if (!dropResults.test(i))
      kept.push_back(ret.getOperand(i));
  ret->setOperands(kept);
  entry.eraseResults(dropResults);
  IRRewriter rewriter(entry.getContext());
  (void)runRegionDCE(rewriter, entry.getBody());

  llvm::BitVector dropArgs(entry.getNumArguments());
  SmallVector<Attribute> keptArgs;
  for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i) {
    if (entry.getArgument(i).use_empty())
      dropArgs.set(i);
    else
      keptArgs.push_back(argInfo[i]);
  }
  entry.eraseArguments(dropArgs);

  // The tf argument/result attributes are described by tfc.abi now.
  for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i)
    entry.setArgAttrs(i, ArrayRef<NamedAttribute>{});
  for (unsigned i = 0, e = entry.getNumResults(); i < e; ++i)
    entry.setResultAttrs(i, ArrayRef<NamedAttribute>{});
  entry->setAttr(kEntryAttr, b.getStringAttr(name));
  entry->setAttr(kAbiAttr, b.getDictionaryAttr(
                               {b.getNamedAttr("args", b.getArrayAttr(keptArgs)),
                                b.getNamedAttr("results", b.getArrayAttr(resultInfo))}));
  return entry;
}

struct TfEntryPointsPass : tfc::impl::TfEntryPointsBase<TfEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> models;
    for (auto func : module.getOps<func::FuncOp>())
      if (isModelFunction(func))
        models.push_back(func);
    if (models.empty())
      return; // Already lowered, or a module of plain functions.
    if (models.size() > 1) {
      models[1].emitError("a module compiles one model; found a second: '")
          << models[1].getSymName() << "'";
      return signalPassFailure();
    }
    func::FuncOp model = models.front();
    recordModel(module, model);
    buildEntry(
        model, "predict",
        [](DictionaryAttr info) {
          StringRef kind = cast<StringAttr>(info.get("kind")).getValue();
          return kind == "output" || kind == "attention";
        },
        /*training=*/false);
    model.erase();
  }
};

} // namespace
