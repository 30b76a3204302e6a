//===- DslErrorsTest.cpp - errors of C++ models, and two C++ traps --------===//
//
// A C++ model's error is located at the user's file and line, names the
// model and spells what the user wrote in C++ (`operator+`, `matmul`,
// `to_float()`), also when it is found deep inside a layer; the same DSL
// under the .tf parser keeps the .tf file's locations and spellings. A
// Tensor has no truth value, so `if (a == b)` does not compile.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"
#include "compiler/dsl/ModelRegistry.h"
#include "compiler/frontend/Parser.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace tfc;

// The `==` trap: a comparison of tensors is an elementwise op giving a bool
// tensor, and a tensor cannot be a condition, so `if (a == b)` and `if (t)`
// are compile errors instead of tests of whether the build succeeded.
static_assert(std::is_same_v<decltype(std::declval<Tensor>() == std::declval<Tensor>()),
                             Tensor>);
static_assert(!std::is_constructible_v<bool, Tensor>, "`if (tensor)` must not compile");
static_assert(!std::is_convertible_v<Tensor, bool>);
static_assert(!std::is_constructible_v<bool, decltype(std::declval<Tensor>() ==
                                                      std::declval<Tensor>())>);

namespace {

/// The first diagnostic of a build, as the model programs print it.
struct Captured {
  std::string printed;
  std::string message;
  std::string file;
  unsigned line = 0;
  std::string model; // the NameLoc's name; empty when there is none
};

class DslErrors : public ::testing::Test {
protected:
  DslErrors() : context_(registry()) {
    context_.loadAllAvailableDialects();
    handler_.emplace(&context_, [this](mlir::Diagnostic &diag) {
      if (captured_.printed.empty()) {
        captured_.printed = formatModelDiagnostic(diag);
        captured_.message = diag.str();
        mlir::Location loc = diag.getLocation();
        if (auto file = loc->findInstanceOf<mlir::FileLineColLoc>()) {
          captured_.file = file.getFilename().str();
          captured_.line = file.getLine();
        }
        if (auto name = loc->findInstanceOf<mlir::NameLoc>())
          captured_.model = name.getName().str();
      }
      ++count_;
      return mlir::success();
    });
  }

  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry r;
    registerAllDialects(r);
    return r;
  }

  /// `file:line: error: message` after the model's line, as printed.
  static std::string expected(const char *model, unsigned line, const std::string &message) {
    return std::string(__FILE__) + ": In model '" + model + "':\n" + __FILE__ + ":" +
           std::to_string(line) + ": error: " + message + "\n";
  }

  mlir::MLIRContext context_;
  std::optional<mlir::ScopedDiagnosticHandler> handler_;
  Captured captured_;
  int count_ = 0;
};

TEST_F(DslErrors, BroadcastIsLocatedAtTheOperator) {
  Builder b(context_, "my_model");
  Tensor x = b.input("x", DType::f32, {64, 8});
  Tensor y = b.input("y", DType::f32, {64, 24, 32});
  unsigned line = __LINE__ + 1;
  Tensor z = x + y;
  EXPECT_FALSE(z.valid());
  EXPECT_EQ(captured_.printed,
            expected("my_model", line,
                     "operator+: shapes [64, 8] and [64, 24, 32] cannot be broadcast together"));
  EXPECT_EQ(captured_.file, __FILE__);
  EXPECT_EQ(captured_.line, line);
  EXPECT_EQ(captured_.model, "my_model");
  EXPECT_FALSE(b.finish());
  EXPECT_EQ(count_, 1) << "only the first error is reported";
}

TEST_F(DslErrors, ScalarOperatorsAndComparisonsSpellCpp) {
  Builder b(context_, "m");
  Tensor ids = b.input("ids", DType::i32, {2, 3});
  unsigned line = __LINE__ + 1;
  Tensor z = 2.0 * ids;
  EXPECT_FALSE(z.valid());
  EXPECT_EQ(captured_.printed,
            expected("m", line,
                     "operator* needs f32 operands, got i32 [2, 3] (integer and bool tensors "
                     "enter arithmetic only through to_float(), one_hot() or embedding())"));
}

TEST_F(DslErrors, ComparisonOfTwoDtypes) {
  Builder b(context_, "m");
  Tensor ids = b.input("ids", DType::i32, {2, 3});
  Tensor x = b.input("x", DType::f32, {2, 3});
  unsigned line = __LINE__ + 1;
  Tensor eq = ids == x;
  EXPECT_FALSE(eq.valid());
  EXPECT_EQ(captured_.printed,
            expected("m", line,
                     "operator== compares i32 [2, 3] with f32 [2, 3] (no implicit "
                     "conversions: use to_float())"));
}

