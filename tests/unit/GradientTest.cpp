//===- GradientTest.cpp - every VJP against central finite differences ----===//
//
// For an op f with inputs x and random cotangents w (one per float result),
// L(x) = Σ_r Σ w_r ⊙ f_r(x) has the gradient VJP(w). Each single-op test
// builds two functions, @forward (f) and @vjp (f, then buildGradient with
// the w arguments as result adjoints), runs both through the double
// precision interpreter, and compares every element of every float input's
// adjoint with (L(x + εe_i) - L(x - εe_i)) / 2ε.
//
// The composite tests do the same for whole DSL models (linear, layer_norm,
// attention, encoder and decoder blocks, conv1d, embedding, losses) through
// createGradientFunction, the autodiff sweep over these VJPs.
//
// Inputs are drawn away from the kinks of relu, max, min and reduce_max, so
// the finite differences never straddle one.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"
#include "compiler/dsl/DSL.h"
#include "compiler/interpreter/Interpreter.h"
#include "tests/unit/IndexBounds.h"
#include "compiler/transforms/Autodiff.h"
#include "dialect/TfDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

using namespace tfc;

namespace {

constexpr double kStep = 1e-6;      // ε of the central differences
constexpr double kTolerance = 1e-6; // on |analytic - fd| / max(1, |fd|)

/// The worst error over the whole run, printed when it ends.
struct WorstError {
  double error = 0;
  std::string where;
  int64_t checked = 0;
};
WorstError worst;

class ReportWorstError : public ::testing::Environment {
  void TearDown() override {
    std::printf("[ FD summary ] %lld gradient elements checked; worst error %.3g at %s\n",
                static_cast<long long>(worst.checked), worst.error, worst.where.c_str());
  }
};
[[maybe_unused]] ::testing::Environment *const reportWorst =
    ::testing::AddGlobalTestEnvironment(new ReportWorstError);

bool isFloatTensor(mlir::Type type) {
  return mlir::cast<mlir::RankedTensorType>(type).getElementType().isF32();
}

std::string typeString(const HostTensor &t) {
  std::string s = "tensor<";
  for (int64_t d : t.shape)
    s += std::to_string(d) + "x";
  return s + (t.type == ElementType::f32 ? "f32" : t.type == ElementType::i32 ? "i32" : "i1") + ">";
}

double dot(const HostTensor &a, const HostTensor &b) {
  double s = 0;
  for (size_t i = 0; i < a.data.size(); ++i)
    s += a.data[i] * b.data[i];
  return s;
}

/// Runs `func`; a failure fails the test and gives no results.
std::vector<HostTensor> run(mlir::func::FuncOp func, const std::vector<HostTensor> &args) {
  std::string error;
  auto results = interpret(func, args, &error);
  if (mlir::failed(results)) {
    ADD_FAILURE() << "interpreting @" << func.getName().str() << ": " << error;
    return {};
  }
  return *results;
}

/// Compares one analytic gradient element with its central difference.
void expectClose(double analytic, double fd, const std::string &where) {
  double error = std::abs(analytic - fd) / std::max(1.0, std::abs(fd));
  ++worst.checked;
  if (error > worst.error) {
    worst.error = error;
    worst.where = where;
  }
  EXPECT_LE(error, kTolerance) << where << ": analytic " << analytic << ", finite difference "
                               << fd;
}

class GradientTest : public ::testing::Test {
protected:
  GradientTest() : rng(20240607) {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  // Inputs ------------------------------------------------------------------

  HostTensor normal(std::vector<int64_t> shape, double scale = 1.0) {
    HostTensor t = HostTensor::f32(shape, {});
    std::normal_distribution<double> dist(0.0, scale);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.data.push_back(dist(rng));
    return t;
  }
  HostTensor uniform(std::vector<int64_t> shape, double lo, double hi) {
    HostTensor t = HostTensor::f32(shape, {});
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.data.push_back(dist(rng));
    return t;
  }
  /// |x| in [0.2, 1.5] with a random sign: no element near relu's kink.
  HostTensor awayFromZero(std::vector<int64_t> shape) {
    HostTensor t = uniform(shape, 0.2, 1.5);
    std::bernoulli_distribution flip(0.5);
    for (double &v : t.data)
      v = flip(rng) ? -v : v;
    return t;
  }
  /// Values at least 0.15 apart, in random order: no ties for reduce_max.
  HostTensor distinct(std::vector<int64_t> shape) {
    HostTensor t = HostTensor::f32(shape, {});
    std::uniform_real_distribution<double> jitter(-0.05, 0.05);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.data.push_back(0.25 * double(i - t.numElements() / 2) + jitter(rng));
    std::shuffle(t.data.begin(), t.data.end(), rng);
    return t;
  }
  /// `a` moved by 0.2 to 1.5 either way per element: max/min never tie.
  HostTensor apart(const HostTensor &a) {
    HostTensor t = awayFromZero(a.shape);
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] += a.data[i];
    return t;
  }
  HostTensor ints(std::vector<int64_t> shape, int64_t range) {
    HostTensor t = HostTensor::i32(shape, {});
    std::uniform_int_distribution<int64_t> dist(0, range - 1);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.data.push_back(double(dist(rng)));
    return t;
  }
  HostTensor bools(std::vector<int64_t> shape, double pTrue = 0.5) {
    HostTensor t = HostTensor::i1(shape, {});
    std::bernoulli_distribution dist(pTrue);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.data.push_back(dist(rng) ? 1.0 : 0.0);
    return t;
  }

  // Single-op checks ----------------------------------------------------------

