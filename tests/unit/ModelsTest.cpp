//===- ModelsTest.cpp - the seed models build and run through the oracle ---===//
//
// Every C++ model in models/ builds verified IR and evaluates, through the
// reference interpreter, to finite results of the declared shapes; the
// tutorial's properties (permutation equivariance of attention without
// positional encoding, its scaled dot-product example) hold through the DSL.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Registration.h"
#include "compiler/dsl/ModelRegistry.h"
#include "compiler/interpreter/Interpreter.h"
#include "tests/unit/IndexBounds.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <numeric>
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

TEST(ModelsTest, EverySeedModelIsRegistered) {
  // reverse, set_anomaly, fleuret_cnn, fleuret_attention, encoder_decoder.
  EXPECT_GE(registeredModels().size(), 5u);
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
    std::vector<HostTensor> args = randomArguments(func, rng, smallestIndexBound(func));
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
  std::vector<HostTensor> args = randomArguments(func, rng, smallestIndexBound(func));
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

/// A model's parameters as (name, shape), in argument order.
std::vector<std::pair<std::string, std::vector<int64_t>>>
parameters(mlir::func::FuncOp func) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> params;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<mlir::StringAttr>(i, tf::TFDialect::kParamAttr)) {
      auto type = mlir::cast<mlir::RankedTensorType>(func.getArgumentTypes()[i]);
      params.push_back({name.str(), std::vector<int64_t>(type.getShape())});
    }
  return params;
}

int64_t parameterCount(mlir::func::FuncOp func) {
  int64_t count = 0;
  for (const auto &[name, shape] : parameters(func)) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    count += n;
  }
  return count;
}

// The reverse model's parameters are the tutorial's ReversePredictor's
// (input_dim=10, model_dim=32, num_heads=1, num_layers=1), one for one and
// shape for shape, under tfc's names. The tutorial's qkv_proj output is
// reshaped to [B, T, H, 3 * hd] and chunked, as tfc's qkv, so its weights
// load unchanged.
TEST(ModelsTest, ReverseParametersMatchTheTutorial) {
  auto context = makeContext();
  auto module = buildModel(*context, *findModel("reverse"));
  ASSERT_TRUE(module);
  mlir::func::FuncOp func = modelFunction(*module);
  struct Expected {
    const char *tfc;      // tfc's name, in argument (creation) order
    const char *pytorch;  // the key in the tutorial model's state_dict()
    std::vector<int64_t> shape;
  };
  std::vector<Expected> expected = {
      {"input_net.weight", "input_net.1.weight", {32, 10}},
      {"input_net.bias", "input_net.1.bias", {32}},
      {"encoder.0.self_attn.qkv.weight", "transformer.layers.0.self_attn.qkv_proj.weight", {96, 32}},
      {"encoder.0.self_attn.qkv.bias", "transformer.layers.0.self_attn.qkv_proj.bias", {96}},
      {"encoder.0.self_attn.out.weight", "transformer.layers.0.self_attn.o_proj.weight", {32, 32}},
      {"encoder.0.self_attn.out.bias", "transformer.layers.0.self_attn.o_proj.bias", {32}},
      {"encoder.0.norm1.weight", "transformer.layers.0.norm1.weight", {32}},
      {"encoder.0.norm1.bias", "transformer.layers.0.norm1.bias", {32}},
      {"encoder.0.linear1.weight", "transformer.layers.0.linear_net.0.weight", {64, 32}},
      {"encoder.0.linear1.bias", "transformer.layers.0.linear_net.0.bias", {64}},
      {"encoder.0.linear2.weight", "transformer.layers.0.linear_net.3.weight", {32, 64}},
      {"encoder.0.linear2.bias", "transformer.layers.0.linear_net.3.bias", {32}},
      {"encoder.0.norm2.weight", "transformer.layers.0.norm2.weight", {32}},
      {"encoder.0.norm2.bias", "transformer.layers.0.norm2.bias", {32}},
      {"linear.weight", "output_net.0.weight", {32, 32}},
      {"linear.bias", "output_net.0.bias", {32}},
      {"layer_norm.weight", "output_net.1.weight", {32}},
      {"layer_norm.bias", "output_net.1.bias", {32}},
      {"output.weight", "output_net.4.weight", {10, 32}},
      {"output.bias", "output_net.4.bias", {10}}};
  auto params = parameters(func);
  ASSERT_EQ(params.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].pytorch);
    EXPECT_EQ(params[i].first, expected[i].tfc);
    EXPECT_EQ(params[i].second, expected[i].shape);
  }
  // sum(p.numel() for p in model.parameters()) of the tutorial's model.
  EXPECT_EQ(parameterCount(func), 10346);
}

