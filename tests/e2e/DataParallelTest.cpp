//===- DataParallelTest.cpp - mpirun -np 2 against one process ------------===//
//
// Issue 27's contract on the CPU: a binary compiled for batch b and started
// as N ranks trains like one process compiled for batch N*b, step for step
// (losses within 1e-6 relative, parameters and optimizer state within
// 1e-5), dropout's masks included; it resumes across ranks to the same
// bytes; a rank that dies or is signalled stops the others within seconds,
// never a hang. Skipped where Open MPI's mpirun is not installed.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"
#include "tests/e2e/ReverseData.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <dirent.h>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

using namespace tfc::e2e;
using tfc::rt::DType;
using tfc::rt::Tensor;

namespace {

const std::string kTfc = TFC_BINARY;
const std::string kSource = TFC_SOURCE_DIR;
const std::string kMpirun = "mpirun --allow-run-as-root --oversubscribe -np 2 ";

bool haveMpirun() { return run("command -v mpirun").status == 0; }

/// The "train" lines of a run's metrics.jsonl: {loss, accuracy} per epoch.
std::vector<std::pair<double, double>> trainScores(const std::string &runDir) {
  std::vector<std::pair<double, double>> scores;
  std::ifstream in(runDir + "/metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"split\": \"train\"") == std::string::npos)
      continue;
    auto number = [&](const std::string &key) {
      size_t at = line.find("\"" + key + "\": ");
      return at == std::string::npos ? NAN : std::stod(line.substr(at + key.size() + 4));
    };
    scores.push_back({number("loss"), number("accuracy")});
  }
  return scores;
}

std::map<std::string, Tensor> checkpoint(const std::string &path) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::string error;
  EXPECT_TRUE(tfc::rt::readSafetensors(path, tensors, error)) << error;
  return {tensors.begin(), tensors.end()};
}

/// Each step's loss (and accuracy, when `accuracy`) of run `b` within 1e-6
/// (relative for the loss) of run `a`'s: one step an epoch, so each epoch's
/// train line is one step's.
void expectStepsMatch(const std::string &a, const std::string &b, size_t steps,
                      bool accuracy = true) {
  auto x = trainScores(a), y = trainScores(b);
  ASSERT_EQ(x.size(), steps) << a;
  ASSERT_EQ(y.size(), steps) << b;
  for (size_t step = 0; step < steps; ++step) {
    EXPECT_NEAR(y[step].first, x[step].first, 1e-6 * std::abs(x[step].first)) << "step " << step + 1;
    if (accuracy)
      EXPECT_NEAR(y[step].second, x[step].second, 1e-6) << "step " << step + 1;
  }
}

/// The reverse task's checkpoints `a` and `b` (Adam): parameters and Adam's
/// moments within 1e-5 of each tensor's largest value, but for the elements
/// whose gradient is rounding noise in both runs (attention's key bias:
/// softmax ignores it), which Adam turns into steps of the learning rate's
/// size either way: an element whose second moment is below 1e-12 of its
/// tensor's largest has a gradient below 1e-6 of its tensor's largest. Those
/// may differ, and must be few.
void expectAdamCheckpointsMatch(const std::string &a, const std::string &b) {
  auto x = checkpoint(a), y = checkpoint(b);
  int64_t compared = 0, noise = 0;
  for (auto &[name, t] : x) {
    if (name.rfind("train.", 0) == 0 || t.dtype != DType::F32)
      continue;
    ASSERT_TRUE(y.count(name)) << name;
    std::string param = name.rfind("optimizer.", 0) == 0 ? name.substr(10) : name;
    for (const char *suffix : {".exp_avg_sq", ".exp_avg"})
      if (param.size() > strlen(suffix) &&
          param.compare(param.size() - strlen(suffix), std::string::npos, suffix) == 0)
        param.resize(param.size() - strlen(suffix));
    const Tensor &secondMoment = x.at("optimizer." + param + ".exp_avg_sq");
    double momentScale = 0, scale = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      momentScale = std::max(momentScale, double(secondMoment.f32()[i]));
      scale = std::max(scale, std::abs(double(t.f32()[i])));
    }
    for (int64_t i = 0; i < t.numel(); ++i) {
      ++compared;
      double error = std::abs(double(y.at(name).f32()[i]) - double(t.f32()[i]));
      if (error <= 1e-5 * scale)
        continue;
      if (secondMoment.f32()[i] <= 1e-12 * momentScale) {
        ++noise;
        continue;
      }
      ADD_FAILURE() << name << "[" << i << "]: " << y.at(name).f32()[i] << " against "
                    << t.f32()[i] << " (1e-5 of " << scale << ")";
    }
  }
  EXPECT_GT(compared, 10000);
  EXPECT_LT(noise, compared / 100) << "elements apart by more than 1e-5, their gradient noise";
  std::printf("[ measure  ] %lld elements compared, %lld apart with noise-level gradients\n",
              (long long)compared, (long long)noise);
}

