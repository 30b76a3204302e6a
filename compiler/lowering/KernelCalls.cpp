//===- KernelCalls.cpp - tf ops a runtime has hand-written kernels for ---===//
//
// tf-lower-to-linalg (with kernels=cpu, the default, or kernels=cuda) hands
// these to the runtime instead of loops: attention without stored weights
// and its gradient (flash-attention style kernels reading the heads in
// place) and the layer-norm backward, to the CPU's (runtime/cpu/) or their
// GPU twins (runtime/cuda/kernels/: the same C types and arguments, on
// device memory), and on the CPU dropout's masks (Philox, as the interpreter
// draws them; the CUDA target draws them in generated code). On the GPU the
// layer norm's forward and the cross-entropy loss also go to kernels (a
// warp a row, where generated code makes two reductions and a pass, each a
// launch), and a train step's loss and its gradient of the same logits are
// one call (each row read once); the CPU generates those loops. A backend
// without such kernels decomposes the first three with tf-decompose.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/KernelCalls.h"
#include "compiler/lowering/LinalgBuilders.h"
#include "dialect/TfDialect.h"
#include "runtime/Abi.h"
#include "runtime/Philox.h"
#include "runtime/cuda/kernels/KernelMath.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace tfc;

namespace {

/// The symbols of one runtime's kernels.
struct KernelSymbols {
  StringRef attentionForward, attentionBackward, layerNormBackward;
  /// Only the CUDA runtime's (the CPU generates these loops itself).
  StringRef layerNormForward = {}, crossEntropy = {}, crossEntropyBackward = {},
            crossEntropyFused = {};
};

KernelSymbols symbolsOf(KernelRuntime runtime) {
  using abi::RuntimeFunction;
  auto name = [](RuntimeFunction f) -> StringRef { return abi::symbol(f); };
  if (runtime == KernelRuntime::Cuda)
    return {name(RuntimeFunction::CudaAttentionForward),
            name(RuntimeFunction::CudaAttentionBackward),
            name(RuntimeFunction::CudaLayerNormBackward),
            name(RuntimeFunction::CudaLayerNormForward),
            name(RuntimeFunction::CudaCrossEntropy),
            name(RuntimeFunction::CudaCrossEntropyBackward),
            name(RuntimeFunction::CudaCrossEntropyFused)};
  return {name(RuntimeFunction::AttentionForward), name(RuntimeFunction::AttentionBackward),
          name(RuntimeFunction::LayerNormBackward)};
}

/// Declares a runtime attention kernel (runtime/cpu/Attention.h) taking the
/// sizes (outer, inner, tq, tk, d, dv), the scale, per input its pointer and
/// strides (outer, inner, row), the same per output, then `trailing` more
/// (what a forward leaves its backward): all indices but the f32 scale.
void declareAttentionKernel(ModuleOp module, StringRef name, unsigned inputs, unsigned outputs,
                            unsigned trailing) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder b(module.getBodyRegion());
  SmallVector<Type> args(abi::attention::kSizes, b.getIndexType());
  args.push_back(b.getF32Type());
  args.append(abi::attention::kPerTensor * (inputs + outputs) + trailing, b.getIndexType());
  b.create<func::FuncOp>(module.getLoc(), name, b.getFunctionType(args, {})).setPrivate();
}

/// Where the elements of a tensor sit in the buffer of `root`, a tensor its
/// producers only re-index: element i is at offset + Σ i_d strides_d.
struct View {
  Value root;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
};

SmallVector<int64_t> contiguousStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

bool isContiguous(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides) {
  SmallVector<int64_t> dense = contiguousStrides(shape);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && strides[i] != dense[i])
      return false;
  return true;
}

/// Looks through slices, transposes, broadcasts and reshapes of a contiguous
/// view, so a kernel reads q, k and v where the QKV projection wrote them
/// (the heads' transposes and slices are never materialised).
View viewOf(Value value) {
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  Operation *producer = value.getDefiningOp();
  if (auto slice = dyn_cast_or_null<tf::SliceOp>(producer)) {
    View view = viewOf(slice.getX());
    for (auto [i, start] : llvm::enumerate(slice.getStart())) {
      view.offset += start * view.strides[i];
      view.strides[i] *= slice.getStride()[i];
    }
    return view;
  }
  if (auto transpose = dyn_cast_or_null<tf::TransposeOp>(producer)) {
    View view = viewOf(transpose.getX());
    SmallVector<int64_t> strides;
    for (int64_t source : transpose.getPerm())
      strides.push_back(view.strides[source]);
    view.strides = strides;
    return view;
  }
  if (auto broadcast = dyn_cast_or_null<tf::BroadcastInDimOp>(producer)) {
    View view = viewOf(broadcast.getX());
    auto sourceShape = cast<RankedTensorType>(broadcast.getX().getType()).getShape();
    SmallVector<int64_t> strides(shape.size(), 0);
    for (auto [i, dim] : llvm::enumerate(broadcast.getDims()))
      strides[dim] = sourceShape[i] == 1 ? 0 : view.strides[i];
    view.strides = strides;
    return view;
  }
  if (auto reshape = dyn_cast_or_null<tf::ReshapeOp>(producer)) {
    View view = viewOf(reshape.getX());
    auto sourceShape = cast<RankedTensorType>(reshape.getX().getType()).getShape();
    if (isContiguous(sourceShape, view.strides)) {
      view.strides = contiguousStrides(shape);
      return view;
    }
  }
  return {value, contiguousStrides(shape), 0};
}

/// Calls one of the kernels. Operands are read in place through their view
/// (bufferization copies a root that is not contiguous); results are written
/// into fresh buffers (see Destinations).
struct AttentionCall {
  OpBuilder &b;
  Location loc;
  ArrayRef<int64_t> batchShape; // the operands' leading dims
  SmallVector<Value> args = {};
  SmallVector<Value> outputs = {};

  Value index(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }

  /// The batch dims the kernel loops over, size-1 dims left out: the last
  /// is `inner`, the others merge into `outer`.
  SmallVector<unsigned> batchDims() const {
    SmallVector<unsigned> dims;
    for (auto [i, size] : llvm::enumerate(batchShape))
      if (size != 1)
        dims.push_back(i);
    return dims;
  }

