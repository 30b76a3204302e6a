//===- GemmToRuntime.cpp - matmuls on buffers call the runtime's GEMM -----===//
//
// The GEMM is the one kernel worth hand-tuning; keeping it behind a single
// runtime symbol (runtime/cpu/Gemm.h) lets the performance work replace it
// without touching code generation:
//
//   tfc_sgemm(batch, M, N, K, A, lda, strideA, transA,
//             B, ldb, strideB, transB, C, ldc, strideC, accumulate)
//
// computes C[b] (+)= op(A[b]) op(B[b]) for b < batch, row-major, with every
// size, stride and pointer an index (an i64 on the host). A marked generic
// has its batch loops first, then m, n and the reduction k; an operand that
// indexes no batch loop is shared by the batch (stride 0), and a C that
// indexes none sums the batch's products (its batch loops are reductions):
// convolutions use both (see Conv1dLowering).
//
// The elementwise rest of a tf.fusion "gemm" (its epilogue) goes with the
// call into an scf.execute_region, for tf-parallel-loops-to-runtime to hand
// to tfc_sgemm_epilogue (see pairEpilogue).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "runtime/Abi.h"
#include "compiler/lowering/BufferEffects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"

namespace tfc {
#define GEN_PASS_DEF_TFGEMMTORUNTIME
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

using abi::RuntimeFunction;
/// The least channels in and out, and outputs a row, for which F(4, 5)'s
/// transforms pay (runtime/cpu/Winograd.cpp): fewer channels make eight thin
/// GEMMs of transforms.
constexpr int64_t kWinogradMinExtent = 16;
/// Where CallArgs puts the pointers of A, B and C among a GEMM call's
/// arguments (runtime/Abi.h).
constexpr unsigned kPointerArgs[] = {abi::gemm::A, abi::gemm::B, abi::gemm::C};

/// How one operand of a batched matmul sits in memory, as BLAS sees it.
struct MatrixLayout {
  int64_t offset = 0;      // elements from the aligned pointer
  int64_t ld = 0;          // leading dimension
  int64_t batchStride = 0; // elements between consecutive batch matrices (0: shared)
  bool transposed = false; // stored (col, row) relative to the (row, col) loops
};

/// The loops of a marked matmul generic: batch loops first, then m, n and
/// the reduction k last.
struct MatmulLoops {
  SmallVector<int64_t> sizes;
  unsigned m, n, k;
  unsigned numBatch() const { return m; }
};

/// The layout of an operand read through `map` as the matrix over loops
/// (row, col), its batch the batch loops it indexes, or nullopt when the
/// strides do not allow it. An operand indexes every batch loop of more than
/// one iteration or none (then it is shared by the whole batch); strides
/// come from the buffer through the map, so any order of its dims works.
std::optional<MatrixLayout> matrixLayout(MemRefType type, AffineMap map, const MatmulLoops &loops,
                                         unsigned row, unsigned col) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(offset) || llvm::any_of(strides, ShapedType::isDynamic) ||
      !map.isProjectedPermutation(/*allowZeroInResults=*/false))
    return std::nullopt;
  // strideOf[loop]: the buffer stride of the dim the loop indexes, if any.
  SmallVector<std::optional<int64_t>> strideOf(loops.sizes.size());
  for (auto [pos, result] : llvm::enumerate(map.getResults()))
    strideOf[cast<AffineDimExpr>(result).getPosition()] = strides[pos];
  if (!strideOf[row] || !strideOf[col])
    return std::nullopt;
  MatrixLayout layout;
  layout.offset = offset;
  int64_t rows = loops.sizes[row], cols = loops.sizes[col];
  if (*strideOf[col] == 1 || cols == 1) {
    layout.ld = std::max<int64_t>(*strideOf[row], cols);
  } else if (*strideOf[row] == 1 || rows == 1) {
    layout.ld = std::max<int64_t>(*strideOf[col], rows);
    layout.transposed = true;
  } else {
    return std::nullopt;
  }
  // The batch loops collapse into one stride, innermost first (size-1 loops
  // are free).
  std::optional<int64_t> inner;
  bool indexed = false, shared = false;
  for (int64_t i = int64_t(loops.numBatch()) - 1; i >= 0; --i) {
    int64_t size = loops.sizes[i];
    if (size == 1)
      continue;
    (strideOf[i] ? indexed : shared) = true;
    if (!strideOf[i])
      continue;
    if (!inner)
      layout.batchStride = *strideOf[i];
    else if (*strideOf[i] != *inner)
      return std::nullopt;
    inner = *strideOf[i] * size;
  }
  if (indexed && shared)
    return std::nullopt;
  return layout;
}

/// The runtime function `f`, its arguments all indices, declared once.
func::FuncOp declareRuntime(ModuleOp module, RuntimeFunction f) {
  StringRef name = abi::symbol(f);
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b(module.getBodyRegion());
  SmallVector<Type> args(abi::arity(f), b.getIndexType());
  auto decl = b.create<func::FuncOp>(module.getLoc(), name, b.getFunctionType(args, {}));
  decl.setPrivate();
  return decl;
}

/// True for a zero fill of `buffer`: linalg.fill, or the linalg.map
/// bufferization makes of tensor.pad's padding.
/// True for a float constant 0.
bool isZero(Value v) {
  auto constant = v.getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
  return value && value.getValue().isZero();
}

bool isZeroFill(Operation *op, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getOutputs()[0] == buffer && isZero(fill.getInputs()[0]);
  auto map = dyn_cast<linalg::MapOp>(op);
  if (!map || map.getInit() != buffer || !map.getInputs().empty())
    return false;
  auto yield = cast<linalg::YieldOp>(map.getMapper().front().getTerminator());
  return yield.getNumOperands() == 1 && isZero(yield.getOperand(0));
}

/// Whether a GEMM writing `c` accumulates into it: not when a zero fill of
/// `c` comes right before `op`, which the overwriting GEMM subsumes (the
/// fill is erased).
bool accumulatesInto(Operation *op, Value c) {
  Operation *fill = op->getPrevNode();
  if (!fill || !isa<linalg::FillOp>(fill) || !isZeroFill(fill, c))
    return true;
  fill->erase();
  return false;
}

