//===- MergeLaunches.cpp - adjacent independent kernels as one launch ------===//
//
// A step replayed as a CUDA graph still pays a few microseconds a kernel,
// and a small model's step is mostly small kernels: a gradient norm's
// partial sums, one a parameter, then one Adam update a parameter
// (tf-group-loops puts such independent loop nests side by side). Adjacent
// launches that touch no common bytes (or only read them) run as one:
//
//   gpu.launch blocks(%b) in (4) threads(%t) in (256) { A(%b, %t) }
//   gpu.launch blocks(%b) in (1) threads(%t) in (96)  { B(%b, %t) }
//   // becomes
//   gpu.launch blocks(%b) in (5) threads(%t) in (256) {
//     scf.if %b <u 4 { A(%b - 0, %t) }
//     else { scf.if %t <u 96 { B(%b - 4, %t) } }
//   }
//
// Each block runs one member's block, with that member's own grid and block
// sizes; nothing else changes, so each member computes exactly what it did.
// A block finds its member by a binary search over the members' first
// blocks (many members: the nested scf.if/else are a balanced tree).
// Independence is checked here, on what the launches access after the
// memory plan (a view of the arena is its byte range; an entry argument or a
// constant table is a buffer of its own), so a merge never depends on how
// the launches came to be adjacent.
//
// Then adjacent launches of one block each, dependent ones too (a loss's
// mean, then its division; a gradient norm's finals), run as one block, each
// member on its own threads after the one before:
//
//   gpu.launch blocks(%b) in (1) threads(%t) in (64) { A(%b, %t) }
//   gpu.launch blocks(%b) in (1) threads(%t) in (32) { B(%b, %t) }
//   // becomes
//   gpu.launch blocks(%b) in (1) threads(%t) in (64) {
//     A(%b, %t)
//     gpu.barrier                      // A's writes, seen by B's threads
//     scf.if %t <u 32 { B(%b, %t) }
//   }
//
// The only values a phase takes from one before it are the launch's ids
// (tf-launches-to-loops runs each phase as its own loop over the threads).
//
// Between the two, small launches (a split reduction's finals, a metric's
// division: at most 16 blocks, 4,096 threads in all), dependent ones too,
// become the tail of the launch before them, run by the block that finishes
// it last (CUDA's threadFenceReduction sample; tf-grid-sync defines the
// ticket):
//
//   gpu.launch blocks(%b) in (22) threads(%t) in (64) { A(%b, %t) }
//   gpu.launch blocks(%b) in (10) threads(%t) in (32) { B(%b, %t) }
//   gpu.launch blocks(%b) in (1)  threads(%t) in (32) { C(%b, %t) }
//   // becomes
//   gpu.launch blocks(%b) in (22) threads(%t) in (64) {
//     A(%b, %t)
//     %last = func.call @tfc_last_block() : () -> i1  // all others done
//     scf.if %last {
//       scf.for %v = 0 to 10 { scf.if %t <u 32 { B(%v, %t) } }
//       gpu.barrier
//       scf.for %v = 0 to 1 { scf.if %t <u 32 { C(%v, %t) } }
//     }
//   }
//
// Each member computes exactly what it did alone; only which block runs it
// changes. A run of one-block launches only is left to the chain.
//
// With grid-chains (--persistent-kernels) the second step is instead: each
// run of adjacent launches, of any grid, one persistent kernel, a grid
// barrier (a call of @tfc_grid_sync, tf-grid-sync) between its phases:
//
//   gpu.launch blocks(%b) in (%g = 264) threads(%t) in (256) {
//     scf.for %v = %b to 768 step %g { A(%v, %t) }   // the launched grid's
//     func.call @tfc_grid_sync() : () -> ()          // size, maybe fewer
//     scf.for %v = %b to 8 step %g { B(%v, %t) }
//   }
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#include <limits>
#include <optional>

