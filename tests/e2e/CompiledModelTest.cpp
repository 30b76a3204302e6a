//===- CompiledModelTest.cpp - compiled binaries against the interpreter --===//
//
// Each test compiles a .tf model with `tfc` into a native binary, runs its
// command line (init, predict, info), and checks the results against the
// reference interpreter evaluating the same `predict` entry in double
// precision, or against the tutorials' printed numbers.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Registration.h"
#include "compiler/frontend/Parser.h"
#include "compiler/interpreter/Interpreter.h"
#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <sys/stat.h>
#include <sys/wait.h>

using namespace tfc;
using namespace tfc::e2e;
using ::testing::HasSubstr;

namespace {

const std::string kTfc = TFC_BINARY;
const std::string kSource = TFC_SOURCE_DIR;
const std::string kCppModels = TFC_CPP_MODELS_DIR; // tfc_add_model's binaries

/// The predict entry of a .tf model at the tf level, as the compiler builds
/// it before lowering: the function the interpreter runs.
struct PredictEntry {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  std::vector<std::string> argKinds, argNames, resultNames;
};

PredictEntry buildPredict(const std::string &path, const std::string &model, int64_t batch,
                          bool attentionMaps = false) {
  PredictEntry entry;
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  entry.context = std::make_unique<mlir::MLIRContext>(registry);
  entry.context->loadAllAvailableDialects();
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return entry;
  FrontendOptions options;
  options.model = model;
  options.batch = batch;
  options.recordAttention = attentionMaps;
  entry.module = parseTfSource((*file)->getBuffer(), path, *entry.context, options).module;
  if (!entry.module)
    return entry;
  mlir::PassManager pm(entry.context.get());
  pm.addPass(createTfEntryPoints());
  if (failed(pm.run(*entry.module)))
    return entry;
  entry.func = entry.module->lookupSymbol<mlir::func::FuncOp>("predict");
  if (!entry.func)
    return entry;
  auto abi = entry.func->getAttrOfType<mlir::DictionaryAttr>(kAbiAttr);
  for (auto a : mlir::cast<mlir::ArrayAttr>(abi.get("args")).getAsRange<mlir::DictionaryAttr>()) {
    entry.argKinds.push_back(mlir::cast<mlir::StringAttr>(a.get("kind")).str());
    entry.argNames.push_back(mlir::cast<mlir::StringAttr>(a.get("name")).str());
  }
  for (auto r : mlir::cast<mlir::ArrayAttr>(abi.get("results")).getAsRange<mlir::DictionaryAttr>())
    entry.resultNames.push_back(mlir::cast<mlir::StringAttr>(r.get("name")).str());
  return entry;
}

rt::DType dtypeOf(mlir::Type element) {
  if (element.isF32())
    return rt::DType::F32;
  if (element.isInteger(32))
    return rt::DType::I32;
  return rt::DType::Bool;
}

double elementAt(const rt::Tensor &t, int64_t i) {
  switch (t.dtype) {
  case rt::DType::F32:
    return t.f32()[i];
  case rt::DType::I32:
    return t.i32()[i];
  case rt::DType::Bool:
    return t.bytes[size_t(i)];
  }
  return 0;
}

/// Rows [begin, begin + batch) of a batch-leading tensor as an interpreter
/// argument, zero-padded past the end (as predict pads its last batch).
HostTensor chunk(const rt::Tensor &t, int64_t begin, int64_t batch, bool batched) {
  HostTensor h;
  h.type = t.dtype == rt::DType::F32   ? ElementType::f32
           : t.dtype == rt::DType::I32 ? ElementType::i32
                                       : ElementType::i1;
  h.shape = t.shape;
  if (!batched) {
    for (int64_t i = 0; i < t.numel(); ++i)
      h.data.push_back(elementAt(t, i));
    return h;
  }
  h.shape[0] = batch;
  int64_t row = t.shape[0] ? t.numel() / t.shape[0] : 0;
  h.data.assign(size_t(batch * row), 0.0);
  for (int64_t r = 0; r < batch && begin + r < t.shape[0]; ++r)
    for (int64_t j = 0; j < row; ++j)
      h.data[size_t(r * row + j)] = elementAt(t, (begin + r) * row + j);
  return h;
}

/// Random inputs of the entry's types with `samples` rows; integers in
/// [0, 10) (a valid token or class for every model here).
std::map<std::string, rt::Tensor> randomInputs(PredictEntry &entry, int64_t batch,
                                               int64_t samples, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int32_t> token(0, 9);
  std::map<std::string, rt::Tensor> inputs;
  for (size_t i = 0; i < entry.argKinds.size(); ++i) {
    if (entry.argKinds[i] != "input")
      continue;
    auto type = mlir::cast<mlir::RankedTensorType>(entry.func.getArgumentTypes()[i]);
    std::vector<int64_t> shape(type.getShape());
    if (!shape.empty() && shape[0] == batch)
      shape[0] = samples;
    rt::Tensor t(dtypeOf(type.getElementType()), shape);
    for (int64_t e = 0; e < t.numel(); ++e) {
      if (t.dtype == rt::DType::F32)
        t.f32()[e] = normal(rng);
      else if (t.dtype == rt::DType::I32)
        t.i32()[e] = token(rng);
      else
        t.bytes[size_t(e)] = token(rng) < 7;
    }
    inputs[entry.argNames[i]] = std::move(t);
  }
  return inputs;
}

/// max |compiled - reference| / max(1, |reference|) over all elements.
double maxRelativeError(const rt::Tensor &compiled, const std::vector<double> &reference,
                        int64_t offset) {
  double worst = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    double ref = reference[i], got = elementAt(compiled, offset + int64_t(i));
    worst = std::max(worst, std::fabs(got - ref) / std::max(1.0, std::fabs(ref)));
  }
  return worst;
}