TEST_F(DslErrors, MatmulSaysMatmul) {
  Builder b(context_, "m");
  Tensor x = b.input("x", DType::f32, {2, 3});
  Tensor w = b.input("w", DType::f32, {4, 5});
  unsigned line = __LINE__ + 1;
  Tensor y = matmul(x, w);
  EXPECT_FALSE(y.valid());
  EXPECT_EQ(captured_.printed, expected("m", line, "matmul contracts [2, 3] with [4, 5]: 3 != 4"));
}

TEST_F(DslErrors, UnaryMinus) {
  Builder b(context_, "m");
  Tensor ids = b.input("ids", DType::i32, {3});
  unsigned line = __LINE__ + 1;
  Tensor y = -ids;
  EXPECT_FALSE(y.valid());
  EXPECT_EQ(captured_.line, line);
  EXPECT_EQ(captured_.message.rfind("unary operator- needs f32 operands", 0), 0u)
      << captured_.message;
}

TEST_F(DslErrors, ErrorInsideALayerIsAtTheCallerOfTheLayer) {
  // The duplicate parameter is found by Builder::param, called by a helper
  // of linear() in Layers.cpp: the location is still the user's line.
  Builder b(context_, "layers");
  Tensor x = b.input("x", DType::f32, {2, 8});
  Tensor h = linear(x, 8, {.name = "proj"});
  EXPECT_TRUE(h.valid());
  unsigned line = __LINE__ + 1;
  Tensor y = linear(h, 8, {.bias = false, .name = "proj"});
  EXPECT_FALSE(y.valid());
  EXPECT_EQ(captured_.printed,
            expected("layers", line,
                     "parameter 'proj.weight' is defined twice (give one of the layers a "
                     "different .name)"));
}

TEST_F(DslErrors, LayerDtypeHintAndHeads) {
  Builder b(context_, "layers");
  Tensor x = b.input("x", DType::f32, {2, 5, 6});
  unsigned line = __LINE__ + 1;
  Tensor y = encoder(x, {.layers = 2, .heads = 4});
  EXPECT_FALSE(y.valid());
  EXPECT_EQ(captured_.printed,
            expected("layers", line,
                     "multi_head_attention: 4 heads do not divide the model dimension 6"));
}

TEST_F(DslErrors, ShapeRuleOfTheDialectIsLocatedToo) {
  Builder b(context_, "m");
  Tensor x = b.input("x", DType::f32, {2, 3});
  Tensor y = b.input("y", DType::f32, {4, 5});
  unsigned line = __LINE__ + 1;
  Tensor z = concat({x, y}, 0);
  EXPECT_FALSE(z.valid());
  EXPECT_EQ(captured_.line, line);
  EXPECT_EQ(captured_.model, "m");
}

TEST_F(DslErrors, BuilderMethodsAreLocated) {
  Builder b(context_, "m");
  Tensor x = b.input("x", DType::f32, {2, 3});
  unsigned line = __LINE__ + 1;
  b.loss(x);
  EXPECT_EQ(captured_.printed,
            expected("m", line, "the loss must be an f32 scalar, got f32 [2, 3]"));
}

TEST_F(DslErrors, OpsCarryTheirLineAndTheLocationIsResetAfterACall) {
  Builder b(context_, "m");
  Tensor x = b.input("x", DType::f32, {2, 3});
  unsigned line = __LINE__ + 1;
  Tensor y = relu(x);
  mlir::Location loc = y.value().getLoc();
  auto file = loc->findInstanceOf<mlir::FileLineColLoc>();
  ASSERT_TRUE(file);
  EXPECT_EQ(file.getFilename().str(), __FILE__);
  EXPECT_EQ(file.getLine(), line);
  // Between calls the builder is at the model, with no line.
  EXPECT_FALSE(b.loc()->findInstanceOf<mlir::FileLineColLoc>());
  EXPECT_EQ(mlir::cast<mlir::NameLoc>(b.loc()).getName().str(), "m");
  EXPECT_EQ(count_, 0);
}

// A registered model, built as the model programs build it.
TFC_MODEL(dsl_errors_test_model, 4) {
  Tensor x = b.input("x", DType::f32, {b.batch(), 8});
  Tensor y = b.input("y", DType::f32, {b.batch(), 3});
  b.output("z", x - y);
}