namespace tfc {
#define GEN_PASS_DEF_TFMERGELAUNCHES
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

/// The most values a merged launch may capture: each becomes a kernel
/// parameter of at most 8 bytes, and PTX ISA 8.1 (CUDA 12.1) takes 32,764
/// bytes of them (8.0 took 4 KiB: a medium encoder's Adam update was then
/// three launches, now one).
constexpr size_t kMaxCaptured = 4000;

constexpr int64_t kWhole = std::numeric_limits<int64_t>::max();

/// Bytes [begin, end) of a buffer.
struct Access {
  const void *buffer; // an entry argument's or a global's identity
  int64_t begin = 0, end = kWhole;
  bool write = false;
};

struct Launch {
  gpu::LaunchOp op;
  int64_t blocks = 0, threads = 0;
  SmallVector<Access> accesses;
  SetVector<Value> captured; // values from outside the body, but constants
};

std::optional<int64_t> constantIndex(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value();
  return std::nullopt;
}

int64_t byteSize(MemRefType type) {
  return type.getNumElements() * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// The buffer and bytes `memref` can reach, or nothing when unknown.
std::optional<Access> resolve(Value memref) {
  Access access;
  bool narrowed = false;
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(memref)) {
      if (!isa_and_nonnull<func::FuncOp>(arg.getOwner()->getParentOp()))
        return std::nullopt;
      access.buffer = arg.getAsOpaquePointer();
      return access;
    }
    Operation *def = memref.getDefiningOp();
    if (auto global = dyn_cast_or_null<memref::GetGlobalOp>(def)) {
      access.buffer = global.getNameAttr().getAsOpaquePointer();
      return access;
    }
    if (auto view = dyn_cast_or_null<memref::ViewOp>(def)) {
      std::optional<int64_t> shift = constantIndex(view.getByteShift());
      auto type = view.getType();
      if (!shift || !type.hasStaticShape())
        return std::nullopt;
      if (!narrowed) { // the outermost view's bytes; views of it lie inside
        access.begin = *shift;
        access.end = *shift + byteSize(type);
        narrowed = true;
      }
      memref = view.getSource();
      continue;
    }
    auto viewLike = dyn_cast_or_null<ViewLikeOpInterface>(def);
    if (!viewLike)
      return std::nullopt;
    // A reshape or subview lies inside its source: the source's bytes (or
    // the arena view's, found further up) bound it.
    memref = viewLike.getViewSource();
  }
}

/// `op`'s sizes and accesses, or nothing when it cannot be merged.
std::optional<Launch> describe(gpu::LaunchOp op) {
  if (op.getAsyncToken() || !op.getAsyncDependencies().empty() ||
      op.getDynamicSharedMemorySize() || op.hasClusterSize() ||
      !op.getWorkgroupAttributions().empty() || !op.getPrivateAttributions().empty() ||
      !op.getBody().hasOneBlock())
    return std::nullopt;
  std::optional<int64_t> sizes[] = {constantIndex(op.getGridSizeX()),
                                    constantIndex(op.getGridSizeY()),
                                    constantIndex(op.getGridSizeZ()),
                                    constantIndex(op.getBlockSizeX()),
                                    constantIndex(op.getBlockSizeY()),
                                    constantIndex(op.getBlockSizeZ())};
  for (auto &size : sizes)
    if (!size)
      return std::nullopt;
  if (*sizes[1] != 1 || *sizes[2] != 1 || *sizes[4] != 1 || *sizes[5] != 1)
    return std::nullopt;
  Launch launch{op, *sizes[0], *sizes[3], {}, {}};
  WalkResult walk = op.getBody().walk([&](Operation *inner) {
    Value memref;
    bool write = false;
    if (auto load = dyn_cast<memref::LoadOp>(inner))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(inner))
      memref = store.getMemRef(), write = true;
    else if (auto load = dyn_cast<vector::LoadOp>(inner)) // (tf-map-to-gpu's 4 iterations)
      memref = load.getBase();
    else if (auto store = dyn_cast<vector::StoreOp>(inner))
      memref = store.getBase(), write = true;
    else if (inner->hasTrait<OpTrait::IsTerminator>() ||
             inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() || isMemoryEffectFree(inner) ||
             isa<memref::AssumeAlignmentOp>(inner)) // (a fact about a pointer, no access)
      return WalkResult::advance(); // (a region's ops are walked themselves)
    else
      return WalkResult::interrupt(); // a barrier, an atomic, a call: alone
    std::optional<Access> access = resolve(memref);
    if (!access)
      return WalkResult::interrupt();
    access->write = write;
    launch.accesses.push_back(*access);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  SetVector<Value> used;
  getUsedValuesDefinedAbove(op.getBody(), used);
  for (Value v : used)
    if (!v.getDefiningOp<arith::ConstantOp>())
      launch.captured.insert(v);
  return launch;
}

bool conflict(const Launch &a, const Launch &b) {
  for (const Access &x : a.accesses)
    for (const Access &y : b.accesses)
      if (x.buffer == y.buffer && (x.write || y.write) && x.begin < y.end && y.begin < x.end)
        return true;
  return false;
}

/// Clones `member`'s body at `b`, a phase of `merged`: its block index x
/// `blockX`, its own grid and block sizes x made here, the rest of the ids
/// `merged`'s; on its first threads when it is narrower than `threads`.
void cloneMember(OpBuilder b, const Launch &member, gpu::LaunchOp merged, Value blockX,
                 int64_t threads) {
  Location loc = merged.getLoc();
  auto constant = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); };
  Value threadId = merged.getThreadIds().x;
  if (member.threads < threads) {
    auto guard = b.create<scf::IfOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, threadId, constant(member.threads)),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(guard.thenBlock());
  }
  gpu::LaunchOp op = member.op;
  IRMapping mapping;
  auto mapDims = [&](gpu::KernelDim3 from, gpu::KernelDim3 to, Value x) {
    mapping.map(from.x, x);
    mapping.map(from.y, to.y);
    mapping.map(from.z, to.z);
  };
  mapDims(op.getBlockIds(), merged.getBlockIds(), blockX);
  mapDims(op.getThreadIds(), merged.getThreadIds(), threadId);
  mapDims(op.getGridSize(), merged.getGridSize(), constant(member.blocks));
  mapDims(op.getBlockSize(), merged.getBlockSize(), constant(member.threads));
  for (Operation &o : op.getBody().front().without_terminator())
    b.clone(o, mapping);
}

