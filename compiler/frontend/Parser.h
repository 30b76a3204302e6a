//===- Parser.h - the .tf language, turned into DSL calls -----------------===//
//
// A .tf file holds `def`, `model` and `train` blocks (DESIGN.md, "The .tf
// language"). The parser has no AST and no op semantics: it checks the
// syntax of the whole file, then evaluates the chosen model by calling the
// C++ DSL (compiler/dsl/DSL.h) statement by statement, and inlines `def`s by
// re-reading their tokens under a parameter scope. Only constant arithmetic
// (`2 * dim`) is folded here; every tensor operation is a DSL call.
//
// Errors are MLIR diagnostics at FileLineColLoc(file, line, col) (inside an
// inlined def: a CallSiteLoc, printed with "called from" notes), so with a
// SourceMgrDiagnosticHandler they read `file.tf:3:7: error: ...` with the
// source line and a caret, as do the DSL's and the ops' own diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_FRONTEND_PARSER_H
#define TFC_COMPILER_FRONTEND_PARSER_H

#include "compiler/dsl/TrainConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
class DictionaryAttr;
} // namespace mlir

namespace tfc {

struct FrontendOptions {
  /// The model to build (`--model`); empty: the first model of the file.
  std::string model;
  /// `--batch`: when > 0, overrides the train block's batch.
  int64_t batch = 0;
  /// Build dropout in training mode.
  bool training = true;
  /// Return each attention layer's weights as a result (ModelOptions).
  bool recordAttention = false;
};

struct FrontendResult {
  /// The chosen model as one func.func in a verified module, with the
  /// `tf.train` attribute when the file has a train block for it; null after
  /// an error (already reported as a diagnostic).
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::optional<TrainConfig> train;
  /// The batch the model was built with.
  int64_t batch = 1;
};

/// Parses `source` (named `filename` in diagnostics, which must match the
/// buffer's identifier in the SourceMgr of a SourceMgrDiagnosticHandler for
/// the source line and caret to print) and builds the chosen model.
FrontendResult parseTfSource(llvm::StringRef source, llvm::StringRef filename,
                             mlir::MLIRContext &context,
                             const FrontendOptions &options = {});

/// One argument of a built-in, as the reference documents it.
struct BuiltinArgDoc {
  llvm::StringRef name;
  std::string kind;           // "tensor", "int", "\"post\" or \"pre\"", ...
  bool required;
  std::string defaultText;    // an optional one's default, in words or as written
  llvm::StringRef description;
};

/// One built-in function of the .tf language, from the table the parser
/// calls them through (Parser.cpp), so the reference cannot drift from it.
struct BuiltinDoc {
  llvm::StringRef name;
  llvm::StringRef section;     // "Layers", "Elementwise", ...
  llvm::StringRef description; // one line
  llvm::StringRef shape;       // the result's shape, from the arguments'
  /// An expression over builtinExampleInputs(), and the type it gives there
  /// ("f32[2, 4, 16]"; a tuple: "(f32[2, 4, 8], f32[2, 4, 4])").
  llvm::StringRef example, exampleType;
  std::vector<BuiltinArgDoc> args; // in positional order; `name` is keyword-only
};

/// Every built-in, in the table's order.
std::vector<BuiltinDoc> builtinReference();
/// The `input` statements that declare what the examples use.
llvm::StringRef builtinExampleInputs();
/// The initialisers written as a bare name (`init: xavier`), each with what
/// it draws.
std::vector<std::pair<llvm::StringRef, llvm::StringRef>> bareInitialisers();

} // namespace tfc

#endif // TFC_COMPILER_FRONTEND_PARSER_H