// Every model's parameter count is its seed's: printed by the blog's
// learn.summary(), or summed over the seed's modules.
TEST(ModelsTest, ParameterCountsMatchTheSeeds) {
  struct Expected {
    const char *model;
    int64_t count;
  };
  std::vector<Expected> expected = {
      // ReversePredictor: Linear(10,32) 352, qkv 3168, o 1056, linear_net
      // 2112 + 2080, norms 128, output_net 1056 + 64 + 330.
      {"reverse", 10346},
      // AnomalyPredictor(input_dim=512, model_dim=256, heads 4, layers 4,
      // num_classes=1): input_net 131,328; per layer qkv 197,376, o 65,792,
      // linear_net 131,584 + 131,328, norms 1,024; output_net 65,792 + 512 + 257.
      {"set_anomaly", 131328 + 4 * 527104 + 66561},
      // The blog: "Total params: 62,337" and "Total params: 58,177".
      {"fleuret_cnn", 62337},
      {"fleuret_attention", 58177},
      // The book's Transformer (d_model 6, ff 10): proj 18; per encoder layer
      // Q/K/V 126, linear_layer 42, ffn 70 + 66, norms 24; per decoder layer
      // two attentions 336, ffn 136, norms 36; a final norm each 12 + 12;
      // linear 14.
      {"encoder_decoder", 18 + 2 * 328 + 12 + 2 * 508 + 12 + 14},
  };
  auto context = makeContext();
  for (const Expected &e : expected) {
    SCOPED_TRACE(e.model);
    const ModelDef *model = findModel(e.model);
    ASSERT_NE(model, nullptr);
    auto module = buildModel(*context, *model);
    ASSERT_TRUE(module);
    EXPECT_EQ(parameterCount(modelFunction(*module)), e.count);
  }
}

// The blog's AttentionLayer: conv_Q, conv_K [96, 64, 1] and conv_V [64, 64, 1],
// no biases, between the second and third 5-wide convolutions.
TEST(ModelsTest, FleuretAttentionLayerIsTheBlogs) {
  auto context = makeContext();
  auto module = buildModel(*context, *findModel("fleuret_attention"));
  ASSERT_TRUE(module);
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"conv1d.weight", {64, 1, 5}},                    // 0
      {"conv1d.bias", {64}},
      {"conv1d_1.weight", {64, 64, 5}},                 // 2
      {"conv1d_1.bias", {64}},
      {"attention_layer.conv1d.weight", {96, 64, 1}},   // 4.conv_Q
      {"attention_layer.conv1d_1.weight", {96, 64, 1}}, // 4.conv_K
      {"attention_layer.conv1d_2.weight", {64, 64, 1}}, // 4.conv_V
      {"conv1d_2.weight", {64, 64, 5}},                 // 6
      {"conv1d_2.bias", {64}},
      {"conv1d_3.weight", {1, 64, 5}},                  // 8
      {"conv1d_3.bias", {1}}};
  EXPECT_EQ(parameters(modelFunction(*module)), expected);
}

