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

// A product a GEMM computes (matmul, a convolution's windows): tf-fuse asks
// it, not its name, whether it can carry an epilogue.
def TF_ProductOpInterface : OpInterface<"ProductOpInterface"> {
  let cppNamespace = "::tfc::tf";
  let description = [{
    An op whose result a backend computes as GEMMs. `rowsOfProducts` says
    whether that result is a matrix of them, or a batch of matrices along
    its first dim, row by row: then the elementwise ops that alone read it
    can be its epilogue (a tf.fusion "gemm"), run on rows as the GEMM
    finishes them.
  }];
  let methods = [
    InterfaceMethod<
      "Whether the result is a product's rows (a matrix, or a batch of them).",
      "bool", "rowsOfProducts", (ins)>,
  ];
}

// An op that reads integer operand values as indices (a row of a table, a
// class): the runtime checks every input that reaches such an operand against
// its bound before a step runs (the manifest's `index_bound`), and each
// backend clamps the index it loads so that no value addresses memory
// outside a buffer.
def TF_IndexingOpInterface : OpInterface<"IndexingOpInterface"> {
  let cppNamespace = "::tfc::tf";
  let methods = [
    InterfaceMethod<
      "How many values operand `operandNumber` may take, [0, bound), if it indexes.",
      "std::optional<int64_t>", "indexBound", (ins "unsigned":$operandNumber)>,
  ];
}

#endif // TFC_DIALECT_TFINTERFACES_TD
