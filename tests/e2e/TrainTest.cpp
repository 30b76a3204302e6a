//===- TrainTest.cpp - compiled training against the interpreter ----------===//
//
// The compiled `train_step` of every model is run once (`MODEL run
// train_step`) and compared with the reference interpreter evaluating the
// same tf function in double precision: loss, metrics, the updated
// parameters and optimizer state (hence the gradients). Then short training
// runs check determinism, exact resumption, checkpoints, evaluation and the
// stop on a non-finite loss.
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
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sys/wait.h>
#include <unistd.h>

using namespace tfc;
using namespace tfc::e2e;
using ::testing::HasSubstr;

namespace {

const std::string kTfc = TFC_BINARY;
const std::string kSource = TFC_SOURCE_DIR;


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

HostTensor toHost(const rt::Tensor &t) {
  HostTensor h;
  h.type = t.dtype == rt::DType::F32   ? ElementType::f32
           : t.dtype == rt::DType::I32 ? ElementType::i32
                                       : ElementType::i1;
  h.shape = t.shape;
  for (int64_t i = 0; i < t.numel(); ++i)
    h.data.push_back(elementAt(t, i));
  return h;
}

rt::DType dtypeOf(mlir::Type element) {
  if (element.isF32())
    return rt::DType::F32;
  if (element.isInteger(32))
    return rt::DType::I32;
  return rt::DType::Bool;
}

/// The train_step of a .tf model at the tf level, as tfc builds it.
struct TrainStepEntry {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  std::vector<std::string> argKinds, argNames, resultKinds, resultNames;
};

TrainStepEntry buildTrainStep(const std::string &path, int64_t batch) {
  TrainStepEntry entry;
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  entry.context = std::make_unique<mlir::MLIRContext>(registry);
  entry.context->loadAllAvailableDialects();
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return entry;
  FrontendOptions options;
  options.batch = batch;
  entry.module = parseTfSource((*file)->getBuffer(), path, *entry.context, options).module;
  if (!entry.module)
    return entry;
  mlir::PassManager pm(entry.context.get());
  pm.addPass(createTfAutodiff());
  pm.addPass(createTfEntryPoints());
  if (failed(pm.run(*entry.module)))
    return entry;
  entry.func = entry.module->lookupSymbol<mlir::func::FuncOp>("train_step");
  if (!entry.func)
    return entry;
  auto abi = entry.func->getAttrOfType<mlir::DictionaryAttr>(kAbiAttr);
  for (auto [list, kinds, names] :
       {std::tuple{"args", &entry.argKinds, &entry.argNames},
        std::tuple{"results", &entry.resultKinds, &entry.resultNames}})
    for (auto a : mlir::cast<mlir::ArrayAttr>(abi.get(list)).getAsRange<mlir::DictionaryAttr>()) {
      kinds->push_back(mlir::cast<mlir::StringAttr>(a.get("kind")).str());
      names->push_back(mlir::cast<mlir::StringAttr>(a.get("name")).str());
    }
  return entry;
}

class TrainStepVsInterpreter : public ::testing::TestWithParam<std::string> {};

// One compiled step from a mid-training state (random moments, step 5,
// dropout on) equals the interpreter's step: the loss, the metrics, every
// updated parameter and optimizer buffer. Adam's first moment after the step
// is 0.9 m + 0.1 g, so the gradients are checked through it.
TEST_P(TrainStepVsInterpreter, OneStepMatchesTheInterpreter) {
  const std::string model = GetParam();
  const int64_t batch = 2;
  std::string dir = makeTempDir("tfc-train"), source = kSource + "/models/" + model + ".tf";
  ASSERT_FALSE(dir.empty());
  std::string binary = dir + "/model";
  CommandResult compiled = run(kTfc + " compile " + source + " --batch 2 -o " + binary);
  ASSERT_EQ(compiled.status, 0) << compiled.output;
  ASSERT_EQ(run(binary + " init --seed 7 --out " + dir + "/p.safetensors").status, 0);

  TrainStepEntry entry = buildTrainStep(source, batch);
  ASSERT_TRUE(entry.func) << "no train_step for " << model;
  std::vector<std::pair<std::string, rt::Tensor>> params;
  std::string error;
  ASSERT_TRUE(rt::readSafetensors(dir + "/p.safetensors", params, error)) << error;
  std::map<std::string, rt::Tensor *> paramByName;
  for (auto &[name, t] : params)
    paramByName[name] = &t;

  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_real_distribution<float> uniform(0.f, 1.f);
  std::vector<HostTensor> args;
  std::map<std::string, rt::Tensor> exp_avg; // the first moments fed in
  std::string feeds;
  for (size_t i = 0; i < entry.argKinds.size(); ++i) {
    const std::string &kind = entry.argKinds[i], &name = entry.argNames[i];
    auto type = mlir::cast<mlir::RankedTensorType>(entry.func.getArgumentTypes()[i]);
    rt::Tensor t(dtypeOf(type.getElementType()), std::vector<int64_t>(type.getShape()));
    if (kind == "param") {
      ASSERT_TRUE(paramByName.count(name)) << name;
      args.push_back(toHost(*paramByName[name]));
      continue;
    }
    for (int64_t e = 0; e < t.numel(); ++e) {
      if (kind == "input" && t.dtype == rt::DType::F32)
        t.f32()[e] = normal(rng);
      else if (kind == "input" && t.dtype == rt::DType::I32)
        t.i32()[e] = int32_t(uniform(rng) * 10) % 10; // a valid token or class everywhere
      else if (kind == "state" && name.size() > 10 && name.substr(name.size() - 10) == "exp_avg_sq")
        t.f32()[e] = 1e-6f + 1e-4f * uniform(rng);
      else if (kind == "state")
        t.f32()[e] = 1e-3f * normal(rng);
    }
    if (kind == "step")
      t.f32()[0] = 5;
    else if (kind == "hyper" && name == "lr")
      t.f32()[0] = 1e-3f;
    else if (kind == "hyper" && name == "total_steps")
      t.f32()[0] = 100;
    else if (kind == "seed")
      t.i32()[0] = 3;
    if (kind == "state" && name.size() > 8 && name.substr(name.size() - 8) == ".exp_avg")
      exp_avg[name] = t;
    std::string path = dir + "/" + kind + "." + name + ".npy";
    ASSERT_TRUE(rt::writeNpy(path, t, error)) << error;
    feeds += " --feed " + kind + ":" + name + "=" + path;
    args.push_back(toHost(t));
  }
  CommandResult ran = run(binary + " run train_step --params " + dir + "/p.safetensors" + feeds +
                          " --output-dir " + dir + "/out");
  ASSERT_EQ(ran.status, 0) << ran.output;
  auto reference = interpret(entry.func, args, &error);
  ASSERT_TRUE(mlir::succeeded(reference)) << error;

  // Gradients recovered from Adam's first moments, compiled and reference.
  struct Gradient {
    std::string name;
    std::vector<double> got, ref;
  };
  std::vector<Gradient> gradients;
  double worst = 0;
  for (size_t r = 0; r < entry.resultNames.size(); ++r) {
    const std::string &kind = entry.resultKinds[r], &name = entry.resultNames[r];
    rt::Tensor got;
    ASSERT_TRUE(rt::readNpy(dir + "/out/" + kind + "." + name + ".npy", got, error)) << error;
    const HostTensor &ref = (*reference)[r];
    ASSERT_EQ(got.numel(), ref.numElements()) << kind << " " << name;
    double scale = 1e-12;
    for (double v : ref.data)
      scale = std::max(scale, std::fabs(v));
    double err = 0;
    for (int64_t e = 0; e < got.numel(); ++e)
      err = std::max(err, std::fabs(elementAt(got, e) - ref.data[size_t(e)]) / std::max(scale, 1.0));
    EXPECT_LE(err, 1e-4) << kind << " '" << name << "'";
    worst = std::max(worst, err);
    if (kind == "state" && exp_avg.count(name)) {
      // g = (m' - 0.9 m) / 0.1, compiled against reference.
      const rt::Tensor &m = exp_avg[name];
      Gradient g{name, {}, {}};
      for (int64_t e = 0; e < got.numel(); ++e) {
        g.ref.push_back((ref.data[size_t(e)] - 0.9 * m.f32()[e]) / 0.1);
        g.got.push_back((got.f32()[e] - 0.9 * m.f32()[e]) / 0.1);
      }
      gradients.push_back(std::move(g));
    }
  }
  // Each gradient is measured against its own largest entry, but no finer
  // than 1e-4 of the model's largest gradient: a gradient that is zero in
  // exact arithmetic (a bias under a softmax over the biased axis) keeps the
  // f32 rounding of the terms that cancel, which are of the model's scale.
  double modelScale = 0;
  for (const Gradient &g : gradients)
    for (double v : g.ref)
      modelScale = std::max(modelScale, std::fabs(v));
  double worstGrad = 0;
  for (const Gradient &g : gradients) {
    double gScale = 1e-4 * modelScale, gErr = 0;
    for (double v : g.ref)
      gScale = std::max(gScale, std::fabs(v));
    for (size_t e = 0; e < g.ref.size(); ++e)
      gErr = std::max(gErr, std::fabs(g.got[e] - g.ref[e]) / gScale);
    EXPECT_LE(gErr, 2e-3) << "gradient of '" << g.name << "'";
    worstGrad = std::max(worstGrad, gErr);
  }
  std::printf("  %s: worst error %.2e over %zu results; worst gradient error %.2e\n",
              model.c_str(), worst, entry.resultNames.size(), worstGrad);
}

INSTANTIATE_TEST_SUITE_P(Models, TrainStepVsInterpreter,
                         ::testing::Values("reverse", "set_anomaly", "fleuret_cnn",
                                           "fleuret_attention", "encoder_decoder"));

/// The reverse task as .npy arrays (DIR/{train,val,test}/{tokens,labels}.npy).
void writeReverseData(const std::string &dir, int64_t train, int64_t val, int64_t test) {
  std::mt19937 rng(5);
  for (auto [split, n] : {std::pair{"train", train}, std::pair{"val", val}, std::pair{"test", test}}) {
    std::string d = dir + "/" + split;
    ASSERT_EQ(run("mkdir -p " + d).status, 0);
    rt::Tensor tokens(rt::DType::I32, {n, 16}), labels(rt::DType::I32, {n, 16});
    for (int64_t s = 0; s < n; ++s)
      for (int64_t j = 0; j < 16; ++j) {
        tokens.i32()[s * 16 + j] = int32_t(rng() % 10);
      }
    for (int64_t s = 0; s < n; ++s)
      for (int64_t j = 0; j < 16; ++j)
        labels.i32()[s * 16 + j] = tokens.i32()[s * 16 + 15 - j];
    std::string error;
    ASSERT_TRUE(rt::writeNpy(d + "/tokens.npy", tokens, error)) << error;
    ASSERT_TRUE(rt::writeNpy(d + "/labels.npy", labels, error)) << error;
  }
}

class Training : public ::testing::Test {
protected:
  static std::string dir, binary;
  static void SetUpTestSuite() {
    dir = makeTempDir("tfc-train");
    binary = dir + "/reverse";
    CommandResult r = run(kTfc + " compile " + kSource + "/models/reverse.tf -o " + binary);
    ASSERT_EQ(r.status, 0) << r.output;
    writeReverseData(dir + "/data", 1024, 200, 300);
  }
  std::string train(const std::string &runDir, const std::string &flags, int expectStatus = 0,
                    int seed = 3, const std::string &executable = binary) {
    CommandResult r = run(executable + " train --data " + dir + "/data --run-dir " + dir + "/" +
                          runDir + " --seed " + std::to_string(seed) + " " + flags);
    EXPECT_EQ(r.status, expectStatus) << r.output;
    return r.output;
  }
};
std::string Training::dir, Training::binary;

// Same seed, same binary: bitwise identical checkpoints and metrics.
TEST_F(Training, SameSeedGivesBitwiseIdenticalRuns) {
  train("a", "--epochs 2");
  train("b", "--epochs 2");
  for (const char *file : {"last.safetensors", "best.safetensors", "metrics.jsonl"})
    EXPECT_EQ(fileBytes(dir + "/a/" + file), fileBytes(dir + "/b/" + file)) << file;
  train("c", "--epochs 2", 0, /*seed=*/4);
  EXPECT_NE(fileBytes(dir + "/a/last.safetensors"), fileBytes(dir + "/c/last.safetensors"));
}

// LLVM optimises and compiles the module in parts on several threads (the
// entries through a few cleanups with fast instruction selection); however
// it is cut, and with --dump-ir (which also joins the optimised parts into
// llvm-o3.ll), training gives the same bits.
// So does running each GEMM's epilogue as a loop of its own after it
// instead of on its rows as they are finished, and updating each parameter
// in a loop of its own instead of all of them in one pass.
TEST_F(Training, CodegenChoicesChangeNoBits) {
  train("parts-default", "--epochs 1");
  std::string expected = fileBytes(dir + "/parts-default/last.safetensors");
  ASSERT_FALSE(expected.empty());
  std::string source = kSource + "/models/reverse.tf";
  int index = 0;
  for (const std::string &flags : {std::string("-j 1"), std::string("-j 4"),
                                   "--dump-ir=" + dir + "/dumps",
                                   std::string("--no-gemm-epilogues"),
                                   std::string("--no-horizontal-fusion")}) {
    std::string name = "parts-" + std::to_string(index++);
    CommandResult r = run(kTfc + " compile " + source + " -o " + dir + "/" + name + ".exe " + flags);
    ASSERT_EQ(r.status, 0) << r.output;
    train(name, "--epochs 1", 0, 3, dir + "/" + name + ".exe");
    EXPECT_EQ(fileBytes(dir + "/" + name + "/last.safetensors"), expected) << flags;
  }
}

// 1 epoch, stop, resume 1 epoch == 2 epochs straight, bitwise.
TEST_F(Training, ResumeContinuesExactly) {
  train("straight", "--epochs 2");
  std::string first = train("resumed", "--epochs 2 --stop-after 1");
  EXPECT_THAT(first, HasSubstr("--resume"));
  std::string second = train("resumed", "--epochs 2 --resume");
  EXPECT_THAT(second, HasSubstr("resuming"));
  EXPECT_EQ(fileBytes(dir + "/straight/last.safetensors"),
            fileBytes(dir + "/resumed/last.safetensors"));
}

// metrics.jsonl: one JSON object per line with epoch, step, split, loss and
// the model's metric; eval of the best checkpoint prints the val numbers.
TEST_F(Training, MetricsAndEval) {
  std::string out = train("m", "--epochs 2");
  EXPECT_THAT(out, HasSubstr("test (best checkpoint)"));
  // The run's wall time by part: 2 epochs of 1,024 / 128 steps; the parts
  // are each at least 0 and add up to the whole (each rounded to a millisecond).
  std::smatch parts;
  ASSERT_TRUE(std::regex_search(
      out, parts,
      std::regex("time: ([0-9.]+) s: before the first step ([0-9.]+) \\(the dataset ([0-9.]+)\\), "
                 "16 steps ([0-9.]+) \\(the first ([0-9.]+)\\), validation ([0-9.]+), "
                 "checkpoints ([0-9.]+), test ([0-9.]+), the rest ([0-9.]+)\n")))
      << out;
  double total = std::stod(parts[1]), sum = 0;
  for (int i : {2, 4, 6, 7, 8, 9})
    sum += std::stod(parts[i]);
  EXPECT_GT(total, 0.0);
  EXPECT_NEAR(sum, total, 0.004);
  EXPECT_LE(std::stod(parts[3]), std::stod(parts[2])); // the dataset is before the first step
  EXPECT_LE(std::stod(parts[5]), std::stod(parts[4])); // the first step is one of them
  std::ifstream metrics(dir + "/m/metrics.jsonl");
  std::string line;
  int trainLines = 0, valLines = 0, testLines = 0;
  while (std::getline(metrics, line)) {
    EXPECT_THAT(line, HasSubstr("\"epoch\": "));
    EXPECT_THAT(line, HasSubstr("\"step\": "));
    EXPECT_THAT(line, HasSubstr("\"loss\": "));
    EXPECT_THAT(line, HasSubstr("\"accuracy\": "));
    trainLines += line.find("\"split\": \"train\"") != std::string::npos;
    valLines += line.find("\"split\": \"val\"") != std::string::npos;
    testLines += line.find("\"split\": \"test\"") != std::string::npos;
  }
  EXPECT_EQ(trainLines, 2);
  EXPECT_EQ(valLines, 2);
  EXPECT_EQ(testLines, 1);
  CommandResult eval = run(binary + " eval --checkpoint " + dir + "/m/best.safetensors --data " +
                           dir + "/data");
  EXPECT_EQ(eval.status, 0) << eval.output;
  EXPECT_THAT(eval.output, HasSubstr("val (200 samples): loss "));
  EXPECT_THAT(eval.output, HasSubstr("test (300 samples): loss "));
}

// Ctrl-C saves a resumable checkpoint and exits 130.
TEST_F(Training, InterruptSavesAndExits) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string runDir = dir + "/int", data = dir + "/data";
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execl(binary.c_str(), binary.c_str(), "train", "--data", data.c_str(), "--run-dir",
          runDir.c_str(), "--epochs", "1000", nullptr);
    _exit(127);
  }
  // Wait for the first epoch's checkpoint, then interrupt.
  for (int i = 0; i < 600 && fileBytes(dir + "/int/last.safetensors").empty(); ++i)
    usleep(100000);
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  CommandResult resumed = run(binary + " train --data " + dir + "/data --run-dir " + dir +
                              "/int --epochs 1000 --resume --stop-after 1");
  EXPECT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("resuming"));
}

// A non-finite loss stops the run, names the step and saves nothing: the
// first epoch never ended, so no checkpoint exists (RobustnessTest checks
// that one written before is kept, and that none ever holds a NaN).
TEST_F(Training, NonFiniteLossStopsTheRun) {
  std::string out = train("nan", "--epochs 1 --lr 1e30", 1);
  EXPECT_THAT(out, HasSubstr("at step "));
  EXPECT_THAT(out, HasSubstr("stopping without saving"));
  EXPECT_TRUE(fileBytes(dir + "/nan/last.safetensors").empty());
}

// Flags are checked: a batch other than the compiled one is a clear error.
TEST_F(Training, WrongBatchIsAClearError) {
  std::string out = train("bad", "--batch 7", 1);
  EXPECT_THAT(out, HasSubstr("compiled for batch 128"));
}

} // namespace