/// Emits at `b` the members [lo, hi) of `group`, whose blocks start at
/// `starts[i]`: a binary search on the block index (scf.if/else on the
/// middle member's first block), so a block finds its member in
/// log2(members) comparisons rather than one a member. (An optimizer update
/// merges one launch a parameter: a medium encoder's, 79. Each of its 20 M
/// threads then tested 79 conditions before its own Adam arithmetic.)
void dispatch(OpBuilder &b, ArrayRef<Launch> group, ArrayRef<int64_t> starts, size_t lo,
              size_t hi, gpu::LaunchOp merged, int64_t threads) {
  Location loc = merged.getLoc();
  Value blockId = merged.getBlockIds().x;
  if (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    Value below = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, blockId,
                                          b.create<arith::ConstantIndexOp>(loc, starts[mid]));
    auto branch = b.create<scf::IfOp>(loc, below, /*withElseRegion=*/true);
    OpBuilder thenBuilder = OpBuilder::atBlockBegin(branch.thenBlock());
    OpBuilder elseBuilder = OpBuilder::atBlockBegin(branch.elseBlock());
    dispatch(thenBuilder, group, starts, lo, mid, merged, threads);
    dispatch(elseBuilder, group, starts, mid, hi, merged, threads);
    return;
  }
  // The member's own block index (the grid is exactly the members' blocks,
  // so the search has bounded it), on the member's own threads.
  Value local = b.create<arith::SubIOp>(loc, blockId,
                                        b.create<arith::ConstantIndexOp>(loc, starts[lo]));
  cloneMember(b, group[lo], merged, local, threads);
}

/// One launch running `group`'s members, at the last one's place.
void merge(ArrayRef<Launch> group) {
  gpu::LaunchOp last = group.back().op;
  Location loc = last.getLoc();
  OpBuilder b(last);
  auto constant = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); };
  int64_t blocks = 0, threads = 0;
  SmallVector<int64_t> starts;
  for (const Launch &member : group) {
    starts.push_back(blocks);
    blocks += member.blocks;
    threads = std::max(threads, member.threads);
  }
  Value one = constant(1);
  auto merged =
      b.create<gpu::LaunchOp>(loc, constant(blocks), one, one, constant(threads), one, one);
  b.setInsertionPointToStart(&merged.getBody().front());
  dispatch(b, group, starts, 0, group.size(), merged, threads);
  b.create<gpu::TerminatorOp>(loc);
  for (const Launch &member : group)
    gpu::LaunchOp(member.op).erase();
}