struct ModelCase {
  std::string file, model;
  int64_t batch;
  bool attentionMaps = false;
};

std::ostream &operator<<(std::ostream &os, const ModelCase &c) {
  return os << c.model << (c.attentionMaps ? "+attention" : "") << "@" << c.batch;
}

class CompiledVsInterpreter : public ::testing::TestWithParam<ModelCase> {};

// The acceptance test of code generation: every model, random parameters
// and inputs, batch + 1 samples (so predict pads a last partial batch):
// compiled f32 results equal the interpreter's f64 ones within 1e-4.
TEST_P(CompiledVsInterpreter, PredictMatchesTheInterpreter) {
  const ModelCase &c = GetParam();
  std::string dir = makeTempDir("tfc-e2e");
  ASSERT_FALSE(dir.empty());
  std::string source = kSource + "/" + c.file, binary = dir + "/model";
  CommandResult compiled =
      run(kTfc + " compile " + source + " --model " + c.model + " --batch " +
          std::to_string(c.batch) + (c.attentionMaps ? " --attention-maps" : "") + " -o " + binary);
  ASSERT_EQ(compiled.status, 0) << compiled.output;

  CommandResult init = run(binary + " init --seed 7 --out " + dir + "/params.safetensors");
  ASSERT_EQ(init.status, 0) << init.output;

  PredictEntry entry = buildPredict(source, c.model, c.batch, c.attentionMaps);
  ASSERT_TRUE(entry.func);
  int64_t samples = c.batch + 1;
  auto inputs = randomInputs(entry, c.batch, samples, 11);
  std::string inputArgs;
  for (auto &[name, tensor] : inputs) {
    std::string error, path = dir + "/" + name + ".npy";
    ASSERT_TRUE(rt::writeNpy(path, tensor, error)) << error;
    inputArgs += " --input " + name + "=" + path;
  }
  CommandResult predicted = run(binary + " predict --params " + dir + "/params.safetensors" +
                                inputArgs + " --output-dir " + dir + "/out");
  ASSERT_EQ(predicted.status, 0) << predicted.output;

  std::vector<std::pair<std::string, rt::Tensor>> params;
  std::string error;
  ASSERT_TRUE(rt::readSafetensors(dir + "/params.safetensors", params, error)) << error;
  std::map<std::string, const rt::Tensor *> paramByName;
  for (auto &[name, t] : params)
    paramByName[name] = &t;

  std::vector<rt::Tensor> outputs(entry.resultNames.size());
  for (size_t r = 0; r < outputs.size(); ++r) {
    ASSERT_TRUE(rt::readNpy(dir + "/out/" + entry.resultNames[r] + ".npy", outputs[r], error))
        << error;
    EXPECT_EQ(outputs[r].shape[0], samples) << entry.resultNames[r];
  }
  double worst = 0;
  for (int64_t begin = 0; begin < samples; begin += c.batch) {
    std::vector<HostTensor> args;
    for (size_t i = 0; i < entry.argKinds.size(); ++i) {
      if (entry.argKinds[i] == "param") {
        ASSERT_TRUE(paramByName.count(entry.argNames[i])) << entry.argNames[i];
        args.push_back(chunk(*paramByName[entry.argNames[i]], 0, 0, false));
      } else {
        const rt::Tensor &t = inputs[entry.argNames[i]];
        args.push_back(chunk(t, begin, c.batch, !t.shape.empty() && t.shape[0] == samples));
      }
    }
    auto reference = interpret(entry.func, args, &error);
    ASSERT_TRUE(mlir::succeeded(reference)) << error;
    int64_t count = std::min(c.batch, samples - begin);
    for (size_t r = 0; r < outputs.size(); ++r) {
      const HostTensor &ref = (*reference)[r];
      int64_t row = ref.numElements() / c.batch;
      std::vector<double> rows(ref.data.begin(), ref.data.begin() + count * row);
      double error = maxRelativeError(outputs[r], rows, begin * row);
      worst = std::max(worst, error);
      EXPECT_LE(error, 1e-4) << "output '" << entry.resultNames[r] << "', samples from " << begin;
    }
  }
  std::printf("  %s: worst relative error %.2e over %zu outputs\n", c.model.c_str(), worst,
              outputs.size());
}

