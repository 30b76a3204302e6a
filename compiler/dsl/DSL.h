//===- DSL.h - tfc's C++ graph DSL: one builder API under both front ends -===//
//
// A model is a function built with this API: tensors are values, operators
// broadcast as numpy does (inserting explicit tf.broadcast_in_dim), and the
// composites (linear, layer_norm, multi_head_attention, encoder, ...) are
// defined once, here. The `.tf` parser only turns syntax into these calls.
//
// Errors never abort: a failing call emits an MLIR diagnostic at the current
// location and returns an invalid Tensor; every call on an invalid tensor
// returns another one silently, so only the first error is reported. In a
// C++ model the location is the caller's file and line (SourceLoc), named by
// the model; the .tf parser sets its own.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_DSL_DSL_H
#define TFC_COMPILER_DSL_DSL_H

#include "compiler/dsl/TrainConfig.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace tfc {

class Builder;

enum class DType { f32, i32, boolean };

/// How a parameter is drawn, as PyTorch's nn.init: zeros, ones, normal(0,
/// std), uniform(-bound, bound), xavier (xavier_uniform_, gain 1: bound
/// sqrt(6 / (fan_in + fan_out))) or kaiming (kaiming_uniform_(a = sqrt 5),
/// nn.Linear's default: bound 1 / sqrt(fan_in)). fan_in and fan_out are
/// torch's: for a shape [out, in, k...] in * prod(k) and out * prod(k);
/// xavier and kaiming need a rank of at least 2.
struct Init {
  enum class Kind { zeros, ones, normal, uniform, xavier, kaiming };
  Kind kind = Kind::zeros;
  double scale = 0.0; // normal's std, uniform's bound

  static Init zeros() { return {Kind::zeros, 0.0}; }
  static Init ones() { return {Kind::ones, 0.0}; }
  static Init normal(double std) { return {Kind::normal, std}; }
  static Init uniform(double bound) { return {Kind::uniform, bound}; }
  static Init xavier() { return {Kind::xavier, 0.0}; }
  static Init kaiming() { return {Kind::kaiming, 0.0}; }
  /// As the .tf language writes it: "normal(0.02)", "xavier".
  std::string str() const;
};

/// Where a DSL call is written in a C++ model. Every public DSL function and
/// Builder method takes one as its defaulted last parameter, so it holds the
/// caller's file and line, as C++20's std::source_location::current() would
/// (GCC and Clang provide the builtins it is made of in C++17 too).
struct SourceLoc {
  const char *file = nullptr;
  unsigned line = 0;

  static constexpr SourceLoc current(const char *file = __builtin_FILE(),
                                     unsigned line = __builtin_LINE()) {
    return {file, line};
  }
};

/// An operand of a DSL operator that holds the line of the expression: an
/// operator cannot take a defaulted extra parameter, but the converting
/// constructor of its operand can (`a + b` builds a Located<Tensor> from `a`
/// where `a + b` is written).
template <typename T>
struct Located {
  Located(T value, SourceLoc at = SourceLoc::current()) : value(value), at(at) {}
  T value;
  SourceLoc at;
};

/// A value of the graph under construction.
class Tensor {
public:
  Tensor() = default;
  Tensor(Builder *builder, mlir::Value value) : builder_(builder), value_(value) {}

  /// False when the call that made it failed (the error is reported).
  bool valid() const { return builder_ && value_; }
  /// A tensor has no truth value while the graph is built: `if (a == b)`
  /// would compile and test whether the comparison was built, not what it
  /// computes. Ask `valid()` whether a call succeeded; choose between
  /// tensors elementwise with where().
  explicit operator bool() const = delete;
  mlir::Value value() const { return value_; }
  Builder &builder() const { return *builder_; }
  mlir::RankedTensorType type() const;
  llvm::ArrayRef<int64_t> shape() const;
  int64_t rank() const;
  /// Dimension `i`, negative counting from the end.
  int64_t dim(int64_t i) const;
  DType dtype() const;

private:
  Builder *builder_ = nullptr;
  mlir::Value value_;
};

