//===- HorizontalLoops.cpp - independent loops over other shapes as one ---===//
//
// A tf.fusion "horizontal" (a train step's optimizer update: one loop per
// parameter) lowers to one generic per member loop, each marked with the
// fusion's tfc.horizontal id. On buffers, before the memory plan, the
// members become one scf.parallel over chunks of kChunk elements of all of
// them:
//
//   scf.parallel (%c) = (0) to (C) {             // chunk c, of any member
//     %s = the member whose chunks hold c
//     %first, %n, %views... = scf.index_switch %s   // member s's, as
//       case s { scf.yield ... }                     // memref<?xT>
//     scf.for %i = lo to hi { the body on element %i of %views }
//   }
//
// Members are grouped by kind (the same body, operands alike): each kind
// has one such switch and one element loop, and a switch over the kinds
// picks the chunk's (a kind of one member keeps its static views). An
// Adam update over fifty parameters is then one loop body for LLVM instead
// of fifty, which took most of a small model's `tfc compile` time.
//
// Each member is walked in its buffers' flat (row-major) order, so it
// qualifies when every operand is contiguous and read or written at the
// loop's own element (identity map), or is a scalar (0-d) input; others keep
// their own loop nest. tf-parallel-loops-to-runtime then hands the chunks to
// the pool: one job for the whole update, split evenly by elements,
// whatever the parameters' shapes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/lowering/BufferEffects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace tfc {
#define GEN_PASS_DEF_TFHORIZONTALLOOPS
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

/// Elements per chunk: a few microseconds of an Adam update, so that the
/// threads share even a small model's update and a chunk's dispatch (one
/// switch) is noise.
constexpr int64_t kChunk = 4096;

/// Members a merged loop takes at most: its switch has a case a member, and
/// LLVM's time on one function grows faster than its size (a 64-layer
/// model's 780-case update took 9 s of instruction selection alone). Every
/// model in models/ has fewer (the medium encoder 80 parameters); a deeper
/// one's update is a few loops, one dispatch each.
constexpr size_t kMaxMembers = 128;

bool isScalarInput(linalg::GenericOp loop, OpOperand &operand) {
  if (!loop.isDpsInput(&operand))
    return false;
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  return !type || (type.getRank() == 0 && loop.getMatchingIndexingMap(&operand).getNumResults() == 0);
}

/// True when `loop` can run on its elements in flat order: all parallel,
/// static, no linalg.index, every operand contiguous at the loop's own
/// element or a scalar input.
bool isFlat(linalg::GenericOp loop) {
  if (!loop.hasPureBufferSemantics() || loop.getNumLoops() == 0 ||
      loop.getNumLoops() != loop.getNumParallelLoops() ||
      llvm::any_of(loop.getStaticLoopRanges(), ShapedType::isDynamic) ||
      !loop.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  for (OpOperand &operand : loop->getOpOperands()) {
    if (isScalarInput(loop, operand))
      continue;
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !loop.getMatchingIndexingMap(&operand).isIdentity())
      return false;
  }
  return true;
}

/// One member of a merge: its loop, its element count, its first chunk, and
/// its operands as the merged loop reads them (1-d views, scalars as they
/// are).
struct Member {
  linalg::GenericOp loop;
  int64_t elements, firstChunk;
  SmallVector<Value> operands;
};

/// Whether `a` and `b` can share one loop body: the same body up to its
/// block arguments, operands alike (flat ones of one element type, scalars
/// of one type).
bool sameKind(Member &a, Member &b) {
  if (a.operands.size() != b.operands.size() ||
      a.loop.getNumDpsInputs() != b.loop.getNumDpsInputs())
    return false;
  for (OpOperand &operand : a.loop->getOpOperands()) {
    OpOperand &other = b.loop->getOpOperand(operand.getOperandNumber());
    bool scalar = isScalarInput(a.loop, operand);
    if (scalar != isScalarInput(b.loop, other))
      return false;
    Type ta = operand.get().getType(), tb = other.get().getType();
    if (scalar ? ta != tb : getElementTypeOrSelf(ta) != getElementTypeOrSelf(tb))
      return false;
  }
  return OperationEquivalence::isRegionEquivalentTo(&a.loop.getRegion(), &b.loop.getRegion(),
                                                    OperationEquivalence::IgnoreLocations);
}