/// The arguments of a runtime GEMM call: constants and pointers.
struct CallArgs {
  OpBuilder &b;
  Location loc;
  SmallVector<Value> values = {};

  CallArgs &index(int64_t v) {
    values.push_back(b.create<arith::ConstantIndexOp>(loc, v));
    return *this;
  }
  /// The aligned pointer of `buffer` plus `offset` floats.
  CallArgs &pointer(Value buffer, int64_t offset) {
    Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
    values.push_back(b.create<arith::AddIOp>(
        loc, base, b.create<arith::ConstantIndexOp>(loc, offset * 4)));
    return *this;
  }
};

/// The first op after `op` that touches memory (its epilogue, if any).
Operation *nextTouchingMemory(Operation *op) {
  Operation *next = op->getNextNode();
  while (next && touchesNoMemory(next))
    next = next->getNextNode();
  return next;
}

/// Pairs `call`, the GEMM computing the M x N product `c` (a batch of
/// `batch` of them, c's first dim) from `a` and `b`, with the epilogue
/// generic marked after it when the runtime may run that epilogue on blocks
/// of finished rows while the GEMM goes on (see the pass's description):
/// call and epilogue move into one marked scf.execute_region. A batch's
/// epilogue loops are (item, row, column); the runtime counts the rows of
/// all items in turn, as tf-parallel-loops-to-runtime flattens them.
void pairEpilogue(func::CallOp call, Value a, Value b, Value c, int64_t batch, int64_t M,
                  int64_t N) {
  // The first op after the call that touches memory, if it is a marked
  // generic reading C. (Not any marked reader of C: one written over by its
  // epilogue is read by later epilogues too, a backward pass's masks.)
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(nextTouchingMemory(call));
  if (!epilogue || !epilogue->hasAttr(kGemmEpilogueAttr) ||
      !epilogue.hasPureBufferSemantics() ||
      llvm::none_of(epilogue->getOperands(), [&](Value v) { return v == c; }))
    return;
  SmallVector<int64_t> ranges{M, N};
  if (batch > 1)
    ranges.insert(ranges.begin(), batch);
  if (epilogue.getNumLoops() != ranges.size() ||
      epilogue.getNumParallelLoops() != ranges.size() ||
      epilogue.getStaticLoopRanges() != ranges)
    return;
  Value rootA = rootBuffer(a), rootB = rootBuffer(b), rootC = rootBuffer(c);
  for (OpOperand &operand : epilogue->getOpOperands()) {
    Value root = rootBuffer(operand.get());
    // C only as itself, element (i, j) at iteration (i, j): other rows may
    // not be final yet.
    if (root == rootC && (operand.get() != c || !epilogue.getMatchingIndexingMap(&operand)
                                                        .isIdentity()))
      return;
    // Nothing the GEMM still reads is overwritten.
    if (epilogue.isDpsInit(&operand) && (root == rootA || root == rootB))
      return;
  }
  OpBuilder builder(epilogue);
  auto region = builder.create<scf::ExecuteRegionOp>(epilogue.getLoc(), TypeRange{});
  region->setAttr(kGemmEpilogueAttr, builder.getUnitAttr());
  Block *body = builder.createBlock(&region.getRegion());
  call->moveBefore(body, body->end());
  epilogue->moveBefore(body, body->end());
  builder.setInsertionPointToEnd(body);
  builder.create<scf::YieldOp>(epilogue.getLoc());
}

/// A BLAS library's epilogue: C = relu?(op(A) op(B) + bias[n] + R), found in
/// the marked generic right after a GEMM (cuBLASLt's BIAS, RELU, RELU_BIAS,
/// with R as its C and beta = 1).
struct BlasEpilogue {
  linalg::GenericOp generic;
  Value out;              // where the result goes: the product's buffer or another
  Value bias, residual;   // null when absent
  bool relu = false;
};

/// The 2-D row-major layout (offset, row pitch) of `buffer` if its rows are
/// contiguous.
std::optional<std::pair<int64_t, int64_t>> rowsLayout(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || type.getRank() != 2 || failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(offset) || ShapedType::isDynamic(strides[0]) || strides[1] != 1)
    return std::nullopt;
  return std::make_pair(offset, strides[0]);
}

/// Whether every use of `root` and its views is `except` or a view: nothing
/// else reads the buffer.
bool onlyUsedBy(Value root, ArrayRef<Operation *> except) {
  for (Operation *user : root.getUsers()) {
    if (llvm::is_contained(except, user) || isa<memref::DeallocOp>(user))
      continue;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (!view || view.getViewSource() != root)
      return false;
    for (Value result : user->getResults())
      if (!onlyUsedBy(result, except))
        return false;
  }
  return true;
}