  /// Checks the VJP of the one op in `op` (reading %a0, %a1, ... of the types
  /// of `inputs`) against finite differences. Results listed in
  /// `nullAdjoints` get a null adjoint (and weigh nothing in L).
  void checkVjp(const std::string &op, std::vector<HostTensor> inputs,
                std::vector<unsigned> nullAdjoints = {}) {
    SCOPED_TRACE(op);
    std::string source = "func.func @forward(";
    for (size_t i = 0; i < inputs.size(); ++i)
      source += (i ? ", %a" : "%a") + std::to_string(i) + ": " + typeString(inputs[i]);
    source += ") {\n  " + op + "\n  return\n}\n";
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    ASSERT_TRUE(module) << source;
    auto forward = module->lookupSymbol<mlir::func::FuncOp>("forward");
    mlir::OpBuilder b(&context);
    mlir::Location loc = b.getUnknownLoc();

    // @forward returns the op's results.
    mlir::Block &body = forward.getBody().front();
    mlir::Operation *target = body.getTerminator()->getPrevNode();
    ASSERT_TRUE(target) << "no op in " << source;
    b.setInsertionPoint(body.getTerminator());
    mlir::Operation *oldReturn = body.getTerminator();
    b.create<mlir::func::ReturnOp>(loc, target->getResults());
    oldReturn->erase();
    forward.setFunctionType(b.getFunctionType(body.getArgumentTypes(), target->getResultTypes()));

    // @vjp(inputs..., cotangents...) returns the adjoint of each float input.
    b.setInsertionPointAfter(forward);
    auto vjp = mlir::cast<mlir::func::FuncOp>(b.clone(*forward));
    vjp.setSymName("vjp");
    mlir::Block &vbody = vjp.getBody().front();
    mlir::Operation *vop = vbody.getTerminator()->getPrevNode();
    auto differentiable = llvm::dyn_cast<tf::GradientOpInterface>(vop);
    ASSERT_TRUE(differentiable) << vop->getName().getStringRef().str()
                                << " has no GradientOpInterface";
    llvm::SmallVector<mlir::Value> resultGrads;
    std::vector<unsigned> weighted; // results with a cotangent
    for (mlir::OpResult r : vop->getResults()) {
      unsigned i = r.getResultNumber();
      if (!isFloatTensor(r.getType()) || llvm::is_contained(nullAdjoints, i)) {
        resultGrads.push_back({});
        continue;
      }
      resultGrads.push_back(vbody.addArgument(r.getType(), loc));
      weighted.push_back(i);
    }
    b.setInsertionPointAfter(vop);
    llvm::SmallVector<mlir::Value> operandGrads;
    ASSERT_TRUE(mlir::succeeded(differentiable.buildGradient(b, resultGrads, operandGrads)));
    ASSERT_EQ(operandGrads.size(), vop->getNumOperands());
    for (auto [operand, grad] : llvm::zip(vop->getOperands(), operandGrads)) {
      if (!isFloatTensor(operand.getType())) {
        EXPECT_FALSE(grad) << "a non-float operand got an adjoint";
      } else if (grad) {
        EXPECT_EQ(grad.getType(), operand.getType());
      }
    }
    // An input used twice (tf.mul %a0, %a0) sums its operands' adjoints.
    llvm::SmallVector<mlir::Value> argGrads;
    std::vector<unsigned> floatInputs;
    for (mlir::BlockArgument arg : vbody.getArguments().take_front(inputs.size())) {
      if (!isFloatTensor(arg.getType()))
        continue;
      floatInputs.push_back(arg.getArgNumber());
      mlir::Value total;
      for (auto [operand, grad] : llvm::zip(vop->getOperands(), operandGrads))
        if (operand == arg && grad)
          total = total ? b.create<tf::AddOp>(loc, total, grad).getResult() : grad;
      if (!total) {
        auto type = mlir::cast<mlir::RankedTensorType>(arg.getType());
        total = b.create<tf::ConstantOp>(
            loc, mlir::DenseElementsAttr::get(type, b.getF32FloatAttr(0.0f)));
      }
      argGrads.push_back(total);
    }
    oldReturn = vbody.getTerminator();
    b.setInsertionPoint(oldReturn);
    b.create<mlir::func::ReturnOp>(loc, argGrads);
    oldReturn->erase();
    llvm::SmallVector<mlir::Type> gradTypes;
    for (mlir::Value v : argGrads)
      gradTypes.push_back(v.getType());
    vjp.setFunctionType(b.getFunctionType(vbody.getArgumentTypes(), gradTypes));
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*module))) << printModule();

    std::vector<HostTensor> cotangents;
    for (unsigned i : weighted)
      cotangents.push_back(normal(HostTensor::zeros(target->getResult(i).getType()).shape));
    std::vector<HostTensor> vjpArgs = inputs;
    vjpArgs.insert(vjpArgs.end(), cotangents.begin(), cotangents.end());
    std::vector<HostTensor> grads = run(vjp, vjpArgs);
    ASSERT_EQ(grads.size(), floatInputs.size()) << printModule();

    auto loss = [&](const std::vector<HostTensor> &x) {
      std::vector<HostTensor> results = run(forward, x);
      double l = 0;
      for (auto [k, i] : llvm::enumerate(weighted))
        l += results.empty() ? NAN : dot(cotangents[k], results[i]);
      return l;
    };
    std::string opName = target->getName().getStringRef().str();
    for (auto [k, input] : llvm::enumerate(floatInputs))
      expectMatchesDifferences(loss, inputs, input, grads[k],
                               opName + " %a" + std::to_string(input));
  }

  /// Checks `grad`, the adjoint of `inputs[input]`, element by element.
  template <typename Loss>
  void expectMatchesDifferences(Loss &loss, std::vector<HostTensor> inputs, unsigned input,
                                const HostTensor &grad, const std::string &name) {
    ASSERT_EQ(grad.shape, inputs[input].shape) << name;
    for (size_t j = 0; j < grad.data.size(); ++j) {
      double x = inputs[input].data[j];
      inputs[input].data[j] = x + kStep;
      double up = loss(inputs);
      inputs[input].data[j] = x - kStep;
      double down = loss(inputs);
      inputs[input].data[j] = x;
      expectClose(grad.data[j], (up - down) / (2 * kStep),
                  ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                      std::string(" ") + name + "[" + std::to_string(j) + "]");
    }
  }

  /// `op` on a float input of `shape` drawn by `draw`.
  template <typename Draw>
  void checkUnary(const std::string &mnemonic, std::vector<int64_t> shape, Draw draw) {
    HostTensor x = draw(shape);
    std::string t = typeString(x);
    checkVjp("%r = " + mnemonic + " %a0 : " + t, {x});
  }

  // Composite checks ----------------------------------------------------------

  /// Differentiates the model in `module` (result 0 is the loss) with
  /// createGradientFunction and checks d loss / d every float argument.
  void checkGradientFunction(mlir::OwningOpRef<mlir::ModuleOp> model) {
    ASSERT_TRUE(model);
    module = std::move(model);
    auto forward = *module->getOps<mlir::func::FuncOp>().begin();
    auto grad = createGradientFunction(forward, "grad");
    ASSERT_TRUE(mlir::succeeded(grad));
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*module))) << printModule();

    std::vector<HostTensor> args;
    std::vector<unsigned> floatArgs;
    int64_t range = smallestIndexBound(forward);
    for (mlir::BlockArgument arg : forward.getArguments()) {
      HostTensor t = HostTensor::zeros(arg.getType());
      if (forward.getArgAttr(arg.getArgNumber(), tf::TFDialect::kSeedAttr))
        t.data[0] = 42;
      else if (t.type == ElementType::f32)
        t = normal(t.shape, 0.5);
      else if (t.type == ElementType::i32)
        t = ints(t.shape, range);
      else
        t = bools(t.shape, 0.7);
      if (t.type == ElementType::f32)
        floatArgs.push_back(arg.getArgNumber());
      args.push_back(std::move(t));
    }
    std::vector<HostTensor> results = run(*grad, args);
    ASSERT_EQ(results.size(), 1 + floatArgs.size());
    auto loss = [&](const std::vector<HostTensor> &x) {
      std::vector<HostTensor> r = run(forward, x);
      return r.empty() ? NAN : r[0].data[0];
    };
    EXPECT_NEAR(results[0].data[0], loss(args), 1e-12) << "the loss itself";
    for (auto [k, arg] : llvm::enumerate(floatArgs)) {
      std::string name = "arg" + std::to_string(arg);
      if (auto param = forward.getArgAttrOfType<mlir::StringAttr>(arg, tf::TFDialect::kParamAttr))
        name = param.str();
      else if (auto input =
                   forward.getArgAttrOfType<mlir::StringAttr>(arg, tf::TFDialect::kInputAttr))
        name = input.str();
      expectMatchesDifferences(loss, args, arg, results[1 + k], name);
    }
  }

  std::string printModule() {
    std::string s;
    llvm::raw_string_ostream os(s);
    module->print(os);
    return s;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::mt19937 rng;
};

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, UnarySmoothOps) {
  auto anyValue = [&](std::vector<int64_t> s) { return normal(s); };
  auto positive = [&](std::vector<int64_t> s) { return uniform(s, 0.3, 2.5); };
  checkUnary("tf.neg", {2, 3}, anyValue);
  checkUnary("tf.exp", {2, 3}, anyValue);
  checkUnary("tf.log", {2, 3}, positive);
  checkUnary("tf.sqrt", {2, 3}, positive);
  checkUnary("tf.rsqrt", {2, 3}, positive);
  checkUnary("tf.tanh", {2, 3}, anyValue);
  checkUnary("tf.sin", {5}, [&](std::vector<int64_t> s) { return uniform(s, -4, 4); });
  checkUnary("tf.cos", {5}, [&](std::vector<int64_t> s) { return uniform(s, -4, 4); });
  checkUnary("tf.erf", {2, 4}, [&](std::vector<int64_t> s) { return uniform(s, -2.5, 2.5); });
}

