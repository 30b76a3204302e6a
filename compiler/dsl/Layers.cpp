//===- Layers.cpp - the DSL's layers: composites defined once -------------===//
//
// Parameter names and initialisers follow PyTorch (and the UvA tutorial), so
// weights exchanged through safetensors load into the PyTorch modules.
//
//===----------------------------------------------------------------------===//

#include "compiler/dsl/DSL.h"
#include "compiler/dsl/ShapeText.h"

#include <cmath>

using namespace mlir;

namespace tfc {

using tf::InitKind;

namespace {
bool requireFloat(Tensor x, StringRef layer) {
  if (x.dtype() == DType::f32)
    return true;
  x.builder().error(layer + " needs an f32 input, got " + shapeStr(x.shape()) +
                    " of integers or bools (use " +
                    x.builder().spelling("to_float()", "float()") +
                    ", one_hot() or embedding())");
  return false;
}

const char *dtypeName(DType t) {
  return t == DType::f32 ? "f32" : t == DType::i32 ? "i32" : "bool";
}

/// Whether `tied`, a tensor given to `layer` through its option `option` in
/// place of a parameter it would make, is f32 of that parameter's `shape`
/// (`dims` names them); reports it if not.
bool checkTied(Tensor tied, ArrayRef<int64_t> shape, StringRef layer, StringRef option,
               StringRef dims) {
  if (tied.dtype() == DType::f32 && tied.shape() == shape)
    return true;
  Builder &b = tied.builder();
  b.error(layer + ": " + b.spelling(("." + option).str(), (option + ":").str()) + " is " +
          dtypeName(tied.dtype()) + " " + shapeStr(tied.shape()) + ", but the layer needs f32 " +
          shapeStr(shape) + " (" + dims + ")");
  return false;
}

/// x @ W^T + b over the last dimension of x, with W [out, in] drawn by
/// `weightInit` (or `tied`, when valid) and b uniform(+-biasBound) or zeros.
Tensor affine(Tensor x, int64_t out, bool bias, Init weightInit,
              std::optional<double> biasBound, Tensor tied = {}) {
  Builder &b = x.builder();
  int64_t in = x.dim(-1);
  if (tied.valid() && !checkTied(tied, {out, in}, "linear", "weight", "[out, in]"))
    return {};
  Tensor w = tied.valid() ? tied : b.param("weight", {out, in}, weightInit);
  Tensor bvec;
  if (bias)
    bvec = biasBound ? b.param("bias", {out}, InitKind::uniform, *biasBound)
                     : b.param("bias", {out}, InitKind::zeros);
  if (!w.valid() || (bias && !bvec.valid()))
    return {};
  SmallVector<int64_t> outShape(x.shape().drop_back());
  outShape.push_back(out);
  Tensor flat = x.rank() == 2 ? x : reshape(x, {-1, in});
  std::vector<Tensor> r = b.create<tf::MatmulOp>(
      {flat, w}, {b.ops().getNamedAttr("transpose_rhs", b.ops().getUnitAttr())});
  if (r.empty())
    return {};
  Tensor y = r[0];
  if (bias)
    y = y + bvec;
  return reshape(y, outShape);
}

/// The tutorial's projections inside attention: xavier-uniform (or `init`),
/// zero bias.
Tensor xavierLinear(Tensor x, int64_t out, StringRef name, std::optional<Init> init) {
  Builder::Scope scope(x.builder(), name);
  return affine(x, out, /*bias=*/true, init.value_or(Init::xavier()), std::nullopt);
}

/// [B, T, H * parts * hd] -> `parts` tensors [B, H, T, hd]: each head owns a
/// contiguous chunk of the projection (the tutorial's reshape + chunk).
std::vector<Tensor> splitHeads(Tensor x, int64_t heads, int64_t parts) {
  if (!x.valid())
    return std::vector<Tensor>(parts);
  int64_t hd = x.dim(-1) / (heads * parts);
  Tensor t = transpose(reshape(x, {x.dim(0), x.dim(1), heads, parts * hd}),
                       {0, 2, 1, 3});
  std::vector<Tensor> out;
  for (int64_t p = 0; p < parts; ++p)
    out.push_back(slice(t, -1, p * hd, (p + 1) * hd));
  return out;
}

Tensor feedForward(Tensor x, int64_t hidden, double rate, Activation activation,
                   std::optional<Init> init) {
  if (!x.valid())
    return {};
  if (activation == Activation::swiglu) {
    // One projection for the gate and the value, as PyTorch ports fuse them.
    Tensor gateAndValue =
        linear(x, 2 * hidden, {.bias = true, .name = "linear1", .init = init});
    int64_t last = gateAndValue.valid() ? gateAndValue.rank() - 1 : 0;
    Tensor h = silu(slice(gateAndValue, last, 0, hidden)) *
               slice(gateAndValue, last, hidden, 2 * hidden);
    h = dropout(h, rate);
    return linear(h, x.dim(-1), {.bias = true, .name = "linear2", .init = init});
  }
  Tensor h = linear(x, hidden, {.bias = true, .name = "linear1", .init = init});
  h = dropout(h, rate);
  h = activation == Activation::gelu ? gelu(h) : relu(h);
  return linear(h, x.dim(-1), {.bias = true, .name = "linear2", .init = init});
}

/// A block's feed-forward width, after checking the block's input and size.
std::optional<int64_t> ffnWidth(Tensor x, int64_t ffn, int64_t layers,
                                StringRef layer) {
  if (x.rank() != 3) {
    x.builder().error(layer + " needs an input [batch, seq, dim], got " +
                      shapeStr(x.shape()));
    return std::nullopt;
  }
  // A bound, so a typo cannot make the compiler build for hours.
  if (layers <= 0 || layers > 1024) {
    x.builder().error(layer + ": " + Twine(layers) +
                      " layers is outside [1, 1024]");
    return std::nullopt;
  }
  if (ffn == 0)
    return 2 * x.dim(-1);
  if (ffn < 0) {
    x.builder().error(layer + ": ffn width " + Twine(ffn) + " must be positive");
    return std::nullopt;
  }
  return ffn;
}
} // namespace

Tensor linear(Tensor x, int64_t out, const LinearOptions &options, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireFloat(x, "linear"))
    return {};
  Builder &b = x.builder();
  if (x.rank() < 1)
    return b.error("linear needs an input of rank >= 1");
  if (out <= 0)
    return b.error("linear: output width " + Twine(out) + " must be positive");
  Builder::Scope scope(b, b.layerName("linear", options.name));
  Builder::DecayScope decay(b, options.decay);
  // PyTorch's nn.Linear: kaiming-uniform(a = sqrt 5) weight and bias, both
  // uniform(+-1/sqrt(in)).
  Init init = options.init.value_or(Init::kaiming());
  double bound = 1.0 / std::sqrt(static_cast<double>(x.dim(-1)));
  if (x.rank() == 1)
    return squeeze(affine(unsqueeze(x, 0), out, options.bias, init, bound, options.weight), 0);
  return affine(x, out, options.bias, init, bound, options.weight);
}

