//===- Decompose.cpp - fused tf ops as plain tf ops -----------------------===//
//
// tf.attention, tf.attention_grad, tf.layer_norm, tf.layer_norm_grad and
// tf.cross_entropy_grad are fused ops: the CPU backend runs the middle three
// as kernels of its runtime (tfc_attention_forward/_backward,
// tfc_layer_norm_backward) or as a dedicated loop nest, the CUDA backend
// all but attention with weights. A backend without such kernels (the CPU
// for cross_entropy_grad) rewrites them here into the ops every backend
// lowers: matmul (transposes as its flags), softmax, one_hot, transpose,
// reduce_sum/reduce_mean, broadcast_in_dim, elementwise arithmetic, rsqrt
// and select. Each rewrite spells out the formulas of TfOps.td in the
// order the reference interpreter evaluates them, so the interpreter gives
// the decomposed function the original's results within rounding (the
// attention ones bit for bit: the same sums in the same order).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

namespace tfc {
#define GEN_PASS_DEF_TFDECOMPOSE
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

/// The ops the rewrites build, at one location.
struct Emit {
  PatternRewriter &b;
  Location loc;

  static RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

  /// A splat of the f32 `value` (an attribute's value, so no rounding
  /// beyond the attribute's own).
  Value splat(RankedTensorType type, const APFloat &value) {
    return b.create<tf::ConstantOp>(loc, DenseElementsAttr::get(type, value));
  }
  Value splat(RankedTensorType type, double value) {
    return splat(type, b.getF32FloatAttr(value).getValue());
  }
  Value add(Value x, Value y) { return b.create<tf::AddOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<tf::SubOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<tf::MulOp>(loc, x, y); }
  Value rsqrt(Value x) { return b.create<tf::RsqrtOp>(loc, x); }
  Value select(Value c, Value x, Value y) { return b.create<tf::SelectOp>(loc, c, x, y); }
  Value matmul(Value x, Value y, bool tx, bool ty) {
    return b.create<tf::MatmulOp>(loc, x, y, tx, ty);
  }
  Value softmax(Value x, int64_t axis) { return b.create<tf::SoftmaxOp>(loc, x, axis); }
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    return b.create<tf::TransposeOp>(loc, x, perm);
  }
  Value div(Value x, Value y) { return b.create<tf::DivOp>(loc, x, y); }
  Value sum(Value x, ArrayRef<int64_t> axes) {
    return axes.empty() ? x : b.create<tf::ReduceSumOp>(loc, x, axes).getResult();
  }
  Value mean(Value x, ArrayRef<int64_t> axes) {
    return axes.empty() ? x : b.create<tf::ReduceMeanOp>(loc, x, axes).getResult();
  }
  Value broadcast(Value x, ArrayRef<int64_t> dims, RankedTensorType type) {
    return x.getType() == type ? x
                               : b.create<tf::BroadcastInDimOp>(loc, type, x, dims).getResult();
  }
};

/// 0, 1, ..., n - 1: the leading dims (what a reduction over the last dim
/// keeps, or the rows a column reduction sums).
SmallVector<int64_t> leading(int64_t n) {
  SmallVector<int64_t> dims(n);
  for (int64_t i = 0; i < n; ++i)
    dims[i] = i;
  return dims;
}

/// `values = softmax(scale q k^T, masked) v` (and the weights): the
/// dialect's own definition, which tf-fuse and tf-lower-to-linalg use for
/// an attention whose weights are read.
struct AttentionDecomposition : OpRewritePattern<tf::AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::AttentionOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.decompose(rewriter));
    return success();
  }
};

/// The formulas of tf.attention_grad (TfOps.td), as TfGradients.cpp spells
/// out attention's VJP when the weights have an adjoint, with the scale
/// taken into dS as the interpreter does (one multiply on [Tq, Tk] instead
/// of two on the operands' shapes):
///   S = scale q k^T (-9e15 where the mask is false), P = softmax(S)
///   dV = P^T dO,  dP = dO V^T,  dS = scale P (dP - Σ_row dP P) (0 if masked)
///   dQ = dS K,  dK = dS^T Q
struct AttentionGradDecomposition : OpRewritePattern<tf::AttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::AttentionGradOp op, PatternRewriter &rewriter) const override {
    Emit e{rewriter, op.getLoc()};
    Value q = op.getQ(), k = op.getK(), v = op.getV(), mask = op.getMask();
    Value dO = op.getDvalues();
    int64_t rank = Emit::typeOf(q).getRank(), last = rank - 1;
    const APFloat &scale = op.getScaleAttr().getValue();