TEST_F(GradientTest, GeluExactFormAcrossItsRange) {
  HostTensor x = HostTensor::f32({9}, {-4, -2.5, -1, -0.3, 0, 0.2, 1.1, 2.7, 4});
  checkVjp("%r = tf.gelu %a0 : tensor<9xf32>", {x});
  checkUnary("tf.gelu", {3, 4}, [&](std::vector<int64_t> s) { return normal(s, 1.5); });
}

TEST_F(GradientTest, ReluPassesAdjointOnlyWherePositive) {
  checkUnary("tf.relu", {3, 5}, [&](std::vector<int64_t> s) { return awayFromZero(s); });
}

TEST_F(GradientTest, AddSubMulDiv) {
  HostTensor a = normal({2, 3}), b = normal({2, 3});
  checkVjp("%r = tf.add %a0, %a1 : tensor<2x3xf32>", {a, b});
  checkVjp("%r = tf.sub %a0, %a1 : tensor<2x3xf32>", {a, b});
  checkVjp("%r = tf.mul %a0, %a1 : tensor<2x3xf32>", {a, b});
  checkVjp("%r = tf.div %a0, %a1 : tensor<2x3xf32>", {a, awayFromZero({2, 3})});
}

TEST_F(GradientTest, BinaryOpWithOneInputOnBothSides) {
  HostTensor a = awayFromZero({4});
  checkVjp("%r = tf.mul %a0, %a0 : tensor<4xf32>", {a});
  checkVjp("%r = tf.sub %a0, %a0 : tensor<4xf32>", {a});
  checkVjp("%r = tf.div %a0, %a0 : tensor<4xf32>", {a});
}

TEST_F(GradientTest, MaxMinRouteAdjointToTheWinner) {
  HostTensor a = normal({3, 4});
  HostTensor b = apart(a);
  checkVjp("%r = tf.max %a0, %a1 : tensor<3x4xf32>", {a, b});
  checkVjp("%r = tf.min %a0, %a1 : tensor<3x4xf32>", {a, b});
}

TEST_F(GradientTest, SelectSplitsAdjointByCondition) {
  checkVjp("%r = tf.select %a0, %a1, %a2 : tensor<3x4xi1>, tensor<3x4xf32>",
           {bools({3, 4}), normal({3, 4}), normal({3, 4})});
  // Both branches the same input: its adjoint is g everywhere.
  checkVjp("%r = tf.select %a0, %a1, %a1 : tensor<5xi1>, tensor<5xf32>", {bools({5}), normal({5})});
}

TEST_F(GradientTest, CastFloatToFloatIsIdentityAndToIntegerHasNoAdjoint) {
  checkVjp("%r = tf.cast %a0 : tensor<2x3xf32> to tensor<2x3xf32>", {normal({2, 3})});
  // The loss cannot see an integer result: the float input's adjoint is 0.
  checkVjp("%r = tf.cast %a0 : tensor<4xf32> to tensor<4xi32>", {uniform({4}, 0.2, 0.8)});
  checkVjp("%r = tf.cast %a0 : tensor<4xf32> to tensor<4xi1>", {awayFromZero({4})});
  // An integer or boolean operand has no adjoint.
  checkVjp("%r = tf.cast %a0 : tensor<4xi32> to tensor<4xf32>", {ints({4}, 5)});
  checkVjp("%r = tf.cast %a0 : tensor<4xi1> to tensor<4xf32>", {bools({4})});
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, BroadcastInDimSumsOverBroadcastDims) {
  checkVjp("%r = tf.broadcast_in_dim %a0 [1] : tensor<3xf32> to tensor<2x3xf32>", {normal({3})});
  checkVjp("%r = tf.broadcast_in_dim %a0 [0] : tensor<2xf32> to tensor<2x3x4xf32>", {normal({2})});
  checkVjp("%r = tf.broadcast_in_dim %a0 [] : tensor<f32> to tensor<2x3xf32>", {normal({})});
}

TEST_F(GradientTest, BroadcastInDimExpandsSizeOneDims) {
  checkVjp("%r = tf.broadcast_in_dim %a0 [0, 1] : tensor<2x1xf32> to tensor<2x3xf32>",
           {normal({2, 1})});
  checkVjp("%r = tf.broadcast_in_dim %a0 [1, 2] : tensor<1x4xf32> to tensor<2x3x4xf32>",
           {normal({1, 4})});
  // A size-1 dim that stays size 1 is not reduced.
  checkVjp("%r = tf.broadcast_in_dim %a0 [0, 2] : tensor<1x1xf32> to tensor<1x3x5xf32>",
           {normal({1, 1})});
}

TEST_F(GradientTest, ReshapeAndTranspose) {
  checkVjp("%r = tf.reshape %a0 : tensor<2x3x4xf32> to tensor<6x4xf32>", {normal({2, 3, 4})});
  checkVjp("%r = tf.reshape %a0 : tensor<6xf32> to tensor<1x2x3xf32>", {normal({6})});
  checkVjp("%r = tf.transpose %a0 [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>", {normal({2, 3})});
  checkVjp("%r = tf.transpose %a0 [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>",
           {normal({2, 3, 4})});
}

TEST_F(GradientTest, SliceUnitStrideScattersIntoZeros) {
  checkVjp("%r = tf.slice %a0 start [1, 2] limit [3, 5] stride [1, 1] : tensor<4x6xf32> -> "
           "tensor<2x3xf32>",
           {normal({4, 6})});
  checkVjp("%r = tf.slice %a0 start [0, 0] limit [4, 6] stride [1, 1] : tensor<4x6xf32> -> "
           "tensor<4x6xf32>",
           {normal({4, 6})});
}

