//===- TuneChoice.cpp - tune's greedy choice of a device's settings -------===//
//
// chooseSettings and resultsAgree (runtime/Tune.h), apart from the command
// so that tests drive them with made-up measurements, linking no model.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tune.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tfc::rt {
namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

NamedValues valuesOf(const std::vector<DeviceSetting> &settings) {
  NamedValues values;
  for (const DeviceSetting &s : settings)
    values.emplace_back(s.name, s.value);
  return values;
}

} // namespace

bool resultsAgree(const std::vector<double> &results, const std::vector<double> &reference,
                  double tolerance, std::string &why) {
  if (results.size() != reference.size()) {
    why = std::to_string(results.size()) + " numbers against " + std::to_string(reference.size());
    return false;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const double a = results[i], b = reference[i];
    if (std::isnan(a) && std::isnan(b))
      continue;
    if (!(std::fabs(a - b) <= tolerance * (1 + std::fabs(b)))) {
      why = "result " + std::to_string(i) + ": " + number(a) + " against " + number(b);
      return false;
    }
  }
  return true;
}

bool chooseSettings(const TuneTarget &target, double threshold, double tolerance,
                    TuneReport &report, std::string &error,
                    const std::function<void(const TuneTrial &)> &trial) {
  using O = TuneTrial::Outcome;
  auto note = [&](const TuneTrial &t) {
    report.trials.push_back(t);
    if (trial)
      trial(t);
  };
  const std::vector<DeviceSetting> initial = target.settings();
  report.defaults = valuesOf(initial);
  TuneMeasurement reference;
  if (!target.measure(reference, error)) {
    error = "the step under the settings it started from failed: " + error;
    return false;
  }
  for (double r : reference.results)
    if (!std::isfinite(r)) {
      error = "the step's results under the settings it started from are not finite (" + number(r) +
              "): nothing to hold a try to";
      return false;
    }
  report.defaultMs = reference.ms;
  double bestMs = reference.ms;

  for (const DeviceSetting &start : initial) {
    // As the choices so far leave the device: whether a setting applies
    // may depend on those before it (TFC_ATTENTION_WIDE on TFC_ATTENTION_WGMMA).
    const std::vector<DeviceSetting> now = target.settings();
    auto found = std::find_if(now.begin(), now.end(),
                              [&](const DeviceSetting &s) { return s.name == start.name; });
    if (found == now.end())
      continue;
    const DeviceSetting setting = *found;
    if (setting.source == DeviceSetting::Source::Environment) {
      note({O::Fixed, setting.name, setting.value});
      continue;
    }
    if (!setting.applies) {
      note({O::Skipped, setting.name, setting.value});
      continue;
    }
    std::string best = setting.value;
    auto restore = [&] {
      std::string why;
      if (target.apply(setting.name, best, why))
        return true;
      error = "cannot set " + setting.name + " back to " + best + ": " + why;
      return false;
    };
    // After a failed try the device must still run the best settings.
    auto recover = [&](TuneTrial &t) {
      t.outcome = O::Failed;
      note(t);
      TuneMeasurement check;
      if (!restore())
        return false;
      if (target.measure(check, error))
        return true;
      error = "after " + t.name + "=" + t.value +
              " failed, the step failed on the best settings "
              "too: " +
              error;
      return false;
    };
    for (const std::string &value : setting.values) {
      if (value == best || value == setting.value) // measured already
        continue;
      TuneTrial t;
      t.name = setting.name;
      t.value = value;
      TuneMeasurement tried;
      if (!target.apply(setting.name, value, t.why) || !target.measure(tried, t.why)) {
        if (!recover(t))
          return false;
        continue;
      }
      t.ms = tried.ms;
      if (!resultsAgree(tried.results, reference.results, tolerance, t.why)) {
        t.outcome = O::Disagrees;
        note(t);
        if (!restore())
          return false;
        continue;
      }
      if (!(tried.ms < bestMs * (1 - threshold))) {
        t.outcome = O::Slower;
        note(t);
        if (!restore())
          return false;
        continue;
      }
      // Faster once: measured again beside the best so far, which a busy
      // moment of the machine may have flattered the try against.
      TuneMeasurement bestAgain, again;
      if (!restore())
        return false;
      if (!target.measure(bestAgain, error)) {
        error = "the step failed on the best settings: " + error;
        return false;
      }
      if (!target.apply(setting.name, value, t.why) || !target.measure(again, t.why)) {
        if (!recover(t))
          return false;
        continue;
      }
      t.againMs = again.ms;
      t.bestAgainMs = bestAgain.ms;
      const double tryMs = 0.5 * (tried.ms + again.ms);
      const double incumbentMs = 0.5 * (bestMs + bestAgain.ms);
      if (!resultsAgree(again.results, reference.results, tolerance, t.why)) {
        t.outcome = O::Disagrees;
      } else if (tryMs < incumbentMs * (1 - threshold)) {
        t.outcome = O::Kept;
        best = value;
        bestMs = tryMs;
        note(t);
        continue;
      } else {
        t.outcome = O::Unconfirmed;
      }
      note(t);
      if (!restore())
        return false;
    }
  }
  report.chosen = valuesOf(target.settings());
  report.chosenMs = bestMs;
  return true;
}

} // namespace tfc::rt
