//===- TrainStep.cpp - tf-autodiff: the whole training step in IR ---------===//
//
// From the model function (forward, loss, metrics) and the file's `train`
// block, builds `train_step`: the forward pass in training mode, the reverse
// sweep (Autodiff.h), clipping by global norm, the learning-rate schedule and
// the optimizer update, as one tf function the rest of the pipeline lowers
// and fuses like any other. Optimizer state and the step counter are
// arguments and results, so the runtime only swaps buffers between steps:
//
//   train_step(inputs, params, state, step, seed, lr, total_steps)
//     -> (loss, metrics, new params, new state, step + 1, lr used[, grad norm])
//
// The update follows PyTorch's optimizers exactly (torch.optim.Adam, AdamW,
// SGD), so a model trained by tfc and by PyTorch from the same parameters
// and data follows the same trajectory up to rounding.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "runtime/TrainBlock.h"
#include "llvm/ADT/StringExtras.h"
#include "compiler/transforms/Autodiff.h"
#include "compiler/transforms/EntryAbi.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

namespace tfc {
#define GEN_PASS_DEF_TFAUTODIFF
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

/// The train block's optimizer, schedule and clipping, with PyTorch's defaults.
struct TrainSettings {
  std::string optimizer = "adam"; // adam | adamw | sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0, momentum = 0;
  std::string schedule = "constant"; // constant | linear_warmup | cosine | cosine_warmup
  int64_t warmup = 0;
  std::optional<double> clipGradNorm;
  /// adamw: decay every parameter (decay_all: true), not only the matrices
  /// that are no embedding table (the GPT-2 and BERT recipes' default).
  bool decayAll = false;
};

std::optional<double> numberArg(DictionaryAttr args, StringRef key) {
  if (!args)
    return std::nullopt;
  Attribute a = args.get(key);
  if (auto f = dyn_cast_or_null<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    return double(i.getInt());
  return std::nullopt;
}

/// Reads `tf.train` (absent: the defaults). Unknown names and arguments are
/// errors: a typo must not silently train with a default.
FailureOr<TrainSettings> readSettings(ModuleOp module) {
  TrainSettings s;
  auto train = module->getAttrOfType<DictionaryAttr>(tf::TFDialect::kTrainAttr);
  if (!train)
    return s;
  auto fail = [&](const Twine &message) {
    return emitError(module.getLoc(), "train block: ") << message;
  };
  // The registry (runtime/TrainBlock.h) says what each name takes.
  auto checkArgs = [&](DictionaryAttr args, const train::CallKind &kind) -> LogicalResult {
    if (!args)
      return success();
    for (NamedAttribute a : args)
      if (!kind.takes(a.getName().getValue())) {
        std::vector<std::string> known = kind.settingNames();
        return fail("'" + std::string(kind.name) + "' has no argument '" + a.getName().getValue() + "' (" +
                    (known.empty() ? std::string("it takes none")
                                   : "expected " + llvm::join(known, ", ")) +
                    ")");
      }
    return success();
  };
  if (auto opt = train.getAs<DictionaryAttr>(train::key::kOptimizer)) {
    s.optimizer = cast<StringAttr>(opt.get(train::key::kName)).getValue().str();
    auto args = opt.getAs<DictionaryAttr>(train::key::kArgs);
    const train::CallKind *kind = train::find(train::kOptimizers, s.optimizer);
    if (!kind)
      return fail("unknown optimizer '" + s.optimizer + "' (expected " +
                  train::listNames(train::kOptimizers) + ")");
    if (failed(checkArgs(args, *kind)))
      return failure();
    if (s.optimizer == "adamw")
      s.weightDecay = 0.01;
    s.beta1 = numberArg(args, "beta1").value_or(s.beta1);
    s.beta2 = numberArg(args, "beta2").value_or(s.beta2);
    s.eps = numberArg(args, "eps").value_or(s.eps);
    s.weightDecay = numberArg(args, "weight_decay").value_or(s.weightDecay);
    s.momentum = numberArg(args, "momentum").value_or(s.momentum);
    s.decayAll = numberArg(args, "decay_all").value_or(0.0) != 0.0;
  }
  if (auto schedule = train.getAs<DictionaryAttr>(train::key::kSchedule)) {
    s.schedule = cast<StringAttr>(schedule.get(train::key::kName)).getValue().str();
    auto args = schedule.getAs<DictionaryAttr>(train::key::kArgs);
    const train::CallKind *kind = train::find(train::kSchedules, s.schedule);
    if (!kind)
      return fail("unknown schedule '" + s.schedule + "' (expected " +
                  train::listNames(train::kSchedules) + ")");
    if (failed(checkArgs(args, *kind)))
      return failure();
    if (kind->takes("warmup")) {
      std::optional<double> warmup = numberArg(args, "warmup");
      if (!warmup || *warmup < 1 || *warmup != std::floor(*warmup))
        return fail("'" + s.schedule + "' needs 'warmup:', a positive number of steps");
      s.warmup = int64_t(*warmup);
    }
  }
  if (auto clip = train.get(train::key::kClipGradNorm)) {
    std::optional<double> value;
    if (auto f = dyn_cast<FloatAttr>(clip))
      value = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(clip))
      value = double(i.getInt());
    if (!value || *value <= 0)
      return fail("'clip_grad_norm' must be a positive number");
    s.clipGradNorm = value;
  }
  return s;
}

/// Scalar arithmetic and broadcasts in tf ops.
struct Emitter {
  OpBuilder &b;
  Location loc;
  RankedTensorType scalarType;

