//===- RobustnessTest.cpp - a compiled model never loses work or lies -----===//
//
// The command line and the training loop of a compiled binary, end to end,
// on a tiny model (16 steps an epoch, about a millisecond each):
//  - exit codes: 2 for any command line that does not parse, in every
//    command (CLI11's own are 101 to 130), 0 for --help;
//  - --threads above the cap is a usage error, and a thread the system
//    refuses is an error message, not an abort;
//  - a run directory belongs to one `train` (RUN_DIR/.lock): a second exits 1
//    naming the first's pid, and the lock dies with its process;
//  - no checkpoint ever holds a NaN or an infinity, and the message of a
//    non-finite stop names the last good checkpoint (or that none exists);
//  - SIGTERM stops like Ctrl-C (checkpoint, 143) and a resumed run equals a
//    straight one bitwise, metrics.jsonl included; Ctrl-C during validation
//    or the test evaluation is honoured between batches (130);
//  - --resume cuts metrics.jsonl back to its checkpoint, so a failed
//    checkpoint write or a torn line leaves no duplicate or broken line;
//  - eval reads only the splits it evaluates.
// Every wait is for a state (a line of output, a lock file), never a time.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace tfc;
using namespace tfc::e2e;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const std::string kTfc = TFC_BINARY;


bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void appendFile(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary | std::ios::app);
  f << text;
}

/// The reverse task at seq 8, tiny: 16 steps an epoch at batch 32.
std::string tinyModel(const std::string &name, int64_t val, int64_t test) {
  return "model " + name + R"( {
  param classes = 10
  param seq = 8
  param dim = 16
  input tokens: i32[batch, seq]
  input labels: i32[batch, seq]
  let x = linear(one_hot(tokens, classes), dim, name: "input_net")
  x = x + positional_encoding(seq, dim)
  x = encoder(x, layers: 1, heads: 1, ffn: dim, dropout: 0.0, norm: "post")
  let logits = linear(x, classes, name: "output")
  loss cross_entropy(logits, labels)
  metric accuracy = mean(argmax(logits, axis: -1) == labels)
  output logits
}
train )" + name + R"( {
  data reverse_sequences(classes: 10, seq: 8, train: 512, val: )" +
         std::to_string(val) + ", test: " + std::to_string(test) + R"()
  batch 32
  epochs 3
  optimizer adam(lr: 5e-3)
  seed 1
}
)";
}

/// Samples of the tiny model's task as .npy: DIR/SPLIT/{tokens,labels}.npy.
void writeSplit(const std::string &dir, const std::string &split, int64_t n) {
  std::mt19937 rng(7);
  std::string d = dir + "/" + split;
  ASSERT_EQ(run("mkdir -p " + d).status, 0);
  rt::Tensor tokens(rt::DType::I32, {n, 8}), labels(rt::DType::I32, {n, 8});
  for (int64_t s = 0; s < n; ++s)
    for (int64_t j = 0; j < 8; ++j)
      tokens.i32()[s * 8 + j] = labels.i32()[s * 8 + 7 - j] = int32_t(rng() % 10);
  std::string error;
  ASSERT_TRUE(rt::writeNpy(d + "/tokens.npy", tokens, error)) << error;
  ASSERT_TRUE(rt::writeNpy(d + "/labels.npy", labels, error)) << error;
}

/// Every float in a safetensors file is finite (train.best may be NaN: no
/// validation score yet).
void expectFinite(const std::string &path) {
  std::vector<std::pair<std::string, rt::Tensor>> tensors;
  std::string error;
  ASSERT_TRUE(rt::readSafetensors(path, tensors, error)) << error;
  for (auto &[name, t] : tensors) {
    if (t.dtype != rt::DType::F32 || name == "train.best")
      continue;
    for (int64_t e = 0; e < t.numel(); ++e) {
      ASSERT_TRUE(std::isfinite(t.f32()[e])) << path << ": " << name << "[" << e << "]";
    }
  }
}