/// One launch of one block running `chain`'s members in order, at the last
/// one's place: a barrier between consecutive members, a member narrower
/// than the widest on its first threads.
void chain(ArrayRef<Launch> chain) {
  gpu::LaunchOp last = chain.back().op;
  Location loc = last.getLoc();
  OpBuilder b(last);
  int64_t threads = 0;
  for (const Launch &member : chain)
    threads = std::max(threads, member.threads);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto merged = b.create<gpu::LaunchOp>(loc, one, one, one,
                                        b.create<arith::ConstantIndexOp>(loc, threads), one, one);
  b.setInsertionPointToStart(&merged.getBody().front());
  Value threadId = merged.getThreadIds().x;
  for (auto [i, member] : llvm::enumerate(chain)) {
    if (i)
      b.create<gpu::BarrierOp>(loc);
    // Everything a member needs is made in its own phase.
    OpBuilder inner = b;
    if (member.threads < threads) {
      Value mine = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, threadId,
                                           b.create<arith::ConstantIndexOp>(loc, member.threads));
      auto branch = b.create<scf::IfOp>(loc, mine, /*withElseRegion=*/false);
      inner.setInsertionPointToStart(branch.thenBlock());
    }
    gpu::LaunchOp op = member.op;
    IRMapping mapping;
    auto mapDims = [&](gpu::KernelDim3 from, gpu::KernelDim3 to) {
      mapping.map(from.x, to.x);
      mapping.map(from.y, to.y);
      mapping.map(from.z, to.z);
    };
    mapDims(op.getBlockIds(), merged.getBlockIds());
    mapDims(op.getThreadIds(), merged.getThreadIds());
    mapDims(op.getGridSize(), merged.getGridSize());
    mapDims(op.getBlockSize(), merged.getBlockSize());
    mapping.map(op.getBlockSize().x,
                inner.create<arith::ConstantIndexOp>(loc, member.threads));
    for (Operation &o : op.getBody().front().without_terminator())
      inner.clone(o, mapping);
  }
  b.create<gpu::TerminatorOp>(loc);
  for (const Launch &member : chain)
    gpu::LaunchOp(member.op).erase();
}

/// The most blocks a persistent kernel's grid asks for: two blocks of 256
/// threads on each of an H100's 132 multiprocessors. The runtime launches
/// fewer where fewer are resident at once (a grid barrier needs every
/// block running); each phase spreads its blocks over the grid's.
constexpr int64_t kPersistentBlocks = 264;

/// The declaration of `name` (of type `results` from nothing) in `module`:
/// `@tfc_grid_sync`, `@tfc_last_block` (tf-grid-sync defines them in the
/// kernels' module).
func::FuncOp declaration(ModuleOp module, StringRef name, TypeRange results) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto f = b.create<func::FuncOp>(module.getLoc(), name, b.getFunctionType({}, results));
  f.setPrivate();
  return f;
}

