//===- TfGradients.cpp - the vector-Jacobian product of every tf op -------===//
//
// Each differentiable op's GradientOpInterface::buildGradient: given the
// adjoints g of its results, it appends tf ops that compute the adjoint of
// each operand. Everything is written in tf ops (so the interpreter checks it
// and every backend lowers it), reusing forward results where they help:
// softmax's backward reads y, never recomputes it.
//
// Conventions: a null result adjoint is zero; a non-float operand (labels,
// ids, masks, the dropout seed) gets a null adjoint. At a tie (max, min,
// relu at 0) the adjoint goes to one side; reduce_max splits it evenly.
//
//===----------------------------------------------------------------------===//

#include "dialect/TfDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace tfc::tf;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

bool isFloatTensor(Value v) { return tensorType(v).getElementType().isF32(); }

/// A small emitter of tf ops at one location, so each VJP below reads like
/// its formula.
struct Emit {
  OpBuilder &b;
  Location loc;

  Value splat(Type type, double value) {
    auto t = cast<RankedTensorType>(type);
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), value)));
  }
  Value zerosLike(Value v) { return splat(v.getType(), 0.0); }
  Value splatLike(Value v, double value) { return splat(v.getType(), value); }

  Value neg(Value x) { return b.create<NegOp>(loc, x); }
  Value exp(Value x) { return b.create<ExpOp>(loc, x); }
  Value erf(Value x) { return b.create<ErfOp>(loc, x); }
  Value rsqrt(Value x) { return b.create<RsqrtOp>(loc, x); }
  Value sin(Value x) { return b.create<SinOp>(loc, x); }
  Value cos(Value x) { return b.create<CosOp>(loc, x); }
  Value add(Value x, Value y) { return b.create<AddOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<SubOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<MulOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<DivOp>(loc, x, y); }
  Value mul(Value x, double c) { return mul(x, splatLike(x, c)); }
  Value div(Value x, double c) { return div(x, splatLike(x, c)); }
  Value compare(ComparePredicate p, Value x, Value y) { return b.create<CompareOp>(loc, p, x, y); }
  Value select(Value c, Value x, Value y) { return b.create<SelectOp>(loc, c, x, y); }
  Value toFloat(Value x) { return b.create<CastOp>(loc, tensorType(x).clone(b.getF32Type()), x); }
  Value matmul(Value x, Value y, bool tx, bool ty) { return b.create<MatmulOp>(loc, x, y, tx, ty); }
  Value transpose(Value x, ArrayRef<int64_t> perm) { return b.create<TransposeOp>(loc, x, perm); }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    RankedTensorType t = tensorType(x).clone(shape);
    return t == x.getType() ? x : b.create<ReshapeOp>(loc, t, x).getResult();
  }
  Value slice(Value x, ArrayRef<int64_t> start, ArrayRef<int64_t> limit, ArrayRef<int64_t> stride) {
    return b.create<SliceOp>(loc, x, start, limit, stride);
  }
  /// x[..., start:limit, ...] along `axis`, stride 1.
  Value sliceAxis(Value x, int64_t axis, int64_t start, int64_t limit) {
    ArrayRef<int64_t> shape = tensorType(x).getShape();
    SmallVector<int64_t> lo(shape.size(), 0), hi(shape), step(shape.size(), 1);
    lo[axis] = start;
    hi[axis] = limit;
    return slice(x, lo, hi, step);
  }
  Value concat(ValueRange xs, int64_t axis) {
    return xs.size() == 1 ? xs.front() : b.create<ConcatOp>(loc, xs, axis).getResult();
  }
  Value sum(Value x, ArrayRef<int64_t> axes) {
    return axes.empty() ? x : b.create<ReduceSumOp>(loc, x, axes).getResult();
  }
  Value broadcast(Value x, ArrayRef<int64_t> dims, Type type) {
    return x.getType() == type ? x : b.create<BroadcastInDimOp>(loc, type, x, dims).getResult();
  }
  /// Broadcasts a reduction of `like` over `axes` back to `like`'s shape.
  Value unreduce(Value x, ArrayRef<int64_t> axes, Value like) {
    SmallVector<int64_t> kept;
    for (int64_t d = 0; d < tensorType(like).getRank(); ++d)
      if (!llvm::is_contained(axes, d))
        kept.push_back(d);
    return broadcast(x, kept, like.getType());
  }
  /// Σ_axis x, broadcast back over `axis`.
  Value sumKeep(Value x, int64_t axis) { return unreduce(sum(x, {axis}), {axis}, x); }
  /// Zero padding of `before` and `after` elements along `axis`.
  Value pad(Value x, int64_t axis, int64_t before, int64_t after) {
    SmallVector<Value> parts;
    auto zeros = [&](int64_t n) {
      SmallVector<int64_t> shape(tensorType(x).getShape());
      shape[axis] = n;
      return splat(tensorType(x).clone(shape), 0.0);
    };
    if (before > 0)
      parts.push_back(zeros(before));
    parts.push_back(x);
    if (after > 0)
      parts.push_back(zeros(after));
    return concat(parts, axis);
  }
};