/// The epilogue after `call` (the M x N product `c` of `a` and `b`) when a
/// BLAS epilogue computes it: an elementwise generic over (m, n) whose body
/// is relu?(sum of the product, at most one bias over n and at most one
/// other matrix), each once.
std::optional<BlasEpilogue> blasEpilogueOf(func::CallOp call, Value a, Value b, Value c,
                                           int64_t M, int64_t N) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(nextTouchingMemory(call));
  if (!generic || !generic->hasAttr(kGemmEpilogueAttr) || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInits() != 1 || generic.getNumParallelLoops() != 2 ||
      generic.getNumLoops() != 2 || generic.getStaticLoopRanges() != SmallVector<int64_t>{M, N})
    return std::nullopt;
  Block &body = generic.getRegion().front();
  BlasEpilogue epilogue{generic, generic.getDpsInits()[0]};
  OpOperand *outOperand = generic.getDpsInitOperand(0);
  if (!generic.getMatchingIndexingMap(outOperand).isIdentity() || !rowsLayout(epilogue.out))
    return std::nullopt;
  Value product; // the block argument reading the product
  if (epilogue.out == c)
    product = generic.getMatchingBlockArgument(outOperand);
  else if (!generic.getMatchingBlockArgument(outOperand).use_empty())
    return std::nullopt;
  // The sum's leaves, each a block argument used once.
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value root = yield.getOperand(0);
  if (auto max = root.getDefiningOp<arith::MaximumFOp>()) {
    if (!isZero(max.getRhs()) && !isZero(max.getLhs()))
      return std::nullopt;
    epilogue.relu = true;
    root = isZero(max.getRhs()) ? max.getLhs() : max.getRhs();
  }
  SmallVector<Value> leaves, pending = {root};
  unsigned adds = 0;
  while (!pending.empty()) {
    Value v = pending.pop_back_val();
    if (auto add = v.getDefiningOp<arith::AddFOp>(); add && add->getBlock() == &body) {
      if (!add->hasOneUse())
        return std::nullopt;
      ++adds;
      pending.push_back(add.getLhs());
      pending.push_back(add.getRhs());
    } else if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == &body &&
                                                        arg.hasOneUse()) {
      leaves.push_back(v);
    } else {
      return std::nullopt;
    }
  }
  // Nothing else computed in the body (constants aside).
  unsigned ops = 0;
  for (Operation &op : body.without_terminator())
    if (!isa<arith::ConstantOp>(op))
      ++ops;
  if (ops != adds + (epilogue.relu ? 1 : 0))
    return std::nullopt;
  bool sawProduct = false;
  for (Value leaf : leaves) {
    auto arg = cast<BlockArgument>(leaf);
    if (leaf == product) {
      sawProduct = true;
      continue;
    }
    OpOperand *operand = generic.getMatchingOpOperand(arg);
    if (generic.isDpsInit(operand))
      return std::nullopt;
    Value buffer = operand->get();
    AffineMap map = generic.getMatchingIndexingMap(operand);
    if (buffer == c && !product && map.isIdentity()) {
      product = leaf, sawProduct = true;
    } else if (map.isIdentity() && !epilogue.residual && rowsLayout(buffer) &&
               (buffer == epilogue.out || rootBuffer(buffer) != rootBuffer(epilogue.out))) {
      epilogue.residual = buffer;
    } else if (map == AffineMap::get(2, 0, getAffineDimExpr(1, map.getContext())) &&
               !epilogue.bias && cast<MemRefType>(buffer.getType()).getRank() == 1 &&
               cast<MemRefType>(buffer.getType()).getLayout().isIdentity()) {
      epilogue.bias = buffer;
    } else {
      return std::nullopt;
    }
  }
  if (!sawProduct || (!epilogue.bias && !epilogue.residual && !epilogue.relu))
    return std::nullopt;
  if (epilogue.out != c) {
    // The GEMM writes the result in place of the product, which nothing
    // else may read then, and never over what it reads.
    Value out = rootBuffer(epilogue.out);
    if (out == rootBuffer(a) || out == rootBuffer(b) || out == rootBuffer(c))
      return std::nullopt;
    Value product = rootBuffer(c);
    // The call's own pointer to C: (extract_aligned_pointer C) + offset.
    SmallVector<Operation *> readers = {generic};
    if (auto addi = call.getOperand(abi::gemm::C).getDefiningOp<arith::AddIOp>())
      if (Operation *extract = addi.getLhs().getDefiningOp())
        readers.push_back(extract);
    if (!product.getDefiningOp<memref::AllocOp>() || !onlyUsedBy(product, readers))
      return std::nullopt;
  }
  return epilogue;
}

/// `call` (tfc_cuda_sgemm, not accumulating) and the epilogue after it as
/// one tfc_cuda_sgemm_fused call writing the epilogue's result.
void fuseBlasEpilogue(func::CallOp call, const BlasEpilogue &epilogue) {
  ModuleOp module = call->getParentOfType<ModuleOp>();
  func::FuncOp fused = declareRuntime(module, RuntimeFunction::CudaSgemmFused);
  // At the epilogue: its buffers may be made between it and the call (which
  // touches no memory in between).
  OpBuilder b(epilogue.generic);
  Location loc = call.getLoc();
  CallArgs args{b, loc};
  args.values = llvm::to_vector(call.getOperands());
  auto [outOffset, outPitch] = *rowsLayout(epilogue.out);
  {
    CallArgs out{b, loc};
    out.pointer(epilogue.out, outOffset).index(outPitch);
    args.values[abi::gemm::C] = out.values[0];
    args.values[abi::gemm::Ldc] = out.values[1];
  }
  args.index(epilogue.relu ? abi::gemm::kRelu : abi::gemm::kNoActivation);
  if (epilogue.bias) {
    auto type = cast<MemRefType>(epilogue.bias.getType());
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    (void)getStridesAndOffset(type, strides, offset);
    args.pointer(epilogue.bias, offset);
  } else {
    args.index(0);
  }
  if (epilogue.residual) {
    auto [offset, pitch] = *rowsLayout(epilogue.residual);
    args.pointer(epilogue.residual, offset).index(pitch);
  } else {
    args.index(0).index(0);
  }
  args.index(0).index(0); // no ReLU mask (reluGradientOf adds one)
  b.create<func::CallOp>(loc, fused, args.values);
  // The old call's pointer to the product, and the product if now unused.
  Operation *cPointer = call.getOperand(abi::gemm::C).getDefiningOp();
  call.erase();
  epilogue.generic->erase();
  llvm::SetVector<Operation *> dead;
  dead.insert(cPointer);
  while (!dead.empty()) {
    Operation *op = dead.pop_back_val();
    if (!op || !op->use_empty() || !touchesNoMemory(op))
      continue;
    for (Value operand : op->getOperands())
      dead.insert(operand.getDefiningOp());
    op->erase();
  }
}

/// The buffer a runtime call's pointer argument points into, if it is one
/// made by CallArgs::pointer.
Value pointeeOf(Value pointer) {
  std::optional<RuntimePointer> p = runtimePointer(pointer);
  return p ? rootBuffer(p->buffer) : Value();
}

/// ReLU's gradient after a product, select(y > 0, product, 0) with y a
/// ReLU's output that cuBLASLt computed (tfc_cuda_sgemm_fused with kRelu):
/// the forward call writes ReLU's bit-mask and the backward's GEMM applies
/// it (RELU_AUX, DRELU), so that y is not read again.
struct ReluGradient {
  linalg::GenericOp select;
  func::CallOp forward;
};