    Value s = e.matmul(q, k, false, true); // [B..., Tq, Tk]
    RankedTensorType st = Emit::typeOf(s);
    s = e.mul(s, e.splat(st, scale));
    if (mask) // the tutorials' masked_fill, as the forward
      s = e.select(mask, s, e.splat(st, -9e15));
    Value p = e.softmax(s, last);

    Value dv = e.matmul(p, dO, true, false); // P^T dO: [B..., Tk, Dv]
    Value dp = e.matmul(dO, v, false, true); // dO V^T: [B..., Tq, Tk]
    Value rowDot = e.sum(e.mul(dp, p), {last});
    Value centred = e.sub(dp, e.broadcast(rowDot, leading(rank - 1), st));
    Value ds = e.mul(e.mul(p, centred), e.splat(st, scale));
    if (mask) // a fully masked row has uniform P but constant logits
      ds = e.select(mask, ds, e.splat(st, 0.0));
    Value dq = e.matmul(ds, k, false, false);  // [B..., Tq, D]
    Value dk = e.matmul(ds, q, true, false);   // [B..., Tk, D]
    rewriter.replaceOp(op, {dq, dk, dv});
    return success();
  }
};

/// What layer_norm and layer_norm_grad share: per row (the last dim) the
/// mean, the biased variance, rstd = rsqrt(var + epsilon) and x̂.
struct Normalised {
  Value rstd;  // [rows...], broadcast to x's shape
  Value xhat;  // (x - mean) rstd
};

Normalised normalise(Emit &e, Value x, const APFloat &epsilon) {
  RankedTensorType xt = Emit::typeOf(x);
  int64_t rank = xt.getRank(), last = rank - 1;
  SmallVector<int64_t> rows = leading(rank - 1);
  Value mean = e.mean(x, {last});
  Value centred = e.sub(x, e.broadcast(mean, rows, xt));
  Value var = e.mean(e.mul(centred, centred), {last});
  RankedTensorType rowType = Emit::typeOf(var);
  Value rstd = e.broadcast(e.rsqrt(e.add(var, e.splat(rowType, epsilon))), rows, xt);
  return {rstd, e.mul(centred, rstd)};
}

/// y = x̂ gamma + beta.
struct LayerNormDecomposition : OpRewritePattern<tf::LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::LayerNormOp op, PatternRewriter &rewriter) const override {
    Emit e{rewriter, op.getLoc()};
    RankedTensorType xt = Emit::typeOf(op.getX());
    int64_t last = xt.getRank() - 1;
    Normalised n = normalise(e, op.getX(), op.getEpsilon());
    Value gamma = e.broadcast(op.getGamma(), {last}, xt);
    Value beta = e.broadcast(op.getBeta(), {last}, xt);
    rewriter.replaceOp(op, e.add(e.mul(n.xhat, gamma), beta));
    return success();
  }
};

/// The formulas of tf.layer_norm_grad (TfOps.td), g the adjoint of y:
///   dx̂ = g gamma,  dx = rstd (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂)),
///   dgamma = Σ_rows g x̂,  dbeta = Σ_rows g.
struct LayerNormGradDecomposition : OpRewritePattern<tf::LayerNormGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::LayerNormGradOp op, PatternRewriter &rewriter) const override {
    Emit e{rewriter, op.getLoc()};
    RankedTensorType xt = Emit::typeOf(op.getX());
    int64_t rank = xt.getRank(), last = rank - 1;
    SmallVector<int64_t> rows = leading(rank - 1);
    Value g = op.getGrad();
    Normalised n = normalise(e, op.getX(), op.getEpsilon());
    Value dxhat = e.mul(g, e.broadcast(op.getGamma(), {last}, xt));
    Value meanDxhat = e.broadcast(e.mean(dxhat, {last}), rows, xt);
    Value meanDxhatXhat = e.broadcast(e.mean(e.mul(dxhat, n.xhat), {last}), rows, xt);
    Value dx = e.mul(n.rstd, e.sub(e.sub(dxhat, meanDxhat), e.mul(n.xhat, meanDxhatXhat)));
    Value dgamma = e.sum(e.mul(g, n.xhat), rows);
    Value dbeta = e.sum(g, rows);
    rewriter.replaceOp(op, {dx, dgamma, dbeta});
    return success();
  }
};

