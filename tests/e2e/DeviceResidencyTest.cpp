//===- DeviceResidencyTest.cpp - a GPU training step copies only its batch -===//
//
// On a device whose memory is not the host's, parameters and optimizer state
// stay on the device between training steps (Model::runStep swaps their
// buffers), the training split's samples are copied in once a run, each
// epoch's order (int64 sample indices, after the first row of it) once an
// epoch, each step's batch is gathered on the device from the samples by
// the order inside the step's graph (a gather kernel an input, reading the
// batch's first row from device memory, and the kernel that advances it:
// the fake runs both on the host, checking every row it reads and logging
// which rows of the order), so a step is one cuGraphLaunch; nothing else
// is copied in (the small arguments once, the step counter advanced by the
// step itself; a dropout seed would be copied a step), and the loss and
// metrics are read back only when the host needs them (StepFeeds' result
// slots). Checked on a CUDA binary of the reverse task run on the fake
// driver and fake cuBLASLt: their log records every copy, synchronisation and
// graph launch, so each step's traffic can be counted. No GPU is used, and no
// generated kernel runs (the numbers are not checked here: DeviceTest checks
// the bits on TFC_DEVICE=cpu-copied, the same host path).
//
//===----------------------------------------------------------------------===//

#include "runtime/Abi.h"
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
/// The fakes, and no runtime settings `tune` kept on this machine.
const std::string kFakes = std::string("TFC_CUDA_DRIVER=") + TFC_FAKE_CUDA_DRIVER +
                           " TFC_CUBLASLT=" + TFC_FAKE_CUBLASLT + " TFC_TUNE_CACHE=none ";

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
  size_t eagerLaunches = 0; // of any kernel, outside a graph
  size_t otherGraphs = 0;   // launches of other graphs (an evaluation's)
};

const std::string kGatherLaunch = "cuLaunchKernel(tfc_cuda_gather_rows_kernel,";
const std::string kAdvanceLaunch = "cuLaunchKernel(tfc_cuda_advance_first_kernel,";

/// The order's rows each run of the gather kernel read ("gather ran:
/// order[F, F + N)" in the fake's log), as F, in order.
std::vector<int64_t> gatheredRows(const std::string &log) {
  std::vector<int64_t> firsts;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    long long first = 0, end = 0;
    if (std::sscanf(line.c_str(), "gather ran: order[%lld, %lld)", &first, &end) == 2)
      firsts.push_back(first);
  }
  return firsts;
}

/// Reverse (batch 4) compiled for CUDA into `dir`, and its data: 200
/// training samples (50 steps an epoch), 8 validation and 8 test.
void compileReverse(const std::string &dir, rt::Manifest &m) {
  CommandResult compiled = run(kTfc + " compile " + kSource +
                               "/models/reverse.tf --target=cuda --cuda-image=ptx --batch 4 -o " +
                               dir + "/reverse");
  ASSERT_EQ(compiled.status, 0) << compiled.output;
  std::string error;
  ASSERT_TRUE(readManifest(dir + "/reverse", m, error)) << error;
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
}