INSTANTIATE_TEST_SUITE_P(
    Models, CompiledVsInterpreter,
    ::testing::Values(ModelCase{"models/reverse.tf", "reverse", 2},
                      ModelCase{"models/reverse.tf", "reverse", 3, /*attentionMaps=*/true},
                      ModelCase{"models/set_anomaly.tf", "set_anomaly", 2},
                      ModelCase{"models/fleuret_cnn.tf", "fleuret_cnn", 2},
                      ModelCase{"models/fleuret_attention.tf", "fleuret_attention", 2},
                      ModelCase{"models/encoder_decoder.tf", "encoder_decoder", 2},
                      ModelCase{"tests/e2e/ops.tf", "ops", 2}),
    [](const ::testing::TestParamInfo<ModelCase> &info) {
      return info.param.model + (info.param.attentionMaps ? "_attention" : "") + "_batch" +
             std::to_string(info.param.batch);
    });

/// A model compiled once per test, with a scratch directory.
class Compiled : public ::testing::Test {
protected:
  std::string dir, binary;
  bool compile(const std::string &file, const std::string &flags = "") {
    dir = makeTempDir("tfc-e2e");
    binary = dir + "/model";
    CommandResult r = run(kTfc + " compile " + kSource + "/" + file + " " + flags + " -o " + binary);
    EXPECT_EQ(r.status, 0) << r.output;
    return r.status == 0;
  }
  bool write(const std::string &name, const rt::Tensor &t) {
    std::string error;
    bool ok = rt::writeNpy(dir + "/" + name, t, error);
    EXPECT_TRUE(ok) << error;
    return ok;
  }
  rt::Tensor read(const std::string &name) {
    rt::Tensor t;
    std::string error;
    EXPECT_TRUE(rt::readNpy(dir + "/" + name, t, error)) << error;
    return t;
  }
  // predict of `binary` and `other` on the same random parameters (`init
  // --seed paramSeed`) and inputs: every output bitwise identical.
  void expectSamePredictions(const std::string &model, const std::string &other,
                             unsigned paramSeed, unsigned inputSeed) {
    ASSERT_EQ(run(binary + " init --seed " + std::to_string(paramSeed) + " --out " + dir +
                  "/p.safetensors")
                  .status,
              0);
    PredictEntry entry = buildPredict(kSource + "/models/" + model + ".tf", "", 0);
    ASSERT_TRUE(entry.func);
    auto type = mlir::cast<mlir::RankedTensorType>(entry.func.getArgumentTypes()[0]);
    int64_t batch = type.getShape()[0];
    std::string inputArgs;
    for (auto &[name, tensor] : randomInputs(entry, batch, batch, inputSeed)) {
      ASSERT_TRUE(write(name + ".npy", tensor));
      inputArgs += " --input " + name + "=" + dir + "/" + name + ".npy";
    }
    for (const std::string &program : {binary, other}) {
      CommandResult r = run(program + " predict --params " + dir + "/p.safetensors" + inputArgs +
                            " --output-dir " + dir + "/" + (program == binary ? "a" : "b"));
      ASSERT_EQ(r.status, 0) << r.output;
    }
    for (const std::string &output : entry.resultNames) {
      rt::Tensor a = read("a/" + output + ".npy"), b = read("b/" + output + ".npy");
      EXPECT_EQ(a.shape, b.shape);
      EXPECT_TRUE(a.bytes == b.bytes) << output;
    }
  }
};