/// The kRelu tfc_cuda_sgemm_fused call before `call` that wrote `y` (the
/// same M x N rows, no residual), if nothing in between may write y again.
func::CallOp reluForwardOf(func::CallOp call, Value y, int64_t M, int64_t N) {
  auto layout = rowsLayout(y);
  Value root = rootBuffer(y);
  if (!layout || cast<MemRefType>(y.getType()).getShape() != ArrayRef<int64_t>{M, N})
    return nullptr;
  StringRef fusedName = abi::symbol(RuntimeFunction::CudaSgemmFused);
  for (Operation *op = call->getPrevNode(); op; op = op->getPrevNode()) {
    auto forward = dyn_cast<func::CallOp>(op);
    if (forward && forward.getCallee() == fusedName &&
        getConstantIntValue(forward.getOperand(abi::gemm::Activation)) == abi::gemm::kRelu &&
        getConstantIntValue(forward.getOperand(abi::gemm::Residual)) == 0 &&
        getConstantIntValue(forward.getOperand(abi::gemm::M)) == M &&
        getConstantIntValue(forward.getOperand(abi::gemm::N)) == N) {
      // C's pointer as CallArgs::pointer made it: extract(out) + offset.
      auto add = forward.getOperand(abi::gemm::C).getDefiningOp<arith::AddIOp>();
      auto extract =
          add ? add.getLhs().getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>() : nullptr;
      if (extract && rootBuffer(extract.getSource()) == root &&
          rowsLayout(extract.getSource()) == layout &&
          getConstantIntValue(add.getRhs()) == layout->first * 4 &&
          getConstantIntValue(forward.getOperand(abi::gemm::Ldc)) == layout->second)
        return forward;
    }
    // What may write y in between: a linalg op with it as an output, or a
    // runtime call with a pointer into it (other than a GEMM's A or B).
    bool written = false;
    op->walk([&](Operation *nested) {
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(nested)) {
        for (Value init : linalgOp.getDpsInits())
          written |= rootBuffer(init) == root;
      } else if (auto other = dyn_cast<func::CallOp>(nested)) {
        // The CUDA GEMM calls (their A and B are read, nothing else written).
        StringRef callee = other.getCallee();
        const RuntimeFunction gemms[] = {RuntimeFunction::CudaSgemm,
                                         RuntimeFunction::CudaSgemmFused,
                                         RuntimeFunction::CudaSgemmBiasGrad};
        bool gemm = llvm::any_of(
            gemms, [&](RuntimeFunction f) { return callee == StringRef(abi::symbol(f)); });
        for (auto [i, operand] : llvm::enumerate(other.getOperands()))
          if (pointeeOf(operand) == root && (!gemm || (i != abi::gemm::A && i != abi::gemm::B)))
            written = true;
      }
    });
    if (written)
      return nullptr;
  }
  return nullptr;
}

/// The ReLU gradient right after `call` (C = the M x N product `c`, batch
/// 1, not accumulating) that cuBLASLt can apply: the marked epilogue
/// select(y > 0, c, 0) over (m, n) writing c, y from reluForwardOf.
std::optional<ReluGradient> reluGradientOf(func::CallOp call, Value c, int64_t M, int64_t N) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(nextTouchingMemory(call));
  if (!generic || !generic->hasAttr(kGemmEpilogueAttr) || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getDpsInits()[0] != c || generic.getNumParallelLoops() != 2 ||
      generic.getNumLoops() != 2 || generic.getStaticLoopRanges() != SmallVector<int64_t>{M, N} ||
      !llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return std::nullopt;
  Block &body = generic.getRegion().front();
  Value y = body.getArgument(0), product = body.getArgument(1);
  auto select = cast<linalg::YieldOp>(body.getTerminator())
                    .getOperand(0)
                    .getDefiningOp<arith::SelectOp>();
  auto compare = select ? select.getCondition().getDefiningOp<arith::CmpFOp>() : nullptr;
  if (!select || !compare || select.getTrueValue() != product ||
      !isZero(select.getFalseValue()) || body.getOperations().size() > 4)
    return std::nullopt;
  bool positive =
      (compare.getPredicate() == arith::CmpFPredicate::OGT && compare.getLhs() == y &&
       isZero(compare.getRhs())) ||
      (compare.getPredicate() == arith::CmpFPredicate::OLT && compare.getRhs() == y &&
       isZero(compare.getLhs()));
  if (!positive)
    return std::nullopt;
  func::CallOp forward = reluForwardOf(call, generic.getDpsInputs()[0], M, N);
  if (!forward)
    return std::nullopt;
  return ReluGradient{generic, forward};
}

/// The forward call writes ReLU's mask (a buffer of its own, made here, or
/// the one an earlier gradient made) and `call` with the epilogue after it
/// becomes one tfc_cuda_sgemm_fused call applying it (kReluGrad).
void fuseReluGradient(func::CallOp call, const ReluGradient &gradient, int64_t M, int64_t N) {
  namespace gemm = abi::gemm;
  func::CallOp forward = gradient.forward;
  Value mask = forward.getOperand(gemm::Aux), ldMask = forward.getOperand(gemm::LdAux);
  if (getConstantIntValue(mask) == 0) {
    OpBuilder b(forward);
    Location loc = forward.getLoc();
    auto type = MemRefType::get({gemm::reluMaskBytes(M, N)}, b.getI8Type());
    Value buffer = b.create<memref::AllocOp>(loc, type, b.getI64IntegerAttr(64));
    CallArgs args{b, loc};
    args.values = llvm::to_vector(forward.getOperands());
    CallArgs maskArgs{b, loc};
    maskArgs.pointer(buffer, 0).index(gemm::reluMaskLd(N));
    mask = args.values[gemm::Aux] = maskArgs.values[0];
    ldMask = args.values[gemm::LdAux] = maskArgs.values[1];
    auto replaced = b.create<func::CallOp>(loc, forward.getCallee(), TypeRange{}, args.values);
    forward.erase();
    forward = replaced;
  }
  ModuleOp module = call->getParentOfType<ModuleOp>();
  func::FuncOp fused = declareRuntime(module, RuntimeFunction::CudaSgemmFused);
  OpBuilder b(call);
  CallArgs args{b, call.getLoc()};
  args.values = llvm::to_vector(call.getOperands());
  args.index(gemm::kReluGrad).index(0).index(0).index(0);
  args.values.push_back(mask);
  args.values.push_back(ldMask);
  b.create<func::CallOp>(call.getLoc(), fused, args.values);
  call.erase();
  gradient.select->erase();
}

