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
// A large full reduction of whole row-major inputs (a parameter's sum of
// squares in a gradient norm) is flattened to 1-D and its slices
// interleaved (slice s takes elements s, s + S, ...: adjacent threads read
// adjacent elements) with up to 8,192 of them, and its partials split again
// when there are 1,024 or more: three stages, each thread's chain short.
// Long rows (splitLongRows, below) split the same way, a row's lanes
// interleaved instead of its slices contiguous, so that stage 1 reads
// coalesced.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

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

/// Stage 2's dims: `iterators`' parallel dims in order (what each loop dim
/// of the reduction becomes: its parallel dim, or 0 for a reduction dim),
/// then the partials' dim, a reduction.
struct FinalDims {
  SmallVector<AffineExpr> fromLoops;
  SmallVector<utils::IteratorType> iterators;
  unsigned parallel = 0;
};

FinalDims finalDims(ArrayRef<utils::IteratorType> iterators, MLIRContext *ctx) {
  FinalDims dims;
  dims.fromLoops.assign(iterators.size(), getAffineConstantExpr(0, ctx));
  for (auto [d, type] : llvm::enumerate(iterators))
    if (type == utils::IteratorType::parallel)
      dims.fromLoops[d] = getAffineDimExpr(dims.parallel++, ctx);
  dims.iterators.assign(dims.parallel, utils::IteratorType::parallel);
  dims.iterators.push_back(utils::IteratorType::reduction);
  return dims;
}

/// `combine` (the reduction `op`'s out = combine(out, x), in its operand
/// order) of `out` and a partial, at `b`.
Value combinePartial(OpBuilder &b, linalg::GenericOp op, Operation *combine, Value out,
                     Value part) {
  IRMapping mapping;
  Operation *clone = b.clone(*combine, mapping);
  bool outFirst = combine->getOperand(0) == op.getRegion().front().getArguments().back();
  clone->setOperand(0, outFirst ? out : part);
  clone->setOperand(1, outFirst ? part : out);
  return clone->getResult(0);
}

/// A full reduction (one result) of this many elements or more, of
/// contiguous inputs, is flattened and read interleaved (flatten, below).
constexpr int64_t kFlattenFrom = 4096;
/// A first stage of interleaved slices leaves this many partials or more to
/// a second split of its own (three stages), not one thread's chain.
constexpr int64_t kResplitFrom = 1024;

/// `op` as a 1-D reduction over its inputs collapsed to 1-D, when it
/// reduces every dim of row-major inputs it reads whole in order (a
/// parameter's sum of squares in a gradient norm, a loss): null otherwise.
/// Its slices can then be interleaved, adjacent threads reading adjacent
/// elements, where slices of its outermost dim would be rows apart.
linalg::GenericOp flatten(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || op.getNumParallelLoops() != 0 ||
      op.getNumLoops() < 2 || !op.getRegion().front().getOps<linalg::IndexOp>().empty())
    return {};
  auto outType = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (!outType || outType.getRank() != 0 || llvm::any_of(sizes, ShapedType::isDynamic))
    return {};
  int64_t reduced = 1;
  for (int64_t size : sizes)
    reduced *= size;
  // Enough interleaved slices (split's choice below: a divisor of R).
  int64_t slices = 1;
  for (int64_t d = 2; d <= std::min(kEnoughThreads, reduced / kMinSlice); ++d)
    if (reduced % d == 0)
      slices = d;
  if (reduced < kFlattenFrom || slices < 64)
    return {};
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || !type.getLayout().isIdentity() || !type.hasStaticShape() ||
        !op.getMatchingIndexingMap(input).isIdentity())
      return {};
  }
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < int64_t(sizes.size()); ++d)
    all.front().push_back(d);
  SmallVector<Value> inputs;
  for (Value input : op.getDpsInputs())
    inputs.push_back(b.create<memref::CollapseShapeOp>(loc, input, all));
  AffineMap element = AffineMap::get(1, 0, getAffineDimExpr(0, ctx));
  SmallVector<AffineMap> maps(inputs.size(), element);
  maps.push_back(AffineMap::get(1, 0, ArrayRef<AffineExpr>{}, ctx));
  auto flat =
      b.create<linalg::GenericOp>(loc, TypeRange{}, inputs, op.getDpsInits(), maps,
                                  SmallVector<utils::IteratorType>{utils::IteratorType::reduction});
  IRMapping mapping;
  op.getRegion().cloneInto(&flat.getRegion(), mapping);
  // A zero fill of the result right before stays right before (split
  // moves it on to stage 2, for tf-map-to-gpu to fold in).
  Operation *previous = inputs.empty() ? nullptr : inputs.front().getDefiningOp()->getPrevNode();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(previous);
      fill && fill.getDpsInits()[0] == op.getDpsInits()[0])
    fill->moveBefore(flat);
  op.erase();
  return flat;
}