rt::Tensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  rt::Tensor t(rt::DType::F32, std::move(shape));
  std::copy(values.begin(), values.end(), t.f32());
  return t;
}

// The tutorial's example, printed by the tutorial (inputs to 4 decimals,
// hence the tolerance), through `predict` of a compiled binary.
TEST_F(Compiled, TutorialScaledDotProductThroughPredict) {
  ASSERT_TRUE(compile("tests/e2e/sdpa.tf"));
  ASSERT_TRUE(write("q.npy", f32({3, 2}, {0.3367f, 0.1288f, 0.2345f, 0.2303f, -1.1229f, -0.1863f})));
  ASSERT_TRUE(write("k.npy", f32({3, 2}, {2.2082f, -0.6380f, 0.4617f, 0.2674f, 0.5349f, 0.8094f})));
  ASSERT_TRUE(write("v.npy", f32({3, 2}, {1.1103f, -1.6898f, -0.9890f, 0.9580f, 1.3221f, 0.8172f})));
  CommandResult r = run(binary + " predict --input q=" + dir + "/q.npy --input k=" + dir +
                        "/k.npy --input v=" + dir + "/v.npy --output-dir " + dir + "/out");
  ASSERT_EQ(r.status, 0) << r.output;
  rt::Tensor values = read("out/values.npy"), weights = read("out/attention.npy");
  std::vector<float> expectedValues = {0.5698f, -0.1520f, 0.5379f, -0.0265f, 0.2246f, 0.5556f};
  std::vector<float> expectedWeights = {0.4028f, 0.2886f, 0.3086f, 0.3538f, 0.3069f,
                                        0.3393f, 0.1303f, 0.4630f, 0.4067f};
  ASSERT_EQ(values.shape, (std::vector<int64_t>{3, 2}));
  ASSERT_EQ(weights.shape, (std::vector<int64_t>{3, 3}));
  for (size_t i = 0; i < expectedValues.size(); ++i)
    EXPECT_NEAR(values.f32()[i], expectedValues[i], 1.5e-4);
  for (size_t i = 0; i < expectedWeights.size(); ++i)
    EXPECT_NEAR(weights.f32()[i], expectedWeights[i], 1.5e-4);
}