/// Replaces `members` (in block order, nothing between them that touches
/// memory) by one chunked loop at the last one. Members of one kind (every
/// parameter's Adam update) share one element loop: a switch picks the
/// chunk's member's views (as memref<?xT>) and bounds, so that the update
/// of a model with fifty parameters is one loop body for LLVM, not fifty
/// (the encoder-decoder's train step: 1.6 of its 2 s of compilation).
void merge(ArrayRef<linalg::GenericOp> members) {
  linalg::GenericOp last = members.back();
  Location loc = last.getLoc();
  OpBuilder b(last);
  auto index = [&](OpBuilder &at, int64_t v) -> Value {
    return at.create<arith::ConstantIndexOp>(loc, v);
  };

  SmallVector<Member> parts;
  int64_t opsPerElement = 1;
  for (linalg::GenericOp loop : members) {
    Member m{loop, 1, 0, {}};
    for (int64_t size : loop.getStaticLoopRanges())
      m.elements *= size;
    for (OpOperand &operand : loop->getOpOperands()) {
      Value v = operand.get();
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!isScalarInput(loop, operand) && type.getRank() != 1) {
        ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
        v = b.create<memref::CollapseShapeOp>(loc, v, ArrayRef<ReassociationIndices>{all});
      }
      m.operands.push_back(v);
    }
    opsPerElement = std::max<int64_t>(opsPerElement, loop.getBody()->getOperations().size());
    parts.push_back(std::move(m));
  }
  // Kinds, in order of first appearance; the chunks run kind by kind (the
  // members are independent: their order is free).
  SmallVector<SmallVector<Member>> kinds;
  for (Member &m : parts) {
    auto kind = llvm::find_if(kinds, [&](auto &k) { return sameKind(k.front(), m); });
    if (kind != kinds.end())
      kind->push_back(m);
    else
      kinds.push_back({m});
  }
  int64_t chunks = 0;
  SmallVector<int64_t> kindFirstChunk;
  for (auto &kind : kinds) {
    kindFirstChunk.push_back(chunks);
    for (Member &m : kind) {
      m.firstChunk = chunks;
      chunks += (m.elements + kChunk - 1) / kChunk;
    }
  }

  // How many of `starts` after the first are at or before `chunk`.
  auto position = [&](OpBuilder &body, Value chunk, ArrayRef<int64_t> starts) {
    Value zero = index(body, 0), one = index(body, 1), at = zero;
    for (int64_t start : starts.drop_front()) {
      Value started =
          body.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, chunk, index(body, start));
      at = body.create<arith::AddIOp>(loc, at,
                                      body.create<arith::SelectOp>(loc, started, one, zero));
    }
    return at;
  };
  // `loop`'s body over elements [lo, hi) of the views `operands` (a chunk).
  auto elementLoop = [&](OpBuilder &body, linalg::GenericOp loop, Value lo, Value hi,
                         ValueRange operands) {
    Block &loopBody = *loop.getBody();
    IRMapping mapping;
    // Scalars once per chunk.
    for (OpOperand &operand : loop->getOpOperands()) {
      if (!isScalarInput(loop, operand))
        continue;
      Value v = operands[operand.getOperandNumber()];
      if (isa<MemRefType>(v.getType()))
        v = body.create<memref::LoadOp>(loc, v, ValueRange{});
      mapping.map(loopBody.getArgument(operand.getOperandNumber()), v);
    }
    auto forOp = body.create<scf::ForOp>(loc, lo, hi, index(body, 1));
    OpBuilder inner = OpBuilder::atBlockBegin(forOp.getBody());
    Value i = forOp.getInductionVar();
    for (OpOperand &operand : loop->getOpOperands()) {
      BlockArgument arg = loopBody.getArgument(operand.getOperandNumber());
      if (isScalarInput(loop, operand) || arg.use_empty())
        continue;
      mapping.map(arg, inner.create<memref::LoadOp>(loc, operands[operand.getOperandNumber()],
                                                    ValueRange{i}));
    }
    for (Operation &op : loopBody.without_terminator())
      inner.clone(op, mapping);
    auto yield = cast<linalg::YieldOp>(loopBody.getTerminator());
    for (auto [value, init] : llvm::zip(yield.getValues(), loop.getDpsInitsMutable()))
      inner.create<memref::StoreOp>(loc, mapping.lookupOrDefault(value),
                                    operands[init.getOperandNumber()], ValueRange{i});
    body.setInsertionPointAfter(forOp);
  };
  // Chunk `chunk` of a kind: its member's bounds and views (a switch over
  // the kind's members when there are several), then the element loop.
  auto kindBody = [&](OpBuilder &body, Value chunk, ArrayRef<Member> kind) {
    const Member &first = kind.front();
    Value firstChunk, elements;
    SmallVector<Value> operands(first.operands);
    if (kind.size() == 1) {
      firstChunk = index(body, first.firstChunk), elements = index(body, first.elements);
    } else {
      SmallVector<int64_t> starts;
      for (const Member &m : kind)
        starts.push_back(m.firstChunk);
      Value member = position(body, chunk, starts);
      // Flat views as memref<?xT>: one type for every member.
      auto viewOf = [&](OpBuilder &at, const Member &m, unsigned n) -> Value {
        Value v = m.operands[n];
        if (isScalarInput(m.loop, m.loop->getOpOperand(n)))
          return v;
        auto type = cast<MemRefType>(v.getType());
        return at.create<memref::CastOp>(
            loc, MemRefType::get({ShapedType::kDynamic}, type.getElementType()), v);
      };
      SmallVector<Type> types{body.getIndexType(), body.getIndexType()};
      for (OpOperand &operand : first.loop->getOpOperands()) {
        Type type = first.operands[operand.getOperandNumber()].getType();
        types.push_back(isScalarInput(first.loop, operand)
                            ? type
                            : MemRefType::get({ShapedType::kDynamic}, getElementTypeOrSelf(type)));
      }
      auto cases = llvm::to_vector(llvm::seq<int64_t>(0, int64_t(kind.size())));
      auto pick = body.create<scf::IndexSwitchOp>(loc, types, member, cases, cases.size());
      auto yieldOf = [&](Region &region, const Member &m) {
        OpBuilder at = OpBuilder::atBlockBegin(&region.emplaceBlock());
        SmallVector<Value> values{index(at, m.firstChunk), index(at, m.elements)};
        for (unsigned n = 0; n < m.operands.size(); ++n)
          values.push_back(viewOf(at, m, n));
        at.create<scf::YieldOp>(loc, values);
      };
      yieldOf(pick.getDefaultRegion(), first);
      for (auto [region, m] : llvm::zip(pick.getCaseRegions(), kind))
        yieldOf(region, m);
      firstChunk = pick.getResult(0), elements = pick.getResult(1);
      operands.assign(pick.getResults().begin() + 2, pick.getResults().end());
    }
    Value lo = body.create<arith::MulIOp>(loc, body.create<arith::SubIOp>(loc, chunk, firstChunk),
                                          index(body, kChunk));
    Value hi = body.create<arith::MinSIOp>(
        loc, body.create<arith::AddIOp>(loc, lo, index(body, kChunk)), elements);
    elementLoop(body, first.loop, lo, hi, operands);
  };

  auto parallel = b.create<scf::ParallelOp>(
      loc, ValueRange{index(b, 0)}, ValueRange{index(b, chunks)}, ValueRange{index(b, 1)},
      [&](OpBuilder &body, Location, ValueRange ivs) {
        Value chunk = ivs[0];
        if (kinds.size() == 1) {
          kindBody(body, chunk, kinds.front());
        } else {
          Value kind = position(body, chunk, kindFirstChunk);
          auto cases = llvm::to_vector(llvm::seq<int64_t>(0, int64_t(kinds.size())));
          auto dispatch =
              body.create<scf::IndexSwitchOp>(loc, TypeRange{}, kind, cases, cases.size());
          body.createBlock(&dispatch.getDefaultRegion());
          body.create<scf::YieldOp>(loc);
          for (auto [region, members] : llvm::zip(dispatch.getCaseRegions(), kinds)) {
            body.createBlock(&region);
            kindBody(body, chunk, members);
            body.create<scf::YieldOp>(loc);
          }
          body.setInsertionPointAfter(dispatch);
        }
        body.create<scf::ReduceOp>(loc);
      });
  parallel->setAttr(kWorkPerIterationAttr, b.getI64IntegerAttr(kChunk * opsPerElement));
  for (linalg::GenericOp loop : members)
    loop.erase();
}

