//===- TfOps.cpp - shape rules, verifiers and syntax of the tf ops --------===//
//
// Each op's shape rule is its inferReturnTypes: the C++ DSL asks it before
// building an op, and the verifier re-checks it, so a malformed op is
// rejected with the same message wherever it comes from.
//
//===----------------------------------------------------------------------===//

#include "dialect/TfDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tfc::tf;

namespace {
/// Emits inference failures (only when a location is known: the DSL passes
/// one, the parser and verifier always do) prefixed with the op's name.
struct ShapeRule {
  std::optional<Location> loc;
  StringRef opName;

  template <typename... Args>
  LogicalResult fail(Args &&...args) const {
    return emitOptionalError(loc, "'tf.", opName, "' ",
                             std::forward<Args>(args)...);
  }

  /// The value's type as a static ranked tensor, or a diagnostic.
  FailureOr<RankedTensorType> tensor(Value v, StringRef what) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape()) {
      (void)fail(what, " must be a tensor with a static shape, got ",
                 v.getType());
      return failure();
    }
    return t;
  }

  LogicalResult axisInRange(int64_t axis, int64_t rank, StringRef what,
                            Type type) const {
    if (axis < 0 || axis >= rank)
      return fail(what, " ", axis, " is out of range for ", type,
                  " (rank ", rank, "; the IR takes non-negative axes)");
    return success();
  }

  /// Inference runs before the verifier checks required attributes.
  LogicalResult present(Attribute attr, StringRef name) const {
    if (!attr)
      return fail("requires attribute '", name, "'");
    return success();
  }

  LogicalResult sameType(Value lhs, Value rhs, StringRef lhsName,
                         StringRef rhsName) const {
    if (lhs.getType() != rhs.getType())
      return fail("operands differ: ", lhsName, " is ", lhs.getType(),
                  " but ", rhsName, " is ", rhs.getType(),
                  " (elementwise ops take identical shapes; broadcast "
                  "explicitly with tf.broadcast_in_dim)");
    return success();
  }
};

RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

Type f32Scalar(MLIRContext *ctx) {
  return RankedTensorType::get({}, Float32Type::get(ctx));
}
} // namespace

//===----------------------------------------------------------------------===//
// custom<OperandTypes>: one type when both operands share it, else both
//===----------------------------------------------------------------------===//

static ParseResult parseOperandTypes(OpAsmParser &parser, Type &lhs,
                                     Type &rhs) {
  if (parser.parseType(lhs))
    return failure();
  if (succeeded(parser.parseOptionalComma()))
    return parser.parseType(rhs);
  rhs = lhs;
  return success();
}

static void printOperandTypes(OpAsmPrinter &printer, Operation *, Type lhs,
                              Type rhs) {
  printer << lhs;
  if (lhs != rhs)
    printer << ", " << rhs;
}


//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "constant"};
  if (failed(rule.present(adaptor.getValueAttr(), "value")))
    return failure();
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getShapedType());
  if (!type || !type.hasStaticShape())
    return rule.fail("value must be a tensor with a static shape");
  Type elem = type.getElementType();
  if (!elem.isF32() && !elem.isInteger(32) && !elem.isInteger(1))
    return rule.fail("element type must be f32, i32 or i1, got ", elem);
  types.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferUnary(std::optional<Location> loc, StringRef name,
                                Adaptor adaptor, SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, name};
  auto x = rule.tensor(adaptor.getX(), "operand");
  if (failed(x))
    return failure();
  types.push_back(*x);
  return success();
}

template <typename Adaptor>
static LogicalResult inferBinary(std::optional<Location> loc, StringRef name,
                                 Adaptor adaptor, SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, name};
  auto lhs = rule.tensor(adaptor.getLhs(), "lhs");
  if (failed(lhs) || failed(rule.tensor(adaptor.getRhs(), "rhs")) ||
      failed(rule.sameType(adaptor.getLhs(), adaptor.getRhs(), "lhs", "rhs")))
    return failure();
  types.push_back(*lhs);
  return success();
}

#define TF_INFER_UNARY(OP, NAME)                                               \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferUnary(loc, NAME, adaptor, types);                              \
  }
#define TF_INFER_BINARY(OP, NAME)                                              \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferBinary(loc, NAME, adaptor, types);                             \
  }

TF_INFER_UNARY(NegOp, "neg")
TF_INFER_UNARY(ExpOp, "exp")
TF_INFER_UNARY(LogOp, "log")
TF_INFER_UNARY(SqrtOp, "sqrt")
TF_INFER_UNARY(RsqrtOp, "rsqrt")
TF_INFER_UNARY(TanhOp, "tanh")
TF_INFER_UNARY(SinOp, "sin")
TF_INFER_UNARY(CosOp, "cos")
TF_INFER_UNARY(ReluOp, "relu")
TF_INFER_UNARY(GeluOp, "gelu")
TF_INFER_UNARY(ErfOp, "erf")
TF_INFER_UNARY(NotOp, "not")
TF_INFER_BINARY(AddOp, "add")
TF_INFER_BINARY(SubOp, "sub")
TF_INFER_BINARY(MulOp, "mul")
TF_INFER_BINARY(DivOp, "div")
TF_INFER_BINARY(MaxOp, "max")
TF_INFER_BINARY(MinOp, "min")
TF_INFER_BINARY(AndOp, "and")
TF_INFER_BINARY(OrOp, "or")

