//===- PlanMemory.cpp - every intermediate buffer in one planned arena ----===//
//
// Shapes are static, so the whole memory of an entry is known at compile
// time: the runtime allocates one arena of `tfc.arena_bytes` per entry and
// generated code never calls malloc. Live ranges are positions in the entry's
// top-level block (bufferized linalg has no control flow there); placement is
// the classic greedy "largest first, lowest fitting offset". A group of
// loop nests tf-group-loops marked counts as one position.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace tfc {
#define GEN_PASS_DEF_TFPLANMEMORY
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

constexpr int64_t kAlignment = 64; // a cache line; enough for AVX-512 loads

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  int64_t first = 0, last = 0; // inclusive positions in the block
  int64_t offset = -1;
};

int64_t byteSize(MemRefType type) {
  int64_t elementBytes = std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  return std::max<int64_t>(1, type.getNumElements()) * elementBytes;
}

/// The last position in `block` of an op that uses `root` or a value derived
/// from it (a view, a reshape, a pointer: any result of a user).
int64_t lastUse(Value root, Block &block, const DenseMap<Operation *, int64_t> &position) {
  int64_t last = -1;
  SmallVector<Value> worklist = {root};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (top)
        last = std::max(last, position.lookup(top));
      // Every result, not only views: a pointer taken from the buffer
      // (extract_aligned_pointer_as_index, then arithmetic) keeps it alive
      // until the call that reads or writes through it.
      for (Value result : user->getResults())
        worklist.push_back(result);
    }
  }
  return last;
}

/// Places buffers largest first at the lowest aligned offset free of every
/// placed buffer whose live range intersects; returns the arena's size.
int64_t place(MutableArrayRef<Buffer> buffers) {
  SmallVector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  llvm::stable_sort(order, [](Buffer *x, Buffer *y) { return x->bytes > y->bytes; });
  int64_t peak = 0;
  SmallVector<Buffer *> placed;
  for (Buffer *b : order) {
    SmallVector<std::pair<int64_t, int64_t>> taken; // [begin, end) in bytes
    for (Buffer *p : placed)
      if (p->first <= b->last && b->first <= p->last)
        taken.push_back({p->offset, p->offset + p->bytes});
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [begin, end] : taken) {
      if (offset + b->bytes <= begin)
        break;
      offset = std::max<int64_t>(offset, llvm::alignTo(end, kAlignment));
    }
    b->offset = offset;
    peak = std::max(peak, offset + b->bytes);
    placed.push_back(b);
  }
  return int64_t(llvm::alignTo(peak, kAlignment));
}

LogicalResult planEntry(func::FuncOp func) {
  Block &block = func.getBody().front();
  // Consecutive ops of one tf-group-loops group share a position: what any
  // of them reads or writes is live at once, so members share no bytes and
  // may run at the same time (tf-merge-launches).
  DenseMap<Operation *, int64_t> position;
  int64_t index = -1;
  IntegerAttr group;
  for (Operation &op : block) {
    auto own = op.getAttrOfType<IntegerAttr>(kLaunchGroupAttr);
    if (!own || own != group)
      ++index;
    group = own;
    position[&op] = index;
  }

  SmallVector<Buffer> buffers;
  WalkResult walk = func.walk([&](Operation *op) {
    if (isa<memref::DeallocOp>(op))
      return WalkResult::advance();
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc) {
      if (isa<memref::AllocaOp>(op) || isa<memref::ReallocOp>(op)) {
        op->emitError("tf-plan-memory: unexpected ") << op->getName();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    MemRefType type = alloc.getType();
    if (alloc->getBlock() != &block || !type.hasStaticShape() ||
        !type.getLayout().isIdentity()) {
      alloc.emitError("tf-plan-memory: expected a static, identity-layout alloc in the "
                      "entry's top-level block, got ")
          << type;
      return WalkResult::interrupt();
    }
    Buffer b;
    b.alloc = alloc;
    b.bytes = byteSize(type);
    b.first = position.lookup(alloc);
    b.last = std::max(b.first, lastUse(alloc, block, position));
    buffers.push_back(b);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  int64_t arenaBytes = place(buffers);
  MLIRContext *ctx = func.getContext();
  auto arenaType = MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8));
  unsigned arenaIndex = func.getNumArguments();
  func.insertArgument(arenaIndex, arenaType, {}, func.getLoc());
  Value arena = func.getArgument(arenaIndex);

  SmallVector<Operation *> deallocs;
  func.walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
  for (Operation *op : deallocs)
    op->erase();
  for (Buffer &b : buffers) {
    OpBuilder builder(b.alloc);
    Value offset = builder.create<arith::ConstantIndexOp>(b.alloc.getLoc(), b.offset);
    Value view = builder.create<memref::ViewOp>(b.alloc.getLoc(), b.alloc.getType(), arena,
                                                offset, ValueRange{});
    b.alloc.replaceAllUsesWith(view);
    b.alloc.erase();
  }
  // A pointer taken from a planned buffer or a view of it (a GEMM operand)
  // is the arena's plus the buffer's offset: views other than memref.view
  // keep their source's aligned pointer. Computed here because MLIR 19 folds
  // extract_aligned_pointer_as_index(memref.view) to the view's source
  // pointer, dropping the view's byte shift.
  SmallVector<memref::ExtractAlignedPointerAsIndexOp> pointers;
  func.walk([&](memref::ExtractAlignedPointerAsIndexOp op) { pointers.push_back(op); });
  for (auto pointer : pointers) {
    Value source = pointer.getSource();
    while (Operation *def = source.getDefiningOp()) {
      auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
      if (!viewLike || isa<memref::ViewOp>(def))
        break;
      source = viewLike.getViewSource();
    }
    auto view = source.getDefiningOp<memref::ViewOp>();
    if (!view || view.getSource() != arena)
      continue;
    OpBuilder at(pointer);
    Value base = at.create<memref::ExtractAlignedPointerAsIndexOp>(pointer.getLoc(), arena);
    Value shifted = at.create<arith::AddIOp>(pointer.getLoc(), base, view.getByteShift());
    pointer.replaceAllUsesWith(shifted);
    pointer.erase();
  }
  func->setAttr(kArenaBytesAttr, IntegerAttr::get(IntegerType::get(ctx, 64), arenaBytes));
  return success();
}

struct TfPlanMemoryPass : tfc::impl::TfPlanMemoryBase<TfPlanMemoryPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func->hasAttr(kEntryAttr) && !func.isDeclaration() && failed(planEntry(func)))
        return signalPassFailure();
  }
};

} // namespace
