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
#include "compiler/lowering/BufferEffects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/BitVector.h"

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
  // A concurrent plan's: the positions that touch it, and those that all of
  // them wait for (directly or not).
  SmallVector<int64_t> users;
  llvm::BitVector beforeAllUsers;
};

/// What must run before what, for a concurrent plan: positions[q] holds
/// every position q waits for, directly or not, by what they read and write
/// before the plan (each alloc its own buffer, the arguments one).
SmallVector<llvm::BitVector> positionOrder(Block &block,
                                           const DenseMap<Operation *, int64_t> &position,
                                           int64_t count, int64_t window,
                                           DenseMap<Value, SmallVector<int64_t>> &users) {
  SmallVector<SmallVector<BufferAccess>> accesses(count);
  llvm::BitVector anything(count);
  for (Operation &op : block) {
    const int64_t p = position.lookup(&op);
    SmallVector<BufferAccess> list;
    if (!bufferAccessesOf(&op, list, /*knownReads=*/true))
      anything.set(p);
    for (BufferAccess a : list) {
      if (isa<BlockArgument>(a.root))
        a.root = Value(); // the arguments, one buffer
      else if (users[a.root].empty() || users[a.root].back() != p)
        users[a.root].push_back(p);
      accesses[p].push_back(a);
    }
  }
  auto conflict = [&](int64_t p, int64_t q) {
    if (anything.test(p) || anything.test(q))
      return true;
    for (const BufferAccess &a : accesses[p])
      for (const BufferAccess &b : accesses[q])
        if (a.root == b.root && (a.write || b.write))
          return true;
    return false;
  };
  // The positions that touch memory, in order: `window` of them apart, an
  // op counts as waiting for the other (its buffers' bytes are then free
  // to share; the graph orders them for it).
  SmallVector<int64_t> touching;
  for (int64_t p = 0; p < count; ++p)
    if (anything.test(p) || !accesses[p].empty())
      touching.push_back(p);
  SmallVector<llvm::BitVector> before(count, llvm::BitVector(count));
  for (auto [rank, q] : llvm::enumerate(touching)) {
    if (rank >= size_t(window))
      before[q].set(0, touching[rank - window] + 1);
    for (int64_t p = q; p-- > 0;)
      if (!before[q].test(p) && conflict(p, q)) {
        before[q] |= before[p];
        before[q].set(p);
      }
  }
  return before;
}

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

/// Whether `x` is done with its bytes before `y` touches them: its live range
/// ends before y's begins, and, in a concurrent plan, every op that touches
/// x is one that every op touching y waits for.
bool doneBefore(const Buffer &x, const Buffer &y, bool concurrent) {
  if (x.last >= y.first)
    return false;
  return !concurrent || llvm::all_of(x.users, [&](int64_t p) { return y.beforeAllUsers.test(p); });
}

/// Places buffers largest first at the lowest aligned offset free of every
/// placed buffer not done before it or after it; returns the arena's size.
int64_t place(MutableArrayRef<Buffer> buffers, bool concurrent) {
  SmallVector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  llvm::stable_sort(order, [](Buffer *x, Buffer *y) { return x->bytes > y->bytes; });
  int64_t peak = 0;
  SmallVector<Buffer *> placed;
  for (Buffer *b : order) {
    SmallVector<std::pair<int64_t, int64_t>> taken; // [begin, end) in bytes
    for (Buffer *p : placed)
      if (!doneBefore(*p, *b, concurrent) && !doneBefore(*b, *p, concurrent))
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

LogicalResult planEntry(func::FuncOp func, int64_t window) {
  const bool concurrent = window > 0;
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

  if (concurrent) {
    DenseMap<Value, SmallVector<int64_t>> users;
    SmallVector<llvm::BitVector> before = positionOrder(block, position, index + 1, window, users);
    for (Buffer &b : buffers) {
      b.users = users.lookup(b.alloc.getResult());
      b.beforeAllUsers = llvm::BitVector(index + 1, true);
      for (int64_t p : b.users)
        b.beforeAllUsers &= before[p];
    }
  }
  int64_t arenaBytes = place(buffers, concurrent);
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
  // Where and when each buffer lives, for tf-graph-dependencies: a runtime
  // call's pointer is the arena's plus a shift, and the buffer live there at
  // the call's position bounds what it reaches.
  SmallVector<int64_t> spans;
  for (const Buffer &b : buffers)
    spans.append({b.offset, b.offset + b.bytes, b.first, b.last});
  func->setAttr(kArenaBuffersAttr, DenseI64ArrayAttr::get(ctx, spans));
  for (Operation &op : block)
    if (isa<func::CallOp>(op))
      op.setAttr(kPlanPositionAttr,
                 IntegerAttr::get(IntegerType::get(ctx, 64), position.lookup(&op)));
  return success();
}

struct TfPlanMemoryPass : tfc::impl::TfPlanMemoryBase<TfPlanMemoryPass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func->hasAttr(kEntryAttr) && !func.isDeclaration() &&
          failed(planEntry(func, concurrentWindow)))
        return signalPassFailure();
  }
};

} // namespace
