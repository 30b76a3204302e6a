//===- LowerToLinalg.cpp - tf ops to linalg/tensor/arith/math -------------===//
//
// One pattern per op family. Everything becomes a linalg.generic on tensors
// (bufferization and tiling come later), so each op's semantics is written
// once here as a scalar body plus indexing maps.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/lowering/DropoutInCode.h"
#include "compiler/lowering/KernelCalls.h"
#include "compiler/lowering/LinalgBuilders.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace tfc {
#define GEN_PASS_DEF_TFLOWERTOLINALG
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

/// Rewrites an op with one result into an elementwise generic whose scalar
/// body is `Body(builder, loc, op, args)`.
template <typename OpT, typename Body>
struct ElementwisePattern : OpRewritePattern<OpT> {
  ElementwisePattern(MLIRContext *ctx, Body body)
      : OpRewritePattern<OpT>(ctx), body(body) {}
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Value result = elementwise(rewriter, op.getLoc(), type, op->getOperands(),
                               [&](OpBuilder &b, Location loc, ValueRange args) {
                                 return body(b, loc, op, args);
                               });
    rewriter.replaceOp(op, result);
    return success();
  }
  Body body;
};

template <typename OpT, typename Body>
void addElementwise(RewritePatternSet &patterns, Body body) {
  patterns.add(std::make_unique<ElementwisePattern<OpT, Body>>(
      patterns.getContext(), body));
}

template <typename OpT, typename ArithOp>
void addBinaryArith(RewritePatternSet &patterns) {
  addElementwise<OpT>(patterns, [](OpBuilder &b, Location loc, OpT, ValueRange a) {
    return b.create<ArithOp>(loc, a[0], a[1]).getResult();
  });
}

template <typename OpT, typename MathOp>
void addUnaryMath(RewritePatternSet &patterns) {
  addElementwise<OpT>(patterns, [](OpBuilder &b, Location loc, OpT, ValueRange a) {
    return b.create<MathOp>(loc, a[0]).getResult();
  });
}

Value compareScalars(OpBuilder &b, Location loc, tf::ComparePredicate pred,
                     Value lhs, Value rhs) {
  using P = tf::ComparePredicate;
  if (isa<FloatType>(lhs.getType())) {
    // Ordered predicates, so a NaN compares false (as PyTorch); ne is
    // unordered so NaN != NaN holds.
    arith::CmpFPredicate fp;
    switch (pred) {
    case P::eq: fp = arith::CmpFPredicate::OEQ; break;
    case P::ne: fp = arith::CmpFPredicate::UNE; break;
    case P::lt: fp = arith::CmpFPredicate::OLT; break;
    case P::le: fp = arith::CmpFPredicate::OLE; break;
    case P::gt: fp = arith::CmpFPredicate::OGT; break;
    case P::ge: fp = arith::CmpFPredicate::OGE; break;
    }
    return b.create<arith::CmpFOp>(loc, fp, lhs, rhs);
  }
  arith::CmpIPredicate ip;
  switch (pred) {
  case P::eq: ip = arith::CmpIPredicate::eq; break;
  case P::ne: ip = arith::CmpIPredicate::ne; break;
  case P::lt: ip = arith::CmpIPredicate::slt; break;
  case P::le: ip = arith::CmpIPredicate::sle; break;
  case P::gt: ip = arith::CmpIPredicate::sgt; break;
  case P::ge: ip = arith::CmpIPredicate::sge; break;
  }
  return b.create<arith::CmpIOp>(loc, ip, lhs, rhs);
}

/// The interpreter's cast rules: f32 -> i32 truncates toward zero, i1 is
/// 0 or 1, and anything -> i1 is x != 0.
Value castScalar(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  if (to.isInteger(1)) {
    Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(from));
    return isa<FloatType>(from)
               ? b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, x, zero).getResult()
               : b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x, zero).getResult();
  }
  if (from.isInteger(1))
    return isa<FloatType>(to) ? b.create<arith::UIToFPOp>(loc, to, x).getResult()
                              : b.create<arith::ExtUIOp>(loc, to, x).getResult();
  if (isa<FloatType>(to))
    return b.create<arith::SIToFPOp>(loc, to, x);
  return b.create<arith::FPToSIOp>(loc, to, x);
}

struct ConstantLowering : OpRewritePattern<tf::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::ConstantOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

