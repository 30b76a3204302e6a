//===- DataParallelCudaTest.cpp - a CUDA binary's data-parallel step -------===//
//
// Issue 27 on GPUs, on the fakes (no GPU): the reverse task's CUDA binary
// trains data-parallel with NCCL, loaded through TFC_NCCL_LIBRARY from the
// fake NCCL (tests/unit/FakeNccl.cpp), which records its calls in the fake
// driver's log, in order with the launches and copies. One process with
// TFC_DATA_PARALLEL=nccl (a communicator of one) and, where mpirun is, two
// ranks: each step's grad_step, one ncclAllReduce (ncclAvg, in place) on
// the one buffer of the loss, metrics and gradients (its size as
// runtime/ExchangeLayout.h lays it out, inside the model's one device
// allocation), then apply_step, from the second step on all one graph, the
// reduction captured inside it; no gradient copied to the host; rank 0's
// unique id handed to rank 1, rank 1 on the second GPU; rank 0 alone
// writes. A missing NCCL, or an NCCL call that fails, is one line naming it,
// exit 1, and the last checkpoint is left as it was. Fake kernels compute
// nothing: the calls are checked, not the numbers (tools/gpu/check.sh
// checks those on a GPU; DataParallelTest checks the same host path's
// numbers on TFC_DEVICE=cpu-copied).
//
//===----------------------------------------------------------------------===//

#include "runtime/Manifest.h"
#include "tests/e2e/Command.h"
#include "tests/e2e/EmbeddedManifest.h"
#include "tests/e2e/ReverseData.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

using namespace tfc;
using namespace tfc::e2e;

