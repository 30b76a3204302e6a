//===- Interpreter.h - the reference interpreter of the tf dialect --------===//
//
// Evaluates a tf-dialect function naively in double precision. It is tfc's
// oracle: compiled code and finite-difference gradient checks are tested
// against it, so it is short, obvious and slow on purpose.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_INTERPRETER_INTERPRETER_H
#define TFC_COMPILER_INTERPRETER_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"

#include <string>
#include <vector>

namespace tfc {

enum class ElementType { f32, i32, i1 };

/// A host tensor; every element type is held as double.
struct HostTensor {
  ElementType type = ElementType::f32;
  std::vector<int64_t> shape;
  std::vector<double> data;

  int64_t numElements() const;
  static HostTensor f32(std::vector<int64_t> shape, std::vector<double> data);
  static HostTensor i32(std::vector<int64_t> shape, std::vector<double> data);
  static HostTensor i1(std::vector<int64_t> shape, std::vector<double> data);
  /// Zeros of the tensor type `type` (tensor<...xf32|i32|i1>).
  static HostTensor zeros(mlir::Type type);
};

struct InterpreterOptions {};

/// Runs `func` on `args` (one per argument, in order) and returns its
/// results, or failure with a message in `*error`.
mlir::FailureOr<std::vector<HostTensor>>
interpret(mlir::func::FuncOp func, llvm::ArrayRef<HostTensor> args,
          std::string *error, const InterpreterOptions &options = {});

/// The value of a constant attribute.
HostTensor fromAttr(mlir::ElementsAttr attr);

} // namespace tfc

#endif // TFC_COMPILER_INTERPRETER_INTERPRETER_H
