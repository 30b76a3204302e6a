//===- UpdatesInPlace.cpp - a step writes its new parameters over the old ==//
//
// A train step returns each parameter's and optimizer buffer's next value
// in an out-param of its own, which the runtime swaps with the argument
// after the step: a device holds the parameters and the optimizer state
// twice. Where nothing reads the argument after the loop nest that first
// writes the next value, or that nest reads it element by element as it
// writes it (the optimizer's update), the nest may write over the argument:
// the out-param goes unused, and the result's ABI entry names the argument
// that holds it (`in_place_of`), so the runtime passes one buffer for both.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/lowering/BufferEffects.h"
#include "compiler/transforms/EntryAbi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"

namespace tfc {
#define GEN_PASS_DEF_TFUPDATESINPLACE
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

using Access = BufferAccess;

/// What `op` reads and writes (BufferEffects.h), every pointer a runtime
/// call takes counted as written.
bool accessesOf(Operation *op, SmallVectorImpl<Access> &accesses) {
  return bufferAccessesOf(op, accesses, /*knownReads=*/false);
}

/// The ops of `block` that touch `buffer`, through any value derived from
/// it (views, pointers, offsets), in block order.
llvm::SetVector<Operation *> touchersOf(Block &block, Value buffer) {
  llvm::SetVector<Operation *> touchers;
  SmallVector<Value> derived = {buffer};
  DenseSet<Value> seen = {buffer};
  while (!derived.empty()) {
    Value value = derived.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (Operation *top = block.findAncestorOpInBlock(*user))
        touchers.insert(top);
      for (Value result : user->getResults())
        if (seen.insert(result).second)
          derived.push_back(result);
    }
  }
  SmallVector<Operation *> ordered(touchers.begin(), touchers.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return llvm::SetVector<Operation *>(ordered.begin(), ordered.end());
}

/// Whether `first`, the nest that first writes `out`, may read `in` while
/// it writes `out` over it: a loop nest of parallel loops whose every
/// access to either is the buffer itself at one bijective indexing map, so
/// each element is read by the iteration that writes it, and by no other.
bool readsElementwise(Operation *first, Value in, Value out) {
  auto generic = dyn_cast<linalg::GenericOp>(first);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  std::optional<AffineMap> map;
  bool writesOut = false;
  for (OpOperand &operand : generic->getOpOperands()) {
    Value root = rootBuffer(operand.get());
    if (root != in && root != out)
      continue;
    if (operand.get() != root || (root == in && generic.isDpsInit(&operand)))
      return false; // a view, or `in` written
    AffineMap operandMap = generic.getMatchingIndexingMap(&operand);
    if (!operandMap.isPermutation() || (map && *map != operandMap))
      return false;
    map = operandMap;
    writesOut |= root == out;
  }
  // Nothing in the body touches them itself, directly or through a view.
  WalkResult body = first->walk([&](Operation *inner) {
    if (inner == first)
      return WalkResult::advance();
    for (Value operand : inner->getOperands())
      if (isa<MemRefType>(operand.getType()) && llvm::is_contained({in, out}, rootBuffer(operand)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return writesOut && !body.wasInterrupted();
}

/// Whether `later` must stay after `op`: it writes what `op` touches, or
/// touches what `op` writes, or either touches what cannot be named.
bool dependsOn(Operation *later, Operation *op) {
  SmallVector<Access> opAccesses, laterAccesses;
  if (!accessesOf(op, opAccesses) || !accessesOf(later, laterAccesses))
    return true;
  for (const Access &a : opAccesses)
    for (const Access &b : laterAccesses)
      if (a.root == b.root && (a.write || b.write))
        return true;
  // An op that uses what `op` defines (none of a nest on buffers).
  for (Value result : op->getResults())
    for (Operation *user : result.getUsers())
      if (later->isAncestor(user))
        return true;
  return false;
}

/// Makes the writes of `out` write over `in` where nothing the entry
/// computes changes: moves the first writer after the last reader of `in`
/// if it must and may. True when done.
bool updateInPlace(Block &block, Value in, Value out) {
  // The first op that writes `out` (or may: one whose accesses are unknown);
  // views of it made before count for nothing.
  Operation *first = nullptr;
  for (Operation *op : touchersOf(block, out)) {
    SmallVector<Access> accesses;
    if (!accessesOf(op, accesses) ||
        llvm::any_of(accesses, [&](const Access &a) { return a.write && a.root == out; })) {
      first = op;
      break;
    }
  }
  if (!first)
    return false;
  llvm::SetVector<Operation *> readers = touchersOf(block, in);
  if (readers.contains(first) && !readsElementwise(first, in, out))
    return false;
  Operation *last = readers.empty() ? nullptr : readers.back();
  if (last && first->isBeforeInBlock(last)) {
    // The update stands before a reader of the old value (a parameter's
    // update right after its gradient, before the products that read the
    // parameter still): after the last reader, where nothing in between
    // depends on it.
    for (Operation *op = first->getNextNode(); op != last->getNextNode(); op = op->getNextNode())
      if (dependsOn(op, first))
        return false;
    first->moveAfter(last);
  }
  out.replaceAllUsesWith(in);
  return true;
}

struct TfUpdatesInPlacePass : tfc::impl::TfUpdatesInPlaceBase<TfUpdatesInPlacePass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto abi = func->getAttrOfType<DictionaryAttr>(kAbiAttr);
      if (!func->hasAttr(kEntryAttr) || func.isDeclaration() || !abi)
        continue;
      auto args = abi.getAs<ArrayAttr>("args");
      auto results = abi.getAs<ArrayAttr>("results");
      // After buffer-results-to-out-params: the arguments, then an
      // out-param a result.
      if (!args || !results || func.getNumArguments() != args.size() + results.size())
        continue;
      Block &block = func.getBody().front();
      SmallVector<Attribute> described(results.begin(), results.end());
      bool changed = false;
      for (auto [r, result] : llvm::enumerate(results.getAsRange<DictionaryAttr>())) {
        abi::ValueKind kind = kindOf(result);
        if (kind != abi::ValueKind::Param && kind != abi::ValueKind::State)
          continue;
        auto arg = llvm::find_if(args.getAsRange<DictionaryAttr>(), [&](DictionaryAttr a) {
          return kindOf(a) == kind && a.get("name") == result.get("name");
        });
        if (arg == args.getAsRange<DictionaryAttr>().end())
          continue;
        unsigned j = std::distance(args.getAsRange<DictionaryAttr>().begin(), arg);
        Value in = block.getArgument(j), out = block.getArgument(args.size() + r);
        if (in.getType() != out.getType() || !updateInPlace(block, in, out))
          continue;
        NamedAttrList entries(result);
        entries.set(abi::key::kInPlaceOf, b.getI64IntegerAttr(j));
        described[r] = entries.getDictionary(&getContext());
        changed = true;
      }
      if (!changed)
        continue;
      NamedAttrList entries(abi);
      entries.set("results", b.getArrayAttr(described));
      func->setAttr(kAbiAttr, entries.getDictionary(&getContext()));
    }
  }
};

} // namespace
