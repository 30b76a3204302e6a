//===- DeviceTest.cpp - the host side of runtime/Device.h without a GPU ---===//
//
// A device whose memory is not the host's gets every argument copied in and
// every result copied out around each call (Model::run). TFC_DEVICE=cpu-copied
// runs the CPU that way: a training run and a prediction must give the same
// bits as on the CPU proper, so the copies move exactly the right bytes.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/Command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

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
  for (const char *device : {"cpu", "cpu-copied"}) {
    std::string env = std::string("TFC_DEVICE=") + device + " ";
    CommandResult info = run(env + binary + " info");
    ASSERT_EQ(info.status, 0) << info.output;
    EXPECT_THAT(info.output, HasSubstr(std::string("runs on device ") + device + "\n"));
    CommandResult trained = run(env + binary + " train --epochs 1 --run-dir " + dir + "/" +
                                device);
    ASSERT_EQ(trained.status, 0) << device << ": " << trained.output;
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
}

} // namespace