TEST_F(GradientTest, SliceWithStridesInterleavesZeros) {
  checkVjp("%r = tf.slice %a0 start [1, 0] limit [5, 7] stride [2, 3] : tensor<5x7xf32> -> "
           "tensor<2x3xf32>",
           {normal({5, 7})});
  // The last selected element well before the limit, and a stride larger
  // than what remains.
  checkVjp("%r = tf.slice %a0 start [1] limit [6] stride [2] : tensor<8xf32> -> tensor<3xf32>",
           {normal({8})});
  checkVjp("%r = tf.slice %a0 start [2] limit [7] stride [4] : tensor<7xf32> -> tensor<2xf32>",
           {normal({7})});
  checkVjp("%r = tf.slice %a0 start [0, 1, 1] limit [2, 5, 4] stride [1, 3, 2] : "
           "tensor<2x5x4xf32> -> tensor<2x2x2xf32>",
           {normal({2, 5, 4})});
  // A single element picked by a stride.
  checkVjp("%r = tf.slice %a0 start [3] limit [5] stride [5] : tensor<5xf32> -> tensor<1xf32>",
           {normal({5})});
}

TEST_F(GradientTest, ConcatSlicesAdjointPerInput) {
  checkVjp("%r = tf.concat %a0, %a1, %a2 axis 1 : tensor<2x1xf32>, tensor<2x3xf32>, "
           "tensor<2x2xf32> -> tensor<2x6xf32>",
           {normal({2, 1}), normal({2, 3}), normal({2, 2})});
  checkVjp("%r = tf.concat %a0, %a1 axis 0 : tensor<1x3xf32>, tensor<2x3xf32> -> tensor<3x3xf32>",
           {normal({1, 3}), normal({2, 3})});
  checkVjp("%r = tf.concat %a0, %a0 axis 2 : tensor<2x2x2xf32>, tensor<2x2x2xf32> -> "
           "tensor<2x2x4xf32>",
           {normal({2, 2, 2})});
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, ReduceSumAndMeanOverAxes) {
  HostTensor x = normal({2, 3, 4});
  for (std::string op : {"tf.reduce_sum", "tf.reduce_mean"}) {
    checkVjp("%r = " + op + " %a0 [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>", {x});
    checkVjp("%r = " + op + " %a0 [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>", {x});
    checkVjp("%r = " + op + " %a0 [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>", {x});
    checkVjp("%r = " + op + " %a0 [2] : tensor<2x3x4xf32> -> tensor<2x3xf32>", {x});
  }
}

TEST_F(GradientTest, ReduceMaxRoutesAdjointToTheMaximum) {
  HostTensor x = distinct({3, 4, 2});
  checkVjp("%r = tf.reduce_max %a0 [1] : tensor<3x4x2xf32> -> tensor<3x2xf32>", {x});
  checkVjp("%r = tf.reduce_max %a0 [0, 2] : tensor<3x4x2xf32> -> tensor<4xf32>", {x});
  checkVjp("%r = tf.reduce_max %a0 [0, 1, 2] : tensor<3x4x2xf32> -> tensor<f32>", {x});
}

//===----------------------------------------------------------------------===//
// Linear algebra and neural-network ops
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, MatmulEveryTransposeFlag) {
  // C [3, 4] = op(A) op(B) with K = 5.
  checkVjp("%r = tf.matmul %a0, %a1 : tensor<3x5xf32>, tensor<5x4xf32> -> tensor<3x4xf32>",
           {normal({3, 5}), normal({5, 4})});
  checkVjp("%r = tf.matmul %a0, %a1 transpose_rhs : tensor<3x5xf32>, tensor<4x5xf32> -> "
           "tensor<3x4xf32>",
           {normal({3, 5}), normal({4, 5})});
  checkVjp("%r = tf.matmul %a0, %a1 transpose_lhs : tensor<5x3xf32>, tensor<5x4xf32> -> "
           "tensor<3x4xf32>",
           {normal({5, 3}), normal({5, 4})});
  checkVjp("%r = tf.matmul %a0, %a1 transpose_lhs transpose_rhs : tensor<5x3xf32>, "
           "tensor<4x5xf32> -> tensor<3x4xf32>",
           {normal({5, 3}), normal({4, 5})});
}

TEST_F(GradientTest, BatchedMatmulWithTransposeFlags) {
  checkVjp("%r = tf.matmul %a0, %a1 : tensor<2x3x5xf32>, tensor<2x5x4xf32> -> tensor<2x3x4xf32>",
           {normal({2, 3, 5}), normal({2, 5, 4})});
  checkVjp("%r = tf.matmul %a0, %a1 transpose_lhs : tensor<2x2x4x3xf32>, tensor<2x2x4x2xf32> "
           "-> tensor<2x2x3x2xf32>",
           {normal({2, 2, 4, 3}), normal({2, 2, 4, 2})});
  checkVjp("%r = tf.matmul %a0, %a1 transpose_lhs transpose_rhs : tensor<2x4x3xf32>, "
           "tensor<2x2x4xf32> -> tensor<2x3x2xf32>",
           {normal({2, 4, 3}), normal({2, 2, 4})});
  // x^T x: one input on both sides.
  checkVjp("%r = tf.matmul %a0, %a0 transpose_lhs : tensor<4x3xf32>, tensor<4x3xf32> -> "
           "tensor<3x3xf32>",
           {normal({4, 3})});
}

TEST_F(GradientTest, SoftmaxAndLogSoftmaxAlongEachAxis) {
  HostTensor x = normal({2, 3, 4});
  for (std::string op : {"tf.softmax", "tf.log_softmax"})
    for (int axis : {0, 1, 2})
      checkVjp("%r = " + op + " %a0 axis " + std::to_string(axis) + " : tensor<2x3x4xf32>", {x});
  checkVjp("%r = tf.softmax %a0 axis 0 : tensor<5xf32>", {normal({5}, 2.0)});
  checkVjp("%r = tf.log_softmax %a0 axis 0 : tensor<5xf32>", {normal({5}, 2.0)});
}

TEST_F(GradientTest, LayerNormInputScaleAndShift) {
  checkVjp("%r = tf.layer_norm %a0, %a1, %a2 : tensor<3x5xf32>, tensor<5xf32>",
           {normal({3, 5}), normal({5}), normal({5})});
  checkVjp("%r = tf.layer_norm %a0, %a1, %a2 : tensor<2x3x4xf32>, tensor<4xf32>",
           {normal({2, 3, 4}, 2.0), normal({4}), normal({4})});
  checkVjp("%r = tf.layer_norm %a0, %a1, %a2 : tensor<6xf32>, tensor<6xf32>",
           {normal({6}), normal({6}), normal({6})});
  // A large epsilon weighs in the derivative of rstd.
  checkVjp("%r = tf.layer_norm %a0, %a1, %a2 {epsilon = 5.000000e-01 : f32} : tensor<3x4xf32>, "
           "tensor<4xf32>",
           {normal({3, 4}, 0.5), normal({4}), normal({4})});
}

