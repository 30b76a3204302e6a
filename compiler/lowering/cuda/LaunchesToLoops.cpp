//===- LaunchesToLoops.cpp - GPU kernels run as loops on the CPU ----------===//
//
// The GPU mapping (tf-map-to-gpu) decides what each thread of each kernel
// computes; on a machine without a GPU nothing runs it. Its kernels have no
// barriers, shared memory or shuffles (each thread is independent), so a
// `gpu.launch` means exactly an `scf.parallel` over its blocks and threads,
// the ids its indices:
//
//   gpu.launch blocks(%bx, ...) in (%gx, ...) threads(%tx, ...) in (%n, ...)
//   // becomes
//   scf.parallel (%bx, %by, %bz, %tx, %ty, %tz) = (0, ...) to (%gx, ..., %n, ...)
//
// which the CPU pipeline runs on its thread pool. A kernel of several
// one-block launches chained (tf-merge-launches) has barriers at the top
// level of its body; each block runs its phases in order, each phase a
// parallel loop over the threads:
//
//   gpu.launch blocks(...) threads(%tx, ...) { A(%tx); gpu.barrier; B(%tx) }
//   // becomes
//   scf.parallel (%bx, %by, %bz) = ... {
//     scf.parallel (%tx, %ty, %tz) = ... { A(%tx) }
//     scf.parallel (%tx, %ty, %tz) = ... { B(%tx) }
//   }
//
// A phase takes nothing from another but the ids and constants. A persistent
// kernel (tf-merge-launches' grid chains) has calls of `tfc_grid_sync` at the
// top level of its body instead: every block ends a phase before any begins
// the next, so each phase is a parallel loop over the blocks and threads,
// one after another:
//
//   gpu.launch ... { A; func.call @tfc_grid_sync(); B }
//   // becomes
//   scf.parallel (%bx, ..., %tx, ...) = ... { A }
//   scf.parallel (%bx, ..., %tx, ...) = ... { B }
//
// A kernel with a tail (tf-merge-launches) calls `tfc_last_block` after its
// grid's work, and the block that draws the last ticket runs the tail's
// phases, block barriers between: the grid's work is a parallel loop over
// the blocks and threads, then the tail runs once (its `%last` is true),
// each phase a parallel loop over the threads:
//
//   gpu.launch ... { A; %last = func.call @tfc_last_block();
//                    scf.if %last { B; gpu.barrier; C } }
//   // becomes
//   scf.parallel (%bx, ..., %tx, ...) = ... { A }
//   scf.parallel (%tx, %ty, %tz) = ... { B }
//   scf.parallel (%tx, %ty, %tz) = ... { C }
//
// The hand-written kernels' calls (tfc_cuda_attention_forward, ...) become
// calls of their CPU twins, which take the same arguments (runtime/Abi.h's
// cpuTwin; memory is the host's here). `tfc compile --target=cuda-emulated` compiles a model so:
// the CUDA backend's kernels, checked against the CPU build's results where
// there is no GPU.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "runtime/Abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace tfc {
#define GEN_PASS_DEF_TFLAUNCHESTOLOOPS
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

bool isGridSync(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == tfc::kGridSyncFunction;
}

bool isLastBlock(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == tfc::kLastBlockFunction;
}

/// Whether `op`, or an op in it, is a gpu op (a barrier, a shuffle) or a
/// call of the grid barrier or of the ticket.
bool cooperates(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        bool gpuOp = isa<gpu::GPUDialect>(inner->getDialect()) && !isa<gpu::TerminatorOp>(inner);
        return gpuOp || isGridSync(inner) || isLastBlock(inner) ? WalkResult::interrupt()
                                                                : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether a value of `block`'s top level (not a constant) is read in a
/// phase other than its own, the phases cut at the ops `cuts` accepts.
bool crossesPhases(Block &block, function_ref<bool(Operation &)> cuts) {
  DenseMap<Operation *, int> phaseOf;
  int phases = 0;
  for (Operation &op : block) {
    if (cuts(op))
      ++phases;
    phaseOf[&op] = phases;
  }
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    for (Operation *user : op.getUsers())
      if (phaseOf.lookup(block.findAncestorOpInBlock(*user)) != phaseOf.lookup(&op))
        return true;
  }
  return false;
}