LogicalResult CompareOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "compare"};
  if (failed(rule.present(adaptor.getPredicateAttr(), "predicate")))
    return failure();
  auto lhs = rule.tensor(adaptor.getLhs(), "lhs");
  if (failed(lhs) || failed(rule.tensor(adaptor.getRhs(), "rhs")) ||
      failed(rule.sameType(adaptor.getLhs(), adaptor.getRhs(), "lhs", "rhs")))
    return failure();
  ComparePredicate pred = adaptor.getPredicate();
  if (lhs->getElementType().isInteger(1) && pred != ComparePredicate::eq &&
      pred != ComparePredicate::ne)
    return rule.fail("predicate '", stringifyComparePredicate(pred),
                     "' is not defined on i1 operands (only eq and ne)");
  types.push_back(withShape(*lhs, lhs->getShape()).clone(IntegerType::get(ctx, 1)));
  return success();
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "select"};
  auto cond = rule.tensor(adaptor.getCond(), "condition");
  auto onTrue = rule.tensor(adaptor.getOnTrue(), "on_true");
  if (failed(cond) || failed(onTrue) ||
      failed(rule.tensor(adaptor.getOnFalse(), "on_false")) ||
      failed(rule.sameType(adaptor.getOnTrue(), adaptor.getOnFalse(),
                           "on_true", "on_false")))
    return failure();
  if (cond->getShape() != onTrue->getShape())
    return rule.fail("condition shape ", formatShape(*cond),
                     " differs from the value shape ", formatShape(*onTrue));
  types.push_back(*onTrue);
  return success();
}

LogicalResult CastOp::verify() {
  auto in = cast<ShapedType>(getX().getType());
  auto out = cast<ShapedType>(getResult().getType());
  if (in.getShape() != out.getShape())
    return emitOpError("changes the shape from ")
           << formatShape(in) << " to " << formatShape(out)
           << "; a cast only converts the element type";
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  auto in = cast<RankedTensorType>(getX().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> dims = getDims();
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type from ")
           << in.getElementType() << " to " << out.getElementType();
  if (static_cast<int64_t>(dims.size()) != in.getRank())
    return emitOpError("has ") << dims.size() << " dims for an operand of rank "
                               << in.getRank() << " (" << in << ")";
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= out.getRank())
      return emitOpError("dims[") << i << "] = " << d
                                  << " is out of range for the result " << out;
    if (i > 0 && d <= dims[i - 1])
      return emitOpError("dims must be strictly increasing, got [")
             << dims << "]";
    int64_t inDim = in.getDimSize(i), outDim = out.getDimSize(d);
    if (inDim != 1 && inDim != outDim)
      return emitOpError("cannot broadcast operand shape ")
             << formatShape(in) << " to " << formatShape(out)
             << ": operand dim " << i << " (" << inDim << ") maps to result dim "
             << d << " (" << outDim << ")";
  }
  return success();
}

// A reshape to the same type is the identity; a reshape of a reshape reads
// the original tensor (row-major order is preserved by both).
OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getX().getType() == getType())
    return getX();
  if (auto inner = getX().getDefiningOp<ReshapeOp>()) {
    getXMutable().assign(inner.getX());
    return getX().getType() == getType() ? getX() : Value(getResult());
  }
  return {};
}

// Broadcasting to the operand's own type is the identity.
OpFoldResult BroadcastInDimOp::fold(FoldAdaptor) {
  if (getX().getType() == getType())
    return getX();
  return {};
}

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getX().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type from ")
           << in.getElementType() << " to " << out.getElementType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << formatShape(in) << " (" << in.getNumElements() << " elements) to "
           << formatShape(out) << " (" << out.getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "transpose"};
  if (failed(rule.present(adaptor.getPermAttr(), "perm")))
    return failure();
  auto x = rule.tensor(adaptor.getX(), "operand");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != x->getRank())
    return rule.fail("permutation [", perm, "] has ", perm.size(),
                     " entries for ", *x, " of rank ", x->getRank());
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= x->getRank() || seen[p])
      return rule.fail("[", perm, "] is not a permutation of the dimensions of ",
                       *x);
    seen[p] = true;
    shape.push_back(x->getDimSize(p));
  }
  types.push_back(withShape(*x, shape));
  return success();
}

// The identity permutation.
OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPerm()))
    if (static_cast<int64_t>(i) != p)
      return {};
  return getX();
}