// The book's teacher forcing under the causal mask: the decoder reads the
// last source corner and the first target corner, so the prediction never
// sees the second target corner, and its first row never sees the first.
TEST(ModelsTest, EncoderDecoderPredictionIsCausal) {
  auto context = makeContext();
  auto module = buildModel(*context, *findModel("encoder_decoder"), 2, {.training = false});
  ASSERT_TRUE(module);
  mlir::func::FuncOp func = modelFunction(*module);
  unsigned target = 0, prediction = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<mlir::StringAttr>(i, tf::TFDialect::kInputAttr);
        name && name.getValue() == "target")
      target = i;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (func.getResultAttr(i, tf::TFDialect::kOutputAttr))
      prediction = i;
  ASSERT_GT(target, 0u);
  std::mt19937 rng(5);
  std::vector<HostTensor> args = randomArguments(func, rng, 1);
  std::string error;
  auto run = [&](const std::vector<HostTensor> &a) {
    auto r = interpret(func, a, &error);
    EXPECT_TRUE(mlir::succeeded(r)) << error;
    return mlir::succeeded(r) ? (*r)[prediction] : HostTensor{};
  };
  HostTensor base = run(args);
  ASSERT_EQ(base.shape, (std::vector<int64_t>{2, 2, 2}));
  // target [b, point, xy] at flat index (b * 2 + point) * 2 + xy.
  auto perturbed = [&](int64_t point) {
    std::vector<HostTensor> a = args;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t xy = 0; xy < 2; ++xy)
        a[target].data[(b * 2 + point) * 2 + xy] += 0.75;
    return run(a);
  };
  HostTensor second = perturbed(1);
  HostTensor first = perturbed(0);
  double firstRowDiff = 0, secondRowDiff = 0;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t xy = 0; xy < 2; ++xy) {
      int64_t row0 = (b * 2 + 0) * 2 + xy, row1 = (b * 2 + 1) * 2 + xy;
      EXPECT_EQ(second.data[row0], base.data[row0]);
      EXPECT_EQ(second.data[row1], base.data[row1]);
      firstRowDiff = std::max(firstRowDiff, std::abs(first.data[row0] - base.data[row0]));
      secondRowDiff = std::max(secondRowDiff, std::abs(first.data[row1] - base.data[row1]));
    }
  EXPECT_LT(firstRowDiff, 1e-12);
  EXPECT_GT(secondRowDiff, 1e-6);
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
    std::vector<HostTensor> args = randomArguments(func, rng, smallestIndexBound(func));
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

// tf-fuse never changes a result: every entry of every model (the train
// step included: forward, backward, clipping and Adam) gives bit-identical
// results through the interpreter before and after fusion, and fusion did
// happen (so the comparison is not vacuous).
TEST(ModelsTest, FusionPreservesResults) {
  auto context = makeContext();
  std::mt19937 rng(2024);
  for (const ModelDef &model : registeredModels()) {
    SCOPED_TRACE(model.name);
    auto module = buildModel(*context, model, /*batch=*/2);
    ASSERT_TRUE(module);
    mlir::PassManager pm(context.get());
    pm.addPass(createTfAutodiff());
    pm.addPass(createTfEntryPoints());
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    mlir::OwningOpRef<mlir::ModuleOp> fused = module->clone();
    mlir::PassManager fuse(context.get());
    fuse.addPass(createTfFuse());
    ASSERT_TRUE(mlir::succeeded(fuse.run(*fused)));
    int64_t fusions = 0;
    fused->walk([&](tf::FusionOp) { ++fusions; });
    EXPECT_GT(fusions, 0);

    auto entries = module->getOps<mlir::func::FuncOp>();
    auto fusedEntries = fused->getOps<mlir::func::FuncOp>();
    for (auto [before, after] : llvm::zip(entries, fusedEntries)) {
      SCOPED_TRACE(before.getName().str());
      std::vector<HostTensor> args = randomArguments(before, rng, smallestIndexBound(before));
      for (HostTensor &arg : args) // positive: Adam's second moment, the step
        if (arg.type == ElementType::f32)
          for (double &v : arg.data)
            v = std::abs(v);
      std::string error;
      auto expected = interpret(before, args, &error);
      ASSERT_TRUE(mlir::succeeded(expected)) << error;
      auto actual = interpret(after, args, &error);
      ASSERT_TRUE(mlir::succeeded(actual)) << error;
      ASSERT_EQ(expected->size(), actual->size());
      for (size_t i = 0; i < expected->size(); ++i) {
        const std::vector<double> &a = (*expected)[i].data, &b = (*actual)[i].data;
        ASSERT_EQ(a.size(), b.size());
        EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0)
            << "result " << i;
      }
    }
  }
}

} // namespace
