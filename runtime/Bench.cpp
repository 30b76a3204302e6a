//===- Bench.cpp - time the entries of a compiled model -------------------===//
//
// One batch of valid inputs (the train block's dataset, whose generators know
// each input's range; zeros for integer inputs and uniform [-1, 1) floats
// when the model has no usable dataset), freshly initialised parameters, and
// `warmup` untimed then `steps` timed calls of each entry (more to fill
// --min-seconds). Only the call and the read of its results are inside the
// clock: the batch is filled once, before, and parameters and optimizer state
// stay on the device between calls, as in training (StepFeeds).
//
//===----------------------------------------------------------------------===//

#include "runtime/Bench.h"
#include "runtime/Datasets.h"
#include "runtime/InputChecks.h"
#include "runtime/StepFeeds.h"
#include "runtime/Tensor.h"
#include "runtime/ThreadPool.h"
#include "runtime/Tune.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sys/resource.h>

namespace tfc::rt {
namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

/// Fills `batch` with the first samples of the train block's training split;
/// false (with `why`) when the model has no dataset or it cannot be made,
/// and with `unfit` set too when its values are out of the model's range.
bool datasetBatch(const Manifest &m, std::vector<Tensor> &batch, int64_t &trainSamples,
                  std::string &why, bool &unfit) {
  if (!m.train.data) {
    why = "the model has no `data` in a train block";
    return false;
  }
  DataArgs args(m.train.data->args.begin(), m.train.data->args.end());
  Dataset data;
  if (!makeDataset(m.train.data->name, args, uint64_t(m.train.seed.value_or(0)), m.inputs, data,
                   why))
    return false;
  if (data.train.samples == 0) {
    why = "its training split is empty";
    return false;
  }
  // A dataset that does not fit the model is an error here as in `train`.
  if (!checkSplitValues(data.train, m.inputs, "train", why)) {
    unfit = true;
    return false;
  }
  trainSamples = data.train.samples;
  fillBatch(data.train, m.inputs, nullptr, 0, m.batch, batch);
  return true;
}

/// Zeros for integer inputs (a valid class or token id for any model), true
/// for bool, uniform [-1, 1) for f32 from a fixed linear congruential stream.
void syntheticBatch(const Manifest &m, std::vector<Tensor> &batch) {
  batch.clear();
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (const TensorSpec &spec : m.inputs) {
    Tensor t(spec.dtype, spec.shape);
    if (spec.dtype == DType::F32)
      for (int64_t i = 0; i < t.numel(); ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        t.f32()[i] = float(double(state >> 40) / double(1ull << 24) * 2.0 - 1.0);
      }
    else if (spec.dtype == DType::Bool)
      std::fill(t.bytes.begin(), t.bytes.end(), uint8_t(1));
    batch.push_back(std::move(t));
  }
}

/// bench --profile's table for `entry`: `ops` over `calls` calls; `graphMs`
/// the timed calls' median, for comparison; `pathMs` the operations on the
/// longest path of ones that wait for each other, a call (negative: none).
void printProfile(const std::string &entry, std::vector<ProfiledOp> ops, int64_t calls,
                  double graphMs, double pathMs) {
  double total = 0;
  int64_t count = 0;
  std::vector<std::pair<std::string, std::pair<double, int64_t>>> kinds; // first-seen order
  for (const ProfiledOp &op : ops) {
    total += op.ms;
    count += op.calls;
    auto kind = std::find_if(kinds.begin(), kinds.end(), [&](auto &k) { return k.first == op.kind; });
    if (kind == kinds.end())
      kind = kinds.insert(kinds.end(), {op.kind, {0.0, 0}});
    kind->second.first += op.ms;
    kind->second.second += op.calls;
  }
  const double n = double(std::max<int64_t>(1, calls));
  auto share = [&](double ms) { return total > 0 ? 100.0 * ms / total : 0.0; };
  std::printf("profile %s: %lld calls run eagerly, each operation timed alone on the device: "
              "%.4f ms a call in %g operations (the timed calls above: %.4f ms; the rest is "
              "time between operations)\n",
              entry.c_str(), (long long)calls, total / n, double(count) / n, graphMs);
  if (pathMs >= 0)
    std::printf("  longest path: %.4f ms a call of the %.4f the operations add up to (the "
                "operations that wait for each other in series; graph dependencies, "
                "TFC_GRAPH_DEPENDENCIES=1, run the rest beside them)\n",
                pathMs, total / n);
  std::printf("  by kind:");
  for (size_t k = 0; k < kinds.size(); ++k)
    std::printf("%s %s %.1f%% (%g a call)", k ? "," : "", kinds[k].first.c_str(),
                share(kinds[k].second.first), double(kinds[k].second.second) / n);
  std::printf("\n  %7s %11s %7s  %-12s  %s\n", "share", "ms a call", "calls", "kind",
              "operation");
  std::stable_sort(ops.begin(), ops.end(),
                   [](const ProfiledOp &a, const ProfiledOp &b) { return a.ms > b.ms; });
  constexpr size_t kRows = 25;
  double rest = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i >= kRows) {
      rest += ops[i].ms;
      continue;
    }
    std::printf("  %6.1f%% %11.4f %7g  %-12s  %s\n", share(ops[i].ms), ops[i].ms / n,
                double(ops[i].calls) / n, ops[i].kind.c_str(), ops[i].name.c_str());
  }
  if (ops.size() > kRows)
    std::printf("  %6.1f%% in %zu more operations\n", share(rest), ops.size() - kRows);
  std::fflush(stdout);
}

} // namespace