/// Every parameter of checkpoint `b` within 1e-5 of its tensor's largest
/// value in `a` (plain SGD: nothing turns rounding noise into steps);
/// `elements` compared in all.
void expectCheckpointsMatch(const std::string &a, const std::string &b, int64_t elements) {
  auto x = checkpoint(a), y = checkpoint(b);
  int64_t compared = 0;
  for (auto &[name, t] : x) {
    if (name.rfind("train.", 0) == 0 || t.dtype != DType::F32)
      continue;
    ASSERT_TRUE(y.count(name)) << name;
    double scale = 0;
    for (int64_t i = 0; i < t.numel(); ++i)
      scale = std::max(scale, std::abs(double(t.f32()[i])));
    for (int64_t i = 0; i < t.numel(); ++i, ++compared)
      EXPECT_NEAR(y.at(name).f32()[i], t.f32()[i], 1e-5 * scale) << name << "[" << i << "]";
  }
  EXPECT_EQ(compared, elements);
}

class DataParallelTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!haveMpirun())
      GTEST_SKIP() << "mpirun not found (Debian's openmpi-bin): data-parallel training untested";
    dir = makeTempDir("dataparallel");
    ASSERT_FALSE(dir.empty());
    // Batch 8 on each of 2 ranks against one process of batch 16.
    for (int64_t batch : {8, 16}) {
      CommandResult r = run(kTfc + " compile " + kSource + "/models/reverse.tf --batch " +
                            std::to_string(batch) + " -o " + binary(batch));
      ASSERT_EQ(r.status, 0) << r.output;
    }
  }
  std::string binary(int64_t batch) const { return dir + "/reverse" + std::to_string(batch); }
  std::string dir;
};

// One global batch a step, one step an epoch: each epoch's train loss is
// one step's loss.
TEST_F(DataParallelTest, TwoRanksMatchOneProcessStepForStep) {
  writeReverseData(dir + "/data", {{"train", 16}, {"val", 16}, {"test", 16}});
  const std::string common = " train --epochs 6 --lr 1e-2 --data " + dir + "/data";
  CommandResult one = run(binary(16) + common + " --run-dir " + dir + "/one");
  ASSERT_EQ(one.status, 0) << one.output;
  CommandResult two = run(kMpirun + binary(8) + common + " --threads 1 --run-dir " + dir + "/two");
  ASSERT_EQ(two.status, 0) << two.output;
  EXPECT_NE(two.output.find("data-parallel: 2 ranks of batch 8"), std::string::npos) << two.output;
  // Only rank 0 reports: one "done" line.
  size_t done = two.output.find("done: ");
  ASSERT_NE(done, std::string::npos);
  EXPECT_EQ(two.output.find("done: ", done + 1), std::string::npos) << two.output;

  expectStepsMatch(dir + "/one", dir + "/two", 6);
  expectAdamCheckpointsMatch(dir + "/one/last.safetensors", dir + "/two/last.safetensors");
}