  Emitter(OpBuilder &b, Location loc)
      : b(b), loc(loc), scalarType(RankedTensorType::get({}, b.getF32Type())) {}

  Value constant(double v, Type type = {}) {
    auto t = cast<RankedTensorType>(type ? type : scalarType);
    return b.create<tf::ConstantOp>(loc, DenseElementsAttr::get(t, b.getF32FloatAttr(float(v))));
  }
  Value add(Value x, Value y) { return b.create<tf::AddOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<tf::SubOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<tf::MulOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<tf::DivOp>(loc, x, y); }
  Value min(Value x, Value y) { return b.create<tf::MinOp>(loc, x, y); }
  Value exp(Value x) { return b.create<tf::ExpOp>(loc, x); }
  Value sqrt(Value x) { return b.create<tf::SqrtOp>(loc, x); }
  Value cos(Value x) { return b.create<tf::CosOp>(loc, x); }
  /// A scalar broadcast to `type`'s shape (no op when `type` is scalar).
  Value splat(Value scalar, Type type) {
    if (cast<RankedTensorType>(type).getRank() == 0)
      return scalar;
    return b.create<tf::BroadcastInDimOp>(loc, type, scalar, b.getDenseI64ArrayAttr({}));
  }
  /// x * s for a scalar s.
  Value scale(Value x, Value s) { return mul(x, splat(s, x.getType())); }
  Value sumAll(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getRank() == 0)
      return x;
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    return b.create<tf::ReduceSumOp>(loc, x, b.getDenseI64ArrayAttr(axes));
  }
};

/// The schedule's factor at `step` (steps taken so far) of `total`, as the
/// UvA tutorial's CosineWarmupScheduler defines it for cosine_warmup:
/// 0.5 (1 + cos(pi t / T)) times t / warmup while t <= warmup. linear_warmup
/// is min(1, t / warmup); cosine has no warmup.
Value scheduleFactor(Emitter &e, const TrainSettings &s, Value step, Value total) {
  Value factor = e.constant(1.0);
  if (s.schedule == "cosine" || s.schedule == "cosine_warmup")
    factor = e.mul(e.constant(0.5),
                   e.add(e.constant(1.0), e.cos(e.mul(e.constant(M_PI), e.div(step, total)))));
  if (s.schedule == "linear_warmup" || s.schedule == "cosine_warmup")
    factor = e.mul(factor, e.min(e.constant(1.0), e.div(step, e.constant(double(s.warmup)))));
  return factor;
}

struct ParamUpdate {
  Value param;
  SmallVector<Value> state;
};

