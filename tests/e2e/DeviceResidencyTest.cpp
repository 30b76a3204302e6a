//===- DeviceResidencyTest.cpp - a GPU training step copies only its batch -===//
//
// On a device whose memory is not the host's, parameters and optimizer state
// stay on the device between training steps (Model::runStep swaps their
// buffers), the training split's samples are copied in once a run, each
// epoch's order (int64 sample indices) once an epoch, each step's batch is
// gathered on the device from the samples by the order (one launch of the
// gather kernel an input, which the fake runs on the host, checking every
// row it reads), only the per-step scalars are copied in, and the loss and
// metrics are read back only when the host needs them (StepFeeds' result
// slots). Checked on a CUDA binary of the reverse task run on the fake
// driver and fake cuBLASLt: their log records every copy, synchronisation and
// graph launch, so each step's traffic can be counted. No GPU is used, and no
// generated kernel runs (the numbers are not checked here: DeviceTest checks
// the bits on TFC_DEVICE=cpu-copied, the same host path).
//
//===----------------------------------------------------------------------===//

#include "runtime/Manifest.h"
#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"
#include "tests/e2e/EmbeddedManifest.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <sstream>

using namespace tfc;
using namespace tfc::e2e;

namespace {

const std::string kTfc = TFC_BINARY;
const std::string kSource = TFC_SOURCE_DIR;
const std::string kFakes = std::string("TFC_CUDA_DRIVER=") + TFC_FAKE_CUDA_DRIVER +
                           " TFC_CUBLASLT=" + TFC_FAKE_CUBLASLT + " ";

size_t tensorBytes(const rt::TensorSpec &spec) {
  size_t n = rt::dtypeSize(spec.dtype);
  for (int64_t d : spec.shape)
    n *= size_t(d);
  return n;
}

/// What the host did between two launches of the training step's graph.
struct Gap {
  size_t copiedIn = 0;     // cuMemcpyHtoD bytes
  size_t copiedWithin = 0; // cuMemcpyDtoDAsync bytes
  size_t readBacks = 0, syncs = 0;
  size_t gathers = 0;       // launches of the gather kernel (eager)
  size_t eagerLaunches = 0; // of any other kernel
};

const std::string kGatherLaunch = "cuLaunchKernel(tfc_cuda_gather_rows_kernel,";

TEST(DeviceResidency, TrainingStepsCopyOnlyScalarsInAndGatherTheirBatchOnTheDevice) {
  std::string dir = makeTempDir("tfc-residency");
  ASSERT_FALSE(dir.empty());
  std::string binary = dir + "/reverse";
  CommandResult compiled = run(kTfc + " compile " + kSource +
                               "/models/reverse.tf --target=cuda --cuda-image=ptx --batch 4 -o " +
                               binary);
  ASSERT_EQ(compiled.status, 0) << compiled.output;
  rt::Manifest m;
  std::string error;
  ASSERT_TRUE(readManifest(binary, m, error)) << error;
  const rt::EntrySpec *step = m.entry(tfc::abi::kTrainStep);
  ASSERT_NE(step, nullptr);

  // 200 training samples: 50 steps of 4, a progress line every 5.
  std::mt19937 rng(3);
  for (auto [split, n] : {std::pair{"train", 200}, std::pair{"val", 8}, std::pair{"test", 8}}) {
    ASSERT_EQ(run("mkdir -p " + dir + "/data/" + split).status, 0);
    for (const rt::TensorSpec &input : m.inputs) {
      std::vector<int64_t> shape = input.shape;
      shape[0] = n;
      rt::Tensor t(input.dtype, shape);
      for (int64_t i = 0; i < t.numel(); ++i)
        t.i32()[i] = int32_t(rng() % 10);
      ASSERT_TRUE(rt::writeNpy(dir + "/data/" + split + "/" + input.name + ".npy", t, error))
          << error;
    }
  }
  // Two epochs: what is copied once a run must not come again with the
  // second.
  std::string logPath = dir + "/train.log";
  CommandResult trained = run(kFakes + "TFC_FAKE_CUDA_LOG=" + logPath + " " + binary +
                              " train --epochs 2 --data " + dir + "/data --run-dir " + dir +
                              "/run");
  ASSERT_EQ(trained.status, 0) << trained.output;
  std::string log = fileBytes(logPath);
  ASSERT_EQ(log.find("INVALID"), std::string::npos) << log;

  // A step copies in its small arguments (step, seed, lr...) and gathers its
  // batch on the device: every argument but the parameters and the state.
  size_t perStep = 0, batchBytes = 0, resident = 0;
  for (const rt::TensorSpec &arg : step->args) {
    if (arg.kind == tfc::abi::ValueKind::Param || arg.kind == tfc::abi::ValueKind::State)
      resident += tensorBytes(arg);
    else
      (arg.kind == tfc::abi::ValueKind::Input ? batchBytes : perStep) += tensorBytes(arg);
  }
  ASSERT_GT(batchBytes, 0u);
  ASSERT_GT(resident, 100 * (perStep + batchBytes)); // so a parameter copied would show

  // The training split's samples (all 200, in sample order) are copied in
  // once a run, not once an epoch: an input each, 50 times a step's batch.
  std::map<size_t, size_t> sampleCopies; // bytes -> inputs of that size
  for (const rt::TensorSpec &input : m.inputs)
    ++sampleCopies[50 * tensorBytes(input)];
  for (auto [bytes, inputs] : sampleCopies)
    EXPECT_EQ(countOf(log, "cuMemcpyHtoD(" + std::to_string(bytes) + ")\n"), inputs) << log;
  // An epoch's order: its 200 sample indices, int64.
  const size_t orderBytes = 200 * sizeof(int64_t);
  // Device memory: one allocation for what the model plans (parameters and
  // state, every entry's buffers, the arena they share, the cuBLASLt
  // workspace), made first; each split's samples and order (training,
  // validation, test) in it where they leave room for the plan, else one
  // allocation beside it.
  size_t first = 0;
  ASSERT_NE(log.find("cuMemAlloc("), std::string::npos) << log;
  ASSERT_EQ(std::sscanf(log.c_str() + log.find("cuMemAlloc("), "cuMemAlloc(%zu)", &first), 1);
  EXPECT_GE(first, (size_t(32) << 20) + 2 * resident); // the workspace, parameters and state
  EXPECT_LE(countOf(log, "cuMemAlloc("), 1u + 3u) << log;
  // What the first validation copies in (8 samples in two batches of 4):
  // the split's samples, once a run, an input each, with a zero row that
  // pads a last partial batch, and their order (8 int64 indices), then each
  // evaluate call's arguments but the inputs (gathered on the device) and
  // the parameters: the sample mask.
  const rt::EntrySpec *evaluate = m.entry(tfc::abi::kEvaluate);
  ASSERT_NE(evaluate, nullptr);
  size_t validation = 8 * sizeof(int64_t), evaluateGathers = 0;
  for (const rt::TensorSpec &arg : evaluate->args) {
    if (arg.kind == tfc::abi::ValueKind::Input) {
      validation += 9 * tensorBytes(arg) / 4; // 8 samples and the zero row
      evaluateGathers += 2;
    } else if (arg.kind != tfc::abi::ValueKind::Param) {
      validation += 2 * tensorBytes(arg);
    }
  }
  ASSERT_EQ(evaluateGathers, 2 * m.inputs.size());
  // The validation and test splits' samples (8 each, and the zero row) are
  // copied in once a run: once each, though validation runs twice.
  std::map<size_t, size_t> evaluationCopies; // bytes -> copies of that size
  for (const rt::TensorSpec &input : m.inputs)
    evaluationCopies[9 * tensorBytes(input) / 4] += 2;
  for (auto [bytes, copies] : evaluationCopies)
    EXPECT_EQ(countOf(log, "cuMemcpyHtoD(" + std::to_string(bytes) + ")\n"), copies) << log;

  // The training step is the first entry captured: its graph's node count
  // names its launches. The host's work between two of them is one step's.
  std::istringstream lines(log);
  size_t stepNodes = 0, stepCaptures = 0, launches = 0;
  std::vector<Gap> gaps;
  for (std::string line; std::getline(lines, line);) {
    size_t nodes = 0, bytes = 0;
    if (std::sscanf(line.c_str(), "cuStreamEndCapture(%zu nodes)", &nodes) == 1) {
      if (!stepNodes)
        stepNodes = nodes;
      stepCaptures += nodes == stepNodes;
    } else if (std::sscanf(line.c_str(), "cuGraphLaunch(%zu nodes)", &nodes) == 1) {
      if (nodes == stepNodes) {
        ++launches;
        gaps.emplace_back();
      }
    } else if (gaps.empty()) {
      continue; // before the first graph: allocations, the first copies, the eager step
    } else if (std::sscanf(line.c_str(), "cuMemcpyHtoD(%zu)", &bytes) == 1) {
      gaps.back().copiedIn += bytes;
    } else if (std::sscanf(line.c_str(), "cuMemcpyDtoDAsync(%zu)", &bytes) == 1) {
      gaps.back().copiedWithin += bytes;
    } else if (line.rfind("cuMemcpyDtoH(", 0) == 0) {
      ++gaps.back().readBacks;
    } else if (line == "cuStreamSynchronize") {
      ++gaps.back().syncs;
    } else if (line.rfind(kGatherLaunch, 0) == 0) {
      EXPECT_EQ(line.find(" captured"), std::string::npos) << line; // outside the step's graph
      ++gaps.back().gathers;
    } else if (line.rfind("cuLaunchKernel(", 0) == 0 && line.find(" captured") == std::string::npos) {
      ++gaps.back().eagerLaunches;
    }
  }
  ASSERT_GT(stepNodes, 0u) << log;
  // 100 steps: the first eager, the other 99 graphs; one graph for each of
  // the four buffer sets the steps cycle through (swapped parameters and
  // state, four result slots), captured once and replayed: never captured
  // again, the second epoch included (its batches gather into the same
  // buffers).
  EXPECT_EQ(launches, 99u);
  EXPECT_EQ(stepCaptures, 4u);
  // The gaps between two steps' launches (the last gap holds the end of
  // training: the last read, the checkpoint, the evaluations). Gap i comes
  // before step i + 3 (1-based); the one before step 51, the second epoch's
  // first, holds the first epoch's end: its validation, and the new order.
  ASSERT_EQ(gaps.size(), launches);
  const size_t epochStart = 48;
  size_t quiet = 0;
  for (size_t i = 0; i + 1 < gaps.size(); ++i) {
    if (i == epochStart) {
      EXPECT_EQ(gaps[i].copiedIn, perStep + orderBytes + validation) << "before step " << i + 3;
      EXPECT_EQ(gaps[i].gathers, m.inputs.size() + evaluateGathers) << "before step " << i + 3;
    } else {
      EXPECT_EQ(gaps[i].copiedIn, perStep) << "before step " << i + 3;
      EXPECT_EQ(gaps[i].eagerLaunches, 0u) << "before step " << i + 3;
      // The batch: one gather an input.
      EXPECT_EQ(gaps[i].gathers, m.inputs.size()) << "before step " << i + 3;
    }
    // No copy on the device.
    EXPECT_EQ(gaps[i].copiedWithin, 0u) << "before step " << i + 3;
    quiet += gaps[i].readBacks == 0 && gaps[i].syncs == 0;
  }
  // The order is copied in once an epoch, 8 bytes a sample: twice (the
  // first before the first step), and nothing of the samples again.
  EXPECT_EQ(countOf(log, "cuMemcpyHtoD(" + std::to_string(orderBytes) + ")\n"), 2u) << log;
  // Every step's batch is gathered (the first, eager, too), none copied;
  // so is every evaluation batch (two validations and the test, 2 batches
  // each).
  EXPECT_EQ(countOf(log, kGatherLaunch), 100 * m.inputs.size() + 3 * evaluateGathers);
  EXPECT_EQ(countOf(log, "cuMemcpyDtoDAsync("), 0u);
  // The loss and metrics are read when a progress line is due (every 5
  // steps) or the four result slots are full (4 steps after the last read):
  // most steps (3 of 5 here) read nothing and wait for nothing.
  EXPECT_GT(2 * quiet, gaps.size()) << quiet << " of " << gaps.size() << " steps quiet";
  // The parameters came out for the checkpoints only: the run wrote them.
  EXPECT_FALSE(fileBytes(dir + "/run/last.safetensors").empty());
  EXPECT_FALSE(fileBytes(dir + "/run/best.safetensors").empty());
}

} // namespace