/// True (and all operand adjoints null) when every result adjoint is null.
bool noAdjoint(Operation *op, ArrayRef<Value> resultGrads, SmallVectorImpl<Value> &operandGrads) {
  if (llvm::any_of(resultGrads, [](Value g) { return bool(g); }))
    return false;
  operandGrads.append(op->getNumOperands(), Value());
  return true;
}

} // namespace

// Every VJP has this signature and starts the same way: when no result has an
// adjoint, every operand gets a null one; otherwise `e` emits tf ops at the
// op's location and `g` is the adjoint of result 0.
#define TF_VJP(OP)                                                                                 \
  LogicalResult OP::buildGradient(OpBuilder &builder, ArrayRef<Value> resultGrads,                 \
                                  SmallVectorImpl<Value> &operandGrads)

#define TF_VJP_PROLOGUE                                                                            \
  if (noAdjoint(getOperation(), resultGrads, operandGrads))                                        \
    return success();                                                                              \
  Emit e{builder, getLoc()};                                                                       \
  Value g = resultGrads[0];                                                                        \
  (void)e, (void)g;

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

// dx = -g
TF_VJP(NegOp) {
  TF_VJP_PROLOGUE
  operandGrads.push_back(e.neg(g));
  return success();
}

// dx = g * exp(x) = g * y
TF_VJP(ExpOp) {
  TF_VJP_PROLOGUE
  operandGrads.push_back(e.mul(g, getResult()));
  return success();
}

// dx = g / x
TF_VJP(LogOp) {
  TF_VJP_PROLOGUE
  operandGrads.push_back(e.div(g, getX()));
  return success();
}

// dx = g / (2 sqrt(x)) = g / (y + y)
TF_VJP(SqrtOp) {
  TF_VJP_PROLOGUE
  Value y = getResult();
  operandGrads.push_back(e.div(g, e.add(y, y)));
  return success();
}

// y = x^(-1/2): dx = -g x^(-3/2) / 2 = -(g y) / (x + x)
TF_VJP(RsqrtOp) {
  TF_VJP_PROLOGUE
  Value x = getX();
  operandGrads.push_back(e.neg(e.div(e.mul(g, getResult()), e.add(x, x))));
  return success();
}

// dx = g (1 - y^2)
TF_VJP(TanhOp) {
  TF_VJP_PROLOGUE
  Value y = getResult();
  operandGrads.push_back(e.mul(g, e.sub(e.splatLike(y, 1.0), e.mul(y, y))));
  return success();
}

// dx = g cos(x)
TF_VJP(SinOp) {
  TF_VJP_PROLOGUE
  operandGrads.push_back(e.mul(g, e.cos(getX())));
  return success();
}

// dx = -g sin(x)
TF_VJP(CosOp) {
  TF_VJP_PROLOGUE
  operandGrads.push_back(e.neg(e.mul(g, e.sin(getX()))));
  return success();
}

// dx = y > 0 ? g : 0 (y > 0 exactly where x > 0): read from the output, so
// that x dies at the relu and a GEMM's epilogue can compute y in place.
TF_VJP(ReluOp) {
  TF_VJP_PROLOGUE
  Value y = getResult(), zero = e.zerosLike(y);
  operandGrads.push_back(e.select(e.compare(ComparePredicate::gt, y, zero), g, zero));
  return success();
}

