//===- Builder.cpp - the DSL's builder, tensors and functions -------------===//

#include "compiler/dsl/DSL.h"
#include "compiler/dsl/ShapeText.h"
#include "runtime/TrainBlock.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <numeric>

using namespace mlir;

namespace tfc {

/// A number as a message or the .tf language shows it: 0.02, 1e-05.
static std::string numberStr(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

static const char *dtypeName(DType t) {
  switch (t) {
  case DType::f32:
    return "f32";
  case DType::i32:
    return "i32";
  case DType::boolean:
    return "bool";
  }
  return "?";
}

static Type elementType(MLIRContext &ctx, DType t) {
  switch (t) {
  case DType::f32:
    return Float32Type::get(&ctx);
  case DType::i32:
    return IntegerType::get(&ctx, 32);
  case DType::boolean:
    return IntegerType::get(&ctx, 1);
  }
  return {};
}

/// The element count of `shape` if every dimension is positive and the count
/// stays within kMaxElements (2^31: 8 GiB of f32), else nullopt. Shapes come
/// from user input, so the product is computed without overflow.
static constexpr int64_t kMaxElements = int64_t(1) << 31;
static std::optional<int64_t> checkedCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d <= 0 || d > kMaxElements / count)
      return std::nullopt;
    count *= d;
  }
  return count;
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

RankedTensorType Tensor::type() const {
  return cast<RankedTensorType>(value_.getType());
}
ArrayRef<int64_t> Tensor::shape() const { return type().getShape(); }
int64_t Tensor::rank() const { return type().getRank(); }
int64_t Tensor::dim(int64_t i) const {
  return shape()[i < 0 ? i + rank() : i];
}
DType Tensor::dtype() const {
  Type e = type().getElementType();
  if (e.isF32())
    return DType::f32;
  return e.isInteger(1) ? DType::boolean : DType::i32;
}

//===----------------------------------------------------------------------===//
// Builder
//===----------------------------------------------------------------------===//

Builder::Builder(MLIRContext &context, StringRef modelName,
                 ModelOptions options, Frontend frontend)
    : context_(context), options_(options), frontend_(frontend),
      modelLoc_(UnknownLoc::get(&context)), ops_(&context),
      loc_(UnknownLoc::get(&context)) {
  context.loadDialect<tf::TFDialect, func::FuncDialect>();
  // A C++ model's diagnostics name it (the .tf parser locates everything).
  if (frontend_ == Frontend::cpp)
    loc_ = modelLoc_ = NameLoc::get(StringAttr::get(&context, modelName));
  module_ = ModuleOp::create(loc_);
  ops_.setInsertionPointToEnd(module_->getBody());
  func_ = ops_.create<func::FuncOp>(loc_, modelName,
                                    ops_.getFunctionType({}, {}));
  ops_.setInsertionPointToEnd(func_.addEntryBlock());
}

Builder::~Builder() = default;

Builder::CallSite::CallSite(Builder *builder, SourceLoc at) {
  if (!builder || builder->frontend_ != Frontend::cpp)
    return;
  builder_ = builder;
  if (builder_->callDepth_++ == 0 && at.file)
    builder_->loc_ = NameLoc::get(
        cast<NameLoc>(builder_->modelLoc_).getName(),
        FileLineColLoc::get(&builder_->context_, at.file, at.line, 0));
}

Builder::CallSite::CallSite(std::initializer_list<Tensor> tensors, SourceLoc at)
    : CallSite(
          [&]() -> Builder * {
            for (const Tensor &t : tensors)
              if (t.valid())
                return &t.builder();
            return nullptr;
          }(),
          at) {}

Builder::CallSite::~CallSite() {
  if (builder_ && --builder_->callDepth_ == 0)
    builder_->loc_ = builder_->modelLoc_;
}

Builder::DecayScope::DecayScope(Builder &builder, std::optional<bool> decay)
    : builder_(builder), saved_(builder.decay_) {
  if (decay)
    builder_.decay_ = decay;
}
Builder::DecayScope::~DecayScope() { builder_.decay_ = saved_; }

Builder::Scope::Scope(Builder &builder, StringRef name) : builder_(builder) {
  builder_.scopes_.push_back(name.str());
}
Builder::Scope::~Scope() { builder_.scopes_.pop_back(); }

std::string Builder::qualified(StringRef name) const {
  std::string s;
  for (const std::string &scope : scopes_)
    s += scope + ".";
  s += name.str();
  return s;
}

std::string Builder::layerName(StringRef kind, StringRef explicitName) {
  if (!explicitName.empty())
    return explicitName.str();
  int n = layerCounts_[qualified(kind)]++;
  return n == 0 ? kind.str() : (kind + "_" + Twine(n)).str();
}

Tensor Builder::error(const Twine &message) {
  // Only the first error is reported: later ones are usually its echoes.
  if (failed_)
    return {};
  InFlightDiagnostic diag = emitError(loc_) << message;
  if (options_.generation != GenerationPass::none)
    diag.attachNote() << "in the "
                      << (options_.generation == GenerationPass::prefill ? "prefill" : "decode step")
                      << " that `generate` builds from the model's code (batch 1"
                      << (options_.generation == GenerationPass::decode
                              ? ", one position: the sequence axis has length 1)"
                              : ")");
  failed_ = true;
  return {};
}

bool Builder::allValid(ArrayRef<Tensor> tensors) {
  return llvm::all_of(tensors, [](const Tensor &t) { return t.valid(); });
}

std::vector<Tensor> Builder::createImpl(StringRef opName, InferFn infer,
                                        ArrayRef<Tensor> operands,
                                        ArrayRef<NamedAttribute> attrs) {
  if (!allValid(operands)) {
    if (!failed_)
      error("'" + opName + "' got an undefined tensor");
    return {};
  }
  SmallVector<Value> values;
  for (const Tensor &t : operands)
    values.push_back(t.value());
  SmallVector<Type> types;
  if (mlir::failed(infer(&context_, loc_, values,
                   DictionaryAttr::get(&context_, attrs),
                   OpaqueProperties(nullptr), {}, types))) {
    failed_ = true;
    return {};
  }
  OperationState state(loc_, opName);
  state.addOperands(values);
  state.addAttributes(attrs);
  state.addTypes(types);
  Operation *op = ops_.create(state);
  std::vector<Tensor> results;
  for (Value v : op->getResults())
    results.emplace_back(this, v);
  return results;
}

Tensor Builder::createTyped(StringRef opName, Type resultType,
                            ArrayRef<Tensor> operands,
                            ArrayRef<NamedAttribute> attrs) {
  if (!allValid(operands)) {
    if (!failed_)
      error("'" + opName + "' got an undefined tensor");
    return {};
  }
  OperationState state(loc_, opName);
  for (const Tensor &t : operands)
    state.addOperands(t.value());
  state.addAttributes(attrs);
  state.addTypes(resultType);
  Operation *op = ops_.create(state);
  if (mlir::failed(mlir::verify(op))) {
    op->erase();
    failed_ = true;
    return {};
  }
  return Tensor(this, op->getResult(0));
}

Tensor Builder::constant(DenseElementsAttr value) {
  auto r = create<tf::ConstantOp>({}, {ops_.getNamedAttr("value", value)});
  return r.empty() ? Tensor() : r[0];
}