/// The ops of `body` but its constants, cut at its barriers (of the block or
/// of the grid) into phases; empty phases left out.
SmallVector<SmallVector<Operation *>> phasesOf(Block &body) {
  SmallVector<SmallVector<Operation *>> phases(1);
  for (Operation &op : body.without_terminator()) {
    if (isa<gpu::BarrierOp>(op) || isGridSync(&op)) {
      if (!phases.back().empty())
        phases.emplace_back();
      continue;
    }
    if (!op.hasTrait<OpTrait::ConstantLike>())
      phases.back().push_back(&op);
  }
  if (phases.back().empty())
    phases.pop_back();
  return phases;
}

/// A kernel with a tail: its grid's work, `%last = call @tfc_last_block()`,
/// `scf.if %last { phases, block barriers between }`, then only constants.
/// The grid's work a parallel loop over the blocks and threads; then the
/// tail once, each phase a parallel loop over the threads. Any block may
/// be the last: the tail's members take their blocks from their own loops,
/// and the launch's block ids are 0 in it (its grid is 1-D).
LogicalResult tailToLoops(gpu::LaunchOp launch, func::CallOp ticket) {
  auto refuse = [&](StringRef why) {
    return launch.emitError("tf-launches-to-loops: a kernel with a tail must be its grid's work, "
                            "a call of tfc_last_block, and an scf.if on its result of phases "
                            "with block barriers between (")
           << why << ")";
  };
  Block &body = launch.getBody().front();
  auto branch =
      ticket->hasOneUse() ? dyn_cast<scf::IfOp>(*ticket->getUsers().begin()) : scf::IfOp();
  if (ticket->getBlock() != &body || !branch || branch->getBlock() != &body ||
      branch.getCondition() != ticket.getResult(0) || branch.getNumResults() ||
      !branch.getElseRegion().empty())
    return refuse("the call is not at the top level, or its result is not the condition of "
                  "an scf.if there with no else and no results");
  for (Operation *op = ticket->getNextNode(); op; op = op->getNextNode())
    if (op != branch.getOperation() && !op->hasTrait<OpTrait::ConstantLike>() &&
        !isa<gpu::TerminatorOp>(op))
      return refuse("an op after the tail");
  SmallVector<Operation *> head;
  for (Operation &op : body) {
    if (&op == ticket.getOperation())
      break;
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (cooperates(&op))
      return refuse("a gpu op, or a call of a barrier, in the grid's work");
    for (Operation *user : op.getUsers())
      if (body.findAncestorOpInBlock(*user) == branch.getOperation())
        return refuse("the tail takes a value of the grid's work");
    head.push_back(&op);
  }
  Block &tail = branch.getThenRegion().front();
  for (Operation &op : tail)
    if (!isa<gpu::BarrierOp>(op) && cooperates(&op))
      return refuse("a gpu op in the tail other than barriers between phases at its top level");
  if (crossesPhases(tail, [](Operation &op) { return isa<gpu::BarrierOp>(op); }))
    return refuse("a value crosses a barrier");
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Value> upper = {launch.getGridSizeX(),  launch.getGridSizeY(),
                              launch.getGridSizeZ(),  launch.getBlockSizeX(),
                              launch.getBlockSizeY(), launch.getBlockSizeZ()};
  IRMapping mapping;
  auto map = [&](gpu::KernelDim3 from, ValueRange to) {
    mapping.map(from.x, to[0]);
    mapping.map(from.y, to[1]);
    mapping.map(from.z, to[2]);
  };
  map(launch.getGridSize(), ArrayRef<Value>(upper).take_front(3));
  map(launch.getBlockSize(), ArrayRef<Value>(upper).drop_front(3));
  for (Block *block : {&body, &tail})
    for (Operation &op : *block)
      if (op.hasTrait<OpTrait::ConstantLike>())
        b.clone(op, mapping);
  auto grid = b.create<scf::ParallelOp>(loc, SmallVector<Value>(6, zero), upper,
                                        SmallVector<Value>(6, one));
  ValueRange ids = grid.getBody()->getArguments();
  map(launch.getBlockIds(), ids.take_front(3));
  map(launch.getThreadIds(), ids.drop_front(3));
  OpBuilder inner = OpBuilder::atBlockBegin(grid.getBody());
  for (Operation *op : head)
    inner.clone(*op, mapping);
  // The tail, once: each phase's thread loop ends before the next begins.
  map(launch.getBlockIds(), {zero, zero, zero});
  for (ArrayRef<Operation *> phase : phasesOf(tail)) {
    auto threads =
        b.create<scf::ParallelOp>(loc, SmallVector<Value>(3, zero),
                                  ArrayRef<Value>(upper).drop_front(3), SmallVector<Value>(3, one));
    map(launch.getThreadIds(), threads.getBody()->getArguments());
    OpBuilder phaseBuilder = OpBuilder::atBlockBegin(threads.getBody());
    for (Operation *op : phase)
      phaseBuilder.clone(*op, mapping);
  }
  launch.erase();
  return success();
}

