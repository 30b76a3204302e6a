//===- Bf16GemmOperands.cpp - large GEMMs read bf16 copies of A and B -----===//
//
// cuBLASLt reads fp32 operands at TF32's rate even under
// CUBLAS_COMPUTE_32F_FAST_16BF (it rounds them as it loads); bf16 operands
// run at twice that (tfc-kernel-check --bench-gemm on an H200: the medium
// encoder's 79 GEMMs 4.92 ms on fp32 data, 2.49 ms on bf16 A and B). So for
// --precision bf16 each large GEMM call reads its A and B from bf16 copies
// made right before it, as the call reads them (pointer, leading dimension,
// batch stride), and reused by a later call of the same block when nothing
// between may have written the source.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/lowering/BufferEffects.h"
#include "compiler/transforms/EntryAbi.h"
#include "runtime/Abi.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <tuple>

namespace tfc {
#define GEN_PASS_DEF_TFBF16GEMMOPERANDS
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

namespace gemm = abi::gemm;
using abi::RuntimeFunction;

/// Where a GEMM call's operand sits among its arguments.
struct OperandArgs {
  unsigned pointer, ld, stride, trans;
};
constexpr OperandArgs kOperands[2] = {{gemm::A, gemm::Lda, gemm::StrideA, gemm::TransA},
                                      {gemm::B, gemm::Ldb, gemm::StrideB, gemm::TransB}};

/// The runtime function a call calls, if it is one of cuBLASLt's GEMMs.
std::optional<RuntimeFunction> gemmCallee(func::CallOp call) {
  for (RuntimeFunction f : {RuntimeFunction::CudaSgemm, RuntimeFunction::CudaSgemmFused,
                            RuntimeFunction::CudaSgemmBiasGrad})
    if (call.getCallee() == StringRef(abi::symbol(f)))
      return f;
  return std::nullopt;
}

/// A pointer argument as CallArgs::pointer makes it: the aligned pointer of
/// `buffer` plus `offset` elements of 4 bytes.
struct Pointee {
  Value buffer;
  int64_t offset = 0;
};

std::optional<Pointee> pointeeOf(Value pointer) {
  std::optional<RuntimePointer> p = runtimePointer(pointer);
  auto type = p ? dyn_cast<MemRefType>(p->buffer.getType()) : MemRefType();
  if (!type || !type.getElementType().isF32() || !p->bytes || *p->bytes % 4)
    return std::nullopt;
  return Pointee{p->buffer, *p->bytes / 4};
}

/// The matrices an operand argument reads: `items` of `rows` x `cols` (as
/// stored, row-major), `ld` apart in a row, `stride` apart in the batch.
struct Matrices {
  Value source; // the memref whose aligned pointer the call's pointer is
  Value root;   // the buffer it is a view of
  int64_t offset, rows, cols, ld, stride, items;
  auto key() const {
    return std::make_tuple(root.getAsOpaquePointer(), offset, rows, cols, ld, stride, items);
  }
};

/// A bf16 copy made for an earlier call, by a copy nest or beside its
/// producer (`maker`: a generic, or a layer norm's call): reusable until
/// something may write its source.
struct Copy {
  Operation *maker;
  Value buffer;
};

/// A copy made beside its producer: the generic `maker` writes `value` (an
/// fp32 result) and `bits`, its bf16 bits.
struct Produced {
  Operation *maker;
  Value value, bits;
};

namespace layer_norm = abi::layer_norm;

/// Whether `call` is tfc_cuda_layer_norm_forward.
bool isLayerNormForward(func::CallOp call) {
  return call.getCallee() == StringRef(abi::symbol(RuntimeFunction::CudaLayerNormForward)) &&
         call.getNumOperands() == layer_norm::Count;
}

namespace layer_norm_backward = abi::layer_norm_backward;

/// Whether `call` is tfc_cuda_layer_norm_backward.
bool isLayerNormBackward(func::CallOp call) {
  return call.getCallee() == StringRef(abi::symbol(RuntimeFunction::CudaLayerNormBackward)) &&
         call.getNumOperands() == layer_norm_backward::Count;
}

namespace cross_entropy_fused = abi::cross_entropy_fused;

bool isCrossEntropyFused(func::CallOp call) {
  return call.getCallee() == StringRef(abi::symbol(RuntimeFunction::CudaCrossEntropyFused)) &&
         call.getNumOperands() == cross_entropy_fused::Count;
}

/// The constant of argument `i` of `call`, if it is one.
std::optional<int64_t> constantArg(func::CallOp call, unsigned i) {
  return getConstantIntValue(call.getOperand(i));
}

namespace attention = abi::attention;

/// Whether `call` is the attention kernels' forward (`backward` false) or
/// backward (true) with runtime/Abi.h's arguments.
bool isAttention(func::CallOp call, bool backward) {
  const RuntimeFunction f =
      backward ? RuntimeFunction::CudaAttentionBackward : RuntimeFunction::CudaAttentionForward;
  const unsigned tensors = backward ? attention::kBackwardInputs + attention::kBackwardOutputs
                                    : attention::kForwardInputs + attention::kForwardOutputs;
  const unsigned trailing = backward ? attention::kBackwardTrailing : attention::kForwardTrailing;
  return call.getCallee() == StringRef(abi::symbol(f)) &&
         call.getNumOperands() ==
             attention::kSizes + 1 + attention::kPerTensor * tensors + trailing;
}

/// The position of tensor `t`'s pointer among an attention call's
/// arguments (its outer, inner and row strides follow).
constexpr unsigned attentionTensor(unsigned t) {
  return attention::kSizes + 1 + attention::kPerTensor * t;
}

/// Elements an attention kernel writes, offset + sum of i_k stride_k for
/// i_k < size_k (dims as {size, stride}).
struct Region {
  int64_t offset;
  SmallVector<std::pair<int64_t, int64_t>> dims;
};

/// The region output tensor `t` of attention call `call` writes in its
/// buffer (rows of `width` elements; the heads outer x inner, rows of tq
/// or tk), from `offset`.
std::optional<Region> attentionRegion(func::CallOp call, unsigned t, int64_t rows, int64_t width,
                                      int64_t offset) {
  auto outer = constantArg(call, 0), inner = constantArg(call, 1),
       sOuter = constantArg(call, attentionTensor(t) + 1),
       sInner = constantArg(call, attentionTensor(t) + 2),
       sRow = constantArg(call, attentionTensor(t) + 3);
  if (!outer || !inner || !sOuter || !sInner || !sRow)
    return std::nullopt;
  return Region{offset, {{*outer, *sOuter}, {*inner, *sInner}, {rows, *sRow}, {width, 1}}};
}

/// Whether `regions`, their dims alike and their offsets from 0 evenly
/// apart (dq, dk and dv side by side in one projection's gradient), are
/// elements [0, count) each once: sorted by stride, each dim's stride the
/// product of the sizes before it.
bool coverExactly(SmallVector<Region> regions, int64_t count) {
  llvm::sort(regions, [](const Region &a, const Region &b) { return a.offset < b.offset; });
  SmallVector<std::pair<int64_t, int64_t>> dims = regions.front().dims;
  if (regions.front().offset != 0 ||
      llvm::any_of(regions, [&](const Region &r) { return r.dims != dims; }))
    return false;
  if (regions.size() > 1) {
    const int64_t step = regions[1].offset;
    for (auto [i, region] : llvm::enumerate(regions))
      if (region.offset != int64_t(i) * step)
        return false;
    dims.push_back({int64_t(regions.size()), step});
  }
  llvm::erase_if(dims, [](const auto &dim) { return dim.first == 1; });
  llvm::sort(dims, [](const auto &a, const auto &b) { return a.second < b.second; });
  int64_t expected = 1;
  for (auto [size, stride] : dims) {
    if (size <= 0 || stride != expected)
      return false;
    expected *= size;
  }
  return expected == count;
}

/// The static, identity-layout f32 buffer `root`'s type, if it is one.
MemRefType wholeF32Buffer(Value root) {
  auto type = dyn_cast<MemRefType>(root.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity() &&
                 type.getElementType().isF32()
             ? type
             : MemRefType();
}

/// Whether `op` may write any buffer of `root` (conservatively: any op
/// that touches memory and names it, except the reads this pass knows).
bool mayWrite(Operation *op, Value root) {
  if (touchesNoMemory(op))
    return false;
  if (auto cast = dyn_cast<linalg::GenericOp>(op); cast && cast->hasAttr(kBf16CastAttr))
    return rootBuffer(cast.getDpsInits()[0]) == root;
  auto names = [&](Value v) {
    if (rootBuffer(v) == root)
      return true;
    std::optional<Pointee> p = pointeeOf(v);
    return p && rootBuffer(p->buffer) == root;
  };
  if (auto call = dyn_cast<func::CallOp>(op)) {
    if (isLayerNormForward(call)) // writes y, and y16 when it is one of the copies
      return names(call.getOperand(layer_norm::Y)) || names(call.getOperand(layer_norm::Y16));
    if (std::optional<RuntimeFunction> f = gemmCallee(call)) {
      // A GEMM writes C, and its mask or bias gradient.
      SmallVector<unsigned, 2> written = {gemm::C};
      if (*f == RuntimeFunction::CudaSgemmFused)
        written.push_back(gemm::Aux);
      if (*f == RuntimeFunction::CudaSgemmBiasGrad)
        written.push_back(gemm::BiasGrad);
      return llvm::any_of(written, [&](unsigned i) { return names(call.getOperand(i)); });
    }
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op); linalgOp && linalgOp.hasPureBufferSemantics())
    return llvm::any_of(linalgOp.getDpsInits(), names);
  bool writes = false;
  op->walk(
      [&](Operation *nested) { writes = writes || llvm::any_of(nested->getOperands(), names); });
  return writes;
}

/// Whether `arg` is an entry's argument that its `tfc.abi` names a
/// parameter (a weight: not an input, whose copy is as large as a batch).
bool isParameter(BlockArgument arg) {
  auto entry = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto abiAttr = entry ? entry->getAttrOfType<DictionaryAttr>(kAbiAttr) : DictionaryAttr();
  auto args = abiAttr ? abiAttr.getAs<ArrayAttr>("args") : ArrayAttr();
  if (!args || arg.getOwner() != &entry.getBody().front() || arg.getArgNumber() >= args.size())
    return false;
  auto info = dyn_cast<DictionaryAttr>(args[arg.getArgNumber()]);
  return info && kindOf(info) == abi::ValueKind::Param;
}

/// The bits (i16) of `value` (f32) rounded to nearest even bf16, a NaN kept
/// a quiet NaN: KernelMath.h's bf16Bits, on integers so that every target
/// computes the same bits.
Value bf16BitsOf(OpBuilder &b, Location loc, Value value) {
  auto i32 = [&](uint32_t v) {
    return b.create<arith::ConstantIntOp>(loc, int64_t(v), 32).getResult();
  };
  Value x = b.create<arith::BitcastOp>(loc, b.getI32Type(), value);
  Value magnitude = b.create<arith::AndIOp>(loc, x, i32(0x7fffffffu));
  Value nan = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, magnitude, i32(0x7f800000u));
  Value high = b.create<arith::ShRUIOp>(loc, x, i32(16));
  Value odd = b.create<arith::AndIOp>(loc, high, i32(1));
  Value half = b.create<arith::AddIOp>(loc, odd, i32(0x7fffu));
  Value rounded = b.create<arith::ShRUIOp>(loc, b.create<arith::AddIOp>(loc, x, half), i32(16));
  Value quiet = b.create<arith::OrIOp>(loc, high, i32(0x40u));
  Value chosen = b.create<arith::SelectOp>(loc, nan, quiet, rounded);
  return b.create<arith::TruncIOp>(loc, b.getI16Type(), chosen);
}