// The same on a device whose memory is not the host's (TFC_DEVICE=cpu-copied:
// the CPU's memory taken as a GPU's): each rank's grad_step writes its loss,
// metrics and gradients into one device buffer, averaged there
// (Device::allreduceMean; cpu-copied's is MPI's on that memory), and
// apply_step reads the gradients there. The same contract against one
// process; and the same bytes as the CPU's ranks, which average the same
// values in the same order on the host.
TEST_F(DataParallelTest, CpuCopiedTwoRanksMatchOneProcessStepForStep) {
  writeReverseData(dir + "/data", {{"train", 16}, {"val", 16}, {"test", 16}});
  const std::string common = " train --epochs 6 --lr 1e-2 --data " + dir + "/data";
  CommandResult one = run(binary(16) + common + " --run-dir " + dir + "/one");
  ASSERT_EQ(one.status, 0) << one.output;
  CommandResult copied = run(kMpirun + "-x TFC_DEVICE=cpu-copied " + binary(8) + common +
                             " --threads 1 --run-dir " + dir + "/copied");
  ASSERT_EQ(copied.status, 0) << copied.output;
  EXPECT_NE(copied.output.find("data-parallel: 2 ranks of batch 8"), std::string::npos)
      << copied.output;
  EXPECT_EQ(copied.output.find("not supported"), std::string::npos) << copied.output;
  expectStepsMatch(dir + "/one", dir + "/copied", 6);
  expectAdamCheckpointsMatch(dir + "/one/last.safetensors", dir + "/copied/last.safetensors");

  CommandResult host = run(kMpirun + binary(8) + common + " --threads 1 --run-dir " + dir + "/host");
  ASSERT_EQ(host.status, 0) << host.output;
  EXPECT_TRUE(fileBytes(dir + "/host/last.safetensors") ==
              fileBytes(dir + "/copied/last.safetensors"))
      << "the device's exchange averaged other values than the host's";
  EXPECT_EQ(fileBytes(dir + "/host/metrics.jsonl"), fileBytes(dir + "/copied/metrics.jsonl"));
}

// TFC_DATA_PARALLEL=nccl: one process, no mpirun, takes the data-parallel
// path as one rank (grad_step, the device's collective over one rank,
// apply_step): a check of that path on a machine with one GPU. On
// cpu-copied it trains as train_step does, within the same contract; any
// other value of the switch is an error before training.
TEST_F(DataParallelTest, OneRankSwitchTrainsAsOneProcess) {
  writeReverseData(dir + "/data", {{"train", 16}, {"val", 16}, {"test", 16}});
  const std::string common = " train --epochs 6 --lr 1e-2 --data " + dir + "/data";
  CommandResult one = run(binary(16) + common + " --run-dir " + dir + "/one");
  ASSERT_EQ(one.status, 0) << one.output;
  CommandResult split = run("TFC_DEVICE=cpu-copied TFC_DATA_PARALLEL=nccl " + binary(16) + common +
                            " --run-dir " + dir + "/split");
  ASSERT_EQ(split.status, 0) << split.output;
  EXPECT_NE(split.output.find("data-parallel: 1 rank of batch 16 (TFC_DATA_PARALLEL=nccl)"),
            std::string::npos)
      << split.output;
  expectStepsMatch(dir + "/one", dir + "/split", 6);
  expectAdamCheckpointsMatch(dir + "/one/last.safetensors", dir + "/split/last.safetensors");

  CommandResult wrong = run("TFC_DATA_PARALLEL=mpi " + binary(16) + common + " --run-dir " + dir +
                            "/wrong");
  EXPECT_EQ(wrong.status, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("TFC_DATA_PARALLEL=mpi: the only value is 'nccl'"),
            std::string::npos)
      << wrong.output;
}