// The set-anomaly model has no positional encoding: permuting the elements
// of each set permutes its per-element outputs, through predict.
TEST_F(Compiled, SetModelIsPermutationEquivariantThroughPredict) {
  ASSERT_TRUE(compile("models/set_anomaly.tf", "--batch 2"));
  ASSERT_EQ(run(binary + " init --seed 3 --out " + dir + "/p.safetensors").status, 0);
  const int64_t sets = 3, elements = 10, features = 512;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  rt::Tensor x(rt::DType::F32, {sets, elements, features});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.f32()[i] = normal(rng);
  std::vector<int64_t> perm = {9, 3, 0, 7, 1, 8, 2, 6, 4, 5};
  rt::Tensor permuted = x;
  for (int64_t s = 0; s < sets; ++s)
    for (int64_t e = 0; e < elements; ++e)
      std::copy_n(x.f32() + (s * elements + perm[size_t(e)]) * features, features,
                  permuted.f32() + (s * elements + e) * features);
  ASSERT_TRUE(write("x.npy", x));
  ASSERT_TRUE(write("xp.npy", permuted));
  for (const char *which : {"x", "xp"}) {
    CommandResult r = run(binary + " predict --params " + dir + "/p.safetensors --input features=" +
                          dir + "/" + which + ".npy --output-dir " + dir + "/" + which);
    ASSERT_EQ(r.status, 0) << r.output;
  }
  rt::Tensor a = read("x/logits.npy"), b = read("xp/logits.npy");
  ASSERT_EQ(a.shape, (std::vector<int64_t>{sets, elements}));
  double worst = 0;
  for (int64_t s = 0; s < sets; ++s)
    for (int64_t e = 0; e < elements; ++e)
      worst = std::max(worst, double(std::fabs(b.f32()[s * elements + e] -
                                                a.f32()[s * elements + perm[size_t(e)]])));
  EXPECT_LE(worst, 1e-5);
}

// Parameters written by `init` follow the safetensors format and load into
// PyTorch by name (where python3 with numpy, and torch, are present).
TEST_F(Compiled, InitWritesParametersPyTorchLoadsByName) {
  ASSERT_TRUE(compile("models/reverse.tf"));
  CommandResult init = run(binary + " init --seed 1 --out " + dir + "/p.safetensors");
  ASSERT_EQ(init.status, 0) << init.output;
  std::string python;
  for (const char *candidate : {"python3", "/usr/bin/python3"})
    if (run(std::string(candidate) + " -c 'import numpy'").status == 0) {
      python = candidate;
      break;
    }
  if (python.empty())
    GTEST_SKIP() << "no python3 with numpy";
  CommandResult check =
      run(python + " " + kSource + "/tests/e2e/reverse_in_pytorch.py " + dir + "/p.safetensors");
  EXPECT_EQ(check.status, 0) << check.output;
}

// Same seed, same parameters (bitwise); another seed, others.
TEST_F(Compiled, InitIsAPureFunctionOfTheSeed) {
  ASSERT_TRUE(compile("models/fleuret_attention.tf", "--batch 2"));
  for (const char *name : {"a", "b", "c"})
    ASSERT_EQ(run(binary + " init --seed " + (std::string(name) == "c" ? "2" : "1") + " --out " +
                  dir + "/" + name + ".safetensors")
                  .status,
              0);
  auto bytes = [&](const char *name) {
    std::ifstream f(dir + "/" + name + ".safetensors", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  EXPECT_EQ(bytes("a"), bytes("b"));
  EXPECT_NE(bytes("a"), bytes("c"));
}

// Every user error: one line naming the problem, exit 1, nothing written.
TEST_F(Compiled, PredictRejectsBadInputsClearly) {
  ASSERT_TRUE(compile("models/reverse.tf", "--batch 4"));
  ASSERT_EQ(run(binary + " init --seed 1 --out " + dir + "/p.safetensors").status, 0);
  rt::Tensor tokens(rt::DType::I32, {5, 16});
  ASSERT_TRUE(write("tokens.npy", tokens));
  ASSERT_TRUE(write("floats.npy", rt::Tensor(rt::DType::F32, {5, 16})));
  ASSERT_TRUE(write("short.npy", rt::Tensor(rt::DType::I32, {5, 15})));
  {
    std::ofstream f(dir + "/garbage.npy");
    f << "not an array";
  }
  std::string out = " --output-dir " + dir + "/out";
  std::string params = " --params " + dir + "/p.safetensors";
  struct Case {
    std::string args, message;
  } cases[] = {
      {params + " --input tokens=" + dir + "/missing.npy", "cannot open"},
      {params + " --input tokens=" + dir + "/floats.npy", "is f32[5, 16]; the model expects i32[N, 16]"},
      {params + " --input tokens=" + dir + "/short.npy", "is i32[5, 15]; the model expects i32[N, 16]"},
      {params + " --input tokens=" + dir + "/garbage.npy", "not a .npy file"},
      {params + " --input labels=" + dir + "/tokens.npy", "predict has no input 'labels'"},
      {params + " --input tokens", "expects NAME=FILE.npy"},
      {" --params " + dir + "/missing.safetensors --input tokens=" + dir + "/tokens.npy", "cannot open"},
  };
  for (const Case &c : cases) {
    CommandResult r = run(binary + " predict" + c.args + out);
    EXPECT_EQ(r.status, 1) << c.args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.message)) << c.args;
  }
  struct stat st;
  EXPECT_NE(stat((dir + "/out").c_str(), &st), 0) << "a failed predict created its output dir";
}

