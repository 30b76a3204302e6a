//===- DecomposeTest.cpp - tf-decompose against the interpreter -----------===//
//
// tf-decompose rewrites tf.attention, tf.attention_grad, tf.layer_norm,
// tf.layer_norm_grad and tf.cross_entropy_grad into plain tf ops. The
// reference interpreter evaluates both forms (the fused ops by their own
// loops, the decompositions op by op), so each case builds a function around
// one op, interprets it on random inputs, decomposes a clone and interprets
// that: every result must agree to 1e-10 relative (same math in double; the
// attention ones are the same sums in the same order). Shapes cover no batch, one head and several,
// Tq != Tk, odd sizes, causal and random masks (a fully masked row
// included), the cross-entropy's class axis first, in the middle and last.
// Last, every seed model's entries (the train step: forward, attention_grad,
// layer_norm_grad, cross_entropy_grad, Adam) give the same results
// decomposed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Registration.h"
#include "compiler/dsl/ModelRegistry.h"
#include "compiler/interpreter/Interpreter.h"
#include "tests/unit/IndexBounds.h"
#include "dialect/TfDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace tfc;

namespace {

constexpr double kTolerance = 1e-10;

bool isDecomposable(mlir::Operation *op) {
  return llvm::isa<tf::AttentionOp, tf::AttentionGradOp, tf::LayerNormOp, tf::LayerNormGradOp,
                   tf::CrossEntropyGradOp>(op);
}

int64_t countDecomposable(mlir::Operation *root) {
  int64_t n = 0;
  root->walk([&](mlir::Operation *op) { n += isDecomposable(op); });
  return n;
}

/// "tensor<2x3xf32>", "tensor<f32>" for rank 0.
std::string tensorType(const std::vector<int64_t> &shape, const char *element = "f32") {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + element + ">";
}

std::vector<int64_t> concat(std::vector<int64_t> a, std::initializer_list<int64_t> b) {
  a.insert(a.end(), b);
  return a;
}

std::string floatText(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9e", v);
  return buf;
}

/// Relative error of `actual` against `expected`, element by element, with
/// the denominator floored at 1e-6 of the largest expected magnitude (an
/// element that cancels to ~0 is compared at the tensor's scale).
double relativeError(const HostTensor &expected, const HostTensor &actual) {
  EXPECT_EQ(expected.shape, actual.shape);
  if (expected.data.size() != actual.data.size())
    return INFINITY;
  double scale = 0;
  for (double v : expected.data)
    scale = std::max(scale, std::abs(v));
  double worst = 0;
  for (size_t i = 0; i < expected.data.size(); ++i) {
    double e = expected.data[i], a = actual.data[i];
    if (!std::isfinite(e) || !std::isfinite(a))
      return INFINITY;
    if (e == a)
      continue;
    worst = std::max(worst, std::abs(a - e) / std::max(std::abs(e), 1e-6 * scale));
  }
  return worst;
}

class DecomposeTest : public ::testing::Test {
protected:
  DecomposeTest() : rng(20240601) {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  HostTensor normal(std::vector<int64_t> shape, double mean = 0, double stddev = 1) {
    HostTensor t = HostTensor::f32(shape, {});
    std::normal_distribution<double> dist(mean, stddev);
    t.data.resize(t.numElements());
    for (double &v : t.data)
      v = dist(rng);
    return t;
  }

  /// The mask of a causal decoder over [batch..., tq, tk]: query i sees the
  /// keys up to its own position, the last query the last key.
  static HostTensor causal(std::vector<int64_t> batch, int64_t tq, int64_t tk) {
    HostTensor m = HostTensor::i1(concat(batch, {tq, tk}), {});
    m.data.resize(m.numElements());
    for (int64_t w = 0; w < int64_t(m.data.size()); ++w) {
      int64_t j = w % tk, i = (w / tk) % tq;
      m.data[w] = j <= i + (tk - tq) ? 1.0 : 0.0;
    }
    return m;
  }

  /// A random mask whose first row is entirely false (uniform weights,
  /// and attention_grad's dS forced to 0 there).
  HostTensor randomMask(std::vector<int64_t> batch, int64_t tq, int64_t tk) {
    HostTensor m = HostTensor::i1(concat(batch, {tq, tk}), {});
    m.data.resize(m.numElements());
    std::bernoulli_distribution keep(0.6);
    for (int64_t w = 0; w < int64_t(m.data.size()); ++w)
      m.data[w] = w < tk ? 0.0 : double(keep(rng));
    return m;
  }

  /// Parses `source` (one function), interprets it on `args`, decomposes a
  /// clone, interprets that, and returns the largest relative error over
  /// every result.
  double compare(const std::string &source, const std::vector<HostTensor> &args) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source;
    if (!module)
      return INFINITY;
    EXPECT_EQ(countDecomposable(*module), 1) << source;
    mlir::OwningOpRef<mlir::ModuleOp> decomposed = module->clone();
    mlir::PassManager pm(&context);
    pm.addPass(createTfDecompose());
    EXPECT_TRUE(mlir::succeeded(pm.run(*decomposed)));
    EXPECT_EQ(countDecomposable(*decomposed), 0);
    EXPECT_TRUE(mlir::succeeded(mlir::verify(*decomposed)));

    std::string error;
    auto fn = [](mlir::ModuleOp m) { return *m.getOps<mlir::func::FuncOp>().begin(); };
    auto expected = interpret(fn(*module), args, &error);
    EXPECT_TRUE(mlir::succeeded(expected)) << error;
    auto actual = interpret(fn(*decomposed), args, &error);
    EXPECT_TRUE(mlir::succeeded(actual)) << error;
    if (mlir::failed(expected) || mlir::failed(actual))
      return INFINITY;
    EXPECT_EQ(expected->size(), actual->size());
    double worst = 0;
    for (size_t i = 0; i < expected->size() && i < actual->size(); ++i) {
      double err = relativeError((*expected)[i], (*actual)[i]);
      EXPECT_LE(err, kTolerance) << "result " << i << " of\n" << source;
      worst = std::max(worst, err);
    }
    return worst;
  }