  void addSizes(Value q, Value k, Value v, APFloat scale) {
    auto qt = cast<RankedTensorType>(q.getType());
    auto kt = cast<RankedTensorType>(k.getType());
    auto vt = cast<RankedTensorType>(v.getType());
    int64_t rank = qt.getRank();
    SmallVector<unsigned> dims = batchDims();
    int64_t inner = dims.empty() ? 1 : batchShape[dims.back()];
    int64_t outer = qt.getNumElements() / (inner * qt.getDimSize(rank - 2) * qt.getDimSize(rank - 1));
    args = {index(outer), index(inner), index(qt.getDimSize(rank - 2)),
            index(kt.getDimSize(rank - 2)), index(qt.getDimSize(rank - 1)),
            index(vt.getDimSize(rank - 1)),
            b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(scale.convertToFloat()))};
  }

  /// The kernel strides (outer, inner, row) of a view, if its last dim is
  /// contiguous and its outer batch dims merge into one stride.
  std::optional<std::array<int64_t, 3>> kernelStrides(const View &view, int64_t rank) {
    if (view.strides[rank - 1] != 1)
      return std::nullopt;
    SmallVector<unsigned> dims = batchDims();
    std::array<int64_t, 3> strides = {0, 0, view.strides[rank - 2]};
    if (!dims.empty())
      strides[1] = view.strides[dims.back()];
    if (dims.size() >= 2) {
      strides[0] = view.strides[dims[dims.size() - 2]];
      for (size_t j = 0; j + 2 < dims.size(); ++j)
        if (view.strides[dims[j]] != view.strides[dims[j + 1]] * batchShape[dims[j + 1]])
          return std::nullopt;
    }
    return strides;
  }

  void addPointerAndStrides(Value root, int64_t offset, std::array<int64_t, 3> strides) {
    auto type = cast<RankedTensorType>(root.getType());
    Value buffer = b.create<bufferization::ToMemrefOp>(
        loc, MemRefType::get(type.getShape(), type.getElementType()), root,
        /*read_only=*/true);
    Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
    int64_t elementBytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    args.push_back(offset ? b.create<arith::AddIOp>(loc, base, index(offset * elementBytes))
                          : base);
    for (int64_t stride : strides)
      args.push_back(index(stride));
  }

  void addInput(Value tensor) {
    int64_t rank = cast<RankedTensorType>(tensor.getType()).getRank();
    View view = viewOf(tensor);
    if (auto strides = kernelStrides(view, rank))
      return addPointerAndStrides(view.root, view.offset, *strides);
    View dense{tensor, contiguousStrides(cast<RankedTensorType>(tensor.getType()).getShape())};
    addPointerAndStrides(tensor, 0, *kernelStrides(dense, rank));
  }

  void addMask(Value mask) {
    if (!mask) {
      args.append(4, index(0));
      return;
    }
    addInput(mask);
  }

  /// A fresh contiguous buffer for a result.
  void addOutput(Type type) {
    auto tensorType = cast<RankedTensorType>(type);
    Value buffer = b.create<memref::AllocOp>(
        loc, MemRefType::get(tensorType.getShape(), tensorType.getElementType()));
    args.push_back(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer));
    View dense{Value(), contiguousStrides(tensorType.getShape())};
    std::array<int64_t, 3> strides = *kernelStrides(dense, tensorType.getRank());
    for (int64_t stride : strides)
      args.push_back(index(stride));
    outputs.push_back(buffer);
  }

  SmallVector<Value> call(StringRef kernel) {
    b.create<func::CallOp>(loc, kernel, TypeRange(), args);
    SmallVector<Value> results;
    for (Value buffer : outputs)
      results.push_back(b.create<bufferization::ToTensorOp>(loc, buffer, /*restrict=*/true,
                                                            /*writable=*/true));
    return results;
  }
};

ArrayRef<int64_t> batchShapeOf(Value q) {
  return cast<RankedTensorType>(q.getType()).getShape().drop_back(2);
}

/// What a forward call leaves its backward (the CUDA kernels read each
/// row's maximum and sum instead of recomputing them, and D as dO . out):
/// where its out is (a tensor holding it, and the view of it there) and its
/// row statistics (16 bytes a (head, query row), abi::attention).
struct SavedAttention {
  Value outRoot;
  int64_t outOffset = 0;
  std::array<int64_t, 3> outStrides = {};
  Value stats;
};

/// Where a kernel writes its results when their readers only lay them out
/// again (the heads merged back: a concatenation of exactly these results,
/// then a transpose, then reshapes): one fresh buffer holding `root`, the
/// last value of that chain, each result a strided view of it. The chain's
/// ops are then never materialised.
struct Destinations {
  Value root; // null: a buffer per result
  SmallVector<Operation *> chain;
  SmallVector<View> views; // per result
};

Destinations destinationsOf(Operation *op, AttentionCall &call) {
  ResultRange results = op->getResults();
  if (llvm::any_of(results, [](Value r) { return !r.hasOneUse(); }))
    return {};
  Destinations dest;
  Value current = results[0];
  auto concat = dyn_cast<tf::ConcatOp>(*current.getUsers().begin());
  if (concat && concat.getInputs().size() == results.size() &&
      llvm::all_of(concat.getInputs(), [&](Value in) { return in.getDefiningOp() == op; })) {
    dest.chain.push_back(concat);
    current = concat.getResult();
  } else if (results.size() != 1) {
    return {};
  } else {
    concat = nullptr;
  }
  if (current.hasOneUse())
    if (auto transpose = dyn_cast<tf::TransposeOp>(*current.getUsers().begin())) {
      dest.chain.push_back(transpose);
      current = transpose.getResult();
    }
  while (current.hasOneUse()) {
    auto reshape = dyn_cast<tf::ReshapeOp>(*current.getUsers().begin());
    if (!reshape)
      break;
    dest.chain.push_back(reshape);
    current = reshape.getResult();
  }
  if (dest.chain.empty())
    return {};
  // From the root's contiguous buffer back to the results: a reshape's input
  // is contiguous too (reshapes only follow the transpose), a transpose
  // permutes the strides, a concatenation offsets each piece along its axis.
  SmallVector<int64_t> strides =
      contiguousStrides(cast<RankedTensorType>(current.getType()).getShape());
  for (Operation *link : llvm::reverse(dest.chain)) {
    if (auto reshape = dyn_cast<tf::ReshapeOp>(link)) {
      strides = contiguousStrides(cast<RankedTensorType>(reshape.getX().getType()).getShape());
    } else if (auto transpose = dyn_cast<tf::TransposeOp>(link)) {
      SmallVector<int64_t> input(strides.size());
      for (auto [i, source] : llvm::enumerate(transpose.getPerm()))
        input[source] = strides[i];
      strides = input;
    }
  }
  dest.views.assign(results.size(), View{Value(), strides, 0});
  if (concat) {
    int64_t axis = concat.getAxis(), at = 0;
    for (Value input : concat.getInputs()) {
      View &view = dest.views[cast<OpResult>(input).getResultNumber()];
      view.offset = at * strides[axis];
      at += cast<RankedTensorType>(input.getType()).getDimSize(axis);
    }
  }
  for (auto [result, view] : llvm::zip(results, dest.views))
    if (!call.kernelStrides(view, cast<RankedTensorType>(result.getType()).getRank()))
      return {};
  dest.root = current;
  return dest;
}