/// A weight gradient's bias gradient that cuBLASLt computes with the GEMM
/// (BGRADB, BGRADA; runtime/cuda/CublasLt.h): a zero fill of a vector, then
/// the column sums of one operand as stored into it, before the GEMM.
struct BiasGradient {
  Operation *fill;
  linalg::GenericOp sum;
  Value out;
  int64_t operand; // abi::gemm::kBiasGradOfA or kBiasGradOfB
};

/// Whether `generic` sums the rows of its K x width input into its output:
/// out[x] += in[p][x] over loops (p, x).
bool isColumnSum(linalg::GenericOp generic, int64_t K, int64_t width) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 ||
      generic.getStaticLoopRanges() != SmallVector<int64_t>{K, width} ||
      generic.getIteratorTypesArray() !=
          SmallVector<utils::IteratorType>{utils::IteratorType::reduction,
                                           utils::IteratorType::parallel})
    return false;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!maps[0].isIdentity() ||
      maps[1] != AffineMap::get(2, 0, getAffineDimExpr(1, generic.getContext())))
    return false;
  Block &body = generic.getRegion().front();
  auto add = dyn_cast<arith::AddFOp>(body.front());
  if (!add || body.getOperations().size() != 2 ||
      cast<linalg::YieldOp>(body.getTerminator()).getOperand(0) != add.getResult())
    return false;
  Value in = body.getArgument(0), out = body.getArgument(1);
  return (add.getLhs() == in && add.getRhs() == out) ||
         (add.getLhs() == out && add.getRhs() == in);
}

/// The bias gradient cuBLASLt may compute with `call` (C = op(A) op(B),
/// batch 1, not accumulating): the column sums of A as stored (K x M: op(A)
/// = A^T, cuBLASLt's B transposed) or of B (K x N, not transposed, its A),
/// into a zero-filled vector, before the call, with nothing in between that
/// touches the operand or the vector. That is a linear layer's backward:
/// dW = dY^T X with db = the sum of dY's rows.
std::optional<BiasGradient> biasGradientOf(func::CallOp call, Value a, const MatrixLayout &aLayout,
                                           Value b, const MatrixLayout &bLayout, Value c,
                                           int64_t M, int64_t N, int64_t K) {
  auto stored = [&](Value v, int64_t width, const MatrixLayout &layout) {
    auto layoutOf = rowsLayout(v);
    auto type = cast<MemRefType>(v.getType());
    return layoutOf && type.getShape() == ArrayRef<int64_t>{K, width} &&
           layoutOf->first == layout.offset && layoutOf->second == layout.ld;
  };
  struct Candidate {
    Value operand;
    int64_t width, which;
  };
  SmallVector<Candidate, 2> candidates;
  if (aLayout.transposed && stored(a, M, aLayout))
    candidates.push_back({a, M, abi::gemm::kBiasGradOfA});
  if (!bLayout.transposed && stored(b, N, bLayout))
    candidates.push_back({b, N, abi::gemm::kBiasGradOfB});
  Value roots[3] = {rootBuffer(a), rootBuffer(b), rootBuffer(c)};
  for (const Candidate &candidate : candidates) {
    for (Operation *user : candidate.operand.getUsers()) {
      auto sum = dyn_cast<linalg::GenericOp>(user);
      if (!sum || sum->getBlock() != call->getBlock() || !sum->isBeforeInBlock(call) ||
          sum.getDpsInputs()[0] != candidate.operand ||
          !isColumnSum(sum, K, candidate.width))
        continue;
      Value out = sum.getDpsInits()[0];
      SmallVector<int64_t> strides;
      int64_t offset;
      auto outType = cast<MemRefType>(out.getType());
      if (failed(getStridesAndOffset(outType, strides, offset)) || strides[0] != 1 ||
          ShapedType::isDynamic(offset) || llvm::is_contained(roots, rootBuffer(out)))
        continue;
      Operation *fill = sum->getPrevNode();
      while (fill && touchesNoMemory(fill))
        fill = fill->getPrevNode();
      if (!fill || !isZeroFill(fill, out))
        continue;
      // The call moves the sum down to itself: nothing in between may touch
      // the vector or the operand.
      Value touched[2] = {rootBuffer(out), rootBuffer(candidate.operand)};
      bool clear = true;
      for (Operation *op = sum->getNextNode(); clear && op != call.getOperation();
           op = op->getNextNode())
        if (!touchesNoMemory(op))
          op->walk([&](Operation *nested) {
            for (Value operand : nested->getOperands())
              if (llvm::is_contained(touched, rootBuffer(operand)))
                clear = false;
          });
      if (clear)
        return BiasGradient{fill, sum, out, candidate.which};
    }
  }
  return std::nullopt;
}

/// `call` (tfc_cuda_sgemm) and the bias gradient before it as one
/// tfc_cuda_sgemm_bias_grad call.
void fuseBiasGradient(func::CallOp call, const BiasGradient &gradient) {
  ModuleOp module = call->getParentOfType<ModuleOp>();
  func::FuncOp fused = declareRuntime(module, RuntimeFunction::CudaSgemmBiasGrad);
  OpBuilder b(call);
  CallArgs args{b, call.getLoc()};
  args.values = llvm::to_vector(call.getOperands());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  (void)getStridesAndOffset(cast<MemRefType>(gradient.out.getType()), strides, offset);
  args.index(gradient.operand).pointer(gradient.out, offset);
  b.create<func::CallOp>(call.getLoc(), fused, args.values);
  call.erase();
  gradient.sum->erase();
  gradient.fill->erase();
}

enum class EpilogueMode {
  None,   // the epilogue stays a loop nest of its own
  Paired, // CPU: run by tfc_sgemm_epilogue on finished blocks of rows
  Blas,   // CUDA: cuBLASLt's epilogue where it computes it (blasEpilogueOf)
};