struct BroadcastLowering : OpRewritePattern<tf::BroadcastInDimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::BroadcastInDimOp op, PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getX().getType());
    auto out = cast<RankedTensorType>(op.getType());
    // Operand dim i reads loop dim dims[i], or 0 where it is a broadcast 1.
    SmallVector<AffineExpr> exprs;
    for (auto [i, d] : llvm::enumerate(op.getDims()))
      exprs.push_back(in.getDimSize(i) == 1 && out.getDimSize(d) != 1
                          ? rewriter.getAffineConstantExpr(0)
                          : rewriter.getAffineDimExpr(d));
    AffineMap inMap = AffineMap::get(out.getRank(), 0, exprs, rewriter.getContext());
    SmallVector<utils::IteratorType> iterators(out.getRank(), utils::IteratorType::parallel);
    Value result = buildGeneric(
        rewriter, op.getLoc(), out, op.getX(), inMap,
        rewriter.getMultiDimIdentityMap(out.getRank()), emptyLike(rewriter, op.getLoc(), out),
        iterators, [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TransposeLowering : OpRewritePattern<tf::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::TransposeOp op, PatternRewriter &rewriter) const override {
    auto out = cast<RankedTensorType>(op.getType());
    // Result dim i is operand dim perm[i]: operand dim j is read at the loop
    // dim i with perm[i] == j.
    ArrayRef<int64_t> perm = op.getPerm();
    SmallVector<AffineExpr> exprs(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      exprs[p] = rewriter.getAffineDimExpr(i);
    AffineMap inMap = AffineMap::get(out.getRank(), 0, exprs, rewriter.getContext());
    SmallVector<utils::IteratorType> iterators(out.getRank(), utils::IteratorType::parallel);
    Value result = buildGeneric(
        rewriter, op.getLoc(), out, op.getX(), inMap,
        rewriter.getMultiDimIdentityMap(out.getRank()), emptyLike(rewriter, op.getLoc(), out),
        iterators, [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A reshape as tensor.collapse_shape and/or tensor.expand_shape (through
/// 1-d when no grouping of dims maps one shape onto the other), never
/// tensor.reshape: MLIR 19's bufferization analysis counts a tensor.reshape
/// of a value as a conflict for the op that wrote it in place, so the
/// producer (a GEMM into its zero fill) would write a copy instead.
struct ReshapeLowering : OpRewritePattern<tf::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::ReshapeOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = cast<RankedTensorType>(op.getX().getType());
    auto out = cast<RankedTensorType>(op.getType());
    if (in == out) {
      rewriter.replaceOp(op, op.getX());
      return success();
    }
    if (out.getRank() < in.getRank()) {
      if (auto groups = getReassociationIndicesForReshape(in, out)) {
        rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, out, op.getX(), *groups);
        return success();
      }
    } else if (out.getRank() > in.getRank()) {
      if (auto groups = getReassociationIndicesForReshape(out, in)) {
        rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, out, op.getX(), *groups);
        return success();
      }
    }
    Value flat = op.getX();
    auto flatType = RankedTensorType::get({in.getNumElements()}, in.getElementType());
    ReassociationIndices all;
    for (int64_t i = 0; i < in.getRank(); ++i)
      all.push_back(i);
    if (in.getRank() != 1)
      flat = rewriter.create<tensor::CollapseShapeOp>(loc, flatType, flat,
                                                      SmallVector<ReassociationIndices>{all});
    if (out.getRank() == 1) {
      rewriter.replaceOp(op, flat);
      return success();
    }
    ReassociationIndices allOut;
    for (int64_t i = 0; i < out.getRank(); ++i)
      allOut.push_back(i);
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, out, flat,
                                                       SmallVector<ReassociationIndices>{allOut});
    return success();
  }
};

/// Reductions: loop over the operand's dims, the reduced ones as reduction
/// iterators, accumulating into an init filled with the identity.
template <typename OpT>
struct ReduceLowering : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = cast<RankedTensorType>(op.getX().getType());
    auto out = cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> axes = op.getAxes();
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < in.getRank(); ++d) {
      bool reduced = llvm::is_contained(axes, d);
      iterators.push_back(reduced ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
      if (!reduced)
        outExprs.push_back(rewriter.getAffineDimExpr(d));
    }
    bool isMax = std::is_same_v<OpT, tf::ReduceMaxOp>;
    Value identity = f32Const(rewriter, loc, isMax ? -INFINITY : 0.0);
    Value init = rewriter.create<linalg::FillOp>(loc, identity, emptyLike(rewriter, loc, out))
                     .getResult(0);
    AffineMap outMap = AffineMap::get(in.getRank(), 0, outExprs, rewriter.getContext());
    Value result = buildGeneric(
        rewriter, loc, out, op.getX(), rewriter.getMultiDimIdentityMap(in.getRank()),
        outMap, init, iterators, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          if (isMax)
            return b.create<arith::MaximumFOp>(l, a[0], a[1]);
          return b.create<arith::AddFOp>(l, a[0], a[1]);
        });
    if (std::is_same_v<OpT, tf::ReduceMeanOp>) {
      // Divide (not multiply by a rounded 1/n) to stay closest to the oracle.
      int64_t count = in.getNumElements() / std::max<int64_t>(out.getNumElements(), 1);
      result = elementwise(rewriter, loc, out, result,
                           [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return b.create<arith::DivFOp>(l, a[0], f32Const(b, l, double(count)));
                           });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// C[..., m, n] += A[..., m, k] * B[..., k, n] with the transposes folded
/// into the indexing maps.
struct MatmulLowering : OpRewritePattern<tf::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::MatmulOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto out = cast<RankedTensorType>(op.getType());
    int64_t batch = out.getRank() - 2, loops = out.getRank() + 1;
    auto dim = [&](int64_t i) { return rewriter.getAffineDimExpr(i); };
    SmallVector<AffineExpr> lhs, rhs, res;
    for (int64_t i = 0; i < batch; ++i) {
      lhs.push_back(dim(i));
      rhs.push_back(dim(i));
      res.push_back(dim(i));
    }
    AffineExpr m = dim(batch), n = dim(batch + 1), k = dim(batch + 2);
    lhs.append(op.getTransposeLhs() ? SmallVector<AffineExpr>{k, m} : SmallVector<AffineExpr>{m, k});
    rhs.append(op.getTransposeRhs() ? SmallVector<AffineExpr>{n, k} : SmallVector<AffineExpr>{k, n});
    res.append({m, n});
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<utils::IteratorType> iterators(loops - 1, utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value init = rewriter.create<linalg::FillOp>(loc, f32Const(rewriter, loc, 0.0),
                                                 emptyLike(rewriter, loc, out))
                     .getResult(0);
    Value result = buildGeneric(
        rewriter, loc, out, {op.getLhs(), op.getRhs()},
        {AffineMap::get(loops, 0, lhs, ctx), AffineMap::get(loops, 0, rhs, ctx)},
        AffineMap::get(loops, 0, res, ctx), init, iterators,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value prod = b.create<arith::MulFOp>(l, a[0], a[1]);
          return b.create<arith::AddFOp>(l, a[2], prod);
        });
    // tf-gemm-to-runtime turns marked contractions into the GEMM entry point
    // once they are on buffers; unmarked ones stay loops.
    result.getDefiningOp()->setAttr(kMatmulAttr, rewriter.getUnitAttr());
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : OpRewritePattern<tf::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::SliceOp op, PatternRewriter &rewriter) const override {
    auto out = cast<RankedTensorType>(op.getType());
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, out, op.getX(), ValueRange{}, ValueRange{}, ValueRange{}, op.getStart(),
        out.getShape(), op.getStride());
    return success();
  }
};

