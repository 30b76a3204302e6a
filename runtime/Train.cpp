//===- Train.cpp - training and evaluation of a compiled model ------------===//
//
// Determinism: the sample order of epoch e is a function of (seed, e), the
// dropout seed of step s a function of (seed, s), and the compiled step is
// bitwise reproducible for any thread count. So a run is a pure function of
// its seed, and a checkpoint needs only parameters, optimizer state and the
// step counter to continue exactly where it stopped (even mid-epoch).
//
//===----------------------------------------------------------------------===//

#include "runtime/Train.h"
#include "runtime/Datasets.h"
#include "runtime/Philox.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

namespace tfc::rt {
namespace {

std::atomic<bool> interrupted{false};
extern "C" void onInterrupt(int) { interrupted.store(true); }

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

/// The dropout seed of step `step`: Philox of (seed, step), 31 bits.
int32_t stepSeed(uint64_t seed, int64_t step) {
  auto r = philox4x32({uint32_t(step), uint32_t(uint64_t(step) >> 32), 0x5EED, 0},
                      {uint32_t(seed), uint32_t(seed >> 32)});
  return int32_t(r[0] & 0x7fffffffu);
}

Tensor scalarF32(float v) {
  Tensor t(DType::F32, {});
  t.f32()[0] = v;
  return t;
}

std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  int64_t s = int64_t(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", (long long)(s / 3600),
                  (long long)(s / 60 % 60), (long long)(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
  return buf;
}

/// Named scalars (loss first, then metrics in entry order).
using Scores = std::vector<std::pair<std::string, double>>;

std::string scoresText(const Scores &scores) {
  std::string text;
  for (auto &[name, value] : scores) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.4f", text.empty() ? "" : "  ", name.c_str(), value);
    text += buf;
  }
  return text;
}

std::string scoresJson(int64_t epoch, int64_t step, const std::string &split,
                       const Scores &scores) {
  std::string line = "{\"epoch\": " + std::to_string(epoch) + ", \"step\": " +
                     std::to_string(step) + ", \"split\": \"" + split + "\"";
  for (auto &[name, value] : scores)
    line += ", \"" + name + "\": " + jsonNumber(value);
  return line + "}";
}

/// The dataset the train block (or --data) names.
bool loadDataset(const Manifest &m, const std::string &dataDir, uint64_t seed, Dataset &data,
                 std::string &error) {
  TrainCallSpec spec;
  if (!dataDir.empty()) {
    spec.name = "npy";
    spec.args["dir"] = dataDir;
  } else if (m.train.data) {
    spec = *m.train.data;
  } else {
    error = "model '" + m.model + "' has no `data` in a train block; give --data DIR "
            "(DIR/train/INPUT.npy, ...)";
    return false;
  }
  DataArgs args(spec.args.begin(), spec.args.end());
  if (!makeDataset(spec.name, args, seed, m.inputs, data, error))
    return false;
  for (const std::string &notice : data.notices)
    std::fprintf(stderr, "note: %s\n", notice.c_str());
  return true;
}

/// Evaluates the `evaluate` entry over every sample of `split`: the last
/// partial batch is padded and masked, so each sample counts exactly once.
bool evaluateSplit(Model &model, const Split &split, Scores &scores, std::string &error) {
  const Manifest &m = model.manifest();
  const EntrySpec *entry = m.entry("evaluate");
  if (!entry) {
    error = "model '" + m.model + "' has no evaluate entry (it declares no loss)";
    return false;
  }
  std::vector<Tensor> batch, results;
  Tensor mask(DType::F32, {m.batch});
  std::vector<double> sums(entry->results.size(), 0.0);
  for (int64_t begin = 0; begin < split.samples; begin += m.batch) {
    int64_t count = std::min(m.batch, split.samples - begin);
    fillBatch(split, m.inputs, nullptr, begin, count, batch);
    for (int64_t i = 0; i < m.batch; ++i)
      mask.f32()[i] = i < count ? 1.0f : 0.0f;
    std::map<std::string, const Tensor *> feeds;
    for (size_t i = 0; i < m.inputs.size(); ++i)
      feeds[m.inputs[i].name] = &batch[i];
    feeds["mask:sample_mask"] = &mask;
    if (!model.run(*entry, feeds, results, error))
      return false;
    // Each result is a masked mean over the batch's real samples.
    for (size_t r = 0; r < results.size(); ++r)
      sums[r] += double(results[r].f32()[0]) * double(count);
  }
  scores.clear();
  for (size_t r = 0; r < entry->results.size(); ++r)
    scores.push_back({entry->results[r].name, sums[r] / double(std::max<int64_t>(split.samples, 1))});
  return true;
}

/// What `--resume` needs besides the parameters, saved beside them.
constexpr const char *kStepKey = "train.step";
constexpr const char *kBestKey = "train.best";
constexpr const char *kStatePrefix = "optimizer.";

class Trainer {
public:
  Trainer(Model &model, const TrainOptions &options) : model(model), options(options) {}