/// A child process with stdout and stderr on one pipe, read as it runs.
class Child {
public:
  /// `pipeBytes` > 0 shrinks the pipe, so the child blocks on its output
  /// once it is that far ahead of what readUntil has read.
  Child(const std::vector<std::string> &argv, int pipeBytes = 0) {
    int fds[2];
    if (::pipe(fds) != 0)
      return;
    if (pipeBytes > 0)
      ::fcntl(fds[1], F_SETPIPE_SZ, pipeBytes);
    pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 1);
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      ::close(fds[1]);
      std::vector<char *> args;
      for (const std::string &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    out = fds[0];
  }
  ~Child() {
    if (pid > 0 && !reaped) {
      ::kill(pid, SIGKILL);
      wait();
    }
    if (out >= 0)
      ::close(out);
  }

  /// Reads until the output contains `text` (true) or ends (false).
  bool readUntil(const std::string &text) {
    while (output.find(text) == std::string::npos)
      if (!readSome())
        return false;
    return true;
  }
  /// Reads to the end and reaps: the exit status, or 1000 + the signal.
  int wait() {
    while (readSome()) {
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    reaped = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
  }

  pid_t pid = -1;
  std::string output;

private:
  int out = -1;
  bool reaped = false;
  bool readSome() {
    char buffer[4096];
    ssize_t n;
    do
      n = ::read(out, buffer, sizeof buffer);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
      return false;
    output.append(buffer, size_t(n));
    return true;
  }
};

class Robustness : public ::testing::Test {
protected:
  static std::string dir, tiny, oneStep, bigVal, bigTest, data;
  static void SetUpTestSuite() {
    dir = makeTempDir("tfc-robust");
    ASSERT_FALSE(dir.empty());
    auto compile = [](const std::string &name, int64_t val, int64_t test,
                      const std::string &flags = "") {
      std::string source = dir + "/" + name + ".tf", binary = dir + "/" + name;
      std::ofstream(source) << tinyModel(name, val, test);
      CommandResult r = run(kTfc + " compile " + source + " -o " + binary + " " + flags);
      EXPECT_EQ(r.status, 0) << r.output;
      return binary;
    };
    tiny = compile("tiny", 256, 256);
    oneStep = compile("one_step", 256, 256, "--batch 512"); // one step an epoch
    // Evaluations long enough (a second or more) that a signal sent when
    // the child says it starts one lands inside it.
    bigVal = compile("big_val", 500000, 0);
    bigTest = compile("big_test", 0, 500000);
    data = dir + "/data";
    writeSplit(data, "train", 512);
  }
  /// `binary train --run-dir DIR/runDir flags`.
  CommandResult train(const std::string &runDir, const std::string &flags,
                      const std::string &binary = tiny) {
    return run(binary + " train --run-dir " + dir + "/" + runDir + " " + flags);
  }
};
std::string Robustness::dir, Robustness::tiny, Robustness::oneStep, Robustness::bigVal,
    Robustness::bigTest, Robustness::data;

//===----------------------------------------------------------------------===//
// The command line
//===----------------------------------------------------------------------===//

// Any command line that does not parse exits 2 (was 104 to 109, CLI11's own
// codes), in every command; --help exits 0.
TEST_F(Robustness, UsageErrorsExit2InEveryCommand) {
  for (const std::string &args :
       {std::string(""), std::string("frobnicate"), std::string("--bogus info"),
        std::string("info --bogus"), std::string("init"), std::string("init --out"),
        std::string("init --seed x --out p.safetensors"), std::string("predict --output-dir d"),
        std::string("train --epochs x"), std::string("train --epochs 0"),
        std::string("train --stop-after -1"), std::string("train --lr"),
        std::string("eval"), std::string("eval --checkpoint c --split train"),
        std::string("attention --checkpoint c"), std::string("run"),
        std::string("bench --steps 0"), std::string("bench --entry nothing"),
        std::string("--threads -1 info"), std::string("--threads x info"),
        std::string("--threads 99999999999 info")}) {
    CommandResult r = run(tiny + " " + args);
    EXPECT_EQ(r.status, 2) << "`" << args << "`: " << r.output;
  }
  for (const std::string &args : {std::string("--help"), std::string("train --help"),
                                  std::string("eval --help"), std::string("bench --help")}) {
    CommandResult r = run(tiny + " " + args);
    EXPECT_EQ(r.status, 0) << "`" << args << "`: " << r.output;
  }
}

// --threads above the cap (4 x the hardware threads, at least 256) is a usage
// error before anything runs; 50,000 used to abort (std::system_error, exit
// 134) after seconds and hundreds of MB, before or after the command.
TEST_F(Robustness, TooManyThreadsIsAUsageError) {
  std::string inputs = dir + "/threads-in";
  writeSplit(inputs, "x", 5);
  std::string predict = " predict --input tokens=" + inputs + "/x/tokens.npy --output-dir " + dir +
                        "/threads-out";
  for (const std::string &command :
       {tiny + " --threads 50000" + predict, tiny + predict + " --threads 50000"}) {
    CommandResult r = run(command);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("--threads 50000 is above the limit of "));
  }
  EXPECT_FALSE(exists(dir + "/threads-out"));
}