/// The formula of tf.cross_entropy_grad (TfOps.td), in the ops and order
/// cross_entropy's VJP emitted before the fused op existed (so the CPU's
/// code is what it was): one_hot moved to the class axis, softmax,
///   dlogits = (softmax(logits) - one_hot(labels)) (broadcast(g) / N).
struct CrossEntropyGradDecomposition : OpRewritePattern<tf::CrossEntropyGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::CrossEntropyGradOp op,
                                PatternRewriter &rewriter) const override {
    Emit e{rewriter, op.getLoc()};
    Value logits = op.getLogits();
    RankedTensorType type = Emit::typeOf(logits);
    int64_t axis = op.getAxis(), rank = type.getRank();
    Value oneHot =
        rewriter.create<tf::OneHotOp>(op.getLoc(), op.getLabels(), type.getDimSize(axis));
    if (axis != rank - 1) {
      SmallVector<int64_t> perm;
      for (int64_t d = 0; d < rank; ++d)
        perm.push_back(d < axis ? d : d == axis ? rank - 1 : d - 1);
      oneHot = e.transpose(oneHot, perm);
    }
    Value p = e.softmax(logits, axis);
    double positions = double(Emit::typeOf(op.getLabels()).getNumElements());
    Value g = e.broadcast(op.getGrad(), {}, type);
    Value scaled = e.div(g, e.splat(type, positions));
    rewriter.replaceOp(op, e.mul(e.sub(p, oneHot), scaled));
    return success();
  }
};

constexpr StringLiteral kAttention = "attention";
constexpr StringLiteral kAttentionGrad = "attention_grad";
constexpr StringLiteral kLayerNorm = "layer_norm";
constexpr StringLiteral kLayerNormGrad = "layer_norm_grad";
constexpr StringLiteral kCrossEntropyGrad = "cross_entropy_grad";

struct TfDecomposePass : tfc::impl::TfDecomposeBase<TfDecomposePass> {
  using TfDecomposeBase::TfDecomposeBase;

  void runOnOperation() override {
    // Which ops: the listed ones (a `tf.` prefix is accepted), else all.
    llvm::StringSet<> chosen;
    for (StringRef name : ops) {
      name.consume_front("tf.");
      if (!llvm::is_contained(
              {kAttention, kAttentionGrad, kLayerNorm, kLayerNormGrad, kCrossEntropyGrad}, name)) {
        getOperation().emitError("tf-decompose: unknown op '")
            << name
            << "' in ops (attention, attention_grad, layer_norm, layer_norm_grad, "
               "cross_entropy_grad)";
        return signalPassFailure();
      }
      chosen.insert(name);
    }
    auto wanted = [&](StringRef name) { return chosen.empty() || chosen.contains(name); };

    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    if (wanted(kAttention))
      patterns.add<AttentionDecomposition>(ctx);
    if (wanted(kAttentionGrad))
      patterns.add<AttentionGradDecomposition>(ctx);
    if (wanted(kLayerNorm))
      patterns.add<LayerNormDecomposition>(ctx);
    if (wanted(kLayerNormGrad))
      patterns.add<LayerNormGradDecomposition>(ctx);
    if (wanted(kCrossEntropyGrad))
      patterns.add<CrossEntropyGradDecomposition>(ctx);
    FrozenRewritePatternSet frozen(std::move(patterns));

    // Only the fused ops themselves are visited: the rest of the module,
    // and the ops the rewrites create, stay exactly as they are (no folding).
    SmallVector<Operation *> targets;
    getOperation().walk([&](Operation *op) {
      if ((isa<tf::AttentionOp>(op) && wanted(kAttention)) ||
          (isa<tf::AttentionGradOp>(op) && wanted(kAttentionGrad)) ||
          (isa<tf::LayerNormOp>(op) && wanted(kLayerNorm)) ||
          (isa<tf::LayerNormGradOp>(op) && wanted(kLayerNormGrad)) ||
          (isa<tf::CrossEntropyGradOp>(op) && wanted(kCrossEntropyGrad)))
        targets.push_back(op);
    });
    if (targets.empty())
      return;
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    bool changed = false, allErased = false;
    if (failed(applyOpPatternsAndFold(targets, frozen, config, &changed, &allErased)) ||
        !allErased) {
      getOperation().emitError("tf-decompose: an op could not be decomposed");
      return signalPassFailure();
    }
  }
};

} // namespace