TEST_F(DslErrors, RegisteredModelNamesItself) {
  const ModelDef *model = findModel("dsl_errors_test_model");
  ASSERT_TRUE(model);
  EXPECT_FALSE(buildModel(context_, *model));
  EXPECT_EQ(captured_.model, "dsl_errors_test_model");
  EXPECT_EQ(captured_.file, __FILE__);
  EXPECT_EQ(captured_.message,
            "operator-: shapes [4, 8] and [4, 3] cannot be broadcast together");
  EXPECT_NE(captured_.printed.find("In model 'dsl_errors_test_model':\n"), std::string::npos);
}

TEST_F(DslErrors, TfFrontendKeepsItsLocationsAndSpellings) {
  const char *source = "model m {\n"
                       "  input x: f32[2, 3]\n"
                       "  input w: f32[4, 5]\n"
                       "  output y = x @ w\n"
                       "}\n";
  FrontendResult r = parseTfSource(source, "m.tf", context_);
  EXPECT_FALSE(r.module);
  EXPECT_EQ(captured_.message, "'@' contracts [2, 3] with [4, 5]: 3 != 4");
  EXPECT_EQ(captured_.file, "m.tf");
  EXPECT_EQ(captured_.line, 4u);
  EXPECT_EQ(captured_.model, "") << "the .tf parser's locations are its own";
}

TEST_F(DslErrors, TfFrontendSaysFloat) {
  const char *source = "model m {\n"
                       "  input ids: i32[2, 3]\n"
                       "  output y = relu(ids)\n"
                       "}\n";
  FrontendResult r = parseTfSource(source, "m.tf", context_);
  EXPECT_FALSE(r.module);
  EXPECT_EQ(captured_.message,
            "relu needs f32 operands, got i32 [2, 3] (integer and bool tensors enter "
            "arithmetic only through float(), one_hot() or embedding())");
  EXPECT_EQ(captured_.line, 3u);
}

// Learnable tensors, tying, initialisers and constants: each error at the
// user's line, spelled in C++ (`.weight`, `.table`).

TEST_F(DslErrors, TiedWeightOfTheWrongShapeNamesBothShapes) {
  Builder b(context_, "m");
  Tensor x = b.input("x", DType::f32, {2, 8});
  Tensor wte = parameter(b, {8, 10}, {.init = Init::normal(0.02), .name = "wte"});
  unsigned line = __LINE__ + 1;
  Tensor y = linear(x, 10, {.bias = false, .weight = wte});
  EXPECT_FALSE(y.valid());
  EXPECT_EQ(captured_.printed,
            expected("m", line,
                     "linear: .weight is f32 [8, 10], but the layer needs f32 [10, 8] "
                     "([out, in])"));
}

TEST_F(DslErrors, TiedTableOfTheWrongShapeOrDtype) {
  Builder b(context_, "m");
  Tensor ids = b.input("ids", DType::i32, {2, 5});
  unsigned line = __LINE__ + 1;
  Tensor y = embedding(ids, 10, 4, {.table = ids});
  EXPECT_FALSE(y.valid());
  EXPECT_EQ(captured_.printed,
            expected("m", line,
                     "embedding: .table is i32 [2, 5], but the layer needs f32 [10, 4] "
                     "([vocab, dim])"));
}

TEST_F(DslErrors, XavierOfAVectorIsAnErrorAsInPyTorch) {
  Builder b(context_, "m");
  unsigned line = __LINE__ + 1;
  Tensor p = parameter(b, {16}, {.init = Init::kaiming(), .name = "gain"});
  EXPECT_FALSE(p.valid());
  EXPECT_EQ(captured_.printed,
            expected("m", line,
                     "parameter 'gain' has shape [16]: kaiming needs a fan-in and a fan-out, "
                     "so a rank of at least 2 (as in PyTorch); use normal(std) or "
                     "uniform(bound)"));
}

TEST_F(DslErrors, InitialiserScaleMustBePositive) {
  Builder b(context_, "m");
  Tensor x = b.input("x", DType::f32, {2, 8});
  unsigned line = __LINE__ + 1;
  Tensor y = linear(x, 4, {.init = Init::normal(0.0)});
  EXPECT_FALSE(y.valid());
  EXPECT_EQ(captured_.printed,
            expected("m", line,
                     "parameter 'linear.weight': normal's std must be positive and finite, "
                     "got 0"));
}

