//===- ReductionsToLoops.cpp - reductions as loops LLVM vectorises --------===//
//
// MLIR's linalg-to-parallel-loops lowers a reduction generic to loads and
// stores of its output on every iteration, and nests loops in the order of
// the iterator kinds, not of the dims. Two costs follow on the CPU:
//
//  * a row reduction (softmax's sum, layer_norm's mean and variance) keeps
//    its accumulator in memory, which LLVM cannot keep in a register (the
//    outlined loop's buffers may alias as far as it knows), so the loop
//    stays scalar;
//  * a column reduction (a bias gradient, summing rows) becomes a serial
//    loop over the rows around a parallel loop over the columns, and that
//    inner loop is outlined and called once per row.
//
// Here each reduction generic becomes, in the order of its dims: one
// scf.parallel over the leading parallel dims (one iteration when there are
// none, so that tf-parallel-loops-to-runtime still makes the nest one
// function), then an scf.for per remaining dim. When the innermost dim is a
// reduction that no output indexes, its accumulators are the loop's
// iter_args, and the combining add is marked `reassoc` so the vectoriser may
// sum in lanes: the order of a floating-point sum within one row changes,
// never with the thread count (a reduction dim is never split). A row of
// at most 16 (a 10-class softmax, set anomaly's attention over 10 items) is
// unrolled whole instead, its chain in order: the loop around it is then
// the innermost, with no 10-trip loop inside it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace tfc {
#define GEN_PASS_DEF_TFREDUCTIONSTOLOOPS
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

/// A row reduction at most this long is unrolled (see lowerReduction).
constexpr int64_t kUnrolledRow = 16;

/// The indices `map` reads at the loop point `ivs`.
SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      indices.push_back(ivs[dim.getPosition()]);
      continue;
    }
    indices.push_back(b.create<affine::AffineApplyOp>(
        loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
  }
  return indices;
}

/// Clones the generic's body at the loop point `ivs`, its block arguments
/// bound to `args`; returns the yielded values.
SmallVector<Value> cloneBody(OpBuilder &b, linalg::GenericOp op, ValueRange ivs, ValueRange args) {
  IRMapping mapping;
  Block *body = op.getBody();
  assert(args.size() == body->getNumArguments() && "one value per block argument");
  for (auto [arg, value] : llvm::zip(body->getArguments(), args))
    mapping.map(Value(arg), value);
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  SmallVector<Value> yielded;
  for (Value v : body->getTerminator()->getOperands())
    yielded.push_back(mapping.lookupOrDefault(v));
  return yielded;
}

/// Widest column reduction whose columns are accumulated in registers.
constexpr int64_t kMaxRegisterColumns = 128;