LogicalResult rewriteMatmul(linalg::GenericOp op, func::FuncOp gemm, EpilogueMode epilogues,
                            bool gradientEpilogues = false) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return failure();
  auto aType = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto bType = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
  auto cType = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!aType || !bType || !cType || !aType.getElementType().isF32())
    return failure();
  MatmulLoops loops;
  loops.sizes = op.getStaticLoopRanges();
  unsigned numLoops = loops.sizes.size();
  if (numLoops < 3 || llvm::any_of(loops.sizes, ShapedType::isDynamic))
    return failure();
  loops.m = numLoops - 3;
  loops.n = numLoops - 2;
  loops.k = numLoops - 1;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto a = matrixLayout(aType, maps[0], loops, loops.m, loops.k);
  auto bl = matrixLayout(bType, maps[1], loops, loops.k, loops.n);
  auto c = matrixLayout(cType, maps[2], loops, loops.m, loops.n);
  if (!a || !bl || !c || c->transposed)
    return failure();
  // A C without the batch loops sums over them: they must be reductions.
  int64_t batch = 1;
  for (unsigned i = 0; i < loops.numBatch(); ++i)
    batch *= loops.sizes[i];
  if (batch > 1 && c->batchStride == 0 &&
      llvm::any_of(ArrayRef(op.getIteratorTypesArray()).take_front(loops.numBatch()),
                   [](utils::IteratorType t) { return t != utils::IteratorType::reduction; }))
    return failure();
  int64_t M = loops.sizes[loops.m], N = loops.sizes[loops.n], K = loops.sizes[loops.k];
  bool transA = a->transposed, transB = bl->transposed;

  Value cBuffer = op.getDpsInits()[0];
  bool accumulate = accumulatesInto(op, cBuffer);
  OpBuilder b(op);
  Location loc = op.getLoc();
  CallArgs args{b, loc};
  args.index(batch).index(M).index(N).index(K);
  args.pointer(op.getDpsInputs()[0], a->offset).index(a->ld).index(a->batchStride).index(transA);
  args.pointer(op.getDpsInputs()[1], bl->offset).index(bl->ld).index(bl->batchStride).index(transB);
  args.pointer(cBuffer, c->offset).index(c->ld).index(c->batchStride).index(accumulate);
  auto call = b.create<func::CallOp>(loc, gemm, args.values);
  Value aBuffer = op.getDpsInputs()[0], bBuffer = op.getDpsInputs()[1];
  op.erase();
  // One batch loop at most: the epilogue's rows are then C's, item by item.
  if (epilogues == EpilogueMode::Paired &&
      (batch == 1 || (loops.numBatch() == 1 && c->batchStride != 0)))
    pairEpilogue(call, aBuffer, bBuffer, cBuffer, batch, M, N);
  if (epilogues == EpilogueMode::Blas && batch == 1 && !accumulate) {
    if (auto epilogue = blasEpilogueOf(call, aBuffer, bBuffer, cBuffer, M, N))
      fuseBlasEpilogue(call, *epilogue);
    else if (auto gradient = gradientEpilogues ? reluGradientOf(call, cBuffer, M, N) : std::nullopt)
      fuseReluGradient(call, *gradient, M, N);
    else if (gradientEpilogues)
      if (auto gradient = biasGradientOf(call, aBuffer, *a, bBuffer, *bl, cBuffer, M, N, K))
        fuseBiasGradient(call, *gradient);
  }
  return success();
}

/// The layout of a static memref: its strides and offset, if static.
std::optional<std::pair<SmallVector<int64_t>, int64_t>> staticLayout(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
      failed(getStridesAndOffset(type, strides, offset)) || ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  return std::make_pair(strides, offset);
}

/// The zero padding of a convolution's input, as bufferization leaves it: a
/// fresh buffer, zero-filled whole, with the input copied into the middle
/// of its last dim. The GEMM can read the input itself and make the zeros
/// up as it packs (tfc_sgemm_windows's pad and width), so none of it need
/// run.
struct PaddedCopy {
  Operation *fill, *subview, *copy;
  Value input;  // the unpadded buffer
  int64_t pad;  // zeros before it along the last dim
};

/// `padded`, read by `reader`, if it is such a padded copy that nothing
/// overwrites before `reader`.
std::optional<PaddedCopy> paddedCopyOf(Value padded, Operation *reader) {
  auto alloc = padded.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != reader->getBlock())
    return std::nullopt;
  PaddedCopy found{};
  for (Operation *user : alloc->getUsers()) {
    if (user == reader)
      continue;
    if (!found.fill && isZeroFill(user, padded)) {
      found.fill = user;
      continue;
    }
    auto subview = dyn_cast<memref::SubViewOp>(user);
    if (found.subview || !subview || !subview->hasOneUse())
      return std::nullopt;
    found.subview = subview;
  }
  if (!found.fill || !found.subview)
    return std::nullopt;
  auto subview = cast<memref::SubViewOp>(found.subview);
  auto copy = dyn_cast<memref::CopyOp>(*subview->getUsers().begin());
  MemRefType whole = alloc.getType();
  int64_t rank = whole.getRank();
  ArrayRef<int64_t> offsets = subview.getStaticOffsets(), sizes = subview.getStaticSizes();
  if (!copy || copy.getTarget() != subview.getResult() ||
      llvm::any_of(subview.getStaticStrides(), [](int64_t s) { return s != 1; }) ||
      llvm::any_of(offsets.drop_back(), [](int64_t o) { return o != 0; }) ||
      ArrayRef(sizes).drop_back() != whole.getShape().drop_back() ||
      ShapedType::isDynamic(offsets.back()) || ShapedType::isDynamic(sizes.back()) ||
      !found.fill->isBeforeInBlock(copy) || !copy->isBeforeInBlock(reader) || rank < 1)
    return std::nullopt;
  found.copy = copy;
  found.input = copy.getSource();
  found.pad = offsets.back();
  // Nothing between the copy and the reader writes the input.
  Value inputRoot = rootBuffer(found.input);
  for (Operation *op = copy->getNextNode(); op != reader; op = op->getNextNode()) {
    if (isMemoryEffectFree(op))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || (op->getNumRegions() != 0 && !isa<linalg::LinalgOp>(op)))
      return std::nullopt;
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list)
      if (isa<MemoryEffects::Write>(e.getEffect()) &&
          (!e.getValue() || rootBuffer(e.getValue()) == inputRoot))
        return std::nullopt;
  }
  return found;
}