Tensor Builder::fill(double value, ArrayRef<int64_t> shape, SourceLoc at) {
  CallSite site(this, at);
  auto scalarType = RankedTensorType::get({}, ops_.getF32Type());
  Tensor scalar = constant(
      DenseElementsAttr::get(scalarType, static_cast<float>(value)));
  return broadcast_to(scalar, shape);
}

Tensor Builder::addArgument(Type type, ArrayRef<NamedAttribute> attrs) {
  Block &entry = func_.getBody().front();
  BlockArgument arg = entry.addArgument(type, loc_);
  // Attributes are attached in finish(): the function's attribute arrays
  // must match its final signature.
  argAttrs_.push_back(DictionaryAttr::get(&context_, attrs));
  return Tensor(this, arg);
}

Tensor Builder::input(StringRef name, DType dtype, ArrayRef<int64_t> shape,
                      SourceLoc at) {
  CallSite site(this, at);
  if (!checkedCount(shape))
    return error("input '" + name + "' has shape " + shapeStr(shape) +
                 ": dimensions must be positive and the size at most 2^31 "
                 "elements");
  if (!inputNames_.insert(name).second)
    return error("input '" + name + "' is declared twice");
  SmallVector<int64_t> dims(shape);
  // The decode step reads one position of every sequence.
  if (options_.generation == GenerationPass::decode && dims.size() >= 2 &&
      dims[1] == options_.generationSpec.length)
    dims[1] = 1;
  auto type = RankedTensorType::get(dims, elementType(context_, dtype));
  return addArgument(
      type, {ops_.getNamedAttr(tf::TFDialect::kInputAttr, ops_.getStringAttr(name))});
}

Tensor Builder::param(StringRef name, ArrayRef<int64_t> shape,
                      tf::InitKind init, double scale, SourceLoc at) {
  CallSite site(this, at);
  std::string full = qualified(name);
  if (!paramNames_.insert(full).second)
    return error("parameter '" + full +
                 "' is defined twice (give one of the layers a different " +
                 spelling(".name", "name:").str() + ")");
  if (!checkedCount(shape))
    return error("parameter '" + full + "' has shape " + shapeStr(shape) +
                 ": dimensions must be positive and the size at most 2^31 "
                 "elements");
  auto type = RankedTensorType::get(shape, ops_.getF32Type());
  auto initAttr = tf::InitAttr::get(&context_, init, llvm::APFloat(scale));
  SmallVector<NamedAttribute> attrs = {
      ops_.getNamedAttr(tf::TFDialect::kParamAttr, ops_.getStringAttr(full)),
      ops_.getNamedAttr(tf::TFDialect::kInitAttr, initAttr)};
  if (decay_)
    attrs.push_back(ops_.getNamedAttr(tf::TFDialect::kDecayAttr, ops_.getBoolAttr(*decay_)));
  return addArgument(type, attrs);
}

std::string Init::str() const {
  switch (kind) {
  case Kind::zeros:
    return "zeros";
  case Kind::ones:
    return "ones";
  case Kind::normal:
    return "normal(" + numberStr(scale) + ")";
  case Kind::uniform:
    return "uniform(" + numberStr(scale) + ")";
  case Kind::xavier:
    return "xavier";
  case Kind::kaiming:
    return "kaiming";
  }
  return "?";
}

Tensor Builder::param(StringRef name, ArrayRef<int64_t> shape, Init init, SourceLoc at) {
  CallSite site(this, at);
  if (!checkedCount(shape)) // the other param() reports it
    return param(name, shape, tf::InitKind::zeros);
  switch (init.kind) {
  case Init::Kind::zeros:
    return param(name, shape, tf::InitKind::zeros);
  case Init::Kind::ones:
    return param(name, shape, tf::InitKind::ones);
  case Init::Kind::normal:
  case Init::Kind::uniform:
    if (!(init.scale > 0 && std::isfinite(init.scale)))
      return error("parameter '" + qualified(name) + "': " +
                   (init.kind == Init::Kind::normal ? "normal's std" : "uniform's bound") +
                   " must be positive and finite, got " + numberStr(init.scale));
    return param(name, shape,
                 init.kind == Init::Kind::normal ? tf::InitKind::normal : tf::InitKind::uniform,
                 init.scale);
  case Init::Kind::xavier:
  case Init::Kind::kaiming:
    break;
  }
  // torch.nn.init._calculate_fan_in_and_fan_out: [out, in, k...] has fan_in
  // in * prod(k) and fan_out out * prod(k).
  if (shape.size() < 2)
    return error("parameter '" + qualified(name) + "' has shape " + shapeStr(shape) + ": " +
                 init.str() +
                 " needs a fan-in and a fan-out, so a rank of at least 2 (as in "
                 "PyTorch); use normal(std) or uniform(bound)");
  int64_t receptive = 1;
  for (int64_t d : shape.drop_front(2))
    receptive *= d;
  int64_t fanIn = shape[1] * receptive, fanOut = shape[0] * receptive;
  double bound = init.kind == Init::Kind::xavier
                     ? std::sqrt(6.0 / static_cast<double>(fanIn + fanOut))
                     : 1.0 / std::sqrt(static_cast<double>(fanIn));
  return param(name, shape, tf::InitKind::uniform, bound);
}

void Builder::noWeightDecay(Tensor param) {
  auto arg = dyn_cast_or_null<BlockArgument>(param.value());
  if (!arg || arg.getOwner() != &func_.getBody().front() ||
      arg.getArgNumber() >= argAttrs_.size())
    return;
  NamedAttrList attrs(cast<DictionaryAttr>(argAttrs_[arg.getArgNumber()]));
  if (!attrs.get(tf::TFDialect::kParamAttr) || attrs.get(tf::TFDialect::kDecayAttr))
    return;
  attrs.set(tf::TFDialect::kNoDecayAttr, ops_.getUnitAttr());
  argAttrs_[arg.getArgNumber()] = attrs.getDictionary(&context_);
}

Tensor Builder::seed() {
  if (!seed_.valid())
    seed_ = addArgument(RankedTensorType::get({}, ops_.getI32Type()),
                        {ops_.getNamedAttr(tf::TFDialect::kSeedAttr,
                                           ops_.getUnitAttr())});
  return seed_;
}

Tensor Builder::sampleOffset() {
  if (!sampleOffset_.valid())
    sampleOffset_ = addArgument(RankedTensorType::get({}, ops_.getI32Type()),
                                {ops_.getNamedAttr(tf::TFDialect::kSampleOffsetAttr,
                                                   ops_.getUnitAttr())});
  return sampleOffset_;
}

void Builder::addResult(Tensor value, NamedAttribute attr) {
  if (!value.valid()) {
    if (!failed_)
      error("result '" + attr.getName().getValue() + "' is undefined");
    return;
  }
  results_.push_back(value.value());
  resultAttrs_.push_back(DictionaryAttr::get(&context_, {attr}));
}

void Builder::output(StringRef name, Tensor value, SourceLoc at) {
  CallSite site(this, at);
  if (options_.generation != GenerationPass::none)
    return; // generate() adds the one output they return
  if (!resultNames_.insert(name).second) {
    error("'" + name + "' is already an output, metric or loss");
    return;
  }
  addResult(value, ops_.getNamedAttr(tf::TFDialect::kOutputAttr,
                                     ops_.getStringAttr(name)));
}

