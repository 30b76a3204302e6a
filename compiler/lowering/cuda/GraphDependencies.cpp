//===- GraphDependencies.cpp - what each device op of an entry waits for --===//
//
// The runtime captures an entry's launches and calls from one stream, so its
// CUDA graph is a chain: each node waits for the one before. A train step is
// not: a layer's weight gradient is off the path to the next layer's input
// gradient, and an input's embedding is independent of the positions'. This
// pass finds, for each device op of an entry (a kernel launch, a runtime
// call), the earlier ops it must wait for, those that access bytes it
// accesses where one of the two writes, and keeps only the direct ones
// (no edge that a path of others implies). Before each op it calls
//
//   func.call @tfc_cuda_graph_node(%index, %lane, %deps, %count)
//
// with `%deps` the address of `%count` int32 op indices in a constant table
// of the entry, and once more before the return, waiting for every op that
// no other waits for (runtime/Abi.h's abi::graph). The runtime, capturing,
// makes the next node depend on those ops' nodes (cuStreamUpdateCapture-
// Dependencies): the graph's branches run at once.
//
// What an op accesses:
//   - a launch: each buffer operand, read or written as the kernel's body
//     uses it (through views; a pointer taken from it is both), over the
//     bytes of the arena's view it is (tf-plan-memory's memref.view), and
//     the module's globals the kernel names (a tail's ticket);
//   - a runtime call: each pointer argument (the arena's or a buffer's
//     pointer plus a constant), over the bytes from it to the end of the
//     arena's buffers that hold it (`tfc.arena_buffers`), written unless
//     runtime/Abi.h's layout says the call only reads it (a GEMM's A and B);
//   - the entry's arguments count as one buffer: the runtime passes one
//     buffer as two arguments where tf-updates-in-place says so.
// Runtime calls also share the runtime's cuBLASLt workspace, scratch and
// last-block counter: each takes one of abi::graph::kLanes lanes, one whose
// last call it already waits for where it can, else waits for that call.
//
// An entry with a device op in a region, or an op this does not know that
// touches memory, gets no calls: the runtime then captures it as a chain.
//
// With `reorder` (a test: --target=cuda-emulated --graph-order-check) the
// pass calls nothing and instead moves the ops into another order the
// dependencies allow, each time the latest ready op first, so a missing
// dependency shows as a result that differs from the program order's.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/lowering/BufferEffects.h"
#include "runtime/Abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/BitVector.h"

#include <limits>
#include <set>

namespace tfc {
#define GEN_PASS_DEF_TFGRAPHDEPENDENCIES
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
namespace abi = tfc::abi;

namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

/// What an op touches: bytes [lo, hi) of the arena, the entry's arguments
/// (one buffer), a global by name, or anything at all.
struct Access {
  enum Kind { Arena, Arguments, Global, Anything } kind;
  int64_t lo = 0, hi = kUnbounded;
  StringAttr global;
  bool write = true;
};

struct DeviceOp {
  Operation *op;
  SmallVector<Access> accesses;
  bool runtimeCall = false; // takes a lane
};

bool conflict(const Access &a, const Access &b) {
  if (!a.write && !b.write)
    return false;
  if (a.kind == Access::Anything || b.kind == Access::Anything)
    return true;
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case Access::Arena:
    return a.lo < b.hi && b.lo < a.hi;
  case Access::Global:
    return a.global == b.global;
  default:
    return true;
  }
}

bool conflict(const DeviceOp &a, const DeviceOp &b) {
  for (const Access &x : a.accesses)
    for (const Access &y : b.accesses)
      if (conflict(x, y))
        return true;
  return false;
}

/// Where an entry's buffers live: its arena argument and the byte spans of
/// the arena's buffers.
struct Layout {
  Value arena;
  struct Span {
    int64_t lo, hi, first, last; // bytes [lo, hi), live at positions [first, last]
  };
  SmallVector<Span> spans;

  /// The end of the buffer that holds byte `at` at tf-plan-memory's
  /// `position`; without one, of the furthest that ever holds it.
  int64_t endOfBufferAt(int64_t at, std::optional<int64_t> position) const {
    int64_t live = -1, any = -1;
    for (const Span &s : spans) {
      if (s.lo > at || at >= s.hi)
        continue;
      any = std::max(any, s.hi);
      if (position && s.first <= *position && *position <= s.last)
        live = std::max(live, s.hi);
    }
    return live >= 0 ? live : any >= 0 ? any : kUnbounded;
  }

