//===- GemmToRuntime.cpp - matmuls on buffers call the runtime's GEMM -----===//
//
// The GEMM is the one kernel worth hand-tuning; keeping it behind a single
// runtime symbol (runtime/Gemm.h) lets the performance work replace it
// without touching code generation:
//
//   tfc_sgemm(batch, M, N, K, A, lda, strideA, transA,
//             B, ldb, strideB, transB, C, ldc, strideC, accumulate)
//
// computes C[b] (+)= op(A[b]) op(B[b]) for b < batch, row-major, with every
// size, stride and pointer an index (an i64 on the host).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace tfc {
#define GEN_PASS_DEF_TFGEMMTORUNTIME
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

constexpr StringLiteral kGemmSymbol = "tfc_sgemm";
constexpr int kGemmArgs = 16;

/// How one operand of a batched matmul sits in memory, as BLAS sees it.
struct MatrixLayout {
  int64_t offset = 0;      // elements from the aligned pointer
  int64_t ld = 0;          // leading dimension
  int64_t batchStride = 0; // elements between consecutive batch matrices
  bool transposed = false; // relative to the map's (row, col) order
};

/// The layout of `type` read as matrices over its last two dims (rows, cols)
/// with the leading dims collapsed into one batch, or nullopt when the
/// strides do not allow it.
std::optional<MatrixLayout> matrixLayout(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(offset) || llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  int64_t rank = type.getRank();
  ArrayRef<int64_t> shape = type.getShape();
  MatrixLayout layout;
  layout.offset = offset;
  int64_t rowStride = strides[rank - 2], colStride = strides[rank - 1];
  if (colStride == 1 || shape[rank - 1] == 1) {
    layout.ld = std::max<int64_t>(rowStride, shape[rank - 1]);
  } else if (rowStride == 1 || shape[rank - 2] == 1) {
    layout.ld = std::max<int64_t>(colStride, shape[rank - 2]);
    layout.transposed = true;
  } else {
    return std::nullopt;
  }
  // Batch dims must collapse into one stride (size-1 dims are free).
  std::optional<int64_t> inner;
  for (int64_t i = rank - 3; i >= 0; --i) {
    if (shape[i] == 1)
      continue;
    if (!inner) {
      layout.batchStride = strides[i];
      inner = strides[i] * shape[i];
    } else if (strides[i] != *inner) {
      return std::nullopt;
    } else {
      inner = strides[i] * shape[i];
    }
  }
  return layout;
}

/// Whether the map's last two results are (d_second, d_first), i.e. the
/// operand is stored transposed relative to the loop order it is read in.
bool mapTransposes(AffineMap map, unsigned first, unsigned second) {
  unsigned n = map.getNumResults();
  return map.getResult(n - 2) == getAffineDimExpr(second, map.getContext()) &&
         map.getResult(n - 1) == getAffineDimExpr(first, map.getContext());
}

func::FuncOp declareGemm(ModuleOp module) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(kGemmSymbol))
    return existing;
  OpBuilder b(module.getBodyRegion());
  SmallVector<Type> args(kGemmArgs, b.getIndexType());
  auto decl = b.create<func::FuncOp>(module.getLoc(), kGemmSymbol, b.getFunctionType(args, {}));
  decl.setPrivate();
  return decl;
}

LogicalResult rewriteMatmul(linalg::GenericOp op, func::FuncOp gemm) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return failure();
  auto aType = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto bType = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
  auto cType = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!aType || !bType || !cType || !aType.getElementType().isF32())
    return failure();
  int64_t rank = cType.getRank();
  if (rank < 2 || aType.getRank() != rank || bType.getRank() != rank)
    return failure();
  auto a = matrixLayout(aType), bl = matrixLayout(bType), c = matrixLayout(cType);
  if (!a || !bl || !c || c->transposed)
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned m = rank - 2, n = rank - 1, k = rank;
  bool transA = mapTransposes(maps[0], m, k) != a->transposed;
  bool transB = mapTransposes(maps[1], k, n) != bl->transposed;
  int64_t batch = 1;
  for (int64_t i = 0; i < rank - 2; ++i)
    batch *= cType.getShape()[i];
  int64_t M = cType.getShape()[rank - 2], N = cType.getShape()[rank - 1];
  int64_t K = aType.getShape()[rank - (mapTransposes(maps[0], m, k) ? 2 : 1)];

  // An adjacent zero-fill of C is subsumed by an overwriting GEMM.
  bool accumulate = true;
  Value cBuffer = op.getDpsInits()[0];
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode())) {
    auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
    auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
    if (fill.getOutputs()[0] == cBuffer && value && value.getValue().isZero()) {
      fill.erase();
      accumulate = false;
    }
  }

  OpBuilder b(op);
  Location loc = op.getLoc();
  auto index = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  auto pointer = [&](Value buffer, int64_t offset) -> Value {
    Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
    return b.create<arith::AddIOp>(loc, base, index(offset * 4));
  };
  SmallVector<Value> args = {
      index(batch), index(M), index(N), index(K),
      pointer(op.getDpsInputs()[0], a->offset), index(a->ld), index(a->batchStride), index(transA),
      pointer(op.getDpsInputs()[1], bl->offset), index(bl->ld), index(bl->batchStride), index(transB),
      pointer(cBuffer, c->offset), index(c->ld), index(c->batchStride), index(accumulate)};
  b.create<func::CallOp>(loc, gemm, args);
  op.erase();
  return success();
}

struct TfGemmToRuntimePass : tfc::impl::TfGemmToRuntimeBase<TfGemmToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::GenericOp> matmuls;
    module.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kMatmulAttr))
        matmuls.push_back(op);
    });
    if (matmuls.empty())
      return;
    func::FuncOp gemm = declareGemm(module);
    for (linalg::GenericOp op : matmuls)
      (void)rewriteMatmul(op, gemm); // what the GEMM cannot express stays a loop
  }
};

} // namespace