/// tests/e2e/dropout.tf: 2 ranks of batch 3 (their environment `env`, as
/// mpirun's -x options) against one process of batch 6; `inCode` also runs
/// the build whose masks are drawn in generated code.
void dropoutTwoRanksMatchOneProcess(const std::string &name, const std::string &env, bool inCode) {
  if (!haveMpirun())
    GTEST_SKIP() << "mpirun not found (Debian's openmpi-bin): data-parallel training untested";
  std::string dir = makeTempDir(name);
  ASSERT_FALSE(dir.empty());
  for (std::string flags : {"--batch 3", "--batch 6", "--batch 3 --no-runtime-kernels"}) {
    if (!inCode && flags.size() > 10)
      continue;
    std::string binary = flags.size() > 10 ? "in-code3" : "dropout" + flags.substr(8);
    CommandResult r = run(kTfc + " compile " + kSource + "/tests/e2e/dropout.tf " + flags +
                          " -o " + dir + "/" + binary);
    ASSERT_EQ(r.status, 0) << r.output;
  }
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (auto [split, n] : {std::pair{"train", 6}, std::pair{"val", 6}, std::pair{"test", 6}}) {
    ASSERT_EQ(run("mkdir -p " + dir + "/data/" + split).status, 0);
    for (auto [input, width] : {std::pair{"x", 13}, std::pair{"y", 9}}) {
      Tensor t(DType::F32, {n, 5, width});
      for (int64_t e = 0; e < t.numel(); ++e)
        t.f32()[e] = normal(rng);
      std::string error;
      ASSERT_TRUE(tfc::rt::writeNpy(dir + "/data/" + split + "/" + input + ".npy", t, error))
          << error;
    }
  }
  const std::string common = " train --epochs 4 --data " + dir + "/data";
  CommandResult one = run(dir + "/dropout6" + common + " --run-dir " + dir + "/one");
  ASSERT_EQ(one.status, 0) << one.output;
  CommandResult two =
      run(kMpirun + env + dir + "/dropout3" + common + " --threads 1 --run-dir " + dir + "/two");
  ASSERT_EQ(two.status, 0) << two.output;
  EXPECT_NE(two.output.find("data-parallel: 2 ranks of batch 3"), std::string::npos) << two.output;
  expectStepsMatch(dir + "/one", dir + "/two", 4, /*accuracy=*/false);
  // a.weight, a.bias, b.weight, b.bias
  expectCheckpointsMatch(dir + "/one/last.safetensors", dir + "/two/last.safetensors",
                         13 * 9 + 9 + 9 * 9 + 9);
  if (!inCode)
    return;
  CommandResult inCodeRun = run(kMpirun + env + dir + "/in-code3" + common +
                                " --threads 1 --run-dir " + dir + "/in-code");
  ASSERT_EQ(inCodeRun.status, 0) << inCodeRun.output;
  EXPECT_TRUE(fileBytes(dir + "/in-code/last.safetensors") ==
              fileBytes(dir + "/two/last.safetensors"))
      << "generated code drew other masks than the runtime under mpirun";
}

// A model with dropout (tests/e2e/dropout.tf: on an input and after a GEMM's
// bias and relu, 65 and 45 elements a sample, so a rank's first element
// falls inside a group of four): rank r's masks are those of rows r*b ..
// (r+1)*b - 1 of one process's batch (the sample offset), so 2 ranks of
// batch 3 train like one process of batch 6, step for step. Plain SGD: no
// Adam to turn rounding noise into steps, so every parameter is compared.
// Masks drawn in generated code (--no-runtime-kernels) count from the same
// offset: the same bits as the runtime's, under mpirun too.
TEST(DataParallelDropout, TwoRanksDrawOneProcesssMasks) {
  dropoutTwoRanksMatchOneProcess("dataparallel-dropout", "", /*inCode=*/true);
}