// A thread the system refuses (here: no address space for its stack) is an
// error naming it, exit 1, where it was an uncaught std::system_error.
TEST_F(Robustness, RefusedThreadIsAnErrorNotAnAbort) {
  std::string inputs = dir + "/refused-in";
  writeSplit(inputs, "x", 5);
  CommandResult r = run("bash -c 'ulimit -s 8192 && ulimit -v 200000 && exec " + tiny +
                        " --threads 200 predict --input tokens=" + inputs +
                        "/x/tokens.npy --output-dir " + dir + "/refused-out'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: --threads 200: the system refused a thread after "));
  EXPECT_FALSE(exists(dir + "/refused-out"));
}

// A model too large for the memory it is given ends in one line, exit 1:
// 1.6 GB of parameters under a 1 GB address space (it was an uncaught
// std::bad_alloc, exit 134). `info` needs no parameters and still works.
TEST_F(Robustness, OutOfMemoryIsAnErrorNotAnAbort) {
  std::ofstream(dir + "/huge.tf") << R"(model huge {
  param vocab = 25000000
  input ids: i32[batch, 4]
  output e = embedding(ids, vocab, 16)
}
)";
  CommandResult compiled = run(kTfc + " compile " + dir + "/huge.tf --batch 1 -o " + dir + "/huge");
  ASSERT_EQ(compiled.status, 0) << compiled.output;
  auto limited = [&](const std::string &args) {
    return run("bash -c 'ulimit -v 1000000 && exec " + dir + "/huge --threads 1 " + args + "'");
  };
  CommandResult info = limited("info");
  EXPECT_EQ(info.status, 0) << info.output;
  CommandResult init = limited("init --out " + dir + "/huge.safetensors");
  EXPECT_EQ(init.status, 1) << init.output;
  EXPECT_THAT(init.output, HasSubstr("error: out of memory: model 'huge' needs more"));
  EXPECT_FALSE(exists(dir + "/huge.safetensors"));
}

// eval reads only the splits it evaluates: no train/ needed (it used to
// refuse to run without one), and a broken split it does not evaluate is
// not read.
TEST_F(Robustness, EvalNeedsOnlyTheSplitsItEvaluates) {
  std::string params = dir + "/eval-params.safetensors", evalData = dir + "/eval-data";
  ASSERT_EQ(run(tiny + " init --seed 3 --out " + params).status, 0);
  writeSplit(evalData, "val", 40);
  writeSplit(evalData, "test", 50);
  CommandResult all = run(tiny + " eval --checkpoint " + params + " --data " + evalData);
  EXPECT_EQ(all.status, 0) << all.output;
  EXPECT_THAT(all.output, HasSubstr("val (40 samples): loss "));
  EXPECT_THAT(all.output, HasSubstr("test (50 samples): loss "));

  std::ofstream(evalData + "/val/tokens.npy") << "not an array";
  CommandResult test = run(tiny + " eval --checkpoint " + params + " --data " + evalData +
                           " --split test");
  EXPECT_EQ(test.status, 0) << test.output;
  EXPECT_THAT(test.output, HasSubstr("test (50 samples): loss "));
  // The split it does evaluate is still read and checked.
  CommandResult val = run(tiny + " eval --checkpoint " + params + " --data " + evalData +
                          " --split val");
  EXPECT_EQ(val.status, 1) << val.output;
  EXPECT_THAT(val.output, HasSubstr("tokens.npy"));
}