void Builder::loss(Tensor value, SourceLoc at) {
  CallSite site(this, at);
  if (options_.generation != GenerationPass::none)
    return;
  if (hasLoss_) {
    error("a model has one loss");
    return;
  }
  hasLoss_ = true;
  if (value.valid() && (value.rank() != 0 || value.dtype() != DType::f32)) {
    error("the loss must be an f32 scalar, got " +
          Twine(dtypeName(value.dtype())) + " " + shapeStr(value.shape()));
    return;
  }
  resultNames_.insert("loss");
  addResult(value, ops_.getNamedAttr(tf::TFDialect::kLossAttr, ops_.getUnitAttr()));
}

void Builder::metric(StringRef name, Tensor value, SourceLoc at) {
  CallSite site(this, at);
  if (options_.generation != GenerationPass::none)
    return;
  if (!resultNames_.insert(name).second) {
    error("'" + name + "' is already an output, metric or loss");
    return;
  }
  if (value.valid() && (value.rank() != 0 || value.dtype() != DType::f32)) {
    error("metric '" + name + "' must be an f32 scalar, got " +
          Twine(dtypeName(value.dtype())) + " " + shapeStr(value.shape()) +
          " (reduce it with mean or sum)");
    return;
  }
  metricNames_.push_back(name.str());
  addResult(value, ops_.getNamedAttr(tf::TFDialect::kMetricAttr,
                                     ops_.getStringAttr(name)));
}

void Builder::attentionMap(StringRef name, Tensor weights, SourceLoc at) {
  CallSite site(this, at);
  if (options_.generation != GenerationPass::none)
    return;
  addResult(weights, ops_.getNamedAttr(tf::TFDialect::kAttentionAttr,
                                       ops_.getStringAttr(name)));
}

namespace {
/// {model, batch, data = {name, args}, epochs, optimizer = {name, args},
/// schedule = {name, args}, clip_grad_norm, seed}, unset keys left out.
DictionaryAttr trainConfigAttr(MLIRContext &context, const TrainConfig &config,
                               int64_t batch) {
  OpBuilder b(&context);
  auto value = [&](const TrainValue &v) -> Attribute {
    if (auto *i = std::get_if<int64_t>(&v))
      return b.getI64IntegerAttr(*i);
    if (auto *d = std::get_if<double>(&v))
      return b.getF64FloatAttr(*d);
    if (auto *flag = std::get_if<bool>(&v))
      return b.getBoolAttr(*flag);
    return b.getStringAttr(std::get<std::string>(v));
  };
  auto call = [&](const TrainCall &c) -> Attribute {
    SmallVector<NamedAttribute> args;
    for (const auto &[k, v] : c.args)
      args.push_back(b.getNamedAttr(k, value(v)));
    return b.getDictionaryAttr({b.getNamedAttr(train::key::kName, b.getStringAttr(c.name)),
                                b.getNamedAttr(train::key::kArgs, b.getDictionaryAttr(args))});
  };
  SmallVector<NamedAttribute> attrs;
  attrs.push_back(b.getNamedAttr(train::key::kModel, b.getStringAttr(config.model)));
  attrs.push_back(b.getNamedAttr(train::key::kBatch, b.getI64IntegerAttr(batch)));
  if (config.data)
    attrs.push_back(b.getNamedAttr(train::key::kData, call(*config.data)));
  if (config.epochs)
    attrs.push_back(b.getNamedAttr(train::key::kEpochs, b.getI64IntegerAttr(*config.epochs)));
  if (config.optimizer)
    attrs.push_back(b.getNamedAttr(train::key::kOptimizer, call(*config.optimizer)));
  if (config.schedule)
    attrs.push_back(b.getNamedAttr(train::key::kSchedule, call(*config.schedule)));
  if (config.clipGradNorm)
    attrs.push_back(
        b.getNamedAttr(train::key::kClipGradNorm, b.getF64FloatAttr(*config.clipGradNorm)));
  if (config.seed)
    attrs.push_back(b.getNamedAttr(train::key::kSeed, b.getI64IntegerAttr(*config.seed)));
  if (config.best)
    attrs.push_back(b.getNamedAttr(train::key::kBest, b.getStringAttr(*config.best)));
  return b.getDictionaryAttr(attrs);
}
} // namespace

std::vector<std::string> Builder::scoreNames() const {
  std::vector<std::string> names;
  if (hasLoss_)
    names.push_back("loss");
  names.insert(names.end(), metricNames_.begin(), metricNames_.end());
  return names;
}

void Builder::train(TrainConfig config) {
  if (config.model.empty())
    config.model = func_.getSymName().str();
  train_ = std::move(config);
}

OwningOpRef<ModuleOp> Builder::finish() {
  if (finished_ || failed_)
    return nullptr;
  finished_ = true;
  if (options_.generation != GenerationPass::none && !generation_) {
    error("generate: the model's code did not declare `generate` again when built for it");
    return nullptr;
  }
  OpBuilder::InsertionGuard guard(ops_);
  ops_.setInsertionPointToEnd(&func_.getBody().front());
  ops_.create<func::ReturnOp>(loc_, results_);
  SmallVector<Type> resultTypes;
  for (Value v : results_)
    resultTypes.push_back(v.getType());
  func_.setFunctionType(ops_.getFunctionType(
      func_.getBody().front().getArgumentTypes(), resultTypes));
  func_.setAllArgAttrs(argAttrs_);
  func_.setAllResultAttrs(resultAttrs_);
  func_->setAttr(tf::TFDialect::kBatchAttr, ops_.getI64IntegerAttr(options_.batch));
  if (train_ && train_->best) { // the score best.safetensors is chosen by
    StringRef name = train::parseBest(*train_->best).name;
    std::vector<std::string> scores = scoreNames();
    if (!llvm::is_contained(scores, name.str())) {
      // The closest score, when one is near (a typo).
      std::string closest;
      unsigned best = std::max<unsigned>(1, unsigned(name.size()) / 3) + 1;
      for (const std::string &score : scores)
        if (unsigned d = name.edit_distance(score, true, best); d < best)
          best = d, closest = score;
      error("train block: best '" + name + "' is neither the loss nor a metric" +
            (closest.empty() ? "" : "; did you mean '" + closest + "'?") + " (known: " +
            llvm::join(scores, ", ") + ")");
      return nullptr;
    }
  }
  if (train_)
    (*module_)->setAttr(tf::TFDialect::kTrainAttr, trainConfigAttr(context_, *train_, options_.batch));
  if (mlir::failed(mlir::verify(*module_)))
    return nullptr;
  return std::move(module_);
}

//===----------------------------------------------------------------------===//
// Broadcasting and elementwise functions
//===----------------------------------------------------------------------===//

