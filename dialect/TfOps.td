//===- TfOps.td - the ops of the tf dialect -------------------------------===//
//
// Every op infers its result types from its operands and attributes
// (InferTypeOpAdaptor), so the C++ DSL never spells a shape twice and each
// shape rule lives in exactly one place: the op's inferReturnTypes, which
// names the offending shapes when it rejects an op.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFOPS_TD
#define TFC_DIALECT_TFOPS_TD

include "dialect/TfBase.td"
include "dialect/TfInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class TF_Op<string mnemonic, list<Trait> traits = []>
    : Op<TF_Dialect, mnemonic, traits>;

// An op whose result types follow from its operands and attributes.
class TF_InferredOp<string mnemonic, list<Trait> traits = []>
    : TF_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor], traits)>;

// An op with a vector-Jacobian product (dialect/TfGradients.cpp).
defvar TF_Differentiable = DeclareOpInterfaceMethods<TF_GradientOpInterface>;

// What tf-fuse reads (the pass names no op): an op computed element by
// element over its result (each element reads operand elements at the same,
// a permuted or a broadcast index, or, a gather, its table's row at an index
// it reads so) fuses into the loops of its consumers; a reduction-like op roots a group whose loops run over its first operand.
def TF_LoopFusible : NativeOpTrait<"LoopFusible"> { let cppNamespace = "::tfc::tf"; }
// A loop-fusible op whose result element i reads element i of each operand of
// the result's shape (any other operand, a dropout's seed, is read whole): it
// means the same on any reshape of those operands, so tf-fuse may redo it in
// a product's shape to join the product's epilogue. Not a transpose,
// broadcast or one_hot: their elements move.
def TF_Positionwise : NativeOpTrait<"Positionwise"> { let cppNamespace = "::tfc::tf"; }
def TF_ReductionFusible : NativeOpTrait<"ReductionFusible"> {
  let cppNamespace = "::tfc::tf";
}
// An op whose every result element is a copy of an operand element (a
// reshape, transpose, slice, concatenation or broadcast): an index keeps its
// meaning through it, so a model input's index bound is followed through.
def TF_CopiesElements : NativeOpTrait<"CopiesElements"> { let cppNamespace = "::tfc::tf"; }
defvar TF_Indexing = DeclareOpInterfaceMethods<TF_IndexingOpInterface>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def TF_ConstantOp : TF_InferredOp<"constant", [ConstantLike]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %pe = tf.constant dense<0.0> : tensor<16x32xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs TF_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops (operands of identical shape)
//
// They do not carry MLIR's `Elementwise` trait: its verifier runs before the
// shape rules and rejects a mismatch without naming the shapes.
//===----------------------------------------------------------------------===//

class TF_UnaryFloatOp<string mnemonic, string summ>
    : TF_InferredOp<mnemonic, [TF_Differentiable, TF_LoopFusible, TF_Positionwise]> {
  let summary = summ;
  let arguments = (ins TF_FloatTensor:$x);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def TF_NegOp : TF_UnaryFloatOp<"neg", "elementwise negation">;
def TF_ExpOp : TF_UnaryFloatOp<"exp", "elementwise e^x">;
def TF_LogOp : TF_UnaryFloatOp<"log", "elementwise natural logarithm">;
def TF_SqrtOp : TF_UnaryFloatOp<"sqrt", "elementwise square root">;
def TF_RsqrtOp : TF_UnaryFloatOp<"rsqrt", "elementwise 1/sqrt(x)">;
def TF_TanhOp : TF_UnaryFloatOp<"tanh", "elementwise hyperbolic tangent">;
def TF_SinOp : TF_UnaryFloatOp<"sin", "elementwise sine">;
def TF_CosOp : TF_UnaryFloatOp<"cos", "elementwise cosine (learning-rate schedules)">;
def TF_ReluOp : TF_UnaryFloatOp<"relu", "elementwise max(x, 0)">;
def TF_GeluOp : TF_UnaryFloatOp<"gelu",
    "elementwise x * Phi(x) with the exact erf form (PyTorch's default)">;
def TF_ErfOp : TF_UnaryFloatOp<"erf",
    "elementwise Gauss error function (gelu's derivative needs Phi(x))">;

class TF_BinaryFloatOp<string mnemonic, string summ>
    : TF_InferredOp<mnemonic, [TF_Differentiable, TF_LoopFusible, TF_Positionwise]> {
  let summary = summ;
  let arguments = (ins TF_FloatTensor:$lhs, TF_FloatTensor:$rhs);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` custom<OperandTypes>(type($lhs), type($rhs))
  }];
}

def TF_AddOp : TF_BinaryFloatOp<"add", "elementwise addition"> {
  // Sums of concatenations with disjoint non-zero pieces (the adjoints of
  // slices of one tensor) become one concatenation.
  let hasCanonicalizer = 1;
}
def TF_SubOp : TF_BinaryFloatOp<"sub", "elementwise subtraction">;
def TF_MulOp : TF_BinaryFloatOp<"mul", "elementwise multiplication">;
def TF_DivOp : TF_BinaryFloatOp<"div", "elementwise division">;
def TF_MaxOp : TF_BinaryFloatOp<"max", "elementwise maximum">;
def TF_MinOp : TF_BinaryFloatOp<"min", "elementwise minimum">;

def TF_CompareOp : TF_InferredOp<"compare", [TF_LoopFusible, TF_Positionwise]> {
  let summary = "elementwise comparison, giving i1";
  let description = [{
    ```mlir
    %eq = tf.compare eq, %pred, %labels : tensor<128x16xi32>
    ```
    Operands share one type (f32, i32 or i1); eq and ne are the only
    predicates on i1.
  }];
  let arguments = (ins TF_ComparePredicate:$predicate, TF_Tensor:$lhs,
                       TF_Tensor:$rhs);
  let results = (outs TF_BoolTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:`
    custom<OperandTypes>(type($lhs), type($rhs))
  }];
}