LogicalResult launchToLoops(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty() || !launch.getPrivateAttributions().empty() ||
      launch.getAsyncToken() || launch.getDynamicSharedMemorySize() ||
      !launch.getBody().hasOneBlock())
    return launch.emitError("tf-launches-to-loops: only kernels whose threads are independent "
                            "(no shared memory, one block, synchronous) run as loops");
  func::CallOp ticket;
  launch.getBody().walk([&](func::CallOp call) {
    if (isLastBlock(call) && !ticket)
      ticket = call;
  });
  if (ticket)
    return tailToLoops(launch, ticket);
  Block &body = launch.getBody().front();
  // A persistent kernel's grid barriers (calls of tfc_grid_sync) at its
  // top level, or a chain's block barriers: not both.
  bool gridPhases = false, blockPhases = false;
  WalkResult cooperative = launch.getBody().walk([&](Operation *op) {
    bool top = op->getBlock() == &body;
    if (isGridSync(op)) {
      gridPhases = true;
      return top ? WalkResult::advance() : WalkResult::interrupt();
    }
    bool phases = isa<gpu::BarrierOp>(op) && top;
    blockPhases |= phases;
    return isa<gpu::GPUDialect>(op->getDialect()) && !isa<gpu::TerminatorOp>(op) && !phases
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (cooperative.wasInterrupted() || (gridPhases && blockPhases))
    return launch.emitError("tf-launches-to-loops: the kernel's threads cooperate (a gpu op "
                            "in its body other than barriers between phases at its top level, "
                            "of the block or of the grid)");
  if (crossesPhases(body, [](Operation &op) { return isa<gpu::BarrierOp>(op) || isGridSync(&op); }))
    return launch.emitError("tf-launches-to-loops: a value crosses a barrier (a phase "
                            "takes only ids and constants from another)");
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Value> upper = {launch.getGridSizeX(),  launch.getGridSizeY(),
                              launch.getGridSizeZ(),  launch.getBlockSizeX(),
                              launch.getBlockSizeY(), launch.getBlockSizeZ()};
  IRMapping mapping;
  gpu::KernelDim3 ids[] = {launch.getBlockIds(), launch.getThreadIds()};
  gpu::KernelDim3 sizes[] = {launch.getGridSize(), launch.getBlockSize()};
  auto mapLevel = [&](int level, ValueRange vars, int first) {
    mapping.map(ids[level].x, vars[first]);
    mapping.map(ids[level].y, vars[first + 1]);
    mapping.map(ids[level].z, vars[first + 2]);
    mapping.map(sizes[level].x, upper[3 * level]);
    mapping.map(sizes[level].y, upper[3 * level + 1]);
    mapping.map(sizes[level].z, upper[3 * level + 2]);
  };
  if (!gridPhases && !blockPhases) {
    auto loop = b.create<scf::ParallelOp>(loc, SmallVector<Value>(6, zero), upper,
                                          SmallVector<Value>(6, one));
    mapLevel(0, loop.getInductionVars(), 0);
    mapLevel(1, loop.getInductionVars(), 3);
    OpBuilder inner = OpBuilder::atBlockBegin(loop.getBody());
    for (Operation &op : body.without_terminator())
      inner.clone(op, mapping);
    launch.erase();
    return success();
  }
  if (gridPhases) {
    // Every block's phase ends before any block's next begins: a parallel
    // loop over the blocks and threads a phase, one after another.
    for (Operation &op : body)
      if (op.hasTrait<OpTrait::ConstantLike>())
        b.clone(op, mapping);
    for (ArrayRef<Operation *> phase : phasesOf(body)) {
      auto loop = b.create<scf::ParallelOp>(loc, SmallVector<Value>(6, zero), upper,
                                            SmallVector<Value>(6, one));
      mapLevel(0, loop.getInductionVars(), 0);
      mapLevel(1, loop.getInductionVars(), 3);
      OpBuilder inner = OpBuilder::atBlockBegin(loop.getBody());
      for (Operation *op : phase)
        inner.clone(*op, mapping);
    }
    launch.erase();
    return success();
  }
  auto blocks = b.create<scf::ParallelOp>(loc, SmallVector<Value>(3, zero),
                                          ArrayRef<Value>(upper).take_front(3),
                                          SmallVector<Value>(3, one));
  mapLevel(0, blocks.getInductionVars(), 0);
  OpBuilder perBlock = OpBuilder::atBlockBegin(blocks.getBody());
  // The constants, every phase's.
  for (Operation &op : body)
    if (op.hasTrait<OpTrait::ConstantLike>())
      perBlock.clone(op, mapping);
  // Each phase's thread loop ends before the next begins, as at the barrier.
  for (ArrayRef<Operation *> phase : phasesOf(body)) {
    auto threads = perBlock.create<scf::ParallelOp>(
        loc, SmallVector<Value>(3, zero), ArrayRef<Value>(upper).drop_front(3),
        SmallVector<Value>(3, one));
    mapLevel(1, threads.getInductionVars(), 0);
    OpBuilder inner = OpBuilder::atBlockBegin(threads.getBody());
    for (Operation *op : phase)
      inner.clone(*op, mapping);
  }
  launch.erase();
  return success();
}

struct TfLaunchesToLoopsPass : tfc::impl::TfLaunchesToLoopsBase<TfLaunchesToLoopsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      if (failed(launchToLoops(launch)))
        return signalPassFailure();
    // The grid barrier's and the ticket's declarations: nothing calls them now.
    for (StringRef name : {tfc::kGridSyncFunction, tfc::kLastBlockFunction})
      if (auto declaration = getOperation().lookupSymbol<func::FuncOp>(name))
        declaration.erase();
    callCpuTwins();
  }

  /// Each call of a CUDA runtime kernel that has a CPU twin calls the twin.
  void callCpuTwins() {
    namespace abi = tfc::abi;
    using abi::RuntimeFunction;
    ModuleOp module = getOperation();
    for (RuntimeFunction f :
         {RuntimeFunction::CudaSgemm, RuntimeFunction::CudaSgemmFused,
          RuntimeFunction::CudaSgemmBiasGrad,
          RuntimeFunction::CudaAttentionForward, RuntimeFunction::CudaAttentionBackward,
          RuntimeFunction::CudaLayerNormBackward, RuntimeFunction::CudaLayerNormForward,
          RuntimeFunction::CudaCrossEntropy, RuntimeFunction::CudaCrossEntropyBackward,
          RuntimeFunction::CudaCrossEntropyFused}) {
      StringRef cuda = abi::symbol(f), cpu = abi::symbol(abi::cpuTwin(f));
      auto declaration = module.lookupSymbol<func::FuncOp>(cuda);
      if (!declaration)
        continue;
      if (auto existing = module.lookupSymbol<func::FuncOp>(cpu))
        existing.erase();
      declaration.setSymName(cpu);
      module.walk([&](func::CallOp call) {
        if (call.getCallee() == cuda)
          call.setCallee(cpu);
      });
    }
  }
};

} // namespace