namespace {
/// The builder of the first valid tensor, or null (an earlier error).
Builder *builderOf(std::initializer_list<const Tensor *> tensors) {
  for (const Tensor *t : tensors)
    if (!t->valid())
      return nullptr;
  return &(*tensors.begin())->builder();
}

NamedAttribute attr(Builder &b, StringRef name, Attribute value) {
  return b.ops().getNamedAttr(name, value);
}
NamedAttribute i64Attr(Builder &b, StringRef name, int64_t value) {
  return attr(b, name, b.ops().getI64IntegerAttr(value));
}
NamedAttribute arrayAttr(Builder &b, StringRef name, ArrayRef<int64_t> value) {
  return attr(b, name, b.ops().getDenseI64ArrayAttr(value));
}

Tensor first(std::vector<Tensor> results) {
  return results.empty() ? Tensor() : results.front();
}

/// Normalises a possibly negative axis against `rank`; reports and returns
/// nullopt when out of range.
std::optional<int64_t> normalizeAxis(Builder &b, int64_t axis, int64_t rank,
                                     StringRef what) {
  int64_t n = axis < 0 ? axis + rank : axis;
  if (n < 0 || n >= rank) {
    b.error(what + ": axis " + Twine(axis) + " is out of range for a tensor of rank " +
            Twine(rank));
    return std::nullopt;
  }
  return n;
}

bool requireDType(Tensor t, DType dtype, StringRef what) {
  if (t.dtype() == dtype)
    return true;
  std::string hint = dtype == DType::f32 && t.dtype() != DType::f32
                         ? " (integer and bool tensors enter arithmetic only "
                           "through " +
                               t.builder().spelling("to_float()", "float()").str() +
                               ", one_hot() or embedding())"
                         : "";
  t.builder().error(what + " needs " + dtypeName(dtype) + " operands, got " +
                    dtypeName(t.dtype()) + " " + shapeStr(t.shape()) + hint);
  return false;
}

/// numpy's broadcast of two shapes, or a diagnostic naming both.
std::optional<SmallVector<int64_t>> broadcastShape(Builder &b, ArrayRef<int64_t> x,
                                                   ArrayRef<int64_t> y,
                                                   StringRef what) {
  size_t rank = std::max(x.size(), y.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t dx = i < rank - x.size() ? 1 : x[i - (rank - x.size())];
    int64_t dy = i < rank - y.size() ? 1 : y[i - (rank - y.size())];
    if (dx != dy && dx != 1 && dy != 1) {
      b.error(what + ": shapes " + shapeStr(x) + " and " + shapeStr(y) +
              " cannot be broadcast together");
      return std::nullopt;
    }
    out[i] = dx == 1 ? dy : dx;
  }
  return out;
}

/// `what` as C++ and as .tf spell it: a diagnostic says what the user wrote.
template <typename OpT>
Tensor binaryFloat(Tensor a, Tensor b, StringRef cppWhat, StringRef tfWhat) {
  Builder *builder = builderOf({&a, &b});
  if (!builder)
    return {};
  StringRef what = builder->spelling(cppWhat, tfWhat);
  if (!requireDType(a, DType::f32, what) ||
      !requireDType(b, DType::f32, what))
    return {};
  auto shape = broadcastShape(*builder, a.shape(), b.shape(), what);
  if (!shape)
    return {};
  return first(builder->create<OpT>(
      {broadcast_to(a, *shape), broadcast_to(b, *shape)}));
}

Tensor compare(Tensor a, Tensor b, tf::ComparePredicate pred, StringRef cppWhat,
               StringRef tfWhat) {
  Builder *builder = builderOf({&a, &b});
  if (!builder)
    return {};
  StringRef what = builder->spelling(cppWhat, tfWhat);
  if (a.dtype() != b.dtype())
    return builder->error(what + " compares " + dtypeName(a.dtype()) + " " +
                          shapeStr(a.shape()) + " with " + dtypeName(b.dtype()) +
                          " " + shapeStr(b.shape()) + " (no implicit conversions: use " +
                          builder->spelling("to_float()", "float()") + ")");
  auto shape = broadcastShape(*builder, a.shape(), b.shape(), what);
  if (!shape)
    return {};
  return first(builder->create<tf::CompareOp>(
      {broadcast_to(a, *shape), broadcast_to(b, *shape)},
      {attr(*builder, "predicate",
            tf::ComparePredicateAttr::get(&builder->context(), pred))}));
}

template <typename OpT>
Tensor unaryFloat(Tensor x, StringRef cppWhat, StringRef tfWhat) {
  if (!x.valid() || !requireDType(x, DType::f32, x.builder().spelling(cppWhat, tfWhat)))
    return {};
  return first(x.builder().create<OpT>({x}));
}

template <typename OpT>
Tensor logical(Tensor a, Tensor b, StringRef what) {
  Builder *builder = builderOf({&a, &b});
  if (!builder || !requireDType(a, DType::boolean, what) ||
      !requireDType(b, DType::boolean, what))
    return {};
  auto shape = broadcastShape(*builder, a.shape(), b.shape(), what);
  if (!shape)
    return {};
  return first(
      builder->create<OpT>({broadcast_to(a, *shape), broadcast_to(b, *shape)}));
}
} // namespace

Tensor broadcast_to(Tensor x, ArrayRef<int64_t> shape, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid())
    return {};
  if (x.shape() == shape)
    return x;
  Builder &b = x.builder();
  if (x.rank() > static_cast<int64_t>(shape.size()))
    return b.error("cannot broadcast " + shapeStr(x.shape()) + " to " +
                   shapeStr(shape) + ": too many dimensions");
  int64_t offset = shape.size() - x.rank();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (x.dim(i) != 1 && x.dim(i) != shape[offset + i])
      return b.error("cannot broadcast " + shapeStr(x.shape()) + " to " +
                     shapeStr(shape));
    dims.push_back(offset + i);
  }
  return b.createTyped(tf::BroadcastInDimOp::getOperationName(),
                       RankedTensorType::get(shape, x.type().getElementType()),
                       {x}, {arrayAttr(b, "dims", dims)});
}

// An operator's CallSite is at its Located operand; a tensor operand that
// is invalid has no builder, but then nothing is built or reported.
template <typename OpT>
static Tensor arithmetic(Located<Tensor> a, Tensor b, StringRef cpp, StringRef tf) {
  Builder::CallSite site({a.value, b}, a.at);
  return binaryFloat<OpT>(a.value, b, cpp, tf);
}
Tensor operator+(Located<Tensor> a, Tensor b) {
  return arithmetic<tf::AddOp>(a, b, "operator+", "'+'");
}
Tensor operator-(Located<Tensor> a, Tensor b) {
  return arithmetic<tf::SubOp>(a, b, "operator-", "'-'");
}
Tensor operator*(Located<Tensor> a, Tensor b) {
  return arithmetic<tf::MulOp>(a, b, "operator*", "'*'");
}
Tensor operator/(Located<Tensor> a, Tensor b) {
  return arithmetic<tf::DivOp>(a, b, "operator/", "'/'");
}
Tensor maximum(Tensor a, Tensor b, SourceLoc at) {
  return arithmetic<tf::MaxOp>({a, at}, b, "maximum", "maximum");
}
Tensor minimum(Tensor a, Tensor b, SourceLoc at) {
  return arithmetic<tf::MinOp>({a, at}, b, "minimum", "minimum");
}