struct TfHorizontalLoopsPass : tfc::impl::TfHorizontalLoopsBase<TfHorizontalLoopsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      if (func.isDeclaration())
        return;
      // The members of each fusion, in block order, cut into runs with
      // nothing between them that touches memory (only allocations, views
      // and constants may lie between members).
      llvm::MapVector<Attribute, SmallVector<SmallVector<linalg::GenericOp>>> runs;
      Block &block = func.getBody().front();
      DenseMap<Attribute, Operation *> previous;
      for (Operation &op : block) {
        auto loop = dyn_cast<linalg::GenericOp>(op);
        Attribute id = loop ? loop->getAttr(kHorizontalAttr) : Attribute();
        if (!id)
          continue;
        loop->removeAttr(kHorizontalAttr);
        if (!isFlat(loop))
          continue;
        auto &list = runs[id];
        Operation *before = previous.lookup(id);
        bool adjacent = before != nullptr;
        for (Operation *o = before ? before->getNextNode() : nullptr; adjacent && o != loop;
             o = o->getNextNode())
          adjacent = touchesNoMemory(o);
        if (!adjacent)
          list.emplace_back();
        list.back().push_back(loop);
        previous[id] = loop;
      }
      for (auto &[id, list] : runs)
        for (auto &run : list)
          for (size_t first = 0; first + 1 < run.size(); first += kMaxMembers)
            merge(ArrayRef(run).slice(first, std::min(kMaxMembers, run.size() - first)));
    });
  }
};

} // namespace
