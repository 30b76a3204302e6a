//===- Parser.cpp - the .tf language, turned into DSL calls ---------------===//
//
// Two passes over one token vector:
//  1. check: the whole file's syntax; records each def (its parameters and
//     the token where its body starts), each model and each train block
//     (train blocks are constants and are evaluated here);
//  2. build: the chosen model's statements again, now evaluated through the
//     DSL. A call of a def re-reads the def's body tokens in a fresh frame
//     under a Builder::Scope: that is the inlining.
// Values are constants (folded here), lists, tensors (DSL handles) or the
// tuple a call like scaled_dot_product returns.
//
// Any input ends in a module or in one diagnostic: nesting is bounded
// (kMaxNesting), recursion through defs is reported as a cycle, and the
// work a model may expand to through def calls is bounded.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontend/Parser.h"
#include "compiler/dsl/DSL.h"
#include "compiler/frontend/Diagnostics.h"
#include "compiler/frontend/Lexer.h"
#include "runtime/TrainBlock.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

using namespace mlir;
using llvm::SmallVector;
using llvm::StringRef;
using llvm::Twine;

namespace tfc {
namespace {

/// Deepest nesting of expressions (parentheses, lists, call arguments) and
/// of def calls within one another. At the limit the parser uses about 1 MB
/// of stack (3 MB under ASan), well within a main thread's 8 MB.
constexpr int kMaxNesting = 256;
/// Statements a model may expand to through def calls (guards against
/// exponential inlining, e.g. each def calling the next one twice).
constexpr int64_t kMaxStatements = 200000;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

struct Value {
  enum class Kind { Unknown, Int, Float, Bool, Str, Tensor, List, Tuple, Init };
  Kind kind = Kind::Unknown; // Unknown: while only checking syntax
  int64_t i = 0;
  double f = 0.0;
  bool b = false;
  std::string s;
  Tensor t;
  Init init; // an initialiser: `xavier`, `normal(0.02)`
  /// List and Tuple elements; shared, so copying a value is cheap.
  std::shared_ptr<const std::vector<Value>> elemsPtr;
  const std::vector<Value> &elems() const {
    static const std::vector<Value> none;
    return elemsPtr ? *elemsPtr : none;
  }

  static Value integer(int64_t v) {
    Value r;
    r.kind = Kind::Int;
    r.i = v;
    return r;
  }
  static Value number(double v) {
    Value r;
    r.kind = Kind::Float;
    r.f = v;
    return r;
  }
  static Value boolean(bool v) {
    Value r;
    r.kind = Kind::Bool;
    r.b = v;
    return r;
  }
  static Value string(std::string v) {
    Value r;
    r.kind = Kind::Str;
    r.s = std::move(v);
    return r;
  }
  static Value tensor(Tensor v) {
    Value r;
    r.kind = Kind::Tensor;
    r.t = v;
    return r;
  }
  static Value initialiser(Init v) {
    Value r;
    r.kind = Kind::Init;
    r.init = v;
    return r;
  }
  static Value list(std::vector<Value> v, Kind kind = Kind::List) {
    Value r;
    r.kind = kind;
    r.elemsPtr = std::make_shared<const std::vector<Value>>(std::move(v));
    return r;
  }

  bool is(Kind k) const { return kind == k; }
  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }
  bool isConstant() const {
    return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool ||
           kind == Kind::Str;
  }
  double asDouble() const { return kind == Kind::Int ? static_cast<double>(i) : f; }
};
using VK = Value::Kind;

std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::f32:
    return "f32";
  case DType::i32:
    return "i32";
  case DType::boolean:
    return "bool";
  }
  return "?";
}

/// A name as it appears in a message, cut short if huge, bytes that are not
/// printable escaped (names are ASCII; this keeps it so whatever reaches here).
std::string quote(StringRef name) {
  if (name.size() > 64)
    return "'" + escapeForTerminal(name.take_front(60)) + "...'";
  return "'" + escapeForTerminal(name) + "'";
}

std::string describe(const Value &v) {
  switch (v.kind) {
  case VK::Unknown:
    return "an unknown value";
  case VK::Int:
    return "the integer " + std::to_string(v.i);
  case VK::Float:
  {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", v.f);
    return std::string("the number ") + text;
  }
  case VK::Bool:
    return v.b ? "true" : "false";
  case VK::Str:
    return "a string";
  case VK::Tensor:
    if (!v.t.valid())
      return "an undefined tensor";
    return std::string("a tensor ") + dtypeName(v.t.dtype()) + shapeStr(v.t.shape());
  case VK::List:
    return "a list";
  case VK::Tuple:
    return std::to_string(v.elems().size()) + " values";
  case VK::Init:
    return "the initialiser " + v.init.str();
  }
  return "a value";
}

/// The candidate `name` most likely meant, if any: one that differs only in
/// case (`AdamW` is `adamw`), else the closest within a few edits, else the
/// longest of at least 3 characters that `name` starts with (`prenorm` is
/// `pre`, `softmax2d` is `softmax`).
std::optional<std::string> closest(StringRef name, const std::vector<std::string> &candidates) {
  // Typos are short; the cost of edit_distance grows with both lengths.
  constexpr size_t kMaxLength = 64;
  if (name.size() > kMaxLength)
    return std::nullopt;
  for (const std::string &c : candidates)
    if (c != name && name.equals_insensitive(c))
      return c;
  unsigned maxDist = std::clamp<unsigned>((name.size() + 2) / 3, 1, 3);
  unsigned best = maxDist + 1;
  StringRef bestName;
  for (const std::string &c : candidates) {
    StringRef cand(c);
    if (cand == name || cand.size() > kMaxLength ||
        (cand.size() > name.size() ? cand.size() - name.size()
                                   : name.size() - cand.size()) > maxDist)
      continue;
    unsigned d = name.edit_distance(cand, /*AllowReplacements=*/true, maxDist);
    if (d < best) {
      best = d;
      bestName = cand;
    }
  }
  if (bestName.empty())
    for (const std::string &c : candidates)
      if (c.size() >= 3 && c.size() > bestName.size() && c != name &&
          name.starts_with_insensitive(c))
        bestName = c;
  if (bestName.empty())
    return std::nullopt;
  return bestName.str();
}

/// "; did you mean 'x'?" for the closest candidate, or "".
std::string suggest(StringRef name, const std::vector<std::string> &candidates) {
  std::optional<std::string> c = closest(name, candidates);
  return c ? "; did you mean " + quote(*c) + "?" : "";
}

//===----------------------------------------------------------------------===//
// Built-ins: one entry per DSL function, with its arguments and its
// documentation (`tfc builtins` prints the table as the reference)
//===----------------------------------------------------------------------===//

enum class ArgKind {
  Tensor,    // a tensor (a number or bool constant becomes a scalar tensor)
  OptTensor, // as Tensor, absent by default
  Int,
  Number, // int or float
  Bool,
  String,
  Norm,    // "post" or "pre"
  Activation, // "relu", "gelu" or "swiglu"
  Init,    // an initialiser: zeros, ones, normal(std), uniform(bound), xavier, kaiming
  Scalar,  // an int, a float or a bool
  DType,   // "f32", "i32" or "bool"
  Ints,    // an integer or a list of integers (axes, a shape)
  IntList, // a list of integers (perm, shape)
  Tensors, // a list of tensors
};

/// The strings an enumerated kind takes (none for the others).
std::vector<std::string> choices(ArgKind kind) {
  switch (kind) {
  case ArgKind::Norm:
    return {"post", "pre"};
  case ArgKind::Activation:
    return {"relu", "gelu", "swiglu"};
  case ArgKind::DType:
    return {"f32", "i32", "bool"};
  default:
    return {};
  }
}

/// `"a", "b" or "c"`.
std::string orList(const std::vector<std::string> &words, bool quoted) {
  std::string s;
  for (auto [i, w] : llvm::enumerate(words))
    s += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") +
         (quoted ? "\"" + w + "\"" : w);
  return s;
}

/// How the reference names a kind.
std::string kindName(ArgKind kind) {
  switch (kind) {
  case ArgKind::Tensor:
  case ArgKind::OptTensor:
    return "tensor";
  case ArgKind::Int:
    return "int";
  case ArgKind::Number:
    return "number";
  case ArgKind::Bool:
    return "bool";
  case ArgKind::String:
    return "string";
  case ArgKind::Init:
    return "initialiser";
  case ArgKind::Scalar:
    return "number or bool";
  case ArgKind::Ints:
    return "int or [ints]";
  case ArgKind::IntList:
    return "[ints]";
  case ArgKind::Tensors:
    return "[tensors]";
  case ArgKind::Norm:
  case ArgKind::Activation:
  case ArgKind::DType:
    return orList(choices(kind), /*quoted=*/true);
  }
  return "?";
}

/// dtype names from other frameworks, and the one each means here.
std::optional<std::string> dtypeAlias(StringRef name) {
  static const std::pair<const char *, const char *> aliases[] = {
      {"float", "f32"}, {"float32", "f32"}, {"fp32", "f32"},     {"int", "i32"},
      {"int32", "i32"}, {"int64", "i32"},   {"long", "i32"},     {"boolean", "bool"}};
  for (const auto &[alias, dtype] : aliases)
    if (name.equals_insensitive(alias))
      return std::string(dtype);
  return std::nullopt;
}

struct ParamSpec {
  const char *name;
  ArgKind kind = ArgKind::Tensor;
  bool required = false;
  const char *defaultText = ""; // an optional one's default, as the reference says it
  const char *doc = "";
};

ParamSpec req(const char *name, ArgKind kind, const char *doc) {
  return {name, kind, true, "", doc};
}
ParamSpec opt(const char *name, ArgKind kind, const char *defaultText, const char *doc) {
  return {name, kind, false, defaultText, doc};
}
/// The arguments every layer takes.
ParamSpec nameArg(const char *defaultText = "`{fn}`, `{fn}_1`, ... in its scope") {
  return opt("name", ArgKind::String, defaultText,
             "keyword only: the prefix of its parameters' names (`name: \"proj\"` gives "
             "`proj.weight`)");
}
ParamSpec initArg(const char *defaultText) {
  return opt("init", ArgKind::Init, defaultText,
             "the initialiser of its weight matrices (biases and norms keep theirs)");
}
ParamSpec decayArg() {
  return opt("decay", ArgKind::Bool, "the optimizer's rule",
             "false: none of its parameters gets weight decay; true: all of them do");
}

struct CallArgs;
using BuildFn = Value (*)(Builder &, const CallArgs &);

/// The reference's sections, in order.
enum class Group { Layer, Learnable, Constant, Attention, Elementwise, Reduction, Shape, Loss };

const char *groupTitle(Group g) {
  switch (g) {
  case Group::Layer:
    return "Layers";
  case Group::Learnable:
    return "Learnable tensors and initialisers";
  case Group::Constant:
    return "Constant tensors";
  case Group::Attention:
    return "Encodings, masks, attention and dropout";
  case Group::Elementwise:
    return "Elementwise";
  case Group::Reduction:
    return "Reductions and softmax";
  case Group::Shape:
    return "Shapes and dtypes";
  case Group::Loss:
    return "Losses";
  }
  return "";
}

/// The inputs the examples use: a model that declares them and binds an
/// example compiles to a result of the example's type (BuiltinsTest).
constexpr const char *kExampleInputs =
    "input x: f32[2, 4, 8]\ninput y: f32[2, 4, 8]\ninput ids: i32[2, 4]\n";

struct BuiltinSpec {
  const char *name;
  Group group;
  const char *doc;         // one line: what it computes
  const char *shape;       // the result's shape, from the arguments'
  const char *example;     // an expression over kExampleInputs
  const char *exampleType; // the example's result: "f32[2, 4, 16]", "(f32[..], f32[..])"
  std::vector<ParamSpec> params; // `name` is keyword-only, the rest positional too
  BuildFn build;
};

/// The arguments of one built-in call, converted to the kinds it declares.
struct CallArgs {
  const BuiltinSpec *spec;
  std::vector<std::optional<Value>> values;

  const Value *get(StringRef name) const {
    for (auto [i, p] : llvm::enumerate(spec->params))
      if (name == p.name)
        return values[i] ? &*values[i] : nullptr;
    return nullptr;
  }
  Tensor tensor(StringRef name) const {
    const Value *v = get(name);
    return v ? v->t : Tensor();
  }
  int64_t integer(StringRef name, int64_t otherwise = 0) const {
    const Value *v = get(name);
    return v ? v->i : otherwise;
  }
  double number(StringRef name, double otherwise) const {
    const Value *v = get(name);
    return v ? v->f : otherwise;
  }
  bool boolean(StringRef name, bool otherwise) const {
    const Value *v = get(name);
    return v ? v->b : otherwise;
  }
  std::string str(StringRef name, StringRef otherwise = "") const {
    const Value *v = get(name);
    return v ? v->s : otherwise.str();
  }
  SmallVector<int64_t> ints(StringRef name) const {
    SmallVector<int64_t> out;
    if (const Value *v = get(name))
      for (const Value &e : v->elems())
        out.push_back(e.i);
    return out;
  }
  std::vector<Tensor> tensors(StringRef name) const {
    std::vector<Tensor> out;
    if (const Value *v = get(name))
      for (const Value &e : v->elems())
        out.push_back(e.t);
    return out;
  }
  std::optional<bool> optBool(StringRef name) const {
    const Value *v = get(name);
    return v ? std::optional<bool>(v->b) : std::nullopt;
  }
  std::optional<Init> init() const {
    const Value *v = get("init");
    return v ? std::optional<Init>(v->init) : std::nullopt;
  }
  DType dtype(DType otherwise) const {
    const Value *v = get("dtype");
    if (!v)
      return otherwise;
    return v->s == "i32" ? DType::i32 : v->s == "bool" ? DType::boolean : DType::f32;
  }
  NormPlacement norm() const {
    return str("norm", "post") == "pre" ? NormPlacement::pre : NormPlacement::post;
  }
  Activation activation() const {
    std::string name = str("activation", "relu");
    return name == "gelu"     ? Activation::gelu
           : name == "swiglu" ? Activation::swiglu
                              : Activation::relu;
  }
};

Value tensorValue(Tensor t) { return Value::tensor(t); }