  /// The bytes `value` (a host-side buffer) spans, `shift` bytes on, used by
  /// an op at tf-plan-memory's `position`. The arena itself is a pointer's
  /// (`pointer`: it reaches from `shift` to the end of the buffer there);
  /// as a buffer, it is all of it.
  Access locate(Value value, int64_t shift, bool write,
                std::optional<int64_t> position = std::nullopt, bool pointer = false) const {
    Access access;
    access.write = write;
    Value v = value;
    while (Operation *def = v.getDefiningOp()) {
      if (auto view = dyn_cast<memref::ViewOp>(def); view && view.getSource() == arena) {
        auto type = cast<MemRefType>(view.getType());
        std::optional<int64_t> at = getConstantIntValue(view.getByteShift());
        access.kind = Access::Arena;
        if (at && type.hasStaticShape() && type.getLayout().isIdentity()) {
          int64_t bytes =
              type.getNumElements() * std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
          access.lo = *at + shift;
          access.hi = *at + bytes;
        }
        return access;
      }
      if (auto global = dyn_cast<memref::GetGlobalOp>(def)) {
        access.kind = Access::Global;
        access.global = global.getNameAttr().getAttr();
        return access;
      }
      auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
      if (!viewLike) {
        access.kind = Access::Anything;
        return access;
      }
      v = viewLike.getViewSource();
    }
    if (v == arena) {
      access.kind = Access::Arena;
      if (pointer && v == value) {
        access.lo = shift;
        access.hi = endOfBufferAt(shift, position);
      }
      return access;
    }
    access.kind = isa<BlockArgument>(v) ? Access::Arguments : Access::Anything;
    return access;
  }
};

/// Whether an integer taken from a buffer's address may be used as an
/// address: it reaches an LLVM op or a call, through anything else's results.
bool mayDereference(Value address, int depth = 0) {
  if (depth > 16)
    return true;
  for (Operation *user : address.getUsers()) {
    if (isa<scf::IfOp>(user)) // a condition: it selects, it does not address
      continue;
    if (isa<CallOpInterface>(user) || isa<LLVM::LLVMDialect>(user->getDialect()) ||
        !isMemoryEffectFree(user))
      return true;
    for (Value result : user->getResults())
      if (mayDereference(result, depth + 1))
        return true;
  }
  return false;
}

/// Whether the uses of buffer `v` within `scope` read it and write it
/// (through views; a pointer taken from it, or an op that does not say,
/// does both).
void usesOf(Value v, Region &scope, bool &read, bool &write) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (!scope.isAncestor(user->getParentRegion()))
      continue;
    if (isa<ViewLikeOpInterface>(user) || isa<memref::ExtractStridedMetadataOp>(user)) {
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          usesOf(result, scope, read, write);
      continue;
    }
    // An address only compared (tf-map-to-gpu's alignment check) reaches
    // nothing; one that may be dereferenced does both.
    if (auto pointer = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
      if (mayDereference(pointer.getResult()))
        read = write = true;
      continue;
    }
    if (isa<memref::AssumeAlignmentOp>(user))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    // An op that does not say, or one that passes the buffer on (a yield,
    // a select, a branch, a cast) without effects of its own.
    if (!effects || user->hasTrait<OpTrait::IsTerminator>() ||
        llvm::any_of(user->getResultTypes(), [](Type t) { return isa<BaseMemRefType>(t); })) {
      read = write = true;
      continue;
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list) {
      if (e.getValue() && e.getValue() != v)
        continue;
      if (isa<MemoryEffects::Read>(e.getEffect()))
        read = true;
      else
        write = true;
    }
  }
}

