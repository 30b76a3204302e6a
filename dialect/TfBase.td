//===- TfBase.td - the tf dialect, its types and attributes ---------------===//
//
// tf is tfc's graph dialect: value-semantic tensors with static shapes,
// explicit broadcasts, and whole high-level ops (softmax, layer_norm,
// attention, ...) that keep their own gradient rules and fused kernels.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFBASE_TD
#define TFC_DIALECT_TFBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def TF_Dialect : Dialect {
  let name = "tf";
  let cppNamespace = "::tfc::tf";
  let summary = "tfc's transformer graph dialect";
  let description = [{
    Ops on ranked tensors with static shapes and f32, i32 or i1 elements.
    Elementwise ops take operands of identical shape; broadcasts are explicit
    (`tf.broadcast_in_dim`). Model parameters are function arguments carrying
    `tf.param` (their name) and `tf.init` (their initialiser).
  }];
  let useDefaultAttributePrinterParser = 1;
  // Attributes stay in the dictionary so a front end can ask an op to infer
  // its types (and reject bad shapes) before creating it.
  let usePropertiesForAttributes = 0;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    // Argument and result attribute names, in one place.
    static constexpr ::llvm::StringLiteral kParamAttr = "tf.param";
    static constexpr ::llvm::StringLiteral kInitAttr = "tf.init";
    // A parameter AdamW leaves undecayed by default (an embedding table).
    static constexpr ::llvm::StringLiteral kNoDecayAttr = "tf.no_decay";
    // A parameter's explicit weight-decay choice (a bool): it decays, or
    // not, whatever the optimizer's default rule and decay_all say.
    static constexpr ::llvm::StringLiteral kDecayAttr = "tf.decay";
    static constexpr ::llvm::StringLiteral kInputAttr = "tf.input";
    static constexpr ::llvm::StringLiteral kSeedAttr = "tf.seed";
    // The index of the batch's first sample in the global batch (a rank's
    // share of a data-parallel batch), which dropout's masks count from.
    static constexpr ::llvm::StringLiteral kSampleOffsetAttr = "tf.sample_offset";
    static constexpr ::llvm::StringLiteral kOutputAttr = "tf.output";
    static constexpr ::llvm::StringLiteral kLossAttr = "tf.loss";
    static constexpr ::llvm::StringLiteral kMetricAttr = "tf.metric";
    static constexpr ::llvm::StringLiteral kAttentionAttr = "tf.attention";
    // A self-attention layer's key or value cache, [1, heads, length, head
    // dim], by name ("encoder.0.self_attn.k"): a result of a generating
    // model's prefill function, an argument and a result of its decode step.
    static constexpr ::llvm::StringLiteral kKvCacheAttr = "tf.kv_cache";
    // The decode step's position in the sequence, a tensor<i32>.
    static constexpr ::llvm::StringLiteral kPositionAttr = "tf.position";
    // On a function: "prefill" or "decode", the generation functions of a
    // model that declares `generate` (Builder::generate); tf-entry-points
    // makes them the entries of those names.
    static constexpr ::llvm::StringLiteral kGenerationAttr = "tf.generation";
    // On a model function: the compiled batch size (an i64), the leading
    // dimension of every input and output that has one.
    static constexpr ::llvm::StringLiteral kBatchAttr = "tf.batch";
    // On the module: the model's train settings (Builder::train), read by
    // tf-autodiff and carried into the binary's manifest.
    static constexpr ::llvm::StringLiteral kTrainAttr = "tf.train";
  }];
}

//===----------------------------------------------------------------------===//
// Tensor constraints
//===----------------------------------------------------------------------===//

def TF_Tensor : StaticShapeTensorOf<[F32, I32, I1]>;
def TF_FloatTensor : StaticShapeTensorOf<[F32]>;
def TF_IntTensor : StaticShapeTensorOf<[I32]>;
def TF_BoolTensor : StaticShapeTensorOf<[I1]>;
def TF_ScalarFloat : 0DTensorOf<[F32]>;
def TF_ScalarInt : 0DTensorOf<[I32]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI32Type())">;

//===----------------------------------------------------------------------===//
// Enums and attributes
//===----------------------------------------------------------------------===//

def TF_CmpEQ : I32EnumAttrCase<"eq", 0>;
def TF_CmpNE : I32EnumAttrCase<"ne", 1>;
def TF_CmpLT : I32EnumAttrCase<"lt", 2>;
def TF_CmpLE : I32EnumAttrCase<"le", 3>;
def TF_CmpGT : I32EnumAttrCase<"gt", 4>;
def TF_CmpGE : I32EnumAttrCase<"ge", 5>;
def TF_ComparePredicate : I32EnumAttr<"ComparePredicate", "comparison predicate",
    [TF_CmpEQ, TF_CmpNE, TF_CmpLT, TF_CmpLE, TF_CmpGT, TF_CmpGE]> {
  let cppNamespace = "::tfc::tf";
}

def TF_InitZeros : I32EnumAttrCase<"zeros", 0>;
def TF_InitOnes : I32EnumAttrCase<"ones", 1>;
def TF_InitUniform : I32EnumAttrCase<"uniform", 2>;
def TF_InitNormal : I32EnumAttrCase<"normal", 3>;
def TF_InitKind : I32EnumAttr<"InitKind", "parameter initialiser kind",
    [TF_InitZeros, TF_InitOnes, TF_InitUniform, TF_InitNormal]> {
  let cppNamespace = "::tfc::tf";
  let genSpecializedAttr = 0;
}

// How a parameter is drawn: zeros, ones, uniform(-scale, scale) or
// normal(0, scale). The front end computes the scale from the fan-in/out the
// PyTorch initialiser uses (xavier-uniform, kaiming-uniform(a=sqrt 5), ...).
def TF_InitAttr : AttrDef<TF_Dialect, "Init"> {
  let mnemonic = "init";
  let summary = "parameter initialiser";
  let parameters = (ins "::tfc::tf::InitKind":$kind, "::llvm::APFloat":$scale);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // TFC_DIALECT_TFBASE_TD