/// Each input is inserted at its offset along the axis of a fresh tensor.
struct ConcatLowering : OpRewritePattern<tf::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::ConcatOp op, PatternRewriter &rewriter) const override {
    auto out = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxisAttr().getInt();
    Value result = emptyLike(rewriter, op.getLoc(), out);
    int64_t offset = 0;
    for (Value input : op.getInputs()) {
      auto type = cast<RankedTensorType>(input.getType());
      SmallVector<int64_t> offsets(out.getRank(), 0), strides(out.getRank(), 1);
      offsets[axis] = offset;
      result = rewriter.create<tensor::InsertSliceOp>(
          op.getLoc(), input, result, ValueRange{}, ValueRange{}, ValueRange{}, offsets,
          type.getShape(), strides);
      offset += type.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// out[..., c] = (ids[...] == c) ? 1 : 0.
struct OneHotLowering : OpRewritePattern<tf::OneHotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::OneHotOp op, PatternRewriter &rewriter) const override {
    auto out = cast<RankedTensorType>(op.getType());
    int64_t rank = out.getRank();
    SmallVector<AffineExpr> idsExprs;
    for (int64_t d = 0; d + 1 < rank; ++d)
      idsExprs.push_back(rewriter.getAffineDimExpr(d));
    AffineMap idsMap = AffineMap::get(rank, 0, idsExprs, rewriter.getContext());
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    Value result = buildGeneric(
        rewriter, op.getLoc(), out, op.getIds(), idsMap, rewriter.getMultiDimIdentityMap(rank),
        emptyLike(rewriter, op.getLoc(), out), iterators,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value c = b.create<arith::IndexCastOp>(l, b.getI32Type(),
                                                 b.create<linalg::IndexOp>(l, rank - 1));
          Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, a[0], c);
          return b.create<arith::UIToFPOp>(l, b.getF32Type(), hit);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `id` (i32) clamped into [0, count) as an index: the runtime refuses
/// out-of-range model inputs before a step runs, and this keeps any other
/// value (a computed index) inside the buffer it addresses.
Value clampedIndex(OpBuilder &b, Location loc, Value id, int64_t count) {
  Value zero = b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(0));
  Value last = b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(int32_t(count - 1)));
  Value clamped = b.create<arith::MinSIOp>(loc, b.create<arith::MaxSIOp>(loc, id, zero), last);
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), clamped);
}

/// out[..., d] = table[ids[...], d] (table[d, ids[...]] for a `columns`
/// table), read with tensor.extract (the id clamped into the table).
struct GatherLowering : OpRewritePattern<tf::GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::GatherOp op, PatternRewriter &rewriter) const override {
    auto out = cast<RankedTensorType>(op.getType());
    int64_t rank = out.getRank();
    SmallVector<AffineExpr> idsExprs;
    for (int64_t d = 0; d + 1 < rank; ++d)
      idsExprs.push_back(rewriter.getAffineDimExpr(d));
    AffineMap idsMap = AffineMap::get(rank, 0, idsExprs, rewriter.getContext());
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    Value table = op.getTable();
    Value result = buildGeneric(
        rewriter, op.getLoc(), out, op.getIds(), idsMap, rewriter.getMultiDimIdentityMap(rank),
        emptyLike(rewriter, op.getLoc(), out), iterators,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          bool columns = op.getColumns();
          Value id = clampedIndex(
              b, l, a[0], cast<RankedTensorType>(table.getType()).getDimSize(columns ? 1 : 0));
          Value d = b.create<linalg::IndexOp>(l, rank - 1);
          return b.create<tensor::ExtractOp>(l, table,
                                             columns ? ValueRange{d, id} : ValueRange{id, d});
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A reduction carrying (best value, its index); a strict '>' keeps the
/// first maximum, as the interpreter and PyTorch.
struct ArgmaxLowering : OpRewritePattern<tf::ArgmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::ArgmaxOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = cast<RankedTensorType>(op.getX().getType());
    auto out = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxisAttr().getInt();
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < in.getRank(); ++d) {
      iterators.push_back(d == axis ? utils::IteratorType::reduction
                                    : utils::IteratorType::parallel);
      if (d != axis)
        outExprs.push_back(rewriter.getAffineDimExpr(d));
    }
    AffineMap outMap = AffineMap::get(in.getRank(), 0, outExprs, rewriter.getContext());
    auto valueType = RankedTensorType::get(out.getShape(), rewriter.getF32Type());
    Value bestInit = rewriter.create<linalg::FillOp>(loc, f32Const(rewriter, loc, -INFINITY),
                                                     emptyLike(rewriter, loc, valueType))
                         .getResult(0);
    Value zero = rewriter.create<arith::ConstantOp>(loc, rewriter.getI32IntegerAttr(0));
    Value indexInit = rewriter.create<linalg::FillOp>(loc, zero, emptyLike(rewriter, loc, out))
                          .getResult(0);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{valueType, out}, op.getX(), ValueRange{bestInit, indexInit},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(in.getRank()), outMap, outMap},
        iterators, [&](OpBuilder &b, Location l, ValueRange a) {
          Value i = b.create<arith::IndexCastOp>(l, b.getI32Type(),
                                                 b.create<linalg::IndexOp>(l, axis));
          Value better = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, a[0], a[1]);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, better, a[0], a[1]),
                            b.create<arith::SelectOp>(l, better, i, a[2])});
        });
    rewriter.replaceOp(op, generic.getResult(1));
    return success();
  }
};

/// mean((a - b)^2) over all elements: a full reduction into a scalar.
struct MseLowering : OpRewritePattern<tf::MseOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::MseOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = cast<RankedTensorType>(op.getLhs().getType());
    auto out = cast<RankedTensorType>(op.getType());
    AffineMap id = rewriter.getMultiDimIdentityMap(in.getRank());
    AffineMap scalar = AffineMap::get(in.getRank(), 0, {}, rewriter.getContext());
    SmallVector<utils::IteratorType> iterators(in.getRank(), utils::IteratorType::reduction);
    Value init = rewriter.create<linalg::FillOp>(loc, f32Const(rewriter, loc, 0.0),
                                                 emptyLike(rewriter, loc, out))
                     .getResult(0);
    Value sum = buildGeneric(rewriter, loc, out, {op.getLhs(), op.getRhs()}, {id, id}, scalar,
                             init, iterators, [](OpBuilder &b, Location l, ValueRange a) -> Value {
                               Value d = b.create<arith::SubFOp>(l, a[0], a[1]);
                               Value sq = b.create<arith::MulFOp>(l, d, d);
                               return b.create<arith::AddFOp>(l, a[2], sq);
                             });
    double count = static_cast<double>(in.getNumElements());
    Value result = elementwise(rewriter, loc, out, sum,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 return b.create<arith::DivFOp>(l, a[0], f32Const(b, l, count));
                               });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The map from a rank-`rank` loop nest to a tensor without dim `axis`.
AffineMap dropDim(OpBuilder &b, int64_t rank, int64_t axis) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

