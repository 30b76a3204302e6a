//===- Fuse.cpp - group tf ops into tf.fusion regions ---------------------===//
//
// The fusion policy, decided once at the tf level so that every backend
// gets the same groups: each tf.fusion becomes one loop nest (CPU: one
// linalg.generic per reduction stage; a GPU backend: one kernel). The
// mechanism lives in the backends (lowering/LowerToLinalg.cpp fuses the
// generics of one region with MLIR's elementwise fusion).
//
// Greedy and consumer-first, as XLA's instruction fusion: walking each
// function backwards, an op that can root a group (an elementwise op, or a
// reduction-like op) pulls in the elementwise ops producing its operands,
// and theirs, as long as they iterate over the same number of elements.
//
// A loop group may also take in one matmul or convolution it alone reads
// (the group's iteration space: a matrix, or a batch of them): the group is
// then a GEMM with its epilogue (bias,
// activation, residual, whatever elementwise ops follow), and the backends
// apply the epilogue to blocks of rows as the GEMM finishes them, while they
// are still in cache (CPU: tfc_sgemm_epilogue, runtime/cpu/Gemm.h). An
// elementwise op on a reshaped product is redone in the product's shape
// first, to join it.
//
// Last, the loop groups only the function's return reads (the optimizer's
// per-parameter updates) merge into one "horizontal" fusion: one pass.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace tfc {
#define GEN_PASS_DEF_TFFUSE
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

/// What the ops say of themselves (TfOps.td): computed element by element
/// (fuses into its consumers' loops), or reducing along an axis of its first
/// operand (roots a group over it).
bool isElementwise(Operation *op) { return tf::isLoopFusible(op); }
bool isReductionLike(Operation *op) { return op->hasTrait<tf::ReductionFusible>(); }

/// Ops worth recomputing in every group that reads them rather than making
/// them a group output: a broadcast only changes indexing, and a splat
/// constant is a scalar.
bool isFreeToDuplicate(Operation *op) {
  if (isa<tf::BroadcastInDimOp>(op))
    return true;
  auto constant = dyn_cast<tf::ConstantOp>(op);
  if (!constant)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  return dense && dense.isSplat();
}

int64_t numElements(Value v) { return cast<ShapedType>(v.getType()).getNumElements(); }

struct Group {
  Operation *root;
  bool reduction;
  Operation *gemm = nullptr; // the matmul whose epilogue the loop group is
  int64_t loopElements;
  llvm::SetVector<Operation *> members;     // moved into the region
  llvm::SetVector<Operation *> duplicates;  // cloned into it (they stay outside too)
};

class Fuser {
public:
  Fuser(Block &block, bool gemmEpilogues, bool mergeResultGroups)
      : block_(block), gemmEpilogues_(gemmEpilogues), mergeResultGroups_(mergeResultGroups) {}

  void run() {
    decomposeAttention();
    sinkReshapesOfProducts();
    // Ops move into regions as groups form: walk a snapshot.
    SmallVector<Operation *> ops;
    for (Operation &op : block_.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      if (grouped_.contains(op) || (!isElementwise(op) && !isReductionLike(op)))
        continue;
      Group group = grow(op);
      if (group.members.size() + group.duplicates.size() < 2)
        continue; // nothing to fuse with
      grouped_.insert(group.members.begin(), group.members.end());
      materialise(group);
    }
    if (mergeResultGroups_)
      mergeResultGroups();
  }

private:
  /// tf.attention and tf.attention_grad are fused ops already (one kernel
  /// per head that keeps the weights in a tile). An attention whose weights
  /// are read, though, must store them: then its parts (scale, mask,
  /// softmax) fuse better than the whole. Unread weights are dropped.
  void decomposeAttention() {
    for (auto op : llvm::make_early_inc_range(block_.getOps<tf::AttentionOp>())) {
      Value weights = op.getWeights();
      if (!weights)
        continue;
      OpBuilder builder(op);
      if (weights.use_empty()) {
        auto fused = builder.create<tf::AttentionOp>(op.getLoc(), op.getQ(), op.getK(),
                                                     op.getV(), op.getMask(), op.getScaleAttr(),
                                                     UnitAttr());
        op.getValues().replaceAllUsesWith(fused.getValues());
      } else {
        op->replaceAllUsesWith(op.decompose(builder));
      }
      op->erase();
    }
  }

