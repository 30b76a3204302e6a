//===- MapToGpu.cpp - every loop nest of an entry becomes a GPU kernel ----===//
//
// On a GPU the host only launches: every memory access of an entry must be
// in a kernel (CUDA.md §3c: upstream's loop mapping leaves full reductions
// and scalar code on the host and strides lanes along the outer dim). So
// each `linalg.generic` on buffers (and each `linalg.fill` and
// `memref.copy`, as generics) becomes one `gpu.launch`, mapped by its static
// shape:
//
//   - its parallel iterations linearised, the innermost dim fastest (lanes
//     along the contiguous dim of row-major results: coalesced stores),
//     256-thread blocks, one iteration a thread;
//   - except a long elementwise nest (no reduction, 32,768 iterations or
//     more, its innermost dim a multiple of 4, every result a row-major
//     buffer of 4-byte elements, or 2-byte bf16 bits, along it): 4 consecutive iterations a
//     thread, their loads first, then their bodies, then their stores. Where
//     every such buffer is 16-byte aligned (checked in the kernel, once),
//     each reads and writes its 4 elements as one vector (vector.load and
//     vector.store, after memref.assume_alignment: ld/st.global.v4.f32);
//     else an element at a time. Dropout's mask words come 4 from one
//     Philox block: the 4 iterations compute it once (LLVM's CSE). Each
//     iteration computes what it computed alone: the same bits.
//   - its reduction dims, if any, a serial loop inside the thread with the
//     accumulators in registers (scf.for iter_args) and each result stored
//     once: the same order of additions on every run, so the same bits, and
//     no float atomics.
//
// A constant table (memref.get_global, and views of it) is read inside the
// kernel, so outlining moves the global into the GPU module.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace tfc {
#define GEN_PASS_DEF_TFMAPTOGPU
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

/// Threads a block: 8 warps, the size CUDA.md's kernels assembled without
/// spills at 16-26 registers.
constexpr int64_t kBlockThreads = 256;

/// The index of `expr` over the loop indices `ivs`.
Value applyExpr(OpBuilder &b, Location loc, AffineExpr expr, ArrayRef<Value> ivs) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return ivs[dim.getPosition()];
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return b.create<arith::ConstantIndexOp>(loc, constant.getValue());
  auto map = AffineMap::get(ivs.size(), 0, expr);
  return b.create<affine::AffineApplyOp>(loc, map, ivs);
}

SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map, ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(applyExpr(b, loc, expr, ivs));
  return indices;
}

