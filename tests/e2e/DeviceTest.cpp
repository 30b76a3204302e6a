//===- DeviceTest.cpp - the host side of runtime/Device.h without a GPU ---===//
//
// A device whose memory is not the host's keeps parameters and optimizer
// state on the device between training steps (swapped there, copied out for
// checkpoints), gets the batch and the per-step scalars copied in, and has
// the loss and metrics read back a few steps late (StepFeeds' result slots);
// `predict` copies arguments in and results out around each call, and the
// evaluations (validation, test, `eval`) gather their batches on the device.
// TFC_DEVICE=cpu-copied runs the CPU that way: training, a resumed run, bench
// and a prediction must give the same bits as on the CPU proper, so the copies
// move exactly the right bytes at the right time.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/Command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

using namespace tfc::e2e;
using ::testing::HasSubstr;

namespace {

const std::string kTfc = TFC_BINARY;
const std::string kSource = TFC_SOURCE_DIR;


TEST(Device, CopiedMemoryGivesTheSameBitsAsHostMemory) {
  std::string dir = makeTempDir("tfc-device");
  ASSERT_FALSE(dir.empty());
  std::string binary = dir + "/reverse";
  CommandResult compiled = run(kTfc + " compile " + kSource + "/models/reverse.tf -o " + binary);
  ASSERT_EQ(compiled.status, 0) << compiled.output;

  // A batch of the model's own data to predict on.
  ASSERT_EQ(run("mkdir -p " + dir + "/batch").status, 0);
  CommandResult saved = run(binary + " bench --steps 1 --warmup 0 --entry predict --save-batch " +
                            dir + "/batch");
  ASSERT_EQ(saved.status, 0) << saved.output;
  std::vector<std::string> evalOutputs;
  for (const char *device : {"cpu", "cpu-copied"}) {
    std::string env = std::string("TFC_DEVICE=") + device + " ";
    CommandResult info = run(env + binary + " info");
    ASSERT_EQ(info.status, 0) << info.output;
    EXPECT_THAT(info.output, HasSubstr(std::string("runs on device ") + device + "\n"));
    CommandResult trained = run(env + binary + " train --epochs 1 --run-dir " + dir + "/" +
                                device);
    ASSERT_EQ(trained.status, 0) << device << ": " << trained.output;
    // `eval` (both splits; 1,000 and 10,000 samples: each a padded last
    // batch of the 128) with the CPU's checkpoint: on cpu-copied each batch
    // is gathered in device memory from the split's samples there.
    CommandResult evaluated = run(env + binary + " eval --checkpoint " + dir +
                                  "/cpu/last.safetensors --split all");
    ASSERT_EQ(evaluated.status, 0) << device << ": " << evaluated.output;
    evalOutputs.push_back(evaluated.output);
    CommandResult predicted =
        run(env + binary + " predict --params " + dir + "/" + device +
            "/last.safetensors --input tokens=" + dir + "/batch/tokens.npy --output-dir " + dir +
            "/" + device + "-out");
    ASSERT_EQ(predicted.status, 0) << device << ": " << predicted.output;
  }
  EXPECT_EQ(fileBytes(dir + "/cpu/last.safetensors"), fileBytes(dir + "/cpu-copied/last.safetensors"));
  EXPECT_EQ(fileBytes(dir + "/cpu/best.safetensors"), fileBytes(dir + "/cpu-copied/best.safetensors"));
  EXPECT_EQ(fileBytes(dir + "/cpu/metrics.jsonl"), fileBytes(dir + "/cpu-copied/metrics.jsonl"));
  EXPECT_EQ(fileBytes(dir + "/cpu-out/logits.npy"), fileBytes(dir + "/cpu-copied-out/logits.npy"));
  EXPECT_FALSE(fileBytes(dir + "/cpu-out/logits.npy").empty());
  ASSERT_EQ(evalOutputs.size(), 2u);
  EXPECT_THAT(evalOutputs[0], HasSubstr("val (1000 samples): "));
  EXPECT_THAT(evalOutputs[0], HasSubstr("test (10000 samples): "));
  EXPECT_EQ(evalOutputs[0], evalOutputs[1]);
}

// A run stopped after its first epoch and resumed on cpu-copied (parameters
// and optimizer state loaded on the host, then copied to the device once) ends
// with the same checkpoints as an uninterrupted run on the CPU, and so does
// one stopped in the middle of its second epoch; bench's losses after three
// steps (parameters updated on the device) agree too.
TEST(Device, CopiedMemoryResumesAndBenchesToTheSameBits) {
  std::string dir = makeTempDir("tfc-device-resume");
  ASSERT_FALSE(dir.empty());
  std::string binary = dir + "/reverse";
  CommandResult compiled = run(kTfc + " compile " + kSource + "/models/reverse.tf -o " + binary);
  ASSERT_EQ(compiled.status, 0) << compiled.output;
  std::string train = binary + " train --epochs 2 --run-dir ";
  CommandResult whole = run("TFC_DEVICE=cpu " + train + dir + "/cpu");
  ASSERT_EQ(whole.status, 0) << whole.output;
  CommandResult first = run("TFC_DEVICE=cpu-copied " + train + dir + "/copied --stop-after 1");
  ASSERT_EQ(first.status, 0) << first.output;
  CommandResult resumed = run("TFC_DEVICE=cpu-copied " + train + dir + "/copied --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("resuming"));
  for (const char *file : {"last.safetensors", "best.safetensors", "metrics.jsonl"}) {
    EXPECT_FALSE(fileBytes(dir + "/cpu/" + file).empty()) << file;
    EXPECT_EQ(fileBytes(dir + "/cpu/" + file), fileBytes(dir + "/copied/" + file)) << file;
  }

  // Stopped mid-epoch (Ctrl-C right after the first epoch's checkpoint:
  // between two steps of the second epoch) and resumed there: the resumed
  // run takes the epoch's order again and gathers from its middle (the
  // samples on the device, the order from the resumed step's place on).
  CommandResult interrupted =
      run("TFC_DEVICE=cpu-copied " + train + dir + "/mid & pid=$!; i=0; while [ ! -s " + dir +
          "/mid/last.safetensors ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i+1)); done; "
          "kill -INT $pid; wait $pid; echo \"status=$?\"");
  EXPECT_THAT(interrupted.output, HasSubstr("status=130")) << interrupted.output;
  CommandResult midResumed = run("TFC_DEVICE=cpu-copied " + train + dir + "/mid --resume");
  ASSERT_EQ(midResumed.status, 0) << midResumed.output;
  EXPECT_THAT(midResumed.output, HasSubstr("(epoch 2)\n")) << midResumed.output; // not its end
  for (const char *file : {"last.safetensors", "best.safetensors", "metrics.jsonl"})
    EXPECT_EQ(fileBytes(dir + "/cpu/" + file), fileBytes(dir + "/mid/" + file)) << file;

  auto benchLoss = [&](const char *device) {
    CommandResult r = run(std::string("TFC_DEVICE=") + device + " " + binary +
                          " bench --steps 3 --warmup 1 --entry train_step");
    EXPECT_EQ(r.status, 0) << device << ": " << r.output;
    size_t at = r.output.find(" loss=");
    EXPECT_NE(at, std::string::npos) << device << ": " << r.output;
    return at == std::string::npos ? std::string() : r.output.substr(at, r.output.find('\n', at) - at);
  };
  std::string cpuLoss = benchLoss("cpu");
  EXPECT_FALSE(cpuLoss.empty());
  EXPECT_EQ(cpuLoss, benchLoss("cpu-copied"));
}

// A CUDA build's train step writes its new parameters and optimizer state
// over the old ones (tf-updates-in-place): on cpu-copied, Model::runStep
// passes each one buffer for both; on the CPU, Model::run writes over a
// copy. Both give the bits of spares swapped after each step
// (--no-updates-in-place). encoder_decoder clips no gradient, so its updates
// had to move after the last products that read their parameters.
TEST(Device, StepsWritingOverTheirParametersGiveTheBitsOfSpares) {
  std::string dir = makeTempDir("tfc-device-in-place");
  ASSERT_FALSE(dir.empty());
  for (const char *build : {"in-place", "spares"}) {
    std::string flags = std::string(" --target=cuda-emulated") +
                        (std::string(build) == "spares" ? " --no-updates-in-place" : "");
    CommandResult compiled = run(kTfc + " compile " + kSource + "/models/encoder_decoder.tf" +
                                 flags + " -o " + dir + "/" + build);
    ASSERT_EQ(compiled.status, 0) << compiled.output;
    for (const char *device : {"cpu", "cpu-copied"}) {
      CommandResult trained =
          run(std::string("TFC_DEVICE=") + device + " " + dir + "/" + build +
              " train --epochs 3 --run-dir " + dir + "/" + build + "." + device);
      ASSERT_EQ(trained.status, 0) << build << " on " << device << ": " << trained.output;
    }
  }
  const std::string reference = dir + "/spares.cpu/";
  for (const char *run : {"spares.cpu-copied", "in-place.cpu", "in-place.cpu-copied"})
    for (const char *file : {"last.safetensors", "metrics.jsonl"}) {
      EXPECT_FALSE(fileBytes(reference + file).empty()) << file;
      EXPECT_EQ(fileBytes(reference + file), fileBytes(dir + "/" + run + "/" + file))
          << run << "/" << file;
    }
}

} // namespace
