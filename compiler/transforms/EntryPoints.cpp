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
#include "compiler/transforms/EntryAbi.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallPtrSet.h"

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

/// The number of values an integer model input may take, [0, bound), when
/// some op indexes with it (through ops that only copy its elements): the
/// smallest bound of any such use. The runtime checks inputs against it.
std::optional<int64_t> indexBound(Value input) {
  std::optional<int64_t> bound;
  SmallVector<Value> worklist = {input};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto indexing = dyn_cast<tf::IndexingOpInterface>(user))
        if (std::optional<int64_t> b = indexing.indexBound(use.getOperandNumber()))
          bound = bound ? std::min(*bound, *b) : *b;
      if (user->hasTrait<tf::CopiesElements>() && seen.insert(user).second)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return bound;
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
      SmallVector<NamedAttribute> fields = {b.getNamedAttr("name", name),
                                            b.getNamedAttr("type", TypeAttr::get(type))};
      if (std::optional<int64_t> bound = indexBound(model.getArgument(i)))
        fields.push_back(b.getNamedAttr("index_bound", b.getI64IntegerAttr(*bound)));
      inputs.push_back(b.getDictionaryAttr(fields));
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
    argInfo.push_back(describeModelArgument(entry, i));
  llvm::BitVector dropResults(entry.getNumResults());
  for (unsigned i = 0, e = entry.getNumResults(); i < e; ++i) {
    DictionaryAttr info = describeModelResult(entry, i);
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
  finalizeEntry(entry, name, argInfo, resultInfo);
  return entry;
}

/// The values a reduction over every sample of the batch runs over, and the
/// number of them a sample contributes: reduce_mean and reduce_sum over all
/// axes, mse and cross_entropy (over its last axis), of a tensor whose first
/// axis is the batch; null when `def` is none of those.
struct BatchReduction {
  Value perElement; // [batch, ...]
  bool mean = true; // else a sum
};
FailureOr<BatchReduction> batchReductionOf(OpBuilder &b, Operation *def, int64_t batch,
                                           StringRef name) {
  Location loc = def->getLoc();
  BatchReduction r;
  auto allAxes = [](ArrayRef<int64_t> axes, Value x) {
    return int64_t(axes.size()) == cast<RankedTensorType>(x.getType()).getRank();
  };
  if (auto mean = dyn_cast<tf::ReduceMeanOp>(def)) {
    if (allAxes(mean.getAxes(), mean.getX()))
      r.perElement = mean.getX();
  } else if (auto sum = dyn_cast<tf::ReduceSumOp>(def)) {
    if (allAxes(sum.getAxes(), sum.getX()))
      r.perElement = sum.getX(), r.mean = false;
  } else if (auto mse = dyn_cast<tf::MseOp>(def)) {
    Value d = b.create<tf::SubOp>(loc, mse.getLhs(), mse.getRhs());
    r.perElement = b.create<tf::MulOp>(loc, d, d);
  } else if (auto ce = dyn_cast<tf::CrossEntropyOp>(def)) {
    auto logits = cast<RankedTensorType>(ce.getLogits().getType());
    int64_t axis = ce.getAxis();
    if (axis != logits.getRank() - 1)
      return def->emitError("evaluate: '") << name << "' is a cross_entropy over axis " << axis
                                           << "; masking supports the last axis only";
    Value logProbs = b.create<tf::LogSoftmaxOp>(loc, ce.getLogits(), axis);
    Value hot = b.create<tf::OneHotOp>(loc, ce.getLabels(), logits.getDimSize(axis));
    Value picked = b.create<tf::ReduceSumOp>(loc, b.create<tf::MulOp>(loc, logProbs, hot),
                                             b.getDenseI64ArrayAttr({axis}));
    r.perElement = b.create<tf::NegOp>(loc, picked);
  }
  if (!r.perElement)
    return BatchReduction{};
  auto type = cast<RankedTensorType>(r.perElement.getType());
  if (type.getRank() == 0 || type.getDimSize(0) != batch)
    return BatchReduction{};
  return r;
}