/// Clones `op`'s body (not its yield) at `b`, its block arguments mapped to
/// `args` and linalg.index to `ivs`; returns the yielded values.
SmallVector<Value> cloneBody(OpBuilder &b, linalg::GenericOp op, ValueRange args,
                             ArrayRef<Value> ivs) {
  Block &body = op.getRegion().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  for (Operation &inner : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  SmallVector<Value> yielded;
  for (Value v : body.getTerminator()->getOperands())
    yielded.push_back(mapping.lookupOrDefault(v));
  return yielded;
}

/// The iteration `ivs` (its parallel indices) of `op`, which has reduction
/// dims: their loops run here, accumulating in registers, each result
/// stored once. (Elementwise nests go through emitIterations.)
void emitReduction(OpBuilder &b, Location loc, linalg::GenericOp op, SmallVector<Value> ivs,
                   ArrayRef<unsigned> reductionDims, ArrayRef<int64_t> sizes,
                   ArrayRef<Value> filled) {
  // The results' indices: the parallel ivs (their maps name no reduction dim).
  SmallVector<Value> resultIvs(ivs);
  for (unsigned d : reductionDims)
    resultIvs[d] = b.create<arith::ConstantIndexOp>(loc, 0);
  SmallVector<OpOperand *> inits;
  for (OpOperand &init : op.getDpsInitsMutable())
    inits.push_back(&init);
  // The results' current values: the accumulators' start.
  SmallVector<Value> current;
  for (auto [i, init] : llvm::enumerate(inits)) {
    if (i < filled.size() && filled[i]) { // the fill folded in: its value, not a load
      current.push_back(b.clone(*filled[i].getDefiningOp())->getResult(0));
      continue;
    }
    current.push_back(b.create<memref::LoadOp>(
        loc, init->get(), applyMap(b, loc, op.getMatchingIndexingMap(init), resultIvs)));
  }
  auto loadInputsAndRun = [&](OpBuilder &inner, ArrayRef<Value> loopIvs,
                              ValueRange accumulators) {
    SmallVector<Value> args;
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (!isa<MemRefType>(input->get().getType())) { // a scalar (a fill's value)
        args.push_back(input->get());
        continue;
      }
      args.push_back(inner.create<memref::LoadOp>(
          loc, input->get(), applyMap(inner, loc, op.getMatchingIndexingMap(input), loopIvs)));
    }
    llvm::append_range(args, accumulators);
    return cloneBody(inner, op, args, loopIvs);
  };
  // One scf.for a reduction dim, outermost first, the accumulators carried.
  std::function<SmallVector<Value>(OpBuilder &, unsigned, ValueRange)> nest =
      [&](OpBuilder &at, unsigned level, ValueRange acc) -> SmallVector<Value> {
    if (level == reductionDims.size())
      return loadInputsAndRun(at, ivs, acc);
    Value lb = at.create<arith::ConstantIndexOp>(loc, 0);
    Value ub = at.create<arith::ConstantIndexOp>(loc, sizes[reductionDims[level]]);
    Value step = at.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = at.create<scf::ForOp>(
        loc, lb, ub, step, acc,
        [&](OpBuilder &inner, Location, Value iv, ValueRange iterArgs) {
          ivs[reductionDims[level]] = iv;
          SmallVector<Value> next = nest(inner, level + 1, iterArgs);
          inner.create<scf::YieldOp>(loc, next);
        });
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> results = nest(b, 0, current);
  for (auto [init, value] : llvm::zip(inits, results))
    b.create<memref::StoreOp>(loc, value, init->get(),
                              applyMap(b, loc, op.getMatchingIndexingMap(init), resultIvs));
}

/// A long elementwise nest: kCoarsening consecutive iterations of its
/// innermost dim a thread, from kCoarsenFrom iterations (below, the
/// kernels are few blocks, and latency, not bandwidth, bounds them).
constexpr int64_t kCoarsening = 4;
constexpr int64_t kCoarsenFrom = 32768;
constexpr int64_t kVectorBytes = 16;

/// Whether `operand`'s elements at consecutive indices of loop dim `inner`
/// are consecutive 4-byte (or 2-byte: bf16 bits) elements of a row-major
/// buffer whose rows are whole vectors of 4: with its base 16-byte aligned,
/// 4 iterations from an index multiple of 4 are one 16-byte (8-byte) access.
bool rowMajorAlong(linalg::GenericOp op, OpOperand &operand, unsigned inner) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || !type.getLayout().isIdentity() || !type.hasStaticShape() || type.getRank() == 0 ||
      (type.getElementTypeBitWidth() != 32 && type.getElementTypeBitWidth() != 16) ||
      type.getShape().back() % kCoarsening != 0)
    return false;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (map.getNumResults() != type.getRank() ||
      map.getResults().back() != getAffineDimExpr(inner, op.getContext()))
    return false;
  for (AffineExpr expr : map.getResults().drop_back())
    if (expr.isFunctionOfDim(inner))
      return false;
  return true;
}

/// Whether `op` (mappable, all loops parallel) takes kCoarsening iterations
/// a thread, and the operands whose accesses may then be 16-byte ones.
bool coarsenable(linalg::GenericOp op, ArrayRef<int64_t> sizes, int64_t iterations,
                 SmallVectorImpl<Value> &vectorBuffers) {
  if (op.getNumReductionLoops() != 0 || iterations < kCoarsenFrom || sizes.empty() ||
      sizes.back() % kCoarsening != 0)
    return false;
  const unsigned inner = sizes.size() - 1;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!rowMajorAlong(op, init, inner))
      return false;
    vectorBuffers.push_back(init.get());
  }
  for (OpOperand *input : op.getDpsInputOperands())
    if (rowMajorAlong(op, *input, inner))
      vectorBuffers.push_back(input->get());
  return true;
}