// y = x Phi(x): dx = g (Phi(x) + x phi(x)), with Phi(x) = (1 + erf(x/√2))/2
// and phi(x) = exp(-x²/2)/√(2π).
TF_VJP(GeluOp) {
  TF_VJP_PROLOGUE
  Value x = getX();
  Value xs = e.mul(x, M_SQRT1_2);
  Value cdf = e.mul(e.add(e.splatLike(x, 1.0), e.erf(xs)), 0.5);
  Value pdf = e.mul(e.exp(e.neg(e.mul(xs, xs))), 0.5 * M_2_SQRTPI * M_SQRT1_2);
  operandGrads.push_back(e.mul(g, e.add(cdf, e.mul(x, pdf))));
  return success();
}

// dx = g (2/√π) exp(-x²)
TF_VJP(ErfOp) {
  TF_VJP_PROLOGUE
  Value x = getX();
  operandGrads.push_back(e.mul(e.mul(g, e.exp(e.neg(e.mul(x, x)))), M_2_SQRTPI));
  return success();
}

// d(a + b) = (g, g)
TF_VJP(AddOp) {
  TF_VJP_PROLOGUE
  operandGrads.append({g, g});
  return success();
}

// d(a - b) = (g, -g)
TF_VJP(SubOp) {
  TF_VJP_PROLOGUE
  operandGrads.append({g, e.neg(g)});
  return success();
}

// d(a b) = (g b, g a)
TF_VJP(MulOp) {
  TF_VJP_PROLOGUE
  operandGrads.append({e.mul(g, getRhs()), e.mul(g, getLhs())});
  return success();
}

// d(a / b) = (g / b, -g a / b² = -g y / b)
TF_VJP(DivOp) {
  TF_VJP_PROLOGUE
  Value b = getRhs();
  operandGrads.append({e.div(g, b), e.neg(e.div(e.mul(g, getResult()), b))});
  return success();
}

// d max(a, b) = (a >= b ? g : 0, a >= b ? 0 : g)
TF_VJP(MaxOp) {
  TF_VJP_PROLOGUE
  Value zero = e.zerosLike(g);
  Value lhsWins = e.compare(ComparePredicate::ge, getLhs(), getRhs());
  operandGrads.append({e.select(lhsWins, g, zero), e.select(lhsWins, zero, g)});
  return success();
}

// d min(a, b) = (a <= b ? g : 0, a <= b ? 0 : g)
TF_VJP(MinOp) {
  TF_VJP_PROLOGUE
  Value zero = e.zerosLike(g);
  Value lhsWins = e.compare(ComparePredicate::le, getLhs(), getRhs());
  operandGrads.append({e.select(lhsWins, g, zero), e.select(lhsWins, zero, g)});
  return success();
}

// d select(c, a, b) = (none, c ? g : 0, c ? 0 : g)
TF_VJP(SelectOp) {
  TF_VJP_PROLOGUE
  operandGrads.push_back(Value());
  if (!isFloatTensor(getOnTrue())) {
    operandGrads.append({Value(), Value()});
    return success();
  }
  Value zero = e.zerosLike(g);
  operandGrads.append({e.select(getCond(), g, zero), e.select(getCond(), zero, g)});
  return success();
}