/// The functions of a model that declares `generate` (Builder::generate),
/// each built from the model's code: the model itself (none); its prefill,
/// the whole sequence at batch 1 returning every self-attention's key and
/// value caches; its decode step, one token at a position at batch 1,
/// reading and returning the caches.
enum class GenerationPass { none, prefill, decode };

/// What a model's `generate` declares: the input that holds the token
/// sequence, its length, and the vocabulary its output scores.
struct GenerationSpec {
  std::string input;
  int64_t length = 0;
  int64_t vocab = 0;
};

struct ModelOptions {
  int64_t batch = 1;
  /// Build dropout in training mode (eval mode makes it the identity).
  bool training = true;
  /// Return every multi-head attention's weights as a `tf.attention` result
  /// named by the layer (e.g. "encoder.0.self_attn").
  bool recordAttention = false;
  /// Which function of a generating model to build; prefill and decode are
  /// built with batch 1 and the spec the model's own build declared.
  GenerationPass generation = GenerationPass::none;
  GenerationSpec generationSpec;
};

/// The front end that drives a Builder. It decides where ops and errors are
/// located and how diagnostics spell what the user wrote:
///  - cpp: a C++ model. The caller's file and line (SourceLoc), in a NameLoc
///    naming the model; C++ names (`operator+`, `matmul`, `to_float()`).
///  - tf: the .tf parser, which sets every location itself (setLoc); .tf
///    names (`'+'`, `'@'`, `float()`).
enum class Frontend { cpp, tf };

/// Builds one model function in a module. Parameters and inputs become
/// function arguments, in creation order; outputs, loss and metrics become
/// results.
class Builder {
public:
  Builder(mlir::MLIRContext &context, llvm::StringRef modelName,
          ModelOptions options = {}, Frontend frontend = Frontend::cpp);
  ~Builder();

  mlir::MLIRContext &context() { return context_; }
  mlir::OpBuilder &ops() { return ops_; }
  const ModelOptions &options() const { return options_; }
  int64_t batch() const { return options_.batch; }
  Frontend frontend() const { return frontend_; }
  /// `cpp` or `tf`, as this builder's front end spells the thing.
  llvm::StringRef spelling(llvm::StringRef cpp, llvm::StringRef tf) const {
    return frontend_ == Frontend::tf ? tf : cpp;
  }

  /// Location of the ops created next (the .tf front end sets the source
  /// position of each expression; in a C++ model CallSite sets it).
  void setLoc(mlir::Location loc) { loc_ = loc; }
  mlir::Location loc() const { return loc_; }

  /// RAII, opened by every public DSL function and Builder method with its
  /// caller's SourceLoc. In a C++ model the outermost one locates the ops
  /// created and the error reported while it lives at the caller's line;
  /// calls nested in it (the reshape inside a layer) keep that location,
  /// and under the .tf front end it does nothing.
  class CallSite {
  public:
    CallSite(Builder *builder, SourceLoc at);
    /// On the builder of the first valid tensor (none: nothing to locate).
    CallSite(std::initializer_list<Tensor> tensors, SourceLoc at);
    ~CallSite();
    CallSite(const CallSite &) = delete;
    CallSite &operator=(const CallSite &) = delete;

  private:
    Builder *builder_ = nullptr; // null when it does nothing
  };

