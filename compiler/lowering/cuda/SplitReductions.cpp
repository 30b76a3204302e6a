//===- SplitReductions.cpp - reductions with few results in two stages ----===//
//
// tf-map-to-gpu gives each result of a reduction one thread that runs the
// whole reduction. A loss (one result over 2,048 rows), a bias gradient (96
// results over 2,048 rows) or a gradient norm would then run on a handful
// of threads, each a serial chain of thousands of dependent loads. Such a
// reduction, when its combining step is an associative op (out = out + x,
// max, min, *) and it has too few results to fill a GPU, is split in two
// loop nests over a scratch buffer:
//
//   partial[s, i] = identity (+) x(i, r) for r in slice s of its outermost
//                   reduction dim                         (S x P threads)
//   out[i]        = out[i] (+) partial[0, i] (+) ... (+) partial[S-1, i]
//                                                          (P threads)
//
// S a divisor of that dim's size, near sqrt(R) so that neither stage's
// chain is long. The order of additions is fixed by the
// shapes: the same bits on every run (no atomics), a different rounding
// from one chain (within the tolerances, checked by
// --target=cuda-emulated's tests). Both nests are plain generics: the
// mapping, the memory plan and the CPU emulation need nothing new.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>

namespace tfc {
#define GEN_PASS_DEF_TFSPLITREDUCTIONS
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

/// Fewer results than this leave a GPU mostly idle (an H100 runs 132 x 2,048
/// threads at once): split until about this many threads work.
constexpr int64_t kEnoughThreads = 8192;
/// Each thread of the first stage sums at least this many elements.
constexpr int64_t kMinSlice = 16;

/// The combining op of `op`'s only result, out = combine(out, x), with x not
/// depending on out, and its identity; nullopt when the body is not so.
std::optional<std::pair<Operation *, TypedAttr>> combiner(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArguments().back();
  Operation *yield = body.getTerminator();
  Operation *combine = yield->getOperand(0).getDefiningOp();
  if (!combine || combine->getBlock() != &body || !out.hasOneUse() ||
      combine->getNumOperands() != 2 || combine->getNumResults() != 1 ||
      (combine->getOperand(0) != out && combine->getOperand(1) != out) ||
      combine->getOperand(0) == combine->getOperand(1))
    return std::nullopt;
  Type type = out.getType();
  if (!type.isF32())
    return std::nullopt;
  Builder b(op.getContext());
  float inf = std::numeric_limits<float>::infinity();
  TypedAttr identity;
  if (isa<arith::AddFOp>(combine))
    identity = b.getF32FloatAttr(0.0f);
  else if (isa<arith::MulFOp>(combine))
    identity = b.getF32FloatAttr(1.0f);
  else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    identity = b.getF32FloatAttr(-inf);
  else if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
    identity = b.getF32FloatAttr(inf);
  else
    return std::nullopt;
  // Fast-math flags would let the combine differ between the stages.
  if (auto fm = dyn_cast<arith::ArithFastMathInterface>(combine))
    if (fm.getFastMathFlagsAttr() &&
        fm.getFastMathFlagsAttr().getValue() != arith::FastMathFlags::none)
      return std::nullopt;
  return std::make_pair(combine, identity);
}

LogicalResult split(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  auto iterators = op.getIteratorTypesArray();
  int64_t results = 1, reduced = 1;
  std::optional<unsigned> outer;
  for (auto [d, type] : llvm::enumerate(iterators)) {
    if (type == utils::IteratorType::parallel) {
      results *= sizes[d];
    } else {
      reduced *= sizes[d];
      if (!outer)
        outer = d;
    }
  }
  if (results >= kEnoughThreads || reduced < 4 * kMinSlice)
    return failure();
  auto found = combiner(op);
  if (!found)
    return failure();
  auto [combine, identity] = *found;
  OpOperand *init = op.getDpsInitOperand(0);
  auto outType = dyn_cast<MemRefType>(init->get().getType());
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outType || !outType.hasStaticShape() || !outMap.isProjectedPermutation())
    return failure();
  // S: the largest divisor of the outer reduction dim that gives about
  // kEnoughThreads threads, leaves each a slice of kMinSlice, and at most
  // sqrt(R): the two stages' chains (R / S and S long) balanced.
  const int64_t n = sizes[*outer];
  const int64_t want =
      std::min<int64_t>({int64_t(llvm::divideCeil(kEnoughThreads, results)), reduced / kMinSlice,
                         int64_t(std::ceil(std::sqrt(double(reduced))))});
  int64_t slices = 1;
  for (int64_t s = 2; s <= std::min(n, want); ++s)
    if (n % s == 0)
      slices = s;
  if (slices < 2)
    return failure();
  const int64_t chunk = n / slices;
  sizes[*outer] = chunk;

