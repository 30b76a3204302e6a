//===- GroupLoops.cpp - independent loop nests side by side, for one launch ===//
//
// A train step's tail is dozens of small loop nests that do not depend on
// one another: a gradient norm's partial sums, one a parameter, then their
// finals, then one Adam update a parameter. Each would be a kernel launch of
// its own, a few microseconds of a graph's replay for a few microseconds of
// work. tf-merge-launches runs adjacent independent launches as one; this
// pass, on buffers before the memory plan, puts them side by side and makes
// the plan keep them apart:
//
//   - each run of loop nests (linalg ops and memref.copy on buffers; the
//     allocations, views and constants among them move with them; any
//     other op, such as a runtime call, ends the run) is cut into groups of
//     independent nests, in order: the earliest nest not yet placed joins
//     the current group when it is independent of every member (neither
//     writes what the other reads or writes); else a later nest joins
//     instead if it is small (writes at most 64 KiB), independent of the
//     members and of every nest it would pass; else the group closes. So a
//     norm's second partial sums move up beside the first's, while a
//     layer's activations never move (what moves lives a little longer).
//     A fill right before the reduction it initialises moves with it
//     (tf-map-to-gpu folds it into the kernel);
//   - the nests of a group of two or more are marked with one
//     `tfc.launch_group` id, contiguous, the views and allocations they use
//     placed before the first of them. tf-plan-memory counts a group as one
//     position, so every buffer a member reads or writes is live at once,
//     and no two share bytes: the members may run at the same time.
//
// Dependences are on buffers: distinct allocations and distinct entry
// arguments never alias (the runtime passes each tensor its own buffer);
// a nest touching anything else (an unknown view source) is a barrier.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/lowering/BufferEffects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/RegionUtils.h"

namespace tfc {
#define GEN_PASS_DEF_TFGROUPLOOPS
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

/// A nest that writes no more than this may move up past others to join a
/// group: what it writes then lives a little longer (a gradient norm's
/// partial sums do; a layer's activations would not).
constexpr int64_t kSmallBytes = 64 * 1024;

/// A loop nest, with the fill folded into it if any.
struct Nest {
  SmallVector<Operation *, 2> ops; // [fill,] the nest
  DenseSet<Value> reads, writes;   // root buffers
  bool barrier = false;            // touches a buffer of unknown origin
  bool small = true;               // writes at most kSmallBytes: may move up
};

bool isLoopNest(Operation *op) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return true;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.hasPureBufferSemantics();
}

/// A buffer whose aliases are known: an allocation, an entry argument or a
/// constant table.
bool isKnownRoot(Value root) {
  if (isa<BlockArgument>(root))
    return isa_and_nonnull<func::FuncOp>(root.getParentBlock()->getParentOp());
  return root.getDefiningOp<memref::AllocOp>() || root.getDefiningOp<memref::GetGlobalOp>();
}

void addAccess(Nest &nest, Value operand, bool write) {
  auto type = dyn_cast<MemRefType>(operand.getType());
  if (!type)
    return;
  if (write && (!type.hasStaticShape() ||
                type.getNumElements() * type.getElementTypeBitWidth() / 8 > kSmallBytes))
    nest.small = false;
  Value root = rootBuffer(operand);
  if (!isKnownRoot(root))
    nest.barrier = true;
  nest.reads.insert(root); // an init is read too (reductions, in-place updates)
  if (write)
    nest.writes.insert(root);
}

Nest describe(ArrayRef<Operation *> ops) {
  Nest nest;
  nest.ops.assign(ops.begin(), ops.end());
  for (Operation *op : ops) {
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      addAccess(nest, copy.getSource(), false);
      addAccess(nest, copy.getTarget(), true);
      continue;
    }
    auto linalgOp = cast<linalg::LinalgOp>(op);
    for (OpOperand &operand : op->getOpOperands())
      addAccess(nest, operand.get(), linalgOp.isDpsInit(&operand));
    // What the body reads or writes itself (cross-entropy's load of the
    // labelled class, a gather's row); any other use of an outside buffer
    // there is unknown.
    op->walk([&](Operation *inner) {
      if (inner == op)
        return;
      for (Value operand : inner->getOperands()) {
        if (!isa<MemRefType>(operand.getType()) ||
            op->isAncestor(operand.getParentBlock()->getParentOp()))
          continue;
        if (isa<memref::LoadOp>(inner))
          addAccess(nest, operand, false);
        else if (isa<memref::StoreOp>(inner))
          addAccess(nest, operand, true);
        else
          nest.barrier = true;
      }
    });
  }
  return nest;
}

bool intersects(const DenseSet<Value> &a, const DenseSet<Value> &b) {
  return llvm::any_of(a, [&](Value v) { return b.contains(v); });
}