/// `init` as a value, once its std or bound is known to be usable.
Value initValue(Builder &b, Init init) {
  if (!(init.scale > 0 && std::isfinite(init.scale))) {
    b.error(init.str() + ": the " + (init.kind == Init::Kind::normal ? "std" : "bound") +
            " must be positive (zeros draws nothing)");
    return Value();
  }
  return Value::initialiser(init);
}

/// The initialisers, as an error lists them.
constexpr const char *kInitialisers =
    "zeros, ones, normal(std), uniform(bound), xavier, kaiming";

/// The initialisers written as a bare name (`init: xavier`).
struct BareInit {
  const char *name;
  Init (*make)();
  const char *doc;
};
const BareInit kBareInits[] = {
    {"zeros", Init::zeros, "0"},
    {"ones", Init::ones, "1"},
    {"xavier", Init::xavier,
     "U(-a, a), a = sqrt(6 / (fan_in + fan_out)): PyTorch's xavier_uniform_ (gain 1)"},
    {"kaiming", Init::kaiming,
     "U(-a, a), a = 1 / sqrt(fan_in): PyTorch's kaiming_uniform_(a=sqrt(5)), "
     "nn.Linear's default"}};

std::optional<Init> bareInitialiser(StringRef name) {
  for (const BareInit &b : kBareInits)
    if (name == b.name)
      return b.make();
  return std::nullopt;
}

/// An f32 function of each element.
#define TFC_UNARY(NAME, DOC)                                                   \
  {#NAME, Group::Elementwise, DOC, "x's shape", #NAME "(x)", "f32[2, 4, 8]",         \
   {req("x", ArgKind::Tensor, "an f32 tensor")},                               \
   [](Builder &, const CallArgs &a) { return tensorValue(NAME(a.tensor("x"))); }}
#define TFC_BINARY(NAME, GROUP, DOC, SHAPE, EXAMPLE, TYPE)                     \
  {#NAME, Group::GROUP, DOC, SHAPE, EXAMPLE, TYPE,                             \
   {req("a", ArgKind::Tensor, "a tensor (or a number)"),                       \
    req("b", ArgKind::Tensor, "a tensor (or a number)")},                      \
   [](Builder &, const CallArgs &a) {                                          \
     return tensorValue(NAME(a.tensor("a"), a.tensor("b")));                   \
   }}
#define TFC_REDUCE(NAME, DOC)                                                  \
  {#NAME, Group::Reduction, DOC, "x's without the axes", #NAME "(x, axis: -1)", \
   "f32[2, 4]",                                                                \
   {req("x", ArgKind::Tensor, "a tensor"),                                     \
    opt("axis", ArgKind::Ints, "all axes", "an axis or a list of axes")},      \
   [](Builder &, const CallArgs &a) {                                          \
     return tensorValue(NAME(a.tensor("x"), a.ints("axis")));                  \
   }}

