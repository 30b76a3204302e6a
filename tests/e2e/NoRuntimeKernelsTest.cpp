//===- NoRuntimeKernelsTest.cpp - generated code against the CPU's kernels -===//
//
// `tfc compile --no-runtime-kernels` builds a CPU binary the way a target
// without the CPU runtime's kernels builds (--target=cuda): attention and
// layer norm decomposed into plain ops, dropout's masks drawn in generated
// code. Its masks must be the runtime's bit for bit (the same Philox stream,
// runtime/Philox.h), and every seed model must predict what the default
// build predicts, within rounding.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

using namespace tfc;
using namespace tfc::e2e;

namespace {

const std::string kTfc = TFC_BINARY;
const std::string kSource = TFC_SOURCE_DIR;

/// Compiles `source` into DIR/NAME with `flags`; the binary's path.
std::string compile(const std::string &dir, const std::string &source, const std::string &name,
                    const std::string &flags) {
  std::string binary = dir + "/" + name;
  CommandResult r = run(kTfc + " compile " + source + " " + flags + " -o " + binary);
  EXPECT_EQ(r.status, 0) << flags << ": " << r.output;
  return binary;
}

// Two steps of training (6 samples, batch 3) on a model whose loss and
// gradients depend on every element of its two dropouts' masks: the
// parameters after them are the same bits whether the CPU runtime's
// tfc_dropout_mask or generated code drew the masks, and differ under
// another seed (so the masks do decide them).
TEST(NoRuntimeKernels, DropoutMasksAreTheRuntimes) {
  std::string dir = makeTempDir("tfc-nokernels");
  ASSERT_FALSE(dir.empty());
  std::string source = kSource + "/tests/e2e/dropout.tf";
  std::string kernels = compile(dir, source, "kernels", "");
  std::string inCode = compile(dir, source, "in-code", "--no-runtime-kernels");
  ASSERT_FALSE(testing::Test::HasFailure());

  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (auto [split, n] : {std::pair{"train", 6}, std::pair{"val", 3}, std::pair{"test", 3}}) {
    ASSERT_EQ(run("mkdir -p " + dir + "/data/" + split).status, 0);
    for (auto [input, width] : {std::pair{"x", 13}, std::pair{"y", 9}}) {
      rt::Tensor t(rt::DType::F32, {n, 5, width});
      for (int64_t e = 0; e < t.numel(); ++e)
        t.f32()[e] = normal(rng);
      std::string error;
      ASSERT_TRUE(rt::writeNpy(dir + "/data/" + split + "/" + input + ".npy", t, error)) << error;
    }
  }
  auto train = [&](const std::string &binary, const std::string &name, int seed) {
    std::string runDir = dir + "/run-" + name;
    CommandResult r = run(binary + " train --epochs 1 --data " + dir + "/data --run-dir " +
                          runDir + " --seed " + std::to_string(seed));
    EXPECT_EQ(r.status, 0) << r.output;
    return fileBytes(runDir + "/last.safetensors");
  };
  std::string expected = train(kernels, "kernels", 3);
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(train(inCode, "in-code", 3) == expected)
      << "the parameters after training differ: generated code drew other masks";
  EXPECT_FALSE(train(inCode, "other-seed", 4) == expected);
}

/// The largest |a - b| of two f32 tensors over the largest |b|.
double relativeError(const rt::Tensor &a, const rt::Tensor &b) {
  double scale = 0, err = 0;
  for (int64_t e = 0; e < b.numel(); ++e)
    scale = std::max(scale, double(std::fabs(b.f32()[e])));
  for (int64_t e = 0; e < b.numel(); ++e)
    err = std::max(err, double(std::fabs(a.f32()[e] - b.f32()[e])));
  return err / std::max(scale, 1e-30);
}

/// A seed model and the inputs its predict reads.
struct SeedModelCase {
  std::string model;
  std::vector<std::string> inputs;
};

class SeedModel : public ::testing::TestWithParam<SeedModelCase> {};

// Every seed model compiles without the runtime's kernels and predicts, on
// the same parameters and a batch of its own data, what the default build
// predicts within 1e-5 of each output's largest magnitude (decomposed
// attention and layer norm round differently; predict has no dropout).
TEST_P(SeedModel, PredictsLikeTheDefaultBuild) {
  const std::string model = GetParam().model;
  std::string dir = makeTempDir("tfc-nokernels-" + model);
  ASSERT_FALSE(dir.empty());
  std::string source = kSource + "/models/" + model + ".tf";
  std::string kernels = compile(dir, source, "kernels", "");
  std::string inCode = compile(dir, source, "in-code", "--no-runtime-kernels");
  ASSERT_FALSE(testing::Test::HasFailure());

  ASSERT_EQ(run("mkdir -p " + dir + "/batch").status, 0);
  CommandResult saved = run(kernels + " bench --steps 1 --warmup 0 --entry predict --save-batch " +
                            dir + "/batch");
  ASSERT_EQ(saved.status, 0) << saved.output;
  CommandResult init = run(kernels + " init --seed 7 --out " + dir + "/p.safetensors");
  ASSERT_EQ(init.status, 0) << init.output;
  std::string inputs;
  for (const std::string &input : GetParam().inputs)
    inputs += " --input " + input + "=" + dir + "/batch/" + input + ".npy";
  for (const auto &[binary, out] : {std::pair{kernels, "a"}, std::pair{inCode, "b"}}) {
    CommandResult r = run(binary + " predict --params " + dir + "/p.safetensors" + inputs +
                          " --output-dir " + dir + "/" + out);
    ASSERT_EQ(r.status, 0) << r.output;
  }
  int outputs = 0;
  for (const auto &file : std::filesystem::directory_iterator(dir + "/a")) {
    std::string name = file.path().filename().string(), error;
    rt::Tensor a, b;
    ASSERT_TRUE(rt::readNpy(dir + "/a/" + name, a, error)) << error;
    ASSERT_TRUE(rt::readNpy(dir + "/b/" + name, b, error)) << error;
    ASSERT_EQ(a.shape, b.shape) << name;
    ++outputs;
    if (a.dtype != rt::DType::F32) {
      EXPECT_TRUE(a.bytes == b.bytes) << name;
      continue;
    }
    double err = relativeError(b, a);
    EXPECT_LE(err, 1e-5) << model << ": " << name;
    std::printf("  %s %s: relative error %.2e\n", model.c_str(), name.c_str(), err);
  }
  EXPECT_GT(outputs, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Models, SeedModel,
    ::testing::Values(SeedModelCase{"reverse", {"tokens"}},
                      SeedModelCase{"set_anomaly", {"features"}},
                      SeedModelCase{"fleuret_cnn", {"input"}},
                      SeedModelCase{"fleuret_attention", {"input"}},
                      SeedModelCase{"encoder_decoder", {"source", "target"}}),
    [](const ::testing::TestParamInfo<SeedModelCase> &info) { return info.param.model; });

} // namespace