class TF_LogicalBinaryOp<string mnemonic, string summ>
    : TF_InferredOp<mnemonic, [TF_LoopFusible, TF_Positionwise]> {
  let summary = summ;
  let arguments = (ins TF_BoolTensor:$lhs, TF_BoolTensor:$rhs);
  let results = (outs TF_BoolTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` custom<OperandTypes>(type($lhs), type($rhs))
  }];
}
def TF_AndOp : TF_LogicalBinaryOp<"and", "elementwise logical and">;
def TF_OrOp : TF_LogicalBinaryOp<"or", "elementwise logical or">;

def TF_NotOp : TF_InferredOp<"not", [TF_LoopFusible, TF_Positionwise]> {
  let summary = "elementwise logical not";
  let arguments = (ins TF_BoolTensor:$x);
  let results = (outs TF_BoolTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def TF_SelectOp : TF_InferredOp<"select", [TF_Differentiable, TF_LoopFusible,
                                              TF_Positionwise]> {
  let summary = "elementwise choice: cond ? on_true : on_false";
  let arguments = (ins TF_BoolTensor:$cond, TF_Tensor:$on_true,
                       TF_Tensor:$on_false);
  let results = (outs TF_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,`
    custom<OperandTypes>(type($on_true), type($on_false))
  }];
}