/// One PyTorch optimizer step for parameter `p` with gradient `g` and
/// learning rate `lr` (scalar); `state` holds its buffers; `t1` is the step
/// number after this one (1 on the first step).
/// Whether the optimizer's weight decay applies to parameter `i` of `f`: as
/// its explicit tf.decay says (a parameter group of its own, for any
/// optimizer); else AdamW's, unless decay_all, not to a vector (a bias, a
/// norm's scale or shift) nor to a table the DSL marked tf.no_decay (an
/// embedding).
bool decays(const TrainSettings &s, func::FuncOp f, unsigned i) {
  if (auto decay = f.getArgAttrOfType<BoolAttr>(i, tf::TFDialect::kDecayAttr))
    return decay.getValue();
  if (s.optimizer != "adamw" || s.decayAll)
    return true;
  auto type = cast<RankedTensorType>(f.getArgument(i).getType());
  return type.getRank() >= 2 && !f.getArgAttr(i, tf::TFDialect::kNoDecayAttr);
}

ParamUpdate optimizerStep(Emitter &e, const TrainSettings &s, Value p, Value g,
                          ArrayRef<Value> state, Value lr, Value t1) {
  Type type = p.getType();
  if (s.optimizer == "sgd") {
    if (s.weightDecay != 0)
      g = e.add(g, e.mul(e.constant(s.weightDecay, type), p));
    if (s.momentum == 0)
      return {e.sub(p, e.scale(g, lr)), {}};
    // buf = momentum * buf + g (the first step's buf = g, since buf starts at 0).
    Value buf = e.add(e.mul(e.constant(s.momentum, type), state[0]), g);
    return {e.sub(p, e.scale(buf, lr)), {buf}};
  }
  if (s.optimizer == "adamw" && s.weightDecay != 0)
    p = e.mul(p, e.splat(e.sub(e.constant(1.0), e.mul(lr, e.constant(s.weightDecay))), type));
  else if (s.weightDecay != 0)
    g = e.add(g, e.mul(e.constant(s.weightDecay, type), p));
  Value m = e.add(e.mul(e.constant(s.beta1, type), state[0]),
                  e.mul(e.constant(1 - s.beta1, type), g));
  Value v = e.add(e.mul(e.constant(s.beta2, type), state[1]),
                  e.mul(e.constant(1 - s.beta2, type), e.mul(g, g)));
  // bias corrections 1 - beta^t, as exp(t log beta).
  Value bc1 = e.sub(e.constant(1.0), e.exp(e.mul(t1, e.constant(std::log(s.beta1)))));
  Value bc2 = e.sub(e.constant(1.0), e.exp(e.mul(t1, e.constant(std::log(s.beta2)))));
  Value stepSize = e.div(lr, bc1);
  Value denom = e.add(e.scale(e.sqrt(v), e.div(e.constant(1.0), e.sqrt(bc2))),
                      e.constant(s.eps, type));
  Value update = e.scale(e.div(m, denom), stepSize);
  return {e.sub(p, update), {m, v}};
}

/// The optimizer's per-parameter buffers, as PyTorch names them.
SmallVector<StringRef> stateNames(const TrainSettings &s) {
  if (s.optimizer == "sgd")
    return s.momentum != 0 ? SmallVector<StringRef>{"momentum_buffer"} : SmallVector<StringRef>{};
  return {"exp_avg", "exp_avg_sq"};
}