/// The padded copy, once the GEMM that read it reads the input instead, is
/// never made if nothing else reads it.
void erasePaddedCopyIfUnread(const std::optional<PaddedCopy> &padding, Value padded) {
  if (padding && llvm::all_of(padded.getUsers(), [&](Operation *u) {
        return u == padding->fill || u == padding->subview;
      })) {
    padding->copy->erase();
    padding->subview->erase();
    padding->fill->erase();
    padded.getDefiningOp()->erase();
  }
}

/// A convolution's GEMM over windows (Conv1dLowering, kernel <= width): loops
/// (n, o, t, c, j), out[n, o, t] += w[o, c, j] * x[n, c, t + j]. One
/// tfc_sgemm_windows call: per sample n, C (O x T) = W (O x C*KW) times B
/// whose row (c, j) is x[n, c, j:], never copied out.
LogicalResult rewriteWindowedMatmul(linalg::GenericOp op, ModuleOp module, bool winograd) {
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (op.getNumLoops() != 5 || op.getNumReductionLoops() != 2 || maps.size() != 3 ||
      maps[0] != AffineMap::get(5, 0, {d(1), d(3), d(4)}, ctx) ||
      maps[1] != AffineMap::get(5, 0, {d(0), d(3), d(2) + d(4)}, ctx) ||
      maps[2] != AffineMap::get(5, 0, {d(0), d(1), d(2)}, ctx))
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1], c = op.getDpsInits()[0];
  // A zero-padded input is read unpadded, the padding made up in packing.
  std::optional<PaddedCopy> padding = paddedCopyOf(b, op);
  int64_t width = 0;
  if (padding && staticLayout(padding->input)) {
    width = cast<MemRefType>(padding->input.getType()).getShape().back();
    b = padding->input;
  } else {
    padding.reset();
  }
  auto la = staticLayout(a), lb = staticLayout(b), lc = staticLayout(c);
  int64_t kw = sizes[4];
  if (!la || !lb || !lc || la->first[2] != 1 || la->first[1] != kw || lb->first[2] != 1 ||
      lc->first[2] != 1)
    return failure();
  int64_t batch = sizes[0], M = sizes[1], N = sizes[2], K = sizes[3] * kw;
  bool accumulate = accumulatesInto(op, c);
  // Five taps over enough channels: Winograd's F(4, 5) (the taps one apart).
  const bool minimal = winograd && kw == 5 && lb->first[2] == 1 && sizes[3] >= kWinogradMinExtent &&
                       M >= kWinogradMinExtent && N >= kWinogradMinExtent;
  func::FuncOp callee =
      declareRuntime(module, minimal ? RuntimeFunction::Conv1dWinograd : RuntimeFunction::SgemmWindows);
  OpBuilder builder(op);
  Location loc = op.getLoc();
  CallArgs args{builder, loc};
  args.index(batch).index(M).index(N).index(K);
  args.pointer(a, la->second).index(la->first[0]).index(0).index(0);
  args.pointer(b, lb->second).index(lb->first[1]).index(lb->first[0]).index(0);
  args.pointer(c, lc->second).index(lc->first[1]).index(lc->first[0]).index(accumulate);
  args.index(kw).index(lb->first[2]).index(padding ? padding->pad : 0).index(width);
  auto call = builder.create<func::CallOp>(loc, callee, args.values);
  Value padded = op.getDpsInputs()[1];
  op.erase();
  erasePaddedCopyIfUnread(padding, padded);
  pairEpilogue(call, a, b, c, batch, M, N);
  return success();
}

/// A weight gradient over all its taps (Conv1dLowering, kernel wider than
/// the output): loops (c, j, n, o, t), c and t reductions,
/// out[j, n, o] += x[n, c, j + t] * w[o, c, t], x and w through any order of
/// their dims. One tfc_sgemm_taps call summing over c: A's row (j, n) is x's
/// row n shifted by j, read in place; C = out as a (J x N) x O matrix.
LogicalResult rewriteTapsMatmul(linalg::GenericOp op, ModuleOp module, bool winograd) {
  using utils::IteratorType;
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (op.getNumLoops() != 5 || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics() ||
      op.getIteratorTypesArray() !=
          SmallVector<IteratorType>{IteratorType::reduction, IteratorType::parallel,
                                    IteratorType::parallel, IteratorType::parallel,
                                    IteratorType::reduction} ||
      maps[2] != AffineMap::get(5, 0, {d(1), d(2), d(3)}, ctx) || maps[0].getNumResults() != 3)
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1], c = op.getDpsInits()[0];
  // A zero-padded input (padded along the shifted dim) is read unpadded,
  // each tap's chains running over its columns inside it.
  std::optional<PaddedCopy> padding = paddedCopyOf(a, op);
  const int64_t rank = maps[0].getNumResults();
  if (padding && staticLayout(padding->input) &&
      maps[0].getResult(rank - 1) == d(1) + d(4)) {
    a = padding->input;
  } else {
    padding.reset();
  }
  auto la = staticLayout(a), lc = staticLayout(c);
  auto bType = dyn_cast<MemRefType>(b.getType());
  if (!la || !lc || !bType || llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  // A's strides along the sample n, the summed c and the shifted position.
  std::optional<int64_t> rowStride, itemStride, shiftStride;
  for (auto [pos, result] : llvm::enumerate(maps[0].getResults())) {
    if (result == d(2))
      rowStride = la->first[pos];
    else if (result == d(0))
      itemStride = la->first[pos];
    else if (result == d(1) + d(4))
      shiftStride = la->first[pos];
  }
  if (!rowStride || !itemStride || shiftStride != 1)
    return failure();
  MatmulLoops loops{sizes, /*m=*/1, /*n=*/3, /*k=*/4}; // c is the one batch loop
  auto lb = matrixLayout(bType, maps[1], loops, loops.k, loops.n);
  // C's row (j, n) at (j * N + n) * ldc: rows in one level.
  if (!lb || lc->first[2] != 1 || lc->first[0] != sizes[2] * lc->first[1])
    return failure();
  int64_t batch = sizes[0], M = sizes[1] * sizes[2], N = sizes[3], K = sizes[4];
  bool accumulate = accumulatesInto(op, c);
  // Five taps one apart over enough channels, dy's rows along t: F(5, 4).
  const bool minimal = winograd && sizes[1] == 5 && *shiftStride == 1 && lb->transposed &&
                       sizes[2] >= kWinogradMinExtent && N >= kWinogradMinExtent &&
                       K >= kWinogradMinExtent;
  func::FuncOp callee =
      declareRuntime(module, minimal ? RuntimeFunction::Conv1dWinogradTaps : RuntimeFunction::SgemmTaps);
  OpBuilder builder(op);
  CallArgs args{builder, op.getLoc()};
  args.index(batch).index(M).index(N).index(K);
  args.pointer(a, la->second).index(*rowStride).index(*itemStride).index(0);
  args.pointer(b, lb->offset).index(lb->ld).index(lb->batchStride).index(lb->transposed);
  args.pointer(c, lc->second).index(lc->first[1]).index(0).index(accumulate);
  args.index(sizes[2]).index(*shiftStride);
  int64_t width = padding ? cast<MemRefType>(a.getType()).getShape().back() : 0;
  args.index(padding ? padding->pad : 0).index(width);
  builder.create<func::CallOp>(op.getLoc(), callee, args.values);
  Value padded = op.getDpsInputs()[0];
  op.erase();
  erasePaddedCopyIfUnread(padding, padded);
  return success();
}