namespace {

bool endsWith(const std::string &text, const std::string &tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

const std::string kTfc = TFC_BINARY;
const std::string kSource = TFC_SOURCE_DIR;
/// The fakes, and no runtime settings `tune` kept on this machine.
const std::string kFakes = std::string("TFC_CUDA_DRIVER=") + TFC_FAKE_CUDA_DRIVER +
                           " TFC_CUBLASLT=" + TFC_FAKE_CUBLASLT +
                           " TFC_NCCL_LIBRARY=" + TFC_FAKE_NCCL + " TFC_TUNE_CACHE=none ";
const std::string kMpirun = "mpirun --allow-run-as-root --oversubscribe -np 2 ";

bool haveMpirun() { return run("command -v mpirun").status == 0; }

/// The exchange's floats, laid out as runtime/ExchangeLayout.h says: the
/// loss and metrics packed, then each gradient on a 64-float boundary.
size_t exchangeFloats(const rt::EntrySpec &gradStep, size_t &scores) {
  auto floats = [](const rt::TensorSpec &t) {
    size_t n = 1;
    for (int64_t d : t.shape)
      n *= size_t(d);
    return n;
  };
  size_t at = 0;
  for (const rt::TensorSpec &r : gradStep.results)
    if (r.kind == tfc::abi::ValueKind::Loss || r.kind == tfc::abi::ValueKind::Metric)
      at += floats(r);
  scores = at;
  for (const rt::TensorSpec &r : gradStep.results)
    if (r.kind == tfc::abi::ValueKind::Grad)
      at = (at + 63) / 64 * 64 + floats(r);
  return at;
}

/// A rank's log of a training run with `steps` steps, checked: NCCL joined
/// once as `rank` of `ranks` (the id, for comparing ranks, in `id`), one
/// ncclAllReduce a step of the whole exchange inside the model's one
/// allocation, each between grad_step's run and apply_step's, followed by
/// the copy of the scores into the step's result slot, the step's batch
/// gathered on the device inside grad_step's graph (one gather for each of
/// the model's `inputs`, from the rank's rows of the order), and nothing of
/// the gradients copied to the host.
void expectNcclSteps(const std::string &log, int rank, int ranks, size_t steps,
                     size_t stepsPerEpoch, size_t floats, size_t scores, size_t inputs,
                     std::string &id) {
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.find("INVALID"), std::string::npos) << log.substr(0, 4000);
  EXPECT_EQ(countOf(log, "ncclGetUniqueId("), rank == 0 ? 1u : 0u);
  std::string init = "ncclCommInitRank(rank " + std::to_string(rank) + " of " +
                     std::to_string(ranks) + ", id '";
  size_t at = log.find(init);
  ASSERT_NE(at, std::string::npos) << log.substr(0, 4000);
  EXPECT_EQ(countOf(log, "ncclCommInitRank("), 1u);
  id = log.substr(at + init.size(), log.find('\'', at + init.size()) - at - init.size());
  EXPECT_EQ(id.rfind("tfc-fake-nccl pid ", 0), 0u) << id;

  // The model's one allocation: the first, and the largest.
  size_t pool = 0;
  ASSERT_EQ(std::sscanf(log.c_str() + log.find("cuMemAlloc("), "cuMemAlloc(%zu)", &pool), 1);
  std::vector<std::string> lines = linesOf(log);
  std::vector<size_t> reductions; // line indices
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("ncclAllReduce(", 0) != 0 || endsWith(lines[i], " captured"))
      continue; // a capture's: done (and logged) when the graph runs
    reductions.push_back(i);
    size_t n = 0, offset = 0, bytes = 0, r = 0, k = 0;
    ASSERT_EQ(std::sscanf(lines[i].c_str(),
                          "ncclAllReduce(%zu floats at +%zu in an allocation of %zu bytes, "
                          "ncclFloat32, ncclAvg, rank %zu of %zu)",
                          &n, &offset, &bytes, &r, &k),
              5)
        << lines[i];
    EXPECT_EQ(n, floats) << lines[i];
    EXPECT_EQ(bytes, pool) << lines[i] << ": not in the model's one allocation";
    EXPECT_LE(offset + n * sizeof(float), bytes) << lines[i];
    EXPECT_EQ(offset % 256, 0u) << lines[i];
    EXPECT_EQ(r, size_t(rank));
    EXPECT_EQ(k, size_t(ranks));
    // The scores (loss, accuracy) to the step's result slot, on the device.
    size_t next = i + 1;
    while (next < lines.size() && lines[next].rfind("cuCtxSetCurrent(", 0) == 0)
      ++next;
    ASSERT_LT(next, lines.size());
    EXPECT_EQ(lines[next], "cuMemcpyDtoDAsync(" + std::to_string(scores * sizeof(float)) + ")");
  }
  ASSERT_EQ(reductions.size(), steps);
  EXPECT_EQ(countOf(log, "ncclCommDestroy(rank " + std::to_string(rank) + ")"), 1u);

  // Every step from the second on is one graph (the first runs eagerly): a
  // capture for each of the buffer sets the steps cycle through, then
  // replays. Between two steps' reductions of an epoch (not across its end:
  // the checkpoint, validation), one cuGraphLaunch (the next step's
  // grad_step with its batch's gathers, the reduction, the copy,
  // apply_step); no kernel launched eagerly; nothing read back bigger than
  // a step's scalars, so no gradient.
  size_t stepNodes = 0;
  for (size_t s = 1; s + 1 < reductions.size(); ++s) {
    if ((s + 1) % stepsPerEpoch == 0)
      continue;
    std::vector<size_t> graphs;
    for (size_t i = reductions[s] + 1; i < reductions[s + 1]; ++i) {
      size_t nodes = 0, bytes = 0;
      const std::string &line = lines[i];
      if (std::sscanf(line.c_str(), "cuGraphLaunch(%zu nodes)", &nodes) == 1)
        graphs.push_back(nodes);
      else if (std::sscanf(line.c_str(), "cuMemcpyDtoH(%zu)", &bytes) == 1) {
        EXPECT_LE(bytes, 4 * scores) << "step " << s + 2 << ": a read of " << bytes << " bytes";
      }
      EXPECT_FALSE(line.rfind("cuLaunchKernel(", 0) == 0 && !endsWith(line, " captured"))
          << "step " << s + 2 << ": " << line;
      EXPECT_FALSE(line.rfind("ncclAllReduce(", 0) == 0 && !endsWith(line, " captured"))
          << "step " << s + 2 << ": " << line;
    }
    // grad_step's batch: gathered in the graph (the fake logs each run).
    size_t gathered = 0;
    for (size_t i = reductions[s] + 1; i < reductions[s + 1]; ++i)
      gathered += lines[i].rfind("gather ran: ", 0) == 0;
    EXPECT_EQ(gathered, inputs) << "before step " << s + 2;
    ASSERT_EQ(graphs.size(), 1u) << "between the reductions of steps " << s + 1 << " and "
                                 << s + 2;
    if (!stepNodes)
      stepNodes = graphs[0];
    EXPECT_EQ(graphs[0], stepNodes) << "step " << s + 2 << "'s graph";
  }
  // The reduction and the copy are nodes of the step's graph.
  EXPECT_GE(countOf(log, " captured\n"), 2u);
  EXPECT_NE(log.find("ncclFloat32, ncclAvg, rank " + std::to_string(rank) + " of " +
                     std::to_string(ranks) + ") captured\n"),
            std::string::npos);
  EXPECT_NE(log.find("cuMemcpyDtoDAsync(" + std::to_string(scores * sizeof(float)) +
                     ") captured\n"),
            std::string::npos);
  EXPECT_GT(stepNodes, 2u);
}