  mlir::MLIRContext context;
  std::mt19937 rng;
};

enum class Mask { none, causal, random };

struct AttentionCase {
  std::vector<int64_t> batch; // [batch, heads] or fewer
  int64_t tq, tk, d, dv;
  Mask mask;
  bool withWeights;
};

const AttentionCase kAttentionCases[] = {
    {{}, 3, 4, 2, 2, Mask::none, true},          // no batch: the tutorial's shape
    {{1, 1}, 5, 5, 3, 7, Mask::causal, false},   // one head
    {{2, 3}, 4, 6, 5, 3, Mask::causal, true},    // three heads, Tq < Tk
    {{3, 2}, 7, 7, 4, 4, Mask::random, true},    // two heads, a fully masked row
    {{2}, 1, 9, 1, 5, Mask::none, false},        // one query, D = 1
    {{2, 2}, 6, 3, 9, 1, Mask::random, false},   // Tq > Tk, Dv = 1
};

std::string describe(const AttentionCase &c) {
  std::string s = "batch " + tensorType(c.batch) + " tq " + std::to_string(c.tq) + " tk " +
                  std::to_string(c.tk) + " d " + std::to_string(c.d) + " dv " +
                  std::to_string(c.dv);
  return s + (c.mask == Mask::causal ? " causal" : c.mask == Mask::random ? " masked" : "");
}

TEST_F(DecomposeTest, Attention) {
  double worst = 0;
  for (const AttentionCase &c : kAttentionCases) {
    SCOPED_TRACE(describe(c));
    std::string q = tensorType(concat(c.batch, {c.tq, c.d}));
    std::string k = tensorType(concat(c.batch, {c.tk, c.d}));
    std::string v = tensorType(concat(c.batch, {c.tk, c.dv}));
    std::string m = tensorType(concat(c.batch, {c.tq, c.tk}), "i1");
    std::string o = tensorType(concat(c.batch, {c.tq, c.dv}));
    std::string w = tensorType(concat(c.batch, {c.tq, c.tk}));
    bool masked = c.mask != Mask::none;
    std::string results = c.withWeights ? o + ", " + w : o;
    std::string source = "func.func @f(%q: " + q + ", %k: " + k + ", %v: " + v +
                         (masked ? ", %m: " + m : "") + ") -> (" + results + ") {\n" +
                         "  %o" + (c.withWeights ? ", %w" : "") + " = tf.attention %q, %k, %v" +
                         (masked ? " mask %m" : "") + " scale " +
                         floatText(1.0 / std::sqrt(double(c.d))) +
                         (c.withWeights ? " with_weights" : "") + " : " + q + ", " + k + ", " +
                         v + (masked ? ", " + m : "") + " -> " + results + "\n" +
                         "  return %o" + (c.withWeights ? ", %w" : "") + " : " + results +
                         "\n}\n";
    // Logits of a few units: peaked softmaxes, not uniform ones.
    std::vector<HostTensor> args = {normal(concat(c.batch, {c.tq, c.d}), 0, 1.5),
                                    normal(concat(c.batch, {c.tk, c.d}), 0, 1.5),
                                    normal(concat(c.batch, {c.tk, c.dv}))};
    if (c.mask == Mask::causal)
      args.push_back(causal(c.batch, c.tq, c.tk));
    else if (c.mask == Mask::random)
      args.push_back(randomMask(c.batch, c.tq, c.tk));
    worst = std::max(worst, compare(source, args));
  }
  std::printf("[ measure  ] attention: max relative error %.3g\n", worst);
}

TEST_F(DecomposeTest, AttentionGrad) {
  double worst = 0;
  for (const AttentionCase &c : kAttentionCases) {
    SCOPED_TRACE(describe(c));
    std::string q = tensorType(concat(c.batch, {c.tq, c.d}));
    std::string k = tensorType(concat(c.batch, {c.tk, c.d}));
    std::string v = tensorType(concat(c.batch, {c.tk, c.dv}));
    std::string m = tensorType(concat(c.batch, {c.tq, c.tk}), "i1");
    std::string o = tensorType(concat(c.batch, {c.tq, c.dv}));
    bool masked = c.mask != Mask::none;
    std::string results = q + ", " + k + ", " + v;
    std::string source = "func.func @f(%q: " + q + ", %k: " + k + ", %v: " + v +
                         (masked ? ", %m: " + m : "") + ", %g: " + o + ") -> (" + results +
                         ") {\n" + "  %dq, %dk, %dv = tf.attention_grad %q, %k, %v" +
                         (masked ? " mask %m" : "") + " grad %g scale " +
                         floatText(1.0 / std::sqrt(double(c.d))) + " : " + q + ", " + k + ", " +
                         v + ", " + o + (masked ? ", " + m : "") + " -> " + results + "\n" +
                         "  return %dq, %dk, %dv : " + results + "\n}\n";
    std::vector<HostTensor> args = {normal(concat(c.batch, {c.tq, c.d}), 0, 1.5),
                                    normal(concat(c.batch, {c.tk, c.d}), 0, 1.5),
                                    normal(concat(c.batch, {c.tk, c.dv}))};
    if (c.mask == Mask::causal)
      args.push_back(causal(c.batch, c.tq, c.tk));
    else if (c.mask == Mask::random)
      args.push_back(randomMask(c.batch, c.tq, c.tk));
    args.push_back(normal(concat(c.batch, {c.tq, c.dv})));
    worst = std::max(worst, compare(source, args));
  }
  std::printf("[ measure  ] attention_grad: max relative error %.3g\n", worst);
}

struct LayerNormCase {
  std::vector<int64_t> shape;
  double epsilon; // 0: the op's default (1e-5)
};

const LayerNormCase kLayerNormCases[] = {
    {{5}, 0},            // one row, rank 1
    {{3, 7}, 0},         // odd width
    {{2, 3, 16}, 1e-6},  // rows over two dims
    {{1, 1, 9}, 1e-3},
    {{4, 1}, 0.25},      // width 1: x̂ = 0
    {{2, 5, 33}, 1e-5},
};

std::string epsilonAttr(double epsilon) {
  return epsilon == 0 ? "" : " {epsilon = " + floatText(epsilon) + " : f32}";
}

TEST_F(DecomposeTest, LayerNorm) {
  double worst = 0;
  for (const LayerNormCase &c : kLayerNormCases) {
    std::string x = tensorType(c.shape), p = tensorType({c.shape.back()});
    SCOPED_TRACE(x);
    std::string source = "func.func @f(%x: " + x + ", %g: " + p + ", %b: " + p + ") -> " + x +
                         " {\n  %y = tf.layer_norm %x, %g, %b" + epsilonAttr(c.epsilon) + " : " +
                         x + ", " + p + ", " + p + "\n  return %y : " + x + "\n}\n";
    // Rows far from zero mean and unit variance: the centring matters.
    std::vector<HostTensor> args = {normal(c.shape, 3.0, 2.0), normal({c.shape.back()}, 1.0, 0.5),
                                    normal({c.shape.back()})};
    worst = std::max(worst, compare(source, args));
  }
  std::printf("[ measure  ] layer_norm: max relative error %.3g\n", worst);
}

TEST_F(DecomposeTest, LayerNormGrad) {
  double worst = 0;
  for (const LayerNormCase &c : kLayerNormCases) {
    std::string x = tensorType(c.shape), p = tensorType({c.shape.back()});
    SCOPED_TRACE(x);
    std::string results = x + ", " + p + ", " + p;
    std::string source = "func.func @f(%x: " + x + ", %g: " + p + ", %dy: " + x + ") -> (" +
                         results + ") {\n  %dx, %dg, %db = tf.layer_norm_grad %x, %g grad %dy" +
                         epsilonAttr(c.epsilon) + " : " + x + ", " + p + "\n  return %dx, %dg, %db : " +
                         results + "\n}\n";
    std::vector<HostTensor> args = {normal(c.shape, 3.0, 2.0), normal({c.shape.back()}, 1.0, 0.5),
                                    normal(c.shape)};
    worst = std::max(worst, compare(source, args));
  }
  std::printf("[ measure  ] layer_norm_grad: max relative error %.3g\n", worst);
}

struct CrossEntropyCase {
  std::vector<int64_t> logits;
  int64_t axis;
};

const CrossEntropyCase kCrossEntropyCases[] = {
    {{4, 5}, 1},     // [rows, classes]: the CPU's and the kernel's usual layout
    {{2, 3, 7}, 2},  // rows over two dims
    {{2, 5, 3}, 1},  // the classes in the middle: the one-hot transposed
    {{3, 2, 2}, 0},  // the classes first
    {{6, 1}, 1},     // one class: softmax 1, dlogits 0
};

TEST_F(DecomposeTest, CrossEntropyGrad) {
  double worst = 0;
  for (const CrossEntropyCase &c : kCrossEntropyCases) {
    std::vector<int64_t> labelShape = c.logits;
    labelShape.erase(labelShape.begin() + c.axis);
    std::string x = tensorType(c.logits), y = tensorType(labelShape, "i32");
    SCOPED_TRACE(x + " axis " + std::to_string(c.axis));
    std::string source = "func.func @f(%x: " + x + ", %y: " + y + ", %g: tensor<f32>) -> " + x +
                         " {\n  %d = tf.cross_entropy_grad %x, %y grad %g axis " +
                         std::to_string(c.axis) + " : " + x + ", " + y +
                         ", tensor<f32>\n  return %d : " + x + "\n}\n";
    HostTensor labels = HostTensor::i32(labelShape, {});
    labels.data.resize(labels.numElements());
    std::uniform_int_distribution<int64_t> classes(0, c.logits[size_t(c.axis)] - 1);
    for (double &v : labels.data)
      v = double(classes(rng));
    // Logits of a few units (peaked softmaxes), an adjoint other than 1.
    std::vector<HostTensor> args = {normal(c.logits, 0, 2.0), labels, normal({}, 1.0, 0.5)};
    worst = std::max(worst, compare(source, args));
  }
  std::printf("[ measure  ] cross_entropy_grad: max relative error %.3g\n", worst);
}

// `ops` rewrites only the ops it names; an unknown name is an error.
TEST_F(DecomposeTest, OpsOptionSelects) {
  const char *source = R"(
    func.func @f(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %dy: tensor<4x8xf32>)
        -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
      %o = tf.attention %x, %x, %x scale 0.5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
      %y = tf.layer_norm %o, %g, %b : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
      %dx, %dg, %db = tf.layer_norm_grad %o, %g grad %dy : tensor<4x8xf32>, tensor<8xf32>
      return %y, %dx, %dg, %db : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
    })";
  auto run = [&](std::vector<std::string> names, bool &ok) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    TfDecomposeOptions options;
    options.ops = names;
    mlir::PassManager pm(&context);
    pm.addPass(createTfDecompose(options));
    mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
    ok = mlir::succeeded(pm.run(*module));
    std::vector<std::string> left;
    module->walk([&](mlir::Operation *op) {
      if (isDecomposable(op))
        left.push_back(op->getName().getStringRef().str());
    });
    return left;
  };
  bool ok = false;
  EXPECT_EQ(run({"attention"}, ok),
            (std::vector<std::string>{"tf.layer_norm", "tf.layer_norm_grad"}));
  EXPECT_TRUE(ok);
  EXPECT_EQ(run({"layer_norm_grad", "tf.layer_norm"}, ok),
            (std::vector<std::string>{"tf.attention"}));
  EXPECT_TRUE(ok);
  EXPECT_EQ(run({}, ok), (std::vector<std::string>{}));
  EXPECT_TRUE(ok);
  run({"softmax"}, ok);
  EXPECT_FALSE(ok);
}