/// Reduces `inputs` (read with `maps`) over `axis` of a rank-`rank` loop
/// nest into a tensor without that axis, starting from `identity`.
Value reduceAlong(OpBuilder &b, Location loc, RankedTensorType reducedType,
                  ValueRange inputs, ArrayRef<AffineMap> maps, int64_t rank,
                  int64_t axis, double identity, BodyFn body) {
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators[axis] = utils::IteratorType::reduction;
  Value init = b.create<linalg::FillOp>(loc, f32Const(b, loc, identity),
                                        emptyLike(b, loc, reducedType))
                   .getResult(0);
  return buildGeneric(b, loc, reducedType, inputs, maps, dropDim(b, rank, axis), init,
                      iterators, body);
}

/// softmax(x) = exp(x - max) / sum(exp(x - max)), or its log; three passes
/// (max, sum, normalise) that fusion will later merge.
template <typename OpT, bool IsLog>
struct SoftmaxLowering : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank(), axis = op.getAxisAttr().getInt();
    SmallVector<int64_t> reducedShape(type.getShape());
    reducedShape.erase(reducedShape.begin() + axis);
    auto reducedType = RankedTensorType::get(reducedShape, type.getElementType());
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap reduced = dropDim(rewriter, rank, axis);
    Value x = op.getX();
    Value max = reduceAlong(rewriter, loc, reducedType, x, id, rank, axis, -INFINITY,
                            [](OpBuilder &b, Location l, ValueRange a) -> Value {
                              return b.create<arith::MaximumFOp>(l, a[0], a[1]);
                            });
    Value sum = reduceAlong(rewriter, loc, reducedType, {x, max}, {id, reduced}, rank, axis,
                            0.0, [](OpBuilder &b, Location l, ValueRange a) -> Value {
                              Value e = b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, a[0], a[1]));
                              return b.create<arith::AddFOp>(l, a[2], e);
                            });
    SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
    Value result = buildGeneric(
        rewriter, loc, type, {x, max, sum}, {id, reduced, reduced}, id,
        emptyLike(rewriter, loc, type), parallel,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value shifted = b.create<arith::SubFOp>(l, a[0], a[1]);
          if (IsLog)
            return b.create<arith::SubFOp>(l, shifted, b.create<math::LogOp>(l, a[2]));
          return b.create<arith::DivFOp>(l, b.create<math::ExpOp>(l, shifted), a[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// (x - mean) * rsqrt(var + eps) * gamma + beta over the last dim, with the
/// biased variance.
struct LayerNormLowering : OpRewritePattern<tf::LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::LayerNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank(), axis = rank - 1;
    double d = static_cast<double>(type.getDimSize(axis));
    double eps = op.getEpsilon().convertToDouble();
    auto rowsType = RankedTensorType::get(type.getShape().drop_back(), type.getElementType());
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap row = dropDim(rewriter, rank, axis);
    AffineMap feature = AffineMap::get(rank, 0, rewriter.getAffineDimExpr(axis),
                                       rewriter.getContext());
    Value x = op.getX();
    Value sum = reduceAlong(rewriter, loc, rowsType, x, id, rank, axis, 0.0,
                            [](OpBuilder &b, Location l, ValueRange a) -> Value {
                              return b.create<arith::AddFOp>(l, a[1], a[0]);
                            });
    Value sq = reduceAlong(rewriter, loc, rowsType, {x, sum}, {id, row}, rank, axis, 0.0,
                           [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                             Value mean = b.create<arith::DivFOp>(l, a[1], f32Const(b, l, d));
                             Value c = b.create<arith::SubFOp>(l, a[0], mean);
                             return b.create<arith::AddFOp>(l, a[2], b.create<arith::MulFOp>(l, c, c));
                           });
    SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
    Value result = buildGeneric(
        rewriter, loc, type, {x, sum, sq, op.getGamma(), op.getBeta()},
        {id, row, row, feature, feature}, id, emptyLike(rewriter, loc, type), parallel,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value mean = b.create<arith::DivFOp>(l, a[1], f32Const(b, l, d));
          Value var = b.create<arith::DivFOp>(l, a[2], f32Const(b, l, d));
          Value inv = b.create<math::RsqrtOp>(l, b.create<arith::AddFOp>(l, var, f32Const(b, l, eps)));
          Value norm = b.create<arith::MulFOp>(l, b.create<arith::SubFOp>(l, a[0], mean), inv);
          return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, norm, a[3]), a[4]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// An attention no kernel took (one whose weights are a result stores
/// them, or any without kernels): its tf definition, which the conversion
/// then lowers further (tf-fuse decomposes it earlier, so that its parts
/// fuse with their neighbours).
struct AttentionDecomposition : OpRewritePattern<tf::AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::AttentionOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.decompose(rewriter));
    return success();
  }
};

/// A weight gradient with at least this many output channels (GEMM
/// columns), or with one (a GEMV, which the runtime runs for all positions
/// in one pass over the samples), is one tfc_sgemm_taps over all its
/// positions; a narrower one is a GEMM per position, which the runtime
/// turns into row-vector products.
constexpr int64_t kTapsMinOutChannels = 16;

