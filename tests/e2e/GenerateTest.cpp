//===- GenerateTest.cpp - generation with a KV cache, against the oracle --===//
//
// A model that declares `generate` gets a prefill and a decode entry. The
// interpreter checks that they compute what predict computes: the decode
// step's logits at each position, fed the caches the prefill and earlier
// steps returned, equal predict's on the whole sequence. Compiled binaries
// (cpu and cuda-emulated) check that `generate` at temperature 0 picks what
// predict's argmax picks, that sampling is a pure function of the seed, and
// that wrong prompts get one clear line.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Registration.h"
#include "compiler/frontend/Parser.h"
#include "compiler/interpreter/Interpreter.h"
#include "runtime/Sampling.h"
#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

using namespace tfc;
using namespace tfc::e2e;
using ::testing::HasSubstr;

namespace {

const std::string kTfc = TFC_BINARY;
const std::string kModels = std::string(TFC_SOURCE_DIR) + "/tests/e2e/";
const std::string kModel = kModels + "tiny_lm.tf";
// Both test models have 8 positions and 16 tokens: tiny_lm (sinusoidal
// positions), tiny_gpt (learned positions by arange, tied output weights).
constexpr int64_t kLength = 8, kVocab = 16;

/// The tiny model's entries at the tf level (batch 1), as the compiler
/// builds them before lowering.
struct Entries {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  mlir::func::FuncOp get(llvm::StringRef name) {
    return module->lookupSymbol<mlir::func::FuncOp>(name);
  }
};

Entries buildEntries(const std::string &path) {
  Entries e;
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  e.context = std::make_unique<mlir::MLIRContext>(registry);
  e.context->loadAllAvailableDialects();
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return e;
  FrontendOptions options;
  options.batch = 1;
  e.module = parseTfSource((*file)->getBuffer(), path, *e.context, options).module;
  if (!e.module)
    return e;
  mlir::PassManager pm(e.context.get());
  pm.addPass(createTfEntryPoints());
  if (failed(pm.run(*e.module)))
    e.module = nullptr;
  return e;
}

/// {kind, name} of each argument or result of an entry.
std::vector<std::pair<std::string, std::string>> abiOf(mlir::func::FuncOp func,
                                                       llvm::StringRef which) {
  std::vector<std::pair<std::string, std::string>> out;
  auto abi = func->getAttrOfType<mlir::DictionaryAttr>(kAbiAttr);
  for (auto a : mlir::cast<mlir::ArrayAttr>(abi.get(which)).getAsRange<mlir::DictionaryAttr>())
    out.emplace_back(mlir::cast<mlir::StringAttr>(a.get("kind")).str(),
                     mlir::cast<mlir::StringAttr>(a.get("name")).str());
  return out;
}

/// Runs `func` with arguments found by kind and name in `values` (a
/// parameter by its name, anything else by "kind:name"); results by
/// "kind:name".
std::map<std::string, HostTensor> call(mlir::func::FuncOp func,
                                       const std::map<std::string, HostTensor> &values) {
  std::vector<HostTensor> args;
  for (auto &[kind, name] : abiOf(func, "args")) {
    auto it = values.find(kind == "param" ? name : kind + ":" + name);
    EXPECT_NE(it, values.end()) << "no value for " << kind << ":" << name;
    if (it == values.end())
      return {};
    args.push_back(it->second);
  }
  std::string error;
  auto results = interpret(func, args, &error);
  EXPECT_TRUE(succeeded(results)) << error;
  std::map<std::string, HostTensor> out;
  if (failed(results))
    return out;
  auto names = abiOf(func, "results");
  for (size_t i = 0; i < names.size(); ++i)
    out[names[i].first + ":" + names[i].second] = (*results)[i];
  return out;
}

class GenerateInterpreter : public ::testing::TestWithParam<std::string> {};

// The oracle: prefill then one decode step a position gives, in double
// precision, the logits predict gives for the whole sequence.
TEST_P(GenerateInterpreter, DecodeStepsEqualPredictOnTheWholeSequence) {
  Entries e = buildEntries(kModels + GetParam() + ".tf");
  ASSERT_TRUE(e.module);
  mlir::func::FuncOp predict = e.get("predict"), prefill = e.get("prefill"),
                     decode = e.get("decode");
  ASSERT_TRUE(predict && prefill && decode);

  // Random parameters (larger than the initialisers', so attention is far
  // from uniform) and a random sequence.
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0.0, 0.5);
  std::uniform_int_distribution<int> token(0, kVocab - 1);
  std::map<std::string, HostTensor> values;
  for (mlir::func::FuncOp f : {predict, prefill, decode}) {
    auto args = abiOf(f, "args");
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].first == "param" && !values.count(args[i].second)) {
        HostTensor t = HostTensor::zeros(f.getArgumentTypes()[i]);
        for (double &x : t.data)
          x = normal(rng);
        values[args[i].second] = t;
      }
  }
  std::vector<double> sequence(kLength);
  for (double &t : sequence)
    t = token(rng);

  values["input:tokens"] = HostTensor::i32({1, kLength}, sequence);
  std::map<std::string, HostTensor> whole = call(predict, values);
  ASSERT_TRUE(whole.count("output:logits"));
  const std::vector<double> &expected = whole["output:logits"].data;

  // Prefill three tokens (the rest padding), then decode the others.
  constexpr int64_t kPrompt = 3;
  std::vector<double> padded(kLength, 0.0);
  std::copy(sequence.begin(), sequence.begin() + kPrompt, padded.begin());
  values["input:tokens"] = HostTensor::i32({1, kLength}, padded);
  std::map<std::string, HostTensor> state = call(prefill, values);
  ASSERT_TRUE(state.count("output:logits"));
  for (int64_t p = 0; p < kPrompt; ++p)
    for (int64_t v = 0; v < kVocab; ++v)
      EXPECT_NEAR(state["output:logits"].data[p * kVocab + v], expected[p * kVocab + v], 1e-9)
          << "prefill, position " << p;
  size_t caches = 0;
  for (auto &[key, value] : state)
    caches += key.rfind("kv_cache:", 0) == 0;
  EXPECT_EQ(caches, 2u * 2u) << "a key and a value cache per layer";

  for (int64_t p = kPrompt; p < kLength; ++p) {
    std::map<std::string, HostTensor> feeds = values;
    for (auto &[key, value] : state)
      if (key.rfind("kv_cache:", 0) == 0)
        feeds[key] = value;
    feeds["input:tokens"] = HostTensor::i32({1, 1}, {sequence[p]});
    feeds["position:position"] = HostTensor::i32({}, {double(p)});
    state = call(decode, feeds);
    ASSERT_TRUE(state.count("output:logits"));
    for (int64_t v = 0; v < kVocab; ++v)
      EXPECT_NEAR(state["output:logits"].data[v], expected[p * kVocab + v], 1e-9)
          << "decode, position " << p;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GenerateInterpreter, ::testing::Values("tiny_lm", "tiny_gpt"));