  // Model interface ---------------------------------------------------------
  Tensor input(llvm::StringRef name, DType dtype, llvm::ArrayRef<int64_t> shape,
               SourceLoc at = SourceLoc::current());
  /// A parameter named `<scope>.<name>` (see Scope) with its initialiser.
  Tensor param(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
               tf::InitKind init, double scale = 0.0,
               SourceLoc at = SourceLoc::current());
  /// The same, with xavier and kaiming resolved from `shape` (an error for
  /// a shape of rank < 2, and for a std or bound that is not positive).
  Tensor param(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, Init init,
               SourceLoc at = SourceLoc::current());
  /// Marks parameter `param` (from param()) as one AdamW does not decay by
  /// default, as an embedding table (tf.no_decay); vectors never are. A
  /// parameter made under a DecayScope keeps that explicit choice instead.
  void noWeightDecay(Tensor param);
  void output(llvm::StringRef name, Tensor value, SourceLoc at = SourceLoc::current());
  void loss(Tensor value, SourceLoc at = SourceLoc::current());
  void metric(llvm::StringRef name, Tensor value, SourceLoc at = SourceLoc::current());
  void attentionMap(llvm::StringRef name, Tensor weights,
                    SourceLoc at = SourceLoc::current());
  /// The model's `train` settings, kept on the module as `tf.train` (with
  /// the batch it was built for); `model` defaults to this model's name.
  void train(TrainConfig config);
  /// Declares that the model generates text: `logits` f32[batch, seq, vocab]
  /// scores the next token at every position of `tokens` i32[batch, seq], an
  /// input, through position-wise ops and causal self-attention. The module
  /// then gets the prefill and decode entries `MODEL generate` runs
  /// (buildGenerationFunctions builds them from the same code).
  void generate(Tensor logits, Tensor tokens, SourceLoc at = SourceLoc::current());
  /// What generate() declared, if it was called.
  const std::optional<GenerationSpec> &generation() const { return generation_; }
  GenerationPass generationPass() const { return options_.generation; }

  // The generation functions: what the model's code builds differently in
  // them. Outside them each returns its argument unchanged.
  /// The decode step's position in the sequence, the tensor<i32> argument
  /// (made on first use).
  Tensor position();
  /// In the decode step, the row of `table` [length, ...] at the position,
  /// [1, ...] (positional encodings, learned positions); else `table`.
  Tensor sequenceRow(Tensor table);
  /// In the decode step, the element at the position of `range` = [start,
  /// start + length) (arange over the sequence, as learned positions index
  /// with): [start + position], of its dtype; else `range`.
  Tensor sequenceRange(Tensor range, int64_t start);
  /// In the decode step, the decode position's row of a causal mask: true
  /// where the key's position is at most the position, bool[1, length];
  /// else `full`. Either is remembered as a causal mask.
  Tensor causalMaskRow(Tensor full);
  bool isCausalMask(Tensor mask) const;
  /// A self-attention's keys or values `fresh` [1, heads, seq, dim]: in the
  /// prefill returned as the cache `name`; in the decode step (seq 1) written
  /// at the position into the cache `name` [1, heads, length, dim] (an
  /// argument), which is returned, updated, as a result and here.
  Tensor kvCache(llvm::StringRef name, Tensor fresh);

  /// The validation scores so far: "loss" (once declared), then the metrics.
  std::vector<std::string> scoreNames() const;

  /// Finishes the function (return op, signature, result attributes) and
  /// verifies the module. Null after any error.
  mlir::OwningOpRef<mlir::ModuleOp> finish();

  // Naming ------------------------------------------------------------------
  /// RAII: parameters created while it lives are named under `name`
  /// ("encoder" then "0" then "self_attn" gives "encoder.0.self_attn.*").
  class Scope {
  public:
    Scope(Builder &builder, llvm::StringRef name);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    Builder &builder_;
  };
  /// RAII: parameters created while it lives carry an explicit weight-decay
  /// choice, `tf.decay = true|false`, which wins over the optimizer's
  /// default rule and `decay_all` (a PyTorch parameter group of its own).
  /// Nothing changes when `decay` is empty; an inner scope wins.
  class DecayScope {
  public:
    DecayScope(Builder &builder, std::optional<bool> decay);
    ~DecayScope();
    DecayScope(const DecayScope &) = delete;
    DecayScope &operator=(const DecayScope &) = delete;

  private:
    Builder &builder_;
    std::optional<bool> saved_;
  };
  /// `explicitName` if given, else a fresh name for an unnamed layer of
  /// `kind` in the current scope: "linear", "linear_1", ...
  std::string layerName(llvm::StringRef kind, llvm::StringRef explicitName);
  /// The current scope joined with `name` ("encoder.0.self_attn").
  std::string qualified(llvm::StringRef name) const;