TEST(DeviceResidency, ATrainingStepIsOneGraphLaunchThatGathersItsBatch) {
  std::string dir = makeTempDir("tfc-residency");
  ASSERT_FALSE(dir.empty());
  std::string binary = dir + "/reverse";
  rt::Manifest m;
  ASSERT_NO_FATAL_FAILURE(compileReverse(dir, m));
  std::string error;
  const rt::EntrySpec *step = m.entry(tfc::abi::kTrainStep);
  ASSERT_NE(step, nullptr);
  // 200 training samples: 50 steps of 4, a progress line every 5.
  // Two epochs: what is copied once a run must not come again with the
  // second.
  std::string logPath = dir + "/train.log";
  CommandResult trained = run(kFakes + "TFC_FAKE_CUDA_LOG=" + logPath + " " + binary +
                              " train --epochs 2 --data " + dir + "/data --run-dir " + dir +
                              "/run");
  ASSERT_EQ(trained.status, 0) << trained.output;
  std::string log = fileBytes(logPath);
  ASSERT_EQ(log.find("INVALID"), std::string::npos) << log;

  // A step copies in its dropout seed (reverse has none) and gathers its
  // batch on the device; its other small arguments (lr, total steps, masks,
  // the step counter, which the step's `step + 1` replaces) stay on the
  // device with the parameters and state.
  size_t perStep = 0, batchBytes = 0, resident = 0;
  for (const rt::TensorSpec &arg : step->args) {
    if (arg.kind == tfc::abi::ValueKind::Param || arg.kind == tfc::abi::ValueKind::State)
      resident += tensorBytes(arg);
    else if (arg.kind == tfc::abi::ValueKind::Input)
      batchBytes += tensorBytes(arg);
    else if (arg.kind == tfc::abi::ValueKind::Seed)
      perStep += tensorBytes(arg);
  }
  ASSERT_GT(batchBytes, 0u);
  ASSERT_EQ(perStep, 0u); // reverse: no dropout
  ASSERT_GT(resident, 100 * (perStep + batchBytes)); // so a parameter copied would show

  // The training split's samples (all 200, in sample order) are copied in
  // once a run, not once an epoch: an input each, 50 times a step's batch.
  std::map<size_t, size_t> sampleCopies; // bytes -> inputs of that size
  for (const rt::TensorSpec &input : m.inputs)
    ++sampleCopies[50 * tensorBytes(input)];
  for (auto [bytes, inputs] : sampleCopies)
    EXPECT_EQ(countOf(log, "cuMemcpyHtoD(" + std::to_string(bytes) + ")\n"), inputs) << log;
  // An epoch's order: the first step's row of it, then its 200 sample
  // indices, int64.
  const size_t orderBytes = (1 + 200) * sizeof(int64_t);
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
  // pads a last partial batch, and their order (the first row, then 8 int64
  // indices), the first row again (0: every evaluation starts there), then
  // each evaluate call's arguments but the inputs (gathered on the device)
  // and the parameters: the sample mask.
  const rt::EntrySpec *evaluate = m.entry(tfc::abi::kEvaluate);
  ASSERT_NE(evaluate, nullptr);
  size_t validation = (1 + 8) * sizeof(int64_t) + sizeof(int64_t);
  for (const rt::TensorSpec &arg : evaluate->args) {
    if (arg.kind == tfc::abi::ValueKind::Input)
      validation += 9 * tensorBytes(arg) / 4; // 8 samples and the zero row
    else if (arg.kind != tfc::abi::ValueKind::Param)
      validation += 2 * tensorBytes(arg);
  }
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
      } else if (!gaps.empty()) {
        ++gaps.back().otherGraphs;
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
    } else if (line.rfind("cuLaunchKernel(", 0) == 0 && line.find(" captured") == std::string::npos) {
      ++gaps.back().eagerLaunches;
    }
  }
  ASSERT_GT(stepNodes, 0u) << log;
  // 100 steps: the first eager, the other 99 graphs; one graph for each of
  // the four buffer sets the steps cycle through (swapped parameters and
  // state, four result slots), captured once and replayed: never captured
  // again, the second epoch included (its batches gather into the same
  // buffers, from the same order's memory).
  EXPECT_EQ(launches, 99u);
  EXPECT_EQ(stepCaptures, 4u);
  // Every graph (the step's four, the evaluations') holds its batch's
  // gathers, one an input, and one advance; outside graphs, only the first
  // (eager) call of train_step and of evaluate gathers.
  const size_t captures = countOf(log, "cuStreamEndCapture(");
  size_t capturedGathers = 0, eagerGathers = 0, capturedAdvances = 0, eagerAdvances = 0;
  {
    std::istringstream all(log);
    for (std::string line; std::getline(all, line);) {
      const bool captured = line.find(" captured") != std::string::npos;
      if (line.rfind(kGatherLaunch, 0) == 0)
        ++(captured ? capturedGathers : eagerGathers);
      else if (line.rfind(kAdvanceLaunch, 0) == 0)
        ++(captured ? capturedAdvances : eagerAdvances);
    }
  }
  EXPECT_EQ(capturedGathers, captures * m.inputs.size());
  EXPECT_EQ(capturedAdvances, captures);
  EXPECT_EQ(eagerGathers, 2 * m.inputs.size());
  EXPECT_EQ(eagerAdvances, 2u);
  // The gathers read the epoch's order a step's batch at a time (4 rows
  // from row 0, 4, ..., 196, twice), then each evaluation's two batches
  // (rows 0 and 4 of its order: two validations and the test), in order,
  // one run an input: the device's first row is right at every step.
  std::vector<int64_t> want;
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int64_t s = 0; s < 50; ++s)
      want.insert(want.end(), m.inputs.size(), 4 * s);
    for (int64_t b = 0; b < 2; ++b)
      want.insert(want.end(), m.inputs.size(), 4 * b);
  }
  for (int64_t b = 0; b < 2; ++b)
    want.insert(want.end(), m.inputs.size(), 4 * b);
  EXPECT_EQ(gatheredRows(log), want);
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
    } else {
      // One host call a step, its graph: nothing copied in, no kernel
      // launched outside it.
      EXPECT_EQ(gaps[i].copiedIn, perStep) << "before step " << i + 3;
      EXPECT_EQ(gaps[i].eagerLaunches, 0u) << "before step " << i + 3;
      EXPECT_EQ(gaps[i].otherGraphs, 0u) << "before step " << i + 3;
    }
    // No copy on the device.
    EXPECT_EQ(gaps[i].copiedWithin, 0u) << "before step " << i + 3;
    quiet += gaps[i].readBacks == 0 && gaps[i].syncs == 0;
    // A read of the pending steps' loss and metrics is one copy out (their
    // slots' span) and one wait, not one a result a step.
    if (i != epochStart) {
      EXPECT_LE(gaps[i].readBacks, 1u) << "before step " << i + 3;
      EXPECT_LE(gaps[i].syncs, 1u) << "before step " << i + 3;
    }
  }
  // The order is copied in once an epoch, 8 bytes a sample: twice (the
  // first before the first step), and nothing of the samples again.
  EXPECT_EQ(countOf(log, "cuMemcpyHtoD(" + std::to_string(orderBytes) + ")\n"), 2u) << log;
  EXPECT_EQ(countOf(log, "cuMemcpyDtoDAsync("), 0u);
  // The loss and metrics are read when a progress line is due (every 5
  // steps) or the four result slots are full (4 steps after the last read):
  // most steps (3 of 5 here) read nothing and wait for nothing.
  EXPECT_GT(2 * quiet, gaps.size()) << quiet << " of " << gaps.size() << " steps quiet";
  // The parameters came out for the checkpoints only: the run wrote them.
  EXPECT_FALSE(fileBytes(dir + "/run/last.safetensors").empty());
  EXPECT_FALSE(fileBytes(dir + "/run/best.safetensors").empty());
}