/// Splits `op` (see the file comment). `interleave` (a flattened 1-D
/// reduction): slice s takes elements s, s + S, s + 2S, ..., so that
/// adjacent threads read adjacent elements, and S is not held to sqrt(R)
/// (the caller splits the partials again). `second`, if given, gets stage 2.
LogicalResult split(linalg::GenericOp op, bool interleave = false,
                    linalg::GenericOp *second = nullptr) {
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
  const int64_t want = interleave
                           ? std::min<int64_t>(kEnoughThreads, reduced / kMinSlice)
                           : std::min<int64_t>({int64_t(llvm::divideCeil(kEnoughThreads, results)),
                                                reduced / kMinSlice,
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
        if (interleave) { // element r * S + s
          shape.append({chunk, slices});
          results.append({shift(e), getAffineDimExpr(0, ctx)});
        } else { // element s * chunk + r
          shape.append({slices, chunk});
          results.append({getAffineDimExpr(0, ctx), shift(e)});
        }
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
  FinalDims final = finalDims(iterators, ctx);
  const unsigned parallel = final.parallel;
  AffineMap finalOut = outMap.replaceDimsAndSymbols(final.fromLoops, {}, parallel + 1, 0);
  SmallVector<AffineExpr> finalScratch = {getAffineDimExpr(parallel, ctx)};
  llvm::append_range(finalScratch, finalOut.getResults());
  // A zero fill of the result right before the reduction moves after stage
  // 1 (which does not touch it), so tf-map-to-gpu still folds it in.
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(previous);
      fill && fill.getDpsInits()[0] == init->get())
    fill->moveBefore(op);
  b.setInsertionPoint(op);
  auto stage2 = b.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{scratch}, ValueRange{init->get()},
      SmallVector<AffineMap>{AffineMap::get(parallel + 1, 0, finalScratch, ctx), finalOut},
      final.iterators, [&](OpBuilder &nested, Location l, ValueRange args) {
        nested.create<linalg::YieldOp>(l, combinePartial(nested, op, combine, args[1], args[0]));
      });
  op.erase();
  if (second)
    *second = stage2;
  return success();
}

//===----------------------------------------------------------------------===//
// Long rows
//===----------------------------------------------------------------------===//

/// A reduction over a row's contiguous dim this long or longer is read a
/// lane a column: thread per result would stride its lanes a row apart.
constexpr int64_t kLongRow = 256;

/// The lanes of a long row of `n`: a divisor of n in [16, 64] nearest a warp
/// (32) by ratio; 0 when it has none.
int64_t rowLanes(int64_t n) {
  int64_t best = 0;
  for (int64_t s = 16; s <= 64; ++s)
    if (n % s == 0 && (best == 0 || std::abs(std::log(double(s) / 32)) <
                                        std::abs(std::log(double(best) / 32))))
      best = s;
  return best;
}

/// An arg-max (or arg-min) over reduction dim `dim`: outs (value, index),
///   better = cmpf ogt|olt, candidate, value
///   value  = select better, candidate, value
///   index  = select better, index_cast(linalg.index dim), index
/// which keeps the first best element in iteration order (NaNs never win).
struct ArgBest {
  arith::CmpFPredicate predicate;
  unsigned dim;
};