/// Lowers one tf.attention (weights not a result) or tf.attention_grad to
/// its kernel call, before the conversion: the call may also take the place
/// of the ops that lay its results out again. A forward whose backward
/// follows (`save`) stores its statistics and says where they and its out
/// are; a backward given them (`saved`) passes them on. Else the trailing
/// arguments are 0.
void lowerFusedAttention(Operation *op, const KernelSymbols &symbols, SavedAttention *save,
                         const SavedAttention *saved, bool attentionDs, bool tensorCoreAttention) {
  OpBuilder b(op);
  auto attention = dyn_cast<tf::AttentionOp>(op);
  auto grad = dyn_cast<tf::AttentionGradOp>(op);
  Value q = attention ? attention.getQ() : grad.getQ();
  Value k = attention ? attention.getK() : grad.getK();
  Value v = attention ? attention.getV() : grad.getV();
  AttentionCall call{b, op->getLoc(), batchShapeOf(q)};
  call.addSizes(q, k, v, attention ? attention.getScale() : grad.getScale());
  for (Value operand : {q, k, v})
    call.addInput(operand);
  call.addMask(attention ? attention.getMask() : grad.getMask());
  if (grad)
    call.addInput(grad.getDvalues());
  StringRef kernel = attention ? symbols.attentionForward : symbols.attentionBackward;
  // After the outputs: the forward's stats, or the backward's out and stats
  // (and dS's room), then the forward's out16 or the backward's gradsBf16,
  // 0: its outputs f32 alone, and inputsBf16, 0: q, k and v f32
  // (tf-bf16-gemm-operands may store either bf16).
  Value statsBuffer;
  auto addTrailing = [&] {
    if (attention && save) {
      int64_t rows = cast<RankedTensorType>(q.getType()).getNumElements() /
                     cast<RankedTensorType>(q.getType()).getShape().back();
      statsBuffer = b.create<memref::AllocOp>(
          op->getLoc(),
          MemRefType::get({rows, abi::attention::kRowStatsBytes / 4}, b.getF32Type()));
      call.args.push_back(
          b.create<memref::ExtractAlignedPointerAsIndexOp>(op->getLoc(), statsBuffer));
    } else if (grad && saved && saved->stats) {
      call.addPointerAndStrides(saved->outRoot, saved->outOffset, saved->outStrides);
      auto type = cast<RankedTensorType>(saved->stats.getType());
      Value buffer = b.create<bufferization::ToMemrefOp>(
          op->getLoc(), MemRefType::get(type.getShape(), type.getElementType()), saved->stats,
          /*read_only=*/true);
      call.args.push_back(b.create<memref::ExtractAlignedPointerAsIndexOp>(op->getLoc(), buffer));
      // dS: heads x tq rows of dsRow(tk) f32, the call's alone, for the
      // fp32 kernels (their dq then skips the scores); none where the
      // tensor-core kernels take the heads (the runtime picks the kernels
      // by the same rule: on an H200 their dq gained nothing from a stored
      // dS, and dkv lost the time to store it), none past kDsMaxBytes.
      auto qt = cast<RankedTensorType>(q.getType()), kt = cast<RankedTensorType>(k.getType()),
           vt = cast<RankedTensorType>(v.getType());
      const bool tensorCores =
          tensorCoreAttention &&
          rt::cuda::kernels::attentionTensorCoreShape(qt.getShape().back(), vt.getShape().back());
      const int64_t rows = qt.getNumElements() / qt.getShape().back(),
                    pitch = abi::attention::dsRow(kt.getDimSize(kt.getRank() - 2));
      if (attentionDs && !tensorCores && rows * pitch * 4 <= abi::attention::kDsMaxBytes) {
        Value ds =
            b.create<memref::AllocOp>(op->getLoc(), MemRefType::get({rows, pitch}, b.getF32Type()));
        call.args.push_back(b.create<memref::ExtractAlignedPointerAsIndexOp>(op->getLoc(), ds));
      } else {
        call.args.push_back(call.index(0));
      }
    } else {
      call.args.append(attention ? abi::attention::kForwardTrailing - 2
                                 : abi::attention::kBackwardTrailing - 2,
                       call.index(0));
    }
    call.args.push_back(call.index(0)); // out16 or gradsBf16
    call.args.push_back(call.index(0)); // inputsBf16
  };
  // The call, then the forward's stats as a tensor its backward reads.
  auto emitCall = [&] {
    SmallVector<Value> results = call.call(kernel);
    if (statsBuffer)
      save->stats = b.create<bufferization::ToTensorOp>(op->getLoc(), statsBuffer,
                                                        /*restrict=*/true, /*writable=*/true);
    return results;
  };

  Destinations dest = destinationsOf(op, call);
  if (!dest.root) {
    for (Value result : op->getResults())
      call.addOutput(result.getType());
    addTrailing();
    SmallVector<Value> results = emitCall();
    if (attention && save) {
      auto type = cast<RankedTensorType>(results[0].getType());
      View dense{Value(), contiguousStrides(type.getShape())};
      save->outRoot = results[0];
      save->outStrides = *call.kernelStrides(dense, type.getRank());
    }
    op->replaceAllUsesWith(results);
    op->erase();
    return;
  }
  auto rootType = cast<RankedTensorType>(dest.root.getType());
  Value buffer = b.create<memref::AllocOp>(
      op->getLoc(), MemRefType::get(rootType.getShape(), rootType.getElementType()));
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(op->getLoc(), buffer);
  for (auto [result, view] : llvm::zip(op->getResults(), dest.views)) {
    int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
    call.args.push_back(view.offset ? b.create<arith::AddIOp>(op->getLoc(), base,
                                                              call.index(view.offset * 4))
                                    : base);
    std::array<int64_t, 3> strides = *call.kernelStrides(view, rank);
    for (int64_t stride : strides)
      call.args.push_back(call.index(stride));
  }
  call.outputs.push_back(buffer);
  addTrailing();
  Value root = emitCall()[0];
  if (attention && save) {
    save->outRoot = root;
    save->outOffset = dest.views[0].offset;
    save->outStrides = *call.kernelStrides(
        dest.views[0], cast<RankedTensorType>(op->getResult(0).getType()).getRank());
  }
  dest.root.replaceAllUsesWith(root);
  for (Operation *link : llvm::reverse(dest.chain))
    link->erase();
  op->erase();
}

