//===- Passes.td - tfc's passes -------------------------------------------===//

#ifndef TFC_COMPILER_PASSES_TD
#define TFC_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfLowerToLinalg : Pass<"tf-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower tf ops to linalg, tensor, arith and math on tensors";
  let description = [{
    The first step of CPU code generation. Elementwise ops, broadcasts and
    transposes become parallel `linalg.generic`s; reductions and `tf.matmul`
    become `linalg.generic`s with reduction iterators over an init filled
    with the reduction's identity (argmax carries the best value and its
    index); reshapes become `tensor.reshape`, slices and concatenations
    `tensor.extract_slice`/`insert_slice`; one_hot and gather read the
    loop index (`linalg.index`); constants become `arith.constant`.

    ```mlir
    %0 = tf.add %a, %b : tensor<4xf32>
    // becomes
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [#id, #id, #id],
                         iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%x: f32, %y: f32, %out: f32):
        %s = arith.addf %x, %y : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>
    ```

    softmax and log_softmax are three passes (max, sum of exponentials,
    normalisation), layer_norm three (sum, squared deviations, affine);
    attention decomposes into tf ops (q k^T, scale, mask fill, softmax,
    weights v) that are lowered in turn; conv1d pads with tensor.pad and
    accumulates into its bias; cross_entropy reads the labelled class of a
    log-softmax; dropout computes runtime/Philox.h's stream in the loop body
    (bitwise the interpreter's mask).
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect"
  ];
}

#endif // TFC_COMPILER_PASSES_TD