/// One persistent launch running `chain`'s members in order, at the last
/// one's place: a grid barrier between consecutive members; a member with
/// more blocks than the grid loops over its blocks by the grid's size.
void gridChain(ArrayRef<Launch> chain) {
  gpu::LaunchOp last = chain.back().op;
  Location loc = last.getLoc();
  func::FuncOp sync =
      declaration(last->getParentOfType<ModuleOp>(), tfc::kGridSyncFunction, TypeRange{});
  OpBuilder b(last);
  int64_t blocks = 0, threads = 0;
  for (const Launch &member : chain) {
    blocks = std::max(blocks, member.blocks);
    threads = std::max(threads, member.threads);
  }
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto merged = b.create<gpu::LaunchOp>(
      loc, b.create<arith::ConstantIndexOp>(loc, std::min(blocks, kPersistentBlocks)), one, one,
      b.create<arith::ConstantIndexOp>(loc, threads), one, one);
  b.setInsertionPointToStart(&merged.getBody().front());
  Value blockId = merged.getBlockIds().x, threadId = merged.getThreadIds().x;
  // The grid's size as launched (the runtime's, not the constant above).
  Value grid = merged.getGridSize().x;
  for (auto [i, member] : llvm::enumerate(chain)) {
    if (i)
      b.create<func::CallOp>(loc, sync);
    // Everything a member needs is made in its own phase. Its blocks in
    // turn by the grid's blocks, whatever grid the runtime launched.
    OpBuilder inner = b;
    auto constant = [&](int64_t v) { return inner.create<arith::ConstantIndexOp>(loc, v); };
    auto blockLoop = inner.create<scf::ForOp>(loc, blockId, constant(member.blocks), grid);
    inner.setInsertionPoint(blockLoop.getBody()->getTerminator());
    if (member.threads < threads) {
      auto branch = inner.create<scf::IfOp>(
          loc,
          inner.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, threadId,
                                      constant(member.threads)),
          /*withElseRegion=*/false);
      inner.setInsertionPointToStart(branch.thenBlock());
    }
    gpu::LaunchOp op = member.op;
    IRMapping mapping;
    mapping.map(op.getBlockIds().x, blockLoop.getInductionVar());
    mapping.map(op.getBlockIds().y, merged.getBlockIds().y);
    mapping.map(op.getBlockIds().z, merged.getBlockIds().z);
    mapping.map(op.getThreadIds().x, threadId);
    mapping.map(op.getThreadIds().y, merged.getThreadIds().y);
    mapping.map(op.getThreadIds().z, merged.getThreadIds().z);
    mapping.map(op.getGridSize().x, constant(member.blocks));
    mapping.map(op.getGridSize().y, merged.getGridSize().y);
    mapping.map(op.getGridSize().z, merged.getGridSize().z);
    mapping.map(op.getBlockSize().x, constant(member.threads));
    mapping.map(op.getBlockSize().y, merged.getBlockSize().y);
    mapping.map(op.getBlockSize().z, merged.getBlockSize().z);
    for (Operation &o : op.getBody().front().without_terminator())
      inner.clone(o, mapping);
  }
  b.create<gpu::TerminatorOp>(loc);
  for (const Launch &member : chain)
    gpu::LaunchOp(member.op).erase();
}

/// A tail's member has at most this many blocks, and this many threads in
/// all: the last block runs a member's blocks one after another, so only
/// finishing work (a split reduction's finals, a metric's division) belongs
/// there; more is better on a grid of its own.
constexpr int64_t kTailBlocks = 16;
constexpr int64_t kTailThreads = 4096;

/// Whether `launch` may join `run` (its first member the head) as a tail's
/// member. A member wider than the head widens every block of the head's
/// grid, whose extra threads idle through the head's work: only on a head
/// of at most kTailBlocks blocks.
bool fitsTail(ArrayRef<Launch> run, const Launch &launch) {
  if (launch.blocks > kTailBlocks || launch.blocks * launch.threads > kTailThreads)
    return false;
  const Launch &head = run.front();
  return launch.threads <= head.threads || head.blocks <= kTailBlocks;
}

/// One launch of `run`'s first member's grid, at the last one's place:
/// every block runs its block of the first member, then takes a ticket
/// (`@tfc_last_block`); the block that draws the last one (every other
/// block is done, its writes visible) runs the other members in order, each
/// one's blocks in turn, a barrier between consecutive members. A member's
/// blocks are independent (no barrier, no atomic in it), so a thread may
/// run its share of each in turn; the barrier makes a member's writes
/// visible to the next one's threads, as in a chain.
void tail(ArrayRef<Launch> run) {
  const Launch &head = run.front();
  gpu::LaunchOp last = run.back().op;
  Location loc = last.getLoc();
  OpBuilder b(last);
  func::FuncOp lastBlock =
      declaration(last->getParentOfType<ModuleOp>(), tfc::kLastBlockFunction, b.getI1Type());
  int64_t threads = 0;
  for (const Launch &member : run)
    threads = std::max(threads, member.threads);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value grid = b.create<arith::ConstantIndexOp>(loc, head.blocks);
  Value block = b.create<arith::ConstantIndexOp>(loc, threads);
  auto merged = b.create<gpu::LaunchOp>(loc, grid, one, one, block, one, one);
  b.setInsertionPointToStart(&merged.getBody().front());
  cloneMember(b, head, merged, merged.getBlockIds().x, threads);
  Value isLast = b.create<func::CallOp>(loc, lastBlock).getResult(0);
  auto branch = b.create<scf::IfOp>(loc, isLast, /*withElseRegion=*/false);
  b.create<gpu::TerminatorOp>(loc);
  // Each member a phase of the tail, everything it needs made in it.
  OpBuilder phases = OpBuilder::atBlockBegin(branch.thenBlock());
  for (auto [i, member] : llvm::enumerate(run.drop_front())) {
    if (i)
      phases.create<gpu::BarrierOp>(loc);
    auto constant = [&](int64_t v) { return phases.create<arith::ConstantIndexOp>(loc, v); };
    Value first = constant(0), blocks = constant(member.blocks), step = constant(1);
    auto blockLoop = phases.create<scf::ForOp>(loc, first, blocks, step);
    cloneMember(OpBuilder(blockLoop.getBody()->getTerminator()), member, merged,
                blockLoop.getInductionVar(), threads);
  }
  for (const Launch &member : run)
    gpu::LaunchOp(member.op).erase();
}