/// A column reduction (a bias gradient): every dim but the innermost is a
/// reduction, the innermost is parallel, no wider than kMaxRegisterColumns,
/// and each output is a vector indexed by it alone. Its columns' sums are
/// the iter_args of the loops over the rows, one chain per column (the
/// body cloned once per column: consecutive loads the SLP vectoriser turns
/// into vectors), loaded and stored once: the same sums, in the same order,
/// as the generic's, without a store and a reload per row.
LogicalResult lowerColumnReduction(linalg::GenericOp op) {
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numLoops = sizes.size(), numInputs = op.getNumDpsInputs(), innermost = numLoops - 1;
  if (numLoops < 2 || iterators[innermost] != utils::IteratorType::parallel ||
      sizes[innermost] > kMaxRegisterColumns ||
      llvm::any_of(ArrayRef(iterators).drop_back(),
                   [](utils::IteratorType t) { return t != utils::IteratorType::reduction; }))
    return failure();
  MLIRContext *ctx = op.getContext();
  AffineMap column = AffineMap::get(numLoops, 0, getAffineDimExpr(innermost, ctx));
  if (llvm::any_of(ArrayRef(maps).drop_front(numInputs), [&](AffineMap m) { return m != column; }) ||
      !op.getBody()->getOps<linalg::IndexOp>().empty())
    return failure();
  OpBuilder top(op);
  Location loc = op.getLoc();
  auto index = [&](OpBuilder &builder, int64_t v) -> Value {
    return builder.create<arith::ConstantIndexOp>(loc, v);
  };
  // In a one-trip scf.parallel, as the other nests: one outlined function,
  // optimised at O3 (tf-parallel-loops-to-runtime).
  auto nest = top.create<scf::ParallelOp>(loc, ValueRange{index(top, 0)},
                                          ValueRange{index(top, 1)}, ValueRange{index(top, 1)});
  OpBuilder b = OpBuilder::atBlockBegin(nest.getBody());
  const int64_t columns = sizes[innermost];
  SmallVector<Value> inputs(op.getDpsInputs()), outputs(op.getDpsInits());
  // Accumulators: output i's column c at i * columns + c.
  SmallVector<Value> initial;
  for (Value out : outputs)
    for (int64_t c = 0; c < columns; ++c)
      initial.push_back(b.create<memref::LoadOp>(loc, out, ValueRange{index(b, c)}));
  SmallVector<Value> ivs(numLoops);
  std::function<SmallVector<Value>(OpBuilder &, unsigned, ValueRange)> rows =
      [&](OpBuilder &builder, unsigned d, ValueRange acc) -> SmallVector<Value> {
    auto loop = builder.create<scf::ForOp>(
        loc, index(builder, 0), index(builder, sizes[d]), index(builder, 1), acc,
        [&](OpBuilder &nb, Location, Value iv, ValueRange carried) {
          ivs[d] = iv;
          if (d + 1 < innermost) {
            nb.create<scf::YieldOp>(loc, rows(nb, d + 1, carried));
            return;
          }
          SmallVector<Value> next(carried.size());
          for (int64_t c = 0; c < columns; ++c) {
            ivs[innermost] = index(nb, c);
            SmallVector<Value> args;
            for (auto [input, map] : llvm::zip(inputs, ArrayRef(maps).take_front(numInputs)))
              args.push_back(isa<MemRefType>(input.getType())
                                 ? nb.create<memref::LoadOp>(loc, input,
                                                             indicesAt(nb, loc, map, ivs))
                                       .getResult()
                                 : input);
            for (size_t i = 0; i < outputs.size(); ++i)
              args.push_back(carried[i * columns + c]);
            for (auto [i, value] : llvm::enumerate(cloneBody(nb, op, ivs, args)))
              next[i * columns + c] = value;
          }
          nb.create<scf::YieldOp>(loc, next);
        });
    return loop.getResults();
  };
  SmallVector<Value> sums = rows(b, 0, initial);
  for (auto [i, out] : llvm::enumerate(outputs))
    for (int64_t c = 0; c < columns; ++c)
      b.create<memref::StoreOp>(loc, sums[i * columns + c], out, ValueRange{index(b, c)});
  op.erase();
  return success();
}