/// Whether `later` must run after `earlier`.
bool dependsOn(const Nest &later, const Nest &earlier) {
  return later.barrier || earlier.barrier || intersects(earlier.writes, later.reads) ||
         intersects(earlier.reads, later.writes);
}

/// A fill tf-map-to-gpu folds into the reduction `next` (its foldableFill).
bool foldsInto(Operation *fill, Operation *next) {
  auto f = dyn_cast<linalg::FillOp>(fill);
  auto reduction = dyn_cast_or_null<linalg::GenericOp>(next);
  return f && reduction && reduction.getNumReductionLoops() > 0 &&
         reduction.getNumDpsInits() == 1 && f.getDpsInits()[0] == reduction.getDpsInits()[0] &&
         f.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
}

//===----------------------------------------------------------------------===//
// Results sink
//===----------------------------------------------------------------------===//

/// The buffers a runtime call reaches through its arguments (a buffer, or
/// a pointer: extract_aligned_pointer_as_index of one, plus an offset),
/// read or written; false when an argument's origin is unknown.
bool callBuffers(func::CallOp call, DenseSet<Value> &buffers) {
  for (Value arg : call.getOperands()) {
    if (isa<MemRefType>(arg.getType())) {
      Value root = rootBuffer(arg);
      if (!isKnownRoot(root))
        return false;
      buffers.insert(root);
      continue;
    }
    if (!arg.getType().isIndex())
      continue; // a float (alpha, beta, an epsilon)
    Value at = arg;
    while (auto add = at.getDefiningOp<arith::AddIOp>()) {
      if (add.getRhs().getDefiningOp<arith::ConstantOp>())
        at = add.getLhs();
      else if (add.getLhs().getDefiningOp<arith::ConstantOp>())
        at = add.getRhs();
      else
        return false;
    }
    if (at.getDefiningOp<arith::ConstantOp>())
      continue; // a size, a stride, a flag
    auto pointer = at.getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>();
    if (!pointer)
      return false;
    Value root = rootBuffer(pointer.getSource());
    if (!isKnownRoot(root))
      return false;
    buffers.insert(root);
  }
  return true;
}

/// Whether `op`, after `nest`, must stay after it.
bool mustFollow(Operation *op, const Nest &nest) {
  if (isLoopNest(op)) {
    Nest other = describe({op});
    return dependsOn(other, nest);
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    DenseSet<Value> buffers;
    return !callBuffers(call, buffers) || intersects(buffers, nest.reads) ||
           intersects(buffers, nest.writes);
  }
  return !(touchesNoMemory(op) && op->getNumRegions() == 0 &&
           !op->hasTrait<OpTrait::IsTerminator>());
}

/// A nest whose every write is an entry's result (an argument buffer: an
/// updated parameter or optimizer state, the loss, a metric) moves down to
/// the first op that must follow it. Without clipping, each parameter's
/// Adam update stands right after the GEMM that computes its gradient (it
/// was that product's epilogue), a launch of its own between two GEMM
/// calls; sunk, the updates meet at the step's end, where they group into
/// one launch. What they read (the gradients) lives longer: all of them at
/// once, as a framework's .grad buffers do. A fill right before the
/// reduction it initialises moves with it. Last nest first, each stopping
/// right before the nests sunk already: they keep their order.
void sinkResultNests(Block &block) {
  SmallVector<SmallVector<Operation *, 2>> candidates;
  for (Operation &op : block) {
    if (!isLoopNest(&op))
      continue;
    if (foldsInto(&op, op.getNextNode()))
      continue; // moves with its reduction
    SmallVector<Operation *, 2> ops;
    if (Operation *prev = op.getPrevNode(); prev && foldsInto(prev, &op))
      ops.push_back(prev);
    ops.push_back(&op);
    Nest nest = describe(ops);
    if (nest.barrier || nest.writes.empty() ||
        !llvm::all_of(nest.writes, [](Value root) { return isa<BlockArgument>(root); }))
      continue;
    candidates.push_back(std::move(ops));
  }
  DenseSet<Operation *> sunk;
  for (ArrayRef<Operation *> ops : llvm::reverse(candidates)) {
    Nest nest = describe(ops);
    Operation *stop = ops.back()->getNextNode();
    while (stop && !sunk.contains(stop) && !mustFollow(stop, nest))
      stop = stop->getNextNode();
    sunk.insert(ops.begin(), ops.end());
    if (!stop || stop == ops.back()->getNextNode())
      continue;
    for (Operation *op : ops)
      op->moveBefore(stop);
  }
}

class Grouper {
public:
  explicit Grouper(int64_t &nextGroup) : nextGroup_(nextGroup) {}

