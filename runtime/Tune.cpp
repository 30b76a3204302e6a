//===- Tune.cpp - choose a device's settings by timing the model's step ---===//

#include "runtime/Tune.h"
#include "runtime/Bench.h"
#include "runtime/StepFeeds.h"
#include "runtime/Tensor.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace tfc::rt {
namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

/// The numbers a call's results must agree on: each loss, gradient norm and
/// output (metrics are left out: a near tie that rounds the other way moves
/// an accuracy by a whole sample), a value each where a result has at most
/// 16, else its sum and its sum of magnitudes.
void appendResults(const EntrySpec &entry, const std::vector<Tensor> &results,
                   std::vector<double> &numbers) {
  for (size_t r = 0; r < results.size() && r < entry.results.size(); ++r) {
    const abi::ValueKind kind = entry.results[r].kind;
    if ((kind != abi::ValueKind::Loss && kind != abi::ValueKind::GradNorm &&
         kind != abi::ValueKind::Output) ||
        results[r].dtype != DType::F32 || results[r].numel() == 0 || results[r].bytes.empty())
      continue;
    const float *data = results[r].f32();
    const int64_t n = results[r].numel();
    if (n <= 16) {
      numbers.insert(numbers.end(), data, data + n);
      continue;
    }
    double sum = 0, magnitude = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += data[i], magnitude += std::fabs(data[i]);
    numbers.push_back(sum);
    numbers.push_back(magnitude);
  }
}

void printTrial(const TuneTrial &t) {
  using O = TuneTrial::Outcome;
  const char *name = t.name.c_str(), *value = t.value.c_str();
  const char *timed = nullptr; // the outcome of a try that was timed
  switch (t.outcome) {
  case O::Skipped:
    std::printf("tune skip %s: nothing the entry calls depends on it\n", name);
    break;
  case O::Fixed:
    std::printf("tune fixed %s=%s: set by the environment\n", name, value);
    break;
  case O::Failed:
    std::printf("tune try %s=%s: failed: %s\n", name, value, t.why.c_str());
    break;
  case O::Kept:
    timed = "kept";
    break;
  case O::Slower:
    timed = "slower";
    break;
  case O::Unconfirmed:
    timed = "not faster when measured again";
    break;
  case O::Disagrees:
    timed = "results differ";
    break;
  }
  if (timed) {
    std::printf("tune try %s=%s median_ms=%s: %s", name, value, ms(t.ms).c_str(), timed);
    if (t.outcome == O::Disagrees)
      std::printf(" (%s)", t.why.c_str());
    if (t.outcome == O::Kept || t.outcome == O::Unconfirmed)
      std::printf(" (%s again, the best so far %s again)", ms(t.againMs).c_str(),
                  ms(t.bestAgainMs).c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
}

} // namespace

std::string tunedSettingsInEffect(Device &device) {
  NamedValues tuned;
  for (const DeviceSetting &s : device.settings())
    if (s.source == DeviceSetting::Source::Tuned)
      tuned.emplace_back(s.name, s.value);
  return formatSettings(tuned);
}

CLI::App *addTuneCommand(CLI::App &app, TuneOptions &options) {
  CLI::App *cmd = app.add_subcommand(
      "tune", "Choose the device's runtime settings (a GPU's TFC_* switches) by timing the train "
              "step under each, and keep the fastest for later runs of this model on this GPU");
  cmd->add_option("--steps", options.steps, "Timed calls a measurement")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--warmup", options.warmup, "Untimed calls before them")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--threshold", options.threshold,
                  "How much faster a value must be to be kept (0.03: 3%), twice over")
      ->check(CLI::Range(0.0, 0.5))
      ->capture_default_str();
  cmd->add_option("--entry", options.entry, "The entry timed (default: train_step, else predict)")
      ->check(CLI::IsMember({"train_step", "predict", "evaluate"}));
  cmd->add_flag("--dry-run", options.dryRun, "Measure and print, keep nothing");
  return cmd;
}

