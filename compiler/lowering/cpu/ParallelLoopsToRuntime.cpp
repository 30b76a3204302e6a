//===- ParallelLoopsToRuntime.cpp - parallel loops run on the runtime pool ===//
//
// Generated loops share the runtime's thread pool with the GEMM, so the two
// never oversubscribe the cores and `--threads` governs both. An outermost
// `scf.parallel` with enough work becomes
//
//   tfc_parallel_for(@body, ctx, n, grain)
//
// where `@body(ctx, begin, end)` runs iterations [begin, end) of the loop's
// outer dims (flattened; the innermost dim stays a serial loop inside, for
// the vectoriser) and `ctx` is a stack struct holding every value the loop
// captures: a memref of static layout as its aligned pointer alone (the body
// rebuilds the descriptor from constants), any other memref as its
// descriptor, indices as i64, scalars as themselves. (Whole descriptors,
// 3 + 2 x rank fields each, made a train step's entry function mostly
// context stores: the bulk of its instruction selection time.)
// Each iteration writes its own outputs, so results do not depend on how
// the range is split: any thread count gives bitwise identical results.
//
// A loop with too little work for the pool is outlined all the same and its
// body called directly, `@body(ctx, 0, n)`, kept out of line (noinline):
// LLVM's O3 costs grow faster than linearly with the size of one function,
// and a train step is thousands of small loop nests; one function per nest
// keeps compile time linear in the model.
//
// The epilogue loop of a GEMM (an scf.execute_region marked
// tfc.gemm_epilogue by tf-gemm-to-runtime, holding the tfc_sgemm call and
// the loop) is outlined the same way and handed to the GEMM instead:
//
//   tfc_sgemm_epilogue(<tfc_sgemm's arguments>, @body, ctx)
//
// (tfc_sgemm_windows_epilogue for a convolution's GEMM), which runs @body on
// blocks of C's rows as it finishes them: a batch's rows, items and rows
// flattened as above.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "runtime/Abi.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

namespace tfc {
#define GEN_PASS_DEF_TFPARALLELLOOPSTORUNTIME
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

using abi::RuntimeFunction;
const StringRef kParallelForSymbol = abi::symbol(RuntimeFunction::ParallelFor);
/// The GEMM entry points that take an epilogue, and the names they take it
/// under (their arguments, then the body and its context).
const std::pair<StringRef, StringRef> kGemmEpilogueSymbols[] = {
    {abi::symbol(RuntimeFunction::Sgemm), abi::symbol(RuntimeFunction::SgemmEpilogue)},
    {abi::symbol(RuntimeFunction::SgemmWindows),
     abi::symbol(RuntimeFunction::SgemmWindowsEpilogue)},
    {abi::symbol(RuntimeFunction::Conv1dWinograd),
     abi::symbol(RuntimeFunction::Conv1dWinogradEpilogue)}};

/// The GEMM call of the GEMM-and-epilogue region `loop` is in, if it is in
/// one and is a loop over C's rows and columns (a batch's items, rows and
/// columns) from 0 by 1.
func::CallOp pairedGemm(scf::ParallelOp loop) {
  auto region = dyn_cast_or_null<scf::ExecuteRegionOp>(loop->getParentOp());
  if (!region || !region->hasAttr(kGemmEpilogueAttr) ||
      (loop.getNumLoops() != 2 && loop.getNumLoops() != 3) ||
      !llvm::all_of(loop.getLowerBound(), [](Value v) { return isConstantIntValue(v, 0); }) ||
      !llvm::all_of(loop.getStep(), [](Value v) { return isConstantIntValue(v, 1); }))
    return {};
  for (auto call : region.getRegion().front().getOps<func::CallOp>())
    for (auto [plain, withEpilogue] : kGemmEpilogueSymbols)
      if (call.getCallee() == plain)
        return call;
  return {};
}

std::optional<int64_t> constantTripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return *u > *l ? (*u - *l + *s - 1) / *s : 0;
}

/// A static estimate of the operations one execution of `block` performs
/// (loops multiply by their trip counts; unknown trip counts count once).
int64_t estimateWork(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    int64_t trips = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      trips = constantTripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())
                  .value_or(1);
    } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      for (auto [l, u, s] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
        trips *= constantTripCount(l, u, s).value_or(1);
    }
    int64_t inner = 0;
    for (Region &region : op.getRegions())
      for (Block &b : region)
        inner += estimateWork(b);
    work += 1 + trips * inner;
  }
  return work;
}