std::optional<ArgBest> argBest(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 2)
    return std::nullopt;
  Block &body = op.getRegion().front();
  unsigned n = body.getNumArguments();
  BlockArgument value = body.getArgument(n - 2), index = body.getArgument(n - 1);
  Operation *yield = body.getTerminator();
  auto pickValue = yield->getOperand(0).getDefiningOp<arith::SelectOp>();
  auto pickIndex = yield->getOperand(1).getDefiningOp<arith::SelectOp>();
  if (!pickValue || !pickIndex || pickValue.getCondition() != pickIndex.getCondition() ||
      pickValue.getFalseValue() != value || pickIndex.getFalseValue() != index ||
      !value.getType().isF32() || !isa<IntegerType>(index.getType()))
    return std::nullopt;
  auto better = pickValue.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!better || better.getRhs() != value || better.getLhs() != pickValue.getTrueValue() ||
      (better.getPredicate() != arith::CmpFPredicate::OGT &&
       better.getPredicate() != arith::CmpFPredicate::OLT))
    return std::nullopt;
  auto cast = pickIndex.getTrueValue().getDefiningOp<arith::IndexCastOp>();
  auto at = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
  if (!at || op.getIteratorTypesArray()[at.getDim()] != utils::IteratorType::reduction)
    return std::nullopt;
  // The value and index are read by these three ops alone.
  if (!llvm::all_of(value.getUsers(), [&](Operation *u) { return u == better || u == pickValue; }) ||
      !index.hasOneUse())
    return std::nullopt;
  return ArgBest{better.getPredicate(), unsigned(at.getDim())};
}

/// The constant a linalg.fill among the ops right before `op` writes into
/// `buffer`, if any.
std::optional<int64_t> filledIntBefore(linalg::GenericOp op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
       prev = prev->getPrevNode()) {
    if (fill.getDpsInits()[0] != buffer)
      continue;
    llvm::APInt value;
    if (!matchPattern(fill.getInputs()[0], m_ConstantInt(&value)))
      return std::nullopt;
    return value.getSExtValue();
  }
  return std::nullopt;
}

