//===- Tune.h - choose a device's settings by timing the model's step -----===//
//
//   MODEL tune [--steps N] [--warmup N] [--threshold PCT] [--entry E] [--dry-run]
//
// A GPU binary has runtime switches (TFC_SMALL_GEMM, TFC_ATTENTION_WGMMA,
// TFC_GRAPH_DEPENDENCIES, ...: Device::settings()) whose best values depend
// on the GPU and the model. `tune` decides them by measurement, on the
// device it runs on: from the defaults (and any the environment sets, which
// it keeps fixed), it tries each other value of each setting that applies
// (whose kind of operation the entry calls), one setting at a time in the
// device's order, and keeps a value whose step is faster by more than the
// threshold twice over (measured, then measured again beside the best so
// far), and whose results agree with the defaults'. Each measurement starts
// from the same parameters and zeroed optimizer state: bench's batch, its
// first two calls' results (losses and gradient norm; a prediction's
// outputs summed) compared, then the median of `steps` calls after `warmup`.
// Last the choice and the defaults are timed in turn, twice each: a choice
// not faster on average leaves the defaults.
//
// The choice is kept (runtime/TunedSettings.h) for this model on this GPU,
// and every later run of the binary there applies it when its device opens
// (TFC_TUNED=0: not; a setting's variable, where set, wins). The lines it
// prints:
//
//   tune model=M entry=train_step device=cuda:0 steps=30 warmup=8
//   tune defaults median_ms=0.2850: TFC_SMALL_GEMM=tiny TFC_BGRAD_COLUMNS=0 ...
//   tune try TFC_SMALL_GEMM=1 median_ms=0.3120: slower
//   tune try TFC_ATTENTION_WGMMA=1 median_ms=0.2500: kept (0.2510 again, the best 0.2840 again)
//   tune try TFC_X=1 median_ms=0.2000: results differ (result 0: 2.31 against 2.30)
//   tune skip TFC_ATTENTION_LEAN: nothing the entry calls depends on it
//   tune chose median_ms=0.2505 against 0.2845 for the defaults (1.14x): TFC_ATTENTION_WGMMA=1
//   tune kept in ~/.cache/tfc/tuned-settings.txt
//
// A device without settings (the CPU) has nothing to tune: one line, exit 0.
// Timing lives here and in bench, never in a test: tests drive chooseSettings
// with measurements of their own.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TUNE_H
#define TFC_RUNTIME_TUNE_H

#include "runtime/Device.h"
#include "runtime/Model.h"
#include "runtime/TunedSettings.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tfc::rt {

struct TuneOptions {
  int64_t steps = 30;
  int64_t warmup = 8;      // past the entry's eager call and its graphs' captures
  double threshold = 0.03; // a value is kept where its step is this much faster
  std::string entry;       // "": train_step, else predict
  bool dryRun = false;     // measure and print; keep nothing
};

/// Registers the `tune` subcommand (its options fill `options`).
CLI::App *addTuneCommand(CLI::App &app, TuneOptions &options);

/// Exit codes: 0 done (or nothing to tune), 1 error.
int tune(Model &model, const TuneOptions &options);

/// The settings `tune` chose that the device applied when it opened, as
/// "NAME=VALUE ..." ("" for none): train and bench print them.
std::string tunedSettingsInEffect(Device &device);

/// One measurement of the entry as the device is set: the median time of a
/// call, and the numbers its results must agree on.
struct TuneMeasurement {
  double ms = 0;
  std::vector<double> results;
};

/// What chooseSettings tunes: the settings as they are now, a setting's
/// change, and a measurement (false with `error` where a call failed).
struct TuneTarget {
  std::function<std::vector<DeviceSetting>()> settings;
  std::function<bool(const std::string &name, const std::string &value, std::string &error)> apply;
  std::function<bool(TuneMeasurement &, std::string &error)> measure;
};

/// What chooseSettings did, in order.
struct TuneTrial {
  enum class Outcome { Kept, Slower, Unconfirmed, Disagrees, Failed, Skipped, Fixed };
  Outcome outcome = Outcome::Slower;
  std::string name, value;
  double ms = 0;                       // the try's median (Kept, Slower, Unconfirmed, Disagrees)
  double againMs = 0, bestAgainMs = 0; // the confirmation's (Kept, Unconfirmed)
  std::string why;                     // Disagrees, Failed
};

struct TuneReport {
  double defaultMs = 0, chosenMs = 0;
  NamedValues defaults, chosen; // every setting's value at the start and the end
  std::vector<TuneTrial> trials;
};

/// Whether `results` agree with `reference`, each within `tolerance` x
/// (1 + |reference|), NaN with NaN; where not, `why` says which.
bool resultsAgree(const std::vector<double> &results, const std::vector<double> &reference,
                  double tolerance, std::string &why);

/// The greedy choice described above; `trial` is called after each step of
/// it (for printing as it goes). False with `error` where the defaults'
/// measurement fails, or the device fails to go back to the best settings
/// after a failed try (then nothing should be kept). The device is left
/// set as report.chosen says.
bool chooseSettings(const TuneTarget &target, double threshold, double tolerance,
                    TuneReport &report, std::string &error,
                    const std::function<void(const TuneTrial &)> &trial = {});

} // namespace tfc::rt

#endif // TFC_RUNTIME_TUNE_H