static Tensor scalarLike(Tensor like, double v) {
  return like.valid() ? like.builder().fill(v, {}) : Tensor();
}
Tensor operator+(Located<Tensor> a, double b) {
  Builder::CallSite site({a.value}, a.at);
  return a.value + scalarLike(a.value, b);
}
Tensor operator-(Located<Tensor> a, double b) {
  Builder::CallSite site({a.value}, a.at);
  return a.value - scalarLike(a.value, b);
}
Tensor operator*(Located<Tensor> a, double b) {
  Builder::CallSite site({a.value}, a.at);
  return a.value * scalarLike(a.value, b);
}
Tensor operator/(Located<Tensor> a, double b) {
  Builder::CallSite site({a.value}, a.at);
  return a.value / scalarLike(a.value, b);
}
Tensor operator+(Located<double> a, Tensor b) {
  Builder::CallSite site({b}, a.at);
  return scalarLike(b, a.value) + b;
}
Tensor operator-(Located<double> a, Tensor b) {
  Builder::CallSite site({b}, a.at);
  return scalarLike(b, a.value) - b;
}
Tensor operator*(Located<double> a, Tensor b) {
  Builder::CallSite site({b}, a.at);
  return scalarLike(b, a.value) * b;
}
Tensor operator/(Located<double> a, Tensor b) {
  Builder::CallSite site({b}, a.at);
  return scalarLike(b, a.value) / b;
}
Tensor operator-(Located<Tensor> a) {
  Builder::CallSite site({a.value}, a.at);
  return unaryFloat<tf::NegOp>(a.value, "unary operator-", "unary '-'");
}

static Tensor comparison(Located<Tensor> a, Tensor b, tf::ComparePredicate pred,
                         StringRef cpp, StringRef tf) {
  Builder::CallSite site({a.value, b}, a.at);
  return compare(a.value, b, pred, cpp, tf);
}
Tensor operator==(Located<Tensor> a, Tensor b) {
  return comparison(a, b, tf::ComparePredicate::eq, "operator==", "'=='");
}
Tensor operator!=(Located<Tensor> a, Tensor b) {
  return comparison(a, b, tf::ComparePredicate::ne, "operator!=", "'!='");
}
Tensor operator<(Located<Tensor> a, Tensor b) {
  return comparison(a, b, tf::ComparePredicate::lt, "operator<", "'<'");
}
Tensor operator<=(Located<Tensor> a, Tensor b) {
  return comparison(a, b, tf::ComparePredicate::le, "operator<=", "'<='");
}
Tensor operator>(Located<Tensor> a, Tensor b) {
  return comparison(a, b, tf::ComparePredicate::gt, "operator>", "'>'");
}
Tensor operator>=(Located<Tensor> a, Tensor b) {
  return comparison(a, b, tf::ComparePredicate::ge, "operator>=", "'>='");
}
Tensor logical_and(Tensor a, Tensor b, SourceLoc at) {
  Builder::CallSite site({a, b}, at);
  return logical<tf::AndOp>(a, b, "logical_and");
}
Tensor logical_or(Tensor a, Tensor b, SourceLoc at) {
  Builder::CallSite site({a, b}, at);
  return logical<tf::OrOp>(a, b, "logical_or");
}
Tensor logical_not(Tensor a, SourceLoc at) {
  Builder::CallSite site({a}, at);
  if (!a.valid() || !requireDType(a, DType::boolean, "logical_not"))
    return {};
  return first(a.builder().create<tf::NotOp>({a}));
}

Tensor where(Tensor cond, Tensor a, Tensor b, SourceLoc at) {
  Builder::CallSite site({cond, a, b}, at);
  Builder *builder = builderOf({&cond, &a, &b});
  if (!builder || !requireDType(cond, DType::boolean, "where"))
    return {};
  if (a.dtype() != b.dtype())
    return builder->error(Twine("where: branches differ in type: ") +
                          dtypeName(a.dtype()) + " and " + dtypeName(b.dtype()));
  auto ab = broadcastShape(*builder, a.shape(), b.shape(), "where");
  if (!ab)
    return {};
  auto shape = broadcastShape(*builder, cond.shape(), *ab, "where");
  if (!shape)
    return {};
  return first(builder->create<tf::SelectOp>({broadcast_to(cond, *shape),
                                              broadcast_to(a, *shape),
                                              broadcast_to(b, *shape)}));
}

template <typename OpT>
static Tensor unary(Tensor x, StringRef what, SourceLoc at) {
  Builder::CallSite site({x}, at);
  return unaryFloat<OpT>(x, what, what);
}
Tensor relu(Tensor x, SourceLoc at) { return unary<tf::ReluOp>(x, "relu", at); }
Tensor gelu(Tensor x, SourceLoc at) { return unary<tf::GeluOp>(x, "gelu", at); }
Tensor tanh(Tensor x, SourceLoc at) { return unary<tf::TanhOp>(x, "tanh", at); }
Tensor silu(Tensor x, SourceLoc at) {
  Builder::CallSite site({x}, at);
  Tensor half = 0.5 * x;
  return half + half * tanh(half);
}
Tensor exp(Tensor x, SourceLoc at) { return unary<tf::ExpOp>(x, "exp", at); }
Tensor log(Tensor x, SourceLoc at) { return unary<tf::LogOp>(x, "log", at); }
Tensor sqrt(Tensor x, SourceLoc at) { return unary<tf::SqrtOp>(x, "sqrt", at); }
Tensor rsqrt(Tensor x, SourceLoc at) { return unary<tf::RsqrtOp>(x, "rsqrt", at); }

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

Tensor matmul(Tensor a, Tensor b, SourceLoc at) {
  Builder::CallSite site({a, b}, at);
  Builder *builder = builderOf({&a, &b});
  if (!builder)
    return {};
  StringRef what = builder->spelling("matmul", "'@'");
  if (!requireDType(a, DType::f32, what) || !requireDType(b, DType::f32, what))
    return {};
  if (a.rank() < 2 || b.rank() < 2)
    return builder->error(what + " needs operands of rank >= 2, got " +
                          shapeStr(a.shape()) + " and " + shapeStr(b.shape()) +
                          " (use unsqueeze)");
  if (a.dim(-1) != b.dim(-2))
    return builder->error(what + " contracts " + shapeStr(a.shape()) + " with " +
                          shapeStr(b.shape()) + ": " + Twine(a.dim(-1)) +
                          " != " + Twine(b.dim(-2)));
  // x[..., M, K] @ W[K, N]: fold the batch into M instead of broadcasting W.
  if (b.rank() == 2 && a.rank() > 2) {
    SmallVector<int64_t> outShape(a.shape().drop_back());
    outShape.push_back(b.dim(-1));
    Tensor flat = reshape(a, {-1, a.dim(-1)});
    return reshape(first(builder->create<tf::MatmulOp>({flat, b})), outShape);
  }
  auto batch = broadcastShape(*builder, a.shape().drop_back(2),
                              b.shape().drop_back(2),
                              (what + " batch dimensions").str());
  if (!batch)
    return {};
  SmallVector<int64_t> aShape(*batch), bShape(*batch);
  aShape.append({a.dim(-2), a.dim(-1)});
  bShape.append({b.dim(-2), b.dim(-1)});
  return first(builder->create<tf::MatmulOp>(
      {broadcast_to(a, aShape), broadcast_to(b, bShape)}));
}

Tensor softmax(Tensor x, int64_t axis, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireDType(x, DType::f32, "softmax"))
    return {};
  auto a = normalizeAxis(x.builder(), axis, x.rank(), "softmax");
  if (!a)
    return {};
  return first(x.builder().create<tf::SoftmaxOp>({x}, {i64Attr(x.builder(), "axis", *a)}));
}