//===----------------------------------------------------------------------===//
// One run directory, one process
//===----------------------------------------------------------------------===//

// A second `train` into a directory a first one is training in exits 1
// naming the first's pid (both used to exit 0, metrics.jsonl interleaved and
// the checkpoints the second's), with or without --resume, before it writes
// anything; once the first is gone (even by SIGKILL) the directory is free.
TEST_F(Robustness, RunDirectoryBelongsToOneProcess) {
  std::string runDir = dir + "/locked";
  Child first({tiny, "train", "--run-dir", runDir, "--epochs", "100000"});
  ASSERT_GT(first.pid, 0);
  ASSERT_TRUE(first.readUntil("epoch 2/")) << first.output; // the lock is older than that
  EXPECT_EQ(fileBytes(runDir + "/.lock"), std::to_string(first.pid) + "\n");
  for (const std::string &flags : {std::string("--epochs 1"), std::string("--epochs 3 --resume")}) {
    CommandResult second = run(tiny + " train --run-dir " + runDir + " " + flags);
    EXPECT_EQ(second.status, 1) << second.output;
    EXPECT_THAT(second.output, HasSubstr("is in use by another `train` (pid " +
                                         std::to_string(first.pid)));
    EXPECT_THAT(second.output, Not(HasSubstr("training tiny")));
  }
  // Only the first writes metrics.jsonl: every line is complete, and its
  // steps only grow (a truncating or interleaving second would break that).
  ::kill(first.pid, SIGKILL);
  EXPECT_EQ(first.wait(), 1000 + SIGKILL);
  std::ifstream metrics(runDir + "/metrics.jsonl");
  std::string line;
  int64_t previous = 0;
  while (std::getline(metrics, line) && !metrics.eof()) {
    size_t at = line.find("\"step\": ");
    ASSERT_NE(at, std::string::npos) << line;
    int64_t step = std::stoll(line.substr(at + 8));
    EXPECT_GE(step, previous) << line;
    previous = step;
  }
  EXPECT_GT(previous, 0);
  // The lock died with its process; the stale .lock file locks nothing.
  CommandResult next = run(tiny + " train --run-dir " + runDir + " --epochs 1");
  EXPECT_EQ(next.status, 0) << next.output;
}

//===----------------------------------------------------------------------===//
// NaN and infinity
//===----------------------------------------------------------------------===//

// --lr nan: the first step's loss is finite but its update is NaN, so the
// second loss is NaN; the run stops and writes no checkpoint (it used to save
// the NaN parameters as "the parameters before that step").
TEST_F(Robustness, NanBeforeAnyCheckpointWritesNone) {
  CommandResult r = train("nan-first", "--epochs 2 --lr nan");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the loss is NaN at step 2 (epoch 1); stopping without saving"));
  EXPECT_THAT(r.output, HasSubstr("This run has no checkpoint yet, so none is good."));
  EXPECT_FALSE(exists(dir + "/nan-first/last.safetensors"));
  EXPECT_FALSE(exists(dir + "/nan-first/best.safetensors"));
}