const std::vector<BuiltinSpec> &builtins() {
  using K = ArgKind;
  static const std::vector<BuiltinSpec> table = {
      // Layers that own weights.
      {"linear", Group::Layer,
       "x @ W^T + b over the last axis (nn.Linear): W [out, in] and b [out] are parameters",
       "[..., in] -> [..., out]", "linear(x, 16)", "f32[2, 4, 16]",
       {req("x", K::Tensor, "the input, [..., in]"),
        req("out", K::Int, "the output features"),
        opt("bias", K::Bool, "true", "add the bias b"),
        nameArg(),
        initArg("kaiming"),
        decayArg(),
        opt("weight", K::OptTensor, "a new parameter", "an f32 [out, in] tensor to use as W (weight tying)")},
       [](Builder &, const CallArgs &a) {
         LinearOptions o;
         o.bias = a.boolean("bias", true);
         o.name = a.str("name");
         o.init = a.init();
         o.decay = a.optBool("decay");
         o.weight = a.tensor("weight");
         return tensorValue(linear(a.tensor("x"), a.integer("out"), o));
       }},
      {"layer_norm", Group::Layer,
       "normalises the last axis to mean 0 and variance 1, then scales (weight, ones) and shifts (bias, zeros)",
       "x's shape", "layer_norm(x)", "f32[2, 4, 8]",
       {req("x", K::Tensor, "the input, [..., D]"),
        opt("eps", K::Number, "1e-5", "added to the variance"),
        nameArg(),
        decayArg()},
       [](Builder &, const CallArgs &a) {
         LayerNormOptions o;
         o.epsilon = a.number("eps", o.epsilon);
         o.name = a.str("name");
         o.decay = a.optBool("decay");
         return tensorValue(layer_norm(a.tensor("x"), o));
       }},
      {"conv1d", Group::Layer,
       "a 1-d convolution in NCW layout (nn.Conv1d): weight [out, in, kernel], bias [out]",
       "[B, in, W] -> [B, out, W + 2 padding - kernel + 1]", "conv1d(x, 16, kernel: 3, padding: 1)", "f32[2, 16, 8]",
       {req("x", K::Tensor, "the input, [B, in, W]"),
        req("out", K::Int, "the output channels"),
        opt("kernel", K::Int, "1", "the window's width"),
        opt("padding", K::Int, "0", "zeros added at each end"),
        opt("bias", K::Bool, "true", "add the bias"),
        nameArg(),
        initArg("kaiming"),
        decayArg()},
       [](Builder &, const CallArgs &a) {
         Conv1dOptions o;
         o.kernel = a.integer("kernel", o.kernel);
         o.padding = a.integer("padding", o.padding);
         o.bias = a.boolean("bias", true);
         o.name = a.str("name");
         o.init = a.init();
         o.decay = a.optBool("decay");
         return tensorValue(conv1d(a.tensor("x"), a.integer("out"), o));
       }},
      {"embedding", Group::Layer,
       "the rows of a table [vocab, dim] at ids (nn.Embedding)",
       "[...] -> [..., dim]", "embedding(ids, 10, 8)", "f32[2, 4, 8]",
       {req("ids", K::Tensor, "i32 ids in [0, vocab)"),
        req("vocab", K::Int, "the table's rows"),
        req("dim", K::Int, "the table's columns"),
        nameArg(),
        initArg("normal(1.0)"),
        opt("decay", K::Bool, "the optimizer's rule (AdamW: none)", "false: the table gets no weight decay; true: it does"),
        opt("table", K::OptTensor, "a new parameter", "an f32 [vocab, dim] tensor to use as the table (weight tying)")},
       [](Builder &, const CallArgs &a) {
         EmbeddingOptions o;
         o.name = a.str("name");
         o.init = a.init();
         o.decay = a.optBool("decay");
         o.table = a.tensor("table");
         return tensorValue(
             embedding(a.tensor("ids"), a.integer("vocab"), a.integer("dim"), o));
       }},
      {"multi_head_attention", Group::Layer,
       "multi-head scaled dot-product attention: a fused qkv projection, the heads, an output projection (the UvA tutorial's)",
       "[B, T, D] -> [B, T, D]", "multi_head_attention(x, heads: 2, mask: causal_mask(4))", "f32[2, 4, 8]",
       {req("x", K::Tensor, "the queries (and keys and values without memory), [B, T, D]; D divisible by heads"),
        opt("heads", K::Int, "1", "the heads"),
        opt("memory", K::OptTensor, "none: self-attention", "keys and values from here, [B, S, D] (cross-attention)"),
        opt("mask", K::OptTensor, "none", "bool, true where attending is allowed: [T, S], [B, T, S] or [B, heads, T, S]"),
        nameArg("`self_attn` (`cross_attn` with memory), `self_attn_1`, ..."),
        initArg("xavier"),
        decayArg()},
       [](Builder &, const CallArgs &a) {
         AttentionOptions o;
         o.heads = a.integer("heads", o.heads);
         o.memory = a.tensor("memory");
         o.mask = a.tensor("mask");
         o.name = a.str("name");
         o.init = a.init();
         o.decay = a.optBool("decay");
         return tensorValue(multi_head_attention(a.tensor("x"), o));
       }},
      {"encoder", Group::Layer,
       "`layers` blocks of self-attention and a feed-forward net, each with residuals and layer norms",
       "[B, T, D] -> [B, T, D]", "encoder(x, layers: 2, heads: 2, ffn: 32, norm: \"pre\")", "f32[2, 4, 8]",
       {req("x", K::Tensor, "the input, [B, T, D]"),
        opt("layers", K::Int, "1", "the blocks"),
        opt("heads", K::Int, "1", "the attention heads"),
        opt("ffn", K::Int, "2 * D", "the feed-forward net's hidden width"),
        opt("dropout", K::Number, "0.0", "the dropout rate in each block (in training)"),
        opt("norm", K::Norm, "\"post\"", "post: LayerNorm(x + f(x)) (the UvA tutorial); pre: x + f(LayerNorm(x)) and a final norm"),
        opt("mask", K::OptTensor, "none", "the self-attention mask, as multi_head_attention's"),
        nameArg(),
        opt("activation", K::Activation, "\"relu\"", "the feed-forward net's nonlinearity (gelu: the erf form; swiglu: silu of half of linear1 times the other half)"),
        initArg("each layer's own"),
        decayArg()},
       [](Builder &, const CallArgs &a) {
         EncoderOptions o;
         o.layers = a.integer("layers", o.layers);
         o.heads = a.integer("heads", o.heads);
         o.ffn = a.integer("ffn", o.ffn);
         o.dropout = a.number("dropout", o.dropout);
         o.norm = a.norm();
         o.mask = a.tensor("mask");
         o.name = a.str("name");
         o.activation = a.activation();
         o.init = a.init();
         o.decay = a.optBool("decay");
         return tensorValue(encoder(a.tensor("x"), o));
       }},
      {"decoder", Group::Layer,
       "`layers` blocks of masked self-attention, cross-attention over `memory` and a feed-forward net",
       "[B, T, D] and memory [B, S, D] -> [B, T, D]", "decoder(x, y, heads: 2, mask: causal_mask(4))", "f32[2, 4, 8]",
       {req("x", K::Tensor, "the input, [B, T, D]"),
        req("memory", K::Tensor, "what cross-attention attends to, [B, S, D]"),
        opt("layers", K::Int, "1", "the blocks"),
        opt("heads", K::Int, "1", "the attention heads"),
        opt("ffn", K::Int, "2 * D", "the feed-forward net's hidden width"),
        opt("dropout", K::Number, "0.0", "the dropout rate in each block (in training)"),
        opt("norm", K::Norm, "\"post\"", "post or pre, as encoder's"),
        opt("mask", K::OptTensor, "none", "the self-attention mask (causal_mask(T) for a language model)"),
        opt("memory_mask", K::OptTensor, "none", "the cross-attention mask, [T, S], [B, T, S] or [B, heads, T, S]"),
        nameArg(),
        opt("activation", K::Activation, "\"relu\"", "the feed-forward net's nonlinearity, as encoder's"),
        initArg("each layer's own"),
        decayArg()},
       [](Builder &, const CallArgs &a) {
         DecoderOptions o;
         o.layers = a.integer("layers", o.layers);
         o.heads = a.integer("heads", o.heads);
         o.ffn = a.integer("ffn", o.ffn);
         o.dropout = a.number("dropout", o.dropout);
         o.norm = a.norm();
         o.mask = a.tensor("mask");
         o.memoryMask = a.tensor("memory_mask");
         o.name = a.str("name");
         o.activation = a.activation();
         o.init = a.init();
         o.decay = a.optBool("decay");
         return tensorValue(decoder(a.tensor("x"), a.tensor("memory"), o));
       }},
      {"parameter", Group::Learnable,
       "a learnable f32 tensor of any rank, usable anywhere a tensor is",
       "the given shape", "parameter([4, 8], init: normal(0.02))", "f32[4, 8]",
       {req("shape", K::Ints, "its shape: [] for a scalar, an int for a vector"),
        opt("init", K::Init, "zeros", "its initialiser"),
        opt("name", K::String, "`parameter`, `parameter_1`, ... in its scope", "keyword only: its name in the scope (`cls`; `block.cls` inside a call of def block)"),
        decayArg()},
       [](Builder &b, const CallArgs &a) {
         ParameterOptions o;
         o.init = a.init().value_or(o.init);
         o.name = a.str("name");
         o.decay = a.optBool("decay");
         return tensorValue(parameter(b, a.ints("shape"), o));
       }},
      // Initialisers with an argument (zeros, ones, xavier and kaiming are
      // bare names: see Parser::lookup).
      {"normal", Group::Learnable,
       "the initialiser N(0, std^2), an argument of `init:`",
       "an initialiser, not a tensor", "parameter([4, 8], init: normal(0.02))", "f32[4, 8]",
       {req("std", K::Number, "the standard deviation, > 0")},
       [](Builder &b, const CallArgs &a) {
         return initValue(b, Init::normal(a.number("std", 0.0)));
       }},
      {"uniform", Group::Learnable,
       "the initialiser U(-bound, bound), an argument of `init:`",
       "an initialiser, not a tensor", "linear(x, 16, init: uniform(0.1))", "f32[2, 4, 16]",
       {req("bound", K::Number, "the bound, > 0")},
       [](Builder &b, const CallArgs &a) {
         return initValue(b, Init::uniform(a.number("bound", 0.0)));
       }},
      // Constants.
      {"zeros", Group::Constant,
       "a constant of zeros (bare, `zeros` is the initialiser)",
       "the given shape", "zeros([4, 8])", "f32[4, 8]",
       {req("shape", K::Ints, "its shape (an int for a vector)"),
        opt("dtype", K::DType, "\"f32\"", "its element type")},
       [](Builder &b, const CallArgs &a) {
         return tensorValue(zeros(b, a.ints("shape"), a.dtype(DType::f32)));
       }},
      {"ones", Group::Constant,
       "a constant of ones (bare, `ones` is the initialiser)",
       "the given shape", "ones(8, dtype: \"i32\")", "i32[8]",
       {req("shape", K::Ints, "its shape (an int for a vector)"),
        opt("dtype", K::DType, "\"f32\"", "its element type")},
       [](Builder &b, const CallArgs &a) {
         return tensorValue(ones(b, a.ints("shape"), a.dtype(DType::f32)));
       }},
      {"full", Group::Constant,
       "a constant of one value everywhere",
       "the given shape", "full([2, 4], true)", "bool[2, 4]",
       {req("shape", K::Ints, "its shape (an int for a vector)"),
        req("value", K::Scalar, "the value; it must fit the dtype"),
        opt("dtype", K::DType, "\"f32\" (\"bool\" for a bool value)", "its element type")},
       [](Builder &b, const CallArgs &a) {
         const Value &v = *a.get("value");
         double value = v.is(VK::Bool) ? double(v.b) : v.asDouble();
         DType dtype = a.dtype(v.is(VK::Bool) ? DType::boolean : DType::f32);
         return tensorValue(full(b, a.ints("shape"), value, dtype));
       }},
      {"arange", Group::Constant,
       "start, start + 1, ..., limit - 1; arange(n) is 0, 1, ..., n - 1",
       "[limit - start]", "arange(4)", "i32[4]",
       {req("start", K::Int, "n, or the first value when limit is given"),
        opt("limit", K::Int, "none", "one past the last value"),
        opt("dtype", K::DType, "\"i32\"", "\"i32\" or \"f32\"")},
       [](Builder &b, const CallArgs &a) {
         DType dtype = a.dtype(DType::i32);
         if (!a.get("limit")) // arange(n)
           return tensorValue(arange(b, a.integer("start"), dtype));
         return tensorValue(arange(b, a.integer("start"), a.integer("limit"), dtype));
       }},
      {"eye", Group::Constant,
       "the identity matrix",
       "[n, n]", "eye(8)", "f32[8, 8]",
       {req("n", K::Int, "its rows and columns"),
        opt("dtype", K::DType, "\"f32\"", "its element type")},
       [](Builder &b, const CallArgs &a) {
         return tensorValue(eye(b, a.integer("n"), a.dtype(DType::f32)));
       }},
      // Functions.
      {"one_hot", Group::Attention,
       "1.0 at each id on a new last axis, 0.0 elsewhere",
       "[...] -> [..., n]", "one_hot(ids, 10)", "f32[2, 4, 10]",
       {req("ids", K::Tensor, "i32 ids in [0, n)"),
        req("n", K::Int, "the classes")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(one_hot(a.tensor("ids"), a.integer("n")));
       }},
      {"positional_encoding", Group::Attention,
       "the sinusoidal positional encoding (the UvA tutorial's), a constant",
       "[len, dim]", "x + positional_encoding(4, 8)", "f32[2, 4, 8]",
       {req("len", K::Int, "the positions"),
        req("dim", K::Int, "the features")},
       [](Builder &b, const CallArgs &a) {
         return tensorValue(positional_encoding(b, a.integer("len"), a.integer("dim")));
       }},
      {"causal_mask", Group::Attention,
       "true on and below the diagonal: position i attends to positions 0 to i",
       "bool [n, n]", "causal_mask(4)", "bool[4, 4]",
       {req("n", K::Int, "the positions")},
       [](Builder &b, const CallArgs &a) {
         return tensorValue(causal_mask(b, a.integer("n")));
       }},
      {"scaled_dot_product", Group::Attention,
       "softmax(q k^T / sqrt(d)) v, and the weights (bind both: `let values, weights = ...`)",
       "q [..., T, d], k [..., S, d], v [..., S, e] -> ([..., T, e], [..., T, S])", "scaled_dot_product(x, y, y, mask: causal_mask(4))", "(f32[2, 4, 8], f32[2, 4, 4])",
       {req("q", K::Tensor, "the queries, [..., T, d]"),
        req("k", K::Tensor, "the keys, [..., S, d]"),
        req("v", K::Tensor, "the values, [..., S, e]"),
        opt("mask", K::OptTensor, "none", "bool, true where attending is allowed; broadcasts to [..., T, S]")},
       [](Builder &, const CallArgs &a) {
         Attention r = scaled_dot_product(a.tensor("q"), a.tensor("k"),
                                          a.tensor("v"), a.tensor("mask"));
         return Value::list({tensorValue(r.values), tensorValue(r.weights)},
                            VK::Tuple);
       }},
      {"dropout", Group::Attention,
       "in training, zeroes each element with probability p and scales the rest by 1 / (1 - p); else x",
       "x's shape", "dropout(x, 0.1)", "f32[2, 4, 8]",
       {req("x", K::Tensor, "an f32 tensor"),
        req("p", K::Number, "the probability of a zero, in [0, 1)")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(dropout(a.tensor("x"), a.number("p", 0.0)));
       }},
      TFC_UNARY(relu, "max(x, 0)"),
      TFC_UNARY(gelu, "x * Phi(x), Phi the normal distribution's CDF (the erf form: BERT's, GPT's)"),
      TFC_UNARY(silu, "x * sigmoid(x) (SiLU, swish; built as x (1 + tanh(x / 2)) / 2)"),
      TFC_UNARY(tanh, "the hyperbolic tangent"),
      TFC_UNARY(exp, "e to the x"),
      TFC_UNARY(log, "the natural logarithm"),
      TFC_UNARY(sqrt, "the square root"),
      TFC_UNARY(rsqrt, "1 / sqrt(x)"),
      {"softmax", Group::Reduction,
       "exp(x) / sum(exp(x)) along an axis",
       "x's shape", "softmax(x, axis: -1)", "f32[2, 4, 8]",
       {req("x", K::Tensor, "an f32 tensor"),
        opt("axis", K::Int, "-1", "the axis")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(softmax(a.tensor("x"), a.integer("axis", -1)));
       }},
      {"log_softmax", Group::Reduction,
       "x - log(sum(exp(x))) along an axis",
       "x's shape", "log_softmax(x, axis: 1)", "f32[2, 4, 8]",
       {req("x", K::Tensor, "an f32 tensor"),
        opt("axis", K::Int, "-1", "the axis")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(log_softmax(a.tensor("x"), a.integer("axis", -1)));
       }},
      TFC_REDUCE(sum, "the sum over axes (of a bool tensor: the count of trues)"),
      TFC_REDUCE(mean, "the mean over axes (of a bool tensor: the fraction of trues)"),
      TFC_REDUCE(max, "the largest element over axes"),
      {"argmax", Group::Reduction,
       "the index of the largest element along an axis",
       "i32, x's without the axis", "argmax(x, axis: -1)", "i32[2, 4]",
       {req("x", K::Tensor, "an f32 tensor"),
        opt("axis", K::Int, "-1", "the axis")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(argmax(a.tensor("x"), a.integer("axis", -1)));
       }},
      {"transpose", Group::Shape,
       "permutes the axes: the result's axis i is x's axis perm[i]",
       "x's dimensions permuted", "transpose(x, [0, 2, 1])", "f32[2, 8, 4]",
       {req("x", K::Tensor, "a tensor"),
        req("perm", K::IntList, "a permutation of x's axes")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(transpose(a.tensor("x"), a.ints("perm")));
       }},
      {"broadcast_to", Group::Shape,
       "x broadcast to a shape (numpy's rules)",
       "the given shape", "broadcast_to(mean(x, axis: 0), [2, 4, 8])", "f32[2, 4, 8]",
       {req("x", K::Tensor, "a tensor"),
        req("shape", K::IntList, "the shape")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(broadcast_to(a.tensor("x"), a.ints("shape")));
       }},
      {"reshape", Group::Shape,
       "the same elements in another shape; one dimension may be -1 (inferred)",
       "the given shape", "reshape(x, [2, -1])", "f32[2, 32]",
       {req("x", K::Tensor, "a tensor"),
        req("shape", K::IntList, "the new shape")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(reshape(a.tensor("x"), a.ints("shape")));
       }},
      {"squeeze", Group::Shape,
       "removes an axis of size 1",
       "x's without the axis", "squeeze(slice(x, 1, 0, 1), 1)", "f32[2, 8]",
       {req("x", K::Tensor, "a tensor"),
        req("axis", K::Int, "the axis (negative: from the end)")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(squeeze(a.tensor("x"), a.integer("axis")));
       }},
      {"unsqueeze", Group::Shape,
       "inserts an axis of size 1",
       "x's with a 1 at axis", "unsqueeze(x, 1)", "f32[2, 1, 4, 8]",
       {req("x", K::Tensor, "a tensor"),
        req("axis", K::Int, "where the new axis goes")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(unsqueeze(a.tensor("x"), a.integer("axis")));
       }},
      {"concat", Group::Shape,
       "joins tensors along an axis",
       "the sum of their sizes along axis", "concat([x, y], axis: 2)", "f32[2, 4, 16]",
       {req("tensors", K::Tensors, "tensors of one rank and dtype, equal but along axis"),
        opt("axis", K::Int, "0", "the axis")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(concat(a.tensors("tensors"), a.integer("axis", 0)));
       }},
      {"slice", Group::Shape,
       "the elements start, ..., limit - 1 along an axis (there is no x[i] indexing)",
       "x's with limit - start along axis", "slice(x, 2, 0, 4)", "f32[2, 4, 4]",
       {req("x", K::Tensor, "a tensor"),
        req("axis", K::Int, "the axis"),
        req("start", K::Int, "the first index"),
        req("limit", K::Int, "one past the last index")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(slice(a.tensor("x"), a.integer("axis"),
                                  a.integer("start"), a.integer("limit")));
       }},
      {"float", Group::Shape,
       "an i32 or bool tensor as f32: how integers and bools enter arithmetic (of a constant: a number)",
       "f32, x's shape", "float(ids)", "f32[2, 4]",
       {req("x", K::Tensor, "an i32 or bool tensor")},
       [](Builder &, const CallArgs &a) { return tensorValue(to_float(a.tensor("x"))); }},
      {"cross_entropy", Group::Loss,
       "the mean negative log-likelihood of labels under softmax(logits), with PyTorch's options",
       "[]", "cross_entropy(x, ids, label_smoothing: 0.1)", "f32[]",
       {req("logits", K::Tensor, "the scores, [..., C] (the classes on axis)"),
        req("labels", K::Tensor, "i32 class ids, [...]"),
        opt("axis", K::Int, "-1", "the classes' axis (the last with any option below)"),
        opt("ignore_index", K::Int, "none", "positions with this label count for nothing"),
        opt("label_smoothing", K::Number, "0.0", "the share of the target spread over the classes"),
        opt("weight", K::OptTensor, "none", "f32 [C]: each class's weight, for the sum and the mean")},
       [](Builder &b, const CallArgs &a) {
         CrossEntropyOptions o;
         if (a.get("ignore_index"))
           o.ignoreIndex = a.integer("ignore_index");
         o.labelSmoothing = a.number("label_smoothing", 0.0);
         o.weight = a.tensor("weight");
         bool options = o.ignoreIndex || o.labelSmoothing != 0.0 || o.weight.valid();
         int64_t axis = a.integer("axis", -1);
         if (options && axis != -1 && axis != a.tensor("logits").rank() - 1)
           return tensorValue(b.error("cross_entropy: ignore_index, label_smoothing and "
                                      "weight need the classes on the last axis"));
         return tensorValue(options ? cross_entropy(a.tensor("logits"), a.tensor("labels"), o)
                                    : cross_entropy(a.tensor("logits"), a.tensor("labels"), axis));
       }},
      TFC_BINARY(mse, Loss, "the mean of (a - b)^2 over all elements", "[]", "mse(x, y)", "f32[]"),
      TFC_BINARY(maximum, Elementwise, "the larger of a and b, broadcasting (numpy's rules)",
                 "a and b broadcast", "maximum(x, 0.0)", "f32[2, 4, 8]"),
      TFC_BINARY(minimum, Elementwise, "the smaller of a and b, broadcasting (numpy's rules)",
                 "a and b broadcast", "minimum(x, y)", "f32[2, 4, 8]"),
      TFC_BINARY(logical_and, Elementwise, "a and b, of bool tensors, broadcasting", "a and b broadcast",
                 "logical_and(x > 0.0, y > 0.0)", "bool[2, 4, 8]"),
      TFC_BINARY(logical_or, Elementwise, "a or b, of bool tensors, broadcasting", "a and b broadcast",
                 "logical_or(x > 0.0, y > 0.0)", "bool[2, 4, 8]"),
      {"logical_not", Group::Elementwise, "not x, of a bool tensor", "x's shape", "logical_not(x > 0.0)",
       "bool[2, 4, 8]", {req("x", K::Tensor, "a bool tensor")},
       [](Builder &, const CallArgs &a) { return tensorValue(logical_not(a.tensor("x"))); }},
      {"where", Group::Elementwise,
       "a where cond is true, else b, broadcasting all three",
       "cond, a and b broadcast", "where(x > 0.0, x, 0.0)", "f32[2, 4, 8]",
       {req("cond", K::Tensor, "a bool tensor"),
        req("a", K::Tensor, "the values where cond is true"),
        req("b", K::Tensor, "the values where cond is false")},
       [](Builder &, const CallArgs &a) {
         return tensorValue(where(a.tensor("cond"), a.tensor("a"), a.tensor("b")));
       }},
  };
  return table;
}
#undef TFC_UNARY
#undef TFC_BINARY
#undef TFC_REDUCE

const BuiltinSpec *findBuiltin(StringRef name) {
  for (const BuiltinSpec &b : builtins())
    if (name == b.name)
      return &b;
  return nullptr;
}

/// " (arguments: x, out, bias, name)"
std::string signature(const BuiltinSpec &spec) {
  std::string s = " (arguments: ";
  for (auto [i, p] : llvm::enumerate(spec.params))
    s += (i ? ", " : "") + std::string(p.name);
  return s + ")";
}

//===----------------------------------------------------------------------===//
// Train blocks: the keys, and the names their calls may use
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// The parser
//===----------------------------------------------------------------------===//

struct DefInfo {
  std::string name;
  size_t nameTok;
  std::vector<std::pair<std::string, size_t>> params; // name, token
  size_t openTok, bodyTok;
};

struct ModelInfo {
  std::string name;
  size_t nameTok, openTok, bodyTok;
};

struct Binding {
  enum class Kind { Param, Let, Input, Argument };
  Value value;
  Kind kind;
  size_t tok;
};

/// The variables of the model or of one inlined def call.
struct Frame {
  llvm::StringMap<Binding> vars;
  std::string defName; // empty for the model
  std::optional<Location> callerLoc;
};