/// Whether `op` may lie between two merged launches: the merged one comes
/// after it, the earlier members' operands before.
bool mayPass(Operation &op) {
  return isMemoryEffectFree(&op) && op.getNumRegions() == 0 &&
         !op.hasTrait<OpTrait::IsTerminator>();
}

/// Runs of adjacent launches (only pure ops between), each run cut where a
/// launch may not join the run before it (`joins`) or the captured values
/// would pass kMaxCaptured, and each run of two or more given to `combine`.
/// A launch describe() refuses, or `eligible` does not take, ends a run.
void sweep(Block &block, function_ref<bool(const Launch &)> eligible,
           function_ref<bool(ArrayRef<Launch>, const Launch &)> joins,
           function_ref<void(ArrayRef<Launch>)> combine) {
  SmallVector<Launch> run;
  SetVector<Value> captured;
  auto flush = [&] {
    if (run.size() > 1)
      combine(run);
    run.clear();
    captured.clear();
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto launchOp = dyn_cast<gpu::LaunchOp>(op);
    if (!launchOp) {
      // Constants and views between launches.
      if (!mayPass(op))
        flush();
      continue;
    }
    std::optional<Launch> launch = describe(launchOp);
    if (!launch || !eligible(*launch)) {
      flush();
      continue;
    }
    SetVector<Value> wider = captured;
    wider.insert(launch->captured.begin(), launch->captured.end());
    if (!run.empty() && (wider.size() > kMaxCaptured || !joins(run, *launch))) {
      flush();
      wider = launch->captured;
    }
    run.push_back(std::move(*launch));
    captured = std::move(wider);
  }
  flush();
}

/// Independent neighbours side by side; then small launches, dependent or
/// not, as the tail of the launch before them (with `tails`); then one-block
/// neighbours, dependent or not, in order (or, with `gridChains`, every run
/// of neighbours as one persistent kernel, no tails).
void mergeIn(Block &block, bool gridChains, bool tails) {
  auto all = [](const Launch &) { return true; };
  sweep(
      block, all,
      [](ArrayRef<Launch> group, const Launch &launch) {
        return llvm::none_of(group, [&](const Launch &member) { return conflict(member, launch); });
      },
      merge);
  auto any = [](ArrayRef<Launch>, const Launch &) { return true; };
  if (gridChains) {
    sweep(block, all, any, gridChain);
    return;
  }
  if (tails)
    sweep(
        block, all,
        [](ArrayRef<Launch> run, const Launch &launch) { return fitsTail(run, launch); },
        [](ArrayRef<Launch> run) {
          // One-block launches only: a chain, with no ticket to take.
          if (llvm::any_of(run, [](const Launch &member) { return member.blocks > 1; }))
            tail(run);
        });
  sweep(
      block, [](const Launch &launch) { return launch.blocks == 1; }, any, chain);
}

struct TfMergeLaunchesPass : tfc::impl::TfMergeLaunchesBase<TfMergeLaunchesPass> {
  using TfMergeLaunchesBase::TfMergeLaunchesBase;
  void runOnOperation() override {
    SmallVector<func::FuncOp> functions(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : functions)
      if (!func.isExternal())
        mergeIn(func.getBody().front(), gridChains, tails);
  }
};

} // namespace