Tensor log_softmax(Tensor x, int64_t axis, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireDType(x, DType::f32, "log_softmax"))
    return {};
  auto a = normalizeAxis(x.builder(), axis, x.rank(), "log_softmax");
  if (!a)
    return {};
  return first(
      x.builder().create<tf::LogSoftmaxOp>({x}, {i64Attr(x.builder(), "axis", *a)}));
}

/// Sorted, unique, non-negative axes (all of them when `axes` is empty).
static std::optional<SmallVector<int64_t>>
reductionAxes(Tensor x, ArrayRef<int64_t> axes, StringRef what) {
  SmallVector<int64_t> out;
  if (axes.empty()) {
    out.resize(x.rank());
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (int64_t a : axes) {
    auto n = normalizeAxis(x.builder(), a, x.rank(), what);
    if (!n)
      return std::nullopt;
    out.push_back(*n);
  }
  llvm::sort(out);
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    x.builder().error(what + ": an axis is listed twice");
    return std::nullopt;
  }
  return out;
}

template <typename OpT>
static Tensor reduce(Tensor x, ArrayRef<int64_t> axes, StringRef what,
                     bool countsBools, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid())
    return {};
  if (countsBools && x.dtype() == DType::boolean)
    x = to_float(x);
  if (!requireDType(x, DType::f32, what))
    return {};
  auto a = reductionAxes(x, axes, what);
  if (!a)
    return {};
  if (a->empty()) // a scalar reduces to itself
    return x;
  return first(x.builder().create<OpT>({x}, {arrayAttr(x.builder(), "axes", *a)}));
}

Tensor sum(Tensor x, ArrayRef<int64_t> axes, SourceLoc at) {
  return reduce<tf::ReduceSumOp>(x, axes, "sum", true, at);
}
Tensor mean(Tensor x, ArrayRef<int64_t> axes, SourceLoc at) {
  return reduce<tf::ReduceMeanOp>(x, axes, "mean", true, at);
}
Tensor max(Tensor x, ArrayRef<int64_t> axes, SourceLoc at) {
  return reduce<tf::ReduceMaxOp>(x, axes, "max", false, at);
}

Tensor argmax(Tensor x, int64_t axis, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireDType(x, DType::f32, "argmax"))
    return {};
  auto a = normalizeAxis(x.builder(), axis, x.rank(), "argmax");
  if (!a)
    return {};
  return first(x.builder().create<tf::ArgmaxOp>({x}, {i64Attr(x.builder(), "axis", *a)}));
}

Tensor transpose(Tensor x, ArrayRef<int64_t> perm, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid())
    return {};
  SmallVector<int64_t> p;
  for (int64_t d : perm) {
    auto n = normalizeAxis(x.builder(), d, x.rank(), "transpose");
    if (!n)
      return {};
    p.push_back(*n);
  }
  return first(x.builder().create<tf::TransposeOp>({x}, {arrayAttr(x.builder(), "perm", p)}));
}

Tensor reshape(Tensor x, ArrayRef<int64_t> shape, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid())
    return {};
  Builder &b = x.builder();
  SmallVector<int64_t> out(shape);
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(out)) {
    if (d == -1 && inferred < 0) {
      inferred = i;
      continue;
    }
    if (d <= 0 || d > kMaxElements / known)
      return b.error("reshape to " + shapeStr(shape) +
                     ": dimensions must be positive (one may be -1) and the "
                     "size at most 2^31 elements");
    known *= d;
  }
  int64_t count = x.type().getNumElements();
  if (inferred >= 0) {
    if (count % known != 0)
      return b.error("cannot reshape " + shapeStr(x.shape()) + " to " +
                     shapeStr(shape));
    out[inferred] = count / known;
    known *= out[inferred];
  }
  if (known != count)
    return b.error("cannot reshape " + shapeStr(x.shape()) + " (" +
                   Twine(count) + " elements) to " + shapeStr(shape) + " (" +
                   Twine(known) + " elements)");
  if (ArrayRef<int64_t>(out) == x.shape())
    return x;
  return b.createTyped(tf::ReshapeOp::getOperationName(),
                       RankedTensorType::get(out, x.type().getElementType()), {x});
}

Tensor squeeze(Tensor x, int64_t axis, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid())
    return {};
  auto a = normalizeAxis(x.builder(), axis, x.rank(), "squeeze");
  if (!a)
    return {};
  if (x.dim(*a) != 1)
    return x.builder().error("squeeze: dimension " + Twine(axis) + " of " +
                             shapeStr(x.shape()) + " is not 1");
  SmallVector<int64_t> shape(x.shape());
  shape.erase(shape.begin() + *a);
  return reshape(x, shape);
}

Tensor unsqueeze(Tensor x, int64_t axis, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid())
    return {};
  auto a = normalizeAxis(x.builder(), axis, x.rank() + 1, "unsqueeze");
  if (!a)
    return {};
  SmallVector<int64_t> shape(x.shape());
  shape.insert(shape.begin() + *a, 1);
  return reshape(x, shape);
}

Tensor concat(ArrayRef<Tensor> tensors, int64_t axis, SourceLoc at) {
  Builder::CallSite site(tensors.empty() || !tensors.front().valid()
                             ? nullptr
                             : &tensors.front().builder(),
                         at);
  if (tensors.empty() || !Builder::allValid(tensors))
    return {};
  Builder &b = tensors.front().builder();
  auto a = normalizeAxis(b, axis, tensors.front().rank(), "concat");
  if (!a)
    return {};
  if (tensors.size() == 1)
    return tensors.front();
  return first(b.create<tf::ConcatOp>(tensors, {i64Attr(b, "axis", *a)}));
}

Tensor slice(Tensor x, int64_t axis, int64_t start, int64_t limit, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid())
    return {};
  auto a = normalizeAxis(x.builder(), axis, x.rank(), "slice");
  if (!a)
    return {};
  if (start == 0 && limit == x.dim(*a))
    return x;
  SmallVector<int64_t> starts(x.rank(), 0), limits(x.shape()), strides(x.rank(), 1);
  starts[*a] = start;
  limits[*a] = limit;
  Builder &b = x.builder();
  return first(b.create<tf::SliceOp>({x}, {arrayAttr(b, "start", starts),
                                           arrayAttr(b, "limit", limits),
                                           arrayAttr(b, "stride", strides)}));
}

Tensor to_float(Tensor x, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || x.dtype() == DType::f32)
    return x;
  return x.builder().createTyped(
      tf::CastOp::getOperationName(),
      RankedTensorType::get(x.shape(), x.builder().ops().getF32Type()), {x});
}

Tensor one_hot(Tensor ids, int64_t classes, SourceLoc at) {
  Builder::CallSite site({ids}, at);
  if (!ids.valid() || !requireDType(ids, DType::i32, "one_hot"))
    return {};
  return first(ids.builder().create<tf::OneHotOp>(
      {ids}, {i64Attr(ids.builder(), "depth", classes)}));
}