TEST_F(GradientTest, DropoutReusesTheForwardMask) {
  HostTensor seed = HostTensor::i32({}, {42});
  checkVjp("%r = tf.dropout %a0, %a1 rate 2.500000e-01 key 3 training : tensor<4x5xf32>",
           {normal({4, 5}), seed});
  checkVjp("%r = tf.dropout %a0, %a1 rate 5.000000e-01 key 0 training : tensor<2x3x4xf32>",
           {normal({2, 3, 4}), HostTensor::i32({}, {7})});
  // Without `training` it is the identity.
  checkVjp("%r = tf.dropout %a0, %a1 rate 5.000000e-01 key 1 : tensor<6xf32>", {normal({6}), seed});
}

TEST_F(GradientTest, AttentionWithoutMask) {
  checkVjp("%o = tf.attention %a0, %a1, %a2 scale 5.000000e-01 : tensor<3x4xf32>, "
           "tensor<5x4xf32>, tensor<5x2xf32> -> tensor<3x2xf32>",
           {normal({3, 4}), normal({5, 4}), normal({5, 2})});
  checkVjp("%o = tf.attention %a0, %a1, %a2 scale 0.353553385 : tensor<2x2x3x4xf32>, "
           "tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32> -> tensor<2x2x3x4xf32>",
           {normal({2, 2, 3, 4}), normal({2, 2, 3, 4}), normal({2, 2, 3, 4})});
}

TEST_F(GradientTest, AttentionWithMaskIncludingFullyMaskedRow) {
  // Row 2 of batch 0 is fully masked: its weights are uniform and its
  // logits constant, so q gets no adjoint there.
  HostTensor mask = HostTensor::i1(
      {2, 3, 4}, {1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1});
  checkVjp("%o = tf.attention %a0, %a1, %a2 mask %a3 scale 5.000000e-01 : tensor<2x3x2xf32>, "
           "tensor<2x4x2xf32>, tensor<2x4x3xf32>, tensor<2x3x4xi1> -> tensor<2x3x3xf32>",
           {normal({2, 3, 2}), normal({2, 4, 2}), normal({2, 4, 3}), mask});
  checkVjp("%o = tf.attention %a0, %a1, %a2 mask %a3 scale 1.000000e+00 : tensor<4x3xf32>, "
           "tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x4xi1> -> tensor<4x3xf32>",
           {normal({4, 3}), normal({4, 3}), normal({4, 3}),
            HostTensor::i1({4, 4}, {1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1})});
}

TEST_F(GradientTest, AttentionWeightsResultWithAndWithoutAdjoint) {
  const std::string op =
      "%o, %w = tf.attention %a0, %a1, %a2 mask %a3 scale 0.707106769 with_weights : "
      "tensor<2x3x2xf32>, tensor<2x4x2xf32>, tensor<2x4x3xf32>, tensor<2x3x4xi1> -> "
      "tensor<2x3x3xf32>, tensor<2x3x4xf32>";
  std::vector<HostTensor> inputs = {normal({2, 3, 2}), normal({2, 4, 2}), normal({2, 4, 3}),
                                    bools({2, 3, 4}, 0.7)};
  checkVjp(op, inputs);                       // both results reach the loss
  checkVjp(op, inputs, /*nullAdjoints=*/{1}); // only the values
  checkVjp(op, inputs, /*nullAdjoints=*/{0}); // only the weights
  checkVjp("%o, %w = tf.attention %a0, %a1, %a2 scale 5.000000e-01 with_weights : "
           "tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x4xf32> -> tensor<3x4xf32>, "
           "tensor<3x3xf32>",
           {normal({3, 2}), normal({3, 2}), normal({3, 4})});
}

TEST_F(GradientTest, AttentionSelfAttentionOneInputAsQKV) {
  checkVjp("%o = tf.attention %a0, %a0, %a0 scale 5.000000e-01 : tensor<2x3x4xf32>, "
           "tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>",
           {normal({2, 3, 4})});
}

TEST_F(GradientTest, Conv1dEveryPaddingWithAndWithoutBias) {
  // N 2, Cin 3, W 7, Cout 4, K 3; padding 0 .. 4 covers K - 1 - p < 0.
  for (int pad : {0, 1, 2, 4}) {
    int64_t wout = 7 + 2 * pad - 3 + 1;
    std::string out = "tensor<2x4x" + std::to_string(wout) + "xf32>";
    checkVjp("%r = tf.conv1d %a0, %a1, %a2 padding " + std::to_string(pad) +
                 " : tensor<2x3x7xf32>, tensor<4x3x3xf32>, tensor<4xf32> -> " + out,
             {normal({2, 3, 7}), normal({4, 3, 3}), normal({4})});
  }
  checkVjp("%r = tf.conv1d %a0, %a1 padding 1 : tensor<2x3x5xf32>, tensor<2x3x2xf32> -> "
           "tensor<2x2x6xf32>",
           {normal({2, 3, 5}), normal({2, 3, 2})});
}

TEST_F(GradientTest, Conv1dPointwiseAndFullWidthKernels) {
  checkVjp("%r = tf.conv1d %a0, %a1, %a2 padding 0 : tensor<1x2x4xf32>, tensor<3x2x1xf32>, "
           "tensor<3xf32> -> tensor<1x3x4xf32>",
           {normal({1, 2, 4}), normal({3, 2, 1}), normal({3})});
  checkVjp("%r = tf.conv1d %a0, %a1 padding 0 : tensor<2x2x5xf32>, tensor<3x2x5xf32> -> "
           "tensor<2x3x1xf32>",
           {normal({2, 2, 5}), normal({3, 2, 5})});
}

TEST_F(GradientTest, GatherScatterAddsIntoTableRows) {
  // Repeated ids: their rows accumulate.
  checkVjp("%r = tf.gather %a0, %a1 : tensor<6x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>",
           {normal({6, 4}), HostTensor::i32({2, 3}, {1, 5, 1, 0, 1, 5})});
  checkVjp("%r = tf.gather %a0, %a1 : tensor<5x2xf32>, tensor<7xi32> -> tensor<7x2xf32>",
           {normal({5, 2}), ints({7}, 5)});
  checkVjp("%r = tf.gather %a0, %a1 : tensor<3x2xf32>, tensor<i32> -> tensor<2xf32>",
           {normal({3, 2}), HostTensor::i32({}, {2})});
}