/// Calls the runtime function `name` (declared at the module's end on first
/// use, its parameters the types of `args`, no results).
void callRuntime(OpBuilder &b, Location loc, Operation *from, StringRef name, ValueRange args) {
  auto module = from->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol(name)) {
    OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
    top.create<func::FuncOp>(loc, name, top.getFunctionType(args.getTypes(), {})).setPrivate();
  }
  b.create<func::CallOp>(loc, name, TypeRange(), args);
}

/// Rows per block of tfc_layer_norm_backward's dgamma and dbeta sums on
/// the CPU (a thread a block); the GPU's is kLayerNormBackwardBlockRows.
constexpr int64_t kLayerNormBlockRows = 64;

/// The arguments of a row kernel's call (layer norm, cross-entropy): sizes,
/// scalars, and tensors by their contiguous buffers' addresses.
struct RowKernelCall {
  OpBuilder &b;
  Location loc;
  SmallVector<Value> args = {};
  SmallVector<Value> outputs = {};

  void addIndex(int64_t v) { args.push_back(b.create<arith::ConstantIndexOp>(loc, v)); }
  void addF32(float v) { args.push_back(b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(v))); }
  /// An input, read where bufferization puts it (copied if not contiguous).
  void addInput(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    Value buffer = b.create<bufferization::ToMemrefOp>(
        loc, MemRefType::get(type.getShape(), type.getElementType()), tensor, /*read_only=*/true);
    args.push_back(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer));
  }
  /// A fresh buffer; a result when `result` (else scratch).
  void addBuffer(ArrayRef<int64_t> shape, bool result) {
    Value buffer = b.create<memref::AllocOp>(loc, MemRefType::get(shape, b.getF32Type()));
    args.push_back(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer));
    if (result)
      outputs.push_back(buffer);
  }
  /// A training tf.dropout's draw as the layer norm kernels take it
  /// (runtime/Abi.h): the seed's and the sample offset's pointers (0: none),
  /// the sample size, the key, the threshold ceil(rate 2^32) and the f32
  /// 1 - rate, applyDropout's divisor; or, without `drop`, zeros and 1.
  void addDropout(tf::DropoutOp drop) {
    if (!drop) {
      for (int i = 0; i < 5; ++i)
        addIndex(0);
      addF32(1.0f);
      return;
    }
    const double rate = drop.getRate().convertToDouble();
    addInput(drop.getSeed());
    if (drop.getSampleOffset())
      addInput(drop.getSampleOffset());
    else
      addIndex(0);
    addIndex(drop.getSampleOffset() ? int64_t(*drop.getSampleSize()) : 0);
    addIndex(drop.getKeyAttr().getInt());
    addIndex(int64_t(dropoutThreshold(rate)));
    addF32(float(1.0 - rate));
  }
  /// Calls `kernel` and replaces `op`'s results by the result buffers;
  /// `after`, if any, runs after the call, before `op` goes.
  void callInstead(Operation *op, StringRef kernel, function_ref<void()> after = {}) {
    callRuntime(b, loc, op, kernel, args);
    for (auto [result, buffer] : llvm::zip(op->getResults(), outputs))
      if (buffer) // (null: an unread result the kernel does not store)
        result.replaceAllUsesWith(
            b.create<bufferization::ToTensorOp>(loc, buffer, /*restrict=*/true, /*writable=*/true));
    if (after)
      after();
    op->erase();
  }
};

/// Whether `value` is a constant splat of 0.0 (+0 only when `positive`).
bool isZeroSplat(Value value, bool positive) {
  ElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  auto splat = dyn_cast<SplatElementsAttr>(attr);
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return false;
  APFloat zero = splat.getSplatValue<APFloat>();
  return zero.isZero() && !(positive && zero.isNegative());
}

/// The ReLU output m of relu's gradient `select(m > 0, a, +0)`, the value
/// `select` yields, or null when it is some other select.
Value reluGateOf(tf::SelectOp select) {
  auto compare = select.getCond().getDefiningOp<tf::CompareOp>();
  if (!compare || compare.getPredicate() != tf::ComparePredicate::gt ||
      !isZeroSplat(compare.getRhs(), /*positive=*/false) ||
      !isZeroSplat(select.getOnFalse(), /*positive=*/true) ||
      compare.getLhs().getType() != select.getType())
    return {};
  return compare.getLhs();
}

/// Drops `select` (relu's gradient) for the adjoint it masks, and its
/// comparison when nothing else reads it.
void dropGate(tf::SelectOp select) {
  auto compare = select.getCond().getDefiningOp<tf::CompareOp>();
  select.replaceAllUsesWith(select.getOnTrue());
  select.erase();
  if (compare->use_empty())
    compare.erase();
}

/// A layer norm's adjoint `grad` that is relu's gradient, select(m > 0, a,
/// 0), behind reshapes and read by nothing else: at the function's level,
/// or the yield of a fusion (a GEMM's epilogue: the product's adjoint
/// masked). Returns m (a ReLU's output, the gate) and leaves `a` where the
/// select was: the backward kernel gates the adjoint as it reads it, and
/// the GEMM keeps no epilogue. Null, and nothing changed, otherwise.
Value takeReluGate(Value grad) {
  Value value = grad;
  while (auto reshape = value.getDefiningOp<tf::ReshapeOp>()) {
    if (!value.hasOneUse())
      return {};
    value = reshape.getX();
  }
  if (!value.hasOneUse())
    return {};
  if (auto select = value.getDefiningOp<tf::SelectOp>()) {
    Value gate = reluGateOf(select);
    if (gate)
      dropGate(select);
    return gate;
  }
  auto fusion = value.getDefiningOp<tf::FusionOp>();
  if (!fusion)
    return {};
  Operation *yield = fusion.getBodyBlock().getTerminator();
  unsigned index = cast<OpResult>(value).getResultNumber();
  auto select = yield->getOperand(index).getDefiningOp<tf::SelectOp>();
  if (!select || !select->hasOneUse())
    return {};
  Value gate = reluGateOf(select);
  // The gate read outside the fusion; what is left computed inside it.
  Region &body = fusion.getBody();
  Operation *onTrue = select.getOnTrue().getDefiningOp();
  if (!gate || body.isAncestor(gate.getParentRegion()) || !onTrue ||
      !body.isAncestor(onTrue->getParentRegion()))
    return {};
  dropGate(select);
  return gate;
}