class DataParallelCuda : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = makeTempDir("dataparallel-cuda");
    ASSERT_FALSE(dir_.empty());
    CommandResult compiled = run(kTfc + " compile " + kSource +
                                 "/models/reverse.tf --target=cuda --cuda-image=ptx --batch 4 -o " +
                                 dir_ + "/reverse");
    ASSERT_EQ(compiled.status, 0) << compiled.output;
    std::string error;
    manifest_ = new rt::Manifest();
    ASSERT_TRUE(readManifest(dir_ + "/reverse", *manifest_, error)) << error;
    // 40 samples: 10 steps of 4 an epoch in one process, 5 of 2 x 4 on 2 ranks.
    writeReverseData(dir_ + "/data", {{"train", 40}, {"val", 8}, {"test", 8}});
  }
  static void TearDownTestSuite() { delete manifest_; }
  void SetUp() override {
    ASSERT_NE(manifest_, nullptr);
    ASSERT_NE(manifest_->entry("grad_step"), nullptr) << "--target=cuda built no grad_step";
    ASSERT_NE(manifest_->entry("apply_step"), nullptr) << "--target=cuda built no apply_step";
    floats_ = exchangeFloats(*manifest_->entry("grad_step"), scores_);
  }
  std::string binary() const { return dir_ + "/reverse"; }
  std::string train(const std::string &runDir, const std::string &flags = "") const {
    return binary() + " train --data " + dir_ + "/data --run-dir " + runDir + " " + flags;
  }

  static std::string dir_;
  static rt::Manifest *manifest_;
  size_t floats_ = 0, scores_ = 0;
};
std::string DataParallelCuda::dir_;
rt::Manifest *DataParallelCuda::manifest_ = nullptr;