double median(std::vector<double> v) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

BenchSchedule benchSchedule(const Manifest &m, int64_t trainSamples) {
  BenchSchedule schedule;
  schedule.lr = m.train.optimizer ? m.train.optimizer->number("lr", 1e-3) : 1e-3;
  const int64_t stepsPerEpoch = std::max<int64_t>(1, trainSamples / m.batch);
  schedule.totalSteps = double(m.train.epochs.value_or(1) * stepsPerEpoch);
  return schedule;
}

bool benchBatch(const Manifest &m, std::vector<Tensor> &batch, std::string &source,
                int64_t &trainSamples, std::string &error) {
  trainSamples = 0;
  source = m.train.data ? m.train.data->name : "synthetic";
  bool unfit = false;
  std::string why;
  if (datasetBatch(m, batch, trainSamples, why, unfit))
    return true;
  if (unfit) {
    error = why;
    return false;
  }
  if (m.train.data)
    std::fprintf(stderr, "note: %s; feeding synthetic inputs instead\n", why.c_str());
  source = "synthetic";
  syntheticBatch(m, batch);
  return true;
}

CLI::App *addBenchCommand(CLI::App &app, BenchOptions &options) {
  CLI::App *cmd = app.add_subcommand(
      "bench", "Time entries on one synthetic batch: one `bench ENTRY median_ms=... min_ms=...` "
               "line each");
  cmd->add_option("--steps", options.steps, "Timed calls per entry")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--warmup", options.warmup, "Untimed calls before them")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--min-seconds", options.minSeconds,
                  "Go on timing calls past --steps until they add up to this many seconds "
                  "(the loss reported stays the one after --steps)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--entry", options.entry, "train_step, predict, evaluate or all")
      ->check(CLI::IsMember({"train_step", "predict", "evaluate", "all"}))
      ->capture_default_str();
  cmd->add_option("--save-batch", options.saveBatch,
                  "Write the batch's inputs to DIR/NAME.npy before timing (an existing "
                  "directory)")
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--profile", options.profile,
                "A GPU binary: after the timed calls, --steps more run eagerly with each kernel, "
                "cuBLASLt call and copy timed on the GPU alone; a table of them by share follows "
                "each entry's line");
  return cmd;
}