TEST_F(Compiled, ParameterFilesAreChecked) {
  ASSERT_TRUE(compile("models/reverse.tf", "--batch 4"));
  ASSERT_EQ(run(binary + " init --seed 1 --out " + dir + "/p.safetensors").status, 0);
  rt::Tensor tokens(rt::DType::I32, {4, 16});
  ASSERT_TRUE(write("tokens.npy", tokens));
  std::vector<std::pair<std::string, rt::Tensor>> params;
  std::string error;
  ASSERT_TRUE(rt::readSafetensors(dir + "/p.safetensors", params, error)) << error;

  // Missing a name; a wrong shape; a truncated file.
  std::vector<std::pair<std::string, const rt::Tensor *>> missing, reshaped;
  rt::Tensor wrong(rt::DType::F32, {31, 10});
  for (auto &[name, t] : params) {
    if (name != "output.bias")
      missing.push_back({name, &t});
    reshaped.push_back({name, name == "input_net.weight" ? &wrong : &t});
  }
  ASSERT_TRUE(rt::writeSafetensors(dir + "/missing.safetensors", missing, error)) << error;
  ASSERT_TRUE(rt::writeSafetensors(dir + "/reshaped.safetensors", reshaped, error)) << error;
  {
    std::ifstream in(dir + "/p.safetensors", std::ios::binary);
    std::string bytes(std::istreambuf_iterator<char>(in), {});
    std::ofstream(dir + "/truncated.safetensors", std::ios::binary)
        << bytes.substr(0, bytes.size() - 100);
  }
  struct Case {
    std::string file, message;
  } cases[] = {
      {"missing", "has no parameter 'output.bias'"},
      {"reshaped", "parameter 'input_net.weight' in '" + dir +
                       "/reshaped.safetensors' is f32[31, 10]; the model expects f32[32, 10]"},
      {"truncated", "truncated.safetensors"},
  };
  for (const Case &c : cases) {
    CommandResult r = run(binary + " predict --params " + dir + "/" + c.file +
                          ".safetensors --input tokens=" + dir + "/tokens.npy --output-dir " + dir +
                          "/out");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.message));
  }
}

TEST_F(Compiled, InfoDescribesTheModel) {
  ASSERT_TRUE(compile("models/reverse.tf"));
  CommandResult r = run(binary + " info");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("model reverse, compiled for batch 128"));
  EXPECT_THAT(r.output, HasSubstr("tokens                   i32[128, 16]"));
  EXPECT_THAT(r.output, HasSubstr("logits                   f32[128, 16, 10]"));
  EXPECT_THAT(r.output, HasSubstr("encoder.0.self_attn.qkv"));
  EXPECT_THAT(r.output, HasSubstr("10,346"));
  EXPECT_THAT(r.output, HasSubstr("predict: peak of intermediate buffers"));
}