// One process, one GPU, no mpirun: TFC_DATA_PARALLEL=nccl runs the step as
// one rank of a data-parallel run. Without the switch nothing of NCCL loads.
TEST_F(DataParallelCuda, OneRankSwitchReducesOnTheDeviceEachStep) {
  std::string log = dir_ + "/one.log";
  CommandResult r = run(kFakes + "TFC_FAKE_CUDA_LOG=" + log + " TFC_DATA_PARALLEL=nccl " +
                        train(dir_ + "/one", "--epochs 2"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("data-parallel: 1 rank of batch 4 (TFC_DATA_PARALLEL=nccl)"),
            std::string::npos)
      << r.output;
  std::string id;
  expectNcclSteps(fileBytes(log), 0, 1, 20, 10, floats_, scores_, manifest_->inputs.size(), id);
  EXPECT_EQ(countOf(fileBytes(dir_ + "/one/metrics.jsonl"), "\"split\": \"train\""), 2u);
  EXPECT_FALSE(fileBytes(dir_ + "/one/last.safetensors").empty());

  std::string plainLog = dir_ + "/plain.log";
  CommandResult plain = run(kFakes + "TFC_FAKE_CUDA_LOG=" + plainLog + " " +
                            train(dir_ + "/plain", "--epochs 1"));
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(plain.output.find("data-parallel"), std::string::npos) << plain.output;
  EXPECT_EQ(fileBytes(plainLog).find("nccl"), std::string::npos) << "NCCL without the switch";

  // info says what data-parallel training uses, only when it is on.
  CommandResult info = run(kFakes + "TFC_DATA_PARALLEL=nccl " + binary() + " info");
  EXPECT_NE(info.output.find("data-parallel: gradients averaged by NCCL (" +
                             std::string(TFC_FAKE_NCCL) + ", TFC_NCCL_LIBRARY)"),
            std::string::npos)
      << info.output;
  CommandResult plainInfo = run(kFakes + binary() + " info");
  EXPECT_EQ(plainInfo.output.find("NCCL"), std::string::npos) << plainInfo.output;
}

// Two ranks under mpirun on a node with two GPUs: rank r on GPU r, rank 0's
// unique id reaches rank 1, each rank reduces each step's buffer, and rank
// 0 alone reports and writes.
TEST_F(DataParallelCuda, TwoRanksShareOneIdAndReduceEachStep) {
  if (!haveMpirun())
    GTEST_SKIP() << "mpirun not found (Debian's openmpi-bin): data-parallel training untested";
  // Each rank's log a file of its own (the fake appends it at exit).
  std::string command = kMpirun + "sh -c '" + kFakes + "TFC_FAKE_CUDA_DEVICES=2 " +
                        "TFC_FAKE_CUDA_LOG=" + dir_ + "/rank$OMPI_COMM_WORLD_RANK.log exec " +
                        train(dir_ + "/two", "--epochs 2 --threads 1") + "'";
  CommandResult r = run(command);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("data-parallel: 2 ranks of batch 4"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("not supported"), std::string::npos) << r.output;
  size_t done = r.output.find("done: ");
  ASSERT_NE(done, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("done: ", done + 1), std::string::npos) << r.output;
  // Two epochs: a train and a val line each, and the test split's.
  std::string metrics = fileBytes(dir_ + "/two/metrics.jsonl");
  EXPECT_EQ(countOf(metrics, "\n"), 5u) << metrics;
  EXPECT_FALSE(fileBytes(dir_ + "/two/last.safetensors").empty());

  std::string ids[2];
  for (int rank : {0, 1}) {
    std::string log = fileBytes(dir_ + "/rank" + std::to_string(rank) + ".log");
    SCOPED_TRACE("rank " + std::to_string(rank));
    expectNcclSteps(log, rank, 2, 10, 5, floats_, scores_, manifest_->inputs.size(),
                    ids[rank]);
    EXPECT_NE(log.find("cuDevicePrimaryCtxRetain(" + std::to_string(rank) + ")"),
              std::string::npos);
  }
  EXPECT_EQ(ids[0], ids[1]) << "rank 1 joined with another id than rank 0 made";
}

// No NCCL where data-parallel training needs it: one line naming what was
// tried, exit 1, before any step; the checkpoint a resume started from is
// left as it was. An NCCL call that fails is named with NCCL's text.
TEST_F(DataParallelCuda, WithoutNcclOneLineAndTheCheckpointKept) {
  std::string runDir = dir_ + "/resume";
  CommandResult first = run(kFakes + train(runDir, "--epochs 1"));
  ASSERT_EQ(first.status, 0) << first.output;
  const std::string saved = fileBytes(runDir + "/last.safetensors");
  ASSERT_FALSE(saved.empty());

  struct Case {
    std::string env, message;
  } cases[] = {
      {"TFC_NCCL_LIBRARY=" + dir_ + "/none/libnccl.so.2",
       "error: data-parallel training on cuda:0: no NCCL: tried " + dir_ +
           "/none/libnccl.so.2 (from TFC_NCCL_LIBRARY); data-parallel training on GPUs needs "
           "NCCL 2.10 or later"},
      {"TFC_FAKE_NCCL_VERSION=20903",
       "the NCCL library " + std::string(TFC_FAKE_NCCL) + " is NCCL 2.9.3; tfc needs 2.10"},
      {"TFC_FAKE_NCCL_FAIL=ncclCommInitRank",
       "data-parallel training on cuda:0: ncclCommInitRank(rank 0 of 1): unhandled system error"},
      {"TFC_FAKE_NCCL_FAIL=ncclAllReduce",
       "error: ncclAllReduce(" + std::to_string(floats_) +
           " floats, ncclAvg, rank 0 of 1): unhandled system error"},
  };
  for (const Case &c : cases) {
    CommandResult r = run(kFakes + c.env + " TFC_DATA_PARALLEL=nccl " +
                          train(runDir, "--epochs 2 --resume"));
    EXPECT_EQ(r.status, 1) << c.env << ": " << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.env << ": " << r.output;
    EXPECT_EQ(countOf(r.output, "error: "), 1u) << r.output;
    EXPECT_TRUE(fileBytes(runDir + "/last.safetensors") == saved) << c.env << ": checkpoint changed";
  }
  if (!haveMpirun())
    return;
  // Both ranks without NCCL: every rank stops, nothing written.
  CommandResult ranks = run(kMpirun + "sh -c '" + kFakes + "TFC_NCCL_LIBRARY=" + dir_ +
                            "/none/libnccl.so.2 exec " +
                            train(runDir, "--epochs 4 --resume --threads 1") + "'");
  EXPECT_NE(ranks.status, 0) << ranks.output;
  EXPECT_NE(ranks.output.find("no NCCL: tried"), std::string::npos) << ranks.output;
  EXPECT_TRUE(fileBytes(runDir + "/last.safetensors") == saved) << "checkpoint changed";
}

} // namespace