  /// An op whose element i reads element i of each operand of its shape,
  /// whatever the shape is called (the Positionwise trait, TfOps.td).
  static bool isPositionwise(Operation *op) {
    return isElementwise(op) && op->hasTrait<tf::Positionwise>() && op->getNumResults() == 1 &&
           cast<ShapedType>(op->getResult(0).getType()).getRank() > 0;
  }

  /// A lookup: computed element by element, each element read at an index
  /// it reads first (IndexingOpInterface): tf.gather (a one-hot's product
  /// after canonicalization), tf.one_hot.
  static bool isLookup(Operation *op) {
    return op && isElementwise(op) && isa<tf::IndexingOpInterface>(op);
  }

  /// Whether `v` is a product's result, or positionwise ops' on one (its bias
  /// added, an activation): what a GEMM group can end in. A lookup counts
  /// too, products only with `gemm-epilogues`.
  bool reachesProduct(Value v, int depth = 4) {
    Operation *op = v.getDefiningOp();
    if (isLookup(op) || (gemmEpilogues_ && isa_and_present<tf::ProductOpInterface>(op)))
      return true;
    return op && depth > 0 && isPositionwise(op) &&
           llvm::any_of(op->getOperands(),
                        [&](Value operand) { return reachesProduct(operand, depth - 1); });
  }

  /// Positionwise `op` again, before it, on its operands in `shape`.
  Value redo(OpBuilder &builder, Operation *op, ArrayRef<int64_t> shape, int depth) {
    IRMapping operands; // made first: they must come before the new op
    auto type = cast<ShapedType>(op->getResult(0).getType());
    for (Value operand : op->getOperands()) // others (a dropout's seed) are read whole
      if (cast<ShapedType>(operand.getType()).getShape() == type.getShape())
        operands.map(operand, inShape(builder, operand, shape, depth));
    Operation *redone = builder.clone(*op, operands);
    redone->getResult(0).setType(RankedTensorType::get(shape, type.getElementType()));
    return redone->getResult(0);
  }