TEST_F(GradientTest, GatherOfColumnsScatterAddsIntoTableColumns) {
  // A linear layer's weight [dim, rows] read by ids: repeated ids accumulate
  // into their column.
  checkVjp("%r = tf.gather %a0, %a1 columns : tensor<4x6xf32>, tensor<2x3xi32> -> "
           "tensor<2x3x4xf32>",
           {normal({4, 6}), HostTensor::i32({2, 3}, {1, 5, 1, 0, 1, 5})});
  checkVjp("%r = tf.gather %a0, %a1 columns : tensor<2x3xf32>, tensor<i32> -> tensor<2xf32>",
           {normal({2, 3}), HostTensor::i32({}, {2})});
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, CrossEntropyOnEveryClassAxis) {
  checkVjp("%r = tf.cross_entropy %a0, %a1 axis 1 : tensor<4x5xf32>, tensor<4xi32>",
           {normal({4, 5}), ints({4}, 5)});
  checkVjp("%r = tf.cross_entropy %a0, %a1 axis 1 : tensor<2x5x3xf32>, tensor<2x3xi32>",
           {normal({2, 5, 3}), ints({2, 3}, 5)});
  checkVjp("%r = tf.cross_entropy %a0, %a1 axis 0 : tensor<3x2x2xf32>, tensor<2x2xi32>",
           {normal({3, 2, 2}), ints({2, 2}, 3)});
  checkVjp("%r = tf.cross_entropy %a0, %a1 axis 2 : tensor<2x2x4xf32>, tensor<2x2xi32>",
           {normal({2, 2, 4}, 3.0), ints({2, 2}, 4)});
}

TEST_F(GradientTest, MseBothSides) {
  checkVjp("%r = tf.mse %a0, %a1 : tensor<3x4xf32>", {normal({3, 4}), normal({3, 4})});
  checkVjp("%r = tf.mse %a0, %a1 : tensor<f32>", {normal({}), normal({})});
  checkVjp("%r = tf.mse %a0, %a0 : tensor<5xf32>", {normal({5})});
}

//===----------------------------------------------------------------------===//
// Composites through createGradientFunction
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, CompositeLinearWithMse) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {2, 3, 4});
  Tensor target = b.input("target", DType::f32, {2, 3, 5});
  b.loss(mse(linear(tanh(linear(x, 6)), 5), target));
  checkGradientFunction(b.finish());
}

TEST_F(GradientTest, CompositeLayerNormWithCrossEntropy) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {3, 6});
  Tensor labels = b.input("labels", DType::i32, {3});
  b.loss(cross_entropy(layer_norm(gelu(linear(x, 6))), labels));
  checkGradientFunction(b.finish());
}

// An encoder block with a SwiGLU feed-forward net (silu of one half of
// linear1 times the other half), and silu's value: x * sigmoid(x).
TEST_F(GradientTest, SwiGluFeedForward) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {2, 3, 4});
  Tensor target = b.input("target", DType::f32, {2, 3, 4});
  b.loss(mse(encoder(x, {.heads = 2, .ffn = 6, .activation = Activation::swiglu}), target));
  checkGradientFunction(b.finish());

  Builder values(context, "silu");
  Tensor v = values.input("v", DType::f32, {5});
  values.output("y", silu(v));
  module = values.finish();
  ASSERT_TRUE(module);
  HostTensor in = HostTensor::f32({5}, {-3.0, -0.5, 0.0, 0.7, 4.0});
  std::vector<HostTensor> r = run(*module->getOps<mlir::func::FuncOp>().begin(), {in});
  ASSERT_FALSE(r.empty());
  for (int i = 0; i < 5; ++i) {
    double t = in.data[size_t(i)];
    EXPECT_NEAR(r[0].data[size_t(i)], t / (1 + std::exp(-t)), 1e-12);
  }
}

// x ** k and x ** y (positive x): multiplications for integer k, sqrt and
// rsqrt for +-0.5, exp(k log x) otherwise.
TEST_F(GradientTest, PowersByMultiplicationRootsAndLogarithms) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {2, 3});
  Tensor y = b.input("y", DType::f32, {2, 3});
  Tensor positive = exp(x); // keeps the bases positive
  b.loss(mean(pow(x, 3.0) + pow(positive, -2.0) + pow(positive, 0.5) + pow(positive, 1.7) +
              pow(positive, y)));
  checkGradientFunction(b.finish());
}

// cross_entropy with PyTorch's options, built of log_softmax, one_hot and
// sums: its gradient through the logits and the class weights, with some
// positions ignored (label 1, drawn among the 4 classes), smoothing and
// weights together.
TEST_F(GradientTest, CrossEntropyWithIgnoreIndexSmoothingAndWeights) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {3, 5, 4});
  Tensor labels = b.input("labels", DType::i32, {3, 5});
  Tensor w = b.input("w", DType::f32, {4});
  b.loss(cross_entropy(linear(x, 4), labels,
                       {.ignoreIndex = 1, .labelSmoothing = 0.1, .weight = w * w + 0.5}));
  checkGradientFunction(b.finish());
}

// Its value is PyTorch's: sum_i w_i ((1 - e) nll_i + e smooth_i / C) / sum_i
// w_i over the positions not ignored, smooth_i = -sum_c w_c logp_ic; and 0,
// not NaN, when every position is ignored.
TEST_F(GradientTest, CrossEntropyOptionsValueIsPyTorchs) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {4, 3});
  Tensor labels = b.input("labels", DType::i32, {4});
  Tensor w = b.input("w", DType::f32, {3});
  b.loss(cross_entropy(x, labels, {.ignoreIndex = -100, .labelSmoothing = 0.2, .weight = w}));
  module = b.finish();
  ASSERT_TRUE(module);
  auto forward = *module->getOps<mlir::func::FuncOp>().begin();
  HostTensor logits = normal({4, 3}, 1.0);
  HostTensor weight = HostTensor::f32({3}, {0.5, 2.0, 1.5});
  HostTensor ids = HostTensor::i32({4}, {2, -100, 0, 1});
  std::vector<HostTensor> r = run(forward, {logits, ids, weight});
  ASSERT_FALSE(r.empty());
  double num = 0, den = 0, e = 0.2;
  for (int i = 0; i < 4; ++i) {
    int y = int(ids.data[size_t(i)]);
    if (y == -100)
      continue;
    double m = -INFINITY, z = 0;
    for (int c = 0; c < 3; ++c)
      m = std::max(m, logits.data[size_t(i * 3 + c)]);
    for (int c = 0; c < 3; ++c)
      z += std::exp(logits.data[size_t(i * 3 + c)] - m);
    auto logp = [&](int c) { return logits.data[size_t(i * 3 + c)] - m - std::log(z); };
    double smooth = 0;
    for (int c = 0; c < 3; ++c)
      smooth -= weight.data[size_t(c)] * logp(c);
    num += (1 - e) * weight.data[size_t(y)] * -logp(y) + e * smooth / 3;
    den += weight.data[size_t(y)];
  }
  EXPECT_NEAR(r[0].data[0], num / den, 1e-6);
  HostTensor ignored = HostTensor::i32({4}, {-100, -100, -100, -100});
  r = run(forward, {logits, ignored, weight});
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].data[0], 0.0);
}