int tune(Model &model, const TuneOptions &options) {
  const Manifest &m = model.manifest();
  Device &device = model.device();
  const std::string entryName = !options.entry.empty()     ? options.entry
                                : m.entry(abi::kTrainStep) ? std::string(abi::kTrainStep)
                                                           : std::string(abi::kPredict);
  const EntrySpec *entry = m.entry(entryName);
  if (!entry)
    return fail("model '" + m.model + "' has no entry '" + entryName + "' to time");
  if (device.settings().empty()) {
    std::printf("tune: nothing to tune: device %s has no runtime settings (a GPU binary has: "
                "tfc compile --target=cuda)\n",
                device.name().c_str());
    return 0;
  }

  std::vector<Tensor> batch;
  int64_t trainSamples = 0;
  std::string source, error;
  if (!benchBatch(m, batch, source, trainSamples, error))
    return fail(error);
  const uint64_t seed = uint64_t(m.train.seed.value_or(0));
  model.initParams(seed);
  const std::vector<Tensor> initialParams = model.params();
  const BenchSchedule schedule = benchSchedule(m, trainSamples);
  // Kernels that round otherwise (tf32 and bf16 tensor cores against the
  // small GEMMs' fp32) differ by more than fp32's summation orders.
  const bool fp32 =
      !m.cuda || m.cuda->precision.empty() || m.cuda->precision == abi::key::kPrecisionFp32;
  const double tolerance = fp32 ? 1e-3 : 2e-2;

  TuneTarget target;
  target.settings = [&] { return device.settings(); };
  target.apply = [&](const std::string &name, const std::string &value, std::string &why) {
    return device.applySetting(name, value, DeviceSetting::Source::Tuned, why);
  };
  target.measure = [&](TuneMeasurement &measured, std::string &why) {
    using Clock = std::chrono::steady_clock;
    model.params() = initialParams; // every measurement from the same start
    std::map<std::string, Tensor> state;
    StepFeeds feeds(model, *entry, state, schedule.lr, schedule.totalSteps, seed, /*alone=*/true);
    feeds.bindBatch(batch);
    std::vector<StepResults> done;
    std::vector<double> times;
    measured.results.clear();
    for (int64_t call = 0; call < options.warmup + options.steps; ++call) {
      const auto start = Clock::now();
      if (!feeds.run(call, why) || !feeds.readBack(done, why))
        return false;
      const double elapsed =
          std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (call >= options.warmup)
        times.push_back(elapsed);
      for (const StepResults &step : done)
        if (step.step < 2)
          appendResults(*entry, *step.results, measured.results);
    }
    measured.ms = median(times);
    return true;
  };

  std::printf("tune model=%s entry=%s device=%s steps=%lld warmup=%lld threshold=%g data=%s\n",
              m.model.c_str(), entry->name.c_str(), device.name().c_str(), (long long)options.steps,
              (long long)options.warmup, options.threshold, source.c_str());
  std::fflush(stdout);
  TuneReport report;
  bool printedDefaults = false;
  auto printDefaults = [&] {
    if (printedDefaults)
      return;
    printedDefaults = true;
    std::printf("tune defaults median_ms=%s: %s\n", ms(report.defaultMs).c_str(),
                formatSettings(report.defaults).c_str());
  };
  if (!chooseSettings(target, options.threshold, tolerance, report, error, [&](const TuneTrial &t) {
        printDefaults();
        printTrial(t);
      }))
    return fail(error + "; nothing kept");
  printDefaults();

  // The choice against the defaults, measured alternately twice, for the
  // figure printed and so that noise along the way keeps no slower choice.
  double chosenMs = report.chosenMs, defaultMs = report.defaultMs;
  const bool changed = report.chosen != report.defaults;
  if (changed) {
    auto setAll = [&](const NamedValues &values) {
      for (const auto &[name, value] : values)
        for (const DeviceSetting &s : device.settings())
          if (s.name == name && s.source != DeviceSetting::Source::Environment &&
              !target.apply(name, value, error))
            return false;
      return true;
    };
    defaultMs = chosenMs = 0;
    for (int round = 0; round < 2; ++round) {
      TuneMeasurement a, b;
      if (!setAll(report.defaults) || !target.measure(a, error) || !setAll(report.chosen) ||
          !target.measure(b, error))
        return fail("measuring the choice against the defaults: " + error + "; nothing kept");
      defaultMs += 0.5 * a.ms;
      chosenMs += 0.5 * b.ms;
    }
  }
  NamedValues differences;
  for (size_t i = 0; i < report.chosen.size(); ++i)
    if (i >= report.defaults.size() || report.chosen[i] != report.defaults[i])
      differences.push_back(report.chosen[i]);
  std::printf("tune chose median_ms=%s against %s for the defaults (%.2fx): %s\n",
              ms(chosenMs).c_str(), ms(defaultMs).c_str(), defaultMs / chosenMs,
              differences.empty() ? "the defaults" : formatSettings(differences).c_str());
  if (changed && !(chosenMs < defaultMs)) {
    std::printf("tune: measured beside the defaults, the choice was not faster: the defaults "
                "stand\n");
    report.chosen = report.defaults;
  }
  if (options.dryRun) {
    std::printf("tune kept nothing (--dry-run)\n");
    return 0;
  }
  const std::string path = tunedSettingsPath();
  if (!writeTunedSettings(path, device.tuningKey(), report.chosen, error))
    return fail("cannot keep the choice: " + error);
  std::printf("tune kept in %s: later runs of this model on this GPU apply it (TFC_TUNED=0: "
              "not)\n",
              path.c_str());
  return 0;
}

} // namespace tfc::rt