/// Clipping by the global norm of `grads`, the schedule and the optimizer
/// update of every parameter: appends the new parameters, the new state, the
/// step, the lr used and (with clipping) the norm to `results`, described in
/// `resultInfo`. Shared by train_step and apply_step, so both update alike.
void emitUpdate(Emitter &e, Builder &attrs, const TrainSettings &s, ArrayRef<Value> params,
                ArrayRef<std::string> paramNames, ArrayRef<bool> paramDecays,
                SmallVector<Value> grads,
                ArrayRef<SmallVector<Value>> state, Value stepCount, Value baseLr,
                Value totalSteps, SmallVector<Value> &results,
                SmallVector<Attribute> &resultInfo) {
  // clip_grad_norm_: g *= min(1, max_norm / (||g|| + 1e-6)) over all grads.
  Value gradNorm;
  if (s.clipGradNorm) {
    Value sumSq = e.constant(0.0);
    for (Value g : grads)
      sumSq = e.add(sumSq, e.sumAll(e.mul(g, g)));
    gradNorm = e.sqrt(sumSq);
    Value coef = e.min(e.constant(1.0), e.div(e.constant(*s.clipGradNorm),
                                              e.add(gradNorm, e.constant(1e-6))));
    for (Value &g : grads)
      g = e.scale(g, coef);
  }

  Value lr = e.mul(baseLr, scheduleFactor(e, s, stepCount, totalSteps));
  Value nextStep = e.add(stepCount, e.constant(1.0));
  SmallVector<Value> newState;
  SmallVector<Attribute> stateInfo;
  for (auto [i, p] : llvm::enumerate(params)) {
    TrainSettings settings = s;
    if (!paramDecays[i])
      settings.weightDecay = 0;
    ParamUpdate u = optimizerStep(e, settings, p, grads[i], state[i], lr, nextStep);
    results.push_back(u.param);
    resultInfo.push_back(describeEntryValue(attrs, abi::ValueKind::Param, paramNames[i]));
    for (auto [buffer, value] : llvm::zip(stateNames(s), u.state)) {
      newState.push_back(value);
      stateInfo.push_back(describeEntryValue(attrs, abi::ValueKind::State, paramNames[i] + "." + buffer.str()));
    }
  }
  results.append(newState);
  resultInfo.append(stateInfo);
  results.push_back(nextStep);
  resultInfo.push_back(describeEntryValue(attrs, abi::ValueKind::Step, "step"));
  results.push_back(lr);
  resultInfo.push_back(describeEntryValue(attrs, abi::ValueKind::Lr, "lr"));
  if (gradNorm) {
    results.push_back(gradNorm);
    resultInfo.push_back(describeEntryValue(attrs, abi::ValueKind::GradNorm, "grad_norm"));
  }
}

/// Ends `step` (a clone of the model) by returning `results` in place of the
/// model's `ret`, and makes it the entry `name`.
void returnResults(func::FuncOp step, func::ReturnOp ret, ArrayRef<Value> results,
                   ArrayRef<Attribute> argInfo, ArrayRef<Attribute> resultInfo,
                   std::string_view name) {
  OpBuilder b(ret);
  b.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  step.removeResAttrsAttr();
  step.removeArgAttrsAttr();
  step.setFunctionType(
      b.getFunctionType(step.getBody().front().getArgumentTypes(), resultTypes));
  finalizeEntry(step, llvm::StringRef(name.data(), name.size()), argInfo, resultInfo);
}

/// Finishes grad_step (`step`, a clone of the model): its results the loss,
/// the metrics and each parameter's gradient.
LogicalResult buildGradients(func::FuncOp model, func::FuncOp step, ArrayRef<BlockArgument> params,
                             ArrayRef<std::string> paramNames, Value loss,
                             ArrayRef<std::pair<Value, Attribute>> metrics,
                             ArrayRef<Attribute> argInfo) {
  Builder attrs(model.getContext());
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder b(ret);
  SmallVector<Value> wrt(params.begin(), params.end());
  FailureOr<SmallVector<Value>> grads = buildAdjoints(b, loss, wrt);
  if (failed(grads)) {
    step.erase();
    return failure();
  }
  SmallVector<Value> results = {loss};
  SmallVector<Attribute> resultInfo = {describeEntryValue(attrs, abi::ValueKind::Loss, "loss")};
  for (auto &[value, info] : metrics) {
    results.push_back(value);
    resultInfo.push_back(info);
  }
  for (auto [g, name] : llvm::zip(*grads, paramNames)) {
    results.push_back(g);
    resultInfo.push_back(describeEntryValue(attrs, abi::ValueKind::Grad, name));
  }
  returnResults(step, ret, results, argInfo, resultInfo, abi::kGradStep);
  return success();
}