/// Rewrites `score`, a scalar computed from the batch, into the same scalar
/// over the samples `mask` (f32[batch], 1 or 0) selects, so that the padded
/// rows of a last partial batch do not count: each reduction over every
/// sample (mean, sum, mse, cross_entropy) becomes one over the selected
/// samples, and the scalar arithmetic above them is recomputed from those.
/// A mean over the selected samples is their sum over their count; a score
/// that reduces the batch any other way is an error.
class ScoreMasking {
public:
  ScoreMasking(OpBuilder &b, Value mask, llvm::function_ref<bool(Value)> fromBatch)
      : b_(b), mask_(mask), fromBatch_(fromBatch),
        batch_(cast<RankedTensorType>(mask.getType()).getDimSize(0)) {}

  FailureOr<Value> masked(Value score, StringRef name) {
    if (!fromBatch_(score))
      return score; // parameters only: the same for every batch
    if (auto it = done_.find(score); it != done_.end())
      return it->second;
    Operation *def = score.getDefiningOp();
    auto type = dyn_cast<RankedTensorType>(score.getType());
    if (def && type && type.getRank() == 0) {
      FailureOr<BatchReduction> reduction = batchReductionOf(b_, def, batch_, name);
      if (failed(reduction))
        return failure();
      if (reduction->perElement)
        return done_[score] = maskedReduction(*reduction, score.getLoc());
      // Scalar arithmetic: recomputed from its masked operands.
      bool scalars = def->getNumRegions() == 0 && llvm::all_of(def->getOperands(), [](Value v) {
        auto t = dyn_cast<RankedTensorType>(v.getType());
        return t && t.getRank() == 0;
      });
      if (scalars) {
        IRMapping mapping;
        for (Value operand : def->getOperands()) {
          FailureOr<Value> m = masked(operand, name);
          if (failed(m))
            return failure();
          mapping.map(operand, *m);
        }
        Operation *copy = b_.clone(*def, mapping);
        return done_[score] = copy->getResult(cast<OpResult>(score).getResultNumber());
      }
    }
    return (def ? def->emitError() : emitError(score.getLoc()))
           << "evaluate: '" << name << "' reduces the batch's samples in a way that cannot be "
           << "restricted to the real samples of a last partial batch; reduce with mean, sum, "
              "cross_entropy or mse over every axis of a tensor whose first axis is the batch, "
              "then combine those scalars as you like";
  }

private:
  Value maskedReduction(const BatchReduction &r, Location loc) {
    auto type = cast<RankedTensorType>(r.perElement.getType());
    Value weights = b_.create<tf::BroadcastInDimOp>(loc, type, mask_, b_.getDenseI64ArrayAttr({0}));
    SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    Value total = b_.create<tf::ReduceSumOp>(loc, b_.create<tf::MulOp>(loc, r.perElement, weights),
                                             b_.getDenseI64ArrayAttr(all));
    if (!r.mean)
      return total;
    Value samples = b_.create<tf::ReduceSumOp>(loc, mask_, b_.getDenseI64ArrayAttr({0}));
    auto scalar = RankedTensorType::get({}, b_.getF32Type());
    Value perSample = b_.create<tf::ConstantOp>(
        loc, DenseElementsAttr::get(scalar,
                                    b_.getF32FloatAttr(float(type.getNumElements() / batch_))));
    return b_.create<tf::DivOp>(loc, total, b_.create<tf::MulOp>(loc, samples, perSample));
  }

  OpBuilder &b_;
  Value mask_;
  llvm::function_ref<bool(Value)> fromBatch_;
  int64_t batch_;
  DenseMap<Value, Value> done_;
};