TEST_F(GradientTest, CompositeScaledDotProductWeightsInTheLoss) {
  Builder b(context, "model");
  Tensor q = b.input("q", DType::f32, {2, 3, 4});
  Tensor k = b.input("k", DType::f32, {2, 5, 4});
  Tensor v = b.input("v", DType::f32, {2, 5, 2});
  Tensor mask = b.input("mask", DType::boolean, {3, 5});
  Tensor t1 = b.input("t1", DType::f32, {2, 3, 2});
  Tensor t2 = b.input("t2", DType::f32, {2, 3, 5});
  Attention a = scaled_dot_product(q, k, v, mask);
  b.loss(mse(a.values, t1) + mse(a.weights, t2));
  checkGradientFunction(b.finish());
}

TEST_F(GradientTest, CompositeMultiHeadSelfAttentionCausal) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {2, 4, 8});
  Tensor labels = b.input("labels", DType::i32, {2, 4});
  b.loss(cross_entropy(multi_head_attention(x, {.heads = 2, .mask = causal_mask(b, 4)}), labels));
  checkGradientFunction(b.finish());
}

TEST_F(GradientTest, CompositeMultiHeadCrossAttentionWithMask) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {2, 3, 4});
  Tensor memory = b.input("memory", DType::f32, {2, 5, 4});
  Tensor mask = b.input("mask", DType::boolean, {2, 3, 5});
  Tensor target = b.input("target", DType::f32, {2, 3, 4});
  b.loss(mse(multi_head_attention(x, {.heads = 2, .memory = memory, .mask = mask}), target));
  checkGradientFunction(b.finish());
}

TEST_F(GradientTest, CompositeEncoderPostNormWithDropout) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {2, 3, 4});
  Tensor labels = b.input("labels", DType::i32, {2, 3});
  Tensor h = encoder(x, {.layers = 1, .heads = 2, .ffn = 6, .dropout = 0.2});
  b.loss(cross_entropy(linear(h, 3), labels));
  checkGradientFunction(b.finish());
}

TEST_F(GradientTest, CompositeEncoderPreNormTwoLayers) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {1, 3, 4});
  Tensor target = b.input("target", DType::f32, {1, 3, 4});
  Tensor h = encoder(x, {.layers = 2, .heads = 2, .ffn = 4, .norm = NormPlacement::pre});
  b.loss(mse(h, target));
  checkGradientFunction(b.finish());
}

TEST_F(GradientTest, CompositeEncoderDecoderWithEmbeddingAndPositionalEncoding) {
  Builder b(context, "model");
  Tensor src = b.input("src", DType::i32, {2, 3});
  Tensor tgt = b.input("tgt", DType::i32, {2, 4});
  Tensor labels = b.input("labels", DType::i32, {2, 4});
  Tensor pe = positional_encoding(b, 4, 4);
  Tensor memory = encoder(embedding(src, 5, 4) + slice(pe, 0, 0, 3), {.heads = 2, .ffn = 6});
  Tensor h = decoder(embedding(tgt, 5, 4, {.name = "tgt_embedding"}) + pe, memory,
                     {.heads = 2, .ffn = 6, .dropout = 0.1, .mask = causal_mask(b, 4)});
  b.loss(cross_entropy(linear(h, 5), labels));
  checkGradientFunction(b.finish());
}

TEST_F(GradientTest, CompositeConv1dLayers) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {2, 3, 6});
  Tensor target = b.input("target", DType::f32, {2, 2, 6});
  Tensor h = relu(conv1d(x, 4, {.kernel = 3, .padding = 1}));
  h = conv1d(h, 2, {.kernel = 1, .bias = false, .name = "pointwise"});
  b.loss(mse(h, target) + mean(max(h, {2})));
  checkGradientFunction(b.finish());
}

//===----------------------------------------------------------------------===//
// Learnable tensors, tying, initialisers and constants
//===----------------------------------------------------------------------===//

/// The tf.init of the parameter named `name` of the model in `module`.
tf::InitAttr initOf(mlir::ModuleOp module, llvm::StringRef name) {
  auto f = *module.getOps<mlir::func::FuncOp>().begin();
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (auto param = f.getArgAttrOfType<mlir::StringAttr>(i, tf::TFDialect::kParamAttr))
      if (param.getValue() == name)
        return f.getArgAttrOfType<tf::InitAttr>(i, tf::TFDialect::kInitAttr);
  return {};
}

/// The names of the parameters of the model in `module`, in order.
std::vector<std::string> paramNames(mlir::ModuleOp module) {
  auto f = *module.getOps<mlir::func::FuncOp>().begin();
  std::vector<std::string> names;
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (auto param = f.getArgAttrOfType<mlir::StringAttr>(i, tf::TFDialect::kParamAttr))
      names.push_back(param.str());
  return names;
}

// Learnable tensors of rank 0, 2 and 3, used as a scale, a matrix and a
// token prepended along the sequence (a ViT's cls token), named as asked,
// numbered when not, and under their scope.
TEST_F(GradientTest, ParametersOfAnyShapeUsedAnywhere) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {2, 3, 4});
  Tensor target = b.input("target", DType::f32, {2, 4, 4});
  Tensor cls = parameter(b, {1, 1, 4}, {.init = Init::normal(0.02), .name = "cls"});
  Tensor w = parameter(b, {4, 4}, {.init = Init::xavier()});
  Tensor scale;
  {
    Builder::Scope scope(b, "block");
    scale = parameter(b, {}, {.init = Init::ones()});
  }
  Tensor h = concat({broadcast_to(cls, {2, 1, 4}), x}, 1);
  b.loss(mse(tanh(matmul(h, w)) * scale, target));
  checkGradientFunction(b.finish());
  EXPECT_EQ(paramNames(*module), (std::vector<std::string>{"cls", "parameter", "block.parameter"}));
  EXPECT_EQ(initOf(*module, "cls").getKind(), tf::InitKind::normal);
  EXPECT_EQ(initOf(*module, "cls").getScale().convertToDouble(), 0.02);
  EXPECT_EQ(initOf(*module, "parameter").getScale().convertToDouble(), std::sqrt(6.0 / 8.0));
  EXPECT_EQ(initOf(*module, "block.parameter").getKind(), tf::InitKind::ones);
}