  void run(Block &block) {
    SmallVector<Operation *> run;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      bool movable = isLoopNest(&op) || (touchesNoMemory(&op) && op.getNumRegions() == 0 &&
                                         !op.hasTrait<OpTrait::IsTerminator>());
      if (movable) {
        run.push_back(&op);
        continue;
      }
      reorder(run, &op);
      run.clear();
    }
  }

private:
  /// The nests in groups of independent ones, in order (see the file
  /// comment): the earliest nest not yet scheduled joins the current group
  /// if it is independent of its members; else a later small nest that is
  /// ready and independent joins instead; else the group closes.
  static SmallVector<SmallVector<Nest *>> schedule(MutableArrayRef<Nest> nests) {
    size_t n = nests.size();
    SmallVector<SmallVector<size_t>> dependencies(n);
    for (size_t j = 0; j < n; ++j)
      for (size_t i = 0; i < j; ++i)
        if (dependsOn(nests[j], nests[i]))
          dependencies[j].push_back(i);
    SmallVector<bool> scheduled(n, false);
    auto ready = [&](size_t j) {
      return llvm::all_of(dependencies[j], [&](size_t i) { return scheduled[i]; });
    };
    SmallVector<SmallVector<Nest *>> groups;
    SmallVector<size_t> current;
    auto joins = [&](size_t j) {
      return llvm::none_of(current, [&](size_t member) {
        return llvm::is_contained(dependencies[j], member);
      });
    };
    auto add = [&](size_t j) {
      current.push_back(j);
      scheduled[j] = true;
    };
    auto close = [&] {
      SmallVector<Nest *> members;
      for (size_t j : current)
        members.push_back(&nests[j]);
      groups.push_back(std::move(members));
      current.clear();
    };
    for (size_t first = 0; first < n;) {
      if (scheduled[first]) {
        ++first;
        continue;
      }
      if (current.empty() || joins(first)) { // ready: all before it are scheduled
        add(first);
        continue;
      }
      size_t later = first + 1;
      while (later < n && (scheduled[later] || !nests[later].small || !ready(later) ||
                           !joins(later)))
        ++later;
      if (later < n) {
        add(later);
        continue;
      }
      close();
    }
    if (!current.empty())
      close();
    return groups;
  }

  /// Reorders the run of ops right before `end` (see the file comment).
  void reorder(ArrayRef<Operation *> run, Operation *end) {
    SmallVector<Operation *> loops;
    for (Operation *op : run)
      if (isLoopNest(op))
        loops.push_back(op);
    SmallVector<Nest> nests;
    DenseSet<Operation *> inRun(run.begin(), run.end());
    for (size_t i = 0; i < loops.size(); ++i) {
      if (i + 1 < loops.size() && foldsInto(loops[i], loops[i + 1])) {
        nests.push_back(describe({loops[i], loops[i + 1]}));
        ++i;
      } else {
        nests.push_back(describe({loops[i]}));
      }
    }
    if (nests.size() < 2)
      return;
    SmallVector<SmallVector<Nest *>> groups = schedule(nests);
    if (groups.size() == nests.size())
      return; // nothing runs beside anything

    // Each group: what its nests use (allocations, views, constants), then
    // the nests; what no nest uses stays at the end of the run.
    DenseSet<Operation *> placed;
    std::function<void(Operation *)> place;
    // What `op` reads: its operands and the values its body captures.
    auto placeUsed = [&](Operation *op) {
      SetVector<Value> used(op->getOperands().begin(), op->getOperands().end());
      getUsedValuesDefinedAbove(op->getRegions(), used);
      for (Value value : used)
        if (Operation *def = value.getDefiningOp())
          place(def);
    };
    place = [&](Operation *op) {
      if (!inRun.contains(op) || placed.contains(op))
        return;
      placeUsed(op);
      placed.insert(op);
      op->moveBefore(end);
    };
    for (ArrayRef<Nest *> members : groups) {
      for (Nest *nest : members)
        for (Operation *op : nest->ops)
          placeUsed(op);
      IntegerAttr group;
      if (members.size() > 1)
        group = IntegerAttr::get(IntegerType::get(end->getContext(), 64), nextGroup_++);
      for (Nest *nest : members)
        for (Operation *op : nest->ops) {
          if (group)
            op->setAttr(kLaunchGroupAttr, group);
          placed.insert(op);
          op->moveBefore(end);
        }
    }
    for (Operation *op : run)
      if (!placed.contains(op))
        op->moveBefore(end);
  }

  int64_t &nextGroup_;
};

struct TfGroupLoopsPass : tfc::impl::TfGroupLoopsBase<TfGroupLoopsPass> {
  void runOnOperation() override {
    int64_t nextGroup = 0;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal()) {
        sinkResultNests(func.getBody().front());
        Grouper(nextGroup).run(func.getBody().front());
      }
  }
};

} // namespace