/// The iterations `ivsOf` (all loops parallel; consecutive along the
/// innermost dim, the first's index a multiple of their count) of `op`, in
/// one thread: every iteration's loads, then the bodies, then the stores.
/// The buffers of `vectorBuffers` are read and written a vector of the
/// iterations at once (vector.load/store at the first's indices), the
/// others an element at a time.
void emitIterations(OpBuilder &b, Location loc, linalg::GenericOp op,
                    ArrayRef<SmallVector<Value>> ivsOf, ArrayRef<Value> vectorBuffers) {
  const int64_t count = ivsOf.size();
  auto vectored = [&](OpOperand &operand) {
    return llvm::is_contained(vectorBuffers, operand.get());
  };
  // Operand `operand`'s element of every iteration.
  auto load = [&](OpOperand &operand) {
    SmallVector<Value> elements;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (vectored(operand)) {
      auto type = VectorType::get({count}, getElementTypeOrSelf(operand.get().getType()));
      Value vector = b.create<vector::LoadOp>(loc, type, operand.get(),
                                              applyMap(b, loc, map, ivsOf.front()));
      for (int64_t k = 0; k < count; ++k)
        elements.push_back(b.create<vector::ExtractOp>(loc, vector, k));
      return elements;
    }
    for (const SmallVector<Value> &ivs : ivsOf)
      elements.push_back(b.create<memref::LoadOp>(loc, operand.get(), applyMap(b, loc, map, ivs)));
    return elements;
  };
  std::vector<SmallVector<Value>> args(count);
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(input->get().getType())) { // a scalar (a fill's value)
      for (auto &a : args)
        a.push_back(input->get());
      continue;
    }
    for (auto [k, element] : llvm::enumerate(load(*input)))
      args[k].push_back(element);
  }
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument arg = op.getMatchingBlockArgument(&init);
    if (arg.use_empty()) {
      Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(arg.getType()));
      for (auto &a : args)
        a.push_back(zero);
      continue;
    }
    for (auto [k, element] : llvm::enumerate(load(init)))
      args[k].push_back(element);
  }
  std::vector<SmallVector<Value>> results;
  for (auto [k, ivs] : llvm::enumerate(ivsOf))
    results.push_back(cloneBody(b, op, args[k], ivs));
  for (auto [r, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (vectored(init)) {
      SmallVector<Value> elements;
      for (const SmallVector<Value> &result : results)
        elements.push_back(result[r]);
      auto type = VectorType::get({count}, elements.front().getType());
      Value vector = b.create<vector::FromElementsOp>(loc, type, elements);
      b.create<vector::StoreOp>(loc, vector, init.get(), applyMap(b, loc, map, ivsOf.front()));
      continue;
    }
    for (auto [k, ivs] : llvm::enumerate(ivsOf))
      b.create<memref::StoreOp>(loc, results[k][r], init.get(), applyMap(b, loc, map, ivs));
  }
}

/// Why `op` cannot be mapped, or "".
std::string unmappable(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics())
    return "not on buffers";
  for (int64_t size : op.getStaticLoopRanges())
    if (ShapedType::isDynamic(size))
      return "a dynamic loop size";
  // Each result element belongs to one thread: its map names every parallel
  // dim and no reduction dim.
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (!map.isProjectedPermutation())
      return "a result indexed by more than loop indices";
    for (auto [d, type] : llvm::enumerate(op.getIteratorTypesArray()))
      if ((type == utils::IteratorType::parallel) != map.isFunctionOfDim(d))
        return "a result not indexed by exactly the parallel dims";
  }
  return "";
}

/// The constants a reduction's results were filled with right before it (an
/// argmax's value and index), by init (null: not filled): those fills fold
/// into the reduction's kernel (the accumulators start at the constant
/// instead of a load), one launch fewer. Its results cover the parallel
/// dims (unmappable checks), so the fills' values are all overwritten.
/// The fills go in `folded`.
SmallVector<Value> foldableFills(linalg::GenericOp op, SmallVector<Operation *> &folded) {
  SmallVector<Value> values(op.getNumDpsInits());
  if (op.getNumReductionLoops() == 0)
    return {};
  for (Operation *previous = op->getPrevNode(); previous; previous = previous->getPrevNode()) {
    if (isMemoryEffectFree(previous) && previous->getNumRegions() == 0)
      continue;
    auto fill = dyn_cast<linalg::FillOp>(previous);
    if (!fill || !fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>())
      break;
    auto init = llvm::find(op.getDpsInits(), fill.getDpsInits()[0]);
    if (init == op.getDpsInits().end())
      break;
    Value &value = values[init - op.getDpsInits().begin()];
    if (value) // filled twice: the later fill is the one folded
      break;
    value = fill.getDpsInputs()[0];
    folded.push_back(fill);
  }
  if (folded.empty())
    return {};
  return values;
}