/// train_step (`gradientsOnly` false), or grad_step: the forward and
/// backward passes alone, (inputs, params, seed) -> (loss, metrics,
/// gradients), for data-parallel training, where the runtime averages the
/// gradients across ranks before apply_step.
LogicalResult buildTrainStep(func::FuncOp model, const TrainSettings &s, bool gradientsOnly) {
  MLIRContext *ctx = model.getContext();
  Builder attrs(ctx);
  OpBuilder b(model);
  auto step = cast<func::FuncOp>(b.clone(*model));
  const std::string_view name = gradientsOnly ? abi::kGradStep : abi::kTrainStep;
  step.setSymName(name);
  step->removeAttr(tf::TFDialect::kBatchAttr);
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());

  // What the model computes and reads.
  Value loss;
  SmallVector<std::pair<Value, Attribute>> metrics;
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i) {
    DictionaryAttr info = describeModelResult(step, i);
    abi::ValueKind kind = kindOf(info);
    if (kind == abi::ValueKind::Loss)
      loss = ret.getOperand(i);
    else if (kind == abi::ValueKind::Metric)
      metrics.push_back({ret.getOperand(i), info});
  }
  if (!loss)
    return model.emitError("the model declares no 'loss', so it cannot be trained");
  // The train block's `best` names the loss or a metric.
  if (auto train = model->getParentOfType<ModuleOp>()->getAttrOfType<DictionaryAttr>(
          tf::TFDialect::kTrainAttr))
    if (auto best = train.getAs<StringAttr>(train::key::kBest)) {
      StringRef name = train::parseBest(best.getValue()).name;
      std::vector<std::string> scores = {"loss"};
      for (auto &[value, info] : metrics)
        scores.push_back(cast<StringAttr>(cast<DictionaryAttr>(info).get("name")).str());
      if (!llvm::is_contained(scores, name.str()))
        return model.emitError("train block: best '")
               << name << "' is neither the loss nor a metric (known: "
               << llvm::join(scores, ", ") << ")";
    }
  SmallVector<Attribute> argInfo;
  SmallVector<BlockArgument> params;
  SmallVector<std::string> paramNames;
  SmallVector<bool> paramDecays;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    argInfo.push_back(describeModelArgument(step, i));
    if (auto name = step.getArgAttrOfType<StringAttr>(i, tf::TFDialect::kParamAttr)) {
      params.push_back(step.getArgument(i));
      paramNames.push_back(name.str());
      paramDecays.push_back(decays(s, step, i));
    }
  }

  // Optimizer state, the step counter and the hyperparameters the binary's
  // flags may override (so that --lr or --epochs need no recompile).
  Location loc = model.getLoc();
  auto scalarF32 = RankedTensorType::get({}, b.getF32Type());
  auto addArg = [&](Type type, abi::ValueKind kind, StringRef name) {
    BlockArgument arg = body.addArgument(type, loc);
    argInfo.push_back(describeEntryValue(attrs, kind, name));
    return arg;
  };
  SmallVector<SmallVector<Value>> state(params.size());
  if (gradientsOnly)
    return buildGradients(model, step, params, paramNames, loss, metrics, argInfo);
  for (auto [i, p] : llvm::enumerate(params))
    for (StringRef buffer : stateNames(s))
      state[i].push_back(addArg(p.getType(), abi::ValueKind::State, paramNames[i] + "." + buffer.str()));
  Value stepCount = addArg(scalarF32, abi::ValueKind::Step, "step");
  Value baseLr = addArg(scalarF32, abi::ValueKind::Hyper, abi::kLrName);
  Value totalSteps = addArg(scalarF32, abi::ValueKind::Hyper, abi::kTotalStepsName);

  b.setInsertionPoint(ret);
  SmallVector<Value> wrt(params.begin(), params.end());
  FailureOr<SmallVector<Value>> grads = buildAdjoints(b, loss, wrt);
  if (failed(grads)) {
    step.erase();
    return failure();
  }
  Emitter e(b, loc);
  SmallVector<Value> results = {loss};
  SmallVector<Attribute> resultInfo = {describeEntryValue(attrs, abi::ValueKind::Loss, "loss")};
  for (auto &[value, info] : metrics) {
    results.push_back(value);
    resultInfo.push_back(info);
  }

  emitUpdate(e, attrs, s, SmallVector<Value>(params.begin(), params.end()), paramNames,
             paramDecays, *grads, state, stepCount, baseLr, totalSteps, results, resultInfo);

  returnResults(step, ret, results, argInfo, resultInfo, abi::kTrainStep);
  return success();
}