TEST(GenerateSampling, TemperatureAndTopK) {
  const float logits[4] = {0.0f, std::log(2.0f), -1.0f, std::log(2.0f)};
  // Greedy: the largest, the first of a tie.
  EXPECT_EQ(rt::sampleToken(logits, 4, 0.0, 0, 0.99), 1);
  // Top-1 is greedy whatever the draw.
  EXPECT_EQ(rt::sampleToken(logits, 4, 1.0, 1, 0.99), 1);
  // Top-3 at temperature 1: weights 2, 2, 1 for tokens 1, 3, 0 (cumulative
  // 0.4, 0.8, 1): the draw picks by its interval.
  EXPECT_EQ(rt::sampleToken(logits, 4, 1.0, 3, 0.39), 1);
  EXPECT_EQ(rt::sampleToken(logits, 4, 1.0, 3, 0.41), 3);
  EXPECT_EQ(rt::sampleToken(logits, 4, 1.0, 3, 0.81), 0);
  // Draws are a pure function of (seed, step), in [0, 1).
  EXPECT_EQ(rt::sampleUniform(5, 9), rt::sampleUniform(5, 9));
  EXPECT_NE(rt::sampleUniform(5, 9), rt::sampleUniform(5, 10));
  EXPECT_NE(rt::sampleUniform(5, 9), rt::sampleUniform(6, 9));
  for (uint64_t step = 0; step < 1000; ++step) {
    double u = rt::sampleUniform(1, step);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

/// Every token `generate --output` wrote.
std::vector<int32_t> readTokens(const std::string &path) {
  rt::Tensor t;
  std::string error;
  EXPECT_TRUE(rt::readNpy(path, t, error)) << error;
  return std::vector<int32_t>(t.i32(), t.i32() + t.numel());
}

struct CompiledCase {
  std::string model, target;
};

class CompiledGenerate : public ::testing::TestWithParam<CompiledCase> {};

// Greedy generation with the cache picks, at every position, the argmax of
// predict's logits over the generated sequence; sampling depends on the
// seed alone.
TEST_P(CompiledGenerate, GreedyEqualsPredictsArgmaxAndSamplingIsSeeded) {
  std::string dir = makeTempDir("tfc-generate");
  ASSERT_FALSE(dir.empty());
  const CompiledCase &c = GetParam();
  std::string binary = dir + "/" + c.model;
  CommandResult compiled = run(kTfc + " compile " + kModels + c.model + ".tf --target=" +
                               c.target + " -o " + binary);
  ASSERT_EQ(compiled.status, 0) << compiled.output;
  CommandResult init = run(binary + " init --seed 4 --out " + dir + "/p.safetensors");
  ASSERT_EQ(init.status, 0) << init.output;

  rt::Tensor prompt(rt::DType::I32, {2});
  prompt.i32()[0] = 5;
  prompt.i32()[1] = 9;
  std::string error;
  ASSERT_TRUE(rt::writeNpy(dir + "/prompt.npy", prompt, error)) << error;
  std::string common = binary + " generate --params " + dir + "/p.safetensors --prompt-npy " +
                       dir + "/prompt.npy ";
  CommandResult greedy =
      run(common + "--temperature 0 --max-new-tokens 20 --output " + dir + "/greedy.npy");
  ASSERT_EQ(greedy.status, 0) << greedy.output;
  EXPECT_THAT(greedy.output, HasSubstr("generated 7 tokens"));
  EXPECT_THAT(greedy.output, HasSubstr("stopped at the model's sequence length, 8 tokens"));
  std::vector<int32_t> tokens = readTokens(dir + "/greedy.npy");
  ASSERT_EQ(tokens.size(), 9u); // the prompt, then positions 2 to 8
  EXPECT_EQ(tokens[0], 5);
  EXPECT_EQ(tokens[1], 9);

  // predict on the first 8 tokens, in every row of its batch of 4.
  rt::Tensor batch(rt::DType::I32, {4, kLength});
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t t = 0; t < kLength; ++t)
      batch.i32()[r * kLength + t] = tokens[t];
  ASSERT_TRUE(rt::writeNpy(dir + "/sequence.npy", batch, error)) << error;
  CommandResult predicted = run(binary + " predict --params " + dir +
                                "/p.safetensors --input tokens=" + dir +
                                "/sequence.npy --output-dir " + dir + "/out");
  ASSERT_EQ(predicted.status, 0) << predicted.output;
  rt::Tensor logits;
  ASSERT_TRUE(rt::readNpy(dir + "/out/logits.npy", logits, error)) << error;
  for (int64_t p = 1; p < kLength; ++p) {
    const float *row = logits.f32() + p * kVocab;
    EXPECT_EQ(rt::sampleToken(row, kVocab, 0.0, 0, 0.0), tokens[p + 1]) << "position " << p;
  }

  CommandResult a = run(common + "--seed 3 --output " + dir + "/a.npy");
  CommandResult b = run(common + "--seed 3 --output " + dir + "/b.npy");
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(readTokens(dir + "/a.npy"), readTokens(dir + "/b.npy"));
}

INSTANTIATE_TEST_SUITE_P(Targets, CompiledGenerate,
                         ::testing::Values(CompiledCase{"tiny_lm", "cpu"},
                                           CompiledCase{"tiny_lm", "cuda-emulated"},
                                           CompiledCase{"tiny_gpt", "cpu"}),
                         [](const auto &info) {
                           std::string name = info.param.model + "_" + info.param.target;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(CompiledGenerateErrors, OneLineForEachMistake) {
  std::string dir = makeTempDir("tfc-generate-errors");
  ASSERT_FALSE(dir.empty());
  std::string binary = dir + "/tiny_lm";
  CommandResult compiled = run(kTfc + " compile " + kModel + " -o " + binary);
  ASSERT_EQ(compiled.status, 0) << compiled.output;

  CommandResult noPrompt = run(binary + " generate");
  EXPECT_EQ(noPrompt.status, 1);
  EXPECT_THAT(noPrompt.output, HasSubstr("error: give the prompt: --prompt TEXT or --prompt-npy"));
  // Byte 'A' (65) is not among the 16 tokens.
  CommandResult text = run(binary + " generate --prompt A");
  EXPECT_EQ(text.status, 1);
  EXPECT_THAT(text.output, HasSubstr("error: --prompt: byte 0x41 is not a token of model "
                                     "'tiny_lm' (its tokens are 0 to 15)"));
  rt::Tensor tooLong(rt::DType::I32, {9});
  std::string error;
  ASSERT_TRUE(rt::writeNpy(dir + "/long.npy", tooLong, error)) << error;
  CommandResult longPrompt = run(binary + " generate --prompt-npy " + dir + "/long.npy");
  EXPECT_EQ(longPrompt.status, 1);
  EXPECT_THAT(longPrompt.output,
              HasSubstr("error: the prompt has 9 tokens; model 'tiny_lm' reads at most 8"));
  rt::Tensor outOfRange(rt::DType::I32, {2});
  outOfRange.i32()[1] = 16;
  ASSERT_TRUE(rt::writeNpy(dir + "/range.npy", outOfRange, error)) << error;
  CommandResult range = run(binary + " generate --prompt-npy " + dir + "/range.npy");
  EXPECT_EQ(range.status, 1);
  EXPECT_THAT(range.output, HasSubstr("token 1 is 16, not an id of model 'tiny_lm' (0 to 15)"));
  CommandResult temperature = run(binary + " generate --prompt-npy " + dir +
                                  "/range.npy --temperature -1");
  EXPECT_EQ(temperature.status, 2);

  // A model without `generate` says how to declare it.
  std::string reverse = dir + "/reverse";
  CommandResult plain =
      run(kTfc + " compile " + std::string(TFC_SOURCE_DIR) + "/models/reverse.tf -o " + reverse);
  ASSERT_EQ(plain.status, 0) << plain.output;
  CommandResult none = run(reverse + " generate --prompt-npy " + dir + "/range.npy");
  EXPECT_EQ(none.status, 1);
  EXPECT_THAT(none.output, HasSubstr("error: model 'reverse' does not generate: its model block "
                                     "declares no `generate LOGITS from TOKENS`"));
}

} // namespace
