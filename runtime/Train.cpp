//===- Train.cpp - training and evaluation of a compiled model ------------===//
//
// Determinism: the sample order of epoch e is a function of (seed, e), the
// dropout seed of step s a function of (seed, s), and the compiled step is
// bitwise reproducible for any thread count. So a run is a pure function of
// its seed, and a checkpoint needs only parameters, optimizer state and the
// step counter to continue exactly where it stopped (even mid-epoch).
//
// Never losing work, never lying:
//  - a run directory belongs to one process: `train` holds an exclusive
//    flock on RUN_DIR/.lock (holding its pid) from before it writes anything
//    there until it exits; a second `train` into it exits 1 naming the pid;
//  - SIGINT and SIGTERM are honoured between steps and between the batches of
//    the validation and test evaluations: the loop saves a checkpoint it can
//    resume (one stopped in a validation says so, and --resume runs that
//    validation first) and exits 130 or 143; a second signal kills at once;
//  - no checkpoint ever holds a NaN or an infinity: parameters and optimizer
//    state are checked where a checkpoint is about to be written and when the
//    loss is not finite (never per step); the run then stops, writes nothing,
//    and names the last good checkpoint;
//  - the checkpoint also holds the running sums of the epoch's train scores
//    and the best score, as exact doubles (`train.exact`), and --resume cuts
//    metrics.jsonl back to the lines at or before the checkpoint's step, so a
//    resumed run writes the same metrics.jsonl as one that never stopped.
//
//===----------------------------------------------------------------------===//

#include "runtime/Train.h"
#include "runtime/Datasets.h"
#include "runtime/Distributed.h"
#include "runtime/InputChecks.h"
#include "runtime/JsonLimits.h"
#include "runtime/StepFeeds.h"
#include "runtime/TrainBlock.h"
#include "runtime/Tune.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <sys/file.h>
#include <unistd.h>

namespace tfc::rt {
namespace {

/// The signal (SIGINT, SIGTERM) that asked `train` to stop, or 0. The
/// handler is installed with SA_RESETHAND, so a second one kills at once.
std::atomic<int> stopSignal{0};
extern "C" void onStopSignal(int signal) { stopSignal.store(signal); }

const char *signalName(int signal) { return signal == SIGTERM ? "SIGTERM" : "SIGINT"; }

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
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

using Clock = std::chrono::steady_clock;
/// When this process started, near enough (static initialisation, before
/// main): the model's manifest, its code and the device come after it.
const Clock::time_point processStart = Clock::now();

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Where a training run's wall time went, printed at its end: how long a
/// run takes is its steps and what lies around them (the dataset, the
/// device, each epoch's validation and checkpoints, the test), and issue
/// 28 counts the whole.
struct RunTimes {
  double beforeFirstStep = 0, dataset = 0, steps = 0, firstStep = 0, validation = 0,
         checkpoints = 0, test = 0;
  int64_t stepCount = 0;
  bool tested = false; // the test split was scored

  /// "time: 1.760 s: before the first step 0.410 (the dataset 0.050), ...".
  std::string text(double total) const {
    std::string out;
    auto add = [&](const char *format, auto... values) {
      char buf[128];
      std::snprintf(buf, sizeof buf, format, values...);
      out += buf;
    };
    add("time: %.3f s: before the first step %.3f (the dataset %.3f), %lld step%s %.3f", total,
        beforeFirstStep, dataset, (long long)stepCount, stepCount == 1 ? "" : "s", steps);
    if (stepCount > 1)
      add(" (the first %.3f)", firstStep);
    add(", validation %.3f, checkpoints %.3f", validation, checkpoints);
    if (tested)
      add(", test %.3f", test);
    double rest = total - beforeFirstStep - steps - validation - checkpoints - test;
    add(", the rest %.3f", std::max(rest, 0.0));
    return out;
  }
};

/// Adds the wall time of its scope to `into`.
struct TimeInto {
  double &into;
  Clock::time_point start = Clock::now();
  ~TimeInto() { into += secondsSince(start); }
};

/// Named scalars (loss first, then metrics in entry order).
using Scores = std::vector<std::pair<std::string, double>>;

/// The most device memory the splits' samples (and their orders) may take
/// together on a device whose memory is not the host's; a split that does not
/// fit is filled and copied in a batch at a time.
constexpr size_t kSamplesOnDeviceMaxBytes = size_t(1) << 30;

/// A split's samples in device memory, on a device whose memory is not the
/// host's: filled on the host once, in sample order, and copied in once (one
/// copy an input), with an order of sample indices beside them and, in
/// front of the order, the next batch's first row of it (`first()`, an int64
/// of device memory). Batches are gathered on the device from the samples'
/// rows by order[first .. first + batch) as part of each entry's call
/// (Device.h's BatchGather), straight into the entry's input buffers, and
/// the call advances `first`: the host says nothing a batch (a GPU replays
/// one graph), and sets `first` only where the order starts over. The order
/// is int64, as epochOrder gives it (8 bytes a sample, copied in as it is;
/// the row's byte offset needs 64 bits anyway).
///  - Training: the order is the epoch's (setOrder, once an epoch, with
///    its first row: 0, or the resumed step's; the steps' rows only,
///    drop_last's).
///  - Evaluation (`zeroRow`): one more row after the samples, all zeros, and
///    the order 0 .. samples - 1 then that row's index up to a whole number
///    of batches, set once: each batch as fillBatch fills it, the last one
///    padded with zeros; rewind() before each pass.
class SamplesOnDevice {
public:
  /// For `split`'s samples of `inputs` and an order of `orderRows` rows;
  /// usable() says whether they fit in `maxBytes` and the device can gather.
  SamplesOnDevice(Device &device, const std::vector<TensorSpec> &inputs, const Split &split,
                  int64_t orderRows, size_t maxBytes, bool zeroRow = false)
      : device_(device), orderRows_(orderRows) {
    const int64_t samples = split.samples, rows = samples + (zeroRow ? 1 : 0);
    if (device.hostMemory() || !device.canGatherRows() || inputs.empty() || samples <= 0 ||
        orderRows <= 0 || (!zeroRow && orderRows > samples))
      return;
    // One allocation: the first row, the order, then each input's samples,
    // each input's at a multiple of 256 bytes (so the gather copies 16-byte
    // words where the rows allow).
    auto aligned = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
    std::vector<TensorSpec> specs = inputs;
    size_t total = aligned(size_t(1 + orderRows) * sizeof(int64_t));
    for (TensorSpec &spec : specs) {
      if (spec.shape.empty())
        return; // not a batch of rows
      size_t bytes = dtypeSize(spec.dtype);
      for (size_t d = 1; d < spec.shape.size(); ++d)
        bytes *= size_t(spec.shape[d]);
      rowBytes_.push_back(bytes);
      offsets_.push_back(total);
      spec.shape[0] = rows;
      total += aligned(bytes * size_t(rows));
    }
    if (total > maxBytes)
      return;
    memory_ = device.allocateOutsidePlan(total);
    if (!memory_) { // no room: a batch at a time, as without
      std::string ignored;
      device.takeError(ignored);
      return;
    }
    bytes_ = total;
    // Every sample once, in sample order (fillBatch leaves the zero row
    // zero): the host's staging is dropped once copied (from pageable
    // memory the copy has read it on return).
    std::vector<Tensor> staging;
    fillBatch(split, specs, nullptr, 0, rows, staging);
    for (size_t i = 0; i < specs.size(); ++i)
      device.copyIn(at(offsets_[i]), staging[i].bytes.data(), staging[i].bytes.size());
    if (zeroRow) {
      std::vector<int64_t> order(size_t(orderRows), samples);
      std::iota(order.begin(), order.begin() + std::min(samples, orderRows), int64_t(0));
      setOrder(order, 0);
    }
  }
  ~SamplesOnDevice() { device_.release(memory_); }
  SamplesOnDevice(const SamplesOnDevice &) = delete;
  SamplesOnDevice &operator=(const SamplesOnDevice &) = delete;