bool tfc::tf::isLoopFusible(Operation *op) {
  if (auto transpose = dyn_cast<TransposeOp>(op); transpose && transpose.isConvolutionView())
    return false;
  return op->hasTrait<LoopFusible>();
}

bool TransposeOp::isConvolutionView() {
  return !use_empty() && llvm::all_of(getResult().getUses(), [](OpOperand &use) {
    auto conv = dyn_cast<Conv1dOp>(use.getOwner());
    return conv && conv.isPerPosition() && use.getOperandNumber() < 2;
  });
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "slice"};
  if (failed(rule.present(adaptor.getStartAttr(), "start")) ||
      failed(rule.present(adaptor.getLimitAttr(), "limit")) ||
      failed(rule.present(adaptor.getStrideAttr(), "stride")))
    return failure();
  auto x = rule.tensor(adaptor.getX(), "operand");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> start = adaptor.getStart(), limit = adaptor.getLimit(),
                    stride = adaptor.getStride();
  size_t rank = x->getRank();
  if (start.size() != rank || limit.size() != rank || stride.size() != rank)
    return rule.fail("start, limit and stride need ", rank, " entries each for ",
                     *x, ", got ", start.size(), ", ", limit.size(), " and ",
                     stride.size());
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < rank; ++i) {
    if (stride[i] < 1)
      return rule.fail("stride ", stride[i], " in dim ", i, " must be positive");
    if (start[i] < 0 || start[i] >= limit[i] || limit[i] > x->getDimSize(i))
      return rule.fail("range [", start[i], ", ", limit[i], ") in dim ", i,
                       " is empty or outside ", formatShape(*x));
    shape.push_back((limit[i] - start[i] + stride[i] - 1) / stride[i]);
  }
  types.push_back(withShape(*x, shape));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "concat"};
  if (failed(rule.present(adaptor.getAxisAttr(), "axis")))
    return failure();
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return rule.fail("needs at least one input");
  auto first = rule.tensor(inputs.front(), "input #0");
  if (failed(first))
    return failure();
  int64_t axis = adaptor.getAxisAttr().getInt();
  if (failed(rule.axisInRange(axis, first->getRank(), "axis", *first)))
    return failure();
  SmallVector<int64_t> shape(first->getShape());
  for (auto [i, v] : llvm::enumerate(inputs.drop_front())) {
    auto t = rule.tensor(v, "input");
    if (failed(t))
      return failure();
    bool compatible = t->getRank() == first->getRank() &&
                      t->getElementType() == first->getElementType();
    for (int64_t d = 0; compatible && d < t->getRank(); ++d)
      compatible = d == axis || t->getDimSize(d) == first->getDimSize(d);
    if (!compatible)
      return rule.fail("input #", i + 1, " ", *t,
                       " does not match input #0 ", *first,
                       " outside the concatenation axis ", axis);
    shape[axis] += t->getDimSize(axis);
  }
  types.push_back(withShape(*first, shape));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferReduce(std::optional<Location> loc, StringRef name,
                                 Adaptor adaptor, SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, name};
  if (failed(rule.present(adaptor.getAxesAttr(), "axes")))
    return failure();
  auto x = rule.tensor(adaptor.getX(), "operand");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> axes = adaptor.getAxes();
  if (axes.empty())
    return rule.fail("needs at least one axis");
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (failed(rule.axisInRange(a, x->getRank(), "axis", *x)))
      return failure();
    if (i > 0 && a <= axes[i - 1])
      return rule.fail("axes must be sorted and unique, got [", axes, "]");
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < x->getRank(); ++d)
    if (!llvm::is_contained(axes, d))
      shape.push_back(x->getDimSize(d));
  types.push_back(withShape(*x, shape));
  return success();
}

#define TF_INFER_REDUCE(OP, NAME)                                              \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferReduce(loc, NAME, adaptor, types);                             \
  }
TF_INFER_REDUCE(ReduceSumOp, "reduce_sum")
TF_INFER_REDUCE(ReduceMaxOp, "reduce_max")
TF_INFER_REDUCE(ReduceMeanOp, "reduce_mean")