/// Replaces `op` by one gpu.launch (see the file comment); `filled`, if not
/// empty, holds the values its results were filled with (foldableFills).
LogicalResult mapGeneric(linalg::GenericOp op, ArrayRef<Value> filled, bool coarsen) {
  if (std::string why = unmappable(op); !why.empty())
    return op.emitError() << "tf-map-to-gpu: cannot map this loop nest to the GPU: " << why;
  Location loc = op.getLoc();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<unsigned> parallelDims, reductionDims;
  for (auto [d, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (type == utils::IteratorType::parallel ? parallelDims : reductionDims).push_back(d);
  int64_t iterations = 1;
  for (unsigned d : parallelDims)
    iterations *= sizes[d];
  if (iterations == 0) { // nothing to compute or store
    op.erase();
    return success();
  }
  SmallVector<Value> vectorBuffers;
  const bool coarse =
      coarsen && filled.empty() && coarsenable(op, sizes, iterations, vectorBuffers);
  const int64_t perThread = coarse ? kCoarsening : 1;
  const int64_t work = iterations / perThread; // a thread's share each
  const int64_t threads = std::min<int64_t>(kBlockThreads, llvm::alignTo(work, 32));
  const int64_t blocks = llvm::divideCeil(work, threads);
  if (blocks > std::numeric_limits<int32_t>::max())
    return op.emitError() << "tf-map-to-gpu: " << iterations << " iterations need more blocks "
                          << "than a grid has";

  OpBuilder b(op);
  auto constant = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); };
  Value one = constant(1);
  auto launch = b.create<gpu::LaunchOp>(loc, constant(blocks), one, one, constant(threads), one,
                                        one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  Value linear = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, launch.getBlockIds().x, constant(threads)),
      launch.getThreadIds().x);
  Value inRange =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, linear, constant(work));
  auto guard = b.create<scf::IfOp>(loc, inRange, /*withElseRegion=*/false);
  b.create<gpu::TerminatorOp>(loc);
  b.setInsertionPointToStart(guard.thenBlock());
  // The parallel indices of thread `linear`'s (first) iteration, the
  // innermost dim fastest; coarse, the innermost counts groups of 4.
  SmallVector<Value> ivs(sizes.size());
  Value rest = linear;
  for (unsigned d : llvm::reverse(parallelDims)) {
    const bool innermost = d == parallelDims.back();
    Value size = constant(innermost ? sizes[d] / perThread : sizes[d]);
    ivs[d] = d == parallelDims.front() ? rest : b.create<arith::RemUIOp>(loc, rest, size);
    if (d != parallelDims.front())
      rest = b.create<arith::DivUIOp>(loc, rest, size);
  }
  if (!reductionDims.empty()) {
    emitReduction(b, loc, op, ivs, reductionDims, sizes, filled);
    op.erase();
    return success();
  }
  if (!coarse) {
    emitIterations(b, loc, op, {ivs}, {});
    op.erase();
    return success();
  }
  const unsigned inner = parallelDims.back();
  ivs[inner] = b.create<arith::MulIOp>(loc, ivs[inner], constant(kCoarsening));
  auto iterationsOf = [&](OpBuilder &at) {
    SmallVector<SmallVector<Value>> ivsOf;
    for (int64_t k = 0; k < kCoarsening; ++k) {
      ivsOf.push_back(ivs);
      // (An `or`: the first index is a multiple of 4, and LLVM then sees
      // that i / 4 is the same for all 4, dropout's Philox block.)
      if (k)
        ivsOf.back()[inner] = at.create<arith::OrIOp>(
            loc, ivs[inner], at.create<arith::ConstantIndexOp>(loc, k));
    }
    return ivsOf;
  };
  // Every row-major buffer 16-byte aligned (the arena's and the runtime's
  // buffers are, at 64 and 256 bytes; a check costs a few instructions a
  // thread): said to LLVM, which then joins each 4 accesses into one.
  Value aligned;
  for (Value buffer : vectorBuffers) {
    Value address = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
    Value low = b.create<arith::AndIOp>(loc, address, constant(kVectorBytes - 1));
    Value zero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, low, constant(0));
    aligned = aligned ? b.create<arith::AndIOp>(loc, aligned, zero).getResult() : zero;
  }
  auto split = b.create<scf::IfOp>(loc, aligned, /*withElseRegion=*/true);
  OpBuilder vectors = OpBuilder::atBlockBegin(split.thenBlock());
  for (Value buffer : vectorBuffers)
    vectors.create<memref::AssumeAlignmentOp>(loc, buffer, kVectorBytes);
  emitIterations(vectors, loc, op, iterationsOf(vectors), vectorBuffers);
  OpBuilder scalars = OpBuilder::atBlockBegin(split.elseBlock());
  emitIterations(scalars, loc, op, iterationsOf(scalars), {});
  op.erase();
  return success();
}