/// A memref whose sizes, strides and offset are all constants: its aligned
/// pointer says everything else.
bool hasStaticLayout(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.hasStaticShape() && succeeded(getStridesAndOffset(type, strides, offset)) &&
         !ShapedType::isDynamic(offset) && llvm::none_of(strides, ShapedType::isDynamic);
}

/// True for values cheaper to recreate in the body than to pass. Not a
/// 32-bit integer other than 0 and 1: those are dropout's keys and the
/// Philox round keys folded from them, which alone made each layer's dropout
/// a body of its own (set anomaly: 16 bodies, a quarter of its loop code);
/// passed, the layers share one.
bool isSinkable(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getNumOperands() != 0 || def->getNumRegions() != 0)
    return false;
  if (isa<memref::GetGlobalOp>(def))
    return true;
  APInt bits;
  if (value.getType().isInteger(32) && matchPattern(value, m_ConstantInt(&bits)))
    return bits.getZExtValue() <= 1;
  return def->hasTrait<OpTrait::ConstantLike>();
}

struct TfParallelLoopsToRuntimePass
    : tfc::impl::TfParallelLoopsToRuntimeBase<TfParallelLoopsToRuntimePass> {
  using TfParallelLoopsToRuntimeBase::TfParallelLoopsToRuntimeBase;

  void runOnOperation() override {
    bodiesByHash.clear();
    ModuleOp module = getOperation();
    LLVMTypeConverter converter(&getContext());
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    llvm::DenseMap<func::FuncOp, int> outlinedPerFunc;
    for (scf::ParallelOp loop : loops) {
      auto parent = loop->getParentOfType<func::FuncOp>();
      if (parent)
        outline(loop, parent, outlinedPerFunc[parent], converter);
    }
  }

  /// Bodies outlined so far, by a hash of their operations: the layers of a
  /// model repeat the same loop nests on other buffers, and those buffers
  /// come in through the context, so most bodies are exact copies of an
  /// earlier one (set anomaly: 583 bodies, 79 distinct). Each is lowered and
  /// compiled once.
  llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> bodiesByHash;

  /// The operations of `body` (names, attributes, types, and which value
  /// each operand is, by the order values are defined in), not its name.
  static llvm::hash_code hashBody(func::FuncOp body) {
    llvm::DenseMap<Value, unsigned> numbers;
    auto number = [&](Value v) { numbers.try_emplace(v, numbers.size()); };
    llvm::hash_code hash = llvm::hash_combine(body.getFunctionType().getAsOpaquePointer(),
                                              body->getAttr("passthrough").getAsOpaquePointer());
    for (BlockArgument arg : body.getArguments())
      number(arg);
    body.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == body.getOperation())
        return;
      hash = llvm::hash_combine(
          hash, OperationEquivalence::computeHash(
                    op, [&](Value v) { return llvm::hash_value(numbers.lookup(v)); },
                    OperationEquivalence::ignoreHashValue, OperationEquivalence::IgnoreLocations));
      for (Value result : op->getResults())
        number(result);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            number(arg);
    });
    return hash;
  }

  /// `body` itself, or an earlier body with the same operations, in which
  /// case `body` is erased.
  func::FuncOp deduplicate(func::FuncOp body) {
    SmallVector<func::FuncOp, 1> &same = bodiesByHash[hashBody(body)];
    for (func::FuncOp earlier : same)
      if (earlier.getFunctionType() == body.getFunctionType() &&
          earlier->getAttr("passthrough") == body->getAttr("passthrough") &&
          OperationEquivalence::isRegionEquivalentTo(&earlier.getBody(), &body.getBody(),
                                                     OperationEquivalence::IgnoreLocations)) {
        body.erase();
        return earlier;
      }
    same.push_back(body);
    return body;
  }

  /// Replaces `loop` by a call of the runtime's parallel for, when it is
  /// worth it and its shape allows (constant bounds, no reductions, captured
  /// values of types the context can hold); otherwise leaves it serial.
  void outline(scf::ParallelOp loop, func::FuncOp parent, int &counter,
               const LLVMTypeConverter &converter) {
    if (loop.getNumResults() != 0)
      return;
    int64_t rank = loop.getNumLoops();
    SmallVector<int64_t> trips, lbs, ubs, steps;
    for (auto [l, u, s] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> trip = constantTripCount(l, u, s);
      if (!trip)
        return;
      trips.push_back(*trip);
      lbs.push_back(*getConstantIntValue(l));
      ubs.push_back(*getConstantIntValue(u));
      steps.push_back(*getConstantIntValue(s));
    }
    // Threads share the flattened outer dims; the innermost dim of a nest
    // stays whole in each iteration so it vectorises.
    int64_t outerDims = rank >= 2 ? rank - 1 : 1;
    int64_t n = 1;
    for (int64_t d = 0; d < outerDims; ++d)
      n *= trips[d];
    int64_t perIteration = estimateWork(*loop.getBody()) * (rank >= 2 ? trips.back() : 1);
    if (auto work = loop->getAttrOfType<IntegerAttr>(kWorkPerIterationAttr))
      perIteration = work.getInt();
    func::CallOp gemm = pairedGemm(loop);
    bool onPool = gemm || (n >= 2 && n * perIteration >= minWork);
    int64_t grain = std::max<int64_t>(1, minChunkWork / std::max<int64_t>(perIteration, 1));

    SetVector<Value> captured;
    getUsedValuesDefinedAbove(loop.getRegion(), captured);
    SmallVector<Value> passed, sunk;
    SmallVector<Type> fields;
    for (Value v : captured) {
      if (isSinkable(v)) {
        sunk.push_back(v);
        continue;
      }
      Type type = v.getType();
      if (auto memref = dyn_cast<MemRefType>(type))
        fields.push_back(hasStaticLayout(memref) ? LLVM::LLVMPointerType::get(loop.getContext())
                                                 : converter.convertType(type));
      else if (type.isIndex())
        fields.push_back(converter.getIndexType());
      else if (type.isIntOrFloat())
        fields.push_back(type);
      else
        return; // a value the context cannot hold: stay serial
      if (!fields.back())
        return;
      passed.push_back(v);
    }

    MLIRContext *ctx = loop.getContext();
    Location loc = loop.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto contextType = LLVM::LLVMStructType::getLiteral(ctx, fields);
    auto bodyType = FunctionType::get(ctx, {ptrType, i64, i64}, {});
    auto module = parent->getParentOfType<ModuleOp>();
    func::FuncOp runtime = getOrDeclareParallelFor(module, bodyType);

    // The body function, after the parent.
    OpBuilder b(ctx);
    b.setInsertionPointAfter(parent);
    std::string name = (parent.getSymName() + "_parallel" + Twine(counter++)).str();
    auto body = b.create<func::FuncOp>(loc, name, bodyType);
    body.setPrivate();
    if (!onPool)
      body->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
    Block *entry = body.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping mapping;
    Value context = b.create<LLVM::LoadOp>(loc, contextType, entry->getArgument(0));
    for (auto [i, v] : llvm::enumerate(passed)) {
      Value field = b.create<LLVM::ExtractValueOp>(loc, context, int64_t(i));
      if (auto memref = dyn_cast<MemRefType>(v.getType())) {
        if (hasStaticLayout(memref))
          field = MemRefDescriptor::fromStaticShape(b, loc, converter, memref, field, field);
        field = b.create<UnrealizedConversionCastOp>(loc, v.getType(), field).getResult(0);
      }
      else if (v.getType().isIndex())
        field = b.create<arith::IndexCastOp>(loc, v.getType(), field);
      mapping.map(v, field);
    }
    for (Value v : sunk)
      mapping.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    // Constants go at the top of the body, once each.
    llvm::DenseMap<int64_t, Value> constants;
    auto index = [&](int64_t c) {
      Value &value = constants[c];
      if (!value) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(entry);
        value = b.create<arith::ConstantIndexOp>(loc, c);
      }
      return value;
    };
    Value begin = b.create<arith::IndexCastOp>(loc, b.getIndexType(), entry->getArgument(1));
    Value end = b.create<arith::IndexCastOp>(loc, b.getIndexType(), entry->getArgument(2));
    auto flat = b.create<scf::ForOp>(loc, begin, end, index(1));
    b.setInsertionPointToStart(flat.getBody());
    // Delinearise the flat index into the outer dims, innermost fastest.
    Value rest = flat.getInductionVar();
    SmallVector<Value> ivs(rank);
    for (int64_t d = outerDims - 1; d >= 0; --d) {
      Value i = rest;
      if (d > 0) {
        i = b.create<arith::RemUIOp>(loc, rest, index(trips[d]));
        rest = b.create<arith::DivUIOp>(loc, rest, index(trips[d]));
      }
      if (steps[d] != 1)
        i = b.create<arith::MulIOp>(loc, i, index(steps[d]));
      if (lbs[d] != 0)
        i = b.create<arith::AddIOp>(loc, i, index(lbs[d]));
      ivs[d] = i;
    }
    if (rank >= 2) {
      auto inner = b.create<scf::ForOp>(loc, index(lbs.back()), index(ubs.back()),
                                        index(steps.back()));
      ivs[rank - 1] = inner.getInductionVar();
      b.setInsertionPointToStart(inner.getBody());
    }
    for (auto [old, now] : llvm::zip(loop.getInductionVars(), ivs))
      mapping.map(old, now);
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    b.setInsertionPointToEnd(entry);
    b.create<func::ReturnOp>(loc);
    body = deduplicate(body);

    // The call site: fill the context on the stack, hand the range to the pool.
    OpBuilder top = OpBuilder::atBlockBegin(&parent.getBody().front());
    Value one = top.create<LLVM::ConstantOp>(loc, i64, top.getI64IntegerAttr(1));
    Value slot = top.create<LLVM::AllocaOp>(loc, ptrType, contextType, one);
    // (Before the GEMM that calls the epilogue.)
    b.setInsertionPoint(gemm ? gemm.getOperation() : loop.getOperation());
    Value packed = b.create<LLVM::UndefOp>(loc, contextType);
    for (auto [i, v] : llvm::enumerate(passed)) {
      Value field = v;
      if (auto memref = dyn_cast<MemRefType>(v.getType())) {
        bool pointerOnly = hasStaticLayout(memref);
        field = b.create<UnrealizedConversionCastOp>(
                     loc, pointerOnly ? converter.convertType(memref) : fields[i], v)
                    .getResult(0);
        if (pointerOnly) // the aligned pointer
          field = MemRefDescriptor(field).alignedPtr(b, loc);
      }
      else if (v.getType().isIndex())
        field = b.create<arith::IndexCastOp>(loc, i64, v);
      packed = b.create<LLVM::InsertValueOp>(loc, packed, field, int64_t(i));
    }
    b.create<LLVM::StoreOp>(loc, packed, slot);
    if (!onPool) {
      Value zero = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
      Value count = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(n));
      b.create<func::CallOp>(loc, body, ValueRange{slot, zero, count});
      loop.erase();
      return;
    }
    Value function = b.create<func::ConstantOp>(loc, bodyType, SymbolRefAttr::get(body));
    if (gemm) {
      SmallVector<Value> args(gemm.getOperands());
      args.append({function, slot});
      b.create<func::CallOp>(loc, getOrDeclareGemmEpilogue(module, gemm, bodyType), args);
      gemm.erase();
      loop.erase();
      // The region has served its purpose: its ops join the entry's block.
      auto region = cast<scf::ExecuteRegionOp>(b.getInsertionBlock()->getParentOp());
      Block &inner = region.getRegion().front();
      inner.getTerminator()->erase();
      region->getBlock()->getOperations().splice(region->getIterator(), inner.getOperations());
      region.erase();
      return;
    }
    Value count = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(n));
    Value grainValue = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(grain));
    b.create<func::CallOp>(loc, runtime, ValueRange{function, slot, count, grainValue});
    loop.erase();
  }

  /// tfc_sgemm_epilogue (tfc_sgemm_windows_epilogue): the GEMM's arguments,
  /// then the body and its context.
  func::FuncOp getOrDeclareGemmEpilogue(ModuleOp module, func::CallOp gemm,
                                        FunctionType bodyType) {
    StringRef symbol;
    for (auto [plain, withEpilogue] : kGemmEpilogueSymbols)
      if (gemm.getCallee() == plain)
        symbol = withEpilogue;
    if (auto existing = module.lookupSymbol<func::FuncOp>(symbol))
      return existing;
    SmallVector<Type> args(gemm.getOperandTypes());
    args.append({bodyType, LLVM::LLVMPointerType::get(module.getContext())});
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto decl = b.create<func::FuncOp>(module.getLoc(), symbol, b.getFunctionType(args, {}));
    decl.setPrivate();
    return decl;
  }

  func::FuncOp getOrDeclareParallelFor(ModuleOp module, FunctionType bodyType) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(kParallelForSymbol))
      return existing;
    MLIRContext *ctx = module.getContext();
    auto i64 = IntegerType::get(ctx, 64);
    auto type = FunctionType::get(ctx, {bodyType, LLVM::LLVMPointerType::get(ctx), i64, i64}, {});
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto decl = b.create<func::FuncOp>(module.getLoc(), kParallelForSymbol, type);
    decl.setPrivate();
    return decl;
  }
};

} // namespace