/// `value` and the identity permutation.
std::pair<Value, SmallVector<int64_t>> notTransposed(Value value) {
  auto rank = cast<RankedTensorType>(value.getType()).getRank();
  return {value, llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

/// The tensor a convolution view (TransposeOp::isConvolutionView) permutes
/// and its permutation; `value` itself otherwise.
std::pair<Value, SmallVector<int64_t>> throughTranspose(Value value) {
  auto transpose = value.getDefiningOp<tf::TransposeOp>();
  if (!transpose || !transpose.isConvolutionView())
    return notTransposed(value);
  return {transpose.getX(), llvm::to_vector(transpose.getPerm())};
}

/// Values listed by the dims of a transpose's result, listed by the dims of
/// its operand instead (result dim i is operand dim perm[i]).
template <typename T = int64_t>
SmallVector<T> inPermutation(ArrayRef<int64_t> perm, ArrayRef<T> values) {
  SmallVector<T> permuted(values.size());
  for (auto [i, source] : llvm::enumerate(perm))
    permuted[source] = values[i];
  return permuted;
}

/// out[n, o, t] = bias[o] + sum_{c, j} w[o, c, j] * xpad[n, c, t + j] as GEMMs
/// that read xpad in place: no im2col buffer (K times the input) is written
/// or read back. Two shapes, the one with fewer GEMM calls:
///
///  * per sample n (kernel <= width, the forward conv and the input gradient):
///      out[n] = w (O x C*K) @ windows (C*K x T), windows' row (c, j) being
///      xpad[n, c, j : j + T], one GEMM with K = C x kernel batched over n
///      (tfc_sgemm_windows: B's rows in two levels), accumulating into
///      zeros, the bias added to the finished sums (the GEMM's epilogue);
///  * per output position t (width < kernel, the weight gradient, whose
///    "kernel" is the sequence):
///      outT[t] = sum_c xpad[:, c, t : t + K] (N x K) @ w[:, c, :]^T (K x O),
///    a batch reduction over c, then transposed to [N, O, T] with the bias.
///    With O >= kTapsMinOutChannels all positions are one GEMM, M = T x N
///    (tfc_sgemm_taps: A's rows in two levels), so each c's w[:, c, :] is
///    packed once for every position instead of once a position. The VJP
///    builds this conv of transposes, x^T and dy^T: both are read through
///    their permutation (TransposeOp::isConvolutionView), never written.
///
/// Each GEMM is a marked generic whose operands are slices of xpad and of
/// the weight, so tf-gemm-to-runtime passes their strides to tfc_sgemm.
struct Conv1dLowering : OpRewritePattern<tf::Conv1dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::Conv1dOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto out = cast<RankedTensorType>(op.getType());
    auto in = cast<RankedTensorType>(op.getX().getType());
    auto weight = cast<RankedTensorType>(op.getWeight().getType());
    Type f32 = out.getElementType();
    int64_t pad = op.getPaddingAttr().getInt();
    int64_t batch = in.getDimSize(0), channels = in.getDimSize(1);
    int64_t outChannels = weight.getDimSize(0), kernel = weight.getDimSize(2);
    int64_t width = out.getDimSize(2), padded = in.getDimSize(2) + 2 * pad;
    // The per-position form reads x and the weight through their transposes
    // (a weight gradient's x^T and dy^T are never written): xPerm[i] is the
    // dim of the buffer read that the conv's dim i is.
    bool perPosition = op.isPerPosition();
    auto [x, xPerm] = perPosition ? throughTranspose(op.getX()) : notTransposed(op.getX());
    auto [weightSource, weightPerm] =
        perPosition ? throughTranspose(op.getWeight()) : notTransposed(op.getWeight());
    if (pad > 0) {
      SmallVector<int64_t> paddedShape = inPermutation(xPerm, {batch, channels, padded});
      SmallVector<OpFoldResult> low(3, rewriter.getIndexAttr(0));
      low[xPerm[2]] = rewriter.getIndexAttr(pad);
      x = rewriter.create<tensor::PadOp>(loc, RankedTensorType::get(paddedShape, f32), x, low, low,
                                         f32Const(rewriter, loc, 0.0));
    }
    MLIRContext *ctx = rewriter.getContext();
    auto d = [&](int64_t i) { return rewriter.getAffineDimExpr(i); };
    auto map = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(4, 0, results, ctx); };
    auto slice = [&](Value source, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                     RankedTensorType type) -> Value {
      SmallVector<int64_t> ones(offsets.size(), 1);
      return rewriter.create<tensor::ExtractSliceOp>(loc, type, source, ValueRange{}, ValueRange{},
                                                     ValueRange{}, offsets, sizes, ones);
    };
    auto multiplyAdd = [](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value p = b.create<arith::MulFOp>(l, a[0], a[1]);
      return b.create<arith::AddFOp>(l, a[2], p);
    };
    auto gemm = [&](Value lhs, Value rhs, AffineMap lhsMap, AffineMap rhsMap, AffineMap outMap,
                    Value acc, utils::IteratorType batchLoop) -> Value {
      using utils::IteratorType;
      auto type = cast<RankedTensorType>(acc.getType());
      Value result = buildGeneric(
          rewriter, loc, type, {lhs, rhs}, {lhsMap, rhsMap}, outMap, acc,
          {batchLoop, IteratorType::parallel, IteratorType::parallel, IteratorType::reduction},
          multiplyAdd);
      result.getDefiningOp()->setAttr(kMatmulAttr, rewriter.getUnitAttr());
      return result;
    };
    auto zeros = [&](RankedTensorType type) -> Value {
      return rewriter
          .create<linalg::FillOp>(loc, f32Const(rewriter, loc, 0.0), emptyLike(rewriter, loc, type))
          .getResult(0);
    };
    auto parallel = [](int64_t n) {
      return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
    };
    Value bias = op.getBias();

    if (kernel <= width) {
      // One GEMM per sample over the windows: loops (n, o, t, c, j),
      // out[n, o, t] += w[o, c, j] * xpad[n, c, t + j]; tf-gemm-to-runtime
      // reads B's row (c, j) as xpad[n, c, j:] in place (tfc_sgemm_windows):
      // K = C x kernel in one chain, C written once instead of once a tap.
      // The bias is added to the finished sums, by an elementwise loop that
      // a "gemm" fusion makes part of the epilogue (each row while in cache;
      // the GEMM then stores C without reading it first). The same bits with
      // or without the fusion.
      Value acc = zeros(out);
      auto map5 = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(5, 0, results, ctx); };
      using utils::IteratorType;
      Value result = buildGeneric(
          rewriter, loc, out, {op.getWeight(), x},
          {map5({d(1), d(3), d(4)}), map5({d(0), d(3), d(2) + d(4)})}, map5({d(0), d(1), d(2)}),
          acc,
          {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
           IteratorType::reduction, IteratorType::reduction},
          multiplyAdd);
      result.getDefiningOp()->setAttr(kMatmulAttr, rewriter.getUnitAttr());
      if (bias)
        result = buildGeneric(
            rewriter, loc, out, {result, bias},
            {rewriter.getMultiDimIdentityMap(3), AffineMap::get(3, 0, {d(1)}, ctx)},
            rewriter.getMultiDimIdentityMap(3), emptyLike(rewriter, loc, out), parallel(3),
            [](OpBuilder &b, Location l, ValueRange a) -> Value {
              return b.create<arith::AddFOp>(l, a[0], a[1]);
            });
      rewriter.replaceOp(op, result);
      return success();
    }
    auto outTType = RankedTensorType::get({width, batch, outChannels}, f32);
    Value outT;
    if (outChannels >= kTapsMinOutChannels || outChannels == 1) {
      // Loops (c, t, n, o, j): outT[t, n, o] += xpad[n, c, t + j] w[o, c, j],
      // one GEMM whose rows (t, n) read xpad in place (tfc_sgemm_taps).
      using utils::IteratorType;
      auto map5 = [&](ArrayRef<AffineExpr> results) { return AffineMap::get(5, 0, results, ctx); };
      outT = buildGeneric(
          rewriter, loc, outTType, {x, weightSource},
          {map5(inPermutation<AffineExpr>(xPerm, {d(2), d(0), d(1) + d(4)})),
           map5(inPermutation<AffineExpr>(weightPerm, {d(3), d(0), d(4)}))},
          map5({d(1), d(2), d(3)}), zeros(outTType),
          {IteratorType::reduction, IteratorType::parallel, IteratorType::parallel,
           IteratorType::parallel, IteratorType::reduction},
          multiplyAdd);
      outT.getDefiningOp()->setAttr(kMatmulAttr, rewriter.getUnitAttr());
    } else {
      // Loops (c, n, o, j) for each t:
      // outT[t][n, o] = sum_{c, j} xpad[n, c, t + j] w[o, c, j].
      auto positionType = RankedTensorType::get({batch, outChannels}, f32);
      SmallVector<int64_t> windowShape = inPermutation(xPerm, {batch, channels, kernel});
      auto windowType = RankedTensorType::get(windowShape, f32);
      AffineMap windowMap = map(inPermutation<AffineExpr>(xPerm, {d(1), d(0), d(3)}));
      AffineMap weightMap = map(inPermutation<AffineExpr>(weightPerm, {d(2), d(0), d(3)}));
      outT = emptyLike(rewriter, loc, outTType);
      for (int64_t t = 0; t < width; ++t) {
        Value window =
            slice(x, inPermutation<int64_t>(xPerm, {0, 0, t}), windowShape, windowType);
        Value position = gemm(window, weightSource, windowMap, weightMap, map({d(1), d(2)}),
                              zeros(positionType), utils::IteratorType::reduction);
        SmallVector<int64_t> ones(3, 1);
        outT = rewriter.create<tensor::InsertSliceOp>(
            loc, position, outT, ValueRange{}, ValueRange{}, ValueRange{},
            ArrayRef<int64_t>{t, 0, 0}, ArrayRef<int64_t>{1, batch, outChannels}, ones);
      }
    }
    // out[n, o, t] = outT[t, n, o] (+ bias[o]).
    SmallVector<Value> inputs = {outT};
    SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {d(2), d(0), d(1)}, ctx)};
    if (bias) {
      inputs.push_back(bias);
      maps.push_back(AffineMap::get(3, 0, {d(1)}, ctx));
    }
    Value result = buildGeneric(rewriter, loc, out, inputs, maps,
                                rewriter.getMultiDimIdentityMap(3), emptyLike(rewriter, loc, out),
                                parallel(3), [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                  return a.size() == 3 ? b.create<arith::AddFOp>(l, a[0], a[1])
                                                       : a[0];
                                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// -mean(log_softmax(logits)[label]): the log-softmax as a tf op (lowered in
/// turn), then a full reduction over the label positions that reads the
/// labelled class with tensor.extract (the label clamped into the classes).
struct CrossEntropyLowering : OpRewritePattern<tf::CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::CrossEntropyOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxisAttr().getInt();
    Value logp = rewriter.create<tf::LogSoftmaxOp>(loc, op.getLogits(), axis);
    auto labels = cast<RankedTensorType>(op.getLabels().getType());
    auto out = cast<RankedTensorType>(op.getType());
    int64_t rank = labels.getRank();
    AffineMap scalar = AffineMap::get(rank, 0, {}, rewriter.getContext());
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::reduction);
    Value init = rewriter.create<linalg::FillOp>(loc, f32Const(rewriter, loc, 0.0),
                                                 emptyLike(rewriter, loc, out))
                     .getResult(0);
    Value sum = buildGeneric(
        rewriter, loc, out, op.getLabels(), rewriter.getMultiDimIdentityMap(rank), scalar, init,
        iterators, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank; ++d)
            indices.push_back(b.create<linalg::IndexOp>(l, d));
          int64_t classes = cast<RankedTensorType>(logp.getType()).getDimSize(axis);
          indices.insert(indices.begin() + axis, clampedIndex(b, l, a[0], classes));
          Value picked = b.create<tensor::ExtractOp>(l, logp, indices);
          return b.create<arith::SubFOp>(l, a[1], picked);
        });
    double count = static_cast<double>(labels.getNumElements());
    Value result = elementwise(rewriter, loc, out, sum,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 return b.create<arith::DivFOp>(l, a[0], f32Const(b, l, count));
                               });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Fuses every elementwise generic of a lowered tf.fusion `body` into the