LogicalResult lowerReduction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0)
    return failure();
  if (succeeded(lowerColumnReduction(op)))
    return success();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numLoops = sizes.size(), numInputs = op.getNumDpsInputs();
  unsigned lead = 0;
  while (lead < numLoops && iterators[lead] == utils::IteratorType::parallel)
    ++lead;
  unsigned innermost = numLoops - 1;
  bool inRegisters = iterators[innermost] == utils::IteratorType::reduction &&
                     llvm::none_of(ArrayRef(maps).drop_front(numInputs), [&](AffineMap map) {
                       return map.isFunctionOfDim(innermost);
                     });

  OpBuilder b(op);
  Location loc = op.getLoc();
  auto index = [&](OpBuilder &builder, int64_t v) -> Value {
    return builder.create<arith::ConstantIndexOp>(loc, v);
  };
  SmallVector<Value> inputs(op.getDpsInputs());
  SmallVector<Value> outputs(op.getDpsInits());
  SmallVector<Value> ivs(numLoops);

  auto loadInputs = [&](OpBuilder &builder) {
    SmallVector<Value> args;
    for (auto [input, map] : llvm::zip(inputs, ArrayRef(maps).take_front(numInputs))) {
      if (isa<MemRefType>(input.getType()))
        args.push_back(builder.create<memref::LoadOp>(loc, input, indicesAt(builder, loc, map, ivs)));
      else
        args.push_back(input); // a scalar operand
    }
    return args;
  };
  auto outputIndices = [&](OpBuilder &builder, unsigned i) {
    return indicesAt(builder, loc, maps[numInputs + i], ivs);
  };

  // The innermost dim, with the loops around it already built.
  auto buildInnermost = [&](OpBuilder &builder) {
    Value lb = index(builder, 0), ub = index(builder, sizes[innermost]), one = index(builder, 1);
    if (!inRegisters) {
      builder.create<scf::ForOp>(
          loc, lb, ub, one, ValueRange{}, [&](OpBuilder &nb, Location, Value iv, ValueRange) {
            ivs[innermost] = iv;
            SmallVector<Value> args = loadInputs(nb);
            SmallVector<SmallVector<Value>> where;
            for (auto [i, out] : llvm::enumerate(outputs)) {
              where.push_back(outputIndices(nb, i));
              args.push_back(nb.create<memref::LoadOp>(loc, out, where.back()));
            }
            for (auto [i, value] : llvm::enumerate(cloneBody(nb, op, ivs, args)))
              nb.create<memref::StoreOp>(loc, value, outputs[i], where[i]);
            nb.create<scf::YieldOp>(loc);
          });
      return;
    }
    // The outputs do not depend on the innermost iv: load once, accumulate
    // in registers, store once.
    SmallVector<SmallVector<Value>> where;
    SmallVector<Value> initial;
    for (auto [i, out] : llvm::enumerate(outputs)) {
      where.push_back(outputIndices(builder, i));
      initial.push_back(builder.create<memref::LoadOp>(loc, out, where.back()));
    }
    // A short row (a 10-class softmax) unrolled whole: the loop around it
    // is then the innermost, and the vectoriser runs it across rows, one
    // row a lane, each row's chain in order.
    if (sizes[innermost] <= kUnrolledRow) {
      SmallVector<Value> acc = initial;
      for (int64_t k = 0; k < sizes[innermost]; ++k) {
        ivs[innermost] = index(builder, k);
        SmallVector<Value> args = loadInputs(builder);
        args.append(acc.begin(), acc.end());
        acc = cloneBody(builder, op, ivs, args);
      }
      for (auto [i, value] : llvm::enumerate(acc))
        builder.create<memref::StoreOp>(loc, value, outputs[i], where[i]);
      return;
    }
    auto loop = builder.create<scf::ForOp>(
        loc, lb, ub, one, initial, [&](OpBuilder &nb, Location, Value iv, ValueRange acc) {
          ivs[innermost] = iv;
          SmallVector<Value> args = loadInputs(nb);
          args.append(acc.begin(), acc.end());
          SmallVector<Value> next = cloneBody(nb, op, ivs, args);
          for (auto [value, accumulator] : llvm::zip(next, acc)) {
            // The combining add may reassociate: the vectoriser then sums in lanes.
            Operation *def = value.getDefiningOp();
            if (def && isa<arith::AddFOp, arith::SubFOp>(def) &&
                llvm::is_contained(def->getOperands(), accumulator))
              def->setAttr("fastmath", arith::FastMathFlagsAttr::get(
                                           def->getContext(), arith::FastMathFlags::reassoc));
          }
          nb.create<scf::YieldOp>(loc, next);
        });
    for (auto [i, value] : llvm::enumerate(loop.getResults()))
      builder.create<memref::StoreOp>(loc, value, outputs[i], where[i]);
  };

  // Loops lead .. innermost - 1, each an scf.for, then the innermost.
  std::function<void(OpBuilder &, unsigned)> buildFrom = [&](OpBuilder &builder, unsigned d) {
    if (d == innermost)
      return buildInnermost(builder);
    builder.create<scf::ForOp>(loc, index(builder, 0), index(builder, sizes[d]),
                               index(builder, 1), ValueRange{},
                               [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                                 ivs[d] = iv;
                                 buildFrom(nb, d + 1);
                                 nb.create<scf::YieldOp>(loc);
                               });
  };

  // The leading parallel dims as one scf.parallel (one trip when none).
  unsigned parallelDims = std::min(lead, innermost);
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned d = 0; d < std::max(parallelDims, 1u); ++d) {
    lbs.push_back(index(b, 0));
    ubs.push_back(index(b, parallelDims ? sizes[d] : 1));
    steps.push_back(index(b, 1));
  }
  b.create<scf::ParallelOp>(loc, lbs, ubs, steps,
                            [&](OpBuilder &nb, Location, ValueRange parallelIvs) {
                              for (unsigned d = 0; d < parallelDims; ++d)
                                ivs[d] = parallelIvs[d];
                              buildFrom(nb, parallelDims);
                            });
  op.erase();
  return success();
}

struct TfReductionsToLoopsPass : tfc::impl::TfReductionsToLoopsBase<TfReductionsToLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> reductions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.getNumReductionLoops() > 0)
        reductions.push_back(op);
    });
    for (linalg::GenericOp op : reductions)
      (void)lowerReduction(op); // what it cannot lower, linalg-to-loops does
  }
};

} // namespace