def TF_CastOp : TF_Op<"cast", [Pure, TF_Differentiable, TF_LoopFusible, TF_Positionwise]> {
  let summary = "elementwise element-type conversion";
  let description = [{
    f32 -> i32 truncates toward zero; i1 -> f32/i32 gives 0 or 1; anything
    -> i1 is `x != 0`.
    ```mlir
    %f = tf.cast %hits : tensor<128x16xi1> to tensor<128x16xf32>
    ```
  }];
  let arguments = (ins TF_Tensor:$x);
  let results = (outs TF_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `to` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def TF_BroadcastInDimOp : TF_Op<"broadcast_in_dim",
                                [Pure, TF_Differentiable, TF_LoopFusible,
                                 TF_CopiesElements]> {
  let summary = "explicit broadcast (StableHLO semantics, no transposition)";
  let description = [{
    Operand dimension `i` maps to result dimension `dims[i]`; `dims` is
    strictly increasing, and each operand dimension is 1 or equals the result
    dimension it maps to.
    ```mlir
    %b = tf.broadcast_in_dim %bias [1] : tensor<32xf32> to tensor<16x32xf32>
    ```
  }];
  let arguments = (ins TF_Tensor:$x, DenseI64ArrayAttr:$dims);
  let results = (outs TF_Tensor:$result);
  let assemblyFormat = "$x $dims attr-dict `:` type($x) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TF_ReshapeOp : TF_Op<"reshape", [Pure, TF_Differentiable, TF_CopiesElements]> {
  let summary = "row-major reshape to a type with the same element count";
  let arguments = (ins TF_Tensor:$x);
  let results = (outs TF_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TF_TransposeOp : TF_InferredOp<"transpose", [TF_Differentiable, TF_LoopFusible,
                                                 TF_CopiesElements]> {
  let summary = "dimension permutation: result dim i is operand dim perm[i]";
  let arguments = (ins TF_Tensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs TF_Tensor:$result);
  let assemblyFormat = "$x $perm attr-dict `:` type($x) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// Whether only convolutions of the per-position form read the result
    /// (Conv1dOp::isPerPosition): they read their operands through the
    /// permutation, so the transpose is a view, never a loop of its own.
    bool isConvolutionView();
  }];
}

def TF_SliceOp : TF_InferredOp<"slice", [TF_Differentiable, TF_CopiesElements]> {
  let summary = "static strided slice [start, limit) by stride per dimension";
  let arguments = (ins TF_Tensor:$x, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$stride);
  let results = (outs TF_Tensor:$result);
  let assemblyFormat = [{
    $x `start` $start `limit` $limit `stride` $stride attr-dict `:` type($x)
    `->` type($result)
  }];
}

def TF_ConcatOp : TF_InferredOp<"concat", [TF_Differentiable, TF_CopiesElements]> {
  let summary = "concatenation along one axis";
  let arguments = (ins Variadic<TF_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs TF_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class TF_ReduceOp<string mnemonic, string summ>
    : TF_InferredOp<mnemonic, [TF_Differentiable, TF_ReductionFusible]> {
  let summary = summ;
  let description = [{
    Reduces the listed axes (sorted, unique) away; the result has the
    operand's rank minus their count.
  }];
  let arguments = (ins TF_FloatTensor:$x, DenseI64ArrayAttr:$axes);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = "$x $axes attr-dict `:` type($x) `->` type($result)";
}
def TF_ReduceSumOp : TF_ReduceOp<"reduce_sum", "sum over axes">;
def TF_ReduceMaxOp : TF_ReduceOp<"reduce_max", "maximum over axes">;
def TF_ReduceMeanOp : TF_ReduceOp<"reduce_mean", "mean over axes">;

def TF_ArgmaxOp : TF_InferredOp<"argmax", [TF_ReductionFusible]> {
  let summary = "index of the largest element along an axis (first on ties)";
  let arguments = (ins TF_FloatTensor:$x, I64Attr:$axis);
  let results = (outs TF_IntTensor:$result);
  let assemblyFormat = "$x `axis` $axis attr-dict `:` type($x) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Linear algebra and neural-network ops
//===----------------------------------------------------------------------===//

def TF_MatmulOp : TF_InferredOp<"matmul", [TF_Differentiable,
    DeclareOpInterfaceMethods<TF_ProductOpInterface>]> {
  let summary = "batched matrix product";
  let description = [{
    lhs `[..., M, K]` times rhs `[..., K, N]` gives `[..., M, N]`; the batch
    dimensions `...` are identical on both sides (the front end broadcasts).
    `transpose_lhs`/`transpose_rhs` read an operand's last two dimensions
    swapped, so `x @ W^T` needs no transpose op.
    ```mlir
    %y = tf.matmul %x, %w transpose_rhs : tensor<2048x32xf32>, tensor<10x32xf32> -> tensor<2048x10xf32>
    ```
  }];
  let arguments = (ins TF_FloatTensor:$lhs, TF_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:` type($lhs) `,`
    type($rhs) `->` type($result)
  }];
  let hasCanonicalizer = 1;
}

def TF_SoftmaxOp : TF_InferredOp<"softmax", [TF_Differentiable, TF_ReductionFusible]> {
  let summary = "softmax along one axis";
  let arguments = (ins TF_FloatTensor:$x, I64Attr:$axis);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = "$x `axis` $axis attr-dict `:` type($x)";
}

def TF_LogSoftmaxOp : TF_InferredOp<"log_softmax",
                                     [TF_Differentiable, TF_ReductionFusible]> {
  let summary = "log of the softmax along one axis";
  let arguments = (ins TF_FloatTensor:$x, I64Attr:$axis);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = "$x `axis` $axis attr-dict `:` type($x)";
}

def TF_LayerNormOp : TF_InferredOp<"layer_norm", [TF_Differentiable, TF_ReductionFusible]> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * gamma + beta`, with the biased
    variance over the last dimension (PyTorch's `nn.LayerNorm(D)`).
  }];
  let arguments = (ins TF_FloatTensor:$x, TF_FloatTensor:$gamma,
                       TF_FloatTensor:$beta,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $gamma `,` $beta attr-dict `:` type($x) `,`
    custom<OperandTypes>(type($gamma), type($beta))
  }];
}

def TF_LayerNormGradOp : TF_InferredOp<"layer_norm_grad", [AllTypesMatch<["x", "grad"]>]> {
  let summary = "the adjoints of tf.layer_norm's operands, as one fused op";
  let description = [{
    What the VJP of a `tf.layer_norm` emits: with `g` the adjoint of its
    result, per row (the last dimension, `d` wide) `x̂ = (x - mean) rstd`,
    `rstd = 1 / sqrt(var + epsilon)` (recomputed from `x`, biased variance)
    and `dx̂ = g gamma`,
    `dx = rstd (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂))`, `dgamma = Σ_rows g x̂`,
    `dbeta = Σ_rows g`. A backend runs it as one pass over the rows (the CPU
    one: `tfc_layer_norm_backward`) instead of the dozen loops and
    reductions of the formulas; the reference interpreter evaluates them.
  }];
  let arguments = (ins TF_FloatTensor:$x, TF_FloatTensor:$gamma, TF_FloatTensor:$grad,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs TF_FloatTensor:$dx, TF_FloatTensor:$dgamma, TF_FloatTensor:$dbeta);
  let assemblyFormat = [{
    $x `,` $gamma `grad` $grad attr-dict `:` type($x) `,` type($gamma)
  }];
}

def TF_DropoutOp : TF_InferredOp<"dropout", [TF_Differentiable, TF_LoopFusible,
                                                TF_Positionwise]> {
  let summary = "inverted dropout, keyed by a seed and a per-op key";
  let description = [{
    In training mode, zeroes each element with probability `rate` and scales
    the rest by `1 / (1 - rate)`; the mask is a counter-based random function
    of (`seed`, `key`, element index), so runs are reproducible. Without
    `training` it is the identity.

    The element index is the row-major one, counted from
    `sample_offset * sample_size` when the op has a `sample_offset` (a 0-d
    i32 operand, the model's `tf.sample_offset` argument) and a
    `sample_size` (the elements of one sample): a rank of a data-parallel
    run, whose batch is samples `sample_offset ..` of the global batch, then
    draws the masks those samples have in one process with the whole batch.
    The DSL gives a dropout these when its operand's leading dimension is the
    model's batch; a reshape keeps them (the element count is the same).
    ```mlir
    %y = tf.dropout %x, %seed rate 1.000000e-01 key 3 training : tensor<64x10x256xf32>
    %z = tf.dropout %x, %seed sample_offset %offset sample_size 2560 rate 1.000000e-01
         key 3 training : tensor<64x10x256xf32>
    ```
  }];
  let arguments = (ins TF_FloatTensor:$x, TF_ScalarInt:$seed,
                       Optional<TF_ScalarInt>:$sample_offset, F32Attr:$rate,
                       I64Attr:$key, OptionalAttr<I64Attr>:$sample_size,
                       UnitAttr:$training);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $seed (`sample_offset` $sample_offset^ `sample_size` $sample_size)?
    `rate` $rate `key` $key (`training` $training^)? attr-dict `:` type($x)
  }];
}

def TF_AttentionOp : TF_InferredOp<"attention", [TF_Differentiable]> {
  let summary = "scaled dot-product attention";
  let description = [{
    `weights = softmax(scale * q @ k^T)` over the last axis, where logits
    with a false `mask` entry are replaced by -9e15 (the tutorials'
    `masked_fill`); `values = weights @ v`. q is `[..., Tq, D]`, k is
    `[..., Tk, D]`, v is `[..., Tk, Dv]`, the mask (i1) is `[..., Tq, Tk]`,
    all with identical batch dimensions. The weights are a second result only
    with `with_weights`, so a fused kernel need not materialise them.
  }];
  let extraClassDeclaration = [{
    /// Builds this op's definition in simpler tf ops (q k^T, scale, mask
    /// fill, softmax, weights v) before the op and returns its results, for
    /// a backend without a fused kernel.
    ::llvm::SmallVector<::mlir::Value> decompose(::mlir::OpBuilder &builder);
  }];
  let arguments = (ins TF_FloatTensor:$q, TF_FloatTensor:$k, TF_FloatTensor:$v,
                       Optional<TF_BoolTensor>:$mask, F32Attr:$scale,
                       UnitAttr:$with_weights);
  let results = (outs TF_FloatTensor:$values, Optional<TF_FloatTensor>:$weights);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`mask` $mask^)? `scale` $scale
    (`with_weights` $with_weights^)? attr-dict `:` type($q) `,` type($k) `,`
    type($v) (`,` type($mask)^)? `->` type(results)
  }];
}