LogicalResult ArgmaxOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "argmax"};
  if (failed(rule.present(adaptor.getAxisAttr(), "axis")))
    return failure();
  auto x = rule.tensor(adaptor.getX(), "operand");
  if (failed(x))
    return failure();
  int64_t axis = adaptor.getAxisAttr().getInt();
  if (failed(rule.axisInRange(axis, x->getRank(), "axis", *x)))
    return failure();
  SmallVector<int64_t> shape(x->getShape());
  shape.erase(shape.begin() + axis);
  types.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 32)));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and neural-network ops
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "matmul"};
  auto lhs = rule.tensor(adaptor.getLhs(), "lhs");
  auto rhs = rule.tensor(adaptor.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  int64_t rank = lhs->getRank();
  if (rank < 2 || rhs->getRank() != rank)
    return rule.fail("needs operands of equal rank >= 2, got ", *lhs, " and ",
                     *rhs);
  if (lhs->getShape().drop_back(2) != rhs->getShape().drop_back(2))
    return rule.fail("batch dimensions differ: ", *lhs, " and ", *rhs,
                     " (broadcast explicitly)");
  int64_t m = lhs->getDimSize(rank - 2), kl = lhs->getDimSize(rank - 1);
  if (adaptor.getTransposeLhs())
    std::swap(m, kl);
  int64_t kr = rhs->getDimSize(rank - 2), n = rhs->getDimSize(rank - 1);
  if (adaptor.getTransposeRhs())
    std::swap(kr, n);
  if (kl != kr)
    return rule.fail("contraction dimensions differ: lhs ", *lhs,
                     adaptor.getTransposeLhs() ? " (transposed)" : "",
                     " has K = ", kl, ", rhs ", *rhs,
                     adaptor.getTransposeRhs() ? " (transposed)" : "",
                     " has K = ", kr);
  SmallVector<int64_t> shape(lhs->getShape().drop_back(2));
  shape.append({m, n});
  types.push_back(withShape(*lhs, shape));
  return success();
}

template <typename Adaptor>
static LogicalResult inferSoftmaxLike(std::optional<Location> loc,
                                      StringRef name, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, name};
  if (failed(rule.present(adaptor.getAxisAttr(), "axis")))
    return failure();
  auto x = rule.tensor(adaptor.getX(), "operand");
  if (failed(x) || failed(rule.axisInRange(adaptor.getAxisAttr().getInt(),
                                           x->getRank(), "axis", *x)))
    return failure();
  types.push_back(*x);
  return success();
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferSoftmaxLike(loc, "softmax", adaptor, types);
}

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return inferSoftmaxLike(loc, "log_softmax", adaptor, types);
}

/// A layer norm's per-feature parameter `t` (gamma, beta) of operand `x`:
/// [d], d the last dimension of x.
static LogicalResult checkNormParam(ShapeRule &rule, RankedTensorType x, StringRef name,
                                    RankedTensorType t) {
  int64_t d = x.getShape().back();
  if (t.getRank() != 1 || t.getDimSize(0) != d)
    return rule.fail(name, " ", t, " must be [", d, "] to normalise the last dimension of ", x);
  return success();
}

/// epsilon has a default, so it may be absent here.
static LogicalResult checkEpsilon(ShapeRule &rule, FloatAttr eps) {
  if (eps && eps.getValueAsDouble() <= 0.0)
    return rule.fail("epsilon must be positive");
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "layer_norm"};
  auto x = rule.tensor(adaptor.getX(), "operand");
  auto gamma = rule.tensor(adaptor.getGamma(), "gamma");
  auto beta = rule.tensor(adaptor.getBeta(), "beta");
  if (failed(x) || failed(gamma) || failed(beta))
    return failure();
  if (x->getRank() < 1)
    return rule.fail("needs an operand of rank >= 1, got ", *x);
  for (auto [name, t] : {std::pair<StringRef, RankedTensorType>{"gamma", *gamma},
                         {"beta", *beta}})
    if (failed(checkNormParam(rule, *x, name, t)))
      return failure();
  if (failed(checkEpsilon(rule, adaptor.getEpsilonAttr())))
    return failure();
  types.push_back(*x);
  return success();
}

LogicalResult LayerNormGradOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "layer_norm_grad"};
  auto x = rule.tensor(adaptor.getX(), "operand");
  auto gamma = rule.tensor(adaptor.getGamma(), "gamma");
  auto grad = rule.tensor(adaptor.getGrad(), "grad");
  if (failed(x) || failed(gamma) || failed(grad))
    return failure();
  if (x->getRank() < 1)
    return rule.fail("needs an operand of rank >= 1, got ", *x);
  if (failed(checkNormParam(rule, *x, "gamma", *gamma)))
    return failure();
  if (grad->getShape() != x->getShape())
    return rule.fail("grad ", *grad, " must have the shape of the operand ", *x);
  if (failed(checkEpsilon(rule, adaptor.getEpsilonAttr())))
    return failure();
  types.append({*x, *gamma, *gamma});
  return success();
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "dropout"};
  if (failed(rule.present(adaptor.getRateAttr(), "rate")))
    return failure();
  auto x = rule.tensor(adaptor.getX(), "operand");
  if (failed(x))
    return failure();
  float rate = adaptor.getRate().convertToFloat();
  if (!(rate >= 0.0f && rate < 1.0f))
    return rule.fail("rate ", rate, " must be in [0, 1)");
  auto sampleSize = adaptor.getSampleSizeAttr();
  if (bool(adaptor.getSampleOffset()) != bool(sampleSize))
    return rule.fail("needs both a sample_offset and a sample_size, or neither");
  if (sampleSize && sampleSize.getInt() < 1)
    return rule.fail("sample_size ", sampleSize.getInt(), " must be positive");
  types.push_back(*x);
  return success();
}

