//===- PackEntryAbi.cpp - C entry points and the manifest -----------------===//
//
// The runtime does not know a model's signature at its own compile time, so
// every entry gets the same C signature, `void tfc_entry_E(void **buffers)`,
// and the model describes itself in `tfc_manifest`, a JSON string the runtime
// reads at start-up (runtime/Manifest.h). The wrapper builds each memref
// descriptor from a bare pointer: shapes are static, so only the pointer is
// data.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "runtime/Abi.h"
#include "dialect/TfDialect.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

namespace tfc {
#define GEN_PASS_DEF_TFPACKENTRYABI
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
using namespace tfc;

namespace {

std::string dtypeName(Type element) {
  if (element.isF32())
    return std::string(abi::kF32);
  if (element.isInteger(32))
    return std::string(abi::kI32);
  if (element.isInteger(1))
    return std::string(abi::kBool);
  std::string s;
  llvm::raw_string_ostream os(s);
  os << element;
  return s;
}

llvm::json::Array shapeOf(ShapedType type) {
  llvm::json::Array shape;
  for (int64_t d : type.getShape())
    shape.push_back(d);
  return shape;
}

/// {"kind", "name", "dtype", "shape"} of one entry argument or result, and
/// the argument a result is written over (tf-updates-in-place).
llvm::json::Object describe(DictionaryAttr info, ShapedType type) {
  llvm::json::Object object{{abi::key::kKind, cast<StringAttr>(info.get("kind")).getValue()},
                            {abi::key::kName, cast<StringAttr>(info.get("name")).getValue()},
                            {abi::key::kDtype, dtypeName(type.getElementType())},
                            {abi::key::kShape, shapeOf(type)}};
  if (auto arg = info.getAs<IntegerAttr>(abi::key::kInPlaceOf))
    object[abi::key::kInPlaceOf] = arg.getInt();
  return object;
}

/// The train block's attribute dictionary as JSON (numbers, strings, bools,
/// nested dictionaries).
llvm::json::Value toJson(Attribute attr) {
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute a : dict)
      object[a.getName().getValue()] = toJson(a.getValue());
    return object;
  }
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array list;
    for (Attribute a : array)
      list.push_back(toJson(a));
    return list;
  }
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue();
  return nullptr;
}

llvm::json::Object describeModel(ModuleOp module) {
  llvm::json::Object model;
  if (auto name = module->getAttrOfType<StringAttr>("tfc.model"))
    model[abi::key::kModel] = name.getValue();
  if (auto batch = module->getAttrOfType<IntegerAttr>("tfc.batch"))
    model[abi::key::kBatch] = batch.getInt();
  llvm::json::Array params, inputs;
  if (auto list = module->getAttrOfType<ArrayAttr>("tfc.params"))
    for (auto p : list.getAsRange<DictionaryAttr>()) {
      auto type = cast<ShapedType>(cast<TypeAttr>(p.get("type")).getValue());
      llvm::json::Object param{{abi::key::kName, cast<StringAttr>(p.get("name")).getValue()},
                               {abi::key::kDtype, dtypeName(type.getElementType())},
                               {abi::key::kShape, shapeOf(type)}};
      if (auto init = dyn_cast_or_null<tf::InitAttr>(p.get("init")))
        param[abi::key::kInit] =
            llvm::json::Object{{abi::key::kKind, tf::stringifyInitKind(init.getKind())},
                               {abi::key::kScale, init.getScale().convertToDouble()}};
      params.push_back(std::move(param));
    }
  if (auto list = module->getAttrOfType<ArrayAttr>("tfc.inputs"))
    for (auto p : list.getAsRange<DictionaryAttr>()) {
      auto type = cast<ShapedType>(cast<TypeAttr>(p.get("type")).getValue());
      llvm::json::Object input{{abi::key::kName, cast<StringAttr>(p.get("name")).getValue()},
                               {abi::key::kDtype, dtypeName(type.getElementType())},
                               {abi::key::kShape, shapeOf(type)}};
      if (auto bound = dyn_cast_or_null<IntegerAttr>(p.get("index_bound")))
        input[abi::key::kIndexBound] = bound.getInt();
      inputs.push_back(std::move(input));
    }
  if (auto train = module->getAttrOfType<DictionaryAttr>(tf::TFDialect::kTrainAttr))
    model[abi::key::kTrain] = toJson(train);
  // The CPU `tfc compile --cpu` compiles for, {name, target, features}: what
  // the runtime checks the CPU it runs on for at start-up (runtime/CpuCheck.h).
  if (auto cpu = module->getAttrOfType<DictionaryAttr>("tfc.cpu"))
    model[abi::key::kCpu] = toJson(cpu);
  // A CUDA model's kernels (tf-launches-to-runtime): {arch, image, kernels}.
  if (auto cuda = module->getAttrOfType<DictionaryAttr>("tfc.cuda")) {
    model[abi::key::kDevice] = abi::key::kDeviceCuda;
    model[abi::key::kCuda] = toJson(cuda);
  }
  model[abi::key::kParams] = std::move(params);
  model[abi::key::kInputs] = std::move(inputs);
  return model;
}