Tensor parameter(Builder &b, ArrayRef<int64_t> shape, const ParameterOptions &options,
                 SourceLoc at) {
  Builder::CallSite site(&b, at);
  Builder::DecayScope decay(b, options.decay);
  return b.param(b.layerName("parameter", options.name), shape, options.init);
}

Tensor layer_norm(Tensor x, const LayerNormOptions &options, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireFloat(x, "layer_norm"))
    return {};
  Builder &b = x.builder();
  if (x.rank() < 1)
    return b.error("layer_norm needs an input of rank >= 1");
  if (!(options.epsilon > 0))
    return b.error("layer_norm: epsilon must be positive");
  Builder::Scope scope(b, b.layerName("layer_norm", options.name));
  Builder::DecayScope decay(b, options.decay);
  Tensor gamma = b.param("weight", {x.dim(-1)}, InitKind::ones);
  Tensor beta = b.param("bias", {x.dim(-1)}, InitKind::zeros);
  std::vector<Tensor> r = b.create<tf::LayerNormOp>(
      {x, gamma, beta},
      {b.ops().getNamedAttr("epsilon", b.ops().getF32FloatAttr(options.epsilon))});
  return r.empty() ? Tensor() : r[0];
}

Tensor conv1d(Tensor x, int64_t out, const Conv1dOptions &options, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireFloat(x, "conv1d"))
    return {};
  Builder &b = x.builder();
  if (x.rank() != 3)
    return b.error("conv1d needs an input [batch, channels, width], got " +
                   shapeStr(x.shape()));
  if (out <= 0 || options.kernel <= 0 || options.padding < 0)
    return b.error("conv1d needs positive out channels and kernel and a "
                   "non-negative padding");
  Builder::Scope scope(b, b.layerName("conv1d", options.name));
  Builder::DecayScope decay(b, options.decay);
  // PyTorch's nn.Conv1d: kaiming-uniform(a = sqrt 5) weight, bias
  // uniform(+-1/sqrt(fan_in)).
  int64_t fanIn = x.dim(1) * options.kernel;
  double bound = 1.0 / std::sqrt(static_cast<double>(fanIn));
  Tensor w = b.param("weight", {out, x.dim(1), options.kernel},
                     options.init.value_or(Init::kaiming()));
  std::vector<Tensor> operands = {x, w};
  if (options.bias)
    operands.push_back(b.param("bias", {out}, InitKind::uniform, bound));
  std::vector<Tensor> r = b.create<tf::Conv1dOp>(
      operands, {b.ops().getNamedAttr(
                    "padding", b.ops().getI64IntegerAttr(options.padding))});
  return r.empty() ? Tensor() : r[0];
}