/// The shape rules tf.attention and tf.attention_grad share; returns the
/// values' type, [batch..., Tq, Dv], and sets `weightShape` [batch..., Tq, Tk].
static FailureOr<RankedTensorType> attentionValuesType(ShapeRule &rule, Value qv, Value kv,
                                                       Value vv, Value mask,
                                                       SmallVectorImpl<int64_t> &weightShape) {
  auto q = rule.tensor(qv, "q");
  auto k = rule.tensor(kv, "k");
  auto v = rule.tensor(vv, "v");
  if (failed(q) || failed(k) || failed(v))
    return failure();
  int64_t rank = q->getRank();
  if (rank < 2 || k->getRank() != rank || v->getRank() != rank)
    return rule.fail("needs q, k, v of equal rank >= 2, got ", *q, ", ", *k,
                     ", ", *v);
  ArrayRef<int64_t> batch = q->getShape().drop_back(2);
  if (k->getShape().drop_back(2) != batch || v->getShape().drop_back(2) != batch)
    return rule.fail("batch dimensions differ: q ", *q, ", k ", *k, ", v ", *v);
  int64_t tq = q->getDimSize(rank - 2), tk = k->getDimSize(rank - 2);
  if (q->getDimSize(rank - 1) != k->getDimSize(rank - 1))
    return rule.fail("q ", *q, " and k ", *k,
                     " differ in their feature dimension");
  if (v->getDimSize(rank - 2) != tk)
    return rule.fail("k ", *k, " and v ", *v, " differ in sequence length");
  weightShape.assign(batch.begin(), batch.end());
  weightShape.append({tq, tk});
  if (mask) {
    auto m = rule.tensor(mask, "mask");
    if (failed(m))
      return failure();
    if (m->getShape() != ArrayRef<int64_t>(weightShape))
      return rule.fail("mask ", *m, " must have the shape of the weights ",
                       formatShape(RankedTensorType::get(weightShape,
                                                         q->getElementType())),
                       " (broadcast it explicitly)");
  }
  SmallVector<int64_t> valueShape(batch);
  valueShape.append({tq, v->getDimSize(rank - 1)});
  return withShape(*q, valueShape);
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "attention"};
  if (failed(rule.present(adaptor.getScaleAttr(), "scale")))
    return failure();
  SmallVector<int64_t> weightShape;
  auto values = attentionValuesType(rule, adaptor.getQ(), adaptor.getK(), adaptor.getV(),
                                    adaptor.getMask(), weightShape);
  if (failed(values))
    return failure();
  types.push_back(*values);
  if (adaptor.getWithWeights())
    types.push_back(withShape(*values, weightShape));
  return success();
}

LogicalResult AttentionGradOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "attention_grad"};
  if (failed(rule.present(adaptor.getScaleAttr(), "scale")))
    return failure();
  SmallVector<int64_t> weightShape;
  auto values = attentionValuesType(rule, adaptor.getQ(), adaptor.getK(), adaptor.getV(),
                                    adaptor.getMask(), weightShape);
  if (failed(values))
    return failure();
  auto grad = rule.tensor(adaptor.getDvalues(), "grad");
  if (failed(grad))
    return failure();
  if (grad->getShape() != values->getShape())
    return rule.fail("grad ", *grad, " must have the shape of the values ", *values);
  for (Value operand : {adaptor.getQ(), adaptor.getK(), adaptor.getV()})
    types.push_back(operand.getType());
  return success();
}

LogicalResult Conv1dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "conv1d"};
  if (failed(rule.present(adaptor.getPaddingAttr(), "padding")))
    return failure();
  auto x = rule.tensor(adaptor.getX(), "input");
  auto w = rule.tensor(adaptor.getWeight(), "weight");
  if (failed(x) || failed(w))
    return failure();
  if (x->getRank() != 3 || w->getRank() != 3)
    return rule.fail("needs input [N, Cin, W] and weight [Cout, Cin, K], got ",
                     *x, " and ", *w);
  if (x->getDimSize(1) != w->getDimSize(1))
    return rule.fail("input ", *x, " has ", x->getDimSize(1),
                     " channels but weight ", *w, " expects ",
                     w->getDimSize(1));
  if (Value bias = adaptor.getBias()) {
    auto b = rule.tensor(bias, "bias");
    if (failed(b))
      return failure();
    if (b->getRank() != 1 || b->getDimSize(0) != w->getDimSize(0))
      return rule.fail("bias ", *b, " must be [", w->getDimSize(0), "]");
  }
  int64_t pad = adaptor.getPaddingAttr().getInt();
  if (pad < 0)
    return rule.fail("padding ", pad, " must not be negative");
  int64_t width = x->getDimSize(2) + 2 * pad - w->getDimSize(2) + 1;
  if (width < 1)
    return rule.fail("kernel ", w->getDimSize(2), " is wider than the input ",
                     *x, " padded by ", pad);
  types.push_back(withShape(*x, {x->getDimSize(0), w->getDimSize(0), width}));
  return success();
}