/// Arguments for an entry (tf-entry-points' `tfc.abi` says what each is):
/// parameters signed, scaled by 1/sqrt(fan-in) so that activations stay of
/// order one (all-positive weights collapse a set's logits to one value,
/// whose argmax ties then flip on the last bit); optimizer state, step and
/// hyperparameters positive (Adam's second moment); the sample mask 0/1,
/// its first sample 1; integers in the smallest range an op indexes with.
std::vector<HostTensor> entryArguments(mlir::func::FuncOp func, std::mt19937 &rng) {
  const int64_t range = smallestIndexBound(func);
  auto abi = func->getAttrOfType<mlir::DictionaryAttr>(kAbiAttr);
  auto abiArgs = abi ? abi.getAs<mlir::ArrayAttr>("args") : mlir::ArrayAttr();
  std::vector<HostTensor> args;
  for (mlir::BlockArgument arg : func.getArguments()) {
    llvm::StringRef kind;
    if (abiArgs && arg.getArgNumber() < abiArgs.size())
      if (auto entry = llvm::dyn_cast<mlir::DictionaryAttr>(abiArgs[arg.getArgNumber()]))
        if (auto k = entry.getAs<mlir::StringAttr>("kind"))
          kind = k.getValue();
    HostTensor t = HostTensor::zeros(arg.getType());
    std::normal_distribution<double> normal;
    std::uniform_int_distribution<int64_t> ints(0, t.type == ElementType::i1 ? 1 : range - 1);
    double fanIn = t.shape.size() >= 2 ? double(t.shape.back()) : 1.0;
    for (size_t i = 0; i < t.data.size(); ++i) {
      double &v = t.data[i];
      if (t.type != ElementType::f32)
        v = double(ints(rng));
      else if (kind == "param")
        v = normal(rng) / std::sqrt(fanIn);
      else if (kind == "input")
        v = normal(rng);
      else if (kind == "mask")
        v = i == 0 ? 1.0 : double(ints(rng) % 2);
      else
        v = std::abs(normal(rng));
    }
    args.push_back(std::move(t));
  }
  return args;
}