int bench(Model &model, const BenchOptions &options) {
  const Manifest &m = model.manifest();
  std::vector<const EntrySpec *> entries;
  for (std::string_view name : {abi::kTrainStep, abi::kPredict, abi::kEvaluate})
    if (const EntrySpec *e = m.entry(name); e && (options.entry == name ||
                                                  (options.entry == "all" && name != abi::kEvaluate)))
      entries.push_back(e);
  if (entries.empty())
    return fail("model '" + m.model + "' has no entry " +
                (options.entry == "all" ? std::string("to time") : "'" + options.entry + "'"));

  if (options.profile && model.device().hostMemory()) {
    std::string why;
    model.device().startProfile(why);
    return fail(why);
  }

  std::vector<Tensor> batch;
  int64_t trainSamples = 0;
  std::string source, why;
  if (!benchBatch(m, batch, source, trainSamples, why))
    return fail(why);

  for (size_t i = 0; i < m.inputs.size() && !options.saveBatch.empty(); ++i) {
    std::string error, path = options.saveBatch + "/" + m.inputs[i].name + ".npy";
    if (!writeNpy(path, batch[i], error))
      return fail("cannot write the batch: " + error);
  }
  model.initParams(uint64_t(m.train.seed.value_or(0)));

  const BenchSchedule schedule = benchSchedule(m, trainSamples);
  std::printf("bench model=%s batch=%lld threads=%d data=%s\n", m.model.c_str(),
              (long long)m.batch, numThreads(), source.c_str());
  if (const std::string tuned = tunedSettingsInEffect(model.device()); !tuned.empty())
    std::printf("bench device settings tune chose for this GPU (TFC_TUNED=0: not): %s\n",
                tuned.c_str());
  std::fflush(stdout);

  using Clock = std::chrono::steady_clock;
  for (const EntrySpec *entry : entries) {
    // As the training loop feeds it, from step 0 with zeroed optimizer state.
    std::map<std::string, Tensor> state;
    // Alone: under mpirun, bench is rank 0's (TFC_DATA_PARALLEL=nccl times
    // one rank's data-parallel step).
    StepFeeds feeds(model, *entry, state, schedule.lr, schedule.totalSteps,
                    uint64_t(m.train.seed.value_or(0)),
                    /*alone=*/true);
    feeds.bindBatch(batch);

    std::vector<StepResults> done;
    std::vector<double> times;
    std::string error;
    double loss = NAN;
    // At most this many timed calls, whatever --min-seconds asks.
    constexpr int64_t kMaxTimedCalls = 100000;
    double timedMs = 0;
    const int64_t fixedCalls = options.warmup + options.steps;
    for (int64_t call = 0;
         call < fixedCalls ||
         (timedMs < 1e3 * options.minSeconds && call < options.warmup + kMaxTimedCalls);
         ++call) {
      // The next call starts from this one's parameters and state, as in
      // training; its results are read back inside the clock, so a device
      // that runs entries asynchronously is timed to the end of the call.
      auto start = Clock::now();
      if (!feeds.run(call, error) || !feeds.readBack(done, error))
        return fail(error);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (call >= options.warmup)
        times.push_back(ms), timedMs += ms;
      const std::vector<Tensor> &results = *done.front().results;
      for (size_t r = 0; r < results.size(); ++r)
        if (entry->results[r].kind == abi::ValueKind::Loss && call < fixedCalls)
          loss = results[r].f32()[0];
    }
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    double mean = 0;
    for (double t : times)
      mean += t / double(times.size());
    std::printf("bench %s median_ms=%.4f min_ms=%.4f mean_ms=%.4f steps=%lld warmup=%lld "
                "threads=%d arena_bytes=%lld max_rss_kib=%ld",
                entry->name.c_str(), median(times), *std::min_element(times.begin(), times.end()),
                mean, (long long)times.size(), (long long)options.warmup, numThreads(),
                (long long)entry->arenaBytes, (long)usage.ru_maxrss);
    if (!std::isnan(loss))
      std::printf(" loss=%.6g", loss);
    std::printf("\n");
    std::fflush(stdout);

    if (options.profile) {
      Device &device = model.device();
      std::vector<ProfiledOp> ops;
      if (!device.startProfile(error))
        return fail(error);
      int64_t call = options.warmup + int64_t(times.size());
      for (int64_t c = 0; c < options.steps; ++c, ++call)
        if (!feeds.run(call, error) || !feeds.readBack(done, error)) {
          std::string ignored;
          device.stopProfile(ops, ignored);
          return fail(error);
        }
      if (!device.stopProfile(ops, error))
        return fail(error);
      printProfile(entry->name, ops, options.steps, median(times), device.profiledLongestPathMs());
    }
  }
  return 0;
}

} // namespace tfc::rt