/// Whether `op` may lie between two products that share an activation's
/// copy (or its producer and the product): GEMM calls, other copies and
/// what touches no memory. Anything else is other work, across which a
/// copy would hold memory the step never held before (the forward's
/// activations kept for the backward, at the step's peak).
bool betweenAdjacent(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  auto copy = dyn_cast<linalg::GenericOp>(op);
  return touchesNoMemory(op) || (call && gemmCallee(call)) ||
         (copy && copy->hasAttr(kBf16CastAttr));
}

/// The generic rounding `source` (fp32) to bf16 into `bits` (i16).
linalg::GenericOp castToBf16(OpBuilder &b, Location loc, Value source, Value bits) {
  unsigned rank = cast<MemRefType>(bits.getType()).getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{source}, ValueRange{bits}, maps, iterators,
      [](OpBuilder &b, Location loc, ValueRange args) {
        b.create<linalg::YieldOp>(loc, ValueRange{bf16BitsOf(b, loc, args[0])});
      });
  generic->setAttr(kBf16CastAttr, b.getUnitAttr());
  return generic;
}

/// Whether `copying` (a copy nest) copies a whole buffer of `elements`
/// elements in order into a fresh buffer that only pointers are taken of:
/// a copy that bits already written may replace.
bool copiesWhole(linalg::GenericOp copying, int64_t elements) {
  auto sourceType = cast<MemRefType>(copying.getDpsInputs()[0].getType());
  Value copy = copying.getDpsInits()[0];
  return sourceType.getLayout().isIdentity() && sourceType.getNumElements() == elements &&
         copy.getDefiningOp<memref::AllocOp>() &&
         llvm::all_of(copy.getUsers(), [&](Operation *use) {
           return use == copying || isa<memref::ExtractAlignedPointerAsIndexOp>(use);
         });
}

/// Whether `out`, a result of an all-parallel generic, is exactly
/// `matrices`: a row-major buffer whose elements in order are theirs (the
/// matrices contiguous, rows of `cols`, items back to back).
bool isExactly(Value out, const Matrices &matrices) {
  auto type = dyn_cast<MemRefType>(out.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
      failed(getStridesAndOffset(type, strides, offset)) || offset != matrices.offset ||
      strides != computeStrides(type.getShape()))
    return false;
  const int64_t items = matrices.items;
  return type.getShape().back() == matrices.cols && matrices.ld == matrices.cols &&
         (items == 1 || matrices.stride == matrices.rows * matrices.cols) &&
         type.getNumElements() == items * matrices.rows * matrices.cols;
}

struct TfBf16GemmOperandsPass : tfc::impl::TfBf16GemmOperandsBase<TfBf16GemmOperandsPass> {
  using TfBf16GemmOperandsBase::TfBf16GemmOperandsBase;

  void runOnOperation() override {
    for (func::CallOp call : callsWhere(gemmCallee))
      rewrite(call);
    if (bf16Activations)
      for (Produced &p : produced)
        keepOnlyBits(p);
    for (Produced &p : produced)
      dropIfUnread(p);
    if (attentionOutputs)
      for (func::CallOp backward : callsWhere([](func::CallOp c) { return isAttention(c, true); }))
        gradientsAsBits(backward);
    if (attentionInputs)
      for (func::CallOp call : callsWhere([](func::CallOp c) {
             return c.getCallee() == StringRef(abi::symbol(RuntimeFunction::CudaSgemmFused));
           }))
        qkvAsBits(call);
    if (attentionInputs) // after qkvAsBits: dO joins bf16 q, k and v
      for (func::CallOp call : callsWhere([](func::CallOp c) {
             return c.getCallee() == StringRef(abi::symbol(RuntimeFunction::CudaSgemm));
           }))
        doutAsBits(call);
    if (gemmResults)
      for (func::CallOp call : callsWhere([](func::CallOp c) {
             return c.getCallee() == StringRef(abi::symbol(RuntimeFunction::CudaSgemm));
           }))
        resultAsBits(call);
    if (fuseProducers) {
      if (bf16Activations)
        for (func::CallOp norm : callsWhere(isLayerNormForward))
          gateAsBits(norm);
      for (func::CallOp norm : callsWhere(isLayerNormBackward))
        dxOrDropoutAsBits(norm);
      for (func::CallOp loss : callsWhere(isCrossEntropyFused))
        dlogitsAsBits(loss);
    }
  }

  /// The module's calls `is` says yes to, in program order (collected
  /// first: each rewrite replaces its call).
  template <typename Predicate> SmallVector<func::CallOp> callsWhere(Predicate is) {
    SmallVector<func::CallOp> calls;
    getOperation().walk([&](func::CallOp call) {
      if (is(call))
        calls.push_back(call);
    });
    return calls;
  }

  /// The matrices operand `which` of `call` reads, if every size is a constant.
  std::optional<Matrices> matricesOf(func::CallOp call, const OperandArgs &which) {
    auto batch = constantArg(call, gemm::Batch), m = constantArg(call, gemm::M),
         n = constantArg(call, gemm::N), k = constantArg(call, gemm::K),
         ld = constantArg(call, which.ld), stride = constantArg(call, which.stride),
         trans = constantArg(call, which.trans);
    std::optional<Pointee> pointee = pointeeOf(call.getOperand(which.pointer));
    if (!batch || !m || !n || !k || !ld || !stride || !trans || !pointee || *trans & gemm::kBf16)
      return std::nullopt;
    const bool ofA = which.pointer == gemm::A, transposed = *trans & gemm::kTransposed;
    // As stored: A is M x K (K x M transposed), B is K x N (N x K).
    int64_t rows = ofA ? (transposed ? *k : *m) : (transposed ? *n : *k);
    int64_t cols = ofA ? (transposed ? *m : *k) : (transposed ? *k : *n);
    return Matrices{pointee->buffer, rootBuffer(pointee->buffer), pointee->offset, rows, cols, *ld,
                    *stride,         *stride == 0 ? 1 : *batch};
  }

