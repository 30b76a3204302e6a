//===- EntryAbi.h - what each argument and result of an entry is ----------===//
//
// Entries (predict, evaluate, train_step) describe their arguments and
// results to the runtime as `tfc.abi = {args = [...], results = [...]}`, a
// list of {kind, name} dictionaries. tf-autodiff and tf-entry-points share
// these helpers.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_TRANSFORMS_ENTRYABI_H
#define TFC_COMPILER_TRANSFORMS_ENTRYABI_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "runtime/Abi.h"

namespace tfc {

/// {kind = KIND, name = NAME}, KIND as runtime/Abi.h spells it.
mlir::DictionaryAttr describeEntryValue(mlir::Builder &b, abi::ValueKind kind,
                                        llvm::StringRef name);

/// The kind of a {kind, name} description.
abi::ValueKind kindOf(mlir::DictionaryAttr info);

/// {kind = "input"|"param"|"seed", name} of argument `i` from its tf attributes.
mlir::DictionaryAttr describeModelArgument(mlir::func::FuncOp func, unsigned i);

/// {kind = "output"|"attention"|"loss"|"metric", name} of result `i`.
mlir::DictionaryAttr describeModelResult(mlir::func::FuncOp func, unsigned i);

/// Makes `entry` the entry `name`: removes dead ops, drops the arguments it
/// does not read (and their `argInfo`), strips the tf argument and result
/// attributes and sets `tfc.entry` and `tfc.abi` from `argInfo` and
/// `resultInfo` (one per argument and result).
void finalizeEntry(mlir::func::FuncOp entry, llvm::StringRef name,
                   llvm::ArrayRef<mlir::Attribute> argInfo,
                   llvm::ArrayRef<mlir::Attribute> resultInfo);

} // namespace tfc

#endif // TFC_COMPILER_TRANSFORMS_ENTRYABI_H