def TF_AttentionGradOp : TF_InferredOp<"attention_grad"> {
  let summary = "the adjoints of tf.attention's operands, as one fused op";
  let description = [{
    What the VJP of a `tf.attention` emits when its weights have no adjoint:
    with `P` the attention weights (recomputed, never stored) and `dO` the
    adjoint of the values,
    `dV = P^T dO`, `dP = dO V^T`, `dS = P (dP - Σ_row dP P)` (0 where the
    mask is false), `dQ = scale dS K`, `dK = scale dS^T Q`. A backend runs it
    as one kernel per head (flash-attention style: P tile by tile); the
    reference interpreter evaluates the formulas.
  }];
  let arguments = (ins TF_FloatTensor:$q, TF_FloatTensor:$k, TF_FloatTensor:$v,
                       Optional<TF_BoolTensor>:$mask, TF_FloatTensor:$dvalues,
                       F32Attr:$scale);
  let results = (outs TF_FloatTensor:$dq, TF_FloatTensor:$dk, TF_FloatTensor:$dv);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`mask` $mask^)? `grad` $dvalues `scale` $scale attr-dict
    `:` type($q) `,` type($k) `,` type($v) `,` type($dvalues) (`,` type($mask)^)?
    `->` type(results)
  }];
}

def TF_Conv1dOp : TF_InferredOp<"conv1d", [TF_Differentiable,
    DeclareOpInterfaceMethods<TF_ProductOpInterface>]> {
  let summary = "1-d convolution in PyTorch's NCW layout, stride 1";
  let description = [{
    x `[N, Cin, W]`, weight `[Cout, Cin, K]`, optional bias `[Cout]`, zero
    padding of `padding` on both sides: result `[N, Cout, W + 2p - K + 1]`.
  }];
  let arguments = (ins TF_FloatTensor:$x, TF_FloatTensor:$weight,
                       Optional<TF_FloatTensor>:$bias, I64Attr:$padding);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $weight (`,` $bias^)? `padding` $padding attr-dict `:` type($x) `,`
    type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// Whether the kernel is wider than the output: the shape of a weight
    /// gradient (the "kernel" is the sequence), computed as one product per
    /// output position rather than one per sample.
    bool isPerPosition() {
      return getWeight().getType().getDimSize(2) > getType().getDimSize(2);
    }
  }];
}