  MLIRContext *ctx = op.getContext();
  // Every input that reads the outer reduction dim reads it as one result
  // of its own map, on a buffer (checked before anything is built).
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(*outer))
      continue;
    if (!isa<MemRefType>(input->get().getType()) ||
        llvm::count_if(map.getResults(), [&](AffineExpr e) { return e.isFunctionOfDim(*outer); }) != 1 ||
        !llvm::is_contained(map.getResults(), getAffineDimExpr(*outer, ctx)))
      return failure();
  }
  Operation *previous = op->getPrevNode();
  OpBuilder b(op);
  Location loc = op.getLoc();
  const unsigned numLoops = sizes.size();
  // Stage 1: dims (s, d0, ..., dn-1), the outer reduction dim d now ranging
  // over one slice. An input that reads d reads it as a dim of its own
  // (linalg finds loop sizes from operand dims): that dim of the buffer
  // expanded to (S, chunk), read at (s, d).
  auto shift = [&](AffineExpr e) { return e.shiftDims(numLoops, 1); };
  SmallVector<AffineMap> partialMaps;
  SmallVector<Value> partialInputs;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!map.isFunctionOfDim(*outer)) {
      partialMaps.push_back(AffineMap::get(numLoops + 1, 0,
                                           llvm::map_to_vector(map.getResults(), shift), ctx));
      partialInputs.push_back(input->get());
      continue;
    }
    std::optional<unsigned> at = map.getResultPosition(getAffineDimExpr(*outer, ctx));
    SmallVector<ReassociationIndices> groups;
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> results;
    for (auto [pos, e] : llvm::enumerate(map.getResults())) {
      if (pos == *at) {
        groups.push_back({int64_t(shape.size()), int64_t(shape.size()) + 1});
        shape.append({slices, chunk});
        results.append({getAffineDimExpr(0, ctx), shift(e)});
      } else {
        groups.push_back({int64_t(shape.size())});
        shape.push_back(type.getDimSize(pos));
        results.push_back(shift(e));
      }
    }
    // (Splitting one dim of static stride is always a valid view.)
    MemRefType expanded = *memref::ExpandShapeOp::computeExpandedType(type, shape, groups);
    partialInputs.push_back(b.create<memref::ExpandShapeOp>(loc, expanded, input->get(), groups));
    partialMaps.push_back(AffineMap::get(numLoops + 1, 0, results, ctx));
  }
  SmallVector<AffineExpr> scratchResults = {getAffineDimExpr(0, ctx)};
  for (AffineExpr e : outMap.getResults())
    scratchResults.push_back(getAffineDimExpr(cast<AffineDimExpr>(e).getPosition() + 1, ctx));
  partialMaps.push_back(AffineMap::get(numLoops + 1, 0, scratchResults, ctx));
  SmallVector<int64_t> scratchShape = {slices};
  llvm::append_range(scratchShape, outType.getShape());
  Value scratch = b.create<memref::AllocOp>(
      loc, MemRefType::get(scratchShape, outType.getElementType()));
  Value identityValue = b.create<arith::ConstantOp>(loc, identity);
  b.create<linalg::FillOp>(loc, identityValue, scratch);
  SmallVector<utils::IteratorType> partialIterators = {utils::IteratorType::parallel};
  llvm::append_range(partialIterators, iterators);
  auto partial = b.create<linalg::GenericOp>(loc, TypeRange{}, partialInputs,
                                             ValueRange{scratch}, partialMaps, partialIterators);
  IRMapping mapping;
  op.getRegion().cloneInto(&partial.getRegion(), mapping);
  // linalg.index of a dim d: index d + 1 now (and the slice's offset for
  // the outer reduction dim).
  partial.getRegion().walk([&](linalg::IndexOp index) {
    OpBuilder at(index);
    uint64_t d = index.getDim();
    Value shifted = at.create<linalg::IndexOp>(index.getLoc(), d + 1);
    if (d == *outer) {
      Value slice = at.create<linalg::IndexOp>(index.getLoc(), 0);
      Value offset = at.create<arith::MulIOp>(
          index.getLoc(), slice, at.create<arith::ConstantIndexOp>(index.getLoc(), chunk));
      shifted = at.create<arith::AddIOp>(index.getLoc(), offset, shifted);
    }
    index.replaceAllUsesWith(shifted);
    index.erase();
  });
  // Stage 2: the parallel dims in order, then s, a reduction.
  SmallVector<AffineExpr> toFinal(numLoops, getAffineConstantExpr(0, ctx));
  unsigned parallel = 0;
  for (auto [d, type] : llvm::enumerate(iterators))
    if (type == utils::IteratorType::parallel)
      toFinal[d] = getAffineDimExpr(parallel++, ctx);
  AffineMap finalOut = outMap.replaceDimsAndSymbols(toFinal, {}, parallel + 1, 0);
  SmallVector<AffineExpr> finalScratch = {getAffineDimExpr(parallel, ctx)};
  llvm::append_range(finalScratch, finalOut.getResults());
  SmallVector<utils::IteratorType> finalIterators(parallel, utils::IteratorType::parallel);
  finalIterators.push_back(utils::IteratorType::reduction);
  // A zero fill of the result right before the reduction moves after stage
  // 1 (which does not touch it), so tf-map-to-gpu still folds it in.
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(previous);
      fill && fill.getDpsInits()[0] == init->get())
    fill->moveBefore(op);
  b.setInsertionPoint(op);
  b.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{scratch}, ValueRange{init->get()},
      SmallVector<AffineMap>{AffineMap::get(parallel + 1, 0, finalScratch, ctx), finalOut},
      finalIterators, [&](OpBuilder &nested, Location l, ValueRange args) {
        IRMapping m;
        Value out = args[1], part = args[0];
        Operation *clone = nested.clone(*combine, m);
        bool outFirst = combine->getOperand(0) ==
                        op.getRegion().front().getArguments().back();
        clone->setOperand(0, outFirst ? out : part);
        clone->setOperand(1, outFirst ? part : out);
        nested.create<linalg::YieldOp>(l, clone->getResult(0));
      });
  op.erase();
  return success();
}

struct TfSplitReductionsPass : tfc::impl::TfSplitReductionsBase<TfSplitReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      (void)split(op);
  }
};

} // namespace