/// The globals and device functions the body of a kernel names: each one
/// read and written (a tail's ticket, a grid barrier's state).
void globalsOf(Region &body, SmallVectorImpl<Access> &accesses) {
  auto add = [&](StringAttr name, bool write) {
    Access access;
    access.kind = Access::Global;
    access.global = name;
    access.write = write;
    accesses.push_back(access);
  };
  // A constant table is only read.
  auto constant = [&](Operation *user, StringAttr name) {
    Operation *global = SymbolTable::lookupNearestSymbolFrom(user, name);
    if (auto llvmGlobal = dyn_cast_if_present<LLVM::GlobalOp>(global))
      return llvmGlobal.getConstant();
    if (auto memrefGlobal = dyn_cast_if_present<memref::GlobalOp>(global))
      return memrefGlobal.getConstant();
    return false;
  };
  // The functions it calls, and what they name in turn.
  SmallVector<Region *> bodies = {&body};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!bodies.empty()) {
    bodies.pop_back_val()->walk([&](Operation *op) {
      if (auto address = dyn_cast<LLVM::AddressOfOp>(op)) {
        StringAttr name = address.getGlobalNameAttr().getAttr();
        add(name, !constant(op, name));
      } else if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
        StringAttr name = global.getNameAttr().getAttr();
        add(name, !constant(op, name));
      } else if (auto call = dyn_cast<CallOpInterface>(op)) {
        auto callee = llvm::dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
        if (!callee) {
          accesses.push_back({Access::Anything});
          return;
        }
        add(callee.getRootReference(), true);
        Operation *function = SymbolTable::lookupNearestSymbolFrom(op, callee);
        if (function && function->getNumRegions() && seen.insert(function).second)
          bodies.push_back(&function->getRegion(0));
      }
    });
  }
}

/// Fewer accesses to compare: the arguments once, each global once, each
/// span of the arena once.
void compact(SmallVectorImpl<Access> &accesses) {
  SmallVector<Access> kept;
  for (const Access &a : accesses) {
    auto same = llvm::find_if(kept, [&](const Access &k) {
      return k.kind == a.kind && k.global == a.global &&
             (a.kind != Access::Arena || (k.lo == a.lo && k.hi == a.hi));
    });
    if (same == kept.end())
      kept.push_back(a);
    else
      same->write |= a.write;
  }
  accesses.assign(kept.begin(), kept.end());
}

/// A pointer argument: the buffer it was taken from and the constant bytes
/// added to it; `bytes` unset when something else was added.
struct Pointer {
  Value buffer;
  std::optional<int64_t> bytes;
};

/// The pointers an integer argument is made of; `unknown` set where it
/// comes from something this cannot follow (a block argument, an op with
/// effects), which may be one.
void pointersIn(Value v, std::optional<int64_t> bytes, SmallVectorImpl<Pointer> &found,
                bool &unknown, int depth = 0) {
  if (isa<BaseMemRefType>(v.getType()))
    return; // a size read from a buffer's type, not an address
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16) {
    unknown = true;
    return;
  }
  if (auto extract = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(def)) {
    found.push_back({extract.getSource(), bytes});
    return;
  }
  if (auto add = dyn_cast<arith::AddIOp>(def)) {
    std::optional<int64_t> lhs = getConstantIntValue(add.getLhs());
    std::optional<int64_t> rhs = getConstantIntValue(add.getRhs());
    if (rhs)
      return pointersIn(add.getLhs(), bytes ? std::optional(*bytes + *rhs) : bytes, found, unknown,
                        depth + 1);
    if (lhs)
      return pointersIn(add.getRhs(), bytes ? std::optional(*bytes + *lhs) : bytes, found, unknown,
                        depth + 1);
  }
  if (!isMemoryEffectFree(def)) {
    unknown = true;
    return;
  }
  for (Value operand : def->getOperands())
    pointersIn(operand, std::nullopt, found, unknown, depth + 1);
}

/// A kernel's integer argument: if it may be an address, anything.
void addIntegerArgument(Value value, DeviceOp &device) {
  SmallVector<Pointer> pointers;
  bool unknown = false;
  pointersIn(value, int64_t(0), pointers, unknown);
  if (unknown || !pointers.empty())
    device.accesses.push_back({Access::Anything});
}