// One parameter as an embedding's table, an output projection's weight and
// the right operand of a plain matmul: one argument, whose gradient is the
// sum of what its three uses would get as three parameters.
TEST_F(GradientTest, TiedParameterGetsTheSumOfItsUsesGradients) {
  auto build = [&](bool tied) {
    Builder b(context, "model");
    Tensor ids = b.input("ids", DType::i32, {2, 3});
    Tensor labels = b.input("labels", DType::i32, {2, 3});
    auto table = [&](const char *name) {
      return parameter(b, {5, 4}, {.init = Init::normal(1.0), .name = name});
    };
    Tensor wte = table("wte");
    Tensor h = tanh(embedding(ids, 5, 4, {.table = wte}));
    Tensor logits = linear(h, 5, {.bias = false, .weight = tied ? wte : table("proj")});
    logits = logits + matmul(h, transpose(tied ? wte : table("mat"), {1, 0}));
    b.loss(cross_entropy(logits, labels));
    return b.finish();
  };
  checkGradientFunction(build(true));
  EXPECT_EQ(paramNames(*module), std::vector<std::string>{"wte"});

  // The same values in three parameters: the tied gradient is their sum.
  mlir::OwningOpRef<mlir::ModuleOp> tiedModule = std::move(module);
  mlir::OwningOpRef<mlir::ModuleOp> untiedModule = build(false);
  ASSERT_TRUE(untiedModule);
  EXPECT_EQ(paramNames(*untiedModule), (std::vector<std::string>{"wte", "proj", "mat"}));
  auto gradOf = [&](mlir::ModuleOp m) {
    return createGradientFunction(*m.getOps<mlir::func::FuncOp>().begin(), "grad");
  };
  auto tiedGrad = gradOf(*tiedModule), untiedGrad = gradOf(*untiedModule);
  ASSERT_TRUE(mlir::succeeded(tiedGrad) && mlir::succeeded(untiedGrad));
  HostTensor ids = ints({2, 3}, 5), labels = ints({2, 3}, 5), w = normal({5, 4});
  std::vector<HostTensor> tied = run(*tiedGrad, {ids, labels, w});
  std::vector<HostTensor> untied = run(*untiedGrad, {ids, labels, w, w, w});
  ASSERT_EQ(tied.size(), 2u);   // loss, d wte
  ASSERT_EQ(untied.size(), 4u); // loss, d wte, d proj, d mat
  EXPECT_NEAR(tied[0].data[0], untied[0].data[0], 1e-12);
  for (size_t i = 0; i < w.data.size(); ++i) {
    double sum = untied[1].data[i] + untied[2].data[i] + untied[3].data[i];
    EXPECT_NEAR(tied[1].data[i], sum, 1e-12) << "element " << i;
    EXPECT_NE(untied[2].data[i], 0.0) << "each use contributes";
  }
}

// init: on every layer that owns weight matrices sets theirs, as PyTorch's
// nn.init computes the bound from torch's fan-in and fan-out (a conv's
// kernel is its receptive field); biases and norms keep their defaults.
TEST_F(GradientTest, InitialiserChoiceOnEveryLayer) {
  Builder b(context, "model");
  Tensor ids = b.input("ids", DType::i32, {2, 6});
  Tensor labels = b.input("labels", DType::i32, {2, 6});
  Tensor x = embedding(ids, 7, 4, {.init = Init::uniform(0.5)});
  Tensor c = conv1d(transpose(x, {0, 2, 1}), 4, {.kernel = 3, .padding = 1,
                                                 .init = Init::xavier()});
  x = x + transpose(c, {0, 2, 1});
  x = multi_head_attention(x, {.heads = 2, .init = Init::kaiming()});
  x = encoder(x, {.heads = 2, .ffn = 6, .init = Init::normal(0.3)});
  x = decoder(x, x, {.heads = 2, .ffn = 6, .init = Init::uniform(0.4)});
  b.loss(cross_entropy(linear(x, 7, {.init = Init::normal(0.7)}), labels));
  checkGradientFunction(b.finish());
  auto expectInit = [&](const char *name, tf::InitKind kind, double scale) {
    tf::InitAttr init = initOf(*module, name);
    ASSERT_TRUE(init) << name;
    EXPECT_EQ(init.getKind(), kind) << name;
    EXPECT_DOUBLE_EQ(init.getScale().convertToDouble(), scale) << name;
  };
  using K = tf::InitKind;
  expectInit("embedding.weight", K::uniform, 0.5);
  expectInit("conv1d.weight", K::uniform, std::sqrt(6.0 / (4 * 3 + 4 * 3)));
  expectInit("conv1d.bias", K::uniform, 1.0 / std::sqrt(12.0)); // the default
  expectInit("self_attn.qkv.weight", K::uniform, 1.0 / std::sqrt(4.0));
  expectInit("self_attn.qkv.bias", K::zeros, 0.0);
  expectInit("self_attn.out.weight", K::uniform, 0.5);
  expectInit("encoder.0.self_attn.qkv.weight", K::normal, 0.3);
  expectInit("encoder.0.linear1.weight", K::normal, 0.3);
  expectInit("encoder.0.linear2.weight", K::normal, 0.3);
  expectInit("encoder.0.linear2.bias", K::uniform, 1.0 / std::sqrt(6.0));
  expectInit("encoder.0.norm1.weight", K::ones, 0.0);
  expectInit("decoder.0.cross_attn.q.weight", K::uniform, 0.4);
  expectInit("decoder.0.cross_attn.kv.weight", K::uniform, 0.4);
  expectInit("decoder.0.linear1.weight", K::uniform, 0.4);
  expectInit("linear.weight", K::normal, 0.7);
  expectInit("linear.bias", K::uniform, 0.5);
}

// zeros, ones, full, arange and eye hold their values (run through the
// interpreter), in each dtype they take; a gradient flows through arithmetic
// with them.
TEST_F(GradientTest, ConstantsHoldTheirValuesAndGradientsFlowPastThem) {
  Builder b(context, "model");
  Tensor x = b.input("x", DType::f32, {3, 3});
  b.output("zeros", zeros(b, {2, 2}));
  b.output("ones_i32", ones(b, {3}, DType::i32));
  b.output("full", full(b, {2}, -2.5));
  b.output("full_bool", full(b, {2, 1}, 1, DType::boolean));
  b.output("arange", arange(b, 4));
  b.output("arange_f32", arange(b, -2, 1, DType::f32));
  b.output("eye", eye(b, 3));
  b.output("eye_bool", eye(b, 2, DType::boolean));
  b.output("scalar", full(b, {}, 7));
  module = b.finish();
  ASSERT_TRUE(module);
  auto f = *module->getOps<mlir::func::FuncOp>().begin();
  std::vector<HostTensor> r = run(f, {normal({3, 3})});
  ASSERT_EQ(r.size(), 9u);
  using V = std::vector<double>;
  EXPECT_EQ(r[0].data, V({0, 0, 0, 0}));
  EXPECT_EQ(r[1].data, V({1, 1, 1}));
  EXPECT_EQ(r[1].type, ElementType::i32);
  EXPECT_EQ(r[2].data, V({-2.5, -2.5}));
  EXPECT_EQ(r[3].data, V({1, 1}));
  EXPECT_EQ(r[3].type, ElementType::i1);
  EXPECT_EQ(r[4].data, V({0, 1, 2, 3}));
  EXPECT_EQ(r[4].type, ElementType::i32);
  EXPECT_EQ(r[5].data, V({-2, -1, 0}));
  EXPECT_EQ(r[6].data, V({1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(r[7].data, V({1, 0, 0, 1}));
  EXPECT_EQ(r[8].shape, std::vector<int64_t>{});
  EXPECT_EQ(r[8].data, V({7}));

  Builder g(context, "model");
  Tensor y = g.input("y", DType::f32, {3, 3});
  Tensor shift = to_float(unsqueeze(arange(g, 3), 0));
  g.loss(sum(tanh(matmul(y, eye(g, 3) * 2.0 + full(g, {3, 3}, 0.1)) + shift) * ones(g, {3})));
  checkGradientFunction(g.finish());
}

} // namespace