// The same on TFC_DEVICE=cpu-copied: the device path's step (one buffer
// averaged on the device) feeds grad_step the same sample offset.
TEST(DataParallelDropout, CpuCopiedTwoRanksDrawOneProcesssMasks) {
  dropoutTwoRanksMatchOneProcess("dataparallel-dropout-copied", "-x TFC_DEVICE=cpu-copied ",
                                 /*inCode=*/false);
}

// Stopped after 2 epochs and resumed as 2 ranks again: the same bytes as
// one uninterrupted run (the exchange sums in a fixed order).
TEST_F(DataParallelTest, ResumesAcrossRanksToTheSameBytes) {
  writeReverseData(dir + "/data", {{"train", 64}, {"val", 16}, {"test", 16}});
  const std::string common = kMpirun + binary(8) + " train --epochs 4 --threads 1 --data " +
                             dir + "/data";
  CommandResult whole = run(common + " --run-dir " + dir + "/whole");
  ASSERT_EQ(whole.status, 0) << whole.output;
  CommandResult first = run(common + " --stop-after 2 --run-dir " + dir + "/parts");
  ASSERT_EQ(first.status, 0) << first.output;
  CommandResult rest = run(common + " --resume --run-dir " + dir + "/parts");
  ASSERT_EQ(rest.status, 0) << rest.output;
  EXPECT_EQ(fileBytes(dir + "/whole/last.safetensors"), fileBytes(dir + "/parts/last.safetensors"));
  EXPECT_EQ(fileBytes(dir + "/whole/metrics.jsonl"), fileBytes(dir + "/parts/metrics.jsonl"));
}

/// The pid of rank `rank` of a run of `binary` (from /proc/PID/environ), or 0.
pid_t rankPid(const std::string &binary, int rank) {
  DIR *proc = opendir("/proc");
  if (!proc)
    return 0;
  pid_t found = 0;
  std::string want = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  while (dirent *entry = readdir(proc)) {
    pid_t pid = pid_t(std::atoi(entry->d_name));
    if (pid <= 0)
      continue;
    std::string base = "/proc/" + std::to_string(pid);
    std::string cmdline = fileBytes(base + "/cmdline");
    if (cmdline.rfind(binary, 0) != 0)
      continue;
    std::string environ = fileBytes(base + "/environ");
    std::stringstream vars(environ);
    for (std::string var; std::getline(vars, var, '\0');)
      if (var == want)
        found = pid;
  }
  closedir(proc);
  return found;
}

/// Starts a long run in the background, sends `signal` to rank 1 once both
/// ranks train, and returns mpirun's exit status and the seconds it took to
/// end after the signal (-1, -1 if it never started or outlived 60 s).
std::pair<int, double> signalRankOne(const std::string &dir, const std::string &binary,
                                     int signal) {
  std::string log = dir + "/run.log", status = dir + "/status";
  std::string command = "(" + kMpirun + binary + " train --epochs 200 --threads 1 --data " +
                        dir + "/data --run-dir " + dir + "/run > " + log +
                        " 2>&1; echo $? > " + status + ") > /dev/null 2>&1 &";
  if (run(command).status != 0)
    return {-1, -1};
  pid_t pid = 0;
  for (int i = 0; i < 600 && !pid; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fileBytes(log).find("step ") != std::string::npos)
      pid = rankPid(binary, 1);
  }
  if (!pid)
    return {-1, -1};
  auto start = std::chrono::steady_clock::now();
  kill(pid, signal);
  for (int i = 0; i < 1200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::string text = fileBytes(status);
    if (!text.empty())
      return {std::atoi(text.c_str()),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
  }
  return {-1, -1};
}

TEST_F(DataParallelTest, AKilledRankStopsTheOthers) {
  writeReverseData(dir + "/data", {{"train", 4096}, {"val", 16}, {"test", 16}});
  auto [status, seconds] = signalRankOne(dir, binary(8), SIGKILL);
  ASSERT_GE(seconds, 0) << fileBytes(dir + "/run.log");
  EXPECT_NE(status, 0);
  EXPECT_LT(seconds, 20) << fileBytes(dir + "/run.log");
  // Nothing half-written: a checkpoint, if any, reads back.
  if (!fileBytes(dir + "/run/last.safetensors").empty())
    checkpoint(dir + "/run/last.safetensors");
}