struct CallArg {
  std::string keyword; // empty when positional
  size_t tok;
  Value value;
};

class Parser {
public:
  Parser(StringRef source, StringRef filename, MLIRContext &context,
         const FrontendOptions &options)
      : source_(source), context_(context), options_(options),
        filename_(StringAttr::get(&context, filename)) {}

  FrontendResult run();

private:
  enum class Mode { Check, Constant, Build };
  enum class BlockKind { Model, Def };

  // Tokens ------------------------------------------------------------------
  const Token &tok() const { return toks_[pos_]; }
  const Token &peek(size_t n = 1) const {
    return toks_[std::min(pos_ + n, toks_.size() - 1)];
  }
  void consume() {
    if (pos_ + 1 < toks_.size())
      ++pos_;
  }
  /// A keyword argument's name: a name, or a keyword (`train: 50000`).
  bool atKeywordArg() const {
    TokenKind k = tok().kind;
    bool word = k == TokenKind::Identifier || k == TokenKind::KwDef ||
                k == TokenKind::KwModel || k == TokenKind::KwTrain ||
                k == TokenKind::KwLet || k == TokenKind::KwReturn;
    return word && peek().is(TokenKind::Colon);
  }
  bool consumeIf(TokenKind k) {
    if (!tok().is(k))
      return false;
    consume();
    return true;
  }
  void skipNewlines() {
    while (tok().is(TokenKind::Newline))
      consume();
  }
  LogicalResult expect(TokenKind k, const Twine &context);
  LogicalResult expectStatementEnd();
  std::string keywordHint(size_t eqTok, StringRef what) const;
  /// The value token at `t` as written when it is one literal or name, else "...".
  StringRef valueText(size_t t) const {
    TokenKind k = toks_[std::min(t, toks_.size() - 1)].kind;
    bool one = k == TokenKind::Integer || k == TokenKind::Float || k == TokenKind::String ||
               k == TokenKind::KwTrue || k == TokenKind::KwFalse || k == TokenKind::Identifier;
    return one && toks_[t].text.size() <= 40 ? toks_[t].text : StringRef("...");
  }
  std::string where(size_t t) const {
    return std::to_string(toks_[t].line) + ":" + std::to_string(toks_[t].col);
  }

  // Diagnostics ---------------------------------------------------------------
  Location loc(size_t t) const;
  LogicalResult error(size_t t, const Twine &message);
  LogicalResult errorWithNote(size_t t, const Twine &message, size_t noteTok,
                              const Twine &note);

  // Pass 1: the file ----------------------------------------------------------
  LogicalResult parseFile();
  LogicalResult parseDef();
  LogicalResult parseModel();
  LogicalResult parseTrain();
  FailureOr<TrainCall> parseTrainCall(llvm::ArrayRef<train::CallKind> kinds,
                                      StringRef what);
  FailureOr<Value> parseConstant();

  // Statements ----------------------------------------------------------------
  LogicalResult parseBlockBody(BlockKind kind, size_t openTok, StringRef name,
                               Value *result);
  LogicalResult parseStatement(BlockKind kind);
  LogicalResult parseLet();
  LogicalResult parseRebind();
  LogicalResult parseParam();
  LogicalResult parseInput();
  LogicalResult parseLoss();
  LogicalResult parseMetric();
  LogicalResult parseOutput();
  LogicalResult parseGenerate();
  /// Builds the model block into `builder` (once per function it needs).
  LogicalResult buildModelBody(const ModelInfo &model, Builder &builder);
  FailureOr<Value> parseReturn();
  LogicalResult bindNames(llvm::ArrayRef<size_t> names, const Value &value,
                          size_t valueTok, bool isLet);

  // Expressions ---------------------------------------------------------------
  FailureOr<Value> parseExpr();
  FailureOr<Value> parseComparison();
  FailureOr<Value> parseAdditive();
  FailureOr<Value> parseMultiplicative();
  FailureOr<Value> parseMatmul();
  FailureOr<Value> parseUnary();
  FailureOr<Value> parsePower();
  FailureOr<Value> parsePrimary();
  FailureOr<Value> parseList();
  FailureOr<Value> parseCall();
  FailureOr<Value> lookup(size_t t);
  LogicalResult initialiserError(size_t t, bool isCall);

  // Evaluation ----------------------------------------------------------------
  FailureOr<Value> applyBinary(TokenKind op, const Value &l, const Value &r, size_t at);
  FailureOr<Value> foldBinary(TokenKind op, const Value &l, const Value &r, size_t at);
  FailureOr<Value> applyNeg(const Value &v, size_t at);
  FailureOr<Value> callBuiltin(const BuiltinSpec &spec, std::vector<CallArg> &args,
                               size_t calleeTok);
  FailureOr<Value> callDef(const DefInfo &def, std::vector<CallArg> &args,
                           size_t calleeTok);
  FailureOr<Value> convertArg(const BuiltinSpec &spec, const ParamSpec &param,
                              const Value &v, size_t at);
  FailureOr<Tensor> requireTensor(const Value &v, size_t at, const Twine &what);
  Tensor scalarTensor(const Value &v, std::optional<DType> like, size_t at);
  LogicalResult tupleError(const Value &v, size_t at);
  LogicalResult checkBuilder();
  Frame &frame() { return *frames_.back(); }
  bool isFunction(StringRef name) const {
    return defs_.count(name) || findBuiltin(name);
  }
  std::vector<std::string> functionNames() const;

  StringRef source_;
  MLIRContext &context_;
  const FrontendOptions &options_;
  StringAttr filename_;

  std::vector<Token> toks_;
  size_t pos_ = 0;
  /// '**' chains being parsed (each a recursion), and the most allowed.
  unsigned powerDepth_ = 0;
  /// The first token of the initialiser argument being parsed, if any: an
  /// unknown name there is an unknown initialiser.
  size_t initArgTok_ = SIZE_MAX;
  static constexpr unsigned kMaxPowerChain = 64;
  Mode mode_ = Mode::Check;
  int depth_ = 0;
  int64_t statements_ = 0;
  bool errored_ = false;

  llvm::StringMap<DefInfo> defs_;
  std::vector<ModelInfo> models_;                      // in file order
  llvm::StringMap<size_t> modelIndex_;                 // name -> models_ index
  std::vector<std::pair<TrainConfig, size_t>> trains_; // config, name token
  llvm::StringMap<size_t> trainIndex_;                 // model -> trains_ index

  Builder *builder_ = nullptr;
  int64_t batch_ = 1;
  bool defaultBatch_ = false; // neither a train block nor --batch set it
  bool usedBatch_ = false;
  std::vector<std::unique_ptr<Frame>> frames_;
};

//===----------------------------------------------------------------------===//
// Diagnostics and token helpers
//===----------------------------------------------------------------------===//

Location Parser::loc(size_t t) const {
  Location l = FileLineColLoc::get(filename_, toks_[t].line, toks_[t].col);
  if (!frames_.empty() && frames_.back()->callerLoc)
    return CallSiteLoc::get(l, *frames_.back()->callerLoc);
  return l;
}

LogicalResult Parser::error(size_t t, const Twine &message) {
  if (!errored_)
    emitError(loc(t)) << message;
  errored_ = true;
  return failure();
}

LogicalResult Parser::errorWithNote(size_t t, const Twine &message,
                                    size_t noteTok, const Twine &note) {
  if (!errored_) {
    InFlightDiagnostic diag = emitError(loc(t)) << message;
    diag.attachNote(loc(noteTok)) << note;
  }
  errored_ = true;
  return failure();
}

LogicalResult Parser::expect(TokenKind k, const Twine &context) {
  if (consumeIf(k))
    return success();
  return error(pos_, "expected " + spell(k) + " " + context + ", got " +
                         spell(tok().kind));
}

LogicalResult Parser::expectStatementEnd() {
  if (consumeIf(TokenKind::Newline) || tok().is(TokenKind::RBrace) ||
      tok().is(TokenKind::Eof))
    return success();
  return error(pos_, "expected the end of the line after the statement, got " +
                         spell(tok().kind));
}

/// At `name =` in an argument list, how it is written ("; keyword arguments
/// are written 'axis: -1'"); else "".
std::string Parser::keywordHint(size_t eqTok, StringRef what) const {
  if (eqTok == 0 || !toks_[eqTok].is(TokenKind::Equal) ||
      !toks_[eqTok - 1].is(TokenKind::Identifier))
    return "";
  // The value as written: up to the ',' or ')' that ends it.
  size_t end = eqTok + 1;
  for (int depth = 0; end < toks_.size(); ++end) {
    TokenKind k = toks_[end].kind;
    if (k == TokenKind::Eof || k == TokenKind::Newline || k == TokenKind::Error ||
        ((k == TokenKind::Comma || k == TokenKind::RParen || k == TokenKind::RBracket) &&
         depth == 0))
      break;
    depth += k == TokenKind::LParen || k == TokenKind::LBracket;
    depth -= k == TokenKind::RParen || k == TokenKind::RBracket;
  }
  StringRef value = "...";
  if (end > eqTok + 1) {
    const char *first = toks_[eqTok + 1].text.begin(), *last = toks_[end - 1].text.end();
    value = StringRef(first, last - first);
    if (value.size() > 40)
      value = "...";
  }
  return "; " + what.str() + " are written " +
         quote((toks_[eqTok - 1].text + ": " + value).str());
}

LogicalResult Parser::checkBuilder() {
  if (builder_ && builder_->failed()) {
    errored_ = true; // the DSL has reported it
    return failure();
  }
  return success();
}

std::vector<std::string> Parser::functionNames() const {
  std::vector<std::string> names;
  for (const BuiltinSpec &b : builtins())
    names.push_back(b.name);
  for (const auto &d : defs_)
    names.push_back(d.getKey().str());
  return names;
}

//===----------------------------------------------------------------------===//
// Pass 1: the file
//===----------------------------------------------------------------------===//

LogicalResult Parser::parseFile() {
  skipNewlines();
  while (!tok().is(TokenKind::Eof)) {
    LogicalResult r = failure();
    switch (tok().kind) {
    case TokenKind::KwDef:
      r = parseDef();
      break;
    case TokenKind::KwModel:
      r = parseModel();
      break;
    case TokenKind::KwTrain:
      r = parseTrain();
      break;
    default: {
      std::string hint;
      if (tok().is(TokenKind::Identifier))
        hint = suggest(tok().text, {"def", "model", "train"});
      return error(pos_, "expected 'def', 'model' or 'train' at the top level, got " +
                             spell(tok().kind) + hint);
    }
    }
    if (failed(r))
      return failure();
    skipNewlines();
  }
  return success();
}