  // Errors ------------------------------------------------------------------
  /// Emits an error at the current location and marks the build failed.
  Tensor error(const llvm::Twine &message);
  bool failed() const { return failed_; }
  /// All tensors valid; if not, the build has already failed.
  static bool allValid(llvm::ArrayRef<Tensor> tensors);

  // Low-level construction ---------------------------------------------------
  /// Creates a tf op after asking it to infer its result types: a shape
  /// error becomes a diagnostic, never an abort. Returns the results (empty
  /// on error).
  template <typename OpT>
  std::vector<Tensor> create(llvm::ArrayRef<Tensor> operands,
                             llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return createImpl(OpT::getOperationName(), &OpT::inferReturnTypes,
                      operands, attrs);
  }
  /// Ops whose result type is given (reshape, broadcast_in_dim, cast).
  Tensor createTyped(llvm::StringRef opName, mlir::Type resultType,
                     llvm::ArrayRef<Tensor> operands,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  Tensor constant(mlir::DenseElementsAttr value);
  /// A scalar f32 constant broadcast to `shape`.
  Tensor fill(double value, llvm::ArrayRef<int64_t> shape,
              SourceLoc at = SourceLoc::current());
  /// The tensor<i32> argument dropout reads its seed from (made on first use).
  Tensor seed();
  /// The tensor<i32> argument saying which sample of the global batch is
  /// this batch's first (rank * batch under mpirun, else 0): a dropout on
  /// the batch counts its elements from there (made on first use).
  Tensor sampleOffset();
  /// A per-op key for dropout's random stream: 0, 1, 2, ... in build order.
  int64_t nextDropoutKey() { return dropoutKeys_++; }

  mlir::func::FuncOp function() { return func_; }

private:
  using InferFn = llvm::LogicalResult (*)(
      mlir::MLIRContext *, std::optional<mlir::Location>, mlir::ValueRange,
      mlir::DictionaryAttr, mlir::OpaqueProperties, mlir::RegionRange,
      llvm::SmallVectorImpl<mlir::Type> &);
  std::vector<Tensor> createImpl(llvm::StringRef opName, InferFn infer,
                                 llvm::ArrayRef<Tensor> operands,
                                 llvm::ArrayRef<mlir::NamedAttribute> attrs);
  Tensor addArgument(mlir::Type type, llvm::ArrayRef<mlir::NamedAttribute> attrs);
  void addResult(Tensor value, mlir::NamedAttribute attr);

  mlir::MLIRContext &context_;
  ModelOptions options_;
  Frontend frontend_;
  /// Where this model's ops are when no call site is known (C++ models).
  mlir::Location modelLoc_;
  int callDepth_ = 0; // open CallSites
  std::optional<TrainConfig> train_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::func::FuncOp func_;
  mlir::OpBuilder ops_;
  mlir::Location loc_;
  std::vector<std::string> scopes_;
  llvm::StringMap<int> layerCounts_; // per scope + kind
  std::optional<bool> decay_;         // set by DecayScope
  llvm::StringSet<> paramNames_;
  llvm::StringSet<> inputNames_;
  std::vector<mlir::DictionaryAttr> argAttrs_;
  llvm::StringSet<> resultNames_;
  std::vector<mlir::Value> results_;
  std::vector<mlir::DictionaryAttr> resultAttrs_;
  bool hasLoss_ = false;
  std::vector<std::string> metricNames_;
  std::optional<GenerationSpec> generation_;
  Tensor position_;
  llvm::DenseSet<mlir::Value> causalMasks_;
  Tensor seed_;
  Tensor sampleOffset_;
  int64_t dropoutKeys_ = 0;
  bool failed_ = false;
  bool finished_ = false;
};

/// Adds to `module`, the model built with `options` (whose Builder's
/// generation() gave `spec`), its prefill and decode functions, each built by
/// `build` from the model's code with the options it is given. Null after a
/// diagnostic.
mlir::OwningOpRef<mlir::ModuleOp> buildGenerationFunctions(
    mlir::OwningOpRef<mlir::ModuleOp> module, const GenerationSpec &spec,
    const ModelOptions &options,
    llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(const ModelOptions &)> build);

//===----------------------------------------------------------------------===//
// Functions (no parameters). Axes may be negative, counting from the end.
//===----------------------------------------------------------------------===//

// Every function takes the caller's SourceLoc as its defaulted last
// parameter, and every operator holds it in a Located operand; both are
// filled in where the call is written.

// numpy-broadcasting arithmetic on f32 tensors, and with scalars.
Tensor operator+(Located<Tensor> a, Tensor b);
Tensor operator-(Located<Tensor> a, Tensor b);
Tensor operator*(Located<Tensor> a, Tensor b);
Tensor operator/(Located<Tensor> a, Tensor b);
Tensor operator+(Located<Tensor> a, double b);
Tensor operator-(Located<Tensor> a, double b);
Tensor operator*(Located<Tensor> a, double b);
Tensor operator/(Located<Tensor> a, double b);
Tensor operator+(Located<double> a, Tensor b);
Tensor operator-(Located<double> a, Tensor b);
Tensor operator*(Located<double> a, Tensor b);
Tensor operator/(Located<double> a, Tensor b);
Tensor operator-(Located<Tensor> a);
Tensor maximum(Tensor a, Tensor b, SourceLoc at = SourceLoc::current());
Tensor minimum(Tensor a, Tensor b, SourceLoc at = SourceLoc::current());
// Comparisons (broadcasting; operands of one dtype) give bool tensors, which
// have no truth value in C++ (`if (a == b)` does not compile: see Tensor).
Tensor operator==(Located<Tensor> a, Tensor b);
Tensor operator!=(Located<Tensor> a, Tensor b);
Tensor operator<(Located<Tensor> a, Tensor b);
Tensor operator<=(Located<Tensor> a, Tensor b);
Tensor operator>(Located<Tensor> a, Tensor b);
Tensor operator>=(Located<Tensor> a, Tensor b);
Tensor logical_and(Tensor a, Tensor b, SourceLoc at = SourceLoc::current());
Tensor logical_or(Tensor a, Tensor b, SourceLoc at = SourceLoc::current());
Tensor logical_not(Tensor a, SourceLoc at = SourceLoc::current());
/// cond ? a : b, broadcasting all three.
Tensor where(Tensor cond, Tensor a, Tensor b, SourceLoc at = SourceLoc::current());
/// Batched matrix product with numpy's matmul broadcasting of batch dims
/// (1-d operands are not supported: use unsqueeze).
Tensor matmul(Tensor a, Tensor b, SourceLoc at = SourceLoc::current());
Tensor broadcast_to(Tensor x, llvm::ArrayRef<int64_t> shape,
                    SourceLoc at = SourceLoc::current());

Tensor relu(Tensor x, SourceLoc at = SourceLoc::current());
Tensor gelu(Tensor x, SourceLoc at = SourceLoc::current());
/// x * sigmoid(x) (SiLU, swish), built as x * (1 + tanh(x / 2)) / 2.
Tensor silu(Tensor x, SourceLoc at = SourceLoc::current());
Tensor tanh(Tensor x, SourceLoc at = SourceLoc::current());
Tensor exp(Tensor x, SourceLoc at = SourceLoc::current());
Tensor log(Tensor x, SourceLoc at = SourceLoc::current());
Tensor sqrt(Tensor x, SourceLoc at = SourceLoc::current());
Tensor rsqrt(Tensor x, SourceLoc at = SourceLoc::current());
/// x ** k: an integer k (|k| <= 16) by multiplications (a negative one: 1 /
/// x^|k|), 0.5 as sqrt, -0.5 as rsqrt, any other k as exp(k log x) (x > 0).
Tensor pow(Tensor x, double k, SourceLoc at = SourceLoc::current());
/// x ** y elementwise, as exp(y log x) (x > 0).
Tensor pow(Tensor x, Tensor y, SourceLoc at = SourceLoc::current());
Tensor softmax(Tensor x, int64_t axis = -1, SourceLoc at = SourceLoc::current());
Tensor log_softmax(Tensor x, int64_t axis = -1, SourceLoc at = SourceLoc::current());
/// Reductions over `axes` (all axes when empty). A bool tensor counts its
/// trues (sum) or their fraction (mean).
Tensor sum(Tensor x, llvm::ArrayRef<int64_t> axes = {},
           SourceLoc at = SourceLoc::current());
Tensor mean(Tensor x, llvm::ArrayRef<int64_t> axes = {},
            SourceLoc at = SourceLoc::current());
Tensor max(Tensor x, llvm::ArrayRef<int64_t> axes = {},
           SourceLoc at = SourceLoc::current());
Tensor argmax(Tensor x, int64_t axis = -1, SourceLoc at = SourceLoc::current());
Tensor transpose(Tensor x, llvm::ArrayRef<int64_t> perm,
                 SourceLoc at = SourceLoc::current());
/// One entry may be -1 (inferred), as in PyTorch.
Tensor reshape(Tensor x, llvm::ArrayRef<int64_t> shape,
               SourceLoc at = SourceLoc::current());
Tensor squeeze(Tensor x, int64_t axis, SourceLoc at = SourceLoc::current());
Tensor unsqueeze(Tensor x, int64_t axis, SourceLoc at = SourceLoc::current());
Tensor concat(llvm::ArrayRef<Tensor> tensors, int64_t axis,
              SourceLoc at = SourceLoc::current());
Tensor slice(Tensor x, int64_t axis, int64_t start, int64_t limit,
             SourceLoc at = SourceLoc::current());
/// i32/bool to f32 (`float()` in the .tf language).
Tensor to_float(Tensor x, SourceLoc at = SourceLoc::current());
Tensor one_hot(Tensor ids, int64_t classes, SourceLoc at = SourceLoc::current());
Tensor dropout(Tensor x, double rate, SourceLoc at = SourceLoc::current());
/// The sinusoidal encoding of the UvA tutorial, [len, dim], as a constant.
Tensor positional_encoding(Builder &b, int64_t len, int64_t dim,
                           SourceLoc at = SourceLoc::current());
/// True on and below the diagonal, [n, n].
Tensor causal_mask(Builder &b, int64_t n, SourceLoc at = SourceLoc::current());

// Constants (tf.constant; zeros, ones and full are one scalar broadcast, so
// their size is bounded only as any tensor's, 2^31 elements; arange and eye
// at most 2^26 elements). dtype f32, i32 or bool where it makes sense.
Tensor zeros(Builder &b, llvm::ArrayRef<int64_t> shape, DType dtype = DType::f32,
             SourceLoc at = SourceLoc::current());
Tensor ones(Builder &b, llvm::ArrayRef<int64_t> shape, DType dtype = DType::f32,
            SourceLoc at = SourceLoc::current());
/// `value` everywhere: an integer in i32's range for i32, 0 or 1 for bool.
Tensor full(Builder &b, llvm::ArrayRef<int64_t> shape, double value,
            DType dtype = DType::f32, SourceLoc at = SourceLoc::current());
/// [0, 1, ..., n - 1] (i32 unless dtype says f32).
Tensor arange(Builder &b, int64_t n, DType dtype = DType::i32,
              SourceLoc at = SourceLoc::current());
/// [start, start + 1, ..., limit - 1].
Tensor arange(Builder &b, int64_t start, int64_t limit, DType dtype = DType::i32,
              SourceLoc at = SourceLoc::current());
/// The identity [n, n] (f32 unless dtype says i32 or bool).
Tensor eye(Builder &b, int64_t n, DType dtype = DType::f32,
           SourceLoc at = SourceLoc::current());

struct Attention {
  Tensor values;
  Tensor weights; // invalid unless requested
};
/// softmax(q k^T / sqrt(d)) v; `mask` (bool, true = attend) broadcasts to the
/// weights' shape.
Attention scaled_dot_product(Tensor q, Tensor k, Tensor v, Tensor mask = {},
                             bool withWeights = true,
                             SourceLoc at = SourceLoc::current());

Tensor cross_entropy(Tensor logits, Tensor labels, int64_t axis = -1,
                     SourceLoc at = SourceLoc::current());

/// PyTorch's options of a cross-entropy (the classes on the last axis).
struct CrossEntropyOptions {
  /// Label positions with this label count for nothing (PyTorch's -100).
  std::optional<int64_t> ignoreIndex;
  /// The target is (1 - labelSmoothing) on the label and labelSmoothing / C
  /// spread over the C classes.
  double labelSmoothing = 0.0;
  /// f32[C]: a class's weight multiplies its positions' losses, and the mean
  /// divides by their sum.
  Tensor weight;
};
/// The mean over the label positions as PyTorch's `cross_entropy(...,
/// ignore_index, label_smoothing, weight)` computes it, built of log_softmax,
/// one_hot and sums: (Σ_i w_i ((1 - ε) nll_i + ε smooth_i / C)) / Σ_i w_i,
/// w_i the label's weight (0 where ignored); 0, not NaN, when no position
/// counts. Without options, the op above.
Tensor cross_entropy(Tensor logits, Tensor labels, const CrossEntropyOptions &options,
                     SourceLoc at = SourceLoc::current());
Tensor mse(Tensor a, Tensor b, SourceLoc at = SourceLoc::current());

//===----------------------------------------------------------------------===//
// Layers (own parameters, PyTorch-style names and initialisers)
//
// Options are designated initializers, `linear(x, 8, {.bias = false, .name =
// "proj"})`: C++ wants the fields named in their order of declaration here
// (GCC rejects another order: "designator order for field ... does not match
// declaration order"; Clang warns, -Wreorder-init-list). Leave out any.
//===----------------------------------------------------------------------===//

// Every layer takes `init`, the initialiser of its weight matrices (tables,
// kernels; biases and norms keep theirs), unset for PyTorch's default, and
// `decay`, an explicit weight-decay choice for every parameter it makes
// (Builder::DecayScope), unset for the optimizer's default rule.

struct ParameterOptions {
  Init init = Init::zeros();
  std::string name;
  std::optional<bool> decay;
};
/// A learnable tensor of any shape (rank 0 too), named `name` in the
/// current scope, or `parameter`, `parameter_1`, ... when unnamed.
Tensor parameter(Builder &b, llvm::ArrayRef<int64_t> shape,
                 const ParameterOptions &options = {},
                 SourceLoc at = SourceLoc::current());

struct LinearOptions {
  bool bias = true;
  std::string name;
  std::optional<Init> init; // default kaiming: uniform(+-1/sqrt(in))
  std::optional<bool> decay;
  /// Use this f32 [out, in] tensor as W instead of making one: a parameter
  /// (an embedding's table, say) used here too is tied, its gradient the sum.
  Tensor weight;
};
/// x @ W^T + b over the last dim; W [out, in] and b with PyTorch's default
/// init: uniform(+-1/sqrt(in)).
Tensor linear(Tensor x, int64_t out, const LinearOptions &options = {},
              SourceLoc at = SourceLoc::current());

struct LayerNormOptions {
  double epsilon = 1e-5;
  std::string name;
  std::optional<bool> decay;
};
/// Over the last dim; weight ones, bias zeros.
Tensor layer_norm(Tensor x, const LayerNormOptions &options = {},
                  SourceLoc at = SourceLoc::current());

struct Conv1dOptions {
  int64_t kernel = 1;
  int64_t padding = 0;
  bool bias = true;
  std::string name;
  std::optional<Init> init; // default kaiming: uniform(+-1/sqrt(in * kernel))
  std::optional<bool> decay;
};
/// NCW; weight [out, in, kernel], PyTorch's default init.
Tensor conv1d(Tensor x, int64_t out, const Conv1dOptions &options = {},
              SourceLoc at = SourceLoc::current());

struct EmbeddingOptions {
  std::string name;
  std::optional<Init> init; // default normal(1.0)
  /// Explicit: the table decays (true) or not (false). Unset, it is marked
  /// tf.no_decay: AdamW leaves it out unless decay_all.
  std::optional<bool> decay;
  /// Look up in this f32 [vocab, dim] tensor instead of making a table: a
  /// parameter used here and elsewhere (an output projection) is tied.
  Tensor table;
};
/// Table [vocab, dim] drawn from N(0, 1) as nn.Embedding.
Tensor embedding(Tensor ids, int64_t vocab, int64_t dim,
                 const EmbeddingOptions &options = {},
                 SourceLoc at = SourceLoc::current());

struct AttentionOptions {
  int64_t heads = 1;
  Tensor memory;  // keys and values from here (cross-attention) when valid
  Tensor mask;    // bool, 2-d [Tq, Tk], 3-d [B, Tq, Tk] or 4-d [B, H, Tq, Tk]
  std::string name;
  Tensor *weights = nullptr; // receives [B, H, Tq, Tk] when non-null
  std::optional<Init> init; // the projections'; default xavier
  std::optional<bool> decay;
};
/// The tutorial's MultiheadAttention: one fused qkv projection (q and a
/// fused kv projection for cross-attention), heads chunk the projections,
/// xavier-uniform weights and zero biases, output projection "out".
Tensor multi_head_attention(Tensor x, const AttentionOptions &options,
                            SourceLoc at = SourceLoc::current());

enum class NormPlacement { post, pre };
/// The feed-forward net's nonlinearity: ReLU (the tutorials'), GELU (the
/// erf form, BERT's and GPT's) or SwiGLU (PaLM's and LLaMA's: linear1 makes
/// 2 x ffn features, and silu(the first half) * the second half goes on).
enum class Activation { relu, gelu, swiglu };

struct EncoderOptions {
  int64_t layers = 1;
  int64_t heads = 1;
  int64_t ffn = 0; // hidden width of the feed-forward net; 0 means 2 * dim
  double dropout = 0.0;
  NormPlacement norm = NormPlacement::post;
  Tensor mask;
  std::string name;
  Activation activation = Activation::relu;
  std::optional<Init> init; // every weight matrix's (attention, feed-forward)
  std::optional<bool> decay;
};
/// N blocks of self-attention + feed-forward with residuals; `post` is the
/// UvA tutorial's LayerNorm(x + f(x)), `pre` is x + f(LayerNorm(x)) with a
/// final norm. Parameters: NAME.i.{self_attn,linear1,linear2,norm1,norm2},
/// NAME.norm for pre.
Tensor encoder(Tensor x, const EncoderOptions &options,
               SourceLoc at = SourceLoc::current());

struct DecoderOptions {
  int64_t layers = 1;
  int64_t heads = 1;
  int64_t ffn = 0;
  double dropout = 0.0;
  NormPlacement norm = NormPlacement::post;
  Tensor mask;        // self-attention mask (e.g. causal_mask)
  Tensor memoryMask;  // cross-attention mask
  std::string name;
  Activation activation = Activation::relu;
  std::optional<Init> init; // every weight matrix's (attention, feed-forward)
  std::optional<bool> decay;
};
/// N blocks of masked self-attention, cross-attention to `memory` and
/// feed-forward. Parameters: NAME.i.{self_attn,cross_attn,linear1,linear2,
/// norm1,norm2,norm3}, NAME.norm for pre.
Tensor decoder(Tensor x, Tensor memory, const DecoderOptions &options,
               SourceLoc at = SourceLoc::current());

} // namespace tfc

#endif // TFC_COMPILER_DSL_DSL_H
