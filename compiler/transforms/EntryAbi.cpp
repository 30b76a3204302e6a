//===- EntryAbi.cpp - what each argument and result of an entry is --------===//

#include "compiler/transforms/EntryAbi.h"
#include "compiler/Passes.h"
#include "dialect/TfDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace tfc {

DictionaryAttr describeEntryValue(Builder &b, abi::ValueKind kind, StringRef name) {
  return b.getDictionaryAttr({b.getNamedAttr(abi::key::kKind, b.getStringAttr(abi::kindName(kind))),
                              b.getNamedAttr(abi::key::kName, b.getStringAttr(name))});
}

abi::ValueKind kindOf(DictionaryAttr info) {
  // Only describeEntryValue writes these, so the name always parses.
  return *abi::parseKind(cast<StringAttr>(info.get(abi::key::kKind)).getValue());
}

DictionaryAttr describeModelArgument(func::FuncOp func, unsigned i) {
  Builder b(func.getContext());
  if (auto name = func.getArgAttrOfType<StringAttr>(i, tf::TFDialect::kInputAttr))
    return describeEntryValue(b, abi::ValueKind::Input, name.getValue());
  if (auto name = func.getArgAttrOfType<StringAttr>(i, tf::TFDialect::kParamAttr))
    return describeEntryValue(b, abi::ValueKind::Param, name.getValue());
  if (func.getArgAttr(i, tf::TFDialect::kSeedAttr))
    return describeEntryValue(b, abi::ValueKind::Seed, "seed");
  if (func.getArgAttr(i, tf::TFDialect::kSampleOffsetAttr))
    return describeEntryValue(b, abi::ValueKind::SampleOffset, "sample_offset");
  if (auto name = func.getArgAttrOfType<StringAttr>(i, tf::TFDialect::kKvCacheAttr))
    return describeEntryValue(b, abi::ValueKind::KvCache, name.getValue());
  if (func.getArgAttr(i, tf::TFDialect::kPositionAttr))
    return describeEntryValue(b, abi::ValueKind::Position, "position");
  return describeEntryValue(b, abi::ValueKind::Input, llvm::formatv("arg{0}", i).str());
}

DictionaryAttr describeModelResult(func::FuncOp func, unsigned i) {
  Builder b(func.getContext());
  if (auto name = func.getResultAttrOfType<StringAttr>(i, tf::TFDialect::kOutputAttr))
    return describeEntryValue(b, abi::ValueKind::Output, name.getValue());
  if (auto name = func.getResultAttrOfType<StringAttr>(i, tf::TFDialect::kAttentionAttr))
    return describeEntryValue(b, abi::ValueKind::Attention, name.getValue());
  if (auto name = func.getResultAttrOfType<StringAttr>(i, tf::TFDialect::kMetricAttr))
    return describeEntryValue(b, abi::ValueKind::Metric, name.getValue());
  if (func.getResultAttr(i, tf::TFDialect::kLossAttr))
    return describeEntryValue(b, abi::ValueKind::Loss, "loss");
  if (auto name = func.getResultAttrOfType<StringAttr>(i, tf::TFDialect::kKvCacheAttr))
    return describeEntryValue(b, abi::ValueKind::KvCache, name.getValue());
  return describeEntryValue(b, abi::ValueKind::Output, llvm::formatv("result{0}", i).str());
}

void finalizeEntry(func::FuncOp entry, StringRef name, ArrayRef<Attribute> argInfo,
                   ArrayRef<Attribute> resultInfo) {
  Builder b(entry.getContext());
  IRRewriter rewriter(entry.getContext());
  (void)runRegionDCE(rewriter, entry.getBody());

  llvm::BitVector dropArgs(entry.getNumArguments());
  SmallVector<Attribute> keptArgs;
  for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i) {
    if (entry.getArgument(i).use_empty())
      dropArgs.set(i);
    else
      keptArgs.push_back(argInfo[i]);
  }
  entry.eraseArguments(dropArgs);

  // The tf argument/result attributes are described by tfc.abi now.
  entry.removeArgAttrsAttr();
  entry.removeResAttrsAttr();
  entry->setAttr(kEntryAttr, b.getStringAttr(name));
  entry->setAttr(kAbiAttr, b.getDictionaryAttr(
                               {b.getNamedAttr("args", b.getArrayAttr(keptArgs)),
                                b.getNamedAttr("results", b.getArrayAttr(resultInfo))}));
}

} // namespace tfc