LogicalResult OneHotOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "one_hot"};
  if (failed(rule.present(adaptor.getDepthAttr(), "depth")))
    return failure();
  auto ids = rule.tensor(adaptor.getIds(), "ids");
  if (failed(ids))
    return failure();
  int64_t depth = adaptor.getDepthAttr().getInt();
  if (depth < 1)
    return rule.fail("depth ", depth, " must be positive");
  SmallVector<int64_t> shape(ids->getShape());
  shape.push_back(depth);
  types.push_back(RankedTensorType::get(shape, Float32Type::get(ctx)));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "gather"};
  auto table = rule.tensor(adaptor.getTable(), "table");
  auto ids = rule.tensor(adaptor.getIds(), "ids");
  if (failed(table) || failed(ids))
    return failure();
  if (table->getRank() != 2)
    return rule.fail("table must be [rows, dim], got ", *table);
  SmallVector<int64_t> shape(ids->getShape());
  shape.push_back(table->getDimSize(adaptor.getColumns() ? 0 : 1));
  types.push_back(withShape(*table, shape));
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// tf.cross_entropy's and tf.cross_entropy_grad's rule: `axis` of logits
/// holds the classes, labels have the logits' shape without it.
static LogicalResult crossEntropyShapes(ShapeRule &rule, Value logitsValue, Value labelsValue,
                                        IntegerAttr axisAttr) {
  if (failed(rule.present(axisAttr, "axis")))
    return failure();
  auto logits = rule.tensor(logitsValue, "logits");
  auto labels = rule.tensor(labelsValue, "labels");
  if (failed(logits) || failed(labels))
    return failure();
  int64_t axis = axisAttr.getInt();
  if (failed(rule.axisInRange(axis, logits->getRank(), "class axis", *logits)))
    return failure();
  SmallVector<int64_t> expected(logits->getShape());
  expected.erase(expected.begin() + axis);
  if (labels->getShape() != ArrayRef<int64_t>(expected))
    return rule.fail("labels ", *labels, " must have the logits' shape ",
                     formatShape(*logits), " without the class axis ", axis,
                     ": ", formatShape(withShape(*logits, expected)));
  return success();
}

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *ctx,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "cross_entropy"};
  if (failed(crossEntropyShapes(rule, adaptor.getLogits(), adaptor.getLabels(),
                                adaptor.getAxisAttr())))
    return failure();
  types.push_back(f32Scalar(ctx));
  return success();
}

LogicalResult CrossEntropyGradOp::inferReturnTypes(MLIRContext *ctx,
                                                   std::optional<Location> loc,
                                                   Adaptor adaptor,
                                                   SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "cross_entropy_grad"};
  if (failed(crossEntropyShapes(rule, adaptor.getLogits(), adaptor.getLabels(),
                                adaptor.getAxisAttr())))
    return failure();
  auto grad = rule.tensor(adaptor.getGrad(), "grad");
  if (failed(grad))
    return failure();
  if (grad->getRank() != 0)
    return rule.fail("grad ", *grad, " must be a scalar: the adjoint of the loss");
  types.push_back(adaptor.getLogits().getType());
  return success();
}

LogicalResult MseOp::inferReturnTypes(MLIRContext *ctx,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  ShapeRule rule{loc, "mse"};
  if (failed(rule.tensor(adaptor.getLhs(), "lhs")) ||
      failed(rule.tensor(adaptor.getRhs(), "rhs")) ||
      failed(rule.sameType(adaptor.getLhs(), adaptor.getRhs(), "lhs", "rhs")))
    return failure();
  types.push_back(f32Scalar(ctx));
  return success();
}

#define GET_OP_CLASSES
#include "dialect/TfOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

// ProductOpInterface: a matrix product's rows, or a batch of them; a
// convolution's windows (a batch of [out channels, time] products), not a
// weight gradient's per-position form.
bool MatmulOp::rowsOfProducts() {
  int64_t rank = getType().getRank();
  return rank == 2 || rank == 3;
}
bool Conv1dOp::rowsOfProducts() { return !isPerPosition(); }

// IndexingOpInterface: ids index a table's rows or one-hot's classes, labels
// the logits' class axis.
std::optional<int64_t> OneHotOp::indexBound(unsigned operand) {
  return getDepthAttr().getInt();
}
std::optional<int64_t> GatherOp::indexBound(unsigned operand) {
  if (operand != getIdsMutable().getOperandNumber())
    return std::nullopt;
  return getTable().getType().getDimSize(getColumns() ? 1 : 0);
}
std::optional<int64_t> CrossEntropyOp::indexBound(unsigned operand) {
  if (operand != getLabelsMutable().getOperandNumber())
    return std::nullopt;
  return getLogits().getType().getDimSize(getAxisAttr().getInt());
}
std::optional<int64_t> CrossEntropyGradOp::indexBound(unsigned operand) {
  if (operand != getLabelsMutable().getOperandNumber())
    return std::nullopt;
  return getLogits().getType().getDimSize(getAxisAttr().getInt());
}