Tensor dropout(Tensor x, double rate, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireDType(x, DType::f32, "dropout"))
    return {};
  Builder &b = x.builder();
  if (!(rate >= 0.0 && rate < 1.0))
    return b.error("dropout rate " + llvm::formatv("{0}", rate).str() + " must be in [0, 1)");
  if (rate == 0.0 || !b.options().training)
    return x;
  SmallVector<NamedAttribute> attrs = {
      attr(b, "rate", b.ops().getF32FloatAttr(rate)),
      i64Attr(b, "key", b.nextDropoutKey()),
      attr(b, "training", b.ops().getUnitAttr())};
  // A tensor of samples (its leading dimension the batch) counts its
  // elements from the batch's first sample in the global batch, so that the
  // ranks of a data-parallel run draw one process's masks. Any other tensor
  // draws the same mask on every rank: one process's only where its shape
  // does not depend on the batch.
  if (x.rank() >= 1 && x.dim(0) == b.options().batch) {
    Tensor seed = b.seed();
    attrs.push_back(i64Attr(b, "sample_size", x.type().getNumElements() / x.dim(0)));
    return first(b.create<tf::DropoutOp>({x, seed, b.sampleOffset()}, attrs));
  }
  return first(b.create<tf::DropoutOp>({x, b.seed()}, attrs));
}

Tensor positional_encoding(Builder &b, int64_t len, int64_t dim, SourceLoc at) {
  Builder::CallSite site(&b, at);
  if (len <= 0 || dim <= 0 || dim % 2 != 0 || !checkedCount({len, dim}) ||
      len * dim > (int64_t(1) << 26))
    return b.error("positional_encoding(" + Twine(len) + ", " + Twine(dim) +
                   ") needs a positive length and a positive even dimension, "
                   "at most 2^26 values in all");
  // PE[pos, 2i] = sin(pos * w_i), PE[pos, 2i+1] = cos(pos * w_i),
  // w_i = exp(-2i * ln(10000) / dim), as the UvA tutorial computes it.
  std::vector<float> pe(len * dim);
  for (int64_t pos = 0; pos < len; ++pos)
    for (int64_t i = 0; i < dim; i += 2) {
      double w = std::exp(static_cast<double>(i) * (-std::log(10000.0) / dim));
      pe[pos * dim + i] = static_cast<float>(std::sin(pos * w));
      pe[pos * dim + i + 1] = static_cast<float>(std::cos(pos * w));
    }
  auto type = RankedTensorType::get({len, dim}, b.ops().getF32Type());
  return b.sequenceRow(b.constant(DenseElementsAttr::get(type, ArrayRef<float>(pe))));
}

Tensor causal_mask(Builder &b, int64_t n, SourceLoc at) {
  Builder::CallSite site(&b, at);
  if (n <= 0 || n > (int64_t(1) << 13))
    return b.error("causal_mask(" + Twine(n) + ") needs a size in [1, 8192]");
  SmallVector<bool> mask(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      mask[i * n + j] = j <= i;
  auto type = RankedTensorType::get({n, n}, b.ops().getI1Type());
  return b.causalMaskRow(b.constant(DenseElementsAttr::get(type, ArrayRef<bool>(mask))));
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// Non-splat constants (arange, eye) are stored whole in the IR and the
/// binary: at most 2^26 elements, as positional_encoding.
static constexpr int64_t kMaxDenseConstant = int64_t(1) << 26;

/// `value` (already checked to fit `dtype`) as a scalar constant broadcast
/// to `shape`: one splat, whatever the size.
static Tensor splat(Builder &b, ArrayRef<int64_t> shape, double value, DType dtype,
                    StringRef what) {
  if (!checkedCount(shape))
    return b.error(what + ": shape " + shapeStr(shape) +
                   ": dimensions must be positive and the size at most 2^31 elements");
  auto scalarType = RankedTensorType::get({}, elementType(b.context(), dtype));
  DenseElementsAttr scalar;
  if (dtype == DType::f32)
    scalar = DenseElementsAttr::get(scalarType, static_cast<float>(value));
  else if (dtype == DType::i32)
    scalar = DenseElementsAttr::get(scalarType,
                                    ArrayRef<int32_t>(static_cast<int32_t>(value)));
  else
    scalar = DenseElementsAttr::get(scalarType, value != 0);
  return broadcast_to(b.constant(scalar), shape);
}

Tensor zeros(Builder &b, ArrayRef<int64_t> shape, DType dtype, SourceLoc at) {
  Builder::CallSite site(&b, at);
  return splat(b, shape, 0.0, dtype, "zeros");
}

Tensor ones(Builder &b, ArrayRef<int64_t> shape, DType dtype, SourceLoc at) {
  Builder::CallSite site(&b, at);
  return splat(b, shape, 1.0, dtype, "ones");
}

Tensor full(Builder &b, ArrayRef<int64_t> shape, double value, DType dtype, SourceLoc at) {
  Builder::CallSite site(&b, at);
  if (dtype == DType::f32 && !std::isfinite(static_cast<float>(value)))
    return b.error("full: " + numberStr(value) + " is not a finite f32");
  if (dtype == DType::i32 && !(value == std::floor(value) && value >= INT32_MIN &&
                               value <= INT32_MAX))
    return b.error("full: " + numberStr(value) + " is not an i32 (an integer in [-2^31, 2^31))");
  if (dtype == DType::boolean && value != 0 && value != 1)
    return b.error("full: a bool tensor holds 0 or 1 (false or true), got " + numberStr(value));
  return splat(b, shape, value, dtype, "full");
}

Tensor arange(Builder &b, int64_t n, DType dtype, SourceLoc at) {
  return arange(b, 0, n, dtype, at);
}

Tensor arange(Builder &b, int64_t start, int64_t limit, DType dtype, SourceLoc at) {
  Builder::CallSite site(&b, at);
  int64_t count = 0;
  if (__builtin_sub_overflow(limit, start, &count) || count <= 0 ||
      count > kMaxDenseConstant)
    return b.error("arange(" + Twine(start) + ", " + Twine(limit) +
                   ") needs start < limit and at most 2^26 values");
  if (dtype == DType::boolean)
    return b.error("arange makes i32 or f32 values, not bool");
  if (dtype == DType::i32 && (start < INT32_MIN || limit - 1 > INT32_MAX))
    return b.error("arange(" + Twine(start) + ", " + Twine(limit) +
                   "): the values do not fit in i32");
  auto type = RankedTensorType::get({count}, elementType(b.context(), dtype));
  if (dtype == DType::f32) {
    std::vector<float> values(count);
    for (int64_t i = 0; i < count; ++i)
      values[i] = static_cast<float>(start + i);
    return b.sequenceRange(b.constant(DenseElementsAttr::get(type, ArrayRef<float>(values))),
                           start);
  }
  std::vector<int32_t> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = static_cast<int32_t>(start + i);
  return b.sequenceRange(b.constant(DenseElementsAttr::get(type, ArrayRef<int32_t>(values))),
                         start);
}

Tensor eye(Builder &b, int64_t n, DType dtype, SourceLoc at) {
  Builder::CallSite site(&b, at);
  if (n <= 0 || n > (int64_t(1) << 13))
    return b.error("eye(" + Twine(n) + ") needs a size in [1, 8192]");
  auto type = RankedTensorType::get({n, n}, elementType(b.context(), dtype));
  switch (dtype) {
  case DType::f32: {
    std::vector<float> values(n * n, 0.0f);
    for (int64_t i = 0; i < n; ++i)
      values[i * n + i] = 1.0f;
    return b.constant(DenseElementsAttr::get(type, ArrayRef<float>(values)));
  }
  case DType::i32: {
    std::vector<int32_t> values(n * n, 0);
    for (int64_t i = 0; i < n; ++i)
      values[i * n + i] = 1;
    return b.constant(DenseElementsAttr::get(type, ArrayRef<int32_t>(values)));
  }
  case DType::boolean: {
    SmallVector<bool> values(n * n, false);
    for (int64_t i = 0; i < n; ++i)
      values[i * n + i] = true;
    return b.constant(DenseElementsAttr::get(type, ArrayRef<bool>(values)));
  }
  }
  return {};
}

Attention scaled_dot_product(Tensor q, Tensor k, Tensor v, Tensor mask,
                             bool withWeights, SourceLoc at) {
  Builder::CallSite site({q, k, v}, at);
  Builder *builder = builderOf({&q, &k, &v});
  if (!builder)
    return {};
  Builder &b = *builder;
  for (Tensor t : {q, k, v})
    if (!requireDType(t, DType::f32, "scaled_dot_product"))
      return {};
  if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank())
    return {b.error("scaled_dot_product needs q, k, v of one rank >= 2, got " +
                    shapeStr(q.shape()) + ", " + shapeStr(k.shape()) + ", " +
                    shapeStr(v.shape())),
            {}};
  SmallVector<NamedAttribute> attrs = {
      attr(b, "scale", b.ops().getF32FloatAttr(1.0 / std::sqrt(double(q.dim(-1)))))};
  if (withWeights)
    attrs.push_back(attr(b, "with_weights", b.ops().getUnitAttr()));
  std::vector<Tensor> operands = {q, k, v};
  if (mask.valid()) {
    if (!requireDType(mask, DType::boolean, "attention mask"))
      return {};
    SmallVector<int64_t> weightShape(q.shape().drop_back());
    weightShape.push_back(k.dim(-2));
    operands.push_back(broadcast_to(mask, weightShape));
  }
  std::vector<Tensor> r = b.create<tf::AttentionOp>(operands, attrs);
  if (r.empty())
    return {};
  return {r[0], withWeights ? r[1] : Tensor()};
}

Tensor cross_entropy(Tensor logits, Tensor labels, int64_t axis, SourceLoc at) {
  Builder::CallSite site({logits, labels}, at);
  Builder *builder = builderOf({&logits, &labels});
  if (!builder || !requireDType(logits, DType::f32, "cross_entropy logits") ||
      !requireDType(labels, DType::i32, "cross_entropy labels"))
    return {};
  auto a = normalizeAxis(*builder, axis, logits.rank(), "cross_entropy");
  if (!a)
    return {};
  return first(builder->create<tf::CrossEntropyOp>(
      {logits, labels}, {i64Attr(*builder, "axis", *a)}));
}

Tensor pow(Tensor x, double k, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireDType(x, DType::f32, "pow"))
    return {};
  if (k == 0.5)
    return sqrt(x);
  if (k == -0.5)
    return rsqrt(x);
  if (k == std::floor(k) && std::fabs(k) <= 16) {
    int64_t n = int64_t(std::fabs(k));
    Tensor result, base = x;
    for (; n > 0; n /= 2) { // square and multiply
      if (n % 2)
        result = result.valid() ? result * base : base;
      if (n > 1)
        base = base * base;
    }
    if (!result.valid()) // x ** 0
      return x.builder().fill(1.0, x.shape());
    return k < 0 ? 1.0 / result : result;
  }
  return exp(log(x) * k);
}