Tensor embedding(Tensor ids, int64_t vocab, int64_t dim,
                 const EmbeddingOptions &options, SourceLoc at) {
  Builder::CallSite site({ids}, at);
  if (!ids.valid())
    return {};
  Builder &b = ids.builder();
  if (ids.dtype() != DType::i32)
    return b.error("embedding needs i32 ids, got " + shapeStr(ids.shape()) +
                   (ids.dtype() == DType::f32 ? " of f32" : " of bool"));
  if (vocab <= 0 || dim <= 0)
    return b.error("embedding needs a positive vocabulary and dimension");
  Builder::Scope scope(b, b.layerName("embedding", options.name));
  Builder::DecayScope decay(b, options.decay);
  Tensor table = options.table;
  if (table.valid()) {
    if (!checkTied(table, {vocab, dim}, "embedding", "table", "[vocab, dim]"))
      return {};
  } else {
    table = b.param("weight", {vocab, dim}, options.init.value_or(Init::normal(1.0)));
    if (!options.decay)
      b.noWeightDecay(table); // as the GPT-2 and BERT recipes leave embeddings
  }
  std::vector<Tensor> r = b.create<tf::GatherOp>({table, ids});
  return r.empty() ? Tensor() : r[0];
}

Tensor multi_head_attention(Tensor x, const AttentionOptions &options,
                            SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireFloat(x, "multi_head_attention"))
    return {};
  Builder &b = x.builder();
  bool cross = options.memory.valid();
  if (x.rank() != 3)
    return b.error("multi_head_attention needs an input [batch, seq, dim], got " +
                   shapeStr(x.shape()));
  int64_t dim = x.dim(-1), heads = options.heads;
  if (heads <= 0 || dim % heads != 0)
    return b.error("multi_head_attention: " + Twine(heads) +
                   " heads do not divide the model dimension " + Twine(dim));
  if (cross && (options.memory.rank() != 3 || options.memory.dim(0) != x.dim(0) ||
                options.memory.dim(-1) != dim))
    return b.error("multi_head_attention: memory " +
                   shapeStr(options.memory.shape()) +
                   " must be [batch, seq, dim] matching the input " +
                   shapeStr(x.shape()));
  std::string name = b.layerName(cross ? "cross_attn" : "self_attn", options.name);
  std::string qualifiedName = b.qualified(name);
  Builder::Scope scope(b, name);
  Builder::DecayScope decay(b, options.decay);

  Tensor q, k, v;
  if (cross) {
    q = splitHeads(xavierLinear(x, dim, "q", options.init), heads, 1)[0];
    std::vector<Tensor> kv =
        splitHeads(xavierLinear(options.memory, 2 * dim, "kv", options.init), heads, 2);
    k = kv[0];
    v = kv[1];
  } else {
    std::vector<Tensor> qkv =
        splitHeads(xavierLinear(x, 3 * dim, "qkv", options.init), heads, 3);
    q = qkv[0];
    k = qkv[1];
    v = qkv[2];
  }
  if (!Builder::allValid({q, k, v}))
    return {};
  if (b.generationPass() != GenerationPass::none) {
    // Generation runs the sequence one position at a time: only causal
    // self-attention sees the same keys either way.
    if (cross)
      return b.error("generate: a generating model reads only its tokens, but '" +
                     qualifiedName + "' attends to a memory (cross-attention)");
    if (!b.isCausalMask(options.mask))
      return b.error("generate: self-attention '" + qualifiedName +
                     "' must be causal to generate one token at a time: give it " +
                     b.spelling("{.mask = causal_mask(b, seq)}", "mask: causal_mask(seq)").str() +
                     " (directly)");
    k = b.kvCache(qualifiedName + ".k", k);
    v = b.kvCache(qualifiedName + ".v", v);
    if (!Builder::allValid({k, v}))
      return {};
  }

  Tensor mask = options.mask;
  if (mask.valid()) {
    // The tutorial's expand_mask: 2-d broadcasts over batch and heads, 3-d
    // [B, Tq, Tk] over heads, 4-d is taken as is.
    if (mask.rank() < 2 || mask.rank() > 4)
      return b.error("attention mask must have 2, 3 or 4 dimensions, got " +
                     shapeStr(mask.shape()));
    if (mask.rank() == 3)
      mask = unsqueeze(mask, 1);
    mask = broadcast_to(mask, {x.dim(0), heads, q.dim(-2), k.dim(-2)});
    if (!mask.valid())
      return {};
  }
  bool wantWeights = options.weights || b.options().recordAttention;
  Attention attn = scaled_dot_product(q, k, v, mask, wantWeights);
  if (!attn.values.valid())
    return {};
  if (options.weights)
    *options.weights = attn.weights;
  if (b.options().recordAttention)
    b.attentionMap(qualifiedName, attn.weights);
  Tensor merged = reshape(transpose(attn.values, {0, 2, 1, 3}),
                          {x.dim(0), x.dim(1), dim});
  return xavierLinear(merged, dim, "out", options.init);
}