  void rewrite(func::CallOp call) {
    auto batch = constantArg(call, gemm::Batch), m = constantArg(call, gemm::M),
         n = constantArg(call, gemm::N), k = constantArg(call, gemm::K);
    if (!batch || !m || !n || !k || *batch * *m * *n * *k < minMacs)
      return;
    std::optional<Matrices> operands[2] = {matricesOf(call, kOperands[0]),
                                           matricesOf(call, kOperands[1])};
    if (!operands[0] || !operands[1])
      return;
    OpBuilder b(call);
    Location loc = call.getLoc();
    SmallVector<Value> args = llvm::to_vector(call.getOperands());
    for (int i = 0; i < 2; ++i) {
      const Matrices &matrices = *operands[i];
      Value copy = reusableCopy(call, matrices);
      if (!copy)
        copy = producedCopy(call, matrices);
      if (!copy)
        copy = parameterCopy(call, matrices);
      if (!copy)
        copy = copyBesideNest(call, matrices);
      if (!copy)
        copy = makeCopy(b, loc, matrices);
      const OperandArgs &which = kOperands[i];
      Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, copy);
      args[which.pointer] = base;
      args[which.ld] = b.create<arith::ConstantIndexOp>(loc, matrices.cols);
      args[which.stride] = b.create<arith::ConstantIndexOp>(
          loc, matrices.stride == 0 ? 0 : matrices.rows * matrices.cols);
      args[which.trans] = b.create<arith::ConstantIndexOp>(
          loc, (*constantArg(call, which.trans) & gemm::kTransposed) | gemm::kBf16);
    }
    b.create<func::CallOp>(loc, call.getCallee(), TypeRange{}, args);
    llvm::SmallSetVector<Operation *, 2> pointers;
    for (const OperandArgs &which : kOperands)
      pointers.insert(call.getOperand(which.pointer).getDefiningOp());
    call.erase();
    // The fp32 pointers, if nothing else reads them.
    for (Operation *op : pointers)
      while (op && op->use_empty() && touchesNoMemory(op)) {
        Operation *source = op->getNumOperands() ? op->getOperand(0).getDefiningOp() : nullptr;
        op->erase();
        op = isa_and_nonnull<memref::ExtractAlignedPointerAsIndexOp>(source) ? source : nullptr;
      }
  }

  /// A copy an earlier call of this block made of `matrices`, if nothing
  /// between it and `call` may have written their buffer.
  Value reusableCopy(func::CallOp call, const Matrices &matrices) {
    auto found = copies.find(matrices.key());
    if (found == copies.end())
      return {};
    Operation *maker = found->second.maker;
    if (maker->getBlock() != call->getBlock())
      return {};
    // An activation's copy is shared by adjacent products only (GEMM calls
    // and copies between): kept alive across other work, from the forward
    // to the backward, each would hold memory the step never held before.
    // Unless only such products read the activation after `call`: then its
    // fp32 values die at their last other reader, and the copy, half their
    // bytes, is kept instead (a layer norm's output, which the backward
    // reads only for a weight gradient). A parameter's (a block argument)
    // is small and kept.
    const bool adjacentOnly = !keepActivationCopies && !isa<BlockArgument>(matrices.root) &&
                              !onlyProductsReadAfter(call, matrices);
    for (Operation *op = maker->getNextNode(); op != call.getOperation(); op = op->getNextNode())
      if (mayWrite(op, matrices.root) || (adjacentOnly && !betweenAdjacent(op)))
        return {};
    return found->second.buffer;
  }

  /// Whether, after `after`, only products reading exactly `matrices` (as A
  /// or B) use their buffer, none writing it.
  bool onlyProductsReadAfter(Operation *after, const Matrices &matrices) {
    std::optional<SmallVector<Operation *>> users = usersAfter(matrices.root, after);
    return users && llvm::all_of(*users, [&](Operation *user) {
             auto product = dyn_cast<func::CallOp>(user);
             if (!product || !gemmCallee(product) || mayWrite(product, matrices.root))
               return false;
             for (auto [position, operand] : llvm::enumerate(product.getOperands())) {
               std::optional<RuntimePointer> pointer = runtimePointer(operand);
               if (!pointer || rootBuffer(pointer->buffer) != matrices.root)
                 continue;
               const OperandArgs *which = llvm::find_if(
                   kOperands, [&](const OperandArgs &o) { return o.pointer == position; });
               if (which == std::end(kOperands))
                 return false;
               std::optional<Matrices> read = matricesOf(product, *which);
               if (!read || read->key() != matrices.key())
                 return false;
             }
             return true;
           });
  }

  /// The bf16 copy of `matrices` as a second result of the generic that
  /// wrote them last before `call` (an all-parallel loop nest writing them
  /// whole, nothing between touching them), or as the y16 of the layer
  /// norm's call that did: it stores each value's bf16 bits beside it, one
  /// read of memory fewer than a copy. Null when there is no such producer.
  Value producedCopy(func::CallOp call, const Matrices &matrices) {
    if (!fuseProducers)
      return {};
    linalg::GenericOp producer;
    OpOperand *out = nullptr;
    // Other work between the producer and the product: the copy, made by
    // the producer, would be held across it; only where nothing but such
    // products reads the matrices after the producer (their fp32 values,
    // twice the bytes, were held as long: the one-hot tokens of an
    // embedding's weight gradient, made at the step's start).
    bool otherWork = false;
    for (Operation *op = call->getPrevNode(); op && !producer; op = op->getPrevNode()) {
      if (auto norm = dyn_cast<func::CallOp>(op); norm && isLayerNormForward(norm)) {
        std::optional<Pointee> y = pointeeOf(norm.getOperand(layer_norm::Y));
        if (y && rootBuffer(y->buffer) == matrices.root)
          return otherWork && !onlyProductsReadAfter(norm, matrices)
                     ? Value()
                     : layerNormCopy(norm, *y, matrices);
      }
      if (auto forward = dyn_cast<func::CallOp>(op); forward && isAttention(forward, false)) {
        std::optional<Pointee> out =
            pointeeOf(forward.getOperand(attentionTensor(attention::kForwardInputs)));
        if (out && rootBuffer(out->buffer) == matrices.root)
          return otherWork && !onlyProductsReadAfter(forward, matrices)
                     ? Value()
                     : attentionOutCopy(forward, *out, matrices);
      }
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (generic && generic.hasPureBufferSemantics() && !generic->hasAttr(kBf16CastAttr))
        for (OpOperand &init : generic.getDpsInitsMutable())
          if (rootBuffer(init.get()) == matrices.root) {
            producer = generic;
            out = &init;
          }
      if (!producer && mayWrite(op, matrices.root))
        return {};
      otherWork = otherWork || (!producer && !betweenAdjacent(op));
    }
    if (!producer || (otherWork && !onlyProductsReadAfter(producer, matrices)) ||
        producer.getNumReductionLoops() != 0 ||
        !producer.getMatchingIndexingMap(out).isPermutation() || !isExactly(out->get(), matrices) ||
        llvm::count_if(producer.getDpsInits(),
                       [&](Value init) { return rootBuffer(init) == matrices.root; }) != 1)
      return {};
    auto outType = cast<MemRefType>(out->get().getType());
    OpBuilder b(producer);
    Location loc = producer.getLoc();
    Value bits = b.create<memref::AllocOp>(loc, MemRefType::get(outType.getShape(), b.getI16Type()),
                                           b.getI64IntegerAttr(64));
    SmallVector<Value> inits = producer.getDpsInits();
    inits.push_back(bits);
    SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
    maps.push_back(producer.getMatchingIndexingMap(out));
    auto fused = b.create<linalg::GenericOp>(loc, TypeRange{}, producer.getDpsInputs(), inits, maps,
                                             producer.getIteratorTypesArray());
    fused->setDiscardableAttrs(producer->getDiscardableAttrDictionary());
    fused.getRegion().takeBody(producer.getRegion());
    Block &body = fused.getRegion().front();
    body.addArgument(b.getI16Type(), loc);
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    OpBuilder at(yield);
    Value value = yield.getOperand(out->getOperandNumber() - producer.getNumDpsInputs());
    SmallVector<Value> yielded(yield.getOperands());
    yielded.push_back(bf16BitsOf(at, loc, value));
    at.create<linalg::YieldOp>(loc, yielded);
    yield.erase();
    // A copy made beside another of its results names the new generic.
    renameMaker(producer, fused);
    producer.erase();
    copies[matrices.key()] = Copy{fused, bits};
    produced.push_back(Produced{fused, out->get(), bits});
    return bits;
  }

  /// Where `from`, rebuilt as `to`, made copies, `to` makes them.
  void renameMaker(Operation *from, Operation *to) {
    for (auto &[key, copy] : copies)
      if (copy.maker == from)
        copy.maker = to;
    for (Produced &p : produced)
      if (p.maker == from)
        p.maker = to;
  }

  /// The ops of `after`'s block after it that use `root` (through views
  /// and the pointers runtime calls take), each once; none when a use lies
  /// outside the block.
  std::optional<SmallVector<Operation *>> usersAfter(Value root, Operation *after) {
    Block *block = after->getBlock();
    llvm::SmallSetVector<Operation *, 4> users;
    SmallVector<Value> worklist = {root};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (isa<ViewLikeOpInterface, memref::ExtractAlignedPointerAsIndexOp, arith::AddIOp>(user)) {
          worklist.append(user->result_begin(), user->result_end());
          continue;
        }
        Operation *inBlock = block->findAncestorOpInBlock(*user);
        if (!inBlock)
          return std::nullopt;
        if (after->isBeforeInBlock(inBlock))
          users.insert(inBlock);
      }
    }
    return users.takeVector();
  }

  /// Whether the body of `reader` uses the element of its operand `input`
  /// only to compare it with zero (a ReLU's gradient testing its output).
  static bool onlySignTests(linalg::GenericOp reader, OpOperand &input) {
    return llvm::all_of(reader.getMatchingBlockArgument(&input).getUsers(), [](Operation *user) {
      auto compare = dyn_cast<arith::CmpFOp>(user);
      return compare && (matchPattern(compare.getLhs(), m_AnyZeroFloat()) ||
                         matchPattern(compare.getRhs(), m_AnyZeroFloat()));
    });
  }

  /// The activation `p.value`, written by its producer beside its bf16
  /// bits, kept as those bits alone where every later reader is a copy of
  /// the same matrices (a GEMM's operand in the backward) or a loop nest
  /// that only compares it with zero: the copies become the bits, the
  /// comparisons read them widened (the same answer but for positives of at
  /// most 2^-134, which round to a bf16 zero, as autocast's bf16 activations
  /// do), and the fp32 result, unread, goes (dropIfUnread).
  void keepOnlyBits(Produced &p) {
    Value root = rootBuffer(p.value);
    auto valueType = cast<MemRefType>(p.value.getType());
    auto alloc = root.getDefiningOp<memref::AllocOp>();
    // The value is its whole buffer, in order, as its bits are.
    if (!alloc || !valueType.getLayout().isIdentity() || !alloc.getType().hasStaticShape() ||
        alloc.getType().getNumElements() != valueType.getNumElements())
      return;
    std::optional<SmallVector<Operation *>> users = usersAfter(root, p.maker);
    if (!users)
      return;
    SmallVector<linalg::GenericOp> copiesOfIt;
    SmallVector<OpOperand *> signTests;
    for (Operation *user : *users) {
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic || !generic.hasPureBufferSemantics() ||
          llvm::any_of(generic.getDpsInits(), [&](Value v) { return rootBuffer(v) == root; }))
        return;
      if (generic->hasAttr(kBf16CastAttr)) {
        // Contiguous from the start: the bits the producer wrote.
        if (!copiesWhole(generic, valueType.getNumElements()))
          return;
        copiesOfIt.push_back(generic);
        continue;
      }
      for (OpOperand *input : generic.getDpsInputOperands()) {
        if (rootBuffer(input->get()) != root)
          continue;
        if (input->get().getType() != valueType || !onlySignTests(generic, *input))
          return;
        signTests.push_back(input);
      }
    }
    for (linalg::GenericOp copy : copiesOfIt) {
      Value bits = copy.getDpsInits()[0];
      for (Operation *use : llvm::make_early_inc_range(bits.getUsers()))
        if (use != copy)
          use->setOperand(0, p.bits);
      Operation *view = copy.getDpsInputs()[0].getDefiningOp();
      copy.erase();
      bits.getDefiningOp()->erase();
      if (view && view->use_empty() && touchesNoMemory(view))
        view->erase();
    }
    for (OpOperand *input : signTests)
      readWidened(*input, p.bits);
  }

  /// `input` of its generic reads `bits` (i16, the same elements) instead,
  /// each element widened to the f32 its bits are (the high half of a word:
  /// KernelMath.h's bf16Float).
  static void readWidened(OpOperand &input, Value bits) {
    auto reader = cast<linalg::GenericOp>(input.getOwner());
    BlockArgument element = reader.getMatchingBlockArgument(&input);
    input.set(bits);
    element.setType(cast<MemRefType>(bits.getType()).getElementType());
    OpBuilder b = OpBuilder::atBlockBegin(element.getOwner());
    Location loc = reader.getLoc();
    Value word = b.create<arith::ExtUIOp>(loc, b.getI32Type(), element);
    Value shifted =
        b.create<arith::ShLIOp>(loc, word, b.create<arith::ConstantIntOp>(loc, 16, 32).getResult());
    Value widened = b.create<arith::BitcastOp>(loc, b.getF32Type(), shifted);
    element.replaceAllUsesExcept(widened, word.getDefiningOp());
  }

  /// The producer of `p` without its fp32 result where nothing after it
  /// reads that (every later reader reads the bits): an allocation, not an
  /// argument. A body that reads the old value (an epilogue updating a
  /// GEMM's result) takes it as an input instead.
  void dropIfUnread(Produced &p) {
    Value root = rootBuffer(p.value);
    if (!root.getDefiningOp<memref::AllocOp>())
      return;
    std::optional<SmallVector<Operation *>> users = usersAfter(root, p.maker);
    if (!users || !users->empty())
      return;
    auto producer = cast<linalg::GenericOp>(p.maker);
    auto found = llvm::find_if(producer.getDpsInitsMutable(),
                               [&](OpOperand &init) { return init.get() == p.value; });
    if (found == producer.getDpsInitsMutable().end())
      return;
    OpOperand &dropped = *found;
    const unsigned index = dropped.getOperandNumber() - producer.getNumDpsInputs();
    BlockArgument old = producer.getMatchingBlockArgument(&dropped);
    const bool read = !old.use_empty();
    SmallVector<Value> inputs = producer.getDpsInputs(), inits = producer.getDpsInits();
    SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
    AffineMap map = maps[dropped.getOperandNumber()];
    maps.erase(maps.begin() + dropped.getOperandNumber());
    inits.erase(inits.begin() + index);
    if (read) {
      maps.insert(maps.begin() + inputs.size(), map);
      inputs.push_back(p.value);
    }
    OpBuilder b(producer);
    auto rebuilt = b.create<linalg::GenericOp>(producer.getLoc(), TypeRange{}, inputs, inits, maps,
                                               producer.getIteratorTypesArray());
    rebuilt->setDiscardableAttrs(producer->getDiscardableAttrDictionary());
    rebuilt.getRegion().takeBody(producer.getRegion());
    Block &body = rebuilt.getRegion().front();
    if (read) {
      BlockArgument now =
          body.insertArgument(producer.getNumDpsInputs(), old.getType(), old.getLoc());
      old.replaceAllUsesWith(now);
    }
    body.eraseArgument(old.getArgNumber());
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    yield->eraseOperand(index);
    renameMaker(producer, rebuilt);
    producer.erase();
    if (auto alloc = root.getDefiningOp<memref::AllocOp>(); alloc && alloc->use_empty())
      alloc.erase();
  }

  /// The copy as the y16 of `norm` (whose y is `y`), if it writes exactly
  /// `matrices` (its rows x d from the buffer's start, contiguous) and has
  /// no y16 yet; else null.
  Value layerNormCopy(func::CallOp norm, const Pointee &y, const Matrices &matrices) {
    auto rows = constantArg(norm, layer_norm::Rows), d = constantArg(norm, layer_norm::D),
         y16 = constantArg(norm, layer_norm::Y16);
    const int64_t items = matrices.items;
    if (!rows || !d || !y16 || *y16 != 0 || y.offset != 0 || matrices.offset != 0 ||
        matrices.cols != *d || matrices.ld != *d ||
        (items > 1 && matrices.stride != matrices.rows * matrices.cols) ||
        items * matrices.rows != *rows)
      return {};
    SmallVector<int64_t> shape = {matrices.rows, matrices.cols};
    if (items > 1)
      shape.insert(shape.begin(), items);
    OpBuilder b(norm);
    Location loc = norm.getLoc();
    Value bits = b.create<memref::AllocOp>(loc, MemRefType::get(shape, b.getI16Type()),
                                           b.getI64IntegerAttr(64));
    SmallVector<Value> args = llvm::to_vector(norm.getOperands());
    args[layer_norm::Y16] = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, bits);
    auto withCopy = b.create<func::CallOp>(loc, norm.getCallee(), TypeRange{}, args);
    for (auto &[key, copy] : copies)
      if (copy.maker == norm.getOperation())
        copy.maker = withCopy;
    norm.erase();
    copies[matrices.key()] = Copy{withCopy, bits};
    return bits;
  }

  /// The copy as the out16 of attention forward `forward` (whose out is
  /// `out`), if `matrices` are their whole buffer, which out fills exactly,
  /// and it has no out16 yet; else null. Its out, which the backward reads,
  /// stays.
  Value attentionOutCopy(func::CallOp forward, const Pointee &out, const Matrices &matrices) {
    const unsigned out16 = attentionTensor(attention::kForwardInputs + 1) + 1;
    MemRefType type = wholeF32Buffer(matrices.root);
    auto tq = constantArg(forward, 2), dv = constantArg(forward, 5),
         none = constantArg(forward, out16);
    const int64_t items = matrices.items;
    if (!attentionOutputs || !type || !tq || !dv || !none || *none != 0 || matrices.offset != 0 ||
        matrices.ld != matrices.cols ||
        (items > 1 && matrices.stride != matrices.rows * matrices.cols) ||
        items * matrices.rows * matrices.cols != type.getNumElements())
      return {};
    std::optional<Region> region =
        attentionRegion(forward, attention::kForwardInputs, *tq, *dv, out.offset);
    if (!region || !coverExactly({*region}, type.getNumElements()))
      return {};
    OpBuilder b(forward);
    Location loc = forward.getLoc();
    Value bits = bitsBuffer(b, loc, type);
    SmallVector<Value> args = llvm::to_vector(forward.getOperands());
    args[out16] = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, bits);
    auto withCopy = b.create<func::CallOp>(loc, forward.getCallee(), TypeRange{}, args);
    for (auto &[key, copy] : copies)
      if (copy.maker == forward.getOperation())
        copy.maker = withCopy;
    forward.erase();
    copies[matrices.key()] = Copy{withCopy, bits};
    return bits;
  }

  /// The attention backward's dq, dk and dv stored as bf16 bits alone
  /// (its gradsBf16) where, in a buffer they fill exactly, nothing after
  /// the call reads them but copies of the whole buffer (the QKV
  /// projection's gradient, which only products read): those copies become
  /// the bits, the same bits, and the f32 buffer goes. dk and dv so both
  /// or neither (the kernels' contract).
  void gradientsAsBits(func::CallOp backward) {
    const unsigned gradsBf16 = backward.getNumOperands() - 2; // inputsBf16 last
    auto tq = constantArg(backward, 2), tk = constantArg(backward, 3), d = constantArg(backward, 4),
         dv = constantArg(backward, 5), flags = constantArg(backward, gradsBf16);
    if (!tq || !tk || !d || !dv || !flags || *flags != 0)
      return;
    struct Output {
      unsigned t;
      int64_t rows, width, flag;
    };
    const unsigned dq = attention::kBackwardInputs;
    const Output outputs[3] = {{dq, *tq, *d, attention::kDqBf16},
                               {dq + 1, *tk, *d, attention::kDkBf16},
                               {dq + 2, *tk, *dv, attention::kDvBf16}};
    // The buffers the outputs point into, each with the outputs it holds.
    llvm::MapVector<Value, SmallVector<std::pair<const Output *, int64_t>>> buffers;
    for (const Output &o : outputs) {
      std::optional<Pointee> p = pointeeOf(backward.getOperand(attentionTensor(o.t)));
      if (!p)
        return;
      buffers[rootBuffer(p->buffer)].push_back({&o, p->offset});
    }
    // The buffers that can hold bits alone: their copies and gradients.
    struct Eligible {
      Value root;
      MemRefType type;
      SmallVector<std::pair<const Output *, int64_t>> held;
      SmallVector<linalg::GenericOp> casts;
      int64_t flags = 0;
    };
    SmallVector<Eligible> eligible;
    for (auto &[root, held] : buffers) {
      MemRefType type = wholeF32Buffer(root);
      if (!type || !root.getDefiningOp<memref::AllocOp>())
        continue;
      SmallVector<Region> regions;
      for (auto [o, offset] : held) {
        std::optional<Region> region = attentionRegion(backward, o->t, o->rows, o->width, offset);
        if (!region)
          return;
        regions.push_back(*region);
      }
      // No other argument names the buffer, and every later reader copies it whole.
      const bool onlyOutputs = llvm::all_of(llvm::enumerate(backward.getOperands()), [&](auto arg) {
        std::optional<RuntimePointer> p = runtimePointer(arg.value());
        return !p || rootBuffer(p->buffer) != root || llvm::any_of(held, [&](auto h) {
          return attentionTensor(h.first->t) == arg.index();
        });
      });
      if (!onlyOutputs || !coverExactly(regions, type.getNumElements()))
        continue;
      std::optional<SmallVector<linalg::GenericOp>> casts =
          wholeCopiesAfter(root, backward, type.getNumElements());
      if (!casts)
        continue;
      int64_t flags = 0;
      for (auto [o, offset] : held)
        flags |= o->flag;
      eligible.push_back({root, type, held, *casts, flags});
    }
    // The kernels store dk and dv both as bf16 or neither (runtime/Abi.h):
    // where only one's buffer may hold bits, neither does.
    const int64_t keys = attention::kDkBf16 | attention::kDvBf16;
    int64_t all = 0;
    for (const Eligible &e : eligible)
      all |= e.flags;
    if ((all & keys) != 0 && (all & keys) != keys)
      llvm::erase_if(eligible, [&](const Eligible &e) { return e.flags & keys; });
    if (eligible.empty())
      return;
    SmallVector<Value> newArgs = llvm::to_vector(backward.getOperands());
    int64_t bf16 = 0;
    SmallVector<std::pair<linalg::GenericOp, Value>> replaced;
    for (const Eligible &e : eligible) {
      OpBuilder b(backward);
      Location loc = backward.getLoc();
      Value bits = bitsBuffer(b, loc, e.type);
      Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, bits);
      for (auto [o, offset] : e.held)
        newArgs[attentionTensor(o->t)] = bitsAddress(b, loc, base, offset);
      bf16 |= e.flags;
      for (linalg::GenericOp copying : e.casts)
        replaced.push_back({copying, bits});
    }
    OpBuilder b(backward);
    newArgs[gradsBf16] = b.create<arith::ConstantIndexOp>(backward.getLoc(), bf16);
    callWithBits(backward, newArgs, replaced);
  }

  /// The copy nests that are all that reads `root` after `after`, each
  /// copying all of its `elements`; none when something else reads it or
  /// nothing does.
  std::optional<SmallVector<linalg::GenericOp>> wholeCopiesAfter(Value root, Operation *after,
                                                                 int64_t elements) {
    std::optional<SmallVector<Operation *>> users = usersAfter(root, after);
    if (!users || users->empty())
      return std::nullopt;
    SmallVector<linalg::GenericOp> casts;
    for (Operation *user : *users) {
      auto copying = dyn_cast<linalg::GenericOp>(user);
      if (!copying || !copying->hasAttr(kBf16CastAttr) || !copiesWhole(copying, elements))
        return std::nullopt;
      casts.push_back(copying);
    }
    return casts;
  }

  /// A fresh buffer of bf16 bits shaped as the f32 `type`, at `b`.
  static Value bitsBuffer(OpBuilder &b, Location loc, MemRefType type) {
    return b.create<memref::AllocOp>(loc, MemRefType::get(type.getShape(), b.getI16Type()),
                                     b.getI64IntegerAttr(64));
  }

  /// The address of element `offset` of the bits from `base` (2 bytes an
  /// element), at `b`.
  static Value bitsAddress(OpBuilder &b, Location loc, Value base, int64_t offset) {
    if (offset == 0)
      return base;
    return b.create<arith::AddIOp>(loc, base, b.create<arith::ConstantIndexOp>(loc, offset * 2));
  }

  /// The GEMM `call` again, storing its product in bf16 (gemm kBf16 in
  /// Accumulate) into a fresh bits buffer shaped as its f32 `root`, with
  /// `biasBits` (a bf16 copy) as its bias where given: that buffer's address.
  static Value productInBf16(func::CallOp call, Value root, Value biasBits = {}) {
    OpBuilder b(call);
    Location loc = call.getLoc();
    Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(
        loc, bitsBuffer(b, loc, wholeF32Buffer(root)));
    SmallVector<Value> args = llvm::to_vector(call.getOperands());
    args[gemm::C] = base;
    args[gemm::Accumulate] = b.create<arith::ConstantIndexOp>(loc, gemm::kBf16);
    if (biasBits)
      args[gemm::Bias] = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, biasBits);
    callWithBits(call, args, {});
    return base;
  }

  /// Replaces `call` by a call of the same callee with `args` (which store
  /// bits where it stored f32), and each copy nest of `copies` by the bits
  /// it pairs with; the f32 pointers, views and buffers nothing uses then go.
  static void callWithBits(func::CallOp call, ArrayRef<Value> args,
                           ArrayRef<std::pair<linalg::GenericOp, Value>> copies) {
    OpBuilder b(call);
    b.create<func::CallOp>(call.getLoc(), call.getCallee(), TypeRange{}, args);
    SmallVector<Operation *> pointers;
    for (Value arg : call.getOperands())
      if (Operation *op = arg.getDefiningOp())
        pointers.push_back(op);
    call.erase();
    for (auto [copying, bits] : copies) {
      Value copy = copying.getDpsInits()[0];
      for (Operation *use : llvm::make_early_inc_range(copy.getUsers()))
        if (use != copying.getOperation())
          use->setOperand(0, bits);
      if (Operation *view = copying.getDpsInputs()[0].getDefiningOp())
        pointers.push_back(view);
      copying.erase();
      copy.getDefiningOp()->erase();
    }
    eraseUnused(pointers);
  }

  /// The f32 buffer of its own that `call`'s argument `stored` points at:
  /// an allocation of `elements`, from its start, no other argument of the
  /// call into it.
  static Value ownBuffer(func::CallOp call, unsigned stored, int64_t elements) {
    std::optional<Pointee> p = pointeeOf(call.getOperand(stored));
    if (!p || p->offset != 0)
      return {};
    Value root = rootBuffer(p->buffer);
    MemRefType type = wholeF32Buffer(root);
    if (!type || !root.getDefiningOp<memref::AllocOp>() || type.getNumElements() != elements)
      return {};
    for (auto [i, arg] : llvm::enumerate(call.getOperands()))
      if (std::optional<RuntimePointer> q = runtimePointer(arg);
          i != stored && q && rootBuffer(q->buffer) == root)
        return {};
    return root;
  }

  /// ownBuffer's type and the copy nests of all of it that are all that
  /// reads it after `call`.
  struct OwnCopies {
    MemRefType type;
    SmallVector<linalg::GenericOp> casts;
  };
  std::optional<OwnCopies> onlyCopiesRead(func::CallOp call, unsigned stored, int64_t elements) {
    Value root = ownBuffer(call, stored, elements);
    if (!root)
      return std::nullopt;
    std::optional<SmallVector<linalg::GenericOp>> casts = wholeCopiesAfter(root, call, elements);
    if (!casts)
      return std::nullopt;
    return OwnCopies{wholeF32Buffer(root), std::move(*casts)};
  }

  /// `call` again storing bf16 bits at its argument `bitsAt` (a fresh
  /// buffer of `own`'s shape, `flag` 1; `unstored` 0 when given), which the
  /// copies of `own` become.
  void storeBits(func::CallOp call, const OwnCopies &own, unsigned bitsAt, unsigned flag,
                 std::optional<unsigned> unstored = std::nullopt) {
    OpBuilder b(call);
    Location loc = call.getLoc();
    Value bits = bitsBuffer(b, loc, own.type);
    SmallVector<Value> args = llvm::to_vector(call.getOperands());
    args[bitsAt] = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, bits);
    args[flag] = b.create<arith::ConstantIndexOp>(loc, 1);
    if (unstored)
      args[*unstored] = b.create<arith::ConstantIndexOp>(loc, 0);
    SmallVector<std::pair<linalg::GenericOp, Value>> copies;
    for (linalg::GenericOp copying : own.casts)
      copies.push_back({copying, bits});
    callWithBits(call, args, copies);
  }

  /// A layer norm backward that stores dx's dropout (a post-norm layer's
  /// dropout gradient, runtime/Abi.h's layer_norm_backward) in f32 into a
  /// buffer of its own that nothing after the call reads but copies of all
  /// of it (the products of the layer's weight and input gradients): the
  /// kernel stores the bits alone, which the copies become, and the f32
  /// buffer goes.
  /// Without a dropout, dx itself where only such copies read it: the
  /// kernel stores its bits alone in the dropout's place without a seed
  /// (no mask), and dx is not stored.
  void dxOrDropoutAsBits(func::CallOp norm) {
    namespace lnb = layer_norm_backward;
    auto bitsFlag = constantArg(norm, lnb::DropoutBits), rows = constantArg(norm, lnb::Rows),
         d = constantArg(norm, lnb::D), noDropout = constantArg(norm, lnb::Dropout);
    if (!bitsFlag || *bitsFlag != 0 || !rows || !d)
      return;
    // dx's copies where there is no dropout, else the dropout's.
    const bool dx = noDropout && *noDropout == 0;
    if (auto seed = constantArg(norm, lnb::Seed); dx && (!seed || *seed != 0))
      return;
    if (std::optional<OwnCopies> own =
            onlyCopiesRead(norm, dx ? lnb::Dx : lnb::Dropout, *rows * *d))
      storeBits(norm, *own, lnb::Dropout, lnb::DropoutBits,
                dx ? std::optional<unsigned>(lnb::Dx) : std::nullopt);
  }

  /// A product that only loop nests read after it (tfc_cuda_sgemm of bf16
  /// A and B, no epilogue, into a buffer of its own that it fills: the
  /// FFN's first product, which the nest adding its bias, ReLU and dropout
  /// reads, and in the backward the gradient of the FFN's activation, which
  /// the nest of the dropout's and ReLU's gradients reads): cuBLASLt stores
  /// it in bf16 (runtime/Abi.h's gemm kBf16 in Accumulate), half the bytes
  /// written and read again, and the nests read the bits widened; the f32
  /// buffer goes. The nests see the product rounded to bf16, as autocast's
  /// bf16 linear layers give theirs.
  void resultAsBits(func::CallOp call) {
    auto batch = constantArg(call, gemm::Batch), m = constantArg(call, gemm::M),
         n = constantArg(call, gemm::N), ldc = constantArg(call, gemm::Ldc),
         strideC = constantArg(call, gemm::StrideC),
         accumulate = constantArg(call, gemm::Accumulate), transA = constantArg(call, gemm::TransA),
         transB = constantArg(call, gemm::TransB);
    if (call.getNumOperands() != gemm::Count || !batch || !m || !n || !ldc || !strideC ||
        !accumulate || !transA || !transB || *accumulate != 0 || !(*transA & gemm::kBf16) ||
        !(*transB & gemm::kBf16) || *ldc != *n || (*batch > 1 && *strideC != *m * *n))
      return;
    Value root = ownBuffer(call, gemm::C, *batch * *m * *n);
    if (!root)
      return;
    MemRefType type = wholeF32Buffer(root);
    std::optional<SmallVector<Operation *>> users = usersAfter(root, call);
    if (!users || users->empty())
      return;
    // Each reader a generic reading the buffer, or a collapse of it, as an input.
    SmallVector<OpOperand *> reads;
    for (Operation *user : *users) {
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic || !generic.hasPureBufferSemantics() ||
          llvm::any_of(generic.getDpsInits(), [&](Value v) { return rootBuffer(v) == root; }))
        return;
      for (OpOperand *input : generic.getDpsInputOperands()) {
        if (rootBuffer(input->get()) != root)
          continue;
        auto collapse = input->get().getDefiningOp<memref::CollapseShapeOp>();
        if (input->get() != root && (!collapse || collapse.getSrc() != root))
          return;
        reads.push_back(input);
      }
    }
    OpBuilder b(call);
    Location loc = call.getLoc();
    Value bits = bitsBuffer(b, loc, type);
    SmallVector<Operation *> views;
    for (OpOperand *input : reads) {
      Value source = bits;
      if (auto collapse = input->get().getDefiningOp<memref::CollapseShapeOp>()) {
        source = b.create<memref::CollapseShapeOp>(loc, bits, collapse.getReassociationIndices());
        views.push_back(collapse);
      }
      readWidened(*input, source);
    }
    SmallVector<Value> args = llvm::to_vector(call.getOperands());
    args[gemm::C] = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, bits);
    args[gemm::Accumulate] = b.create<arith::ConstantIndexOp>(loc, gemm::kBf16);
    callWithBits(call, args, {});
    eraseUnused(views); // (and the f32 buffer, then unused)
  }

  /// A QKV projection that only attention calls read after it, as their
  /// q, k and v (tfc_cuda_sgemm_fused of bf16 A and B with a bias alone,
  /// into a buffer of its own that it fills; the tensor-core kernels' heads,
  /// rows 8-byte aligned): cuBLASLt stores it in bf16 (runtime/Abi.h's gemm
  /// kBf16 in Accumulate), its bias a bf16 copy of the parameter (a bf16 D
  /// takes a bf16 bias, as autocast's bf16 linear layers add theirs), and
  /// the attention calls read the bits (attention kQkvBf16): half the bytes
  /// written and read, and the kernels, which round q, k and v to bf16 as
  /// they stage them, see the bias's rounding alone as new. The f32 buffer
  /// goes.
  void qkvAsBits(func::CallOp call) {
    auto batch = constantArg(call, gemm::Batch), m = constantArg(call, gemm::M),
         n = constantArg(call, gemm::N), ldc = constantArg(call, gemm::Ldc),
         accumulate = constantArg(call, gemm::Accumulate), transA = constantArg(call, gemm::TransA),
         transB = constantArg(call, gemm::TransB), activation = constantArg(call, gemm::Activation),
         residual = constantArg(call, gemm::Residual), aux = constantArg(call, gemm::Aux);
    if (call.getNumOperands() != gemm::FusedCount || !batch || *batch != 1 || !m || !n || !ldc ||
        *ldc != *n || !accumulate || *accumulate != 0 || !transA || !(*transA & gemm::kBf16) ||
        !transB || !(*transB & gemm::kBf16) || !activation || *activation != gemm::kNoActivation ||
        !residual || *residual != 0 || !aux || *aux != 0)
      return;
    std::optional<Pointee> bias = pointeeOf(call.getOperand(gemm::Bias));
    Value root = ownBuffer(call, gemm::C, *m * *n);
    if (!bias || !root)
      return;
    std::optional<SmallVector<Operation *>> users = usersAfter(root, call);
    if (!users || users->empty())
      return;
    // Each reader an attention call taking the buffer as q, k and v alone,
    // on heads the tensor-core kernels take, with rows they load 8 bytes
    // at a time (dO's 16) and f32 inputs so far.
    auto aligned = rowsOfFour;
    for (Operation *user : *users) {
      auto reader = dyn_cast<func::CallOp>(user);
      const bool backward = reader && isAttention(reader, true);
      if (!reader || !(backward || isAttention(reader, false)))
        return;
      auto d = constantArg(reader, 4), dv = constantArg(reader, 5),
           inputs = constantArg(reader, reader.getNumOperands() - 1);
      if (!d || !dv || !tfc::rt::cuda::kernels::attentionTensorCoreShape(*d, *dv) || !inputs ||
          *inputs != 0 || (backward && !aligned(reader, attention::kForwardInputs)))
        return;
      for (auto [i, arg] : llvm::enumerate(reader.getOperands())) {
        std::optional<RuntimePointer> p = runtimePointer(arg);
        if (!p || rootBuffer(p->buffer) != root)
          continue;
        if (i != attentionTensor(0) && i != attentionTensor(1) && i != attentionTensor(2))
          return;
      }
      for (unsigned t = 0; t < 3; ++t)
        if (!aligned(reader, t))
          return;
    }
    const Matrices biasRow{bias->buffer, rootBuffer(bias->buffer), bias->offset, 1, *n, *n, 0, 1};
    Value biasBits = parameterCopy(call, biasRow);
    if (!biasBits)
      return;
    Location loc = call.getLoc();
    Value base = productInBf16(call, root, biasBits);
    for (Operation *user : *users) {
      auto reader = cast<func::CallOp>(user);
      OpBuilder rb(reader);
      SmallVector<Value> readerArgs = llvm::to_vector(reader.getOperands());
      for (unsigned t = 0; t < 3; ++t) {
        const int64_t offset = pointeeOf(reader.getOperand(attentionTensor(t)))->offset;
        readerArgs[attentionTensor(t)] = bitsAddress(rb, loc, base, offset);
      }
      readerArgs.back() = rb.create<arith::ConstantIndexOp>(loc, attention::kQkvBf16);
      callWithBits(reader, readerArgs, {}); // (the last one the f32 buffer too)
    }
  }

  /// Whether tensor `t` of the attention call `c` starts each head's rows
  /// on a multiple of 4 elements (its offset and strides constants): 8
  /// bytes of bf16 bits, 16 of f32, as the tensor-core kernels load them.
  static bool rowsOfFour(func::CallOp c, unsigned t) {
    std::optional<Pointee> p = pointeeOf(c.getOperand(attentionTensor(t)));
    if (!p || p->offset % 4)
      return false;
    for (unsigned i = 1; i < attention::kPerTensor; ++i)
      if (auto stride = constantArg(c, attentionTensor(t) + i); !stride || *stride % 4)
        return false;
    return true;
  }

  /// The input gradient of an out projection (attention's output through
  /// a linear layer) that only attention backwards read after it, as
  /// their dO (tfc_cuda_sgemm of bf16 A and B, no epilogue, into a buffer
  /// of its own that it fills), where they already read q, k and v as bf16
  /// bits (qkvAsBits): cuBLASLt stores it in bf16 and the backwards read
  /// the bits (attention kDoBf16), half the bytes written and read (dkv
  /// reads each head's dO once per 64 keys). The kernels, which round dO
  /// to bf16 as they stage it, see it so in dO . out alone, as
  /// FlashAttention's bf16 backward does. The f32 buffer goes.
  void doutAsBits(func::CallOp call) {
    auto batch = constantArg(call, gemm::Batch), m = constantArg(call, gemm::M),
         n = constantArg(call, gemm::N), ldc = constantArg(call, gemm::Ldc),
         accumulate = constantArg(call, gemm::Accumulate), transA = constantArg(call, gemm::TransA),
         transB = constantArg(call, gemm::TransB);
    if (call.getNumOperands() != gemm::Count || !batch || *batch != 1 || !m || !n || !ldc ||
        *ldc != *n || !accumulate || *accumulate != 0 || !transA || !(*transA & gemm::kBf16) ||
        !transB || !(*transB & gemm::kBf16))
      return;
    Value root = ownBuffer(call, gemm::C, *m * *n);
    if (!root)
      return;
    std::optional<SmallVector<Operation *>> users = usersAfter(root, call);
    if (!users || users->empty())
      return;
    const unsigned dout = attentionTensor(attention::kForwardInputs);
    for (Operation *user : *users) {
      auto reader = dyn_cast<func::CallOp>(user);
      if (!reader || !isAttention(reader, true))
        return;
      auto inputs = constantArg(reader, reader.getNumOperands() - 1);
      if (!inputs || *inputs != attention::kQkvBf16 ||
          !rowsOfFour(reader, attention::kForwardInputs))
        return;
      for (auto [i, arg] : llvm::enumerate(reader.getOperands())) {
        std::optional<RuntimePointer> p = runtimePointer(arg);
        if (p && rootBuffer(p->buffer) == root && i != dout)
          return;
      }
    }
    Location loc = call.getLoc();
    Value base = productInBf16(call, root);
    for (Operation *user : *users) {
      auto reader = cast<func::CallOp>(user);
      OpBuilder rb(reader);
      SmallVector<Value> readerArgs = llvm::to_vector(reader.getOperands());
      readerArgs[dout] = bitsAddress(rb, loc, base, pointeeOf(reader.getOperand(dout))->offset);
      readerArgs.back() =
          rb.create<arith::ConstantIndexOp>(loc, attention::kQkvBf16 | attention::kDoBf16);
      callWithBits(reader, readerArgs, {}); // (the last one the f32 buffer too)
    }
  }

  /// A layer norm forward with its ReLU that stores y's bf16 bits beside y
  /// (layerNormCopy: the output net's activation, the classifier's
  /// operand) where nothing after it reads y but copies of all of it (the
  /// classifier's weight gradient) and layer norm backwards taking all of
  /// it as their gate (its ReLU's gradient): the forward stores the bits
  /// alone, kept for the backward in y's place at half its bytes; the
  /// copies become them and the backwards read their gate from them
  /// (runtime/Abi.h's GateBits: the same answer but for positives of at
  /// most 2^-134, which round to a bf16 zero, as keepOnlyBits' sign tests),
  /// and y goes.
  void gateAsBits(func::CallOp forward) {
    namespace lnb = layer_norm_backward;
    auto rows = constantArg(forward, layer_norm::Rows), d = constantArg(forward, layer_norm::D),
         relu = constantArg(forward, layer_norm::Relu);
    std::optional<RuntimePointer> bits = runtimePointer(forward.getOperand(layer_norm::Y16));
    if (!rows || !d || !relu || *relu == 0 || !bits || bits->bytes != 0)
      return;
    const int64_t elements = *rows * *d;
    auto bitsType = dyn_cast<MemRefType>(bits->buffer.getType());
    Value root = ownBuffer(forward, layer_norm::Y, elements);
    if (!bitsType || !bitsType.getLayout().isIdentity() || !bitsType.hasStaticShape() ||
        bitsType.getNumElements() != elements || !root)
      return;
    std::optional<SmallVector<Operation *>> users = usersAfter(root, forward);
    if (!users)
      return;
    SmallVector<linalg::GenericOp> casts;
    SmallVector<func::CallOp> gated;
    for (Operation *user : *users) {
      auto copying = dyn_cast<linalg::GenericOp>(user);
      if (copying && copying->hasAttr(kBf16CastAttr) && copiesWhole(copying, elements)) {
        casts.push_back(copying);
        continue;
      }
      auto backward = dyn_cast<func::CallOp>(user);
      auto backwardRows = backward && isLayerNormBackward(backward)
                              ? constantArg(backward, lnb::Rows)
                              : std::nullopt;
      auto backwardD = backwardRows ? constantArg(backward, lnb::D) : std::nullopt;
      auto gateBits = backwardD ? constantArg(backward, lnb::GateBits) : std::nullopt;
      if (!gateBits || *gateBits != 0 || *backwardRows * *backwardD != elements)
        return;
      // y there as the gate, from its start, and nowhere else.
      for (auto [i, arg] : llvm::enumerate(backward.getOperands()))
        if (std::optional<RuntimePointer> p = runtimePointer(arg);
            p && rootBuffer(p->buffer) == root && (i != lnb::Gate || p->bytes != 0))
          return;
      gated.push_back(backward);
    }
    if (gated.empty())
      return; // (copies alone: reusableCopy shares the bits already)
    // The bits, now read to the last backward, written by the forward alone.
    Value bitsRoot = rootBuffer(bits->buffer);
    if (!bitsRoot.getDefiningOp<memref::AllocOp>())
      return;
    for (Operation *op = forward->getNextNode(); op != gated.back().getOperation();
         op = op->getNextNode()) {
      SmallVector<BufferAccess> accesses;
      if (!bufferAccessesOf(op, accesses, /*knownReads=*/true) ||
          llvm::any_of(accesses,
                       [&](const BufferAccess &a) { return a.write && a.root == bitsRoot; }))
        return;
    }
    for (func::CallOp backward : gated) {
      OpBuilder b(backward);
      Location loc = backward.getLoc();
      SmallVector<Value> args = llvm::to_vector(backward.getOperands());
      args[lnb::Gate] = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, bits->buffer);
      args[lnb::GateBits] = b.create<arith::ConstantIndexOp>(loc, 1);
      callWithBits(backward, args, {});
    }
    OpBuilder b(forward);
    SmallVector<Value> args = llvm::to_vector(forward.getOperands());
    args[layer_norm::Y] = b.create<arith::ConstantIndexOp>(forward.getLoc(), 0);
    SmallVector<std::pair<linalg::GenericOp, Value>> copies;
    for (linalg::GenericOp copying : casts)
      copies.push_back({copying, bits->buffer});
    callWithBits(forward, args, copies); // (y's buffer, then unused, goes too)
  }

  /// A train step's loss and gradient in one call whose dlogits (f32, a
  /// buffer of its own) nothing after the call reads but copies of all of
  /// it (the output layer's weight and input gradients' products): the
  /// kernel stores the bits alone (runtime/Abi.h's cross_entropy_fused),
  /// which the copies become, and the f32 buffer goes.
  void dlogitsAsBits(func::CallOp loss) {
    namespace cef = cross_entropy_fused;
    auto bitsFlag = constantArg(loss, cef::DlogitsBits), outer = constantArg(loss, cef::Outer),
         classes = constantArg(loss, cef::Classes), inner = constantArg(loss, cef::Inner);
    if (!bitsFlag || *bitsFlag != 0 || !outer || !classes || !inner)
      return;
    if (std::optional<OwnCopies> own =
            onlyCopiesRead(loss, cef::Dlogits, *outer * *classes * *inner))
      storeBits(loss, *own, cef::Dlogits, cef::DlogitsBits);
  }

  /// `ops` and what they are made from (through operands), where they touch
  /// no memory and nothing uses them: the f32 pointers, views and buffers.
  static void eraseUnused(SmallVector<Operation *> ops) {
    llvm::SetVector<Operation *> candidates;
    while (!ops.empty()) {
      Operation *op = ops.pop_back_val();
      if (!touchesNoMemory(op) || !candidates.insert(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *source = operand.getDefiningOp())
          ops.push_back(source);
    }
    llvm::DenseSet<Operation *> erased;
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation *op : candidates)
        if (!erased.contains(op) && op->use_empty()) {
          erased.insert(op);
          op->erase();
          changed = true;
        }
    }
  }

  /// The bf16 copy of a parameter's `matrices` (an argument of the entry
  /// block that calls), made at the block's start beside the other parameters'
  /// copies when nothing before `call` may write the parameter: adjacent
  /// and independent, tf-group-loops and tf-merge-launches make them one
  /// launch where each made before its product was a launch of its own
  /// (the medium encoder's 25 weights). They are small and every one is
  /// read again by the backward, so they are held across the step anyway.
  /// Null where the copy is made before `call`.
  Value parameterCopy(func::CallOp call, const Matrices &matrices) {
    auto parameter = dyn_cast<BlockArgument>(matrices.root);
    Block *block = call->getBlock();
    if (!parameter || parameter.getOwner() != block || !isParameter(parameter))
      return {};
    for (Operation &op : *block) {
      if (&op == call.getOperation())
        break;
      if (mayWrite(&op, matrices.root))
        return {};
    }
    OpBuilder b(call.getContext());
    auto last = lastParameterCopy.find(block);
    if (last == lastParameterCopy.end())
      b.setInsertionPointToStart(block);
    else
      b.setInsertionPointAfter(last->second);
    // The root, not the view the call's pointer is of (made later in the
    // block): they share the aligned pointer `matrices.offset` counts from.
    Matrices atStart = matrices;
    atStart.source = matrices.root;
    Value bits = makeCopy(b, call.getLoc(), atStart);
    lastParameterCopy[block] = copies[matrices.key()].maker;
    return bits;
  }

  /// The bf16 copy of an activation's `matrices` made right after the loop
  /// nest nearest before `call`, where runtime calls (products, the layer
  /// norm's backward) and other copies that do not write the matrices lie
  /// between: two nests side by side, which tf-group-loops and
  /// tf-merge-launches run as one launch where independent (attention's
  /// output copied again in the backward, beside the ReLU's gradient
  /// before the FFN's last products). Failing such a nest, right after the
  /// nearest copy nest with calls between. The copy is held across those
  /// calls. Null where there is neither.
  Value copyBesideNest(func::CallOp call, const Matrices &matrices) {
    Operation *nest = nullptr, *copyNest = nullptr;
    bool calls = false; // else the nest and the copy would be side by side already
    for (Operation *op = call->getPrevNode(); op; op = op->getPrevNode()) {
      if (isa<linalg::LinalgOp>(op) && !op->hasAttr(kBf16CastAttr)) {
        nest = calls ? op : nullptr;
        break;
      }
      if (isa<linalg::LinalgOp>(op)) { // a copy (of other matrices: it writes its own buffer)
        copyNest = copyNest ? copyNest : (calls ? op : nullptr);
        continue;
      }
      if (mayWrite(op, matrices.root) || !(betweenAdjacent(op) || isa<func::CallOp>(op)))
        break;
      calls = calls || isa<func::CallOp>(op);
    }
    nest = nest ? nest : copyNest;
    if (!nest)
      return {};
    // The matrices' view may be made after the nest: the copy then reads
    // the buffer itself (the same aligned pointer), made before it.
    Matrices beside = matrices;
    auto before = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def ? def->getBlock() == nest->getBlock() && def->isBeforeInBlock(nest)
                 : cast<BlockArgument>(v).getOwner() == nest->getBlock();
    };
    if (!before(beside.source))
      beside.source = beside.root;
    if (!before(beside.source))
      return {};
    OpBuilder b(call.getContext());
    b.setInsertionPointAfter(nest);
    return makeCopy(b, call.getLoc(), beside);
  }

  /// The bf16 copy of `matrices`, made at `b`'s insertion point.
  Value makeCopy(OpBuilder &b, Location loc, const Matrices &matrices) {
    SmallVector<int64_t> shape = {matrices.rows, matrices.cols}, strides = {matrices.ld, 1};
    if (matrices.items > 1) {
      shape.insert(shape.begin(), matrices.items);
      strides.insert(strides.begin(), matrices.stride);
    }
    // Contiguous from the buffer's start: an identity layout, which
    // tf-map-to-gpu reads 4 elements at a time (a strided one an element).
    MLIRContext *context = b.getContext();
    const bool contiguous = matrices.offset == 0 && strides == computeStrides(shape);
    auto viewType =
        contiguous ? MemRefType::get(shape, b.getF32Type())
                   : MemRefType::get(shape, b.getF32Type(),
                                     StridedLayoutAttr::get(context, matrices.offset, strides));
    Value view = b.create<memref::ReinterpretCastOp>(loc, viewType, matrices.source,
                                                     matrices.offset, shape, strides);
    // 16-byte aligned rows and batches for cuBLASLt where the shape allows.
    Value bits = b.create<memref::AllocOp>(loc, MemRefType::get(shape, b.getI16Type()),
                                           b.getI64IntegerAttr(64));
    linalg::GenericOp cast = castToBf16(b, loc, view, bits);
    copies[matrices.key()] = Copy{cast, bits};
    return bits;
  }

  std::map<decltype(std::declval<Matrices>().key()), Copy> copies;

  /// The last copy parameterCopy made at each block's start.
  llvm::DenseMap<Block *, Operation *> lastParameterCopy;

  SmallVector<Produced> produced;
};

} // namespace
