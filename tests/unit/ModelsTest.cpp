//===- ModelsTest.cpp - the seed models build and run through the oracle ---===//
//
// Every C++ model in models/ builds verified IR and evaluates, through the
// reference interpreter, to finite results of the declared shapes; the
// tutorial's properties (permutation equivariance of attention without
// positional encoding, its scaled dot-product example) hold through the DSL.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"
#include "compiler/dsl/ModelRegistry.h"
#include "compiler/interpreter/Interpreter.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tfc;

namespace {

std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

mlir::func::FuncOp modelFunction(mlir::ModuleOp module) {
  return *module.getOps<mlir::func::FuncOp>().begin();
}

/// Arguments for `func`: parameters drawn from their #tf.init, inputs random
/// (integers in [0, intRange)), the dropout seed fixed.
std::vector<HostTensor> randomArguments(mlir::func::FuncOp func, std::mt19937 &rng,
                                        int64_t intRange) {
  std::vector<HostTensor> args;
  for (mlir::BlockArgument arg : func.getArguments()) {
    HostTensor t = HostTensor::zeros(arg.getType());
    unsigned i = arg.getArgNumber();
    if (auto init = func.getArgAttrOfType<tf::InitAttr>(i, tf::TFDialect::kInitAttr)) {
      double scale = init.getScale().convertToDouble();
      std::uniform_real_distribution<double> uniform(-scale, scale);
      std::normal_distribution<double> normal(0.0, scale);
      for (double &v : t.data)
        switch (init.getKind()) {
        case tf::InitKind::zeros: v = 0; break;
        case tf::InitKind::ones: v = 1; break;
        case tf::InitKind::uniform: v = uniform(rng); break;
        case tf::InitKind::normal: v = normal(rng); break;
        }
    } else if (func.getArgAttr(i, tf::TFDialect::kSeedAttr)) {
      t.data[0] = 42;
    } else if (t.type == ElementType::f32) {
      std::normal_distribution<double> normal;
      for (double &v : t.data)
        v = normal(rng);
    } else {
      std::uniform_int_distribution<int64_t> ints(0, t.type == ElementType::i1 ? 1 : intRange - 1);
      for (double &v : t.data)
        v = double(ints(rng));
    }
    args.push_back(std::move(t));
  }
  return args;
}

/// The smallest label range over the model's integer-consuming ops, so
/// random integer inputs are valid class indices or tokens for all of them.
int64_t integerRange(mlir::func::FuncOp func) {
  int64_t range = 1 << 20;
  func.walk([&](mlir::Operation *op) {
    if (auto oneHot = llvm::dyn_cast<tf::OneHotOp>(op))
      range = std::min(range, oneHot.getDepthAttr().getInt());
    if (auto ce = llvm::dyn_cast<tf::CrossEntropyOp>(op))
      range = std::min(range, mlir::cast<mlir::RankedTensorType>(ce.getLogits().getType())
                                  .getDimSize(ce.getAxisAttr().getInt()));
    if (auto gather = llvm::dyn_cast<tf::GatherOp>(op))
      range = std::min(range, mlir::cast<mlir::RankedTensorType>(gather.getTable().getType())
                                  .getDimSize(0));
  });
  return range;
}

TEST(ModelsTest, EverySeedModelIsRegistered) {
  std::vector<std::string> names;
  for (const ModelDef &m : registeredModels())
    names.push_back(m.name);
  for (const char *expected : {"reverse", "set_anomaly", "fleuret_cnn",
                               "fleuret_attention", "encoder_decoder"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end())
        << "missing model " << expected;
}

TEST(ModelsTest, EveryModelRunsThroughTheInterpreter) {
  auto context = makeContext();
  std::mt19937 rng(1234);
  for (const ModelDef &model : registeredModels()) {
    SCOPED_TRACE(model.name);
    auto module = buildModel(*context, model, /*batch=*/2);
    ASSERT_TRUE(module);
    mlir::func::FuncOp func = modelFunction(*module);
    std::vector<HostTensor> args = randomArguments(func, rng, integerRange(func));
    std::string error;
    auto results = interpret(func, args, &error);
    ASSERT_TRUE(mlir::succeeded(results)) << error;
    ASSERT_EQ(results->size(), func.getNumResults());
    EXPECT_GT(results->size(), 0u);
    for (auto [i, result] : llvm::enumerate(*results)) {
      HostTensor declared = HostTensor::zeros(func.getResultTypes()[i]);
      EXPECT_EQ(result.shape, declared.shape) << "result " << i;
      for (double v : result.data)
        ASSERT_TRUE(std::isfinite(v)) << "result " << i;
    }
  }
}

/// Runs `func` on `args` with the set axis (1) of input `input` permuted.
std::vector<HostTensor> runPermuted(mlir::func::FuncOp func, std::vector<HostTensor> args,
                                    unsigned input, const std::vector<int64_t> &perm) {
  HostTensor &x = args[input];
  int64_t n = x.shape[1], inner = x.numElements() / (x.shape[0] * n);
  HostTensor permuted = x;
  for (int64_t b = 0; b < x.shape[0]; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j)
        permuted.data[(b * n + i) * inner + j] = x.data[(b * n + perm[i]) * inner + j];
  x = permuted;
  std::string error;
  auto results = interpret(func, args, &error);
  EXPECT_TRUE(mlir::succeeded(results)) << error;
  return mlir::succeeded(results) ? *results : std::vector<HostTensor>{};
}

/// result' [b, i, ...] == result [b, perm[i], ...] for a result with the set
/// axis at 1.
void expectPermuted(const HostTensor &original, const HostTensor &permuted,
                    const std::vector<int64_t> &perm, double tol) {
  int64_t n = original.shape[1],
          inner = original.numElements() / (original.shape[0] * n);
  for (int64_t b = 0; b < original.shape[0]; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j)
        ASSERT_NEAR(permuted.data[(b * n + i) * inner + j],
                    original.data[(b * n + perm[i]) * inner + j], tol);
}

// The tutorial: multi-head attention, and so an encoder without positional
// encoding, is permutation-equivariant.
TEST(ModelsTest, EncoderWithoutPositionalEncodingIsPermutationEquivariant) {
  auto context = makeContext();
  Builder b(*context, "set_encoder");
  Tensor x = b.input("x", DType::f32, {2, 5, 16});
  b.output("y", encoder(x, {.layers = 2, .heads = 4, .ffn = 32, .dropout = 0.0,
                            .norm = NormPlacement::post}));
  auto module = b.finish();
  ASSERT_TRUE(module);
  mlir::func::FuncOp func = modelFunction(*module);
  std::mt19937 rng(7);
  std::vector<HostTensor> args = randomArguments(func, rng, 1);
  std::vector<int64_t> identity = {0, 1, 2, 3, 4}, perm = {3, 0, 4, 1, 2};
  std::vector<HostTensor> original = runPermuted(func, args, 0, identity);
  std::vector<HostTensor> permuted = runPermuted(func, args, 0, perm);
  ASSERT_EQ(original.size(), 1u);
  ASSERT_EQ(permuted.size(), 1u);
  expectPermuted(original[0], permuted[0], perm, 1e-9);
  // With positional encoding the property must break: the test can fail.
  Builder withPe(*context, "seq_encoder");
  Tensor y = withPe.input("x", DType::f32, {2, 5, 16});
  withPe.output("y", encoder(y + positional_encoding(withPe, 5, 16),
                             {.layers = 1, .heads = 4, .ffn = 32}));
  auto peModule = withPe.finish();
  ASSERT_TRUE(peModule);
  func = modelFunction(*peModule);
  args = randomArguments(func, rng, 1);
  original = runPermuted(func, args, 0, identity);
  permuted = runPermuted(func, args, 0, perm);
  double maxDiff = 0;
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 16; ++j)
      maxDiff = std::max(maxDiff, std::abs(permuted[0].data[i * 16 + j] -
                                           original[0].data[perm[i] * 16 + j]));
  EXPECT_GT(maxDiff, 1e-3);
}

// The set-anomaly model's logits follow a permutation of the set (eval mode:
// dropout is the identity).
TEST(ModelsTest, SetAnomalyLogitsArePermutationEquivariant) {
  const ModelDef *model = findModel("set_anomaly");
  ASSERT_NE(model, nullptr);
  auto context = makeContext();
  auto module = buildModel(*context, *model, 2, {.training = false});
  ASSERT_TRUE(module);
  mlir::func::FuncOp func = modelFunction(*module);
  unsigned features = 0, logits = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, tf::TFDialect::kInputAttr) &&
        mlir::cast<mlir::RankedTensorType>(func.getArgumentTypes()[i]).getElementType().isF32())
      features = i;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (auto name = func.getResultAttrOfType<mlir::StringAttr>(i, tf::TFDialect::kOutputAttr))
      logits = i;
  std::mt19937 rng(11);
  std::vector<HostTensor> args = randomArguments(func, rng, integerRange(func));
  std::vector<int64_t> identity(10), perm = {9, 3, 0, 7, 1, 8, 2, 6, 4, 5};
  std::iota(identity.begin(), identity.end(), 0);
  std::vector<HostTensor> original = runPermuted(func, args, features, identity);
  std::vector<HostTensor> permuted = runPermuted(func, args, features, perm);
  ASSERT_GT(original.size(), logits);
  expectPermuted(original[logits], permuted[logits], perm, 1e-9);
}

