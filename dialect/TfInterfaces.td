//===- TfInterfaces.td - op interfaces of the tf dialect ------------------===//

#ifndef TFC_DIALECT_TFINTERFACES_TD
#define TFC_DIALECT_TFINTERFACES_TD

include "mlir/IR/OpBase.td"

// Every differentiable op builds its own vector-Jacobian product in tf ops.
// The autodiff pass is a generic reverse sweep over this interface; it knows
// no op by name.
def TF_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::tfc::tf";
  let description = [{
    An op that can build its vector-Jacobian product. Given the adjoints of
    its results (a null Value where a result does not reach the loss), it
    appends, through `builder`, ops computing the adjoint of each operand and
    stores them in `operandGrads` (one entry per operand; a null Value for an
    operand that is not differentiable, such as integer labels or a mask).
  }];
  let methods = [
    InterfaceMethod<
      "Builds the adjoints of the operands from the adjoints of the results.",
      "::mlir::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // TFC_DIALECT_TFINTERFACES_TD