// f32 -> f32 is the identity: dx = g. Integer and boolean results carry no
// adjoint, and integer or boolean operands take none.
TF_VJP(CastOp) {
  TF_VJP_PROLOGUE
  bool floatToFloat = isFloatTensor(getX()) && isFloatTensor(getResult());
  operandGrads.push_back(floatToFloat ? g : Value());
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

// dx = Σ of g over the result dims x does not map to and over the size-1
// operand dims that were expanded, reshaped to x.
TF_VJP(BroadcastInDimOp) {
  TF_VJP_PROLOGUE
  if (!isFloatTensor(getX())) {
    operandGrads.push_back(Value());
    return success();
  }
  RankedTensorType in = tensorType(getX()), out = tensorType(getResult());
  ArrayRef<int64_t> dims = getDims();
  SmallVector<int64_t> axes;
  for (int64_t r = 0; r < out.getRank(); ++r) {
    const int64_t *it = llvm::find(dims, r);
    if (it == dims.end() || (in.getDimSize(it - dims.begin()) == 1 && out.getDimSize(r) != 1))
      axes.push_back(r);
  }
  operandGrads.push_back(e.reshape(e.sum(g, axes), in.getShape()));
  return success();
}

// dx = reshape(g) back to x's shape
TF_VJP(ReshapeOp) {
  TF_VJP_PROLOGUE
  operandGrads.push_back(isFloatTensor(getX()) ? e.reshape(g, tensorType(getX()).getShape())
                                               : Value());
  return success();
}

// dx = transpose(g, perm⁻¹)
TF_VJP(TransposeOp) {
  TF_VJP_PROLOGUE
  if (!isFloatTensor(getX())) {
    operandGrads.push_back(Value());
    return success();
  }
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  operandGrads.push_back(e.transpose(g, inverse));
  return success();
}

// dx scatters g into zeros at start + i * stride, one dimension at a time:
// interleave stride - 1 zeros after each element (reshape, concat, reshape),
// trim past the last element, then pad to x's extent.
TF_VJP(SliceOp) {
  TF_VJP_PROLOGUE
  if (!isFloatTensor(getX())) {
    operandGrads.push_back(Value());
    return success();
  }
  ArrayRef<int64_t> xShape = tensorType(getX()).getShape();
  ArrayRef<int64_t> start = getStart(), stride = getStride();
  Value dx = g;
  for (int64_t d = 0; d < int64_t(xShape.size()); ++d) {
    SmallVector<int64_t> shape(tensorType(dx).getShape());
    int64_t n = shape[d], s = stride[d];
    if (n > 1 && s > 1) {
      SmallVector<int64_t> split(shape);
      split.insert(split.begin() + d + 1, 1);
      Value v = e.pad(e.reshape(dx, split), d + 1, 0, s - 1);
      SmallVector<int64_t> merged(shape);
      merged[d] = n * s;
      dx = e.sliceAxis(e.reshape(v, merged), d, 0, (n - 1) * s + 1);
    }
    int64_t span = (n - 1) * s + 1;
    dx = e.pad(dx, d, start[d], xShape[d] - start[d] - span);
  }
  operandGrads.push_back(dx);
  return success();
}

// d input_i = g[..., offset_i : offset_i + n_i, ...] along the axis
TF_VJP(ConcatOp) {
  TF_VJP_PROLOGUE
  int64_t axis = getAxis(), offset = 0;
  for (Value x : getInputs()) {
    int64_t n = tensorType(x).getDimSize(axis);
    operandGrads.push_back(isFloatTensor(x) ? e.sliceAxis(g, axis, offset, offset + n) : Value());
    offset += n;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// dx = g broadcast over the reduced axes
TF_VJP(ReduceSumOp) {
  TF_VJP_PROLOGUE
  operandGrads.push_back(e.unreduce(g, getAxes(), getX()));
  return success();
}

// dx = g broadcast over the reduced axes / their element count
TF_VJP(ReduceMeanOp) {
  TF_VJP_PROLOGUE
  RankedTensorType x = tensorType(getX());
  double count = double(x.getNumElements()) / double(tensorType(getResult()).getNumElements());
  operandGrads.push_back(e.div(e.unreduce(g, getAxes(), getX()), count));
  return success();
}

// dx = [x == y] g / (number of maxima): split evenly between tied maxima
TF_VJP(ReduceMaxOp) {
  TF_VJP_PROLOGUE
  Value x = getX();
  ArrayRef<int64_t> axes = getAxes();
  Value isMax = e.toFloat(e.compare(ComparePredicate::eq, x, e.unreduce(getResult(), axes, x)));
  Value share = e.div(g, e.sum(isMax, axes));
  operandGrads.push_back(e.mul(isMax, e.unreduce(share, axes, x)));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and neural-network ops
//===----------------------------------------------------------------------===//

// C = op(A) op(B), op = transpose when flagged; with G = dC:
//   C = A B:     dA = G B^T,   dB = A^T G
//   C = A B^T:   dA = G B,     dB = G^T A
//   C = A^T B:   dA = B G^T,   dB = A G
//   C = A^T B^T: dA = B^T G^T, dB = G^T A^T
TF_VJP(MatmulOp) {
  TF_VJP_PROLOGUE
  Value a = getLhs(), b = getRhs();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  Value da = ta ? e.matmul(b, g, tb, true) : e.matmul(g, b, false, !tb);
  Value db = tb ? e.matmul(g, a, true, ta) : e.matmul(a, g, !ta, false);
  operandGrads.append({da, db});
  return success();
}

// dx = y (g - Σ_axis g y)
TF_VJP(SoftmaxOp) {
  TF_VJP_PROLOGUE
  Value y = getResult();
  int64_t axis = getAxis();
  operandGrads.push_back(e.mul(y, e.sub(g, e.sumKeep(e.mul(g, y), axis))));
  return success();
}

// dx = g - softmax(x) Σ_axis g, with softmax(x) = exp(y)
TF_VJP(LogSoftmaxOp) {
  TF_VJP_PROLOGUE
  int64_t axis = getAxis();
  operandGrads.push_back(e.sub(g, e.mul(e.exp(getResult()), e.sumKeep(g, axis))));
  return success();
}

// One tf.layer_norm_grad (its formulas in TfOps.td): a backend runs it as
// one pass over the rows instead of a dozen loops and reductions.
TF_VJP(LayerNormOp) {
  TF_VJP_PROLOGUE
  auto grad = builder.create<LayerNormGradOp>(getLoc(), getX(), getGamma(), g,
                                              getEpsilonAttr());
  operandGrads.append(grad->result_begin(), grad->result_end());
  return success();
}

// The same dropout (seed, sample offset, key, rate, mode) applied to g: the
// same mask and scale. The seed and the sample offset have no adjoint.
TF_VJP(DropoutOp) {
  TF_VJP_PROLOGUE
  operandGrads.append({builder.create<DropoutOp>(getLoc(), g, getSeed(), getSampleOffset(),
                                                 getRateAttr(), getKeyAttr(),
                                                 getSampleSizeAttr(), getTrainingAttr()),
                       Value()});
  if (getSampleOffset())
    operandGrads.push_back(Value());
  return success();
}

// P = softmax(S), S = scale q k^T with false-mask logits at -9e15 (the
// forward weights when it has them, else recomputed); with dO and dW the
// adjoints of values and weights:
//   dV = P^T dO,  dP = dO V^T + dW,  dS = P (dP - Σ_row dP P) (0 where masked),
//   dQ = scale dS K,  dK = scale dS^T Q.  The mask has no adjoint.
// Without dW this is one tf.attention_grad, which a backend runs as a fused
// kernel that never stores P; with dW (a loss on the weights) it is spelled
// out in tf ops.
TF_VJP(AttentionOp) {
  if (noAdjoint(getOperation(), resultGrads, operandGrads))
    return success();
  Emit e{builder, getLoc()};
  Value q = getQ(), k = getK(), v = getV(), mask = getMask();
  Value dO = resultGrads[0];
  Value dW = resultGrads.size() > 1 ? resultGrads[1] : Value();
  if (dO && !dW) {
    auto grad = builder.create<AttentionGradOp>(getLoc(), q, k, v, mask, dO, getScaleAttr());
    operandGrads.append(grad->result_begin(), grad->result_end());
    if (mask)
      operandGrads.push_back(Value());
    return success();
  }
  int64_t last = tensorType(q).getRank() - 1;
  double scale = getScale().convertToDouble();

  Value p = getWeights();
  if (!p) {
    Value s = e.mul(e.matmul(q, k, false, true), scale);
    if (mask)
      s = e.select(mask, s, e.splatLike(s, -9e15));
    p = builder.create<SoftmaxOp>(getLoc(), s, last);
  }
  Value dv = dO ? e.matmul(p, dO, true, false) : e.zerosLike(v);
  Value dp = dO ? e.matmul(dO, v, false, true) : Value();
  if (dW)
    dp = dp ? e.add(dp, dW) : dW;
  Value ds = e.mul(p, e.sub(dp, e.sumKeep(e.mul(dp, p), last)));
  if (mask) // a fully masked row has uniform P but constant logits
    ds = e.select(mask, ds, e.zerosLike(ds));
  operandGrads.append({e.mul(e.matmul(ds, k, false, false), scale),
                       e.mul(e.matmul(ds, q, true, false), scale), dv});
  if (mask)
    operandGrads.push_back(Value());
  return success();
}

// y[n,o,t] = b[o] + Σ_{c,j} w[o,c,j] xpad[n,c,t+j]. Both adjoints are
// convolutions again:
//   dw[o,c,j] = Σ_{n,t} g[n,o,t] xpad[n,c,t+j]
//             = conv1d(x^T, g^T, padding p)^T   (T swaps dims 0 and 1),
//   dx[n,c,s] = Σ_{o,j} w[o,c,j] g[n,o,s+p-j]
//             = conv1d(g, flip(w^T), padding K-1-p), cropped when p > K-1,
//   db = Σ_{n,t} g.
TF_VJP(Conv1dOp) {
  TF_VJP_PROLOGUE
  Value x = getX(), w = getWeight();
  int64_t pad = getPadding(), width = tensorType(x).getDimSize(2);
  int64_t kernel = tensorType(w).getDimSize(2);
  const int64_t swap01[] = {1, 0, 2};

  Value dwT = builder.create<Conv1dOp>(getLoc(), e.transpose(x, swap01), e.transpose(g, swap01),
                                       Value(), pad);
  Value dw = e.transpose(dwT, swap01);

  Value wT = e.transpose(w, swap01);
  SmallVector<Value> taps;
  for (int64_t j = kernel - 1; j >= 0; --j)
    taps.push_back(e.sliceAxis(wT, 2, j, j + 1));
  Value flipped = e.concat(taps, 2);
  int64_t fullPad = kernel - 1 - pad;
  Value dx = builder.create<Conv1dOp>(getLoc(), g, flipped, Value(), std::max<int64_t>(fullPad, 0));
  if (fullPad < 0)
    dx = e.sliceAxis(dx, 2, -fullPad, -fullPad + width);

  operandGrads.append({dx, dw});
  if (getBias())
    operandGrads.push_back(e.sum(g, {0, 2}));
  return success();
}

// dtable = one_hot(ids)^T g: each row gathers the adjoints of its lookups
// (a `columns` table, [D, V], is its transpose g^T one_hot(ids)). The ids
// have no adjoint.
TF_VJP(GatherOp) {
  TF_VJP_PROLOGUE
  RankedTensorType table = tensorType(getTable());
  bool columns = getColumns();
  int64_t lookups = tensorType(getIds()).getNumElements();
  Value ids = e.reshape(getIds(), {lookups});
  Value oneHot = builder.create<OneHotOp>(getLoc(), ids, table.getDimSize(columns ? 1 : 0));
  Value rows = e.reshape(g, {lookups, table.getDimSize(columns ? 0 : 1)});
  operandGrads.append(
      {columns ? e.matmul(rows, oneHot, true, false) : e.matmul(oneHot, rows, true, false),
       Value()});
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// dlogits = (softmax(logits) - one_hot(labels)) g / (number of label
// positions): one tf.cross_entropy_grad, which the CUDA backend runs as one
// kernel and tf-decompose spells out for the CPU. Labels have no adjoint.
TF_VJP(CrossEntropyOp) {
  TF_VJP_PROLOGUE
  operandGrads.append(
      {builder.create<CrossEntropyGradOp>(getLoc(), getLogits(), getLabels(), g, getAxisAttr()),
       Value()});
  return success();
}

// d mean((a - b)²) = (2 (a - b) g / N, -2 (a - b) g / N)
TF_VJP(MseOp) {
  TF_VJP_PROLOGUE
  Value diff = e.sub(getLhs(), getRhs());
  double n = double(tensorType(diff).getNumElements());
  Value da = e.div(e.mul(e.add(diff, diff), e.broadcast(g, {}, diff.getType())), n);
  operandGrads.append({da, e.neg(da)});
  return success();
}