/// tf.layer_norm_grad as one call of the runtime's fused kernel
/// (runtime/cpu/LayerNorm.h): x, gamma and the adjoint contiguous, its gate
/// when it is relu's gradient and the runtime's kernel gates (CUDA; else 0),
/// dx, dgamma and dbeta fresh buffers, and a scratch buffer for the sums of
/// its blocks of rows (kLayerNormBackwardBlockRows on the GPU: more blocks
/// than the CPU's threads need).
/// The training tf.dropout of a layer norm backward's dx (a post-norm
/// layer's dropout gradient: the residual branch's gradient is dx's
/// dropout) in its block, whose seed and sample offset the backward's call
/// may read; null when there is none.
tf::DropoutOp dropoutOfDx(tf::LayerNormGradOp op) {
  Value dx = op->getResult(0);
  auto before = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def ? def->getBlock() == op->getBlock() && def->isBeforeInBlock(op)
               : cast<BlockArgument>(v).getOwner() == op->getBlock() ||
                     cast<BlockArgument>(v).getOwner()->getParentOp()->isProperAncestor(op);
  };
  for (Operation *user : dx.getUsers())
    if (auto drop = dyn_cast<tf::DropoutOp>(user);
        drop && drop.getTraining() && drop->getBlock() == op->getBlock() &&
        drop.getType() == dx.getType() && before(drop.getSeed()) &&
        (!drop.getSampleOffset() || (before(drop.getSampleOffset()) && drop.getSampleSize())))
      return drop;
  return {};
}

void lowerLayerNormGrad(tf::LayerNormGradOp op, StringRef kernel, bool cuda, bool dropoutOfDxToo) {
  OpBuilder b(op);
  auto xType = cast<RankedTensorType>(op.getX().getType());
  int64_t d = xType.getShape().back(), rows = xType.getNumElements() / std::max<int64_t>(d, 1);
  const int64_t blockRows =
      cuda ? rt::cuda::kernels::kLayerNormBackwardBlockRows : kLayerNormBlockRows;
  int64_t blocks = (rows + blockRows - 1) / blockRows;
  RowKernelCall call{b, op.getLoc()};
  call.addIndex(rows);
  call.addIndex(d);
  call.addIndex(blockRows);
  call.addF32(op.getEpsilon().convertToFloat());
  Value gate = cuda ? takeReluGate(op.getGrad()) : Value();
  for (Value input : {op.getX(), op.getGamma(), op.getGrad()})
    call.addInput(input);
  if (gate)
    call.addInput(gate);
  else
    call.addIndex(0);
  // On the GPU, dx's dropout is stored by the kernel as it writes dx (and
  // dx not at all where only the dropout reads it): no loop nest after it.
  tf::DropoutOp drop = cuda && dropoutOfDxToo ? dropoutOfDx(op) : tf::DropoutOp();
  Value dx = op->getResult(0);
  const bool dxRead = !drop || !llvm::all_of(dx.getUsers(), [&](Operation *user) {
    return user == drop.getOperation();
  });
  for (Value result : op->getResults())
    if (result != dx || dxRead)
      call.addBuffer(cast<RankedTensorType>(result.getType()).getShape(), /*result=*/true);
    else
      call.addIndex(0);                                                     // (not stored)
  call.addBuffer({std::max<int64_t>(1, 2 * blocks * d)}, /*result=*/false); // scratch
  Value dropped;
  if (drop) {
    dropped =
        b.create<memref::AllocOp>(op.getLoc(), MemRefType::get(xType.getShape(), b.getF32Type()));
    call.args.push_back(b.create<memref::ExtractAlignedPointerAsIndexOp>(op.getLoc(), dropped));
    call.addIndex(0); // f32 (tf-bf16-gemm-operands may store bf16 bits alone)
  } else {
    call.addIndex(0); // no dropout
    call.addIndex(0);
  }
  call.addDropout(drop);
  call.addIndex(0); // an f32 gate (tf-bf16-gemm-operands may point it at bf16 bits)
  if (!dxRead) { // dx (read by its dropout alone) has no buffer
    SmallVector<Value> outputs = {Value()};
    outputs.append(call.outputs.begin(), call.outputs.end());
    call.outputs = outputs;
  }
  call.callInstead(op, kernel, [&] {
    if (!drop)
      return;
    drop.getResult().replaceAllUsesWith(b.create<bufferization::ToTensorOp>(
        op.getLoc(), dropped, /*restrict=*/true, /*writable=*/true));
    drop.erase();
  });
}

/// A post-norm layer's residual sum before its layer norm, in the "gemm"
/// fusion that makes the norm's x: its body ends in `sum` = residual +
/// tf.dropout(z) (either order), z the product or its epilogue's value
/// before the dropout, the residual and the dropout's seed and sample
/// offset values from outside the body, each read once. The layer norm's
/// kernel can do the dropout and the sum (runtime/Abi.h's layer_norm)
/// where the fusion's epilogue otherwise is a loop nest after its GEMM
/// (the dropout keeps a GEMM's epilogue off the GEMM): one launch and a
/// pass over the rows less.
struct ResidualSum {
  tf::FusionOp fusion;
  tf::AddOp sum;
  tf::DropoutOp dropout;
  Value residual;
};

ResidualSum residualSumOf(tf::LayerNormOp norm, DominanceInfo &dominance) {
  Value x = norm.getX();
  while (auto reshape = x.getDefiningOp<tf::ReshapeOp>())
    x = reshape.getOperand();
  auto fusion = x.getDefiningOp<tf::FusionOp>();
  if (!fusion || fusion.getKind() != "gemm" || fusion->getNumResults() != 1 ||
      fusion->getBlock() != norm->getBlock() ||
      !dominance.properlyDominates(norm.getGamma(), fusion) ||
      !dominance.properlyDominates(norm.getBeta(), fusion))
    return {};
  Region &body = fusion.getBody();
  auto outside = [&](Value v) { return v && !body.isAncestor(v.getParentRegion()); };
  Operation *yield = fusion.getBodyBlock().getTerminator();
  auto sum = yield->getOperand(0).getDefiningOp<tf::AddOp>();
  if (!sum || !sum->hasOneUse() || !getElementTypeOrSelf(sum.getType()).isF32())
    return {};
  for (auto [dropped, residual] :
       {std::pair(sum.getLhs(), sum.getRhs()), std::pair(sum.getRhs(), sum.getLhs())}) {
    auto dropout = dropped.getDefiningOp<tf::DropoutOp>();
    if (!dropout || !dropout.getTraining() || !dropout->hasOneUse() || !outside(residual) ||
        residual.getType() != sum.getType() || dropout.getType() != sum.getType() ||
        !dropout.getX().hasOneUse() || !outside(dropout.getSeed()) ||
        (dropout.getSampleOffset() &&
         (!outside(dropout.getSampleOffset()) || !dropout.getSampleSize())))
      continue;
    // A product alone before the dropout leaves the fusion: it must read
    // only values from outside, and be all the body holds besides.
    if (Operation *product = dropout.getX().getDefiningOp<tf::ProductOpInterface>();
        product && (fusion.getBodyBlock().getOperations().size() != 4 ||
                    !llvm::all_of(product->getOperands(), outside)))
      return {};
    return {fusion, sum, dropout, residual};
  }
  return {};
}