/// What `op` of an entry's block accesses; false for an op this does not
/// know that may touch memory.
bool describe(Operation *op, const Layout &layout, ModuleOp module, DeviceOp &device) {
  device.op = op;
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
    auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(launch.getKernel());
    if (!kernel || kernel.getBody().empty()) {
      device.accesses.push_back({Access::Anything});
      return true;
    }
    // A persistent kernel's grid barrier needs every block resident: alone.
    if (launch->hasAttr(tfc::kCooperativeAttr))
      device.accesses.push_back({Access::Anything});
    for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands())) {
      if (!isa<BaseMemRefType>(operand.getType())) {
        addIntegerArgument(operand, device);
        continue;
      }
      bool read = false, write = false;
      usesOf(kernel.getArgument(i), kernel.getBody(), read, write);
      if (read || write)
        device.accesses.push_back(layout.locate(operand, 0, write));
    }
    globalsOf(kernel.getBody(), device.accesses);
    return true;
  }
  if (auto launch = dyn_cast<gpu::LaunchOp>(op)) { // cuda-emulated: not yet outlined
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(launch.getBody(), captured);
    for (Value value : captured) {
      if (!isa<BaseMemRefType>(value.getType())) {
        addIntegerArgument(value, device);
        continue;
      }
      bool read = false, write = false;
      usesOf(value, launch.getBody(), read, write);
      if (read || write)
        device.accesses.push_back(layout.locate(value, 0, write));
    }
    globalsOf(launch.getBody(), device.accesses);
    return true;
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    device.runtimeCall = true;
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (!call.getCallee().starts_with("tfc_cuda_") || !callee || !callee.isDeclaration()) {
      device.accesses.push_back({Access::Anything});
      return true;
    }
    std::optional<int64_t> at;
    if (auto planned = call->getAttrOfType<IntegerAttr>(tfc::kPlanPositionAttr))
      at = planned.getInt();
    for (auto [position, operand] : llvm::enumerate(call.getOperands())) {
      const bool write = !tfc::runtimeCallOnlyReads(call.getCallee(), unsigned(position));
      if (isa<BaseMemRefType>(operand.getType())) {
        device.accesses.push_back(layout.locate(operand, 0, write, at));
        continue;
      }
      SmallVector<Pointer> pointers;
      bool unknown = false;
      pointersIn(operand, int64_t(0), pointers, unknown);
      if (unknown)
        device.accesses.push_back({Access::Anything});
      for (const Pointer &p : pointers) {
        Access access = layout.locate(p.buffer, p.bytes.value_or(0), write, at, /*pointer=*/true);
        if (!p.bytes && access.kind == Access::Arena) // somewhere in it
          access.lo = 0, access.hi = kUnbounded;
        device.accesses.push_back(access);
      }
    }
    return true;
  }
  return tfc::touchesNoMemory(op) || isa<func::ReturnOp>(op);
}

/// An entry's device ops in order, each op's direct dependencies and lane.
struct Graph {
  SmallVector<DeviceOp> ops;
  SmallVector<SmallVector<int32_t>> deps;
  SmallVector<int64_t> lanes;
  SmallVector<int32_t> sinks;
};

void build(Graph &graph, int64_t laneCount) {
  const size_t n = graph.ops.size();
  SmallVector<llvm::BitVector> ancestors(n, llvm::BitVector(n));
  graph.deps.assign(n, {});
  graph.lanes.assign(n, -1);
  SmallVector<int64_t> lastOnLane(laneCount, -1);
  for (size_t j = 0; j < n; ++j) {
    llvm::BitVector &before = ancestors[j];
    auto waitFor = [&](size_t i) {
      graph.deps[j].push_back(int32_t(i));
      before |= ancestors[i];
      before.set(i);
    };
    // Latest first: a conflict already implied by a later dependency adds
    // no edge.
    for (size_t i = j; i-- > 0;)
      if (!before.test(i) && conflict(graph.ops[i], graph.ops[j]))
        waitFor(i);
    if (graph.ops[j].runtimeCall && laneCount > 0) {
      int64_t lane = -1;
      for (int64_t l = 0; l < laneCount && lane < 0; ++l)
        if (lastOnLane[l] < 0 || before.test(lastOnLane[l]))
          lane = l;
      if (lane < 0) { // the lane whose last call is the oldest
        lane = 0;
        for (int64_t l = 1; l < laneCount; ++l)
          if (lastOnLane[l] < lastOnLane[lane])
            lane = l;
        waitFor(lastOnLane[lane]);
      }
      graph.lanes[j] = lane;
      lastOnLane[lane] = int64_t(j);
    }
  }
  // Only direct edges: a dependency that another one waits for goes.
  llvm::BitVector waitedFor(n);
  for (size_t j = 0; j < n; ++j) {
    SmallVector<int32_t> direct;
    for (int32_t d : graph.deps[j])
      if (llvm::none_of(graph.deps[j],
                        [&](int32_t other) { return other != d && ancestors[other].test(d); }))
        direct.push_back(d);
    llvm::sort(direct);
    graph.deps[j] = std::move(direct);
    for (int32_t d : graph.deps[j])
      waitedFor.set(d);
  }
  for (size_t i = 0; i < n; ++i)
    if (!waitedFor.test(i))
      graph.sinks.push_back(int32_t(i));
}