/// Adds `tfc_entry_E` for entry `E`; returns E's manifest record.
FailureOr<llvm::json::Object> packEntry(func::FuncOp entry, const LLVMTypeConverter &converter) {
  auto abi = entry->getAttrOfType<DictionaryAttr>(kAbiAttr);
  auto arena = entry->getAttrOfType<IntegerAttr>(kArenaBytesAttr);
  auto name = entry->getAttrOfType<StringAttr>(kEntryAttr);
  if (!abi || !arena || !name)
    return entry.emitError("tf-pack-entry-abi: an entry needs tfc.abi and tfc.arena_bytes "
                           "(run tf-entry-points and tf-plan-memory first)");
  auto args = cast<ArrayAttr>(abi.get("args"));
  auto results = cast<ArrayAttr>(abi.get("results"));
  ArrayRef<Type> types = entry.getArgumentTypes();
  if (entry.getNumResults() != 0 || types.size() != args.size() + results.size() + 1)
    return entry.emitError("tf-pack-entry-abi: expected ")
           << args.size() << " arguments, " << results.size()
           << " out-params and the arena, and no results";
  for (Type t : types)
    if (!isa<MemRefType>(t))
      return entry.emitError("tf-pack-entry-abi: expected buffers, got ") << t;

  std::string symbol = (abi::kEntrySymbolPrefix + name.getValue()).str();
  llvm::json::Object record{{abi::key::kName, name.getValue()},
                            {abi::key::kSymbol, symbol},
                            {abi::key::kArenaBytes, arena.getInt()}};
  llvm::json::Array argList, resultList;
  for (auto [info, type] : llvm::zip(args.getAsRange<DictionaryAttr>(), types))
    argList.push_back(describe(info, cast<ShapedType>(type)));
  for (auto [info, type] :
       llvm::zip(results.getAsRange<DictionaryAttr>(), types.drop_front(args.size())))
    resultList.push_back(describe(info, cast<ShapedType>(type)));
  record[abi::key::kArgs] = std::move(argList);
  record[abi::key::kResults] = std::move(resultList);
  // What tf-graph-dependencies found (`info` says it).
  if (auto graph = entry->getAttrOfType<DictionaryAttr>(kGraphAttr)) {
    auto ops = graph.getAs<IntegerAttr>(abi::key::kOps),
         longest = graph.getAs<IntegerAttr>(abi::key::kLongestPath);
    if (ops && longest)
      record[abi::key::kGraph] = llvm::json::Object{{abi::key::kOps, ops.getInt()},
                                                    {abi::key::kLongestPath, longest.getInt()}};
  }

  MLIRContext *ctx = entry.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  OpBuilder b(entry);
  Location loc = entry.getLoc();
  auto wrapper = b.create<func::FuncOp>(loc, symbol,
                                        FunctionType::get(ctx, {ptrType}, {}));
  Block *body = wrapper.addEntryBlock();
  b.setInsertionPointToStart(body);
  SmallVector<Value> operands;
  for (auto [i, t] : llvm::enumerate(types)) {
    auto type = cast<MemRefType>(t);
    Value slot = b.create<LLVM::GEPOp>(loc, ptrType, ptrType, wrapper.getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value pointer = b.create<LLVM::LoadOp>(loc, ptrType, slot);
    auto descriptor = MemRefDescriptor::undef(b, loc, converter.convertType(type));
    descriptor.setAllocatedPtr(b, loc, pointer);
    descriptor.setAlignedPtr(b, loc, pointer);
    descriptor.setConstantOffset(b, loc, 0);
    // Identity layouts: the arena is the one dynamic size (its planned bytes).
    int64_t stride = 1;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      int64_t size = type.isDynamicDim(d) ? arena.getInt() : type.getDimSize(d);
      descriptor.setConstantSize(b, loc, d, size);
      descriptor.setConstantStride(b, loc, d, stride);
      stride *= size;
    }
    operands.push_back(
        b.create<UnrealizedConversionCastOp>(loc, type, Value(descriptor)).getResult(0));
  }
  b.create<func::CallOp>(loc, entry, operands);
  b.create<func::ReturnOp>(loc);
  entry.setPrivate();
  // Inlined into its wrapper: a call passing every memref descriptor field
  // as its own argument (thousands for a train step) makes instruction
  // selection quadratic.
  // Internal, so no out-of-line copy remains once it is inlined.
  entry->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("alwaysinline")}));
  entry->setAttr("llvm.linkage",
                 LLVM::LinkageAttr::get(b.getContext(), LLVM::Linkage::Internal));
  return record;
}

struct TfPackEntryAbiPass : tfc::impl::TfPackEntryAbiBase<TfPackEntryAbiPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    LLVMTypeConverter converter(ctx);
    llvm::json::Object manifest = describeModel(module);
    llvm::json::Array entries;
    SmallVector<func::FuncOp> entryFuncs;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kEntryAttr))
        entryFuncs.push_back(func);
    for (func::FuncOp entry : entryFuncs) {
      FailureOr<llvm::json::Object> record = packEntry(entry, converter);
      if (failed(record))
        return signalPassFailure();
      entries.push_back(std::move(*record));
    }
    manifest[abi::key::kEntries] = std::move(entries);
    manifest[abi::key::kVersion] = abi::kManifestVersion;

    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::json::Value(std::move(manifest));
    os.flush();
    json.push_back('\0');
    OpBuilder b(module.getBodyRegion());
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), json.size());
    b.create<LLVM::GlobalOp>(module.getLoc(), type, /*isConstant=*/true,
                             LLVM::Linkage::External, abi::kManifestSymbol,
                             b.getStringAttr(json));
  }
};

} // namespace