/// tf.layer_norm as one call of tfc_cuda_layer_norm_forward: a warp a row
/// instead of the two reductions and the pass of its loops. When its only
/// user is a tf.relu beside it, the kernel applies the relu as it writes
/// (relu(layer_norm(x)), the output nets of reverse and the medium
/// encoder): no loop of its own. With `residual` (residualSumOf), the call
/// goes right after the fusion, which then yields the value before the
/// dropout (the product alone leaves the fusion), and its other readers
/// read the sum the call stores.
void lowerLayerNorm(tf::LayerNormOp op, StringRef kernel, ResidualSum residual = {}) {
  OpBuilder b(op);
  auto type = cast<RankedTensorType>(op.getType());
  int64_t d = type.getShape().back(), rows = type.getNumElements() / std::max<int64_t>(d, 1);
  tf::ReluOp relu;
  if (op->hasOneUse())
    relu = dyn_cast<tf::ReluOp>(*op->user_begin());
  if (relu && relu->getBlock() != op->getBlock())
    relu = {};
  Value x = op.getX();
  tf::DropoutOp drop = residual.dropout;
  if (residual.fusion) {
    // The fusion yields the dropout's operand, z.
    Operation *yield = residual.fusion.getBodyBlock().getTerminator();
    Value z = drop.getX();
    yield->setOperand(0, z);
    residual.sum.erase();
    drop->remove(); // (its attributes and operands are read below)
    x = residual.fusion->getResult(0);
    if (auto product = z.getDefiningOp<tf::ProductOpInterface>()) {
      // No epilogue left: the product leaves its fusion.
      product->moveBefore(residual.fusion);
      residual.fusion->getResult(0).replaceAllUsesWith(product->getResult(0));
      residual.fusion.erase();
      residual.fusion = {};
      x = z;
    }
    b.setInsertionPointAfterValue(x);
  }
  RowKernelCall call{b, op.getLoc()};
  call.addIndex(rows);
  call.addIndex(d);
  call.addF32(op.getEpsilon().convertToFloat());
  call.addInput(x);
  Operation *readsX = call.args.back().getDefiningOp()->getOperand(0).getDefiningOp();
  call.addInput(op.getGamma());
  call.addInput(op.getBeta());
  call.addBuffer(type.getShape(), /*result=*/true);
  call.addIndex(relu ? 1 : 0);
  call.addIndex(0); // y16: none (tf-bf16-gemm-operands may give it one)
  if (drop) {
    call.addInput(residual.residual);
    call.addBuffer(cast<RankedTensorType>(x.getType()).getShape(), /*result=*/true); // the sum
  } else {
    call.addIndex(0); // no residual sum
    call.addIndex(0);
  }
  call.addDropout(drop);
  callRuntime(b, op.getLoc(), op, kernel, call.args);
  auto tensorOf = [&](Value buffer) {
    return b.create<bufferization::ToTensorOp>(op.getLoc(), buffer, /*restrict=*/true,
                                               /*writable=*/true);
  };
  if (drop) {
    // Every other reader of x (the backward's x, a pre-norm stream's next
    // residual) reads the sum; only the call reads z.
    Value pre = tensorOf(call.outputs[1]);
    x.replaceUsesWithIf(pre, [&](OpOperand &use) { return use.getOwner() != readsX; });
    drop->destroy();
  }
  Value y = tensorOf(call.outputs[0]);
  if (relu) {
    relu.replaceAllUsesWith(y);
    relu.erase();
  }
  op.replaceAllUsesWith(y);
  op.erase();
}

/// A cross-entropy kernel call's first arguments: the logits' [outer,
/// classes, inner] around the class axis, the label positions' count, the
/// logits and the labels.
template <typename CrossEntropyLike>
RowKernelCall crossEntropyCall(OpBuilder &b, CrossEntropyLike op) {
  auto logits = cast<RankedTensorType>(op.getLogits().getType());
  int64_t axis = op.getAxisAttr().getInt();
  ArrayRef<int64_t> shape = logits.getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  for (int64_t i = axis + 1; i < int64_t(shape.size()); ++i)
    inner *= shape[i];
  RowKernelCall call{b, op.getLoc()};
  call.addIndex(outer);
  call.addIndex(shape[axis]);
  call.addIndex(inner);
  call.addF32(float(cast<RankedTensorType>(op.getLabels().getType()).getNumElements()));
  call.addInput(op.getLogits());
  call.addInput(op.getLabels());
  return call;
}

/// tf.cross_entropy as one call of tfc_cuda_cross_entropy: a warp a label
/// position's loss, then their mean in a fixed order.
void lowerCrossEntropy(tf::CrossEntropyOp op, StringRef kernel) {
  OpBuilder b(op);
  RowKernelCall call = crossEntropyCall(b, op);
  int64_t rows = cast<RankedTensorType>(op.getLabels().getType()).getNumElements();
  call.addBuffer({std::max<int64_t>(1, rows)}, /*result=*/false); // the rows' losses
  call.addBuffer({}, /*result=*/true);
  call.callInstead(op, kernel);
}

/// tf.cross_entropy_grad as one call of tfc_cuda_cross_entropy_backward: a
/// warp a label position, its softmax recomputed, dlogits written once; the
/// adjoint g read from device memory (no host sync).
void lowerCrossEntropyGrad(tf::CrossEntropyGradOp op, StringRef kernel) {
  OpBuilder b(op);
  RowKernelCall call = crossEntropyCall(b, op);
  call.addInput(op.getGrad());
  call.addBuffer(cast<RankedTensorType>(op.getType()).getShape(), /*result=*/true);
  call.callInstead(op, kernel);
}

