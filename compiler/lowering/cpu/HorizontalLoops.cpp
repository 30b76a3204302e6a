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
//     scf.index_switch %s
//     case s { scf.for %i = lo to hi { member s's body on element %i } }
//   }
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
#include "compiler/lowering/cpu/BufferEffects.h"

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

/// Replaces `members` (in block order, nothing between them that touches
/// memory) by one chunked loop at the last one.
void merge(ArrayRef<linalg::GenericOp> members) {
  linalg::GenericOp last = members.back();
  Location loc = last.getLoc();
  OpBuilder b(last);
  auto index = [&](OpBuilder &at, int64_t v) -> Value {
    return at.create<arith::ConstantIndexOp>(loc, v);
  };

  struct Member {
    linalg::GenericOp loop;
    int64_t elements, firstChunk;
    SmallVector<Value> operands; // 1-d views, or the scalars as they are
  };
  SmallVector<Member> parts;
  int64_t chunks = 0, opsPerElement = 1;
  for (linalg::GenericOp loop : members) {
    Member m{loop, 1, chunks, {}};
    for (int64_t size : loop.getStaticLoopRanges())
      m.elements *= size;
    chunks += (m.elements + kChunk - 1) / kChunk;
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

  auto parallel = b.create<scf::ParallelOp>(
      loc, ValueRange{index(b, 0)}, ValueRange{index(b, chunks)}, ValueRange{index(b, 1)},
      [&](OpBuilder &body, Location, ValueRange ivs) {
        Value chunk = ivs[0];
        // The member: how many members after the first start at or before c.
        Value zero = index(body, 0), one = index(body, 1), member = zero;
        for (const Member &m : ArrayRef(parts).drop_front()) {
          Value started = body.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, chunk,
                                                     index(body, m.firstChunk));
          member = body.create<arith::AddIOp>(
              loc, member, body.create<arith::SelectOp>(loc, started, one, zero));
        }
        auto cases = llvm::to_vector(llvm::seq<int64_t>(0, int64_t(parts.size())));
        auto dispatch =
            body.create<scf::IndexSwitchOp>(loc, TypeRange{}, member, cases, cases.size());
        body.createBlock(&dispatch.getDefaultRegion());
        body.create<scf::YieldOp>(loc);
        for (auto [region, m] : llvm::zip(dispatch.getCaseRegions(), parts)) {
          body.createBlock(&region);
          Value lo = body.create<arith::MulIOp>(
              loc, body.create<arith::SubIOp>(loc, chunk, index(body, m.firstChunk)),
              index(body, kChunk));
          Value hi = body.create<arith::MinSIOp>(
              loc, body.create<arith::AddIOp>(loc, lo, index(body, kChunk)),
              index(body, m.elements));
          Block &loopBody = *m.loop.getBody();
          IRMapping mapping;
          // Scalars once per chunk.
          for (OpOperand &operand : m.loop->getOpOperands()) {
            if (!isScalarInput(m.loop, operand))
              continue;
            Value v = m.operands[operand.getOperandNumber()];
            if (isa<MemRefType>(v.getType()))
              v = body.create<memref::LoadOp>(loc, v, ValueRange{});
            mapping.map(loopBody.getArgument(operand.getOperandNumber()), v);
          }
          auto elementLoop = body.create<scf::ForOp>(loc, lo, hi, one);
          OpBuilder inner = OpBuilder::atBlockBegin(elementLoop.getBody());
          Value i = elementLoop.getInductionVar();
          for (OpOperand &operand : m.loop->getOpOperands()) {
            BlockArgument arg = loopBody.getArgument(operand.getOperandNumber());
            if (isScalarInput(m.loop, operand) || arg.use_empty())
              continue;
            mapping.map(arg, inner.create<memref::LoadOp>(
                                 loc, m.operands[operand.getOperandNumber()], ValueRange{i}));
          }
          for (Operation &op : loopBody.without_terminator())
            inner.clone(op, mapping);
          auto yield = cast<linalg::YieldOp>(loopBody.getTerminator());
          for (auto [value, init] : llvm::zip(yield.getValues(), m.loop.getDpsInitsMutable()))
            inner.create<memref::StoreOp>(loc, mapping.lookupOrDefault(value),
                                          m.operands[init.getOperandNumber()], ValueRange{i});
          body.setInsertionPointAfter(elementLoop);
          body.create<scf::YieldOp>(loc);
        }
        body.setInsertionPointAfter(dispatch);
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
          if (run.size() >= 2)
            merge(run);
    });
  }
};

} // namespace