/// generics of `body` that read it, until none is left to fuse: one loop nest
/// per reduction stage. Only producers of the same region fuse (tf-fuse
/// chose the groups), and GEMMs are never touched.
void fuseGenericsOfRegion(RewriterBase &rewriter, Block &body) {
  auto fusible = [&](linalg::GenericOp op) {
    return op && op->getBlock() == &body && !op->hasAttr(kMatmulAttr);
  };
  // One pass in block order, each consumer tried again after each fusion:
  // producers come before their consumers, and fusing one changes nothing
  // before it but a producer's copy (made before the producer, and tried
  // as a consumer too where it stays). Starting over from the block's top
  // after each fusion made this quadratic in the ops of a region: the
  // optimizer's horizontal region holds every parameter's update (2.3 s of
  // a ViT of 32 layers).
  for (Operation *next = body.empty() ? nullptr : &body.front(); next;) {
    auto consumer = dyn_cast<linalg::GenericOp>(next);
    next = next->getNextNode();
    if (!fusible(consumer))
      continue;
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      if (!fusible(producer) || !linalg::areElementwiseOpsFusable(operand))
        continue;
      // A reduction cannot also write the producer's values (its outputs
      // are indexed by the parallel dims only): it gets its own copy.
      Operation *copy = nullptr;
      if (consumer.getNumReductionLoops() > 0 &&
          !llvm::all_of(producer->getUses(), [&](OpOperand &u) { return &u == operand; })) {
        rewriter.setInsertionPoint(producer);
        copy = rewriter.clone(*producer);
        rewriter.modifyOpInPlace(consumer, [&] {
          operand->set(copy->getResult(cast<OpResult>(operand->get()).getResultNumber()));
        });
        producer = cast<linalg::GenericOp>(copy);
      }
      rewriter.setInsertionPoint(consumer); // where the fused op goes
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, operand);
      if (failed(fused)) {
        if (copy)
          next = copy;
        continue;
      }
      // The fused op sits where the consumer was: readers of the
      // producer's values after it read the fused op's copies, earlier
      // ones keep the producer.
      Operation *fusedOp = fused->fusedOp;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
          Operation *reader = body.findAncestorOpInBlock(*use.getOwner());
          return reader != fusedOp && fusedOp->isBeforeInBlock(reader);
        });
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      next = fusedOp; // the fused op may fuse again
      break;
    }
  }
}