// A run resumed in the middle of an epoch gathers from the checkpoint's step
// on: the order is copied in with that step's first row of it, the gathers
// inside the replayed graphs go on from there, and the next evaluations
// start at their order's row 0. (The checkpoint is the first epoch's end with
// its step moved on by 3, so the resumed step is known; the numbers are not
// checked here: DeviceTest resumes mid-epoch on cpu-copied to the CPU's bits.)
TEST(DeviceResidency, AResumedRunGathersFromTheCheckpointsStep) {
  std::string dir = makeTempDir("tfc-residency-resume");
  ASSERT_FALSE(dir.empty());
  rt::Manifest m;
  ASSERT_NO_FATAL_FAILURE(compileReverse(dir, m));
  const std::string train = kFakes + dir + "/reverse train --epochs 2 --data " + dir +
                            "/data --run-dir " + dir + "/run";
  CommandResult first = run(train + " --stop-after 1");
  ASSERT_EQ(first.status, 0) << first.output;
  std::vector<std::pair<std::string, rt::Tensor>> tensors;
  std::string error;
  const std::string last = dir + "/run/last.safetensors";
  ASSERT_TRUE(rt::readSafetensors(last, tensors, error)) << error;
  std::vector<std::pair<std::string, const rt::Tensor *>> moved;
  bool found = false;
  for (auto &[name, t] : tensors) {
    if (name == "train.step") {
      ASSERT_EQ(t.f32()[0], 50.0f);
      t.f32()[0] = 53.0f; // the second epoch's fourth step
      found = true;
    }
    moved.push_back({name, &t});
  }
  ASSERT_TRUE(found);
  ASSERT_TRUE(rt::writeSafetensors(last, moved, error)) << error;

  const std::string logPath = dir + "/resume.log";
  CommandResult resumed = run("TFC_FAKE_CUDA_LOG=" + logPath + " " + train + " --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming"), std::string::npos) << resumed.output;
  const std::string log = fileBytes(logPath);
  ASSERT_EQ(log.find("INVALID"), std::string::npos) << log;
  // Steps 54 to 100: rows 12, 16, ..., 196 of the epoch's order; then the
  // validation's and the test's two batches each.
  std::vector<int64_t> want;
  for (int64_t s = 3; s < 50; ++s)
    want.insert(want.end(), m.inputs.size(), 4 * s);
  for (int split = 0; split < 2; ++split)
    for (int64_t b = 0; b < 2; ++b)
      want.insert(want.end(), m.inputs.size(), 4 * b);
  EXPECT_EQ(gatheredRows(log), want);
  // The order once, with the resumed step's first row: 201 int64s.
  EXPECT_EQ(countOf(log, "cuMemcpyHtoD(" + std::to_string(201 * sizeof(int64_t)) + ")\n"), 1u)
      << log;
  // 47 steps: the first eager, then a graph launch each and no other launch.
  const std::string endCapture = "cuStreamEndCapture(";
  ASSERT_NE(log.find(endCapture), std::string::npos);
  size_t stepNodes = 0;
  ASSERT_EQ(std::sscanf(log.c_str() + log.find(endCapture), "cuStreamEndCapture(%zu nodes)",
                        &stepNodes),
            1);
  EXPECT_EQ(countOf(log, "cuGraphLaunch(" + std::to_string(stepNodes) + " nodes)"), 46u) << log;
}

} // namespace