/// Whether `value` is a constant table, or a view of one: computed again
/// inside the kernel instead of passed to it.
bool isGlobalView(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (isa<memref::GetGlobalOp>(def))
    return true;
  if (isa<ViewLikeOpInterface>(def) && def->getNumOperands() >= 1 && isMemoryEffectFree(def))
    return isGlobalView(def->getOperand(0)) &&
           llvm::all_of(def->getOperands().drop_front(), [](Value v) {
             return v.getDefiningOp<arith::ConstantOp>() != nullptr;
           });
  return false;
}

/// Clones the constant tables `launch` reads (and their views) into it.
void sinkGlobals(gpu::LaunchOp launch) {
  IRMapping mapping;
  OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
  // A view's other operands are constants: cloned the same way.
  std::function<Value(Value)> sink = [&](Value v) -> Value {
    if (Value done = mapping.lookupOrNull(v))
      return done;
    Operation *def = v.getDefiningOp();
    for (Value operand : def->getOperands())
      (void)sink(operand);
    Operation *clone = b.clone(*def, mapping);
    mapping.map(def->getResults(), clone->getResults());
    return mapping.lookup(v);
  };
  launch.getBody().walk([&](Operation *inner) {
    for (OpOperand &use : inner->getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (def && !launch->isAncestor(def) && isGlobalView(use.get()))
        use.set(sink(use.get()));
    }
  });
}

/// `map` as a generic (upstream's generalisation refuses linalg.map: its
/// body has no argument for the result).
linalg::GenericOp generalizeMap(RewriterBase &rewriter, linalg::MapOp map) {
  unsigned rank = map.getInit().getType().getRank();
  SmallVector<AffineMap> maps(map.getInputs().size() + 1,
                              rewriter.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return rewriter.create<linalg::GenericOp>(
      map.getLoc(), TypeRange{}, map.getInputs(), ValueRange{map.getInit()}, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        IRMapping mapping;
        Block &body = map.getMapper().front();
        mapping.map(body.getArguments(), args.drop_back());
        for (Operation &inner : body)
          b.clone(inner, mapping);
      });
}

struct TfMapToGpuPass : tfc::impl::TfMapToGpuBase<TfMapToGpuPass> {
  using TfMapToGpuBase::TfMapToGpuBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    // Fills folded into the reductions right after them.
    DenseMap<Operation *, SmallVector<Value>> filled;
    module.walk([&](linalg::GenericOp op) {
      SmallVector<Operation *> folded;
      SmallVector<Value> values = foldableFills(op, folded);
      if (values.empty())
        return;
      filled[op] = std::move(values);
      for (Operation *fill : folded)
        fill->erase();
    });
    // Fills, maps, copies (any structured op) as generics, so one mapping
    // covers them.
    SmallVector<Operation *> named;
    module.walk([&](Operation *op) {
      if (((isa<linalg::LinalgOp>(op) && !isa<linalg::GenericOp>(op)) || isa<memref::CopyOp>(op)) &&
          !op->getParentOfType<gpu::LaunchOp>())
        named.push_back(op);
    });
    for (Operation *op : named) {
      rewriter.setInsertionPoint(op);
      if (auto map = dyn_cast<linalg::MapOp>(op)) {
        rewriter.replaceOp(map, generalizeMap(rewriter, map));
        continue;
      }
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        linalg::makeMemRefCopyOp(rewriter, op->getLoc(), copy.getSource(), copy.getTarget());
        rewriter.eraseOp(op);
      } else if (failed(linalg::generalizeNamedOp(rewriter, cast<linalg::LinalgOp>(op)))) {
        op->emitError("tf-map-to-gpu: cannot make this op a generic");
        return signalPassFailure();
      }
    }
    SmallVector<linalg::GenericOp> generics;
    module.walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      if (failed(mapGeneric(op, filled.lookup(op), coarsen)))
        return signalPassFailure();
    module.walk([](gpu::LaunchOp launch) { sinkGlobals(launch); });
    // Nothing else may touch memory on the host: what would is a bug here.
    WalkResult left = module.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>() || !isa_and_nonnull<func::FuncOp>(op->getParentOp()))
        return WalkResult::advance();
      if (isa<memref::LoadOp, memref::StoreOp, linalg::LinalgOp>(op)) {
        op->emitError("tf-map-to-gpu: this would read or write device memory on the host");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