  bool usable() const { return memory_ != nullptr; }
  /// The device memory taken (0 when not usable).
  size_t bytes() const { return bytes_; }
  /// The order, order[0 .. orderRows), and the next batch's first row of
  /// it: one copy in (the first row is in front of the order).
  void setOrder(const std::vector<int64_t> &order, int64_t first) {
    std::vector<int64_t> staged(size_t(1 + orderRows_));
    staged[0] = first;
    std::copy(order.begin(), order.begin() + orderRows_, staged.begin() + 1);
    device_.copyIn(memory_, staged.data(), staged.size() * sizeof(int64_t));
  }
  /// The next batch's first row of the order set to `row` (one 8-byte copy).
  void rewind(int64_t row = 0) { device_.copyIn(memory_, &row, sizeof row); }
  /// The next batch's first row of the order (device memory): each call
  /// that gathers a batch advances it.
  int64_t *first() const { return static_cast<int64_t *>(memory_); }
  /// Each input's rows, gathered by the order from `offset` on (a rank's
  /// share of the global batch) plus *first().
  std::vector<RowGather> rows(int64_t offset = 0) const {
    std::vector<RowGather> inputs;
    for (size_t i = 0; i < offsets_.size(); ++i)
      inputs.push_back({at(offsets_[i]), rowBytes_[i], first() + 1 + offset});
    return inputs;
  }

private:
  char *at(size_t offset) const { return static_cast<char *>(memory_) + offset; }
  Device &device_;
  int64_t orderRows_;
  std::vector<size_t> rowBytes_, offsets_; // an input each: a row, its samples' place
  void *memory_ = nullptr;                 // the first row, the order, the samples
  size_t bytes_ = 0;
};

/// An evaluation split's samples on the device, in `maxBytes`: null on host
/// memory, or where they do not fit (its batches are then filled and copied
/// in one at a time).
std::unique_ptr<SamplesOnDevice> evaluationOnDevice(Model &model, const Split &split,
                                                    size_t maxBytes) {
  const Manifest &m = model.manifest();
  std::string error; // a device that cannot open: Model::run says so
  if (model.device().hostMemory() || split.samples <= 0 || m.batch <= 0 ||
      !model.openDevice(error))
    return nullptr;
  const int64_t batches = (split.samples + m.batch - 1) / m.batch;
  auto onDevice = std::make_unique<SamplesOnDevice>(model.device(), m.inputs, split,
                                                    batches * m.batch, maxBytes,
                                                    /*zeroRow=*/true);
  if (!onDevice->usable())
    return nullptr;
  return onDevice;
}

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

/// The dataset the train block (or --data) names; of a dataset on disk, only
/// `splits` (SplitMask) are read.
bool loadDataset(const Manifest &m, const std::string &dataDir, uint64_t seed, Dataset &data,
                 std::string &error, unsigned splits = kAllSplits) {
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
  if (!makeDataset(spec.name, args, seed, m.inputs, data, error, splits))
    return false;
  for (const std::string &notice : data.notices)
    std::fprintf(stderr, "note: %s\n", notice.c_str());
  return true;
}

/// Evaluates the `evaluate` entry over every sample of `split`: the last
/// partial batch is padded and masked, so each sample counts exactly once.
/// With `stopped`, a stop signal ends it between batches (false, *stopped set).
bool evaluateSplit(Model &model, const Split &split, Scores &scores, std::string &error,
                   bool *stopped = nullptr, SamplesOnDevice *onDevice = nullptr) {
  const Manifest &m = model.manifest();
  const EntrySpec *entry = m.entry(abi::kEvaluate);
  if (!entry) {
    error = "model '" + m.model + "' has no evaluate entry (it declares no loss)";
    return false;
  }
  std::vector<Tensor> batch, results;
  Tensor mask(DType::F32, {m.batch});
  std::vector<double> sums(entry->results.size(), 0.0);
  DeviceBatch gathers; // the batches on the device: the order's, a batch a call
  if (onDevice) {
    for (const TensorSpec &in : m.inputs)
      batch.emplace_back(in.dtype, in.shape); // the shapes; the values are on the device
    std::vector<RowGather> rows = onDevice->rows();
    for (size_t i = 0; i < m.inputs.size() && i < rows.size(); ++i)
      gathers.inputs[m.inputs[i].name] = rows[i];
    gathers.first = onDevice->first();
    gathers.advance = m.batch;
    onDevice->rewind();
  }
  for (int64_t begin = 0; begin < split.samples; begin += m.batch) {
    if (stopped && stopSignal.load()) {
      *stopped = true;
      error = std::string("interrupted by ") + signalName(stopSignal.load());
      return false;
    }
    int64_t count = std::min(m.batch, split.samples - begin);
    if (!onDevice)
      fillBatch(split, m.inputs, nullptr, begin, count, batch);
    for (int64_t i = 0; i < m.batch; ++i)
      mask.f32()[i] = i < count ? 1.0f : 0.0f;
    std::map<std::string, const Tensor *> feeds;
    for (size_t i = 0; i < m.inputs.size(); ++i)
      feeds[m.inputs[i].name] = &batch[i];
    feeds[feedKey(abi::ValueKind::Mask, std::string(abi::kSampleMaskName))] = &mask;
    if (!model.run(*entry, feeds, results, error, onDevice ? &gathers : nullptr))
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

/// The validation score that picks best.safetensors: its index among the
/// evaluate entry's results and whether lower is better. `spec` is "NAME"
/// (the loss lower-better, a metric higher-better), "min:NAME" or
/// "max:NAME"; empty: the first metric, else the loss.
struct BestBy {
  size_t index = 0;
  bool lower = true;
};
bool bestBy(const EntrySpec &evaluate, const std::string &spec, BestBy &out, std::string &error) {
  std::vector<std::string> names;
  for (const TensorSpec &r : evaluate.results)
    names.push_back(r.name);
  if (spec.empty()) {
    out = names.size() > 1 ? BestBy{1, false} : BestBy{0, true};
    return true;
  }
  const tfc::train::BestSpec best = tfc::train::parseBest(spec);
  const std::string name(best.name);
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    std::string known;
    for (const std::string &n : names)
      known += (known.empty() ? "" : ", ") + n;
    error = "--best '" + spec + "': '" + name + "' is neither the loss nor a metric (known: " +
            known + ")";
    return false;
  }
  out.index = size_t(it - names.begin());
  out.lower = best.lower.value_or(out.index == 0 && evaluate.results[0].kind == abi::ValueKind::Loss);
  return true;
}

/// What `--resume` needs besides the parameters, saved beside them.
constexpr const char *kStepKey = "train.step";
constexpr const char *kBestKey = "train.best";
/// 1 when the epoch that ends at train.step still needs its validation (a
/// signal stopped it): --resume runs it first.
constexpr const char *kPendingKey = "train.pending_validation";
/// Exact doubles, each as two i32 of its bits: the best score, the number of
/// steps summed so far in the epoch, then the running sum of each train score.
constexpr const char *kExactKey = "train.exact";
constexpr const char *kStatePrefix = "optimizer.";

bool allFinite(const Tensor &t) {
  if (t.dtype != DType::F32)
    return true;
  const float *v = t.f32();
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if (!std::isfinite(v[i]))
      return false;
  return true;
}

class Trainer {
public:
  Trainer(Model &model, const TrainOptions &options) : model(model), options(options) {}
  ~Trainer() {
    if (lockFd >= 0)
      ::close(lockFd); // releases the run directory
  }

  int run();

private:
  Model &model;
  const TrainOptions &options;
  const Manifest &m = model.manifest();
  const EntrySpec *stepEntry = nullptr;
  std::map<std::string, Tensor> state; // optimizer buffers by name
  int64_t step = 0, stepsPerEpoch = 1;
  double best = NAN;
  std::vector<double> sums; // the epoch's train scores so far, summed
  int64_t sumCount = 0;
  bool pendingValidation = false; // read from a checkpoint
  std::string runDir;
  int lockFd = -1;
  // What is on disk for this run (saved by it or resumed from), for messages.
  int64_t lastStep = -1;  // the step of last.safetensors; -1: none
  int64_t bestEpoch = -1; // the epoch of best.safetensors; 0: before --resume; -1: none

  StepFeeds *feeds = nullptr; // while the loop runs
  RunTimes times;
  // Data-parallel (runtime/Distributed.h): this rank, the ranks; rank 0
  // alone writes (checkpoints, metrics.jsonl, progress) and validates.
  const dist::World &world = dist::world();
  bool writer = world.rank == 0;

  /// Every rank gets rank 0's parameters, optimizer state and counters
  /// (after init or --resume), so all start alike wherever the run dir is.
  bool shareStart(std::string &error);

  bool lockRunDir(std::string &error);
  bool syncToHost(std::string &error);
  std::string nonFinite();
  std::string savedText() const;
  std::string stepText(int64_t atStep) const;
  bool saveCheckpoint(const std::string &path, int64_t atStep, bool pending, std::string &error);
  bool loadCheckpoint(const std::string &path, std::string &error);
  bool saveBest(int64_t epoch, std::string &error);
  bool trimMetrics(std::string &error);
};

/// Takes RUN_DIR/.lock (an exclusive flock that never waits) for as long as
/// this Trainer lives, and writes the pid into it. The kernel drops the lock
/// when the process ends, however it ends, so a stale file locks nothing.
bool Trainer::lockRunDir(std::string &error) {
  std::string path = runDir + "/.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err == EWOULDBLOCK) {
      char buf[32] = {};
      ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      std::string pid = n > 0 ? std::string(buf, size_t(n)) : "";
      pid.erase(std::remove_if(pid.begin(), pid.end(), [](char c) { return c < '0' || c > '9'; }),
                pid.end());
      ::close(fd);
      error = "run directory '" + runDir + "' is in use by another `train` (" +
              (pid.empty() ? std::string("pid unknown") : "pid " + pid) + ", which holds '" +
              path + "'); wait for it to end or give another --run-dir";
      return false;
    }
    // A file system without locks: go on, but say what is not guarded.
    std::fprintf(stderr,
                 "warning: cannot lock '%s' (%s); a second `train` into this run directory "
                 "would go unnoticed\n",
                 path.c_str(), std::strerror(err));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  lockFd = fd;
  return true;
}

/// Makes the host's parameters and optimizer state current (a device whose
/// memory is not the host's keeps them between steps): before they are
/// checked or saved.
bool Trainer::syncToHost(std::string &error) {
  return feeds ? feeds->syncToHost(error) : model.syncParams(error);
}

/// The first parameter or optimizer buffer holding a NaN or an infinity, or
/// "". A scan of everything: called before a checkpoint, never per step, on
/// the host's copies (syncToHost first).
std::string Trainer::nonFinite() {
  for (size_t i = 0; i < model.hostParams().size(); ++i)
    if (!allFinite(model.hostParams()[i]))
      return m.params[i].name;
  for (auto &[name, t] : state)
    if (!allFinite(t))
      return kStatePrefix + name;
  return "";
}

/// "step 780, the end of epoch 2" or "step 800 (epoch 3)".
std::string Trainer::stepText(int64_t atStep) const {
  if (atStep > 0 && atStep % stepsPerEpoch == 0)
    return "step " + std::to_string(atStep) + ", the end of epoch " +
           std::to_string(atStep / stepsPerEpoch);
  return "step " + std::to_string(atStep) + " (epoch " + std::to_string(atStep / stepsPerEpoch + 1) +
         ")";
}

/// Which checkpoints of this run are good, for a run that stops on a NaN.
std::string Trainer::savedText() const {
  if (lastStep < 0)
    return "This run has no checkpoint yet, so none is good.";
  std::string text = "The last good checkpoint is " + runDir + "/last.safetensors, at " +
                     stepText(lastStep);
  if (bestEpoch > 0)
    text += "; " + runDir + "/best.safetensors holds epoch " + std::to_string(bestEpoch);
  else if (bestEpoch == 0)
    text += "; " + runDir + "/best.safetensors holds the best epoch before the resume";
  return text + " (`train --resume` with a smaller --lr continues from it).";
}

bool Trainer::shareStart(std::string &error) {
  if (!dist::parallel())
    return true;
  for (Tensor &p : model.params())
    if (!dist::broadcast(p.bytes.data(), p.bytes.size(), error))
      return false;
  for (auto &[name, t] : state)
    if (!dist::broadcast(t.bytes.data(), t.bytes.size(), error))
      return false;
  double counters[] = {double(step), best, pendingValidation ? 1.0 : 0.0, double(sumCount)};
  if (!dist::broadcast(counters, sizeof counters, error) ||
      (!sums.empty() && !dist::broadcast(sums.data(), sums.size() * sizeof(double), error)))
    return false;
  step = int64_t(counters[0]);
  best = counters[1];
  pendingValidation = counters[2] != 0;
  sumCount = int64_t(counters[3]);
  return true;
}

bool Trainer::saveCheckpoint(const std::string &path, int64_t atStep, bool pending,
                             std::string &error) {
  if (!writer) // rank 0 writes for all
    return true;
  TimeInto timeInto{times.checkpoints};
  if (!syncToHost(error))
    return false;
  if (std::string bad = nonFinite(); !bad.empty()) {
    error = "'" + bad + "' holds a NaN or an infinity at " + stepText(atStep) +
            "; nothing is saved. " + savedText();
    return false;
  }
  std::vector<std::pair<std::string, const Tensor *>> tensors;
  for (size_t i = 0; i < model.hostParams().size(); ++i)
    tensors.push_back({m.params[i].name, &model.hostParams()[i]});
  for (auto &[name, t] : state)
    tensors.push_back({kStatePrefix + name, &t});
  Tensor stepT = scalarF32(float(atStep)), bestT = scalarF32(float(best)),
         pendingT = scalarF32(pending ? 1.0f : 0.0f);
  std::vector<double> exact = {best, double(sumCount)};
  exact.insert(exact.end(), sums.begin(), sums.end());
  Tensor exactT(DType::I32, {int64_t(exact.size() * 2)});
  std::memcpy(exactT.bytes.data(), exact.data(), exact.size() * sizeof(double));
  tensors.push_back({kStepKey, &stepT});
  tensors.push_back({kBestKey, &bestT});
  tensors.push_back({kPendingKey, &pendingT});
  tensors.push_back({kExactKey, &exactT});
  if (!writeSafetensors(path, tensors, error))
    return false;
  lastStep = atStep;
  return true;
}

bool Trainer::saveBest(int64_t epoch, std::string &error) {
  if (!writer)
    return true;
  TimeInto timeInto{times.checkpoints};
  if (!syncToHost(error))
    return false;
  if (std::string bad = nonFinite(); !bad.empty()) {
    error = "'" + bad + "' holds a NaN or an infinity at the end of epoch " +
            std::to_string(epoch) + "; nothing is saved. " + savedText();
    return false;
  }
  if (!model.saveParams(runDir + "/best.safetensors", error))
    return false;
  bestEpoch = epoch;
  return true;
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
  // Checkpoints written before these keys existed resume as before.
  auto pending = byName.find(kPendingKey);
  pendingValidation = pending != byName.end() && pending->second->dtype == DType::F32 &&
                      pending->second->numel() == 1 && pending->second->f32()[0] != 0;
  auto exact = byName.find(kExactKey);
  if (exact != byName.end() && exact->second->dtype == DType::I32 &&
      exact->second->numel() == int64_t(2 * (2 + sums.size()))) {
    std::vector<double> values(2 + sums.size());
    std::memcpy(values.data(), exact->second->bytes.data(), values.size() * sizeof(double));
    best = values[0];
    sumCount = int64_t(values[1]);
    std::copy(values.begin() + 2, values.end(), sums.begin());
  }
  if (std::string bad = nonFinite(); !bad.empty()) {
    error = "'" + path + "' holds a NaN or an infinity in '" + bad +
            "' (written by an older tfc?); it cannot be resumed";
    return false;
  }
  return true;
}

/// --resume: metrics.jsonl keeps only its complete, valid lines at or before
/// the checkpoint's step (a run that stopped after writing an epoch's lines
/// but before its checkpoint, or mid-line, would otherwise repeat or garble
/// them), rewritten atomically.
bool Trainer::trimMetrics(std::string &error) {
  std::string path = runDir + "/metrics.jsonl";
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return true; // none yet
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string kept;
  int64_t dropped = 0;
  for (size_t pos = 0; pos < contents.size();) {
    size_t end = contents.find('\n', pos);
    if (end == std::string::npos) { // cut off mid-line
      ++dropped;
      break;
    }
    std::string line = contents.substr(pos, end - pos);
    pos = end + 1;
    nlohmann::json j = detail::jsonDepthWithin(line)
                           ? nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false)
                           : nlohmann::json(nlohmann::json::value_t::discarded);
    bool keep = !j.is_discarded() && j.is_object() && j.contains("step") &&
                j["step"].is_number_integer() && j["step"].get<int64_t>() <= step &&
                j.contains("split") && j["split"].is_string();
    if (keep)
      kept += line + "\n";
    else
      dropped += !line.empty();
  }
  if (dropped == 0)
    return true;
  if (!writeFileAtomically(path, kept, error))
    return false;
  std::fprintf(stderr, "note: dropped %lld line(s) of %s past the checkpoint's step or incomplete\n",
               (long long)dropped, path.c_str());
  return true;
}

int Trainer::run() {
  stepEntry = m.entry(abi::kTrainStep);
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
  bool dataParallel = false; // several ranks, or one by TFC_DATA_PARALLEL
  if (!dist::init(error) || !dist::dataParallel(dataParallel, error))
    return fail(error);
  // One global batch a step: rank r's share is its rows r*b .. (r+1)*b - 1,
  // as one process compiled for ranks*b would see them.
  const int64_t ranks = world.size, globalBatch = m.batch * ranks;
  if (!writer) // the other ranks say nothing unless something fails
    std::fflush(stdout), (void)!std::freopen("/dev/null", "w", stdout);

  Dataset data;
  Clock::time_point datasetStart = Clock::now();
  if (!loadDataset(m, options.dataDir, seed, data, error) ||
      !checkDatasetValues(data, m.inputs, error))
    return fail(error);
  times.dataset = secondsSince(datasetStart);
  const Split &train = data.train;
  stepsPerEpoch = train.samples / globalBatch; // drop_last, as the seeds train
  if (stepsPerEpoch == 0)
    return fail("the training split has " + std::to_string(train.samples) +
                " samples, fewer than one batch of " + std::to_string(globalBatch) +
                (ranks > 1 ? " (" + std::to_string(ranks) + " ranks of " +
                                 std::to_string(m.batch) + ")"
                           : std::string()));
  int64_t totalSteps = epochs * stepsPerEpoch;
  BestBy bestScore;
  if (const EntrySpec *evaluate = m.entry(abi::kEvaluate))
    if (!bestBy(*evaluate, !options.best.empty() ? options.best : m.train.best.value_or(""),
                bestScore, error))
      return fail(error);

  for (const TensorSpec &a : stepEntry->args)
    if (a.kind == abi::ValueKind::State)
      state[a.name] = Tensor(a.dtype, a.shape);
  std::vector<std::string> metricNames;
  for (const TensorSpec &r : stepEntry->results)
    if (r.kind == abi::ValueKind::Loss || r.kind == abi::ValueKind::Metric)
      metricNames.push_back(r.name);
  sums.assign(metricNames.size(), 0.0);
  std::error_code ec;
  if (writer)
    std::filesystem::create_directories(runDir, ec);
  if (ec)
    return fail("cannot create run directory '" + runDir + "': " + ec.message());
  // The directory is ours before anything in it is read, written or truncated.
  if (writer && !lockRunDir(error))
    return fail(error);
  std::string last = runDir + "/last.safetensors";
  if (options.resume && !writer) {
    model.initParams(seed); // the shapes; rank 0's values come next
  } else if (options.resume) {
    if (!loadCheckpoint(last, error))
      return fail(error);
    if (step > totalSteps || (step == totalSteps && !pendingValidation))
      return fail("the checkpoint is at step " + std::to_string(step) + " of " +
                  std::to_string(totalSteps) + ": nothing left to train (raise --epochs)");
    lastStep = step;
    bool haveBest = data.val.samples > 0 ? !std::isnan(best) : step >= stepsPerEpoch;
    bestEpoch = haveBest ? 0 : -1;
    std::printf("resuming %s at %s\n", last.c_str(), stepText(step).c_str());
    if (!trimMetrics(error))
      return fail(error);
  } else {
    model.initParams(seed);
  }
  if (!shareStart(error))
    return fail(error);
  if (!writer && options.resume) {
    lastStep = step;
    bestEpoch = data.val.samples > 0 ? (std::isnan(best) ? -1 : 0) : (step >= stepsPerEpoch ? 0 : -1);
  }
  std::string metricsPath = runDir + "/metrics.jsonl";
  std::ofstream metrics; // rank 0's; the other ranks' writes go nowhere
  if (writer) {
    metrics.open(metricsPath, options.resume ? std::ios::app : std::ios::trunc);
    if (!metrics)
      return fail("cannot write '" + metricsPath + "'");
  }

  std::printf("training %s: %lld samples, batch %lld, %lld epochs of %lld steps, lr %g, seed %llu\n",
              m.model.c_str(), (long long)train.samples, (long long)globalBatch, (long long)epochs,
              (long long)stepsPerEpoch, lr, (unsigned long long)seed);
  if (ranks > 1)
    std::printf("data-parallel: %lld ranks of batch %lld\n", (long long)ranks, (long long)m.batch);
  else if (dataParallel)
    std::printf("data-parallel: 1 rank of batch %lld (%s=%s)\n", (long long)m.batch,
                dist::kDataParallelSwitch, std::getenv(dist::kDataParallelSwitch));
  if (const std::string tuned = tunedSettingsInEffect(model.device()); !tuned.empty())
    std::printf("device settings tune chose for this GPU (TFC_TUNED=0: not): %s\n", tuned.c_str());
  std::fflush(stdout);

  // Feeds: one batch, the state buffers, the counters and hyperparameters.
  std::vector<Tensor> batch;
  StepFeeds stepFeeds(model, *stepEntry, state, lr, double(totalSteps), seed);
  feeds = &stepFeeds;
  struct Unbind {
    StepFeeds *&feeds;
    ~Unbind() { feeds = nullptr; }
  } unbind{feeds};
  std::vector<StepResults> done;
  float loss = 0;

  // SIGINT (Ctrl-C) and SIGTERM stop the run between steps or batches, with
  // a checkpoint; the handler resets itself, so a second signal kills.
  bool terminal = isatty(fileno(stdout));
  stopSignal.store(0);
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  struct RestoreSignals {
    struct sigaction intAction = {}, termAction = {};
    ~RestoreSignals() {
      sigaction(SIGINT, &intAction, nullptr);
      sigaction(SIGTERM, &termAction, nullptr);
    }
  } restore;
  sigaction(SIGINT, &action, &restore.intAction);
  sigaction(SIGTERM, &action, &restore.termAction);
  // 130 for SIGINT, 143 for SIGTERM: what a shell reports for a death by it.
  // Data-parallel, the ranks act on the signal they agreed on after a step
  // (stopSignal is this rank's own, and may come in during the exchange: it
  // then counts at the next step's, never overwritten by the agreement).
  int agreedStop = 0;
  auto stopping = [&] { return dist::parallel() ? agreedStop : stopSignal.load(); };
  auto stoppedStatus = [&] { return 128 + (agreedStop ? agreedStop : stopSignal.load()); };
  std::string resumeHint = "`train --resume` continues";

  auto start = Clock::now();
  auto lastDraw = start - std::chrono::seconds(1);
  int64_t firstStep = step, epochsThisRun = 0;
  std::vector<int64_t> order;
  float currentLr = 0;

  // On a GPU the splits' samples go to the device once (when they fit
  // together in kSamplesOnDeviceMaxBytes): the training split's before the
  // first step, the validation split's at the first validation, the test
  // split's for the test.
  std::unique_ptr<SamplesOnDevice> onDevice, valOnDevice;
  auto deviceRoom = [&] {
    size_t used = (onDevice ? onDevice->bytes() : 0) + (valOnDevice ? valOnDevice->bytes() : 0);
    return used < kSamplesOnDeviceMaxBytes ? kSamplesOnDeviceMaxBytes - used : 0;
  };

  // The end of an epoch (after its train line): validation, the best
  // checkpoint, last.safetensors. -1 to go on, else the exit status.
  auto finishEpochAlone = [&](int64_t epoch, int64_t atStep, double elapsed) -> int {
    if (data.val.samples > 0) {
      Scores val;
      bool stopped = false;
      bool evaluated;
      {
        TimeInto timeInto{times.validation};
        if (!valOnDevice)
          valOnDevice = evaluationOnDevice(model, data.val, deviceRoom());
        evaluated = evaluateSplit(model, data.val, val, error, &stopped, valOnDevice.get());
      }
      if (!evaluated) {
        if (!stopped)
          return fail(error);
        // The epoch's end is saved; its validation is left for --resume.
        metrics.flush();
        if (!saveCheckpoint(last, atStep, /*pending=*/true, error))
          return fail(error);
        std::printf("\n%s during the validation of epoch %lld: saved %s at %s "
                    "(`train --resume` runs that validation, then continues)\n",
                    signalName(stopSignal.load()), (long long)epoch + 1, last.c_str(),
                    stepText(atStep).c_str());
        return stoppedStatus();
      }
      metrics << scoresJson(epoch + 1, atStep, "val", val) << "\n";
      std::printf("  |  val: %s", scoresText(val).c_str());
      // Best by --best, the train block's best, else the first metric
      // (higher is better), else the loss (lower).
      double score = bestScore.lower ? -val[bestScore.index].second : val[bestScore.index].second;
      if (std::isfinite(score) && (std::isnan(best) || score > best)) {
        best = score;
        if (!saveBest(epoch + 1, error))
          return fail(error);
        std::printf("  (best)");
      }
    } else if (!saveBest(epoch + 1, error)) {
      return fail(error);
    }
    std::printf("  [%s]\n", formatDuration(elapsed).c_str());
    std::fflush(stdout);
    if (!metrics.flush())
      return fail("cannot write '" + metricsPath + "'");
    if (!saveCheckpoint(last, atStep, /*pending=*/false, error))
      return fail(error);
    return -1;
  };
  // Rank 0 validates and saves while the others wait; then every rank
  // learns whether it stopped (its exit status), and all stop together.
  auto finishEpoch = [&](int64_t epoch, int64_t atStep, double elapsed) -> int {
    int status = writer ? finishEpochAlone(epoch, atStep, elapsed) : -1;
    if (dist::parallel() && !dist::allreduceMax(status, error))
      return fail(error);
    return status;
  };

  if (pendingValidation) { // stopped during this validation last time
    int64_t epoch = step / stepsPerEpoch - 1;
    std::printf("epoch %lld/%lld  (the validation that was stopped)", (long long)epoch + 1,
                (long long)epochs);
    std::fflush(stdout);
    if (int status = finishEpoch(epoch, step, 0.0); status >= 0)
      return status;
  }

  // On a GPU the training split's samples go to the device once (when they
  // fit), each epoch's order once an epoch (with the step's first row of
  // it), and a step's batch is gathered there by its rows of the order as
  // part of the step's call, which advances the first row by the global
  // batch (a rank's rows of it, data-parallel: every rank holds the
  // samples). The host says nothing a step: a GPU replays one graph.
  if (!model.device().hostMemory()) {
    if (!model.openDevice(error))
      return fail(error);
    onDevice = std::make_unique<SamplesOnDevice>(model.device(), m.inputs, train,
                                                 stepsPerEpoch * globalBatch, deviceRoom());
    if (!onDevice->usable())
      onDevice.reset();
  }
  if (onDevice) {
    for (const TensorSpec &in : m.inputs)
      batch.emplace_back(in.dtype, in.shape); // the shapes; the values are on the device
    feeds->bindDeviceBatch(batch, onDevice->rows(world.rank * m.batch), onDevice->first(),
                           globalBatch);
  }
  // What ran before the loop but a stopped validation (--resume) is start-up.
  const double aroundStepsBefore = times.validation + times.checkpoints;
  times.beforeFirstStep = secondsSince(processStart) - aroundStepsBefore;
  const Clock::time_point loopStart = Clock::now();
  for (; step < totalSteps; ++step) {
    int64_t epoch = step / stepsPerEpoch, inEpoch = step % stepsPerEpoch;
    bool newOrder = order.empty() || inEpoch == 0;
    if (newOrder)
      order = epochOrder(train.samples, seed, epoch);
    if (onDevice) {
      if (newOrder) // from the epoch's first step, or the one --resume starts at
        onDevice->setOrder(order, inEpoch * globalBatch);
    } else {
      fillBatch(train, m.inputs, &order, inEpoch * globalBatch + world.rank * m.batch, m.batch,
                batch);
      feeds->bindBatch(batch);
    }
    const Clock::time_point stepStart = Clock::now();
    if (!feeds->run(step, error))
      return fail(error);
    if (step == firstStep) // on a GPU: its graph's capture, the kernels' first launches
      times.firstStep = secondsSince(stepStart);
    // A signal on any rank stops every rank after the same step.
    if (dist::parallel()) {
      agreedStop = stopSignal.load();
      if (!dist::allreduceMax(agreedStop, error))
        return fail(error);
    }

    // The step's loss and metrics are read when the host needs them: when
    // every result slot is taken, for a progress line, at the epoch's end
    // or a stop (on the CPU, after every step).
    auto now = Clock::now();
    bool epochEnd = inEpoch == stepsPerEpoch - 1;
    bool lineDue = terminal ? epochEnd || now - lastDraw > std::chrono::milliseconds(100)
                            : (inEpoch + 1) % std::max<int64_t>(1, stepsPerEpoch / 10) == 0 &&
                                  !epochEnd;
    if (!(feeds->full() || lineDue || epochEnd || stopping()))
      continue;
    if (!feeds->readBack(done, error))
      return fail(error);
    for (const StepResults &read : done) {
      const std::vector<Tensor> &results = *read.results;
      // The loss is the one of the parameters before this step's update:
      // those diverged, so nothing in memory is saved.
      loss = results[0].f32()[0];
      if (!std::isfinite(loss)) {
        std::fprintf(stderr, "\nerror: the loss is %s at step %lld (epoch %lld); stopping without "
                             "saving. %s\n",
                     std::isnan(loss) ? "NaN" : "infinite", (long long)read.step + 1,
                     (long long)(read.step / stepsPerEpoch) + 1, savedText().c_str());
        return 1;
      }
      size_t scoreIndex = 0;
      for (size_t r = 0; r < results.size(); ++r) {
        const TensorSpec &spec = stepEntry->results[r];
        if (spec.kind == abi::ValueKind::Loss || spec.kind == abi::ValueKind::Metric)
          sums[scoreIndex++] += results[r].f32()[0];
        else if (spec.kind == abi::ValueKind::Lr)
          currentLr = results[r].f32()[0];
      }
      ++sumCount;
    }

    // Progress: a bar on a terminal, a line every tenth of an epoch otherwise.
    double elapsed = std::chrono::duration<double>(now - start).count();
    double rate = double(step + 1 - firstStep) / std::max(elapsed, 1e-9);
    double eta = double(totalSteps - step - 1) / rate;
    char line[256];
    std::snprintf(line, sizeof line, "epoch %lld/%lld  step %lld/%lld  loss %.4f  lr %.2e  %.1f steps/s  ETA %s",
                  (long long)epoch + 1, (long long)epochs, (long long)inEpoch + 1,
                  (long long)stepsPerEpoch, loss, currentLr, rate, formatDuration(eta).c_str());
    if (lineDue) {
      std::printf(terminal ? "\r%s\033[K" : "%s\n", line);
      std::fflush(stdout);
      lastDraw = now;
    }

    if (epochEnd) {
      // An update can turn parameters non-finite while the loss before it
      // was finite: checked once an epoch, before anything of it is written.
      std::string bad;
      {
        TimeInto timeInto{times.checkpoints}; // the parameters to the host, checked
        if (!syncToHost(error))
          return fail(error);
        bad = nonFinite();
      }
      if (!bad.empty()) {
        std::fprintf(stderr, "\nerror: '%s' holds a NaN or an infinity after step %lld (the end of "
                             "epoch %lld), though every loss was finite; stopping without "
                             "saving. %s\n",
                     bad.c_str(), (long long)step + 1, (long long)epoch + 1, savedText().c_str());
        return 1;
      }
      Scores trainScores;
      for (size_t i = 0; i < metricNames.size(); ++i)
        trainScores.push_back({metricNames[i], sums[i] / double(std::max<int64_t>(sumCount, 1))});
      sums.assign(metricNames.size(), 0.0);
      sumCount = 0;
      metrics << scoresJson(epoch + 1, step + 1, "train", trainScores) << "\n";
      std::printf("%sepoch %lld/%lld  train: %s", terminal ? "\r\033[K" : "", (long long)epoch + 1,
                  (long long)epochs, scoresText(trainScores).c_str());
      std::fflush(stdout); // shown while the validation runs
      if (int status = finishEpoch(epoch, step + 1, elapsed); status >= 0)
        return status;
      ++epochsThisRun;
      if (options.stopAfter > 0 && epochsThisRun >= options.stopAfter && step + 1 < totalSteps) {
        std::printf("stopped after %lld epoch(s) as asked; %s\n", (long long)epochsThisRun,
                    resumeHint.c_str());
        return 0;
      }
    }
    if (stopping()) {
      if (lastStep != step + 1 && !saveCheckpoint(last, step + 1, /*pending=*/false, error))
        return fail(error);
      std::printf("\n%s at %s: saved %s (%s)\n", signalName(stopping()),
                  stepText(step + 1).c_str(), last.c_str(), resumeHint.c_str());
      return stoppedStatus();
    }
  }

  times.steps =
      secondsSince(loopStart) - (times.validation + times.checkpoints - aroundStepsBefore);
  times.stepCount = step - firstStep;

  // The test split, with the best parameters (by validation): rank 0's.
  if (data.test.samples > 0 && writer) {
    TimeInto timeInto{times.test};
    times.tested = true;
    bool useBest = data.val.samples > 0 && bestEpoch >= 0;
    if (useBest && !model.loadParams(runDir + "/best.safetensors", error))
      return fail(error);
    std::printf("test (%s): ", useBest ? "best checkpoint" : "last");
    std::fflush(stdout);
    Scores test;
    bool stopped = false;
    onDevice.reset(); // training is over: the test split may take its room
    std::unique_ptr<SamplesOnDevice> testOnDevice =
        evaluationOnDevice(model, data.test, deviceRoom());
    if (!evaluateSplit(model, data.test, test, error, &stopped, testOnDevice.get())) {
      if (!stopped)
        return fail(error);
      std::string eval = "eval --checkpoint " + runDir +
                         (useBest ? "/best.safetensors" : "/last.safetensors") + " --split test";
      if (!options.dataDir.empty())
        eval += " --data " + options.dataDir;
      else if (options.seed)
        eval += " --seed " + std::to_string(*options.seed);
      std::printf("\n%s during the test evaluation: training is complete and saved in %s "
                  "(last.safetensors at step %lld, best.safetensors); the test split is not "
                  "scored (`%s` scores it)\n",
                  signalName(stopSignal.load()), runDir.c_str(), (long long)lastStep,
                  eval.c_str());
      return stoppedStatus();
    }
    metrics << scoresJson(epochs, totalSteps, "test", test) << "\n";
    std::printf("%s\n", scoresText(test).c_str());
    if (!metrics.flush())
      return fail("cannot write '" + metricsPath + "'");
  }
  std::printf("%s\n", times.text(secondsSince(processStart)).c_str());
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
  // Only the splits evaluated are read: a directory needs no train/ for eval.
  unsigned splits = options.split == "val"    ? kValSplit
                    : options.split == "test" ? kTestSplit
                                              : kValSplit | kTestSplit;
  Dataset data;
  if (!loadDataset(m, options.dataDir, seed, data, error, splits))
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
    if (!checkSplitValues(*split, m.inputs, name, error))
      return fail(error);
    std::unique_ptr<SamplesOnDevice> onDevice =
        evaluationOnDevice(model, *split, kSamplesOnDeviceMaxBytes);
    if (!evaluateSplit(model, *split, scores, error, nullptr, onDevice.get()))
      return fail(error);
    std::printf("%s (%lld samples): %s\n", name, (long long)split->samples,
                scoresText(scores).c_str());
    any = true;
  }
  return any ? 0 : fail("nothing to evaluate");
}

} // namespace tfc::rt