/// apply_step: (params, gradients, state, step, lr, total_steps) -> what
/// train_step returns after its loss and metrics: the update alone, on
/// gradients already averaged across ranks.
void buildApplyStep(func::FuncOp model, const TrainSettings &s) {
  MLIRContext *ctx = model.getContext();
  Builder attrs(ctx);
  OpBuilder b(model);
  Location loc = model.getLoc();
  SmallVector<Type> paramTypes;
  SmallVector<std::string> paramNames;
  SmallVector<bool> paramDecays;
  for (unsigned i = 0, e = model.getNumArguments(); i < e; ++i)
    if (auto name = model.getArgAttrOfType<StringAttr>(i, tf::TFDialect::kParamAttr)) {
      paramTypes.push_back(model.getArgument(i).getType());
      paramNames.push_back(name.str());
      paramDecays.push_back(decays(s, model, i));
    }
  auto step = b.create<func::FuncOp>(loc, abi::kApplyStep, b.getFunctionType({}, {}));
  Block *body = step.addEntryBlock();
  SmallVector<Attribute> argInfo;
  auto addArg = [&](Type type, abi::ValueKind kind, StringRef name) {
    BlockArgument arg = body->addArgument(type, loc);
    argInfo.push_back(describeEntryValue(attrs, kind, name));
    return arg;
  };
  SmallVector<Value> params, grads;
  for (auto [type, name] : llvm::zip(paramTypes, paramNames))
    params.push_back(addArg(type, abi::ValueKind::Param, name));
  for (auto [type, name] : llvm::zip(paramTypes, paramNames))
    grads.push_back(addArg(type, abi::ValueKind::Grad, name));
  SmallVector<SmallVector<Value>> state(params.size());
  for (auto [i, type] : llvm::enumerate(paramTypes))
    for (StringRef buffer : stateNames(s))
      state[i].push_back(addArg(type, abi::ValueKind::State, paramNames[i] + "." + buffer.str()));
  auto scalarF32 = RankedTensorType::get({}, b.getF32Type());
  Value stepCount = addArg(scalarF32, abi::ValueKind::Step, "step");
  Value baseLr = addArg(scalarF32, abi::ValueKind::Hyper, abi::kLrName);
  Value totalSteps = addArg(scalarF32, abi::ValueKind::Hyper, abi::kTotalStepsName);
  b.setInsertionPointToEnd(body);
  Emitter e(b, loc);
  SmallVector<Value> results;
  SmallVector<Attribute> resultInfo;
  emitUpdate(e, attrs, s, params, paramNames, paramDecays, grads, state, stepCount, baseLr,
             totalSteps, results, resultInfo);
  b.create<func::ReturnOp>(loc, results);
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  step.setFunctionType(b.getFunctionType(body->getArgumentTypes(), resultTypes));
  finalizeEntry(step, abi::kApplyStep, argInfo, resultInfo);
}

struct TfAutodiffPass : tfc::impl::TfAutodiffBase<TfAutodiffPass> {
  using TfAutodiffBase::TfAutodiffBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp model;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isDeclaration() && func->hasAttr(tf::TFDialect::kBatchAttr) &&
          !func->hasAttr(kEntryAttr))
        model = func;
    if (!model)
      return;
    bool hasLoss = false;
    for (unsigned i = 0, e = model.getNumResults(); i < e; ++i)
      hasLoss |= bool(model.getResultAttr(i, tf::TFDialect::kLossAttr));
    if (!hasLoss)
      return; // an inference-only model
    FailureOr<TrainSettings> settings = readSettings(module);
    if (failed(settings) || failed(buildTrainStep(model, *settings, /*gradientsOnly=*/false)))
      return signalPassFailure();
    // The same step in two halves, for data-parallel training (the runtime
    // averages the gradients across ranks between them).
    if (!splitStep)
      return;
    if (failed(buildTrainStep(model, *settings, /*gradientsOnly=*/true)))
      return signalPassFailure();
    buildApplyStep(model, *settings);
  }
};

} // namespace
