//===- DropoutInCode.cpp - tf.dropout's mask drawn in generated code ------===//
//
// Generated code for a GPU cannot call the CPU runtime's tfc_dropout_mask,
// so without kernels (tf-lower-to-linalg kernels=none) each element computes
// its Philox4x32-10 word in the loop that applies it, with arith ops only
// (mului_extended for the 32 x 32 -> 64-bit products): any backend that
// lowers linalg and arith runs it, and it fuses with its neighbours like any
// elementwise op. The counter and key are runtime/Philox.h's dropoutWords
// and the comparison runtime/cpu/Dropout.h's, so the masks are those of the
// CPU runtime and the interpreter, bit for bit. Each of the four elements a
// Philox call decides computes the call again: 4x the integer work of the
// runtime's kernel, for a loop that needs no memory of its own.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/DropoutInCode.h"
#include "runtime/Philox.h"
#include "compiler/lowering/LinalgBuilders.h"
#include "dialect/TfDialect.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace tfc;

namespace {

using namespace tfc::philox;

Value i32Const(OpBuilder &b, Location loc, uint32_t v) {
  return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(int32_t(v)));
}

/// philox4x32(counter, {key0, key1}) on i32 values, as runtime/Philox.h.
std::array<Value, 4> philox4x32(OpBuilder &b, Location loc, std::array<Value, 4> c, Value key0,
                                Value key1) {
  Value mul0 = i32Const(b, loc, kMul0), mul1 = i32Const(b, loc, kMul1);
  for (int round = 0; round < 10; ++round) {
    auto p0 = b.create<arith::MulUIExtendedOp>(loc, mul0, c[0]);
    auto p1 = b.create<arith::MulUIExtendedOp>(loc, mul1, c[2]);
    Value x0 = b.create<arith::XOrIOp>(loc, b.create<arith::XOrIOp>(loc, p1.getHigh(), c[1]), key0);
    Value x2 = b.create<arith::XOrIOp>(loc, b.create<arith::XOrIOp>(loc, p0.getHigh(), c[3]), key1);
    c = {x0, p1.getLow(), x2, p0.getLow()};
    key0 = b.create<arith::AddIOp>(loc, key0, i32Const(b, loc, kWeyl0));
    key1 = b.create<arith::AddIOp>(loc, key1, i32Const(b, loc, kWeyl1));
  }
  return c;
}

/// Element i (row-major over the result, counted from sample_offset *
/// sample_size when the op has a sample offset) of dropout op `key` under
/// `seed` is dropped when word i % 4 of
///   philox4x32(counter = {g lo, g hi, key hi, 0}, key = {seed, key lo}),
/// g = i / 4, is below ceil(rate * 2^32) as an unsigned integer: the seed and
/// the sample offset are read in the loop (0-d inputs), so no scalar is
/// loaded outside it.
struct DropoutInCode : OpRewritePattern<tf::DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::DropoutOp op, PatternRewriter &rewriter) const override {
    if (!op.getTraining()) {
      rewriter.replaceOp(op, op.getX());
      return success();
    }
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    const double rate = op.getRate().convertToDouble();
    const uint32_t threshold = dropoutThreshold(rate);
    const auto key = static_cast<uint64_t>(op.getKeyAttr().getInt());
    const int64_t rank = type.getRank();
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap scalar = AffineMap::get(rank, 0, rewriter.getContext());
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    SmallVector<Value> inputs = {op.getX(), op.getSeed()};
    SmallVector<AffineMap> maps = {id, scalar};
    if (op.getSampleOffset()) {
      inputs.push_back(op.getSampleOffset());
      maps.push_back(scalar);
    }
    Value result = buildGeneric(
        rewriter, loc, type, inputs, maps, id,
        emptyLike(rewriter, loc, type), iterators,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          auto i64 = [&](int64_t v) {
            return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(v)).getResult();
          };
          auto toI64 = [&](Value v) {
            return b.create<arith::IndexCastUIOp>(l, b.getI64Type(), v).getResult();
          };
          // The row-major number of element (i_0, ..., i_last)'s row: the
          // element's is row x last + column.
          Value rows = b.create<arith::ConstantIndexOp>(l, 0);
          for (int64_t d = 0; d + 1 < rank; ++d)
            rows = b.create<arith::AddIOp>(
                l,
                b.create<arith::MulIOp>(
                    l, rows, b.create<arith::ConstantIndexOp>(l, type.getDimSize(d))),
                b.create<linalg::IndexOp>(l, d));
          const int64_t last = rank ? type.getDimSize(rank - 1) : 1;
          Value column = rank ? b.create<linalg::IndexOp>(l, rank - 1).getResult()
                              : b.create<arith::ConstantIndexOp>(l, 0).getResult();
          // g = i / 4 and the lane i % 4. Where rows (and samples) are
          // multiples of 4 long, from the row and the column: g = row
          // (last / 4) + column / 4, the same values, and a GPU thread that
          // takes 4 consecutive elements (tf-map-to-gpu) sees them share g
          // (LLVM computes their Philox block once).
          const int64_t sampleSize = op.getSampleOffset() ? *op.getSampleSize() : 0;
          Value group, lane;
          if (last % 4 == 0 && sampleSize % 4 == 0) {
            Value col = toI64(column);
            group = b.create<arith::AddIOp>(
                l, b.create<arith::MulIOp>(l, toI64(rows), i64(last / 4)),
                b.create<arith::ShRUIOp>(l, col, i64(2)));
            lane = b.create<arith::AndIOp>(l, col, i64(3));
            if (op.getSampleOffset()) {
              Value offset = b.create<arith::ExtSIOp>(l, b.getI64Type(), args[2]);
              group = b.create<arith::AddIOp>(
                  l, b.create<arith::MulIOp>(l, offset, i64(sampleSize / 4)), group);
            }
          } else {
            Value index = b.create<arith::AddIOp>(
                l, b.create<arith::MulIOp>(l, toI64(rows), i64(last)), toI64(column));
            if (op.getSampleOffset()) {
              Value offset = b.create<arith::ExtSIOp>(l, b.getI64Type(), args[2]);
              index = b.create<arith::AddIOp>(
                  l, b.create<arith::MulIOp>(l, offset, i64(sampleSize)), index);
            }
            group = b.create<arith::ShRUIOp>(l, index, i64(2));
            lane = b.create<arith::AndIOp>(l, index, i64(3));
          }
          auto low32 = [&](Value v) { return b.create<arith::TruncIOp>(l, b.getI32Type(), v); };
          std::array<Value, 4> counter = {low32(group),
                                          low32(b.create<arith::ShRUIOp>(l, group, i64(32))),
                                          i32Const(b, l, uint32_t(key >> 32)), i32Const(b, l, 0)};
          std::array<Value, 4> words =
              philox4x32(b, l, counter, /*key0=seed*/ args[1], i32Const(b, l, uint32_t(key)));
          // Word `lane` of the four.
          Value word = words[3];
          for (int w = 2; w >= 0; --w) {
            Value isW = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, lane, i64(w));
            word = b.create<arith::SelectOp>(l, isW, words[w], word);
          }
          Value dropped = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, word,
                                                  i32Const(b, l, threshold));
          return applyDropout(b, l, dropped, args[0], rate);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tfc::populateDropoutInCodePatterns(RewritePatternSet &patterns) {
  patterns.add<DropoutInCode>(patterns.getContext());
}