def TF_OneHotOp : TF_InferredOp<"one_hot", [TF_LoopFusible, TF_Indexing]> {
  let summary = "one-hot f32 encoding of i32 indices";
  let arguments = (ins TF_IntTensor:$ids, I64Attr:$depth);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = "$ids `depth` $depth attr-dict `:` type($ids) `->` type($result)";
}

def TF_GatherOp : TF_InferredOp<"gather", [TF_Differentiable, TF_LoopFusible, TF_Indexing]> {
  let summary = "row lookup (embedding): table[V, D] at ids[...] -> [..., D]";
  let description = [{
    `out[..., d] = table[ids[...], d]`. With `columns` the table is `[D, V]`
    and each lookup reads a column, `out[..., d] = table[d, ids[...]]`: a
    linear layer's weight applied to a one-hot (canonicalization rewrites
    `matmul(one_hot(ids), W)` so), with no GEMM and no one-hot in memory.
    ```mlir
    %x = tf.gather %w, %ids columns : tensor<32x10xf32>, tensor<2048xi32> -> tensor<2048x32xf32>
    ```
  }];
  let arguments = (ins TF_FloatTensor:$table, TF_IntTensor:$ids, UnitAttr:$columns);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids (`columns` $columns^)? attr-dict `:` type($table) `,` type($ids) `->`
    type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def TF_CrossEntropyOp : TF_InferredOp<"cross_entropy",
                                       [TF_Differentiable, TF_ReductionFusible, TF_Indexing]> {
  let summary = "mean softmax cross-entropy with integer labels";
  let description = [{
    `axis` of logits holds the classes; labels have the logits' shape without
    that axis. The result is the mean over all label positions of
    `-log_softmax(logits)[label]`.
  }];
  let arguments = (ins TF_FloatTensor:$logits, TF_IntTensor:$labels,
                       I64Attr:$axis);
  let results = (outs TF_ScalarFloat:$result);
  let assemblyFormat = [{
    $logits `,` $labels `axis` $axis attr-dict `:` type($logits) `,` type($labels)
  }];
}