Tensor encoder(Tensor x, const EncoderOptions &options, SourceLoc at) {
  Builder::CallSite site({x}, at);
  if (!x.valid() || !requireFloat(x, "encoder"))
    return {};
  Builder &b = x.builder();
  auto ffn = ffnWidth(x, options.ffn, options.layers, "encoder");
  if (!ffn)
    return {};
  Builder::Scope scope(b, b.layerName("encoder", options.name));
  Builder::DecayScope decay(b, options.decay);
  bool pre = options.norm == NormPlacement::pre;
  double rate = options.dropout;
  for (int64_t i = 0; i < options.layers && x.valid(); ++i) {
    Builder::Scope block(b, std::to_string(i));
    AttentionOptions attn{.heads = options.heads, .mask = options.mask,
                          .name = "self_attn", .init = options.init};
    if (pre) {
      x = x + dropout(multi_head_attention(layer_norm(x, {.name = "norm1"}), attn), rate);
      x = x + dropout(feedForward(layer_norm(x, {.name = "norm2"}), *ffn, rate,
                                  options.activation, options.init),
                      rate);
    } else {
      x = layer_norm(x + dropout(multi_head_attention(x, attn), rate), {.name = "norm1"});
      x = layer_norm(
          x + dropout(feedForward(x, *ffn, rate, options.activation, options.init), rate),
          {.name = "norm2"});
    }
  }
  return pre ? layer_norm(x, {.name = "norm"}) : x;
}

Tensor decoder(Tensor x, Tensor memory, const DecoderOptions &options,
               SourceLoc at) {
  Builder::CallSite site({x, memory}, at);
  if (!x.valid() || !memory.valid() || !requireFloat(x, "decoder"))
    return {};
  Builder &b = x.builder();
  auto ffn = ffnWidth(x, options.ffn, options.layers, "decoder");
  if (!ffn)
    return {};
  Builder::Scope scope(b, b.layerName("decoder", options.name));
  Builder::DecayScope decay(b, options.decay);
  bool pre = options.norm == NormPlacement::pre;
  double rate = options.dropout;
  for (int64_t i = 0; i < options.layers && x.valid(); ++i) {
    Builder::Scope block(b, std::to_string(i));
    AttentionOptions self{.heads = options.heads, .mask = options.mask,
                          .name = "self_attn", .init = options.init};
    AttentionOptions cross{.heads = options.heads, .memory = memory,
                           .mask = options.memoryMask, .name = "cross_attn",
                           .init = options.init};
    if (pre) {
      x = x + dropout(multi_head_attention(layer_norm(x, {.name = "norm1"}), self), rate);
      x = x + dropout(multi_head_attention(layer_norm(x, {.name = "norm2"}), cross), rate);
      x = x + dropout(feedForward(layer_norm(x, {.name = "norm3"}), *ffn, rate,
                                  options.activation, options.init),
                      rate);
    } else {
      x = layer_norm(x + dropout(multi_head_attention(x, self), rate), {.name = "norm1"});
      x = layer_norm(x + dropout(multi_head_attention(x, cross), rate), {.name = "norm2"});
      x = layer_norm(
          x + dropout(feedForward(x, *ffn, rate, options.activation, options.init), rate),
          {.name = "norm3"});
    }
  }
  return pre ? layer_norm(x, {.name = "norm"}) : x;
}

} // namespace tfc