/// `evaluate`: the loss and metrics in eval mode over the real samples of a
/// batch, given `sample_mask` (its last argument).
LogicalResult buildEvaluate(func::FuncOp model) {
  func::FuncOp entry = buildEntry(
      model, abi::kEvaluate,
      [](DictionaryAttr info) {
        abi::ValueKind kind = kindOf(info);
        return kind == abi::ValueKind::Loss || kind == abi::ValueKind::Metric;
      },
      /*training=*/false);
  auto batch = model->getAttrOfType<IntegerAttr>(tf::TFDialect::kBatchAttr).getInt();
  Block &body = entry.getBody().front();
  Value mask = body.addArgument(RankedTensorType::get({batch}, Float32Type::get(entry.getContext())),
                                entry.getLoc());
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto abi = entry->getAttrOfType<DictionaryAttr>(kAbiAttr);
  auto results = cast<ArrayAttr>(abi.get("results"));
  // What depends on the batch: the model's inputs and what is computed from them.
  auto argInfo = cast<ArrayAttr>(abi.get("args"));
  DenseMap<Value, bool> fromBatch;
  for (unsigned i = 0, e = argInfo.size(); i < e; ++i)
    fromBatch[body.getArgument(i)] =
        kindOf(cast<DictionaryAttr>(argInfo[i])) == abi::ValueKind::Input;
  fromBatch[mask] = true;
  body.walk([&](Operation *op) {
    bool any = llvm::any_of(op->getOperands(), [&](Value v) { return fromBatch.lookup(v); });
    for (Value result : op->getResults())
      fromBatch[result] = any;
  });
  OpBuilder b(ret);
  auto isFromBatch = [&](Value v) { return fromBatch.lookup(v); };
  ScoreMasking masking(b, mask, isFromBatch); // (a function_ref: the lambda must outlive it)
  for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i) {
    StringRef name = cast<StringAttr>(cast<DictionaryAttr>(results[i]).get("name")).getValue();
    FailureOr<Value> masked = masking.masked(ret.getOperand(i), name);
    if (failed(masked))
      return failure();
    ret.setOperand(i, *masked);
  }
  entry.setFunctionType(b.getFunctionType(body.getArgumentTypes(), entry.getResultTypes()));
  Builder attrs(entry.getContext());
  SmallVector<Attribute> args(cast<ArrayAttr>(abi.get("args")).getValue());
  args.push_back(describeEntryValue(attrs, abi::ValueKind::Mask, abi::kSampleMaskName));
  entry->setAttr(kAbiAttr, attrs.getDictionaryAttr(
                               {attrs.getNamedAttr("args", attrs.getArrayAttr(args)),
                                attrs.getNamedAttr("results", results)}));
  IRRewriter rewriter(entry.getContext());
  (void)runRegionDCE(rewriter, entry.getBody());
  return success();
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
    // A generating model's prefill and decode functions (Builder::generate):
    // each becomes the entry of its name, returning the output it generates
    // from and the key and value caches, in eval mode.
    SmallVector<func::FuncOp> generation;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(tf::TFDialect::kGenerationAttr))
        generation.push_back(func);
    for (func::FuncOp func : generation) {
      auto name = func->getAttrOfType<StringAttr>(tf::TFDialect::kGenerationAttr);
      if (!name || (name.getValue() != StringRef(abi::kPrefill) &&
                    name.getValue() != StringRef(abi::kDecode))) {
        func.emitError("tf.generation must be \"prefill\" or \"decode\"");
        return signalPassFailure();
      }
      func::FuncOp entry = buildEntry(
          func, name.getValue(),
          [](DictionaryAttr info) {
            abi::ValueKind kind = kindOf(info);
            return kind == abi::ValueKind::Output || kind == abi::ValueKind::KvCache;
          },
          /*training=*/false);
      entry->removeAttr(tf::TFDialect::kGenerationAttr);
      func.erase();
    }
    buildEntry(
        model, abi::kPredict,
        [](DictionaryAttr info) {
          abi::ValueKind kind = kindOf(info);
          return kind == abi::ValueKind::Output || kind == abi::ValueKind::Attention;
        },
        /*training=*/false);
    bool hasLoss = false;
    for (unsigned i = 0, e = model.getNumResults(); i < e; ++i)
      hasLoss |= bool(model.getResultAttr(i, tf::TFDialect::kLossAttr));
    if (hasLoss && failed(buildEvaluate(model)))
      return signalPassFailure();
    model.erase();
  }
};

} // namespace