LogicalResult FusionOp::verify() {
  if (!llvm::is_contained({"loop", "reduction", "gemm", "horizontal"}, getKind()))
    return emitOpError("kind must be \"loop\", \"reduction\", \"gemm\" or \"horizontal\", "
                       "got \"")
           << getKind() << "\"";
  Block &body = getBodyBlock();
  if (body.getNumArguments() != 0)
    return emitOpError("body takes no arguments (it reads the values defined above)");
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end with tf.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getValues().size() << " values of types " << yield.getValues().getTypes()
           << " but returns " << getResultTypes();
  for (Operation &op : body.without_terminator())
    if (!isa<TFDialect>(op.getDialect()) || isa<FusionOp>(op))
      return op.emitOpError("cannot be inside a tf.fusion (only tf ops, not nested fusions)");
  if (getKind() == "gemm") {
    SmallVector<ProductOpInterface> products;
    for (Operation &op : body.without_terminator())
      if (auto product = dyn_cast<ProductOpInterface>(op))
        products.push_back(product);
    if (products.size() != 1)
      return emitOpError("of kind \"gemm\" must hold exactly one tf.matmul or tf.conv1d");
    ProductOpInterface product = products.front();
    if (!product.rowsOfProducts())
      return product->emitOpError("of a \"gemm\" fusion must be a matrix or a batch of "
                                  "them, row by row, got ")
             << product->getResult(0).getType();
    for (Value result : yield.getValues())
      if (result == product->getResult(0))
        return product->emitOpError("of a \"gemm\" fusion is read by its epilogue only; "
                                    "it cannot be a result");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Canonicalization
//===----------------------------------------------------------------------===//

namespace {

bool isZeroSplat(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue()) : nullptr;
  return dense && dense.isSplat() && dense.getSplatValue<APFloat>().isZero();
}

/// add(concat(a...), concat(b...)) along one axis where every non-zero
/// piece of one side meets only zero constants on the other: the
/// concatenation of the non-zero pieces in order (zeros between them). A
/// slice's adjoint is its gradient padded with zeros, so the adjoints of q,
/// k and v sliced from one projection add up to concat(dq, dk, dv) instead
/// of three padded tensors and two sums. (x + 0 = x exactly, up to the sign
/// of a zero.)
struct AddOfDisjointConcats : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  struct Piece {
    int64_t begin, end;
    Value value;
    bool zero;
  };

  static SmallVector<Piece> piecesOf(ConcatOp concat) {
    SmallVector<Piece> pieces;
    int64_t axis = concat.getAxis(), at = 0;
    for (Value input : concat.getInputs()) {
      int64_t width = cast<RankedTensorType>(input.getType()).getDimSize(axis);
      pieces.push_back({at, at + width, input, isZeroSplat(input)});
      at += width;
    }
    return pieces;
  }

  /// Whether every non-zero piece of `a` overlaps only zero pieces of `b`.
  static bool disjoint(ArrayRef<Piece> a, ArrayRef<Piece> b) {
    for (const Piece &p : a)
      if (!p.zero)
        for (const Piece &q : b)
          if (q.begin < p.end && p.begin < q.end && !q.zero)
            return false;
    return true;
  }

  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    auto lhs = op.getLhs().getDefiningOp<ConcatOp>();
    auto rhs = op.getRhs().getDefiningOp<ConcatOp>();
    if (!lhs || !rhs || lhs.getAxis() != rhs.getAxis())
      return failure();
    SmallVector<Piece> left = piecesOf(lhs), right = piecesOf(rhs);
    if (!disjoint(left, right) || !disjoint(right, left))
      return failure();
    SmallVector<Piece> live;
    for (const Piece &p : llvm::concat<Piece>(left, right))
      if (!p.zero)
        live.push_back(p);
    llvm::sort(live, [](const Piece &a, const Piece &b) { return a.begin < b.begin; });
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = lhs.getAxis(), total = type.getDimSize(axis), at = 0;
    SmallVector<Value> inputs;
    auto zeros = [&](int64_t width) {
      SmallVector<int64_t> shape(type.getShape());
      shape[axis] = width;
      auto zeroType = RankedTensorType::get(shape, type.getElementType());
      inputs.push_back(rewriter.create<ConstantOp>(
          op.getLoc(), DenseElementsAttr::get(zeroType, rewriter.getZeroAttr(type.getElementType()))));
    };
    for (const Piece &p : live) {
      if (p.begin > at)
        zeros(p.begin - at);
      inputs.push_back(p.value);
      at = p.end;
    }
    if (at < total)
      zeros(total - at);
    if (inputs.size() == 1) {
      rewriter.replaceOp(op, inputs);
      return success();
    }
    rewriter.replaceOpWithNewOp<ConcatOp>(op, inputs, axis);
    return success();
  }
};