  /// `v` in `shape` (its element count): the value a reshape of it read, a
  /// splat constant retyped, a positionwise op only the caller reads redone
  /// on its operands in `shape`, or else a reshape (a view).
  Value inShape(OpBuilder &builder, Value v, ArrayRef<int64_t> shape, int depth = 4) {
    auto type = cast<RankedTensorType>(v.getType());
    auto target = RankedTensorType::get(shape, type.getElementType());
    if (type == target)
      return v;
    if (auto reshape = v.getDefiningOp<tf::ReshapeOp>();
        reshape && reshape.getX().getType() == target)
      return reshape.getX();
    if (auto constant = v.getDefiningOp<tf::ConstantOp>())
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()); dense && dense.isSplat())
        return builder.create<tf::ConstantOp>(v.getLoc(), dense.reshape(target));
    // A broadcast into trailing dims both shapes share (a bias along the
    // rows): the same broadcast into `shape`.
    if (auto broadcast = v.getDefiningOp<tf::BroadcastInDimOp>()) {
      ArrayRef<int64_t> dims = broadcast.getDims();
      int64_t kept = int64_t(dims.size()), rank = type.getRank(), to = int64_t(shape.size());
      bool trailing = kept <= to;
      for (int64_t i = 0; trailing && i < kept; ++i)
        trailing =
            dims[i] == rank - kept + i && type.getDimSize(rank - kept + i) == shape[to - kept + i];
      if (trailing) {
        SmallVector<int64_t> newDims = llvm::to_vector(llvm::seq<int64_t>(to - kept, to));
        return builder.create<tf::BroadcastInDimOp>(v.getLoc(), target, broadcast.getX(), newDims);
      }
    }
    Operation *op = v.getDefiningOp();
    if (op && depth > 0 && op->getBlock() == &block_ && isPositionwise(op) && v.hasOneUse())
      return redo(builder, op, shape, depth - 1);
    return builder.create<tf::ReshapeOp>(v.getLoc(), target, v);
  }

  /// Erases `op` and, in turn, the ops only it read, once nothing reads them.
  static void eraseIfDead(Operation *op) {
    if (!op || !isOpTriviallyDead(op))
      return;
    SmallVector<Operation *> producers;
    for (Value operand : op->getOperands())
      producers.push_back(operand.getDefiningOp());
    op->erase();
    for (Operation *producer : producers)
      eraseIfDead(producer);
  }

  /// A positionwise op on a reshaped product, f(x, reshape(p)) (a residual
  /// or a relu after a linear layer over batch x sequence rows, reshaped
  /// back to three dimensions; backward, an input gradient's two terms, a
  /// relu's mask), is redone in the product's shape, reshape(f(x', p)),
  /// where it can join the GEMM's epilogue instead of being a loop of its
  /// own over another shape. x' is x in that shape: what a reshape of it
  /// read, or its positionwise producers redone there too (a relu mask's
  /// compare), or a reshape of it (a view: nothing is copied). The same
  /// operations on the same elements: the same results. In block order, so
  /// a chain of such ops follows its product.
  void sinkReshapesOfProducts() {
    SmallVector<Operation *> ops;
    for (Operation &op : block_.without_terminator())
      ops.push_back(&op);
    SmallVector<Operation *> readBack;
    for (Operation *op : ops) {
      if (!isPositionwise(op))
        continue;
      tf::ReshapeOp reshape;
      for (Value operand : op->getOperands())
        if (auto r = operand.getDefiningOp<tf::ReshapeOp>(); r && reachesProduct(r.getX())) {
          reshape = r;
          break;
        }
      if (!reshape)
        continue;
      auto shape = cast<ShapedType>(reshape.getX().getType()).getShape();
      OpBuilder builder(op);
      Value result = op->getResult(0);
      Value redone = redo(builder, op, shape, 4);
      Value back = builder.create<tf::ReshapeOp>(op->getLoc(), result.getType(), redone);
      result.replaceAllUsesWith(back);
      eraseIfDead(op);
      // A reshape of it back to `shape` (a linear layer's rows back to batch
      // x sequence) reads the redone value itself, so ops after it join too.
      // (Erased after the walk: it may be one of `ops` still to come.)
      for (Operation *user : back.getUsers())
        if (auto again = dyn_cast<tf::ReshapeOp>(user);
            again && again.getType() == redone.getType()) {
          again.replaceAllUsesWith(redone);
          readBack.push_back(again);
        }
    }
    for (Operation *again : readBack)
      eraseIfDead(again);
  }

  /// Loop groups whose results only the function returns (a train step's
  /// optimizer update, one group per parameter) become one tf.fusion
  /// "horizontal", at the last of them: one pass over all their elements
  /// instead of a loop nest each. They are independent (none reads
  /// another's results), so moving the earlier ones down changes nothing.
  void mergeResultGroups() {
    Operation *terminator = block_.getTerminator();
    SmallVector<tf::FusionOp> groups;
    for (auto fusion : block_.getOps<tf::FusionOp>())
      if (fusion.getKind() == "loop" &&
          llvm::all_of(fusion->getUsers(), [&](Operation *u) { return u == terminator; }))
        groups.push_back(fusion);
    if (groups.size() < 2)
      return;
    SmallVector<Type> types;
    for (tf::FusionOp group : groups)
      llvm::append_range(types, group.getResultTypes());
    OpBuilder builder(groups.back());
    auto merged = builder.create<tf::FusionOp>(groups.back().getLoc(), types, "horizontal");
    Block *body = builder.createBlock(&merged.getBody());
    SmallVector<Value> yielded;
    unsigned next = 0;
    for (tf::FusionOp group : groups) {
      Operation *yield = group.getBodyBlock().getTerminator();
      llvm::append_range(yielded, yield->getOperands());
      yield->erase();
      body->getOperations().splice(body->end(), group.getBodyBlock().getOperations());
      group->replaceAllUsesWith(merged->getResults().slice(next, group->getNumResults()));
      next += group->getNumResults();
      group->erase();
    }
    builder.setInsertionPointToEnd(body);
    builder.create<tf::YieldOp>(merged.getLoc(), yielded);
  }

  /// Pulls producers into the group until none more qualifies.
  Group grow(Operation *root) {
    Group g{root, isReductionLike(root), nullptr, 0, {}, {}};
    g.loopElements = numElements(g.reduction ? root->getOperand(0) : root->getResult(0));
    g.members.insert(root);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < g.members.size(); ++i)
        // A GEMM's operands are whole matrices it reads, not loop inputs.
        for (Value operand : g.members[i] == g.gemm ? ValueRange() : g.members[i]->getOperands())
          if (Operation *producer = operand.getDefiningOp())
            changed |= tryAdd(g, producer);
    }
    return g;
  }

  bool tryAdd(Group &g, Operation *producer) {
    if (producer->getBlock() != &block_ || grouped_.contains(producer) ||
        g.members.contains(producer) || g.duplicates.contains(producer) ||
        producer->getNumResults() != 1 || numElements(producer->getResult(0)) != g.loopElements)
      return false;
    if (isFreeToDuplicate(producer)) {
      // Moved in when only the group reads it; read from a clone otherwise.
      // (A broadcast's operand is smaller: it is never pulled in.)
      if (allUsersIn(producer, g))
        return g.members.insert(producer);
      g.duplicates.insert(producer);
      return false;
    }
    if (isa<tf::ProductOpInterface>(producer))
      return tryAddGemm(g, producer);
    if (!isElementwise(producer))
      return false;
    // A producer that other ops read too becomes an extra output of a loop
    // group, if those readers come after the group (it is placed at its
    // root). A reduction group would compute it twice: left out.
    if (!allUsersIn(producer, g) && (g.reduction || !usersOutsideFollow(producer, g)))
      return false;
    return g.members.insert(producer);
  }

  /// A loop group takes one f32 product (tf::ProductOpInterface: a matrix
  /// or a batch of them, row by row) read by nothing else: the group's loop
  /// then runs over the products' rows and columns.
  bool tryAddGemm(Group &g, Operation *matmul) {
    auto type = cast<RankedTensorType>(matmul->getResult(0).getType());
    if (!gemmEpilogues_ || g.reduction || g.gemm ||
        !cast<tf::ProductOpInterface>(matmul).rowsOfProducts() ||
        !type.getElementType().isF32() || !allUsersIn(matmul, g))
      return false;
    g.gemm = matmul;
    return g.members.insert(matmul);
  }

  bool allUsersIn(Operation *op, const Group &g) const {
    return llvm::all_of(op->getUsers(), [&](Operation *u) { return g.members.contains(u); });
  }

  bool usersOutsideFollow(Operation *op, const Group &g) const {
    return llvm::all_of(op->getUsers(), [&](Operation *u) {
      // A reader inside an earlier-made fusion counts as that fusion.
      Operation *top = block_.findAncestorOpInBlock(*u);
      return g.members.contains(top) || g.root->isBeforeInBlock(top);
    });
  }

  /// Moves the members, in block order, into a tf.fusion placed at the root;
  /// every member result read outside becomes a result of the fusion.
  void materialise(Group &g) {
    SmallVector<Operation *> members(g.members.begin(), g.members.end());
    llvm::sort(members, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    SmallVector<Value> outputs;
    for (Operation *member : members)
      for (Value result : member->getResults())
        if (llvm::any_of(result.getUsers(),
                         [&](Operation *u) { return !g.members.contains(u); }))
          outputs.push_back(result);

    OpBuilder builder(g.root);
    auto fusion = builder.create<tf::FusionOp>(g.root->getLoc(), ValueRange(outputs).getTypes(),
                                               g.reduction ? "reduction"
                                               : g.gemm    ? "gemm"
                                                           : "loop");
    Block *body = builder.createBlock(&fusion.getBody());
    builder.setInsertionPointToStart(body);
    IRMapping clones;
    SmallVector<Operation *> duplicates(g.duplicates.begin(), g.duplicates.end());
    llvm::sort(duplicates, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    for (Operation *dup : duplicates)
      clones.map(dup->getResults(), builder.clone(*dup)->getResults());
    for (Operation *member : members) {
      member->moveBefore(body, body->end());
      for (OpOperand &operand : member->getOpOperands())
        if (Value clone = clones.lookupOrNull(operand.get()))
          operand.set(clone);
    }
    builder.setInsertionPointToEnd(body);
    builder.create<tf::YieldOp>(g.root->getLoc(), outputs);
    for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
      output.replaceUsesWithIf(result, [&](OpOperand &use) {
        return !fusion->isAncestor(use.getOwner());
      });
  }

  Block &block_;
  bool gemmEpilogues_;
  bool mergeResultGroups_;
  llvm::DenseSet<Operation *> grouped_;
};

struct TfFusePass : tfc::impl::TfFuseBase<TfFusePass> {
  using TfFuseBase::TfFuseBase;
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (!func.getBody().empty())
        Fuser(func.getBody().front(), gemmEpilogues, horizontal).run();
    });
  }
};

} // namespace