def TF_CrossEntropyGradOp : TF_InferredOp<"cross_entropy_grad", [TF_Indexing]> {
  let summary = "the adjoint of tf.cross_entropy's logits, as one fused op";
  let description = [{
    What the VJP of a `tf.cross_entropy` emits: with `g` the adjoint of its
    (scalar) result and `N` the number of label positions,
    `dlogits = (softmax(logits, axis) - one_hot(labels on axis)) g / N`.
    Labels have the logits' shape without `axis`; a label outside the
    classes is an error in the interpreter, and clamped into them by the
    compiled code (as tf.cross_entropy's). The CUDA backend runs it as the
    hand-written kernel `tfc_cuda_cross_entropy_backward` (a warp a row), or
    with the `tf.cross_entropy` of the same logits and labels as one call,
    `tfc_cuda_cross_entropy_fused` (each row read once);
    the CPU backend rewrites it into those formulas first (tf-decompose),
    so that they fuse with their neighbours. Not differentiable itself.
  }];
  let arguments = (ins TF_FloatTensor:$logits, TF_IntTensor:$labels, TF_ScalarFloat:$grad,
                       I64Attr:$axis);
  let results = (outs TF_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `grad` $grad `axis` $axis attr-dict `:` type($logits) `,` type($labels) `,`
    type($grad)
  }];
}

def TF_MseOp : TF_InferredOp<"mse", [TF_Differentiable, TF_ReductionFusible]> {
  let summary = "mean squared error over all elements";
  let arguments = (ins TF_FloatTensor:$lhs, TF_FloatTensor:$rhs);
  let results = (outs TF_ScalarFloat:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` custom<OperandTypes>(type($lhs), type($rhs))
  }];
}

//===----------------------------------------------------------------------===//
// Fusion (tf-fuse's result)
//===----------------------------------------------------------------------===//

def TF_FusionOp : TF_Op<"fusion", [SingleBlock, RecursiveMemoryEffects,
                                   RecursivelySpeculatable]> {
  let summary = "a group of tf ops that compiles to one loop nest";
  let description = [{
    tf-fuse's unit of code generation: the ops of the body (which may read
    any value defined above) run as one loop nest per backend, so the values
    passed between them never reach memory. The results are the values the
    body yields, those that are used outside it. `kind` says what was fused:

    - `loop`: elementwise and broadcast ops over one iteration space; several
      results are several outputs of the same loop;
    - `reduction`: a reduction or normalisation op (reduce_*, softmax,
      log_softmax, layer_norm, cross_entropy, mse, argmax) with the
      elementwise ops that produce its operand, computed inside its loops;
    - `gemm`: one tf.matmul (2-D or a batch) or tf.conv1d (a batch of
      [out channels, time] products, not a weight gradient's per-position
      form) and its epilogue, a loop group over the product's result (bias,
      activation, residual, a relu's backward mask): a backend applies the
      epilogue to each block of rows as the GEMM completes it, so the
      product never makes a round trip through memory. The product's own
      result is not a result of the fusion;
    - `horizontal`: independent loop groups over different shapes (the
      optimizer's update of every parameter) run as one pass over all their
      elements, split evenly between the threads.

    ```mlir
    %r = tf.fusion "loop" : tensor<128x32xf32> {
      %s = tf.add %a, %b : tensor<128x32xf32>
      %y = tf.relu %s : tensor<128x32xf32>
      tf.yield %y : tensor<128x32xf32>
    }
    ```
    Semantics are those of the body's ops in order; the interpreter runs
    them as they are, so fusion cannot change a result.
  }];
  let arguments = (ins StrAttr:$kind);
  let results = (outs Variadic<TF_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$kind attr-dict `:` type($results) $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
  }];
}

def TF_YieldOp : TF_Op<"yield", [Pure, Terminator,
                                 HasParent<"FusionOp">]> {
  let summary = "the values a tf.fusion returns";
  let arguments = (ins Variadic<TF_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // TFC_DIALECT_TFOPS_TD