TEST_F(DslErrors, ParameterShapeAndNameAreChecked) {
  Builder b(context_, "m");
  Tensor ok = parameter(b, {3}, {.name = "p"});
  EXPECT_TRUE(ok.valid());
  unsigned line = __LINE__ + 1;
  Tensor again = parameter(b, {3}, {.name = "p"});
  EXPECT_FALSE(again.valid());
  EXPECT_EQ(captured_.printed,
            expected("m", line,
                     "parameter 'p' is defined twice (give one of the layers a different "
                     ".name)"));

  Builder c(context_, "n");
  captured_ = {};
  line = __LINE__ + 1;
  Tensor huge = parameter(c, {int64_t(1) << 40, int64_t(1) << 40});
  EXPECT_FALSE(huge.valid());
  EXPECT_EQ(captured_.printed,
            expected("n", line,
                     "parameter 'parameter' has shape [1099511627776, 1099511627776]: "
                     "dimensions must be positive and the size at most 2^31 elements"));
}

TEST_F(DslErrors, ConstantsCheckTheirValuesAndSizes) {
  struct Case {
    std::function<Tensor(Builder &)> build;
    std::string message;
  };
  std::vector<Case> cases = {
      {[](Builder &b) { return full(b, {2}, 0.5, DType::i32); },
       "full: 0.5 is not an i32 (an integer in [-2^31, 2^31))"},
      {[](Builder &b) { return full(b, {2}, 3e9, DType::i32); },
       "full: 3e+09 is not an i32 (an integer in [-2^31, 2^31))"},
      {[](Builder &b) { return full(b, {2}, 2, DType::boolean); },
       "full: a bool tensor holds 0 or 1 (false or true), got 2"},
      {[](Builder &b) { return full(b, {2}, 1e39); }, "full: 1e+39 is not a finite f32"},
      {[](Builder &b) { return zeros(b, {4, -1}); },
       "zeros: shape [4, -1]: dimensions must be positive and the size at most 2^31 elements"},
      {[](Builder &b) { return arange(b, 3, 3); },
       "arange(3, 3) needs start < limit and at most 2^26 values"},
      {[](Builder &b) { return arange(b, INT64_MIN, INT64_MAX); },
       "arange(-9223372036854775808, 9223372036854775807) needs start < limit and at most "
       "2^26 values"},
      {[](Builder &b) { return arange(b, int64_t(1) << 40, (int64_t(1) << 40) + 2); },
       "arange(1099511627776, 1099511627778): the values do not fit in i32"},
      {[](Builder &b) { return arange(b, 3, DType::boolean); },
       "arange makes i32 or f32 values, not bool"},
      {[](Builder &b) { return eye(b, 10000); }, "eye(10000) needs a size in [1, 8192]"},
  };
  for (const Case &c : cases) {
    captured_ = {};
    Builder b(context_, "m");
    Tensor t = c.build(b);
    EXPECT_FALSE(t.valid()) << c.message;
    EXPECT_EQ(captured_.message, c.message);
    EXPECT_EQ(captured_.file, __FILE__) << "at the lambda's line, not in the DSL";
  }
}

TEST_F(DslErrors, TfFrontendSaysWeightColonAndSuggestsTheInitialiser) {
  const char *source = "model m {\n"
                       "  input x: f32[2, 8]\n"
                       "  let w = parameter([8, 8], init: xavier, name: \"w\")\n"
                       "  output y = linear(x, 4, weight: w, init: kaimin)\n"
                       "}\n";
  FrontendResult r = parseTfSource(source, "m.tf", context_);
  EXPECT_FALSE(r.module);
  EXPECT_EQ(captured_.message,
            "unknown initialiser 'kaimin'; did you mean 'kaiming'? (initialisers: zeros, ones, "
            "normal(std), uniform(bound), xavier, kaiming)");
  EXPECT_EQ(captured_.line, 4u);

  captured_ = {};
  const char *tied = "model m {\n"
                     "  input x: f32[2, 8]\n"
                     "  let w = parameter([8, 8], init: xavier, name: \"w\")\n"
                     "  output y = linear(x, 4, weight: w)\n"
                     "}\n";
  r = parseTfSource(tied, "m.tf", context_);
  EXPECT_FALSE(r.module);
  EXPECT_EQ(captured_.message,
            "linear: weight: is f32 [8, 8], but the layer needs f32 [4, 8] ([out, in])");
  EXPECT_EQ(captured_.line, 4u);
}

} // namespace