// The tutorial's scaled dot-product example, through the DSL.
TEST(ModelsTest, TutorialScaledDotProductThroughTheDSL) {
  auto context = makeContext();
  Builder b(*context, "sdpa");
  Tensor q = b.input("q", DType::f32, {3, 2});
  Tensor k = b.input("k", DType::f32, {3, 2});
  Tensor v = b.input("v", DType::f32, {3, 2});
  Attention attention = scaled_dot_product(q, k, v);
  b.output("values", attention.values);
  b.output("attention", attention.weights);
  auto module = b.finish();
  ASSERT_TRUE(module);
  std::string error;
  auto r = interpret(
      modelFunction(*module),
      {HostTensor::f32({3, 2}, {0.3367, 0.1288, 0.2345, 0.2303, -1.1229, -0.1863}),
       HostTensor::f32({3, 2}, {2.2082, -0.6380, 0.4617, 0.2674, 0.5349, 0.8094}),
       HostTensor::f32({3, 2}, {1.1103, -1.6898, -0.9890, 0.9580, 1.3221, 0.8172})},
      &error);
  ASSERT_TRUE(mlir::succeeded(r)) << error;
  std::vector<double> values = {0.5698, -0.1520, 0.5379, -0.0265, 0.2246, 0.5556};
  std::vector<double> weights = {0.4028, 0.2886, 0.3086, 0.3538, 0.3069,
                                 0.3393, 0.1303, 0.4630, 0.4067};
  // Inputs printed to 4 decimals: see InterpreterTest for the tolerance.
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR((*r)[0].data[i], values[i], 1.5e-4);
  for (size_t i = 0; i < weights.size(); ++i)
    EXPECT_NEAR((*r)[1].data[i], weights[i], 1.5e-4);
}