// After a good epoch, an infinite learning rate: last and best stay the good
// epoch's, byte for byte, and the message names them with their step.
TEST_F(Robustness, NanAfterACheckpointKeepsTheGoodOne) {
  std::string runDir = dir + "/nan-later";
  ASSERT_EQ(train("nan-later", "--epochs 3 --stop-after 1").status, 0);
  std::string last = fileBytes(runDir + "/last.safetensors"),
              best = fileBytes(runDir + "/best.safetensors");
  ASSERT_FALSE(last.empty());
  ASSERT_FALSE(best.empty());
  CommandResult r = train("nan-later", "--epochs 3 --resume --lr inf");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the loss is NaN at step 18 (epoch 2)"));
  EXPECT_THAT(r.output, HasSubstr("The last good checkpoint is " + runDir +
                                  "/last.safetensors, at step 16, the end of epoch 1"));
  EXPECT_EQ(fileBytes(runDir + "/last.safetensors"), last);
  EXPECT_EQ(fileBytes(runDir + "/best.safetensors"), best);
  expectFinite(runDir + "/last.safetensors");
  // It resumes from there with a sane learning rate.
  CommandResult resumed = train("nan-later", "--epochs 3 --resume");
  EXPECT_EQ(resumed.status, 0) << resumed.output;
}

// One step an epoch: the NaN update is the epoch's last step, and its loss
// was finite. The parameters are checked before the epoch's checkpoints,
// which are not written (best and last used to get the NaNs).
TEST_F(Robustness, NonFiniteParametersAreNeverSaved) {
  CommandResult r = train("nan-epoch-end", "--epochs 2 --lr nan", oneStep);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("holds a NaN or an infinity after step 1 (the end of epoch 1), "
                                  "though every loss was finite; stopping without saving"));
  EXPECT_FALSE(exists(dir + "/nan-epoch-end/last.safetensors"));
  EXPECT_FALSE(exists(dir + "/nan-epoch-end/best.safetensors"));
  EXPECT_EQ(fileBytes(dir + "/nan-epoch-end/metrics.jsonl"), "");
}

//===----------------------------------------------------------------------===//
// Signals and resume
//===----------------------------------------------------------------------===//

// SIGTERM acts as Ctrl-C: a checkpoint mid-epoch, exit 143 (it used to kill
// the run with nothing saved). The resumed run then equals a straight one
// bitwise: checkpoints and metrics.jsonl, whose train line of the cut epoch
// needs the sums from before the cut (saved in the checkpoint).
TEST_F(Robustness, SigtermSavesAndTheResumedRunEqualsAStraightOne) {
  ASSERT_EQ(train("term-straight", "--epochs 8").status, 0);
  std::string runDir = dir + "/term";
  // A small pipe keeps the child within a few epochs of what is read here,
  // so the signal lands mid-run whatever the machine's speed.
  Child child({tiny, "train", "--run-dir", runDir, "--epochs", "8"}, 4096);
  ASSERT_GT(child.pid, 0);
  ASSERT_TRUE(child.readUntil("epoch 2/8  step 5/16")) << child.output;
  ::kill(child.pid, SIGTERM);
  EXPECT_EQ(child.wait(), 143) << child.output;
  // Between steps ("SIGTERM at step N") or, rarely, in an epoch's validation.
  EXPECT_THAT(child.output, HasSubstr("SIGTERM "));
  EXPECT_THAT(child.output, HasSubstr("saved " + runDir + "/last.safetensors"));
  expectFinite(runDir + "/last.safetensors");
  CommandResult resumed = train("term", "--epochs 8 --resume");
  EXPECT_EQ(resumed.status, 0) << resumed.output;
  for (const char *file : {"last.safetensors", "best.safetensors", "metrics.jsonl"})
    EXPECT_EQ(fileBytes(runDir + "/" + file), fileBytes(dir + "/term-straight/" + file)) << file;
}