/// A reduction over one dim that some input reads as its innermost,
/// contiguous dim, n >= kLongRow long, with many results (tf-map-to-gpu
/// gives each result a thread: 32 lanes reading 32 rows, 4n bytes apart):
/// the argmax of the medium encoder's accuracy over 1,000 classes, or a
/// row's max or sum of exp in a masked loss. Its S lanes (n = chunk x S,
/// S near 32) become a parallel dim of their own, the innermost:
///
///   partial[i, s] = identity (+) x(i, r * S + s) for r < chunk   (P x S threads)
///   out[i]        = out[i] (+) partial[i, 0] (+) ... (+) partial[i, S-1]
///
/// so that adjacent threads read adjacent elements. An arg-max's partials
/// hold each lane's first best element and its index; stage 2 takes a
/// partial when it is better, or as good with a smaller index, which is
/// the first best element of the row (the index's init must be a constant
/// fill <= 0, below every index, so that a tie with the init keeps it, as
/// the one chain does). The order is fixed by the shapes.
LogicalResult splitLongRows(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() != 1)
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  auto iterators = op.getIteratorTypesArray();
  unsigned dim = 0;
  while (iterators[dim] != utils::IteratorType::reduction)
    ++dim;
  const int64_t n = sizes[dim], lanes = rowLanes(n);
  if (n < kLongRow || lanes == 0)
    return failure();
  MLIRContext *ctx = op.getContext();
  AffineExpr reduced = getAffineDimExpr(dim, ctx);
  // Some input reads the dim as its innermost, unit-stride dim; every input
  // that reads it reads it as one plain result.
  bool rowMajor = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(dim))
      continue;
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || llvm::count_if(map.getResults(),
                                [&](AffineExpr e) { return e.isFunctionOfDim(dim); }) != 1 ||
        !llvm::is_contained(map.getResults(), reduced))
      return failure();
    if (map.getResults().back() == reduced && type.getLayout().isIdentity())
      rowMajor = true;
  }
  if (!rowMajor)
    return failure();
  // What combines: one result's associative op, or an arg-max.
  std::optional<std::pair<Operation *, TypedAttr>> combine;
  std::optional<ArgBest> best;
  if (op.getNumDpsInits() == 1) {
    combine = combiner(op);
  } else if ((best = argBest(op)); best && best->dim == dim) {
    std::optional<int64_t> first = filledIntBefore(op, op.getDpsInits()[1]);
    if (!first || *first > 0)
      best.reset();
  } else {
    best.reset();
  }
  if (!combine && !best)
    return failure();
  SmallVector<AffineMap> outMaps;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    auto type = dyn_cast<MemRefType>(init.get().getType());
    if (!type || !type.hasStaticShape() || !op.getMatchingIndexingMap(&init).isProjectedPermutation())
      return failure();
    outMaps.push_back(op.getMatchingIndexingMap(&init));
  }

  // Constant fills of the results right before: they move after stage 1
  // (which does not touch them), so tf-map-to-gpu still folds them in.
  SmallVector<Operation *> initFills;
  for (Operation *prev = op->getPrevNode(); auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
       prev = prev->getPrevNode())
    if (llvm::is_contained(op.getDpsInits(), fill.getDpsInits()[0]))
      initFills.push_back(fill);

  OpBuilder b(op);
  Location loc = op.getLoc();
  const unsigned numLoops = sizes.size();
  const int64_t chunk = n / lanes;
  // Stage 1: dims (d0, ..., dn-1, s), `dim` now ranging over chunk; an input
  // that reads `dim` reads it through that dim expanded to (chunk, S), at
  // (dim, s).
  AffineExpr lane = getAffineDimExpr(numLoops, ctx);
  SmallVector<AffineMap> partialMaps;
  SmallVector<Value> partialInputs;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(dim)) {
      partialMaps.push_back(AffineMap::get(numLoops + 1, 0, map.getResults(), ctx));
      partialInputs.push_back(input->get());
      continue;
    }
    auto type = cast<MemRefType>(input->get().getType());
    SmallVector<ReassociationIndices> groups;
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> results;
    for (auto [pos, e] : llvm::enumerate(map.getResults())) {
      if (e == reduced) {
        groups.push_back({int64_t(shape.size()), int64_t(shape.size()) + 1});
        shape.append({chunk, lanes});
        results.append({e, lane});
      } else {
        groups.push_back({int64_t(shape.size())});
        shape.push_back(type.getDimSize(pos));
        results.push_back(e);
      }
    }
    MemRefType expanded = *memref::ExpandShapeOp::computeExpandedType(type, shape, groups);
    partialInputs.push_back(b.create<memref::ExpandShapeOp>(loc, expanded, input->get(), groups));
    partialMaps.push_back(AffineMap::get(numLoops + 1, 0, results, ctx));
  }
  // The partials: each result's shape, then S.
  SmallVector<Value> scratch;
  for (auto [init, map] : llvm::zip(op.getDpsInits(), outMaps)) {
    auto type = cast<MemRefType>(init.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.push_back(lanes);
    scratch.push_back(b.create<memref::AllocOp>(loc, MemRefType::get(shape, type.getElementType())));
    SmallVector<AffineExpr> results(map.getResults());
    results.push_back(lane);
    partialMaps.push_back(AffineMap::get(numLoops + 1, 0, results, ctx));
  }
  float inf = std::numeric_limits<float>::infinity();
  if (combine) {
    b.create<linalg::FillOp>(loc, b.create<arith::ConstantOp>(loc, combine->second).getResult(),
                             scratch[0]);
  } else {
    bool max = best->predicate == arith::CmpFPredicate::OGT;
    Type indexType = cast<MemRefType>(scratch[1].getType()).getElementType();
    b.create<linalg::FillOp>(loc, b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(max ? -inf : inf)).getResult(),
                             scratch[0]);
    b.create<linalg::FillOp>(
        loc,
        b.create<arith::ConstantOp>(
             loc, b.getIntegerAttr(indexType, llvm::APInt::getSignedMaxValue(
                                                  indexType.getIntOrFloatBitWidth())))
            .getResult(),
        scratch[1]);
  }
  SmallVector<utils::IteratorType> partialIterators(iterators);
  partialIterators.push_back(utils::IteratorType::parallel);
  auto partial = b.create<linalg::GenericOp>(loc, TypeRange{}, partialInputs, scratch,
                                             partialMaps, partialIterators);
  IRMapping mapping;
  op.getRegion().cloneInto(&partial.getRegion(), mapping);
  // linalg.index of `dim`: the element's index in the row, r * S + s.
  partial.getRegion().walk([&](linalg::IndexOp index) {
    if (index.getDim() != dim)
      return;
    OpBuilder at(index);
    Location l = index.getLoc();
    Value r = at.create<linalg::IndexOp>(l, dim);
    Value s = at.create<linalg::IndexOp>(l, numLoops);
    Value offset = at.create<arith::MulIOp>(l, r, at.create<arith::ConstantIndexOp>(l, lanes));
    index.replaceAllUsesWith(at.create<arith::AddIOp>(l, offset, s).getResult());
    index.erase();
  });
  // Stage 2: the parallel dims in order, then s, a reduction.
  FinalDims final = finalDims(iterators, ctx);
  const unsigned parallel = final.parallel;
  SmallVector<AffineMap> finalMaps;
  for (AffineMap map : outMaps) {
    AffineMap out = map.replaceDimsAndSymbols(final.fromLoops, {}, parallel + 1, 0);
    SmallVector<AffineExpr> results(out.getResults());
    results.push_back(getAffineDimExpr(parallel, ctx));
    finalMaps.push_back(AffineMap::get(parallel + 1, 0, results, ctx));
  }
  for (AffineMap map : outMaps)
    finalMaps.push_back(map.replaceDimsAndSymbols(final.fromLoops, {}, parallel + 1, 0));
  for (Operation *fill : llvm::reverse(initFills))
    fill->moveBefore(op);
  b.setInsertionPoint(op);
  b.create<linalg::GenericOp>(
      loc, TypeRange{}, scratch, op.getDpsInits(), finalMaps, final.iterators,
      [&](OpBuilder &nested, Location l, ValueRange args) {
        if (combine) {
          nested.create<linalg::YieldOp>(
              l, combinePartial(nested, op, combine->first, args[1], args[0]));
          return;
        }
        Value partValue = args[0], partIndex = args[1], value = args[2], index = args[3];
        Value better = nested.create<arith::CmpFOp>(l, best->predicate, partValue, value);
        Value tie = nested.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, partValue, value);
        Value earlier = nested.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, partIndex, index);
        Value take = nested.create<arith::OrIOp>(
            l, better, nested.create<arith::AndIOp>(l, tie, earlier));
        nested.create<linalg::YieldOp>(
            l, ValueRange{nested.create<arith::SelectOp>(l, take, partValue, value),
                          nested.create<arith::SelectOp>(l, take, partIndex, index)});
      });
  op.erase();
  return success();
}

struct TfSplitReductionsPass : tfc::impl::TfSplitReductionsBase<TfSplitReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics) {
      // A large full reduction: interleaved slices, then its partials
      // split again if many (three stages).
      if (linalg::GenericOp flat = flatten(op)) {
        linalg::GenericOp partials;
        if (succeeded(split(flat, /*interleave=*/true, &partials)) &&
            partials.getStaticLoopRanges().back() >= kResplitFrom)
          (void)split(partials);
        continue;
      }
      if (failed(split(op)))
        (void)splitLongRows(op);
    }
  }
};

} // namespace