// The reverse model's parameters are the tutorial's TransformerPredictor's,
// under tfc's names (PyTorch's nn.TransformerEncoderLayer vocabulary).
TEST(ModelsTest, ReverseParametersMatchTheTutorial) {
  auto context = makeContext();
  auto module = buildModel(*context, *findModel("reverse"));
  ASSERT_TRUE(module);
  mlir::func::FuncOp func = modelFunction(*module);
  std::vector<std::pair<std::string, std::vector<int64_t>>> params;
  int64_t count = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<mlir::StringAttr>(i, tf::TFDialect::kParamAttr)) {
      auto type = mlir::cast<mlir::RankedTensorType>(func.getArgumentTypes()[i]);
      params.push_back({name.str(), std::vector<int64_t>(type.getShape())});
      count += type.getNumElements();
    }
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"input_net.weight", {32, 10}},
      {"input_net.bias", {32}},
      {"encoder.0.self_attn.qkv.weight", {96, 32}},
      {"encoder.0.self_attn.qkv.bias", {96}},
      {"encoder.0.self_attn.out.weight", {32, 32}},
      {"encoder.0.self_attn.out.bias", {32}},
      {"encoder.0.norm1.weight", {32}},
      {"encoder.0.norm1.bias", {32}},
      {"encoder.0.linear1.weight", {64, 32}},
      {"encoder.0.linear1.bias", {64}},
      {"encoder.0.linear2.weight", {32, 64}},
      {"encoder.0.linear2.bias", {32}},
      {"encoder.0.norm2.weight", {32}},
      {"encoder.0.norm2.bias", {32}},
      {"linear.weight", {32, 32}},
      {"linear.bias", {32}},
      {"layer_norm.weight", {32}},
      {"layer_norm.bias", {32}},
      {"output.weight", {10, 32}},
      {"output.bias", {10}}};
  EXPECT_EQ(params, expected);
  // What sum(p.numel() for p in model.parameters()) gives for the tutorial's
  // ReversePredictor(input_dim=10, model_dim=32, num_heads=1, num_layers=1).
  EXPECT_EQ(count, 10346);
}

// The blog's learn_cnn.summary(): 384 + 3 x 20,544 + 321 parameters.
TEST(ModelsTest, FleuretCnnParameterCountMatchesTheBlog) {
  auto context = makeContext();
  auto module = buildModel(*context, *findModel("fleuret_cnn"));
  ASSERT_TRUE(module);
  mlir::func::FuncOp func = modelFunction(*module);
  int64_t count = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, tf::TFDialect::kParamAttr))
      count += mlir::cast<mlir::RankedTensorType>(func.getArgumentTypes()[i]).getNumElements();
  EXPECT_EQ(count, 384 + 3 * 20544 + 321);
}

// Canonicalization (the dialect's folders) never changes a model's results.
TEST(ModelsTest, CanonicalizationPreservesResults) {
  auto context = makeContext();
  std::mt19937 rng(99);
  for (const ModelDef &model : registeredModels()) {
    SCOPED_TRACE(model.name);
    auto module = buildModel(*context, model, /*batch=*/2);
    ASSERT_TRUE(module);
    mlir::func::FuncOp func = modelFunction(*module);
    std::vector<HostTensor> args = randomArguments(func, rng, integerRange(func));
    std::string error;
    auto before = interpret(func, args, &error);
    ASSERT_TRUE(mlir::succeeded(before)) << error;
    mlir::PassManager pm(context.get());
    pm.addPass(mlir::createCanonicalizerPass());
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    auto after = interpret(modelFunction(*module), args, &error);
    ASSERT_TRUE(mlir::succeeded(after)) << error;
    ASSERT_EQ(before->size(), after->size());
    for (size_t i = 0; i < before->size(); ++i)
      EXPECT_EQ((*before)[i].data, (*after)[i].data) << "result " << i;
  }
}

} // namespace