/// Above this many multiply-adds a GEMM is better split over the threads
/// than paired with another.
constexpr int64_t kPairMaxMacs = int64_t(1) << 23;


/// The multiply-adds of a tfc_sgemm call with constant sizes.
std::optional<int64_t> macsOf(func::CallOp call) {
  int64_t macs = 1;
  for (unsigned i = 0; i < 4; ++i) {
    std::optional<int64_t> size = getConstantIntValue(call.getOperand(i));
    if (!size)
      return std::nullopt;
    macs *= std::max<int64_t>(*size, 1);
  }
  return macs;
}

/// Two tfc_sgemm calls in a row where neither touches what the other
/// writes (a backward pass's dW = x^T dy and dx = dy W^T), both small enough
/// to run better on one thread each than split in two, become one
/// tfc_sgemm_pair call. (Its operands: the first call's, then the second's.)
void pairIndependentGemms(ModuleOp module) {
  SmallVector<std::pair<func::CallOp, func::CallOp>> pairs;
  module.walk([&](Block *block) {
    func::CallOp previous;
    for (Operation &op : *block) {
      auto call = dyn_cast<func::CallOp>(op);
      if (!call) {
        if (!touchesNoMemory(&op))
          previous = nullptr;
        continue;
      }
      if (call.getCallee() != StringRef(abi::symbol(RuntimeFunction::Sgemm))) {
        previous = nullptr;
        continue;
      }
      auto independent = [](func::CallOp first, func::CallOp second) {
        const unsigned c = kPointerArgs[2];
        Value written[2] = {pointeeOf(first.getOperand(c)), pointeeOf(second.getOperand(c))};
        for (func::CallOp call : {first, second})
          for (unsigned i : kPointerArgs)
            if (!pointeeOf(call.getOperand(i)))
              return false;
        for (unsigned i : kPointerArgs)
          if (pointeeOf(second.getOperand(i)) == written[0] ||
              pointeeOf(first.getOperand(i)) == written[1])
            return false;
        return true;
      };
      auto small = [](func::CallOp c) {
        std::optional<int64_t> macs = macsOf(c);
        return macs && *macs <= kPairMaxMacs;
      };
      if (previous && small(previous) && small(call) && independent(previous, call)) {
        pairs.push_back({previous, call});
        previous = nullptr;
        continue;
      }
      previous = call;
    }
  });
  if (pairs.empty())
    return;
  func::FuncOp callee = declareRuntime(module, RuntimeFunction::SgemmPair);
  for (auto [first, second] : pairs) {
    SmallVector<Value> args(first.getOperands());
    llvm::append_range(args, second.getOperands());
    OpBuilder builder(second);
    builder.create<func::CallOp>(second.getLoc(), callee, args);
    second.erase();
    first.erase();
  }
}

struct TfGemmToRuntimePass : tfc::impl::TfGemmToRuntimeBase<TfGemmToRuntimePass> {
  using TfGemmToRuntimeBase::TfGemmToRuntimeBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::GenericOp> matmuls;
    module.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kMatmulAttr))
        matmuls.push_back(op);
    });
    if (device != "cpu" && device != "cuda") {
      module.emitError("tf-gemm-to-runtime: device must be cpu or cuda, got '") << device << "'";
      return signalPassFailure();
    }
    if (matmuls.empty())
      return;
    if (device == "cuda") {
      // cuBLASLt's products and the epilogues it computes; the rest stays
      // loops for tf-map-to-gpu.
      func::FuncOp gemm = declareRuntime(module, RuntimeFunction::CudaSgemm);
      for (linalg::GenericOp op : matmuls)
        (void)rewriteMatmul(op, gemm, EpilogueMode::Blas, gradientEpilogues);
      return;
    }
    func::FuncOp gemm = declareRuntime(module, RuntimeFunction::Sgemm);
    if (plain) { // as for cuda, on the CPU's GEMM
      for (linalg::GenericOp op : matmuls)
        (void)rewriteMatmul(op, gemm, EpilogueMode::None);
      return;
    }
    for (linalg::GenericOp op : matmuls)
      if (failed(rewriteWindowedMatmul(op, module, winograd)) &&
          failed(rewriteTapsMatmul(op, module, winograd)))
        (void)rewriteMatmul(op, gemm, EpilogueMode::Paired); // what the GEMM cannot express stays a loop
    pairIndependentGemms(module);
  }
};

} // namespace