LogicalResult Parser::parseDef() {
  consume(); // def
  if (!tok().is(TokenKind::Identifier))
    return error(pos_, "expected the name of the def, got " + spell(tok().kind));
  DefInfo def;
  def.name = tok().text.str();
  def.nameTok = pos_;
  if (auto it = defs_.find(def.name); it != defs_.end())
    return errorWithNote(pos_, "def " + quote(def.name) + " is defined twice",
                         it->second.nameTok, "the first definition is here");
  if (findBuiltin(def.name))
    return error(pos_, quote(def.name) +
                           " is a built-in function; give the def another name");
  consume();
  if (failed(expect(TokenKind::LParen, "after the def's name")))
    return failure();
  llvm::StringSet<> seenParams;
  while (!tok().is(TokenKind::RParen)) {
    if (!tok().is(TokenKind::Identifier))
      return error(pos_, "expected a parameter name or ')', got " + spell(tok().kind));
    StringRef param = tok().text;
    if (param == "name")
      return error(pos_, "'name' is reserved: a def's call takes `name:` to "
                         "name its parameters' scope");
    if (!seenParams.insert(param).second)
      return error(pos_, "parameter " + quote(param) + " is listed twice");
    def.params.emplace_back(param.str(), pos_);
    consume();
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (failed(expect(TokenKind::RParen, "to close the parameters of " + quote(def.name))))
    return failure();
  def.openTok = pos_;
  if (tok().is(TokenKind::Colon))
    return error(pos_, "expected '{' to open the body of " + quote(def.name) +
                           ", got ':'; a def's body is in braces: def " + def.name +
                           "(x) { ... return y }");
  if (failed(expect(TokenKind::LBrace, "to open the body of " + quote(def.name))))
    return failure();
  def.bodyTok = pos_;
  if (failed(parseBlockBody(BlockKind::Def, def.openTok, def.name, nullptr)))
    return failure();
  std::string name = def.name;
  defs_[name] = std::move(def);
  return success();
}

LogicalResult Parser::parseModel() {
  consume(); // model
  if (!tok().is(TokenKind::Identifier))
    return error(pos_, "expected the name of the model, got " + spell(tok().kind));
  ModelInfo model;
  model.name = tok().text.str();
  model.nameTok = pos_;
  if (auto it = modelIndex_.find(model.name); it != modelIndex_.end())
    return errorWithNote(pos_, "model " + quote(model.name) + " is defined twice",
                         models_[it->second].nameTok, "the first definition is here");
  consume();
  model.openTok = pos_;
  if (failed(expect(TokenKind::LBrace, "after the model's name")))
    return failure();
  model.bodyTok = pos_;
  if (failed(parseBlockBody(BlockKind::Model, model.openTok, model.name, nullptr)))
    return failure();
  modelIndex_[model.name] = models_.size();
  models_.push_back(std::move(model));
  return success();
}

FailureOr<Value> Parser::parseConstant() {
  Mode saved = mode_;
  mode_ = Mode::Constant;
  size_t at = pos_;
  FailureOr<Value> v = parseExpr();
  mode_ = saved;
  if (failed(v))
    return failure();
  if (!v->isConstant())
    return error(at, "expected a constant, got " + describe(*v));
  return v;
}

static TrainValue toTrainValue(const Value &v) {
  switch (v.kind) {
  case VK::Int:
    return v.i;
  case VK::Float:
    return v.f;
  case VK::Bool:
    return v.b;
  default:
    return v.s;
  }
}

FailureOr<TrainCall> Parser::parseTrainCall(llvm::ArrayRef<train::CallKind> kinds,
                                            StringRef what) {
  std::vector<std::string> names;
  for (const train::CallKind &k : kinds)
    names.emplace_back(k.name);
  if (!tok().is(TokenKind::Identifier))
    return error(pos_, "expected the name of the " + what + ", got " +
                           spell(tok().kind));
  const train::CallKind *kind = nullptr;
  for (const train::CallKind &k : kinds)
    if (tok().text == StringRef(k.name))
      kind = &k;
  if (!kind)
    return error(pos_, "unknown " + what + " " + quote(tok().text) +
                           suggest(tok().text, names) + " (known: " +
                           llvm::join(names, ", ") + ")");
  TrainCall call;
  call.name = std::string(kind->name);
  size_t nameTok = pos_;
  consume();
  if (!consumeIf(TokenKind::LParen))
    return call; // `schedule constant`: no arguments
  llvm::StringSet<> seenKeys;
  while (!tok().is(TokenKind::RParen)) {
    if (tok().is(TokenKind::Identifier) && peek().is(TokenKind::Equal))
      return error(pos_ + 1, "expected ':' after " + quote(tok().text) + ", got '='" +
                                 keywordHint(pos_ + 1, "settings"));
    if (!atKeywordArg())
      return error(pos_, "expected a setting of " + quote(call.name) +
                             " as `key: value`, got " + spell(tok().kind));
    StringRef key = tok().text;
    if (!kind->takes(key)) {
      std::vector<std::string> known = kind->settingNames();
      return error(pos_, quote(call.name) + " has no setting " + quote(key) +
                             suggest(key, known) +
                             (known.empty() ? std::string(" (it takes none)")
                                            : " (known: " + llvm::join(known, ", ") + ")"));
    }
    if (!seenKeys.insert(key).second)
      return error(pos_, "setting " + quote(key) + " is given twice");
    consume();
    consume(); // :
    FailureOr<Value> v = parseConstant();
    if (failed(v))
      return failure();
    call.args.emplace_back(key.str(), toTrainValue(*v));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (failed(expect(TokenKind::RParen, "to close the settings of " + quote(call.name))))
    return failure();
  if (call.name == "npy" && !call.get("dir"))
    return error(nameTok, "npy needs the directory of its arrays: npy(dir: \"DIR\")");
  return call;
}

LogicalResult Parser::parseTrain() {
  consume(); // train
  if (!tok().is(TokenKind::Identifier))
    return error(pos_, "expected the name of the model to train, got " +
                           spell(tok().kind));
  TrainConfig config;
  config.model = tok().text.str();
  size_t nameTok = pos_;
  if (auto it = trainIndex_.find(config.model); it != trainIndex_.end())
    return errorWithNote(pos_, "model " + quote(config.model) + " has two train blocks",
                         trains_[it->second].second, "the first one is here");
  consume();
  size_t openTok = pos_;
  if (failed(expect(TokenKind::LBrace, "after the train block's model name")))
    return failure();
  std::vector<std::string> keys(std::begin(train::kTrainKeys), std::end(train::kTrainKeys));
  llvm::StringMap<size_t> seen;
  skipNewlines();
  while (!tok().is(TokenKind::RBrace)) {
    if (tok().is(TokenKind::Eof))
      return error(pos_, "expected '}' to close the train block opened at " +
                             where(openTok));
    if (!tok().is(TokenKind::Identifier))
      return error(pos_, "expected a train setting (" + llvm::join(keys, ", ") +
                             "), got " + spell(tok().kind));
    StringRef key = tok().text;
    if (!llvm::is_contained(keys, key))
      return error(pos_, "unknown train setting " + quote(key) + suggest(key, keys) +
                             " (known: " + llvm::join(keys, ", ") + ")");
    if (auto it = seen.find(key); it != seen.end())
      return errorWithNote(pos_, "train setting " + quote(key) + " is given twice",
                           it->second, "the first one is here");
    seen[key] = pos_;
    consume();
    if (tok().is(TokenKind::Colon) || tok().is(TokenKind::Equal))
      return error(pos_, "expected the value of " + quote(key) + ", got " + spell(tok().kind) +
                             "; train settings are written without it: " +
                             quote((key + " " + valueText(pos_ + 1)).str()));

    auto positiveInt = [&](StringRef what, bool allowZero) -> FailureOr<int64_t> {
      size_t at = pos_;
      FailureOr<Value> v = parseConstant();
      if (failed(v))
        return failure();
      if (!v->is(VK::Int) || v->i < 0 || (!allowZero && v->i == 0))
        return error(at, what + " must be a " + (allowZero ? "non-negative" : "positive") +
                             " integer, got " + describe(*v));
      return v->i;
    };
    if (key == train::key::kData || key == train::key::kOptimizer || key == train::key::kSchedule) {
      FailureOr<TrainCall> call =
          key == train::key::kData ? parseTrainCall(train::kDatasets, "dataset")
          : key == train::key::kOptimizer ? parseTrainCall(train::kOptimizers, "optimizer")
                               : parseTrainCall(train::kSchedules, "schedule");
      if (failed(call))
        return failure();
      (key == train::key::kData ? config.data
       : key == train::key::kOptimizer ? config.optimizer
                            : config.schedule) = std::move(*call);
    } else if (key == train::key::kBatch || key == train::key::kEpochs || key == train::key::kSeed) {
      FailureOr<int64_t> n = positiveInt(key, key == train::key::kSeed);
      if (failed(n))
        return failure();
      (key == train::key::kBatch ? config.batch : key == train::key::kEpochs ? config.epochs : config.seed) = *n;
    } else if (key == train::key::kBest) { // NAME, min(NAME) or max(NAME)
      if (!tok().is(TokenKind::Identifier))
        return error(pos_, "best needs the name of the loss or a metric, as `best accuracy` or "
                           "`best min(rmse)`, got " + spell(tok().kind));
      std::string spec = tok().text.str();
      consume();
      if ((spec == "min" || spec == "max") && tok().is(TokenKind::LParen)) {
        consume();
        if (!tok().is(TokenKind::Identifier))
          return error(pos_, "expected the name of the loss or a metric in " + spec + "(...), got " +
                                 spell(tok().kind));
        spec += ":" + tok().text.str();
        consume();
        if (failed(expect(TokenKind::RParen, "after the score's name")))
          return failure();
      }
      config.best = spec;
    } else { // clip_grad_norm
      size_t at = pos_;
      FailureOr<Value> v = parseConstant();
      if (failed(v))
        return failure();
      if (!v->isNumber() || !(v->asDouble() > 0))
        return error(at, "clip_grad_norm must be a positive number, got " + describe(*v));
      config.clipGradNorm = v->asDouble();
    }
    if (failed(expectStatementEnd()))
      return failure();
    skipNewlines();
  }
  consume(); // }
  trainIndex_[config.model] = trains_.size();
  trains_.emplace_back(std::move(config), nameTok);
  return success();
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

LogicalResult Parser::parseBlockBody(BlockKind kind, size_t openTok, StringRef name,
                                     Value *result) {
  StringRef what = kind == BlockKind::Def ? "def" : "model";
  bool returned = false;
  skipNewlines();
  while (!tok().is(TokenKind::RBrace)) {
    if (tok().is(TokenKind::Eof))
      return error(pos_, "expected '}' to close " + what + " " + quote(name) +
                             " opened at " + where(openTok));
    if (returned)
      return error(pos_, "'return' must be the last statement of a def");
    if (mode_ == Mode::Build && ++statements_ > kMaxStatements)
      return error(pos_, "the model expands to more than " + Twine(kMaxStatements) +
                             " statements through def calls");
    if (tok().is(TokenKind::KwReturn)) {
      if (kind != BlockKind::Def)
        return error(pos_, "'return' is only allowed in a def");
      FailureOr<Value> v = parseReturn();
      if (failed(v))
        return failure();
      if (result)
        *result = std::move(*v);
      returned = true;
    } else if (failed(parseStatement(kind))) {
      return failure();
    }
    if (failed(expectStatementEnd()))
      return failure();
    skipNewlines();
  }
  if (kind == BlockKind::Def && !returned)
    return error(pos_, "def " + quote(name) + " ends without a 'return'");
  consume(); // }
  return success();
}

LogicalResult Parser::parseStatement(BlockKind kind) {
  if (tok().is(TokenKind::KwLet))
    return parseLet();
  static const char *const modelStatements[] = {"param", "input", "loss", "metric",
                                                "output", "generate"};
  if (tok().is(TokenKind::Identifier)) {
    if (peek().is(TokenKind::Equal) || peek().is(TokenKind::Comma))
      return parseRebind();
    StringRef word = tok().text;
    if (llvm::is_contained(modelStatements, word)) {
      if (kind == BlockKind::Def)
        return error(pos_, quote(word) + " belongs in a model, not in a def");
      if (word == "param")
        return parseParam();
      if (word == "input")
        return parseInput();
      if (word == "loss")
        return parseLoss();
      if (word == "metric")
        return parseMetric();
      if (word == "generate")
        return parseGenerate();
      return parseOutput();
    }
    std::vector<std::string> words(std::begin(modelStatements),
                                   std::end(modelStatements));
    words.push_back("let");
    std::string hint = suggest(word, words);
    if (hint.empty())
      hint = " (to compute a value, bind it: 'let x = ...')";
    return error(pos_, "expected a statement, got the name " + quote(word) + hint);
  }
  if (tok().is(TokenKind::KwDef))
    return error(pos_, "'def' defines a layer at the top level of the file, not in a " +
                           Twine(kind == BlockKind::Def ? "def" : "model") +
                           "; to bind a value, write 'let x = ...'");
  return error(pos_, "expected a statement ('let', 'NAME = ...', 'param', 'input', "
                     "'loss', 'metric', 'output' or 'return'), got " +
                         spell(tok().kind));
}

LogicalResult Parser::bindNames(llvm::ArrayRef<size_t> names, const Value &value,
                                size_t valueTok, bool isLet) {
  if (mode_ != Mode::Build)
    return success();
  std::vector<Value> values;
  if (names.size() == 1) {
    if (value.is(VK::Tuple))
      return error(valueTok, "this gives " + Twine(value.elems().size()) +
                                 " values; bind them with 'let a, b = ...'");
    values.push_back(value);
  } else {
    if (!value.is(VK::Tuple) || value.elems().size() != names.size())
      return error(valueTok, Twine(names.size()) + " names are bound, but this gives " +
                                 (value.is(VK::Tuple) ? describe(value)
                                                      : "one value (" + describe(value) + ")"));
    values = value.elems();
  }
  for (auto [t, v] : llvm::zip(names, values)) {
    StringRef name = toks_[t].text;
    if (name == "batch")
      return error(t, "'batch' is reserved: it is the batch size");
    auto it = frame().vars.find(name);
    if (isLet) {
      if (it != frame().vars.end())
        return errorWithNote(t, quote(name) + " is already bound; rebind it with '" +
                                    name + " = ...'",
                             it->second.tok, "it is bound here");
      frame().vars[name] = Binding{v, Binding::Kind::Let, t};
      continue;
    }
    if (it == frame().vars.end()) {
      std::vector<std::string> vars;
      for (const auto &var : frame().vars)
        vars.push_back(var.getKey().str());
      return error(t, "cannot rebind " + quote(name) + ": it is not bound" +
                          suggest(name, vars) + " (bind it first with 'let " + name +
                          " = ...')");
    }
    if (it->second.kind == Binding::Kind::Param)
      return errorWithNote(t, quote(name) + " is a param, a constant: it cannot be rebound",
                           it->second.tok, "it is defined here");
    it->second.value = v;
  }
  return success();
}

LogicalResult Parser::parseLet() {
  consume(); // let
  SmallVector<size_t> names;
  llvm::StringSet<> seen;
  do {
    if (!tok().is(TokenKind::Identifier))
      return error(pos_, "expected a name to bind, got " + spell(tok().kind));
    if (!seen.insert(tok().text).second)
      return error(pos_, quote(tok().text) + " is bound twice in one 'let'");
    names.push_back(pos_);
    consume();
  } while (consumeIf(TokenKind::Comma));
  if (failed(expect(TokenKind::Equal, "after the names of a 'let'")))
    return failure();
  size_t valueTok = pos_;
  FailureOr<Value> v = parseExpr();
  if (failed(v))
    return failure();
  return bindNames(names, *v, valueTok, /*isLet=*/true);
}

LogicalResult Parser::parseRebind() {
  SmallVector<size_t> names;
  do {
    if (!tok().is(TokenKind::Identifier))
      return error(pos_, "expected a name to rebind, got " + spell(tok().kind));
    names.push_back(pos_);
    consume();
  } while (consumeIf(TokenKind::Comma));
  if (failed(expect(TokenKind::Equal, "after the names to rebind")))
    return failure();
  size_t valueTok = pos_;
  FailureOr<Value> v = parseExpr();
  if (failed(v))
    return failure();
  return bindNames(names, *v, valueTok, /*isLet=*/false);
}

LogicalResult Parser::parseParam() {
  consume(); // param
  if (!tok().is(TokenKind::Identifier))
    return error(pos_, "expected the name of the param, got " + spell(tok().kind));
  size_t nameTok = pos_;
  StringRef name = tok().text;
  consume();
  if (tok().is(TokenKind::Colon))
    return error(pos_, "expected '=' after the param's name, got ':'; params are written " +
                           quote(("param " + name + " = " + valueText(pos_ + 1)).str()));
  if (failed(expect(TokenKind::Equal, "after the param's name")))
    return failure();
  size_t valueTok = pos_;
  FailureOr<Value> v = parseExpr();
  if (failed(v) || mode_ != Mode::Build)
    return failure(failed(v));
  if (name == "batch")
    return error(nameTok, "'batch' is set by the train block or --batch, not by a param");
  if (auto it = frame().vars.find(name); it != frame().vars.end())
    return errorWithNote(nameTok,
                         (it->second.kind == Binding::Kind::Param ? "param " : "name ") +
                             quote(name) + " is already defined",
                         it->second.tok, "the first definition is here");
  if (!v->isConstant())
    return error(valueTok, "a param is a constant (an integer, number, bool or "
                           "string), got " + describe(*v));
  frame().vars[name] = Binding{*v, Binding::Kind::Param, nameTok};
  return success();
}

LogicalResult Parser::parseInput() {
  consume(); // input
  if (!tok().is(TokenKind::Identifier))
    return error(pos_, "expected the name of the input, got " + spell(tok().kind));
  size_t nameTok = pos_;
  StringRef name = tok().text;
  consume();
  if (failed(expect(TokenKind::Colon, "after the input's name (as in 'input x: f32[batch, 8]')")))
    return failure();
  if (!tok().is(TokenKind::Identifier))
    return error(pos_, "expected the input's dtype (f32, i32 or bool), got " +
                           spell(tok().kind));
  StringRef dtypeName = tok().text;
  std::optional<DType> dtype;
  if (dtypeName == "f32")
    dtype = DType::f32;
  else if (dtypeName == "i32")
    dtype = DType::i32;
  else if (dtypeName == "bool")
    dtype = DType::boolean;
  else
    return error(pos_, "unknown dtype " + quote(dtypeName) +
                           (dtypeAlias(dtypeName)
                                ? "; did you mean " + quote(*dtypeAlias(dtypeName)) + "?"
                                : suggest(dtypeName, choices(ArgKind::DType))) +
                           " (inputs are f32, i32 or bool)");
  consume();
  SmallVector<int64_t> shape;
  if (consumeIf(TokenKind::LBracket)) {
    while (!tok().is(TokenKind::RBracket)) {
      size_t dimTok = pos_;
      FailureOr<Value> d = parseExpr();
      if (failed(d))
        return failure();
      if (mode_ == Mode::Build) {
        if (!d->is(VK::Int))
          return error(dimTok, "a dimension must be an integer, got " + describe(*d));
        shape.push_back(d->i);
      }
      if (!consumeIf(TokenKind::Comma))
        break;
    }
    if (failed(expect(TokenKind::RBracket, "to close the input's dimensions")))
      return failure();
  }
  if (mode_ != Mode::Build)
    return success();
  if (auto it = frame().vars.find(name); it != frame().vars.end())
    return errorWithNote(nameTok, quote(name) + " is already defined", it->second.tok,
                         "the first definition is here");
  if (name == "batch")
    return error(nameTok, "'batch' is reserved: it is the batch size");
  builder_->setLoc(loc(nameTok));
  Tensor t = builder_->input(name, *dtype, shape);
  if (failed(checkBuilder()))
    return failure();
  frame().vars[name] = Binding{Value::tensor(t), Binding::Kind::Input, nameTok};
  return success();
}

LogicalResult Parser::parseLoss() {
  size_t kwTok = pos_;
  consume(); // loss
  size_t valueTok = pos_;
  FailureOr<Value> v = parseExpr();
  if (failed(v) || mode_ != Mode::Build)
    return failure(failed(v));
  FailureOr<Tensor> t = requireTensor(*v, valueTok, "the loss");
  if (failed(t))
    return failure();
  builder_->setLoc(loc(kwTok));
  builder_->loss(*t);
  return checkBuilder();
}

LogicalResult Parser::parseMetric() {
  consume(); // metric
  if (!tok().is(TokenKind::Identifier))
    return error(pos_, "expected the name of the metric, got " + spell(tok().kind));
  size_t nameTok = pos_;
  StringRef name = tok().text;
  consume();
  if (failed(expect(TokenKind::Equal, "after the metric's name")))
    return failure();
  size_t valueTok = pos_;
  FailureOr<Value> v = parseExpr();
  if (failed(v) || mode_ != Mode::Build)
    return failure(failed(v));
  FailureOr<Tensor> t = requireTensor(*v, valueTok, "metric " + quote(name));
  if (failed(t))
    return failure();
  builder_->setLoc(loc(nameTok));
  builder_->metric(name, *t);
  return checkBuilder();
}

/// `generate LOGITS from TOKENS`: the model generates (Builder::generate).
LogicalResult Parser::parseGenerate() {
  size_t kwTok = pos_;
  consume(); // generate
  size_t logitsTok = pos_;
  FailureOr<Value> logits = parseExpr();
  if (failed(logits))
    return failure();
  if (!tok().is(TokenKind::Identifier) || tok().text != "from")
    return error(pos_, "expected 'from' and the input of tokens after what generate scores "
                       "('generate logits from tokens'), got " + spell(tok().kind));
  consume(); // from
  size_t tokensTok = pos_;
  FailureOr<Value> tokens = parseExpr();
  if (failed(tokens) || mode_ != Mode::Build)
    return failure(failed(tokens));
  FailureOr<Tensor> l = requireTensor(*logits, logitsTok, "what generate scores");
  if (failed(l))
    return failure();
  FailureOr<Tensor> t = requireTensor(*tokens, tokensTok, "the tokens generate reads");
  if (failed(t))
    return failure();
  builder_->setLoc(loc(kwTok));
  builder_->generate(*l, *t);
  return checkBuilder();
}

LogicalResult Parser::parseOutput() {
  consume(); // output
  if (!tok().is(TokenKind::Identifier))
    return error(pos_, "expected the name of the output, got " + spell(tok().kind));
  size_t nameTok = pos_;
  StringRef name = tok().text;
  consume();
  Value value;
  size_t valueTok = nameTok;
  bool inline_ = consumeIf(TokenKind::Equal);
  if (inline_) {
    valueTok = pos_;
    FailureOr<Value> v = parseExpr();
    if (failed(v))
      return failure();
    value = std::move(*v);
  }
  if (mode_ != Mode::Build)
    return success();
  if (!inline_) {
    FailureOr<Value> v = lookup(nameTok);
    if (failed(v))
      return failure();
    value = std::move(*v);
  }
  FailureOr<Tensor> t = requireTensor(value, valueTok, "output " + quote(name));
  if (failed(t))
    return failure();
  builder_->setLoc(loc(nameTok));
  builder_->output(name, *t);
  if (failed(checkBuilder()))
    return failure();
  if (inline_ && !frame().vars.count(name))
    frame().vars[name] = Binding{value, Binding::Kind::Let, nameTok};
  return success();
}

FailureOr<Value> Parser::parseReturn() {
  consume(); // return
  size_t firstTok = pos_;
  std::vector<Value> values;
  do {
    FailureOr<Value> v = parseExpr();
    if (failed(v))
      return failure();
    if (v->is(VK::Tuple))
      return tupleError(*v, firstTok);
    values.push_back(std::move(*v));
  } while (consumeIf(TokenKind::Comma));
  if (values.size() == 1)
    return std::move(values.front());
  return Value::list(std::move(values), VK::Tuple);
}

//===----------------------------------------------------------------------===//
// Expressions: unary > '@' > '* /' > '+ -' > comparisons
//===----------------------------------------------------------------------===//

FailureOr<Value> Parser::parseExpr() {
  if (depth_ >= kMaxNesting)
    return error(pos_, "expressions and def calls nest deeper than " +
                           Twine(kMaxNesting) + " levels");
  ++depth_;
  FailureOr<Value> v = parseComparison();
  --depth_;
  return v;
}

static bool isComparison(TokenKind k) {
  return k == TokenKind::EqEq || k == TokenKind::NotEq || k == TokenKind::Less ||
         k == TokenKind::LessEq || k == TokenKind::Greater ||
         k == TokenKind::GreaterEq;
}

FailureOr<Value> Parser::parseComparison() {
  FailureOr<Value> lhs = parseAdditive();
  if (failed(lhs) || !isComparison(tok().kind))
    return lhs;
  size_t opTok = pos_;
  TokenKind op = tok().kind;
  consume();
  skipNewlines();
  FailureOr<Value> rhs = parseAdditive();
  if (failed(rhs))
    return failure();
  if (isComparison(tok().kind))
    return error(pos_, "comparisons do not chain; add parentheses");
  return applyBinary(op, *lhs, *rhs, opTok);
}

FailureOr<Value> Parser::parseAdditive() {
  FailureOr<Value> lhs = parseMultiplicative();
  while (succeeded(lhs) && (tok().is(TokenKind::Plus) || tok().is(TokenKind::Minus))) {
    size_t opTok = pos_;
    TokenKind op = tok().kind;
    consume();
    skipNewlines();
    FailureOr<Value> rhs = parseMultiplicative();
    if (failed(rhs))
      return failure();
    lhs = applyBinary(op, *lhs, *rhs, opTok);
  }
  return lhs;
}

FailureOr<Value> Parser::parseMultiplicative() {
  FailureOr<Value> lhs = parseMatmul();
  while (succeeded(lhs) && (tok().is(TokenKind::Star) || tok().is(TokenKind::Slash))) {
    size_t opTok = pos_;
    TokenKind op = tok().kind;
    consume();
    skipNewlines();
    FailureOr<Value> rhs = parseMatmul();
    if (failed(rhs))
      return failure();
    lhs = applyBinary(op, *lhs, *rhs, opTok);
  }
  return lhs;
}

FailureOr<Value> Parser::parseMatmul() {
  FailureOr<Value> lhs = parseUnary();
  while (succeeded(lhs) && tok().is(TokenKind::At)) {
    size_t opTok = pos_;
    consume();
    skipNewlines();
    FailureOr<Value> rhs = parseUnary();
    if (failed(rhs))
      return failure();
    lhs = applyBinary(TokenKind::At, *lhs, *rhs, opTok);
  }
  return lhs;
}

FailureOr<Value> Parser::parseUnary() {
  // Iterative, so a long run of '-' cannot exhaust the stack.
  SmallVector<size_t> minuses;
  while (tok().is(TokenKind::Minus)) {
    minuses.push_back(pos_);
    consume();
  }
  FailureOr<Value> v = parsePower();
  for (size_t i = minuses.size(); i-- > 0 && succeeded(v);)
    v = applyNeg(*v, minuses[i]);
  return v;
}

/// primary ('**' unary)?, as Python: right-associative, binding tighter than
/// a '-' on its left (-x ** 2 is -(x ** 2)) and looser than one on its right.
FailureOr<Value> Parser::parsePower() {
  FailureOr<Value> base = parsePrimary();
  if (succeeded(base) && tok().is(TokenKind::LBracket))
    return error(pos_, "there is no indexing with '[...]': take elements with slice(x, axis, "
                       "start, limit), and drop an axis of size 1 with squeeze(x, axis)");
  if (failed(base) || !tok().is(TokenKind::StarStar))
    return base;
  size_t opTok = pos_;
  consume();
  skipNewlines();
  if (++powerDepth_ > kMaxPowerChain) {
    --powerDepth_;
    return error(opTok, "more than " + Twine(kMaxPowerChain) + " '**' in a row");
  }
  FailureOr<Value> exponent = parseUnary();
  --powerDepth_;
  if (failed(exponent))
    return failure();
  return applyBinary(TokenKind::StarStar, *base, *exponent, opTok);
}

FailureOr<Value> Parser::parsePrimary() {
  const Token &t = tok();
  switch (t.kind) {
  case TokenKind::Integer: {
    Value v = Value::integer(t.integer);
    consume();
    return v;
  }
  case TokenKind::Float: {
    Value v = Value::number(t.number);
    consume();
    return v;
  }
  case TokenKind::String: {
    Value v = Value::string(t.string);
    consume();
    return v;
  }
  case TokenKind::KwTrue:
  case TokenKind::KwFalse: {
    Value v = Value::boolean(t.is(TokenKind::KwTrue));
    consume();
    return v;
  }
  case TokenKind::LParen: {
    size_t openTok = pos_;
    consume();
    FailureOr<Value> v = parseExpr();
    if (failed(v))
      return failure();
    if (failed(expect(TokenKind::RParen, "to close the '(' at " + where(openTok))))
      return failure();
    return v;
  }
  case TokenKind::LBracket:
    return parseList();
  case TokenKind::Identifier:
    if (peek().is(TokenKind::LParen))
      return parseCall();
    {
      size_t at = pos_;
      consume();
      return lookup(at);
    }
  default:
    return error(pos_, "expected an expression, got " + spell(t.kind) +
                           (t.is(TokenKind::Star) || t.is(TokenKind::StarStar)
                                ? "; there is no *args or **kwargs: pass each argument, by "
                                  "position or as 'name: value'"
                                : ""));
  }
}

FailureOr<Value> Parser::parseList() {
  size_t openTok = pos_;
  consume(); // [
  std::vector<Value> elems;
  while (!tok().is(TokenKind::RBracket)) {
    FailureOr<Value> v = parseExpr();
    if (failed(v))
      return failure();
    if (v->is(VK::Tuple))
      return tupleError(*v, openTok);
    elems.push_back(std::move(*v));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (failed(expect(TokenKind::RBracket, "to close the list opened at " + where(openTok))))
    return failure();
  return Value::list(std::move(elems));
}

FailureOr<Value> Parser::lookup(size_t t) {
  StringRef name = toks_[t].text;
  if (mode_ == Mode::Check)
    return Value();
  if (name == "True" || name == "False")
    return error(t, "unknown name " + quote(name) + "; booleans are written 'true' and 'false'");
  if (name == "None" || name == "null")
    return error(t, "unknown name " + quote(name) +
                        "; there is no None: leave an optional argument out");
  if (mode_ == Mode::Constant)
    return error(t, "expected a constant, got the name " + quote(name));
  auto it = frame().vars.find(name);
  if (it != frame().vars.end())
    return it->second.value;
  if (name == "batch") {
    usedBatch_ = true;
    return Value::integer(batch_);
  }
  if (std::optional<Init> init = bareInitialiser(name))
    return Value::initialiser(*init);
  if (t == initArgTok_)
    return initialiserError(t, /*isCall=*/false);
  if (isFunction(name))
    return error(t, quote(name) + " is a function; call it: " + name + "(...)");
  std::vector<std::string> vars = {"batch"};
  for (const auto &var : frame().vars)
    vars.push_back(var.getKey().str());
  return error(t, "unknown name " + quote(name) + suggest(name, vars));
}

/// The name at `t`, written as an initialiser argument, is none (or is
/// called with arguments it does not take).
LogicalResult Parser::initialiserError(size_t t, bool isCall) {
  StringRef name = toks_[t].text;
  if (isCall && bareInitialiser(name))
    return error(t, "initialiser " + quote(name) + " takes no arguments: write init: " + name);
  if (!isCall && (name == "normal" || name == "uniform"))
    return error(t, "initialiser " + quote(name) + " takes its " +
                        (name == "normal" ? "std: normal(0.02)" : "bound: uniform(0.1)"));
  return error(t, "unknown initialiser " + quote(name) +
                      suggest(name, {"zeros", "ones", "normal", "uniform", "xavier", "kaiming"}) +
                      " (initialisers: " + kInitialisers + ")");
}

FailureOr<Value> Parser::parseCall() {
  size_t calleeTok = pos_;
  StringRef name = tok().text;
  consume();
  consume(); // (
  std::vector<CallArg> args;
  llvm::StringSet<> keywords;
  bool sawKeyword = false;
  // The built-in's positional parameters, to know which argument is an
  // initialiser (a def of the same name wins, as below).
  const BuiltinSpec *builtin = mode_ == Mode::Build && !defs_.count(name) ? findBuiltin(name)
                                                                           : nullptr;
  std::vector<const ParamSpec *> positional;
  if (builtin)
    for (const ParamSpec &p : builtin->params)
      if (StringRef(p.name) != "name")
        positional.push_back(&p);
  size_t savedInitArgTok = initArgTok_;
  while (!tok().is(TokenKind::RParen)) {
    CallArg arg;
    size_t index = args.size();
    if (atKeywordArg()) {
      arg.keyword = tok().text.str();
      if (!keywords.insert(arg.keyword).second)
        return error(pos_, "argument " + quote(arg.keyword) + " is given twice");
      sawKeyword = true;
      consume();
      consume(); // :
    } else if (sawKeyword) {
      return error(pos_, "positional argument after keyword arguments");
    }
    arg.tok = pos_;
    bool isInit = builtin && (arg.keyword.empty()
                                  ? index < positional.size() &&
                                        positional[index]->kind == ArgKind::Init
                                  : arg.keyword == "init");
    initArgTok_ = isInit ? pos_ : SIZE_MAX;
    FailureOr<Value> v = parseExpr();
    initArgTok_ = savedInitArgTok;
    if (failed(v))
      return failure();
    arg.value = std::move(*v);
    args.push_back(std::move(arg));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (!tok().is(TokenKind::RParen))
    return error(pos_, "expected ')' or ',' in the arguments of " + quote(name) +
                           " (opened at " + where(calleeTok + 1) + "), got " +
                           spell(tok().kind) + keywordHint(pos_, "keyword arguments"));
  consume(); // )

  if (mode_ == Mode::Check)
    return Value();
  if (mode_ == Mode::Constant)
    return error(calleeTok, "expected a constant, got a call of " + quote(name));
  if (auto it = defs_.find(name); it != defs_.end())
    return callDef(it->second, args, calleeTok);
  if (calleeTok == initArgTok_ && (bareInitialiser(name) || !findBuiltin(name)))
    return initialiserError(calleeTok, /*isCall=*/true);
  if (const BuiltinSpec *spec = findBuiltin(name))
    return callBuiltin(*spec, args, calleeTok);
  if (frame().vars.count(name))
    return error(calleeTok, quote(name) + " is a value, not a function");
  return error(calleeTok, "unknown function " + quote(name) +
                              suggest(name, functionNames()));
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

LogicalResult Parser::tupleError(const Value &v, size_t at) {
  return error(at, "this gives " + Twine(v.elems().size()) +
                       " values; bind them first with 'let a, b = ...'");
}

FailureOr<Tensor> Parser::requireTensor(const Value &v, size_t at, const Twine &what) {
  if (v.is(VK::Tuple))
    return tupleError(v, at);
  if (!v.is(VK::Tensor))
    return error(at, what + " must be a tensor, got " + describe(v));
  return v.t;
}

/// A scalar constant tensor for a literal next to a tensor: of the tensor's
/// dtype when the literal fits it (so `labels == 0` compares i32 with i32),
/// else of the literal's own, and the DSL reports the mismatch.
Tensor Parser::scalarTensor(const Value &v, std::optional<DType> like, size_t at) {
  builder_->setLoc(loc(at));
  auto scalar = [&](Type element) { return RankedTensorType::get({}, element); };
  OpBuilder &ops = builder_->ops();
  if (v.is(VK::Bool))
    return builder_->constant(DenseElementsAttr::get(scalar(ops.getI1Type()), v.b));
  if (v.is(VK::Int) && like == DType::i32 && v.i >= INT32_MIN && v.i <= INT32_MAX)
    return builder_->constant(DenseElementsAttr::get(
        scalar(ops.getI32Type()), llvm::ArrayRef<int32_t>(static_cast<int32_t>(v.i))));
  return builder_->fill(v.asDouble(), {});
}

FailureOr<Value> Parser::foldBinary(TokenKind op, const Value &l, const Value &r,
                                    size_t at) {
  std::string opName = spell(op).str();
  if (op == TokenKind::At)
    return error(at, "'@' multiplies tensors, got " + describe(l) + " and " + describe(r));
  if (l.isNumber() && r.isNumber()) {
    if (l.is(VK::Int) && r.is(VK::Int)) {
      int64_t a = l.i, b = r.i, out = 0;
      bool overflow = false;
      switch (op) {
      case TokenKind::Plus:
        overflow = __builtin_add_overflow(a, b, &out);
        break;
      case TokenKind::Minus:
        overflow = __builtin_sub_overflow(a, b, &out);
        break;
      case TokenKind::Star:
        overflow = __builtin_mul_overflow(a, b, &out);
        break;
      case TokenKind::Slash:
        if (b == 0)
          return error(at, "division by zero");
        if (a == INT64_MIN && b == -1)
          return error(at, "integer overflow in " + opName);
        // An exact quotient stays an integer (`dim / heads`), else a number.
        if (a % b == 0)
          return Value::integer(a / b);
        return Value::number(static_cast<double>(a) / static_cast<double>(b));
      case TokenKind::StarStar: {
        if (b < 0) // a number, as Python's 2 ** -1
          return Value::number(std::pow(double(a), double(b)));
        if (a == 0 || a == 1 || a == -1) {
          out = b == 0 ? 1 : (a == -1 && b % 2 == 0 ? 1 : a);
          break;
        }
        out = 1; // |a| >= 2 overflows within 63 factors
        for (int64_t i = 0; i < b && !overflow; ++i)
          overflow = __builtin_mul_overflow(out, a, &out);
        break;
      }
      case TokenKind::EqEq: return Value::boolean(a == b);
      case TokenKind::NotEq: return Value::boolean(a != b);
      case TokenKind::Less: return Value::boolean(a < b);
      case TokenKind::LessEq: return Value::boolean(a <= b);
      case TokenKind::Greater: return Value::boolean(a > b);
      case TokenKind::GreaterEq: return Value::boolean(a >= b);
      default:
        break;
      }
      if (overflow)
        return error(at, "integer overflow in " + opName + " (" + Twine(a) + " " +
                             spell(op).trim('\'') + " " + Twine(b) + ")");
      return Value::integer(out);
    }
    double a = l.asDouble(), b = r.asDouble(), out = 0;
    switch (op) {
    case TokenKind::Plus: out = a + b; break;
    case TokenKind::Minus: out = a - b; break;
    case TokenKind::Star: out = a * b; break;
    case TokenKind::Slash:
      if (b == 0)
        return error(at, "division by zero");
      out = a / b;
      break;
    case TokenKind::StarStar: out = std::pow(a, b); break;
    case TokenKind::EqEq: return Value::boolean(a == b);
    case TokenKind::NotEq: return Value::boolean(a != b);
    case TokenKind::Less: return Value::boolean(a < b);
    case TokenKind::LessEq: return Value::boolean(a <= b);
    case TokenKind::Greater: return Value::boolean(a > b);
    case TokenKind::GreaterEq: return Value::boolean(a >= b);
    default: break;
    }
    if (!std::isfinite(out))
      return error(at, "the result of " + opName + " is out of range");
    return Value::number(out);
  }
  bool sameKind = l.kind == r.kind;
  if (sameKind && (l.is(VK::Bool) || l.is(VK::Str)) &&
      (op == TokenKind::EqEq || op == TokenKind::NotEq)) {
    bool eq = l.is(VK::Bool) ? l.b == r.b : l.s == r.s;
    return Value::boolean(op == TokenKind::EqEq ? eq : !eq);
  }
  return error(at, "cannot apply " + opName + " to " + describe(l) + " and " + describe(r));
}

FailureOr<Value> Parser::applyBinary(TokenKind op, const Value &l, const Value &r,
                                     size_t at) {
  if (l.is(VK::Unknown) || r.is(VK::Unknown))
    return Value();
  if (l.is(VK::Tuple))
    return tupleError(l, at);
  if (r.is(VK::Tuple))
    return tupleError(r, at);
  if (l.is(VK::Init) || r.is(VK::Init))
    return error(at, "cannot apply " + spell(op) + " to " + describe(l) + " and " +
                         describe(r) + " (an initialiser is an argument, as in init: xavier)");
  if (l.is(VK::List) || r.is(VK::List))
    return error(at, "cannot apply " + spell(op) +
                         " to a list (lists are arguments, as in transpose(x, [0, 2, 1]))");
  if (l.isConstant() && r.isConstant())
    return foldBinary(op, l, r, at);

  // At least one tensor: the DSL does the rest.
  bool comparison = isComparison(op);
  if (!comparison) {
    const Value &other = l.is(VK::Tensor) ? r : l;
    if (!other.is(VK::Tensor) && !other.isNumber())
      return error(at, "cannot apply " + spell(op) + " to " + describe(l) + " and " +
                           describe(r));
    if (op == TokenKind::At && !other.is(VK::Tensor))
      return error(at, "'@' multiplies two tensors, got " + describe(l) + " and " +
                           describe(r));
  }
  builder_->setLoc(loc(at));
  Tensor result;
  if (l.is(VK::Tensor) && r.is(VK::Tensor)) {
    Tensor a = l.t, b = r.t;
    switch (op) {
    case TokenKind::Plus: result = a + b; break;
    case TokenKind::Minus: result = a - b; break;
    case TokenKind::Star: result = a * b; break;
    case TokenKind::Slash: result = a / b; break;
    case TokenKind::At: result = matmul(a, b); break;
    case TokenKind::StarStar: result = pow(a, b); break;
    case TokenKind::EqEq: result = a == b; break;
    case TokenKind::NotEq: result = a != b; break;
    case TokenKind::Less: result = a < b; break;
    case TokenKind::LessEq: result = a <= b; break;
    case TokenKind::Greater: result = a > b; break;
    case TokenKind::GreaterEq: result = a >= b; break;
    default: break;
    }
  } else if (comparison) {
    Tensor a = l.is(VK::Tensor) ? l.t : scalarTensor(l, r.t.dtype(), at);
    Tensor b = r.is(VK::Tensor) ? r.t : scalarTensor(r, l.t.dtype(), at);
    builder_->setLoc(loc(at));
    switch (op) {
    case TokenKind::EqEq: result = a == b; break;
    case TokenKind::NotEq: result = a != b; break;
    case TokenKind::Less: result = a < b; break;
    case TokenKind::LessEq: result = a <= b; break;
    case TokenKind::Greater: result = a > b; break;
    default: result = a >= b; break;
    }
  } else if (l.is(VK::Tensor)) {
    double b = r.asDouble();
    switch (op) {
    case TokenKind::Plus: result = l.t + b; break;
    case TokenKind::Minus: result = l.t - b; break;
    case TokenKind::Star: result = l.t * b; break;
    case TokenKind::StarStar: result = pow(l.t, b); break;
    default: result = l.t / b; break;
    }
  } else {
    double a = l.asDouble();
    switch (op) {
    case TokenKind::Plus: result = a + r.t; break;
    case TokenKind::Minus: result = a - r.t; break;
    case TokenKind::Star: result = a * r.t; break;
    case TokenKind::StarStar: result = pow(scalarTensor(l, DType::f32, at), r.t); break;
    default: result = a / r.t; break;
    }
  }
  if (failed(checkBuilder()))
    return failure();
  if (!result.valid())
    return error(at, "internal error: " + spell(op) + " gave no tensor");
  return Value::tensor(result);
}

FailureOr<Value> Parser::applyNeg(const Value &v, size_t at) {
  switch (v.kind) {
  case VK::Unknown:
    return Value();
  case VK::Int:
    if (v.i == INT64_MIN)
      return error(at, "integer overflow in unary '-'");
    return Value::integer(-v.i);
  case VK::Float:
    return Value::number(-v.f);
  case VK::Tensor: {
    builder_->setLoc(loc(at));
    Tensor r = -v.t;
    if (failed(checkBuilder()))
      return failure();
    return Value::tensor(r);
  }
  case VK::Tuple:
    return tupleError(v, at);
  default:
    return error(at, "cannot negate " + describe(v));
  }
}

FailureOr<Value> Parser::convertArg(const BuiltinSpec &spec, const ParamSpec &param,
                                    const Value &v, size_t at) {
  auto bad = [&](const Twine &expected, const Twine &hint = "") -> FailureOr<Value> {
    // A string is shown: `norm: "prenorm"` wants to be told what it gave.
    std::string got = v.is(VK::Str)
                          ? "\"" + escapeForTerminal(StringRef(v.s).take_front(60)) + "\""
                          : describe(v);
    return error(at, "argument " + quote(param.name) + " of " + quote(spec.name) +
                         " must be " + expected + ", got " + got + hint);
  };
  if (v.is(VK::Tuple))
    return tupleError(v, at);
  auto asTensor = [&](const Value &e) -> std::optional<Value> {
    if (e.is(VK::Tensor))
      return e;
    if (e.isNumber() || e.is(VK::Bool)) {
      Tensor t = scalarTensor(e, std::nullopt, at);
      return t.valid() ? std::optional<Value>(Value::tensor(t)) : std::nullopt;
    }
    return std::nullopt;
  };
  switch (param.kind) {
  case ArgKind::Tensor:
  case ArgKind::OptTensor:
    if (auto t = asTensor(v))
      return *t;
    return bad("a tensor");
  case ArgKind::Int:
    if (v.is(VK::Int))
      return v;
    return bad("an integer");
  case ArgKind::Number:
    if (v.isNumber())
      return Value::number(v.asDouble());
    return bad("a number");
  case ArgKind::Bool:
    if (v.is(VK::Bool))
      return v;
    return bad("true or false");
  case ArgKind::String:
    if (v.is(VK::Str) && !v.s.empty())
      return v;
    return bad("a non-empty string");
  case ArgKind::Norm:
  case ArgKind::Activation:
  case ArgKind::DType: {
    std::vector<std::string> words = choices(param.kind);
    if (v.is(VK::Str) && llvm::is_contained(words, v.s))
      return v;
    std::optional<std::string> meant;
    if (v.is(VK::Str))
      meant = param.kind == ArgKind::DType && dtypeAlias(v.s) ? dtypeAlias(v.s)
                                                              : closest(v.s, words);
    return bad(orList(words, /*quoted=*/true),
               meant ? "; did you mean \"" + *meant + "\"?" : std::string());
  }
  case ArgKind::Init:
    if (v.is(VK::Init))
      return v;
    if (v.is(VK::Str) && bareInitialiser(v.s))
      return bad("an initialiser, written without quotes (" + std::string(param.name) + ": " +
                 v.s + ")");
    return bad(std::string("an initialiser (") + kInitialisers + ")");
  case ArgKind::Scalar:
    if (v.isNumber() || v.is(VK::Bool))
      return v;
    return bad("a number or a bool");
  case ArgKind::Ints:
    if (v.is(VK::Int))
      return Value::list({v});
    [[fallthrough]];
  case ArgKind::IntList:
    if (v.is(VK::List) && llvm::all_of(v.elems(), [](const Value &e) { return e.is(VK::Int); }))
      return v;
    return bad(param.kind == ArgKind::Ints ? "an integer or a list of integers"
                                           : "a list of integers, as [0, 2, 1]");
  case ArgKind::Tensors: {
    if (!v.is(VK::List) || v.elems().empty())
      return bad("a non-empty list of tensors, as [a, b]");
    std::vector<Value> out;
    for (const Value &e : v.elems()) {
      std::optional<Value> t = asTensor(e);
      if (!t)
        return bad("a list of tensors");
      out.push_back(std::move(*t));
    }
    return Value::list(std::move(out));
  }
  }
  return bad("something else");
}

FailureOr<Value> Parser::callBuiltin(const BuiltinSpec &spec, std::vector<CallArg> &args,
                                     size_t calleeTok) {
  // float() of a constant folds: `param half = float(dim) / 2`.
  if (StringRef(spec.name) == "float" && args.size() == 1 && args[0].keyword.empty() &&
      (args[0].value.isNumber() || args[0].value.is(VK::Bool)))
    return Value::number(args[0].value.is(VK::Bool) ? double(args[0].value.b)
                                                    : args[0].value.asDouble());

  std::vector<size_t> positional;
  for (auto [i, p] : llvm::enumerate(spec.params))
    if (StringRef(p.name) != "name")
      positional.push_back(i);
  size_t numPositional = llvm::count_if(args, [](const CallArg &a) { return a.keyword.empty(); });

  CallArgs bound{&spec, std::vector<std::optional<Value>>(spec.params.size())};
  size_t nextPositional = 0;
  for (CallArg &arg : args) {
    size_t index;
    if (arg.keyword.empty()) {
      if (nextPositional >= positional.size())
        return error(arg.tok, quote(spec.name) + " takes " + Twine(positional.size()) +
                                  " positional argument" +
                                  (positional.size() == 1 ? "" : "s") + ", got " +
                                  Twine(numPositional) + signature(spec));
      index = positional[nextPositional++];
    } else {
      auto it = llvm::find_if(spec.params,
                              [&](const ParamSpec &p) { return arg.keyword == p.name; });
      if (it == spec.params.end()) {
        std::vector<std::string> names;
        for (const ParamSpec &p : spec.params)
          names.push_back(p.name);
        return error(arg.tok - 2, quote(spec.name) + " has no argument " +
                                      quote(arg.keyword) + suggest(arg.keyword, names) +
                                      signature(spec));
      }
      index = it - spec.params.begin();
    }
    if (bound.values[index])
      return error(arg.tok, "argument " + quote(spec.params[index].name) + " of " +
                                quote(spec.name) + " is given twice");
    FailureOr<Value> v = convertArg(spec, spec.params[index], arg.value, arg.tok);
    if (failed(v) || failed(checkBuilder()))
      return failure();
    bound.values[index] = std::move(*v);
  }
  for (auto [i, p] : llvm::enumerate(spec.params))
    if (p.required && !bound.values[i])
      return error(calleeTok, quote(spec.name) + " is missing its argument " +
                                  quote(p.name) + signature(spec));

  builder_->setLoc(loc(calleeTok));
  Value result = spec.build(*builder_, bound);
  if (failed(checkBuilder()))
    return failure();
  if (result.is(VK::Tensor) && !result.t.valid())
    return error(calleeTok, "internal error: " + quote(spec.name) + " gave no tensor");
  return result;
}

FailureOr<Value> Parser::callDef(const DefInfo &def, std::vector<CallArg> &args,
                                 size_t calleeTok) {
  for (size_t i = 0; i < frames_.size(); ++i) {
    if (frames_[i]->defName != def.name)
      continue;
    std::string cycle;
    for (size_t j = i; j < frames_.size(); ++j)
      cycle += quote(frames_[j]->defName) + " -> ";
    cycle += quote(def.name);
    return error(calleeTok, "recursive call: " + cycle +
                                " (defs are inlined, so they cannot call themselves)");
  }

  auto frame = std::make_unique<Frame>();
  frame->defName = def.name;
  frame->callerLoc = loc(calleeTok);
  std::string explicitName;
  size_t nextPositional = 0;
  size_t numPositional = llvm::count_if(args, [](const CallArg &a) { return a.keyword.empty(); });
  std::string sig = " (arguments: ";
  for (auto [i, p] : llvm::enumerate(def.params))
    sig += (i ? ", " : "") + p.first;
  sig += def.params.empty() ? "none)" : ")";
  for (CallArg &arg : args) {
    size_t index;
    if (arg.keyword == "name") {
      if (!arg.value.is(VK::Str) || arg.value.s.empty())
        return error(arg.tok, "name: must be a non-empty string, got " +
                                  describe(arg.value));
      explicitName = arg.value.s;
      continue;
    }
    if (arg.keyword.empty()) {
      if (nextPositional >= def.params.size())
        return errorWithNote(arg.tok,
                             quote(def.name) + " takes " + Twine(def.params.size()) +
                                 " argument" + (def.params.size() == 1 ? "" : "s") +
                                 ", got " + Twine(numPositional) + sig,
                             def.nameTok, "the def is here");
      index = nextPositional++;
    } else {
      auto it = llvm::find_if(def.params, [&](const auto &p) { return p.first == arg.keyword; });
      if (it == def.params.end()) {
        std::vector<std::string> names = {"name"};
        for (const auto &p : def.params)
          names.push_back(p.first);
        return errorWithNote(arg.tok - 2,
                             quote(def.name) + " has no parameter " + quote(arg.keyword) +
                                 suggest(arg.keyword, names) + sig,
                             def.nameTok, "the def is here");
      }
      index = it - def.params.begin();
    }
    const auto &[paramName, paramTok] = def.params[index];
    if (frame->vars.count(paramName))
      return error(arg.tok, "argument " + quote(paramName) + " of " + quote(def.name) +
                                " is given twice");
    if (arg.value.is(VK::Tuple))
      return tupleError(arg.value, arg.tok);
    frame->vars[paramName] = Binding{arg.value, Binding::Kind::Argument, paramTok};
  }
  for (const auto &[paramName, paramTok] : def.params)
    if (!frame->vars.count(paramName))
      return errorWithNote(calleeTok, quote(def.name) + " is missing its argument " +
                                          quote(paramName) + sig,
                           def.nameTok, "the def is here");

  Builder::Scope scope(*builder_, builder_->layerName(def.name, explicitName));
  frames_.push_back(std::move(frame));
  size_t saved = pos_;
  pos_ = def.bodyTok;
  ++depth_; // a def's body counts as one more level of nesting
  Value result;
  LogicalResult r = depth_ > kMaxNesting
                        ? error(calleeTok, "expressions and def calls nest deeper than " +
                                               Twine(kMaxNesting) + " levels")
                        : parseBlockBody(BlockKind::Def, def.openTok, def.name, &result);
  --depth_;
  pos_ = saved;
  frames_.pop_back();
  if (failed(r))
    return failure();
  return result;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

LogicalResult Parser::buildModelBody(const ModelInfo &model, Builder &builder) {
  builder_ = &builder;
  frames_.clear();
  frames_.push_back(std::make_unique<Frame>());
  mode_ = Mode::Build;
  pos_ = model.bodyTok;
  LogicalResult built = parseBlockBody(BlockKind::Model, model.openTok, model.name, nullptr);
  frames_.clear();
  builder_ = nullptr;
  return built;
}

FrontendResult Parser::run() {
  FrontendResult result;
  Lexer lexer(source_);
  while (true) {
    toks_.push_back(lexer.next());
    if (toks_.back().is(TokenKind::Error)) {
      pos_ = toks_.size() - 1;
      std::string hint;
      if (toks_.back().text == "." && pos_ > 0 &&
          (toks_[pos_ - 1].is(TokenKind::Identifier) || toks_[pos_ - 1].is(TokenKind::RParen)))
        hint = "; values have no attributes or methods: shapes are fixed when the model is "
               "built, and functions are called as sum(x), not x.sum()";
      (void)error(pos_, toks_.back().string + hint);
      return result;
    }
    if (toks_.back().is(TokenKind::Eof))
      break;
  }

  if (failed(parseFile()))
    return result;
  for (const auto &[config, nameTok] : trains_) {
    if (modelIndex_.count(config.model))
      continue;
    std::vector<std::string> names;
    for (const ModelInfo &m : models_)
      names.push_back(m.name);
    (void)error(nameTok, "train block for an unknown model " + quote(config.model) +
                             suggest(config.model, names));
    return result;
  }
  if (models_.empty()) {
    (void)error(pos_, "expected a 'model' block before the end of the file: the file has none");
    return result;
  }
  const ModelInfo *model = &models_.front();
  if (!options_.model.empty()) {
    auto it = modelIndex_.find(options_.model);
    if (it == modelIndex_.end()) {
      std::vector<std::string> names;
      for (const ModelInfo &m : models_)
        names.push_back(m.name);
      (void)error(models_.front().nameTok,
                  "no model named " + quote(options_.model) + " in this file" +
                      suggest(options_.model, names) +
                      " (models: " + llvm::join(llvm::ArrayRef(names).take_front(8), ", ") +
                      (names.size() > 8 ? ", ...)" : ")"));
      return result;
    }
    model = &models_[it->second];
  }
  if (auto it = trainIndex_.find(model->name); it != trainIndex_.end())
    result.train = trains_[it->second].first;

  if (options_.batch > 0) {
    batch_ = options_.batch;
  } else if (result.train && result.train->batch) {
    batch_ = *result.train->batch;
  } else {
    batch_ = 1;
    defaultBatch_ = true;
  }
  result.batch = batch_;

  ModelOptions modelOptions;
  modelOptions.batch = batch_;
  modelOptions.training = options_.training;
  modelOptions.recordAttention = options_.recordAttention;
  Builder builder(context_, model->name, modelOptions, Frontend::tf);
  if (failed(buildModelBody(*model, builder)))
    return result;
  builder.setLoc(loc(model->nameTok));
  if (result.train) {
    // Errors about the train block (its `best`) point at it.
    if (auto it = trainIndex_.find(model->name); it != trainIndex_.end())
      builder.setLoc(loc(trains_[it->second].second));
    builder.train(*result.train);
  }
  result.module = builder.finish();
  if (!result.module)
    return result;
  if (const std::optional<GenerationSpec> &spec = builder.generation()) {
    // The prefill and decode functions, from the model block again.
    int64_t batch = batch_;
    result.module = buildGenerationFunctions(
        std::move(result.module), *spec, modelOptions,
        [&](const ModelOptions &options) -> OwningOpRef<ModuleOp> {
          batch_ = options.batch;
          Builder pass(context_, model->name, options, Frontend::tf);
          if (failed(buildModelBody(*model, pass)))
            return nullptr;
          return pass.finish();
        });
    batch_ = batch;
    if (!result.module)
      return result;
  }
  if (defaultBatch_ && usedBatch_)
    context_.getDiagEngine().emit(loc(model->nameTok), DiagnosticSeverity::Note)
        << "batch is 1 for model " << quote(model->name)
        << ": no train block sets 'batch' and no --batch is given";
  return result;
}

} // namespace

std::vector<BuiltinDoc> builtinReference() {
  std::vector<BuiltinDoc> docs;
  for (const BuiltinSpec &spec : builtins()) {
    BuiltinDoc &doc = docs.emplace_back();
    doc.name = spec.name;
    doc.section = groupTitle(spec.group);
    doc.description = spec.doc;
    doc.shape = spec.shape;
    doc.example = spec.example;
    doc.exampleType = spec.exampleType;
    for (const ParamSpec &p : spec.params) {
      std::string defaultText = p.defaultText;
      for (size_t at; (at = defaultText.find("{fn}")) != std::string::npos;)
        defaultText.replace(at, 4, spec.name);
      doc.args.push_back({p.name, kindName(p.kind), p.required, defaultText, p.doc});
    }
  }
  return docs;
}

StringRef builtinExampleInputs() { return kExampleInputs; }

std::vector<std::pair<StringRef, StringRef>> bareInitialisers() {
  std::vector<std::pair<StringRef, StringRef>> out;
  for (const BareInit &b : kBareInits)
    out.emplace_back(b.name, b.doc);
  return out;
}

FrontendResult parseTfSource(StringRef source, StringRef filename,
                             MLIRContext &context, const FrontendOptions &options) {
  // Every failure must say why: count the errors that reach the engine.
  int errors = 0;
  ScopedDiagnosticHandler counter(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    return failure(); // pass it on to the printing handler
  });
  Parser parser(source, filename, context, options);
  FrontendResult result = parser.run();
  if (!result.module && errors == 0)
    emitError(FileLineColLoc::get(&context, filename, 1, 1))
        << "internal error: the model could not be built, and nothing said why";
  return result;
}


} // namespace tfc