/// Uses of a splat-constant input inside `generic`'s body become the scalar
/// (the input itself is then unused, and dropped by the cleanup patterns).
void inlineSplatInputs(RewriterBase &rewriter, linalg::GenericOp generic) {
  Block *body = generic.getBody();
  for (OpOperand *input : generic.getDpsInputOperands()) {
    auto constant = input->get().getDefiningOp<arith::ConstantOp>();
    auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue()) : nullptr;
    BlockArgument arg = generic.getMatchingBlockArgument(input);
    if (!splat || arg.use_empty())
      continue;
    rewriter.setInsertionPointToStart(body);
    Value scalar = rewriter.create<arith::ConstantOp>(
        constant.getLoc(), cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    rewriter.replaceAllUsesWith(arg, scalar);
  }
}

/// The epilogue `epilogue` of `product` (which nothing else reads), made to
/// write its result over the product, element by element: the GEMM's rows
/// are then read and written again while in cache, and need no second
/// buffer (a relu after a convolution wrote a fresh 3.3 MB, all cache
/// misses). Left as it is unless its one result has the product's type,
/// its init is never read and it reads the product in place only.
void writeOverProduct(linalg::GenericOp epilogue, Value product) {
  if (epilogue.getNumDpsInits() != 1 || epilogue->getNumResults() != 1 ||
      epilogue->getResult(0).getType() != product.getType() ||
      epilogue.payloadUsesValueFromOperand(epilogue.getDpsInitOperand(0)) ||
      !epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0)).isIdentity())
    return;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<unsigned> productArgs;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (input->get() == product) {
      if (!map.isIdentity())
        return;
      productArgs.push_back(input->getOperandNumber());
      continue;
    }
    inputs.push_back(input->get());
    maps.push_back(map);
  }
  if (productArgs.empty())
    return;
  maps.push_back(epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0)));
  IRRewriter rewriter(epilogue);
  auto fresh = rewriter.create<linalg::GenericOp>(
      epilogue.getLoc(), epilogue->getResultTypes(), inputs, ValueRange{product}, maps,
      epilogue.getIteratorTypesArray());
  fresh->setDiscardableAttrs(epilogue->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(epilogue.getRegion(), fresh.getRegion(), fresh.getRegion().end());
  Block &block = fresh.getRegion().front();
  BlockArgument out = block.getArguments().back(); // unread until now
  for (unsigned arg : llvm::reverse(productArgs)) {
    rewriter.replaceAllUsesWith(block.getArgument(arg), out);
    block.eraseArgument(arg);
  }
  rewriter.replaceOp(epilogue, fresh->getResults());
}

/// In a lowered "gemm" fusion, the one generic that reads the GEMM's result
/// (its fused epilogue) is marked for tf-gemm-to-runtime, which checks the
/// rest, and made to write over the GEMM's result. None is marked when the
/// epilogue did not become one loop nest.
void markGemmEpilogue(Block &body) {
  SmallVector<linalg::GenericOp> gemms;
  for (auto generic : body.getOps<linalg::GenericOp>())
    if (generic->hasAttr(kMatmulAttr))
      gemms.push_back(generic);
  if (gemms.size() != 1)
    return;
  SmallVector<Operation *> readers;
  for (Operation *user : gemms[0]->getResult(0).getUsers())
    if (!llvm::is_contained(readers, user))
      readers.push_back(user);
  if (readers.size() != 1 || !isa<linalg::GenericOp>(readers[0]))
    return;
  readers[0]->setAttr(kGemmEpilogueAttr, UnitAttr::get(body.getParentOp()->getContext()));
  writeOverProduct(cast<linalg::GenericOp>(readers[0]), gemms[0]->getResult(0));
}

/// Replaces a lowered tf.fusion by its body.
void inlineFusion(RewriterBase &rewriter, tf::FusionOp fusion) {
  Block &body = fusion.getBodyBlock();
  Operation *yield = body.getTerminator();
  SmallVector<Value> results(yield->getOperands());
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(&body, fusion);
  rewriter.replaceOp(fusion, results);
}

struct TfLowerToLinalgPass : tfc::impl::TfLowerToLinalgBase<TfLowerToLinalgPass> {
  using TfLowerToLinalgBase::TfLowerToLinalgBase;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();