/// The tf.cross_entropy_grad that can be computed with `loss` in one pass
/// over the logits, or null: one of the same logits and labels (the same
/// SSA values, so nothing wrote them in between) on the same axis, later in
/// the same block (at func level: a loss tf-fuse grouped is generated code),
/// whose adjoint g is available where the loss is computed (it dominates
/// the loss, or is a constant that can be cloned there: autodiff's seed).
/// The fused kernel reads g from memory, as the backward does; the mean's
/// gradient needs the label count, not the loss, so the order allows it.
tf::CrossEntropyGradOp gradientWithLoss(tf::CrossEntropyOp loss, DominanceInfo &dominance) {
  if (!isa<func::FuncOp>(loss->getParentOp()))
    return {};
  for (Operation *user : loss.getLogits().getUsers()) {
    auto grad = dyn_cast<tf::CrossEntropyGradOp>(user);
    if (!grad || grad.getLogits() != loss.getLogits() ||
        grad.getLabels() != loss.getLabels() || grad.getAxis() != loss.getAxis() ||
        grad->getBlock() != loss->getBlock() || !loss->isBeforeInBlock(grad))
      continue;
    Operation *seed = grad.getGrad().getDefiningOp();
    if (dominance.properlyDominates(grad.getGrad(), loss) ||
        (seed && seed->hasTrait<OpTrait::ConstantLike>() && seed->getNumOperands() == 0))
      return grad;
  }
  return {};
}

/// The accuracy metric of `loss`'s logits, mean(argmax(logits) == labels):
/// a tf.argmax of the same logits over the loss's class axis, read only by
/// a tf.fusion whose body is tf.compare eq of it and the loss's labels, a
/// tf.cast of that to f32, a tf.reduce_mean over every axis, and the yield
/// of that mean alone. The fusion (its one result the metric) and the
/// argmax, else nulls.
struct Accuracy {
  tf::FusionOp fusion;
  tf::ArgmaxOp argmax;
};

Accuracy accuracyOf(tf::CrossEntropyOp loss) {
  for (Operation *user : loss.getLogits().getUsers()) {
    auto argmax = dyn_cast<tf::ArgmaxOp>(user);
    if (!argmax || argmax.getAxis() != loss.getAxis() || !argmax->hasOneUse())
      continue;
    auto compare = dyn_cast<tf::CompareOp>(*argmax->getUsers().begin());
    auto fusion = compare ? dyn_cast<tf::FusionOp>(compare->getParentOp()) : tf::FusionOp();
    if (!fusion || fusion->getNumResults() != 1 ||
        compare.getPredicate() != tf::ComparePredicate::eq || !compare->hasOneUse() ||
        !((compare.getLhs() == argmax.getResult() && compare.getRhs() == loss.getLabels()) ||
          (compare.getRhs() == argmax.getResult() && compare.getLhs() == loss.getLabels())))
      continue;
    Block &body = fusion.getBodyBlock();
    auto toFloat = dyn_cast<tf::CastOp>(*compare->getUsers().begin());
    if (body.getOperations().size() != 4 || &body.front() != compare.getOperation() || !toFloat ||
        !toFloat->hasOneUse() || !getElementTypeOrSelf(toFloat.getType()).isF32())
      continue;
    auto mean = dyn_cast<tf::ReduceMeanOp>(*toFloat->getUsers().begin());
    Operation *yield = body.getTerminator();
    if (!mean ||
        int64_t(mean.getAxes().size()) != cast<RankedTensorType>(toFloat.getType()).getRank() ||
        yield->getNumOperands() != 1 || yield->getOperand(0) != mean.getResult())
      continue;
    return {fusion, argmax};
  }
  return {};
}

/// tf.cross_entropy and its gradient as one call of
/// tfc_cuda_cross_entropy_fused where the loss was: a warp a row reads its
/// logits once and writes its loss and its dlogits, then the losses' mean
/// in tfc_cuda_cross_entropy's order (the same bits as the two calls). With
/// an accuracy metric of the same logits and labels (accuracyOf), the call
/// computes it too from the same read, and the argmax and its fusion go:
/// one launch less.
void lowerCrossEntropyFused(tf::CrossEntropyOp loss, tf::CrossEntropyGradOp grad,
                            DominanceInfo &dominance, StringRef kernel) {
  OpBuilder b(loss);
  Value g = grad.getGrad();
  if (!dominance.properlyDominates(g, loss))
    g = b.clone(*g.getDefiningOp())->getResult(0); // a constant (gradientWithLoss)
  RowKernelCall call = crossEntropyCall(b, loss);
  call.addInput(g);
  int64_t rows = cast<RankedTensorType>(loss.getLabels().getType()).getNumElements();
  call.addBuffer({std::max<int64_t>(1, rows)}, /*result=*/false); // the rows' losses
  call.addBuffer({}, /*result=*/true);
  call.addBuffer(cast<RankedTensorType>(grad.getType()).getShape(), /*result=*/true);
  const Accuracy accuracy = accuracyOf(loss);
  if (accuracy.fusion) {
    call.addBuffer({std::max<int64_t>(1, rows)}, /*result=*/false); // the rows' 1 or 0
    call.addBuffer({}, /*result=*/true);
  } else {
    call.addIndex(0);
    call.addIndex(0);
  }
  call.addIndex(0); // dlogits in f32 (tf-bf16-gemm-operands may store bits)
  callRuntime(b, loss.getLoc(), loss, kernel, call.args);
  SmallVector<Value> results = {loss, grad};
  if (accuracy.fusion)
    results.push_back(accuracy.fusion->getResult(0));
  for (auto [result, buffer] : llvm::zip(results, call.outputs))
    result.replaceAllUsesWith(b.create<bufferization::ToTensorOp>(
        loss.getLoc(), buffer, /*restrict=*/true, /*writable=*/true));
  if (accuracy.fusion) {
    accuracy.fusion->erase();
    accuracy.argmax->erase();
  }
  grad->erase();
  loss->erase();
}

const StringRef kDropoutMask = abi::symbol(abi::RuntimeFunction::DropoutMask);