/// Whether `perm` swaps the last two dimensions and keeps the others: the
/// transpose of every matrix of a batch.
bool swapsMatrixDims(ArrayRef<int64_t> perm) {
  int64_t rank = perm.size();
  if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return false;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i)
      return false;
  return true;
}

/// matmul(transpose(a), b), the transpose swapping a's matrix dims: the
/// matmul reads a with transpose_lhs flipped (likewise b), so attention's
/// q^T k and the gradients through it never materialise the transpose.
struct MatmulOfTranspose : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    Value lhs = op.getLhs(), rhs = op.getRhs();
    bool transposeLhs = op.getTransposeLhs(), transposeRhs = op.getTransposeRhs();
    bool folded = false;
    auto fold = [&](Value &operand, bool &flag) {
      auto transpose = operand.getDefiningOp<TransposeOp>();
      if (!transpose || !swapsMatrixDims(transpose.getPerm()))
        return;
      operand = transpose.getX();
      flag = !flag;
      folded = true;
    };
    fold(lhs, transposeLhs);
    fold(rhs, transposeRhs);
    if (!folded)
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(op, lhs, rhs, transposeLhs, transposeRhs);
    return success();
  }
};

/// one_hot(ids) @ W: each row of the product is W's row ids[i] (W^T's
/// column for transpose_rhs, a linear layer's weight), so it is a lookup,
/// tf.gather, with no GEMM and no one-hot in memory. The lookup adds no
/// products of zeros: the same values (an infinite or NaN weight poisons only
/// its own rows; -0 stays -0) and, on the GPU, no tf32 or bf16 rounding of W.
/// A one-hot of more leading dims, reshaped to rows, becomes the lookup in
/// the ids' shape reshaped to rows (tf-fuse joins the ops on the rows to it
/// in that shape: a bias, positions added after the reshape back).
struct MatmulOfOneHot : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
    if (op.getTransposeLhs() || lhsType.getRank() != 2 ||
        cast<RankedTensorType>(op.getRhs().getType()).getRank() != 2)
      return failure();
    Value hot = op.getLhs();
    if (auto reshape = hot.getDefiningOp<ReshapeOp>())
      hot = reshape.getX();
    auto oneHot = hot.getDefiningOp<OneHotOp>();
    // The reshape (if any) merges only the ids' dims: the classes stay last.
    if (!oneHot || oneHot.getDepthAttr().getInt() != lhsType.getDimSize(1))
      return failure();
    Value lookup =
        rewriter.create<GatherOp>(op.getLoc(), op.getRhs(), oneHot.getIds(), op.getTransposeRhs());
    if (lookup.getType() != op.getType())
      lookup = rewriter.create<ReshapeOp>(op.getLoc(), op.getType(), lookup);
    rewriter.replaceOp(op, lookup);
    return success();
  }
};

/// transpose(a @ b) swapping the product's matrix dims, the matmul read by
/// nothing else: (a b)^T = b^T a^T, one matmul that writes the transposed
/// product directly (the same sums in the same order, so the same bits).
struct TransposeOfMatmul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto matmul = op.getX().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() || !swapsMatrixDims(op.getPerm()))
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(op, matmul.getRhs(), matmul.getLhs(),
                                          !matmul.getTransposeRhs(), !matmul.getTransposeLhs());
    rewriter.eraseOp(matmul);
    return success();
  }
};

} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<AddOfDisjointConcats>(context);
}

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<MatmulOfTranspose, MatmulOfOneHot>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<TransposeOfMatmul>(context);
}

//===----------------------------------------------------------------------===//
// Decompositions
//===----------------------------------------------------------------------===//

SmallVector<Value> AttentionOp::decompose(OpBuilder &b) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(*this);
  Location loc = getLoc();
  Value logits = b.create<MatmulOp>(loc, getQ(), getK(), UnitAttr(), b.getUnitAttr());
  auto type = cast<RankedTensorType>(logits.getType());
  auto splat = [&](double v) -> Value {
    return b.create<ConstantOp>(loc,
                                DenseElementsAttr::get(type, b.getF32FloatAttr(v).getValue()));
  };
  Value scaled = b.create<MulOp>(loc, logits, splat(getScale().convertToDouble()));
  if (Value mask = getMask())
    scaled = b.create<SelectOp>(loc, mask, scaled, splat(-9e15)); // the tutorials' fill
  Value weights = b.create<SoftmaxOp>(loc, scaled, type.getRank() - 1);
  Value values = b.create<MatmulOp>(loc, weights, getV(), UnitAttr(), UnitAttr());
  SmallVector<Value> results = {values};
  if (getWeights())
    results.push_back(weights);
  return results;
}