  int run();

private:
  Model &model;
  const TrainOptions &options;
  const Manifest &m = model.manifest();
  const EntrySpec *stepEntry = nullptr;
  std::map<std::string, Tensor> state; // optimizer buffers by name
  int64_t step = 0;
  double best = NAN;
  std::string runDir;

  bool saveCheckpoint(const std::string &path, int64_t atStep, std::string &error);
  bool loadCheckpoint(const std::string &path, std::string &error);
  bool saveBest(std::string &error) {
    return model.saveParams(runDir + "/best.safetensors", error);
  }
};

bool Trainer::saveCheckpoint(const std::string &path, int64_t atStep, std::string &error) {
  std::vector<std::pair<std::string, const Tensor *>> tensors;
  for (size_t i = 0; i < model.params().size(); ++i)
    tensors.push_back({m.params[i].name, &model.params()[i]});
  for (auto &[name, t] : state)
    tensors.push_back({kStatePrefix + name, &t});
  Tensor stepT = scalarF32(float(atStep)), bestT = scalarF32(float(best));
  tensors.push_back({kStepKey, &stepT});
  tensors.push_back({kBestKey, &bestT});
  return writeSafetensors(path, tensors, error);
}

bool Trainer::loadCheckpoint(const std::string &path, std::string &error) {
  if (!model.loadParams(path, error))
    return false;
  std::vector<std::pair<std::string, Tensor>> tensors;
  if (!readSafetensors(path, tensors, error))
    return false;
  std::map<std::string, Tensor *> byName;
  for (auto &[name, t] : tensors)
    byName[name] = &t;
  auto scalar = [&](const char *key, double &out) {
    auto it = byName.find(key);
    if (it == byName.end() || it->second->dtype != DType::F32 || it->second->numel() != 1) {
      error = "'" + path + "' is not a training checkpoint (no scalar '" + key +
              "'); --resume needs RUN_DIR/last.safetensors";
      return false;
    }
    out = it->second->f32()[0];
    return true;
  };
  double stepValue;
  if (!scalar(kStepKey, stepValue) || !scalar(kBestKey, best))
    return false;
  step = int64_t(stepValue);
  for (auto &[name, t] : state) {
    auto it = byName.find(kStatePrefix + name);
    if (it == byName.end() || it->second->shape != t.shape || it->second->dtype != t.dtype) {
      error = "checkpoint '" + path + "' lacks optimizer state '" + name + "' of shape " +
              shapeString(t.shape) + " (trained with another optimizer?)";
      return false;
    }
    t = std::move(*it->second);
  }
  return true;
}

int Trainer::run() {
  stepEntry = m.entry("train_step");
  if (!stepEntry)
    return fail("model '" + m.model + "' declares no loss, so it cannot be trained");
  if (options.batch && *options.batch != m.batch)
    return fail("this binary is compiled for batch " + std::to_string(m.batch) +
                "; recompile with `tfc compile --batch " + std::to_string(*options.batch) + "`");
  int64_t epochs = options.epochs.value_or(m.train.epochs.value_or(1));
  uint64_t seed = uint64_t(options.seed.value_or(m.train.seed.value_or(0)));
  double lr = options.lr.value_or(m.train.optimizer ? m.train.optimizer->number("lr", 1e-3) : 1e-3);
  if (epochs < 1)
    return fail("--epochs must be at least 1");
  runDir = options.runDir.empty() ? "runs/" + m.model : options.runDir;
  std::string error;

  Dataset data;
  if (!loadDataset(m, options.dataDir, seed, data, error))
    return fail(error);
  const Split &train = data.train;
  int64_t stepsPerEpoch = train.samples / m.batch; // drop_last, as the seeds train
  if (stepsPerEpoch == 0)
    return fail("the training split has " + std::to_string(train.samples) +
                " samples, fewer than one batch of " + std::to_string(m.batch));
  int64_t totalSteps = epochs * stepsPerEpoch;

  for (const TensorSpec &a : stepEntry->args)
    if (a.kind == "state")
      state[a.name] = Tensor(a.dtype, a.shape);
  std::error_code ec;
  std::filesystem::create_directories(runDir, ec);
  if (ec)
    return fail("cannot create run directory '" + runDir + "': " + ec.message());
  std::string last = runDir + "/last.safetensors";
  if (options.resume) {
    if (!loadCheckpoint(last, error))
      return fail(error);
    if (step >= totalSteps)
      return fail("the checkpoint is at step " + std::to_string(step) + " of " +
                  std::to_string(totalSteps) + ": nothing left to train (raise --epochs)");
    std::printf("resuming %s at step %lld (epoch %lld)\n", last.c_str(), (long long)step,
                (long long)(step / stepsPerEpoch + 1));
  } else {
    model.initParams(seed);
  }
  std::ofstream metrics(runDir + "/metrics.jsonl", options.resume ? std::ios::app : std::ios::trunc);
  if (!metrics)
    return fail("cannot write '" + runDir + "/metrics.jsonl'");

  std::printf("training %s: %lld samples, batch %lld, %lld epochs of %lld steps, lr %g, seed %llu\n",
              m.model.c_str(), (long long)train.samples, (long long)m.batch, (long long)epochs,
              (long long)stepsPerEpoch, lr, (unsigned long long)seed);
  std::fflush(stdout);

  // Feeds: one batch, the state buffers, the counters and hyperparameters.
  std::vector<Tensor> batch, results;
  Tensor stepT = scalarF32(0), lrT = scalarF32(float(lr)), totalT = scalarF32(float(totalSteps));
  Tensor seedT(DType::I32, {});
  std::map<std::string, const Tensor *> feeds;
  auto bindFeeds = [&] {
    feeds.clear();
    for (size_t i = 0; i < m.inputs.size(); ++i)
      feeds[m.inputs[i].name] = &batch[i];
    for (auto &[name, t] : state)
      feeds["state:" + name] = &t;
    feeds["step:step"] = &stepT;
    feeds["hyper:lr"] = &lrT;
    feeds["hyper:total_steps"] = &totalT;
    feeds["seed:seed"] = &seedT;
  };
  std::map<std::string, size_t> paramIndex;
  for (size_t i = 0; i < m.params.size(); ++i)
    paramIndex[m.params[i].name] = i;

  bool terminal = isatty(fileno(stdout));
  interrupted.store(false);
  auto previous = std::signal(SIGINT, onInterrupt);
  struct RestoreSignal {
    void (*handler)(int);
    ~RestoreSignal() { std::signal(SIGINT, handler); }
  } restore{previous};

  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto lastDraw = start - std::chrono::seconds(1);
  int64_t firstStep = step, epochsThisRun = 0;
  std::vector<int64_t> order;
  std::vector<double> sums;
  int64_t sumCount = 0;
  std::vector<std::string> metricNames;
  for (const TensorSpec &r : stepEntry->results)
    if (r.kind == "loss" || r.kind == "metric")
      metricNames.push_back(r.name);
  float currentLr = 0;

  for (; step < totalSteps; ++step) {
    int64_t epoch = step / stepsPerEpoch, inEpoch = step % stepsPerEpoch;
    if (order.empty() || inEpoch == 0)
      order = epochOrder(train.samples, seed, epoch);
    fillBatch(train, m.inputs, &order, inEpoch * m.batch, m.batch, batch);
    bindFeeds();
    stepT.f32()[0] = float(step);
    seedT.i32()[0] = stepSeed(seed, step);
    if (!model.run(*stepEntry, feeds, results, error))
      return fail(error);

    float loss = results[0].f32()[0];
    if (!std::isfinite(loss)) {
      // The parameters still hold the values before this step.
      std::string saveError;
      bool saved = saveCheckpoint(last, step, saveError);
      std::fprintf(stderr, "\nerror: the loss is %s at step %lld (epoch %lld); stopping. %s\n",
                   std::isnan(loss) ? "NaN" : "infinite", (long long)step + 1,
                   (long long)epoch + 1,
                   saved ? ("The parameters before that step are in " + last + ".").c_str()
                         : ("Saving them failed: " + saveError).c_str());
      return 1;
    }
    if (sums.empty())
      sums.assign(metricNames.size(), 0.0);
    size_t scoreIndex = 0;
    for (size_t r = 0; r < results.size(); ++r) {
      const TensorSpec &spec = stepEntry->results[r];
      if (spec.kind == "loss" || spec.kind == "metric")
        sums[scoreIndex++] += results[r].f32()[0];
      else if (spec.kind == "param")
        std::swap(model.params()[paramIndex.at(spec.name)], results[r]);
      else if (spec.kind == "state")
        std::swap(state.at(spec.name), results[r]);
      else if (spec.kind == "lr")
        currentLr = results[r].f32()[0];
    }
    ++sumCount;

    // Progress: a bar on a terminal, a line every tenth of an epoch otherwise.
    auto now = Clock::now();
    double elapsed = std::chrono::duration<double>(now - start).count();
    double rate = double(step + 1 - firstStep) / std::max(elapsed, 1e-9);
    double eta = double(totalSteps - step - 1) / rate;
    bool epochEnd = inEpoch == stepsPerEpoch - 1;
    char line[256];
    std::snprintf(line, sizeof line, "epoch %lld/%lld  step %lld/%lld  loss %.4f  lr %.2e  %.1f steps/s  ETA %s",
                  (long long)epoch + 1, (long long)epochs, (long long)inEpoch + 1,
                  (long long)stepsPerEpoch, loss, currentLr, rate, formatDuration(eta).c_str());
    if (terminal) {
      if (epochEnd || now - lastDraw > std::chrono::milliseconds(100)) {
        std::printf("\r%s\033[K", line);
        std::fflush(stdout);
        lastDraw = now;
      }
    } else if ((inEpoch + 1) % std::max<int64_t>(1, stepsPerEpoch / 10) == 0 && !epochEnd) {
      std::printf("%s\n", line);
      std::fflush(stdout);
    }

    if (epochEnd) {
      Scores trainScores;
      for (size_t i = 0; i < metricNames.size(); ++i)
        trainScores.push_back({metricNames[i], sums[i] / double(std::max<int64_t>(sumCount, 1))});
      sums.assign(metricNames.size(), 0.0);
      sumCount = 0;
      metrics << scoresJson(epoch + 1, step + 1, "train", trainScores) << "\n";
      std::printf("%sepoch %lld/%lld  train: %s", terminal ? "\r\033[K" : "", (long long)epoch + 1,
                  (long long)epochs, scoresText(trainScores).c_str());
      if (data.val.samples > 0) {
        Scores val;
        if (!evaluateSplit(model, data.val, val, error))
          return fail(error);
        metrics << scoresJson(epoch + 1, step + 1, "val", val) << "\n";
        std::printf("  |  val: %s", scoresText(val).c_str());
        // Best by the first metric (higher is better), or by loss (lower).
        bool byMetric = val.size() > 1;
        double score = byMetric ? val[1].second : -val[0].second;
        if (std::isnan(best) || score > best) {
          best = score;
          if (!saveBest(error))
            return fail(error);
          std::printf("  (best)");
        }
      } else if (!saveBest(error)) {
        return fail(error);
      }
      std::printf("  [%s]\n", formatDuration(elapsed).c_str());
      std::fflush(stdout);
      metrics.flush();
      if (!saveCheckpoint(last, step + 1, error))
        return fail(error);
      ++epochsThisRun;
      if (options.stopAfter > 0 && epochsThisRun >= options.stopAfter && step + 1 < totalSteps) {
        std::printf("stopped after %lld epoch(s) as asked; `train --resume` continues\n",
                    (long long)epochsThisRun);
        return 0;
      }
    }
    if (interrupted.load()) {
      if (!saveCheckpoint(last, step + 1, error))
        return fail(error);
      std::printf("\ninterrupted at step %lld; saved %s (`train --resume` continues)\n",
                  (long long)step + 1, last.c_str());
      return 130;
    }
  }

  // The test split, with the best parameters (by validation).
  if (data.test.samples > 0) {
    if (data.val.samples > 0 && !model.loadParams(runDir + "/best.safetensors", error))
      return fail(error);
    Scores test;
    if (!evaluateSplit(model, data.test, test, error))
      return fail(error);
    metrics << scoresJson(epochs, totalSteps, "test", test) << "\n";
    std::printf("test (%s): %s\n", data.val.samples > 0 ? "best checkpoint" : "last",
                scoresText(test).c_str());
  }
  std::printf("done: %s/{last,best}.safetensors, %s/metrics.jsonl\n", runDir.c_str(),
              runDir.c_str());
  return 0;
}

} // namespace

int train(Model &model, const TrainOptions &options) { return Trainer(model, options).run(); }

int evaluate(Model &model, const EvalOptions &options) {
  const Manifest &m = model.manifest();
  std::string error;
  if (!model.loadParams(options.checkpoint, error))
    return fail(error);
  uint64_t seed = uint64_t(options.seed.value_or(m.train.seed.value_or(0)));
  Dataset data;
  if (!loadDataset(m, options.dataDir, seed, data, error))
    return fail(error);
  bool any = false;
  for (auto [name, split] : {std::pair{"val", &data.val}, std::pair{"test", &data.test}}) {
    if (options.split != "all" && options.split != name)
      continue;
    if (split->samples == 0) {
      std::fprintf(stderr, "note: no %s split\n", name);
      continue;
    }
    Scores scores;
    if (!evaluateSplit(model, *split, scores, error))
      return fail(error);
    std::printf("%s (%lld samples): %s\n", name, (long long)split->samples,
                scoresText(scores).c_str());
    any = true;
  }
  return any ? 0 : fail("nothing to evaluate");
}

} // namespace tfc::rt