Tensor pow(Tensor x, Tensor y, SourceLoc at) {
  Builder::CallSite site({x, y}, at);
  if (!x.valid() || !y.valid() || !requireDType(x, DType::f32, "pow") ||
      !requireDType(y, DType::f32, "pow"))
    return {};
  return exp(log(x) * y);
}

Tensor cross_entropy(Tensor logits, Tensor labels, const CrossEntropyOptions &o, SourceLoc at) {
  if (!o.ignoreIndex && o.labelSmoothing == 0.0 && !o.weight.valid())
    return cross_entropy(logits, labels, -1, at);
  Builder::CallSite site({logits, labels}, at);
  Builder *builder = builderOf({&logits, &labels});
  if (!builder || !requireDType(logits, DType::f32, "cross_entropy logits") ||
      !requireDType(labels, DType::i32, "cross_entropy labels"))
    return {};
  Builder &b = *builder;
  if (logits.rank() != labels.rank() + 1 ||
      logits.shape().drop_back() != labels.shape())
    return b.error("cross_entropy: labels " + shapeStr(labels.shape()) +
                   " must be the logits' shape " + shapeStr(logits.shape()) +
                   " without its last axis (the classes)");
  if (!(o.labelSmoothing >= 0.0 && o.labelSmoothing < 1.0))
    return b.error("cross_entropy: label_smoothing must be in [0, 1), got " +
                   Twine(std::to_string(o.labelSmoothing)));
  const int64_t classes = logits.dim(-1);
  if (o.weight.valid() && (o.weight.dtype() != DType::f32 || o.weight.rank() != 1 ||
                           o.weight.dim(0) != classes))
    return b.error("cross_entropy: weight must be f32[" + Twine(classes) + "] (one per class), got " +
                   Twine(dtypeName(o.weight.dtype())) + " " + shapeStr(o.weight.shape()));
  auto i32Scalar = [&](int64_t v) {
    return b.constant(DenseElementsAttr::get(RankedTensorType::get({}, b.ops().getI32Type()),
                                             static_cast<int32_t>(v)));
  };
  // Ignored positions read class 0 (not their label, which may index nothing)
  // and weigh 0.
  Tensor counted = b.fill(1.0, labels.shape());
  Tensor target = labels;
  if (o.ignoreIndex) {
    Tensor kept = labels != i32Scalar(*o.ignoreIndex);
    counted = to_float(kept);
    target = where(kept, labels, i32Scalar(0));
  }
  Tensor logp = log_softmax(logits, -1);
  Tensor hot = one_hot(target, classes);
  Tensor weights = counted; // w_i
  if (o.weight.valid())
    weights = weights * sum(hot * o.weight, {-1});
  Tensor picked = sum(logp * hot, {-1}) * -1.0; // nll_i
  Tensor perPosition = weights * picked;
  if (o.labelSmoothing > 0.0) {
    Tensor all = o.weight.valid() ? logp * o.weight : logp;
    Tensor smooth = sum(all, {-1}) * (-o.labelSmoothing / double(classes)) * counted;
    perPosition = perPosition * (1.0 - o.labelSmoothing) + smooth;
  }
  return sum(perPosition) / maximum(sum(weights), b.fill(1e-12, {}));
}

Tensor mse(Tensor a, Tensor b, SourceLoc at) {
  Builder::CallSite site({a, b}, at);
  Builder *builder = builderOf({&a, &b});
  if (!builder || !requireDType(a, DType::f32, "mse") ||
      !requireDType(b, DType::f32, "mse"))
    return {};
  return first(builder->create<tf::MseOp>({a, b}));
}

} // namespace tfc