/// The mask is drawn by the runtime (runtime/cpu/Dropout.h: one Philox4x32-10
/// call decides four elements, as runtime/Philox.h's dropoutUniform, which
/// the interpreter uses) into a byte buffer, and applied by an elementwise
/// generic that fuses with its neighbours: y = mask ? 0 : x / (1 - rate).
/// The runtime counts the elements from sample_offset * sample_size when the
/// op has a sample offset (a rank's share of a data-parallel batch).
/// An element is dropped when its word < ceil(rate * 2^32), compared as
/// integers, so compiled code and the interpreter agree bitwise on the mask.
struct DropoutLowering : OpRewritePattern<tf::DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tf::DropoutOp op, PatternRewriter &rewriter) const override {
    if (!op.getTraining()) {
      rewriter.replaceOp(op, op.getX());
      return success();
    }
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    double rate = op.getRate().convertToDouble();
    const int64_t threshold = dropoutThreshold(rate);
    auto index = [&](int64_t v) -> Value {
      return rewriter.create<arith::ConstantIndexOp>(loc, v);
    };
    Value seed = rewriter.create<tensor::ExtractOp>(loc, op.getSeed(), ValueRange{});
    seed = rewriter.create<arith::IndexCastUIOp>(loc, rewriter.getIndexType(), seed);
    // The index of element 0: sample_offset * sample_size (TfOps.td), else 0.
    Value first = index(0);
    if (Value offset = op.getSampleOffset()) {
      offset = rewriter.create<tensor::ExtractOp>(loc, offset, ValueRange{});
      offset = rewriter.create<arith::IndexCastOp>(loc, rewriter.getIndexType(), offset);
      first = rewriter.create<arith::MulIOp>(loc, offset, index(*op.getSampleSize()));
    }
    auto maskType = MemRefType::get(type.getShape(), rewriter.getI8Type());
    Value mask = rewriter.create<memref::AllocOp>(loc, maskType);
    SmallVector<Value> args = {rewriter.create<memref::ExtractAlignedPointerAsIndexOp>(loc, mask),
                               index(type.getNumElements()), first, seed, index(op.getKey()),
                               index(threshold)};
    callRuntime(rewriter, loc, op, kDropoutMask, args);
    Value dropped = rewriter.create<bufferization::ToTensorOp>(loc, mask, /*restrict=*/true,
                                                               /*writable=*/true);
    Value result = elementwise(
        rewriter, loc, type, {op.getX(), dropped},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value zero8 = b.create<arith::ConstantOp>(l, b.getI8IntegerAttr(0));
          Value drop = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, a[1], zero8);
          return applyDropout(b, l, drop, a[0], rate);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

namespace tfc {

void lowerToKernelCalls(ModuleOp module, KernelRuntime runtime, bool fuseCrossEntropy,
                        bool attentionDs, bool tensorCoreAttention, bool layerNormDropout,
                        bool layerNormResidual) {
  const KernelSymbols symbols = symbolsOf(runtime);
  // A train step's loss and its gradient of the same logits: one call.
  SmallVector<std::pair<tf::CrossEntropyOp, tf::CrossEntropyGradOp>> lossesWithGradients;
  DenseSet<Operation *> paired;
  DominanceInfo dominance(module);
  if (fuseCrossEntropy && !symbols.crossEntropyFused.empty()) {
    module.walk([&](tf::CrossEntropyOp loss) {
      if (auto grad = gradientWithLoss(loss, dominance); grad && !paired.contains(grad)) {
        lossesWithGradients.push_back({loss, grad});
        paired.insert(loss);
        paired.insert(grad);
      }
    });
  }
  // On the GPU an attention backward reads what its forward (the same q, k,
  // v, mask and scale, before it) saved.
  DenseMap<Operation *, Operation *> forwardOf;
  DenseMap<Operation *, SavedAttention> savedBy;
  if (runtime == KernelRuntime::Cuda) {
    module.walk([&](tf::AttentionGradOp grad) {
      for (Operation *user : grad.getQ().getUsers()) {
        auto forward = dyn_cast<tf::AttentionOp>(user);
        if (forward && !forward.getWeights() && forward.getK() == grad.getK() &&
            forward.getV() == grad.getV() && forward.getMask() == grad.getMask() &&
            forward.getScale() == grad.getScale() &&
            dominance.properlyDominates(forward.getOperation(), grad.getOperation())) {
          forwardOf[grad] = forward;
          savedBy[forward] = {};
          return;
        }
      }
    });
  }
  // Calls first: a call may take the place of the ops that lay its results
  // out again, which the conversion then never sees.
  SmallVector<Operation *> fusedKernels;
  module.walk([&](Operation *op) {
    if (paired.contains(op))
      return;
    if (auto attention = dyn_cast<tf::AttentionOp>(op); attention && !attention.getWeights()) {
      declareAttentionKernel(module, symbols.attentionForward, // q, k, v, mask; out; stats, out16
                             abi::attention::kForwardInputs, abi::attention::kForwardOutputs,
                             abi::attention::kForwardTrailing);
      fusedKernels.push_back(op);
    } else if (isa<tf::AttentionGradOp>(op)) { // q, k, v, mask, dout; dq, dk, dv; 7 more
      declareAttentionKernel(module, symbols.attentionBackward, abi::attention::kBackwardInputs,
                             abi::attention::kBackwardOutputs, abi::attention::kBackwardTrailing);
      fusedKernels.push_back(op);
    } else if (isa<tf::LayerNormGradOp>(op)) {
      fusedKernels.push_back(op);
    } else if (isa<tf::LayerNormOp, tf::CrossEntropyOp>(op) && !symbols.layerNormForward.empty() &&
               isa<func::FuncOp>(op->getParentOp())) {
      fusedKernels.push_back(op); // not one tf-fuse grouped with its neighbours
    } else if (isa<tf::CrossEntropyGradOp>(op) && !symbols.crossEntropyBackward.empty()) {
      fusedKernels.push_back(op);
    }
  });
  for (auto [loss, grad] : lossesWithGradients)
    lowerCrossEntropyFused(loss, grad, dominance, symbols.crossEntropyFused);
  for (Operation *op : fusedKernels) {
    if (auto grad = dyn_cast<tf::LayerNormGradOp>(op))
      lowerLayerNormGrad(grad, symbols.layerNormBackward, runtime == KernelRuntime::Cuda,
                         layerNormDropout);
    else if (auto norm = dyn_cast<tf::LayerNormOp>(op))
      lowerLayerNorm(norm, symbols.layerNormForward,
                     layerNormResidual ? residualSumOf(norm, dominance) : ResidualSum());
    else if (auto loss = dyn_cast<tf::CrossEntropyOp>(op))
      lowerCrossEntropy(loss, symbols.crossEntropy);
    else if (auto grad = dyn_cast<tf::CrossEntropyGradOp>(op))
      lowerCrossEntropyGrad(grad, symbols.crossEntropyBackward);
    else if (isa<tf::AttentionOp>(op))
      lowerFusedAttention(op, symbols, savedBy.contains(op) ? &savedBy[op] : nullptr, nullptr,
                          false, false);
    else
      lowerFusedAttention(op, symbols, nullptr,
                          forwardOf.contains(op) ? &savedBy[forwardOf[op]] : nullptr, attentionDs,
                          tensorCoreAttention);
  }
}

void populateCpuKernelCallPatterns(RewritePatternSet &patterns) {
  patterns.add<DropoutLowering>(patterns.getContext());
}

} // namespace tfc