// The C++ twins, built by tfc_add_model, are the same programs as the .tf
// files compiled by tfc: same description, bitwise the same predictions.
// Generated loops and GEMMs share the runtime's pool; every iteration
// writes its own outputs, so the thread count never changes a bit.
TEST_F(Compiled, ThreadCountDoesNotChangeResults) {
  for (const char *model : {"reverse", "set_anomaly", "fleuret_attention"}) {
    SCOPED_TRACE(model);
    std::string file = std::string("models/") + model + ".tf";
    ASSERT_TRUE(compile(file));
    // The test means something only if loops do run on the pool.
    CommandResult llvm = run(kTfc + " compile " + kSource + "/" + file + " --emit=llvm");
    ASSERT_EQ(llvm.status, 0);
    EXPECT_THAT(llvm.output, HasSubstr("call void @tfc_parallel_for"));

    ASSERT_EQ(run(binary + " init --seed 2 --out " + dir + "/p.safetensors").status, 0);
    PredictEntry entry = buildPredict(kSource + "/" + file, "", 0);
    ASSERT_TRUE(entry.func);
    int64_t batch = mlir::cast<mlir::RankedTensorType>(entry.func.getArgumentTypes()[0]).getShape()[0];
    std::string inputArgs;
    for (auto &[name, tensor] : randomInputs(entry, batch, 2 * batch + 1, 9)) {
      ASSERT_TRUE(write(name + ".npy", tensor));
      inputArgs += " --input " + name + "=" + dir + "/" + name + ".npy";
    }
    for (const char *threads : {"1", "2", "3"}) {
      CommandResult r = run(binary + " --threads " + threads + " predict --params " + dir +
                            "/p.safetensors" + inputArgs + " --output-dir " + dir + "/t" + threads);
      ASSERT_EQ(r.status, 0) << r.output;
    }
    for (const std::string &output : entry.resultNames) {
      rt::Tensor one = read("t1/" + output + ".npy");
      for (const char *threads : {"2", "3"}) {
        rt::Tensor many = read(std::string("t") + threads + "/" + output + ".npy");
        EXPECT_EQ(one.shape, many.shape);
        EXPECT_TRUE(one.bytes == many.bytes) << output << " with " << threads << " threads";
      }
    }
  }
  // The flag also follows the command.
  CommandResult after = run(binary + " info --threads 1");
  EXPECT_EQ(after.status, 0) << after.output;
}

// A convolution's bias and relu as its GEMM's epilogue (rows in cache) or
// as loops of their own (--no-gemm-epilogues): the same bits.
TEST_F(Compiled, ConvolutionEpiloguesChangeNoBits) {
  for (const char *model : {"fleuret_cnn", "fleuret_attention"}) {
    SCOPED_TRACE(model);
    const std::string file = std::string("models/") + model + ".tf";
    ASSERT_TRUE(compile(file, "--no-gemm-epilogues"));
    const std::string loops = binary + "-loops";
    ASSERT_EQ(std::rename(binary.c_str(), loops.c_str()), 0);
    ASSERT_TRUE(compile(file)); // (a fresh dir: the loops binary moves into it)
    ASSERT_EQ(std::rename(loops.c_str(), (binary + "-loops").c_str()), 0);
    expectSamePredictions(model, binary + "-loops", 5, 7);
  }
}

TEST_F(Compiled, CppModelsBuildLikeTfFiles) {
  for (const char *model : {"reverse", "set_anomaly", "fleuret_cnn", "fleuret_attention",
                            "encoder_decoder"}) {
    SCOPED_TRACE(model);
    ASSERT_TRUE(compile(std::string("models/") + model + ".tf"));
    std::string twin = kCppModels + "/" + model;
    CommandResult tfInfo = run(binary + " info"), cppInfo = run(twin + " info");
    ASSERT_EQ(cppInfo.status, 0) << cppInfo.output;
    EXPECT_EQ(tfInfo.output, cppInfo.output);
    expectSamePredictions(model, twin, 4, 3);
  }
}

} // namespace