    // The ops a backend's runtime has kernels for first; without kernels
    // they must have been decomposed (tf-decompose).
    // tf.cross_entropy_grad is a kernel of the CUDA runtime only; elsewhere
    // tf-decompose spells it out first.
    if (kernels != "cuda") {
      WalkResult kernelOnly = getOperation().walk([&](tf::CrossEntropyGradOp op) {
        op->emitError() << op->getName()
                        << " has no lowering but the CUDA runtime's kernel; run "
                           "tf-decompose{ops=cross_entropy_grad} first";
        return WalkResult::interrupt();
      });
      if (kernelOnly.wasInterrupted())
        return signalPassFailure();
    }
    if (kernels == "cpu" || kernels == "cuda") {
      lowerToKernelCalls(
          getOperation(), kernels == "cpu" ? KernelRuntime::Cpu : KernelRuntime::Cuda,
          fusedCrossEntropy, attentionDs, tensorCoreAttention, layerNormDropout, layerNormResidual);
    } else if (kernels != "none") {
      getOperation().emitError(
          "tf-lower-to-linalg: kernels must be \"cpu\", \"cuda\" or \"none\", got \"")
          << kernels << "\"";
      return signalPassFailure();
    } else {
      WalkResult missing = getOperation().walk([&](Operation *op) {
        if (isa<tf::AttentionGradOp, tf::LayerNormGradOp>(op)) {
          op->emitError() << op->getName()
                          << " has no lowering without the CPU runtime's kernels; run "
                             "tf-decompose first";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (missing.wasInterrupted())
        return signalPassFailure();
    }
    RewritePatternSet patterns(ctx);
    addBinaryArith<tf::AddOp, arith::AddFOp>(patterns);
    addBinaryArith<tf::SubOp, arith::SubFOp>(patterns);
    addBinaryArith<tf::MulOp, arith::MulFOp>(patterns);
    addBinaryArith<tf::DivOp, arith::DivFOp>(patterns);
    addBinaryArith<tf::MaxOp, arith::MaximumFOp>(patterns);
    addBinaryArith<tf::MinOp, arith::MinimumFOp>(patterns);
    addBinaryArith<tf::AndOp, arith::AndIOp>(patterns);
    addBinaryArith<tf::OrOp, arith::OrIOp>(patterns);
    addUnaryMath<tf::NegOp, arith::NegFOp>(patterns);
    addUnaryMath<tf::ExpOp, math::ExpOp>(patterns);
    addUnaryMath<tf::LogOp, math::LogOp>(patterns);
    addUnaryMath<tf::SqrtOp, math::SqrtOp>(patterns);
    addUnaryMath<tf::RsqrtOp, math::RsqrtOp>(patterns);
    addUnaryMath<tf::TanhOp, math::TanhOp>(patterns);
    addUnaryMath<tf::SinOp, math::SinOp>(patterns);
    addUnaryMath<tf::CosOp, math::CosOp>(patterns);
    addUnaryMath<tf::ErfOp, math::ErfOp>(patterns);
    addElementwise<tf::ReluOp>(patterns, [](OpBuilder &b, Location l, tf::ReluOp, ValueRange a) {
      return b.create<arith::MaximumFOp>(l, a[0], f32Const(b, l, 0.0)).getResult();
    });
    addElementwise<tf::GeluOp>(patterns, [](OpBuilder &b, Location l, tf::GeluOp, ValueRange a) {
      // x * 0.5 * (1 + erf(x / sqrt 2)), the exact form.
      Value scaled = b.create<arith::MulFOp>(l, a[0], f32Const(b, l, M_SQRT1_2));
      Value cdf = b.create<arith::AddFOp>(l, f32Const(b, l, 1.0),
                                          b.create<math::ErfOp>(l, scaled));
      Value half = b.create<arith::MulFOp>(l, a[0], f32Const(b, l, 0.5));
      return b.create<arith::MulFOp>(l, half, cdf).getResult();
    });
    addElementwise<tf::NotOp>(patterns, [](OpBuilder &b, Location l, tf::NotOp, ValueRange a) {
      Value one = b.create<arith::ConstantOp>(l, b.getBoolAttr(true));
      return b.create<arith::XOrIOp>(l, a[0], one).getResult();
    });
    addElementwise<tf::CompareOp>(patterns, [](OpBuilder &b, Location l, tf::CompareOp op,
                                               ValueRange a) {
      return compareScalars(b, l, op.getPredicate(), a[0], a[1]);
    });
    addElementwise<tf::SelectOp>(patterns, [](OpBuilder &b, Location l, tf::SelectOp,
                                              ValueRange a) {
      return b.create<arith::SelectOp>(l, a[0], a[1], a[2]).getResult();
    });
    addElementwise<tf::CastOp>(patterns, [](OpBuilder &b, Location l, tf::CastOp op,
                                            ValueRange a) {
      return castScalar(b, l, a[0], getElementTypeOrSelf(op.getType()));
    });
    patterns.add<ConstantLowering, BroadcastLowering, TransposeLowering, ReshapeLowering,
                 ReduceLowering<tf::ReduceSumOp>, ReduceLowering<tf::ReduceMaxOp>,
                 ReduceLowering<tf::ReduceMeanOp>, MatmulLowering, SliceLowering,
                 ConcatLowering, OneHotLowering, GatherLowering, ArgmaxLowering,
                 MseLowering, SoftmaxLowering<tf::SoftmaxOp, false>,
                 SoftmaxLowering<tf::LogSoftmaxOp, true>, LayerNormLowering,
                 AttentionDecomposition, Conv1dLowering, CrossEntropyLowering>(ctx);
    // Dropout's masks: the CPU runtime's kernel, or drawn in generated code
    // (the same Philox words: a GPU thread draws its elements' own).
    if (kernels == "cpu")
      populateCpuKernelCallPatterns(patterns);
    else
      populateDropoutInCodePatterns(patterns);

    ConversionTarget target(*ctx);
    target.addIllegalDialect<tf::TFDialect>();
    target.addLegalDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                           func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                           memref::MemRefDialect, tensor::TensorDialect>();
    // Fusion regions stay until their ops are lowered, then become one loop nest.
    target.addLegalOp<tf::FusionOp, tf::YieldOp>();
    // Convolutions first: the per-position ones read through the transposes
    // of their operands, which then die unlowered.
    {
      RewritePatternSet convolutions(ctx);
      convolutions.add<Conv1dLowering>(ctx);
      ConversionTarget convTarget(*ctx);
      convTarget.addIllegalOp<tf::Conv1dOp>();
      convTarget.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      if (failed(applyPartialConversion(getOperation(), convTarget, std::move(convolutions))))
        return signalPassFailure();
      getOperation().walk([](tf::TransposeOp transpose) {
        if (transpose->use_empty())
          transpose->erase();
      });
    }
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      return signalPassFailure();
    SmallVector<tf::FusionOp> fusions;
    getOperation().walk([&](tf::FusionOp fusion) { fusions.push_back(fusion); });
    IRRewriter rewriter(ctx);
    int64_t horizontalFusions = 0;
    for (tf::FusionOp fusion : fusions) {
      fuseGenericsOfRegion(rewriter, fusion.getBodyBlock());
      if (fusion.getKind() == "gemm")
        markGemmEpilogue(fusion.getBodyBlock());
      if (fusion.getKind() == "horizontal") {
        auto id = rewriter.getI64IntegerAttr(horizontalFusions++);
        for (auto generic : fusion.getBodyBlock().getOps<linalg::GenericOp>())
          generic->setAttr(kHorizontalAttr, id);
      }
      inlineFusion(rewriter, fusion);
    }
    // Splat constants are read as scalars, not from a tensor in memory.
    getOperation().walk([&](linalg::GenericOp generic) { inlineSplatInputs(rewriter, generic); });
    // A fused op may keep writing a producer's value that nothing reads;
    // inputs read as scalars now are dropped.
    RewritePatternSet cleanup(ctx);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(cleanup);
    // Only the generics themselves: nothing else is folded here.
    SmallVector<Operation *> generics;
    getOperation().walk([&](linalg::GenericOp generic) { generics.push_back(generic); });
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    if (failed(applyOpPatternsAndFold(generics, std::move(cleanup), config)))
      return signalPassFailure();
  }
};

} // namespace