// The whole train step: every seed model through tf-autodiff and
// tf-entry-points (its attention_grads and layer_norm_grads come from the
// VJPs), then every entry interpreted before and after tf-decompose.
TEST(DecomposeModelsTest, EveryEntryOfEverySeedModel) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::mt19937 rng(7);
  int64_t decomposedOps = 0, grads = 0;
  double worst = 0;
  for (const ModelDef &model : registeredModels()) {
    SCOPED_TRACE(model.name);
    auto module = buildModel(context, model, /*batch=*/2);
    ASSERT_TRUE(module);
    mlir::PassManager pm(&context);
    pm.addPass(createTfAutodiff());
    pm.addPass(createTfEntryPoints());
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    decomposedOps += countDecomposable(*module);
    module->walk([&](mlir::Operation *op) {
      grads += llvm::isa<tf::AttentionGradOp, tf::LayerNormGradOp, tf::CrossEntropyGradOp>(op);
    });
    mlir::OwningOpRef<mlir::ModuleOp> decomposed = module->clone();
    mlir::PassManager decompose(&context);
    decompose.addPass(createTfDecompose());
    ASSERT_TRUE(mlir::succeeded(decompose.run(*decomposed)));
    EXPECT_EQ(countDecomposable(*decomposed), 0);

    for (auto [before, after] : llvm::zip(module->getOps<mlir::func::FuncOp>(),
                                          decomposed->getOps<mlir::func::FuncOp>())) {
      SCOPED_TRACE(before.getName().str());
      std::vector<HostTensor> args = entryArguments(before, rng);
      std::string error;
      auto expected = interpret(before, args, &error);
      ASSERT_TRUE(mlir::succeeded(expected)) << error;
      auto actual = interpret(after, args, &error);
      ASSERT_TRUE(mlir::succeeded(actual)) << error;
      ASSERT_EQ(expected->size(), actual->size());
      // grad_step returns the gradients themselves (train_step's results
      // carry them only inside Adam's moments), some of them mathematically
      // zero (a key's bias: softmax ignores it) and computed as rounding
      // noise either way: its results are compared against the step's
      // largest value, not each element's own.
      if (before.getName() == "grad_step") {
        double scale = 0, err = 0;
        for (const HostTensor &t : *expected)
          for (double v : t.data)
            scale = std::max(scale, std::abs(v));
        for (size_t i = 0; i < expected->size(); ++i)
          for (size_t j = 0; j < (*expected)[i].data.size(); ++j)
            err = std::max(err, std::abs((*expected)[i].data[j] - (*actual)[i].data[j]) / scale);
        EXPECT_LE(err, kTolerance);
        worst = std::max(worst, err);
        continue;
      }
      for (size_t i = 0; i < expected->size(); ++i) {
        double err = relativeError((*expected)[i], (*actual)[i]);
        EXPECT_LE(err, kTolerance) << "result " << i;
        worst = std::max(worst, err);
      }
    }
  }
  // Not vacuous: the models have attentions, layer norms and their VJPs.
  EXPECT_GT(decomposedOps, 0);
  EXPECT_GT(grads, 0);
  std::printf("[ measure  ] seed models: %lld ops decomposed (%lld gradients), max relative "
              "error %.3g\n",
              (long long)decomposedOps, (long long)grads, worst);
}

} // namespace