// Ctrl-C during the validation is honoured between its batches (it used to
// wait for the whole split): the end of the epoch is saved with its
// validation pending, and --resume runs that validation first, so the run
// ends as a straight one does.
TEST_F(Robustness, SigintDuringValidationIsHonouredAndResumed) {
  std::string runDir = dir + "/int-val";
  Child child({bigVal, "train", "--run-dir", runDir, "--epochs", "1"});
  ASSERT_GT(child.pid, 0);
  ASSERT_TRUE(child.readUntil("epoch 1/1  train: ")) << child.output; // the validation starts
  ::kill(child.pid, SIGINT);
  EXPECT_EQ(child.wait(), 130) << child.output;
  EXPECT_THAT(child.output, HasSubstr("SIGINT during the validation of epoch 1: saved " + runDir +
                                      "/last.safetensors at step 16, the end of epoch 1"));
  // The epoch's train line is there; its validation line is not.
  std::string metrics = fileBytes(runDir + "/metrics.jsonl");
  EXPECT_THAT(metrics, HasSubstr("\"split\": \"train\""));
  EXPECT_THAT(metrics, Not(HasSubstr("\"split\": \"val\"")));
  expectFinite(runDir + "/last.safetensors");

  CommandResult resumed = train("int-val", "--epochs 1 --resume", bigVal);
  EXPECT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("the validation that was stopped"));
  ASSERT_EQ(train("int-val-straight", "--epochs 1", bigVal).status, 0);
  for (const char *file : {"last.safetensors", "best.safetensors", "metrics.jsonl"})
    EXPECT_EQ(fileBytes(runDir + "/" + file), fileBytes(dir + "/int-val-straight/" + file))
        << file;
}

// Ctrl-C during the final test evaluation is honoured (it used to be
// ignored, exit 0): exit 130, saying training is saved and how to score
// the test split.
TEST_F(Robustness, SigintDuringTheTestEvaluationIsHonoured) {
  std::string runDir = dir + "/int-test";
  Child child({bigTest, "train", "--run-dir", runDir, "--epochs", "1"});
  ASSERT_GT(child.pid, 0);
  ASSERT_TRUE(child.readUntil("test (")) << child.output; // the test evaluation starts
  ::kill(child.pid, SIGINT);
  EXPECT_EQ(child.wait(), 130) << child.output;
  EXPECT_THAT(child.output, HasSubstr("SIGINT during the test evaluation: training is complete "
                                      "and saved in " + runDir + " (last.safetensors at step 16"));
  EXPECT_THAT(child.output, HasSubstr("eval --checkpoint " + runDir + "/last.safetensors --split test"));
  EXPECT_THAT(fileBytes(runDir + "/metrics.jsonl"), Not(HasSubstr("\"split\": \"test\"")));
  expectFinite(runDir + "/last.safetensors");
  expectFinite(runDir + "/best.safetensors");
}

// A checkpoint write that fails after the epoch's metrics line is written
// (here best.safetensors is a directory), then a torn line: --resume keeps
// only the complete lines at or before the checkpoint's step, so the final
// metrics.jsonl equals a straight run's (it used to repeat epoch 2's line
// and keep the torn one).
TEST_F(Robustness, ResumeKeepsMetricsInStepWithTheCheckpoint) {
  ASSERT_EQ(train("metrics-straight", "--data " + data + " --epochs 3").status, 0);
  std::string runDir = dir + "/metrics";
  ASSERT_EQ(train("metrics", "--data " + data + " --epochs 3 --stop-after 1").status, 0);
  ASSERT_EQ(run("rm " + runDir + "/best.safetensors && mkdir -p " + runDir +
                "/best.safetensors/blocker").status, 0);
  CommandResult failed = train("metrics", "--data " + data + " --epochs 3 --resume");
  EXPECT_EQ(failed.status, 1) << failed.output;
  EXPECT_THAT(failed.output, HasSubstr("best.safetensors"));
  EXPECT_THAT(fileBytes(runDir + "/metrics.jsonl"), HasSubstr("\"step\": 32")); // written, not saved
  ASSERT_EQ(run("rm -r " + runDir + "/best.safetensors").status, 0);
  appendFile(runDir + "/metrics.jsonl", "{\"epoch\": 2, \"step\": 3");
  CommandResult resumed = train("metrics", "--data " + data + " --epochs 3 --resume");
  EXPECT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("dropped 2 line(s)"));
  EXPECT_EQ(fileBytes(runDir + "/metrics.jsonl"), fileBytes(dir + "/metrics-straight/metrics.jsonl"));
  EXPECT_EQ(fileBytes(runDir + "/last.safetensors"),
            fileBytes(dir + "/metrics-straight/last.safetensors"));
}

} // namespace