/// Another order the dependencies allow: each time, the latest ready op.
SmallVector<size_t> latestReadyFirst(const Graph &graph) {
  const size_t n = graph.ops.size();
  SmallVector<size_t> waiting(n);
  SmallVector<SmallVector<size_t>> dependents(n);
  for (size_t j = 0; j < n; ++j) {
    waiting[j] = graph.deps[j].size();
    for (int32_t d : graph.deps[j])
      dependents[d].push_back(j);
  }
  std::set<size_t> ready;
  for (size_t j = 0; j < n; ++j)
    if (!waiting[j])
      ready.insert(j);
  SmallVector<size_t> order;
  while (!ready.empty()) {
    size_t next = *ready.rbegin();
    ready.erase(next);
    order.push_back(next);
    for (size_t j : dependents[next])
      if (--waiting[j] == 0)
        ready.insert(j);
  }
  return order;
}

struct TfGraphDependenciesPass : tfc::impl::TfGraphDependenciesBase<TfGraphDependenciesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(tfc::kEntryAttr) && !func.isDeclaration())
        entries.push_back(func);
    // The runtime keeps abi::graph::kLanes: two calls on lanes it folds
    // together could run at once over one workspace.
    if (!reorder && lanes != abi::graph::kLanes) {
      module.emitError("tf-graph-dependencies: lanes=")
          << int64_t(lanes) << ", but the runtime keeps " << abi::graph::kLanes
          << " (runtime/Abi.h's abi::graph::kLanes)";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    for (func::FuncOp func : entries) {
      Graph graph;
      if (!collect(func, module, graph))
        continue;
      build(graph, reorder ? 0 : lanes);
      // What --emit=gpu shows of it: the ops, and the most on one path of
      // ops that wait for each other (a chain's is all of them).
      SmallVector<int64_t> depth(graph.ops.size(), 1);
      int64_t longest = 0;
      for (size_t j = 0; j < graph.ops.size(); ++j) {
        for (int32_t d : graph.deps[j])
          depth[j] = std::max(depth[j], depth[d] + 1);
        longest = std::max(longest, depth[j]);
      }
      Builder b(func.getContext());
      func->setAttr(tfc::kGraphAttr,
                    b.getDictionaryAttr(
                        {b.getNamedAttr(abi::key::kOps, b.getI64IntegerAttr(graph.ops.size())),
                         b.getNamedAttr(abi::key::kLongestPath, b.getI64IntegerAttr(longest))}));
      if (reorder)
        moveInto(func, graph, latestReadyFirst(graph));
      else
        callBeforeEach(func, module, symbols, graph);
    }
  }

  /// The entry's device ops; false when it has one in a region or an op
  /// that touches memory this does not know.
  bool collect(func::FuncOp func, ModuleOp module, Graph &graph) {
    if (!func.getBody().hasOneBlock())
      return false;
    Layout layout;
    if (func->hasAttr(tfc::kArenaBytesAttr) && func.getNumArguments())
      layout.arena = func.getArguments().back();
    if (auto spans = func->getAttrOfType<DenseI64ArrayAttr>(tfc::kArenaBuffersAttr))
      for (size_t i = 0; i + 3 < spans.size(); i += 4)
        layout.spans.push_back({spans[i], spans[i + 1], spans[i + 2], spans[i + 3]});
    bool nested = false;
    func.walk([&](Operation *op) {
      if ((isa<gpu::LaunchFuncOp, gpu::LaunchOp>(op) ||
           (isa<func::CallOp>(op) && !op->getParentOfType<gpu::LaunchOp>())) &&
          op->getBlock() != &func.getBody().front())
        nested = true;
    });
    if (nested)
      return false;
    for (Operation &op : func.getBody().front()) {
      DeviceOp device;
      if (!describe(&op, layout, module, device))
        return false;
      compact(device.accesses);
      if (isa<gpu::LaunchFuncOp, gpu::LaunchOp, func::CallOp>(op))
        graph.ops.push_back(std::move(device));
    }
    return !graph.ops.empty();
  }

  void callBeforeEach(func::FuncOp func, ModuleOp module, SymbolTable &symbols,
                      const Graph &graph) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    Location loc = func.getLoc();
    const StringRef callee(abi::symbol(abi::RuntimeFunction::CudaGraphNode));
    Type index = top.getIndexType();
    if (!symbols.lookup(callee)) {
      auto declaration = top.create<func::FuncOp>(
          loc, callee, top.getFunctionType(SmallVector<Type>(abi::graph::Count, index), {}));
      declaration.setPrivate();
      symbols.insert(declaration);
    }
    // One table an entry: every op's dependencies, then the sinks.
    SmallVector<int32_t> table;
    SmallVector<int64_t> offsets;
    for (const auto &deps : graph.deps) {
      offsets.push_back(int64_t(table.size()));
      table.append(deps.begin(), deps.end());
    }
    offsets.push_back(int64_t(table.size()));
    table.append(graph.sinks.begin(), graph.sinks.end());
    if (table.empty())
      table.push_back(0);
    auto tableType = MemRefType::get({int64_t(table.size())}, top.getI32Type());
    std::string name = ("tfc_graph_deps_" + func.getSymName()).str();
    OpBuilder detached(module.getContext());
    auto global = detached.create<memref::GlobalOp>(
        loc, name, top.getStringAttr("private"), tableType,
        DenseElementsAttr::get(RankedTensorType::get(tableType.getShape(), top.getI32Type()),
                               ArrayRef<int32_t>(table)),
        /*constant=*/true, /*alignment=*/IntegerAttr());
    symbols.insert(global, module.getBody()->begin()); // renamed if taken
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    Value tableRef = b.create<memref::GetGlobalOp>(loc, tableType, global.getSymName());
    Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, tableRef);
    auto node = [&](Operation *before, size_t i, int64_t lane, int64_t offset, size_t count) {
      b.setInsertionPoint(before);
      Value at = b.create<arith::AddIOp>(
          loc, base, b.create<arith::ConstantIndexOp>(loc, offset * int64_t(sizeof(int32_t))));
      b.create<func::CallOp>(before->getLoc(), callee, TypeRange(),
                             ValueRange{b.create<arith::ConstantIndexOp>(loc, int64_t(i)),
                                        b.create<arith::ConstantIndexOp>(loc, lane), at,
                                        b.create<arith::ConstantIndexOp>(loc, int64_t(count))});
    };
    for (size_t i = 0; i < graph.ops.size(); ++i)
      node(graph.ops[i].op, i, graph.lanes[i], offsets[i], graph.deps[i].size());
    node(func.getBody().front().getTerminator(), graph.ops.size(), -1, offsets.back(),
         graph.sinks.size());
  }

  /// The device ops in `order`, after every other op (pure: views,
  /// constants, pointers) in its own order.
  static void moveInto(func::FuncOp func, const Graph &graph, ArrayRef<size_t> order) {
    Block &block = func.getBody().front();
    Operation *terminator = block.getTerminator();
    llvm::SmallPtrSet<Operation *, 32> device;
    for (const DeviceOp &op : graph.ops)
      device.insert(op.op);
    SmallVector<Operation *> rest;
    for (Operation &op : block)
      if (!device.count(&op) && &op != terminator)
        rest.push_back(&op);
    for (Operation *op : rest)
      op->moveBefore(terminator);
    for (size_t i : order)
      graph.ops[i].op->moveBefore(terminator);
    func->setAttr("tfc.graph_reordered",
                  BoolAttr::get(func.getContext(), llvm::any_of(llvm::enumerate(order), [](auto e) {
                                  return e.index() != e.value();
                                })));
  }
};

} // namespace