// SIGTERM to one rank: every rank stops after the same step, rank 0 saves,
// and the run resumes from there.
TEST_F(DataParallelTest, ASignalledRankStopsAllWithACheckpoint) {
  writeReverseData(dir + "/data", {{"train", 4096}, {"val", 16}, {"test", 16}});
  auto [status, seconds] = signalRankOne(dir, binary(8), SIGTERM);
  ASSERT_GE(seconds, 0) << fileBytes(dir + "/run.log");
  EXPECT_LT(seconds, 20);
  EXPECT_NE(status, 0);
  std::string log = fileBytes(dir + "/run.log");
  EXPECT_NE(log.find("SIGTERM at step"), std::string::npos) << log;
  auto saved = checkpoint(dir + "/run/last.safetensors");
  ASSERT_TRUE(saved.count("train.step")) << log;
  // One epoch past the saved step's (256 steps an epoch: 4,096 samples, 2
  // ranks of 8): a fast machine trains past the first before the signal.
  const Tensor &step = saved["train.step"];
  const int64_t steps = step.dtype == DType::I32 ? step.i32()[0] : int64_t(step.f32()[0]);
  const std::string epochs = std::to_string(steps / 256 + 1);
  CommandResult resumed =
      run(kMpirun + binary(8) + " train --epochs " + epochs + " --threads 1 --resume --data " +
          dir + "/data --run-dir " + dir + "/run");
  EXPECT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming"), std::string::npos) << resumed.output;
}

// A rank that hangs (stopped, not dead: mpirun sees nothing) would hold the
// others in the exchange forever; the watchdog ends the job after
// TFC_MPI_TIMEOUT seconds.
TEST_F(DataParallelTest, AHangingRankTimesOut) {
  writeReverseData(dir + "/data", {{"train", 4096}, {"val", 16}, {"test", 16}});
  std::string log = dir + "/run.log", status = dir + "/status";
  ASSERT_EQ(run("(" + kMpirun + "-x TFC_MPI_TIMEOUT=3 " + binary(8) +
                " train --epochs 200 --threads 1 --data " + dir + "/data --run-dir " + dir +
                "/run > " + log + " 2>&1; echo $? > " + status + ") > /dev/null 2>&1 &")
                .status,
            0);
  pid_t pid = 0;
  for (int i = 0; i < 600 && !pid; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fileBytes(log).find("step ") != std::string::npos)
      pid = rankPid(binary(8), 1);
  }
  ASSERT_NE(pid, 0) << fileBytes(log);
  kill(pid, SIGSTOP);
  auto start = std::chrono::steady_clock::now();
  std::string text;
  for (int i = 0; i < 600 && text.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    text = fileBytes(status);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  kill(pid, SIGKILL); // if mpirun left it behind
  ASSERT_FALSE(text.empty()) << "still running after 30 s: " << fileBytes(log);
  EXPECT_NE(std::atoi(text.c_str()), 0);
  EXPECT_LT(seconds, 15);
  EXPECT_NE(fileBytes(log).find("TFC_MPI_TIMEOUT"), std::string::npos) << fileBytes(log);
}

TEST_F(DataParallelTest, InfoShowsTheRanks) {
  CommandResult r = run(kMpirun + binary(8) + " info");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("ranks: 2 (batch 8 a rank, a global batch of 16)"), std::string::npos)
      << r.output;
  // Rank 0's alone.
  EXPECT_EQ(r.output.find("ranks: 2", r.output.find("ranks: 2") + 1), std::string::npos) << r.output;
  CommandResult single = run(binary(8) + " info");
  EXPECT_NE(single.output.find("ranks: 1 (batch 8 a rank, a global batch of 8)"), std::string::npos)
      << single.output;
}

} // namespace
