//===- Cli.cpp - the command line of every compiled model -----------------===//
//
//   MODEL info
//   MODEL init --seed N --out params.safetensors
//   MODEL predict [--params P.safetensors] --input NAME=FILE.npy ... --output-dir DIR
//   MODEL train [--epochs N] [--lr X] [--seed N] [--run-dir DIR] [--resume] [--data DIR] [--best S]
//   MODEL eval --checkpoint FILE [--split val|test|all] [--data DIR]
//   MODEL attention --checkpoint F --input NAME=FILE.npy ... [--sample I] --svg OUT.svg
//   MODEL run ENTRY [--params P] --feed KIND:NAME=FILE.npy ... --output-dir DIR
//   MODEL bench [--steps N] [--warmup N] [--entry train_step|predict|evaluate|all]
//   MODEL tune [--steps N] [--warmup N] [--threshold X] [--entry E] [--dry-run]
//   MODEL generate [--params P] --prompt TEXT|--prompt-npy F [--max-new-tokens N]
//                  [--temperature T] [--top-k K] [--seed S] [--output F.npy]
//
// A model compiled for CUDA (tfc compile --target=cuda) takes two options
// more: --device N (the GPU; default $TFC_CUDA_DEVICE, else 0, or under
// mpirun the rank's local rank modulo the node's GPUs) and
// --no-graph (launch every kernel eagerly instead of replaying each entry as
// a CUDA graph; also TFC_CUDA_GRAPHS=0). `info` and `init` need no GPU; any
// other command opens the device first and, without one, exits 1 with one
// line saying what is missing. Its device applies, when it opens, the
// runtime settings `tune` kept for this model on this GPU (runtime/Tune.h;
// TFC_TUNED=0: not), then those the environment sets.
//
// Every failure prints one line naming what is wrong (the file, both shapes)
// and exits 1; nothing is written unless the whole command succeeded. Exit
// codes: 0 success, 1 error, 2 usage error (a command line that does not
// parse: unknown or missing option, bad value, --threads above maxThreads()),
// and for `train` 130 on SIGINT and 143 on SIGTERM (checkpoint saved).
//
//===----------------------------------------------------------------------===//

#include "runtime/AttentionSvg.h"
#include "runtime/Bench.h"
#include "runtime/CpuCheck.h"
#include "runtime/Distributed.h"
#include "runtime/Generate.h"
#include "runtime/InputChecks.h"
#include "runtime/Model.h"
#include "runtime/ThreadPool.h"
#include "runtime/Train.h"
#include "runtime/Tune.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

namespace tfc::rt {
namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

/// The exit status of a command line that does not parse.
constexpr int kUsageError = 2;

/// An integer option of at least `min`, with a message that says so (CLI11's
/// PositiveNumber prints its range's bound as 300 digits).
CLI::Validator atLeast(int64_t min) {
  return CLI::Validator(
      [min](std::string &value) -> std::string {
        errno = 0;
        char *end = nullptr;
        long long v = std::strtoll(value.c_str(), &end, 10);
        if (errno || end == value.c_str() || *end)
          return "'" + value + "' is not an integer";
        return v >= min ? "" : "must be at least " + std::to_string(min) + " (got " + value + ")";
      },
      min == 0 ? "NONNEGATIVE" : min == 1 ? "POSITIVE" : ">= " + std::to_string(min));
}

std::string bytesString(int64_t bytes) {
  char buf[64];
  if (bytes >= (1 << 20))
    std::snprintf(buf, sizeof buf, " (%.1f MiB)", bytes / 1048576.0);
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof buf, " (%.1f KiB)", bytes / 1024.0);
  else
    buf[0] = 0;
  return withThousands(bytes) + " bytes" + buf;
}

std::string specString(DType dtype, const std::vector<int64_t> &shape) {
  return std::string(dtypeName(dtype)) + shapeString(shape);
}

/// The CPU the binary was compiled for and everything it needs of the one it
/// runs on: the generated code's features and the runtime kernels'.
void printCpu(const Manifest &m) {
  std::printf("\ncpu:\n");
  if (m.cpu) {
    if (m.cpu->name == "native")
      std::printf("  compiled for %s, the compiling machine's CPU (--cpu=native)\n",
                  m.cpu->target.c_str());
    else
      std::printf("  compiled for %s (--cpu=%s)\n", m.cpu->name.c_str(), m.cpu->name.c_str());
  }
  if (*kernelMarch())
    std::printf("  runtime kernels built with -march=%s\n", kernelMarch());
  std::set<std::string> needs;
  if (m.cpu)
    needs.insert(m.cpu->features.begin(), m.cpu->features.end());
  for (std::string word, list = kernelFeatures(); !list.empty();) {
    size_t space = list.find(' ');
    word = list.substr(0, space);
    list = space == std::string::npos ? "" : list.substr(space + 1);
    if (!word.empty())
      needs.insert(word);
  }
  // Listed in the table's order (the x86-64 levels first), wrapped.
  std::string line = "  needs";
  for (const cpu::Feature &f : cpu::kFeatures) {
    if (!needs.count(std::string(f.name)))
      continue;
    if (line.size() + 1 + f.name.size() > 80) {
      std::printf("%s\n", line.c_str());
      line = "       ";
    }
    line += " " + std::string(f.name);
  }
  std::printf("%s\n", needs.empty() ? "  needs nothing beyond x86-64" : line.c_str());
  std::printf("  this CPU: %s\n", cpuBrand().c_str());
}

int info(Model &model) {
  const Manifest &m = model.manifest();
  std::printf("model %s, compiled for batch %lld, runs on device %s\n", m.model.c_str(),
              (long long)m.batch, model.device().name().c_str());
  // Data-parallel training (runtime/Distributed.h): `mpirun -np N` trains
  // with N ranks of this batch.
  const dist::World &w = dist::world();
  std::printf("ranks: %d (batch %lld a rank, a global batch of %lld)%s\n", w.size,
              (long long)m.batch, (long long)(m.batch * w.size),
              w.size > 1 ? "" : "; `mpirun -np N ... train` trains on N ranks");
  if (std::vector<std::string> lines = model.device().describe(m); !lines.empty()) {
    std::printf("\ndevice:\n");
    for (const std::string &line : lines)
      std::printf("  %s\n", line.c_str());
  }
  printCpu(m);
  std::printf("\ninputs:\n");
  for (const TensorSpec &i : m.inputs)
    std::printf("  %-24s %s\n", i.name.c_str(), specString(i.dtype, i.shape).c_str());
  if (const EntrySpec *predict = m.entry(abi::kPredict)) {
    std::printf("\noutputs:\n");
    for (const TensorSpec &r : predict->results)
      std::printf("  %-24s %s%s\n", r.name.c_str(), specString(r.dtype, r.shape).c_str(),
                  r.kind == abi::ValueKind::Attention ? "  (attention map)" : "");
  }
  // A model that generates: what `generate` reads and how far it goes.
  if (const EntrySpec *prefill = m.entry(abi::kPrefill); prefill && m.entry(abi::kDecode)) {
    const TensorSpec *tokens = nullptr;
    size_t caches = 0;
    for (const TensorSpec &a : prefill->args)
      if (a.kind == abi::ValueKind::Input)
        tokens = &a;
    for (const TensorSpec &r : prefill->results)
      caches += r.kind == abi::ValueKind::KvCache;
    if (tokens && tokens->shape.size() == 2)
      std::printf("\ngenerates: from '%s', up to %lld tokens, with %zu key and value caches "
                  "(`generate --prompt ...`)\n",
                  tokens->name.c_str(), (long long)tokens->shape[1], caches);
  }
  // Parameters grouped by layer: everything before the last '.'.
  std::printf("\nparameters:\n");
  int64_t total = 0, paramBytes = 0;
  std::vector<std::pair<std::string, std::vector<const ParamSpec *>>> layers;
  for (const ParamSpec &p : m.params) {
    size_t dot = p.name.rfind('.');
    std::string layer = dot == std::string::npos ? p.name : p.name.substr(0, dot);
    if (layers.empty() || layers.back().first != layer)
      layers.push_back({layer, {}});
    layers.back().second.push_back(&p);
    total += p.numel();
    paramBytes += p.numel() * int64_t(dtypeSize(p.dtype));
  }
  for (auto &[layer, params] : layers) {
    std::string shapes;
    int64_t count = 0;
    for (const ParamSpec *p : params) {
      size_t dot = p->name.rfind('.');
      shapes += (shapes.empty() ? "" : "  ") +
                (dot == std::string::npos ? p->name : p->name.substr(dot + 1)) +
                shapeString(p->shape);
      count += p->numel();
    }
    std::printf("  %-36s %-40s %12s\n", layer.c_str(), shapes.c_str(),
                withThousands(count).c_str());
  }
  std::printf("  %-36s %-40s %12s\n", "total", "", withThousands(total).c_str());
  std::printf("\nmemory:\n  parameters %s\n", bytesString(paramBytes).c_str());
  for (const EntrySpec &e : m.entries)
    std::printf("  %s: peak of intermediate buffers %s (planned at compile time)\n",
                e.name.c_str(), bytesString(e.arenaBytes).c_str());
  // The train block's defaults, which `train` uses unless flags override them.
  const TrainSpec &t = m.train;
  auto call = [](const std::optional<TrainCallSpec> &c) {
    if (!c)
      return std::string("-");
    std::string text = c->name + "(";
    bool first = true;
    for (auto &[key, value] : c->args) {
      text += (first ? "" : ", ") + key + ": ";
      first = false;
      if (auto *i = std::get_if<int64_t>(&value))
        text += std::to_string(*i);
      else if (auto *d = std::get_if<double>(&value)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", *d);
        text += buf;
      } else if (auto *b = std::get_if<bool>(&value))
        text += *b ? "true" : "false";
      else
        text += "\"" + std::get<std::string>(value) + "\"";
    }
    return text + ")";
  };
  if (m.entry(abi::kTrainStep)) {
    std::printf("\ntraining (the train block; `train` flags override):\n");
    std::printf("  data %s\n  epochs %s, seed %s\n  optimizer %s\n  schedule %s\n",
                call(t.data).c_str(), t.epochs ? std::to_string(*t.epochs).c_str() : "1",
                t.seed ? std::to_string(*t.seed).c_str() : "0", call(t.optimizer).c_str(),
                t.schedule ? call(t.schedule).c_str() : "constant");
    if (t.clipGradNorm)
      std::printf("  clip_grad_norm %g\n", *t.clipGradNorm);
  }
  return 0;
}

int init(Model &model, uint64_t seed, const std::string &out) {
  model.initParams(seed);
  std::string error;
  if (!model.saveParams(out, error))
    return fail(error);
  std::printf("wrote %zu parameters (seed %llu) to %s\n", model.params().size(),
              (unsigned long long)seed, out.c_str());
  return 0;
}

bool makeDirectories(const std::string &dir, std::string &error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && !std::filesystem::is_directory(dir, ec))
    ec = std::make_error_code(std::errc::not_a_directory);
  if (ec)
    error = "cannot create directory '" + dir + "': " + ec.message();
  return !ec;
}

/// Copies rows [begin, begin + count) of `src` (batch-leading) into the
/// first rows of `dst`; the rest of `dst` stays zero (padding).
void copyRows(const Tensor &src, int64_t begin, int64_t count, Tensor &dst) {
  size_t rowBytes = src.shape.empty() || src.shape[0] == 0
                        ? 0
                        : src.bytes.size() / size_t(src.shape[0]);
  std::memset(dst.bytes.data(), 0, dst.bytes.size());
  std::memcpy(dst.bytes.data(), src.bytes.data() + size_t(begin) * rowBytes,
              size_t(count) * rowBytes);
}

int predict(Model &model, const std::string &paramsPath, const std::vector<std::string> &inputArgs,
            const std::string &outputDir) {
  const Manifest &m = model.manifest();
  const EntrySpec *entry = m.entry(abi::kPredict);
  if (!entry || entry->results.empty())
    return fail("model '" + m.model + "' declares no output to predict");
  std::string error;
  if (paramsPath.empty()) {
    std::fprintf(stderr, "note: no --params given; using freshly initialised parameters "
                         "(seed 0)\n");
    model.initParams(0);
  } else if (!model.loadParams(paramsPath, error)) {
    return fail(error);
  }

  // NAME=FILE pairs, each naming one input the entry reads.
  std::map<std::string, Tensor> files;
  std::map<std::string, std::string> paths;
  for (const std::string &arg : inputArgs) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
      return fail("--input expects NAME=FILE.npy, got '" + arg + "'");
    std::string name = arg.substr(0, eq), path = arg.substr(eq + 1);
    bool known = false;
    for (const TensorSpec &a : entry->args)
      known |= a.kind == abi::ValueKind::Input && a.name == name;
    if (!known) {
      std::string expected;
      for (const TensorSpec &a : entry->args)
        if (a.kind == abi::ValueKind::Input)
          expected += (expected.empty() ? "" : ", ") + a.name;
      return fail("predict has no input '" + name + "' (it reads: " +
                  (expected.empty() ? "nothing" : expected) + ")");
    }
    if (files.count(name))
      return fail("input '" + name + "' is given twice");
    Tensor t;
    if (!readNpy(path, t, error))
      return fail(error);
    files[name] = std::move(t);
    paths[name] = path;
  }

  // Every input: same dtype; batch-leading ones any number of samples N.
  const int64_t batch = m.batch;
  int64_t samples = -1;
  std::string firstBatched;
  auto batched = [&](const std::vector<int64_t> &shape) {
    return !shape.empty() && shape[0] == batch;
  };
  for (const TensorSpec &a : entry->args) {
    if (a.kind != abi::ValueKind::Input)
      continue;
    auto it = files.find(a.name);
    if (it == files.end())
      return fail("missing --input " + a.name + "=FILE.npy (" +
                  specString(a.dtype, a.shape) + ")");
    const Tensor &t = it->second;
    std::vector<int64_t> expected = a.shape;
    if (batched(a.shape) && !t.shape.empty())
      expected[0] = t.shape[0];
    if (t.dtype != a.dtype || t.shape != expected) {
      std::string want = specString(a.dtype, a.shape);
      if (batched(a.shape)) // any number of samples: "i32[N, 16]"
        want = std::string(dtypeName(a.dtype)) + "[N" +
               (a.shape.size() > 1 ? ", " + shapeString(std::vector<int64_t>(
                                                 a.shape.begin() + 1, a.shape.end()))
                                                 .substr(1)
                                   : std::string("]"));
      return fail("input '" + a.name + "' is " + specString(t.dtype, t.shape) +
                  "; the model expects " + want);
    }
    if (const TensorSpec *input = m.input(a.name);
        input && !checkInputValues(*input, t, "'" + paths[a.name] + "'", 0, error))
      return fail(error);
    if (batched(a.shape)) {
      if (samples >= 0 && t.shape[0] != samples)
        return fail("inputs '" + firstBatched + "' and '" + a.name +
                    "' hold different numbers of samples (" + std::to_string(samples) +
                    " and " + std::to_string(t.shape[0]) + ")");
      if (samples < 0) {
        samples = t.shape[0];
        firstBatched = a.name;
      }
    }
  }
  if (samples == 0)
    return fail("the inputs hold no samples");
  if (samples < 0)
    samples = batch;
  for (const TensorSpec &r : entry->results)
    if (!batched(r.shape) && samples != batch)
      return fail("output '" + r.name + "' has no batch dimension, so predict needs exactly " +
                  std::to_string(batch) + " samples (got " + std::to_string(samples) + ")");

  // Run compiled batches; the last partial one is zero-padded.
  std::vector<Tensor> outputs;
  for (const TensorSpec &r : entry->results) {
    std::vector<int64_t> shape = r.shape;
    if (batched(shape))
      shape[0] = samples;
    outputs.emplace_back(r.dtype, shape);
  }
  std::map<std::string, Tensor> chunks;
  for (const TensorSpec &a : entry->args)
    if (a.kind == abi::ValueKind::Input)
      chunks[a.name] = Tensor(a.dtype, a.shape);
  std::vector<Tensor> results;
  for (int64_t begin = 0; begin < samples; begin += batch) {
    int64_t count = std::min(batch, samples - begin);
    std::map<std::string, const Tensor *> feeds;
    for (const TensorSpec &a : entry->args) {
      if (a.kind != abi::ValueKind::Input)
        continue;
      if (batched(a.shape)) {
        copyRows(files[a.name], begin, count, chunks[a.name]);
        feeds[a.name] = &chunks[a.name];
      } else {
        feeds[a.name] = &files[a.name];
      }
    }
    if (!model.run(*entry, feeds, results, error))
      return fail(error);
    for (size_t i = 0; i < results.size(); ++i) {
      Tensor &out = outputs[i];
      if (!batched(entry->results[i].shape)) {
        out = results[i];
        continue;
      }
      size_t rowBytes = results[i].bytes.size() / size_t(batch);
      std::memcpy(out.bytes.data() + size_t(begin) * rowBytes, results[i].bytes.data(),
                  size_t(count) * rowBytes);
    }
  }

  // Write everything to temporaries first, then rename: all or nothing.
  if (!makeDirectories(outputDir, error))
    return fail(error);
  std::vector<std::pair<std::string, std::string>> renames;
  auto cleanup = [&] {
    for (auto &[tmp, final] : renames)
      std::remove(tmp.c_str());
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string final = outputDir + "/" + entry->results[i].name + ".npy";
    std::string tmp = outputDir + "/." + entry->results[i].name + ".npy.partial";
    if (!writeNpy(tmp, outputs[i], error)) {
      cleanup();
      return fail(error);
    }
    renames.push_back({tmp, final});
  }
  for (auto &[tmp, final] : renames)
    if (std::rename(tmp.c_str(), final.c_str()) != 0) {
      std::string message = "cannot write '" + final + "': " + std::strerror(errno);
      cleanup();
      return fail(message);
    }
  for (size_t i = 0; i < outputs.size(); ++i)
    std::printf("wrote %s/%s.npy %s\n", outputDir.c_str(), entry->results[i].name.c_str(),
                specString(outputs[i].dtype, outputs[i].shape).c_str());
  return 0;
}

/// `MODEL attention --checkpoint F --input NAME=FILE.npy ... [--sample I] --svg OUT`:
/// every attention map of one sample, layers by rows and heads by columns,
/// with the sample's tokens as tick labels (as the UvA tutorial plots them).
int attention(Model &model, const std::string &checkpoint, const std::vector<std::string> &inputArgs,
              int64_t sample, const std::string &svgPath) {
  const Manifest &m = model.manifest();
  const EntrySpec *entry = m.entry(abi::kPredict);
  std::vector<size_t> maps;
  for (size_t i = 0; entry && i < entry->results.size(); ++i)
    if (entry->results[i].kind == abi::ValueKind::Attention)
      maps.push_back(i);
  if (maps.empty())
    return fail("this binary returns no attention maps; compile the model with "
                "`tfc compile --attention-maps`");
  std::string error;
  if (!model.loadParams(checkpoint, error))
    return fail(error);
  std::map<std::string, Tensor> batch;
  std::vector<std::string> labels;
  for (const std::string &arg : inputArgs) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("--input expects NAME=FILE.npy, got '" + arg + "'");
    std::string name = arg.substr(0, eq);
    const TensorSpec *spec = nullptr;
    for (const TensorSpec &a : entry->args)
      if (a.kind == abi::ValueKind::Input && a.name == name)
        spec = &a;
    if (!spec)
      return fail("predict has no input '" + name + "'");
    Tensor file;
    if (!readNpy(arg.substr(eq + 1), file, error))
      return fail(error);
    std::vector<int64_t> row(spec->shape.begin() + 1, spec->shape.end());
    std::vector<int64_t> fileRow(file.shape.begin() + (file.shape.empty() ? 0 : 1), file.shape.end());
    if (file.dtype != spec->dtype || file.shape.empty() || fileRow != row)
      return fail("input '" + name + "' is " + specString(file.dtype, file.shape) +
                  "; the model expects " + dtypeName(spec->dtype) + "[N" +
                  (row.empty() ? "]" : ", " + shapeString(row).substr(1)));
    if (sample < 0 || sample >= file.shape[0])
      return fail("--sample " + std::to_string(sample) + " is out of range: '" + name + "' holds " +
                  std::to_string(file.shape[0]) + " samples");
    Tensor one(spec->dtype, spec->shape);
    size_t rowBytes = file.bytes.size() / size_t(file.shape[0]);
    std::memcpy(one.bytes.data(), file.bytes.data() + size_t(sample) * rowBytes, rowBytes);
    // Row 0 is the sample; the zero rows after it are valid anywhere.
    if (const TensorSpec *input = m.input(name);
        input && !checkInputValues(*input, one, "'" + arg.substr(eq + 1) + "'", sample, error))
      return fail(error);
    if (labels.empty() && file.dtype == DType::I32 && row.size() == 1)
      for (int64_t j = 0; j < row[0]; ++j)
        labels.push_back(std::to_string(file.i32()[sample * row[0] + j]));
    batch[name] = std::move(one);
  }
  std::map<std::string, const Tensor *> feeds;
  for (const TensorSpec &a : entry->args)
    if (a.kind == abi::ValueKind::Input) {
      if (!batch.count(a.name))
        return fail("missing --input " + a.name + "=FILE.npy");
      feeds[a.name] = &batch[a.name];
    }
  std::vector<Tensor> results;
  if (!model.run(*entry, feeds, results, error))
    return fail(error);

  // Each map is [batch, heads, queries, keys] (or [batch, queries, keys]).
  std::vector<std::vector<AttentionGrid>> layers;
  for (size_t i : maps) {
    const Tensor &t = results[i];
    int64_t rank = int64_t(t.shape.size());
    int64_t heads = rank == 4 ? t.shape[1] : 1, rows = t.shape[size_t(rank - 2)],
            cols = t.shape[size_t(rank - 1)];
    std::vector<AttentionGrid> layer;
    for (int64_t h = 0; h < heads; ++h) {
      AttentionGrid grid{rows, cols, {}};
      const float *first = t.f32() + h * rows * cols; // sample 0 of the batch
      grid.weights.assign(first, first + rows * cols);
      layer.push_back(std::move(grid));
    }
    layers.push_back(std::move(layer));
  }
  bool square = !layers.empty() && layers[0][0].rows == int64_t(labels.size()) &&
                layers[0][0].cols == int64_t(labels.size());
  std::string svg;
  try {
    svg = renderAttentionSvg(layers, square ? labels : std::vector<std::string>{},
                             square ? labels : std::vector<std::string>{},
                             m.model + ": attention maps of sample " + std::to_string(sample));
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  if (!writeFileAtomically(svgPath, svg, error))
    return fail(error);
  std::printf("wrote %s (%zu layers x %zu heads)\n", svgPath.c_str(), layers.size(),
              layers[0].size());
  return 0;
}

/// `MODEL run ENTRY --params P --feed KIND:NAME=FILE.npy ... --output-dir DIR`:
/// one call of any entry on exactly one batch, every result written as
/// DIR/KIND.NAME.npy. For inspecting (and testing) a single training step.
int runEntry(Model &model, const std::string &entryName, const std::string &paramsPath,
             const std::vector<std::string> &feedArgs, const std::string &outputDir) {
  const Manifest &m = model.manifest();
  const EntrySpec *entry = m.entry(entryName);
  if (!entry) {
    std::string names;
    for (const EntrySpec &e : m.entries)
      names += (names.empty() ? "" : ", ") + e.name;
    return fail("no entry '" + entryName + "' (this model has: " + names + ")");
  }
  std::string error;
  if (paramsPath.empty())
    model.initParams(0);
  else if (!model.loadParams(paramsPath, error))
    return fail(error);
  std::map<std::string, Tensor> tensors;
  for (const std::string &arg : feedArgs) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("--feed expects KIND:NAME=FILE.npy, got '" + arg + "'");
    Tensor t;
    if (!readNpy(arg.substr(eq + 1), t, error))
      return fail(error);
    // An input is fed as input:NAME or NAME.
    std::string key = arg.substr(0, eq);
    const std::string prefix = feedKey(abi::ValueKind::Input, "");
    std::string inputName = key.rfind(prefix, 0) == 0 ? key.substr(prefix.size()) : key;
    if (const TensorSpec *input = m.input(inputName);
        input && !checkInputValues(*input, t, "'" + arg.substr(eq + 1) + "'", 0, error))
      return fail(error);
    tensors[key] = std::move(t);
  }
  // The sample offset is only a data-parallel rank's (its first sample in
  // the global batch): one call's is 0 unless fed.
  for (const TensorSpec &a : entry->args)
    if (a.kind == abi::ValueKind::SampleOffset && !tensors.count(a.feedKey()))
      tensors[a.feedKey()] = Tensor(a.dtype, a.shape);
  std::map<std::string, const Tensor *> feeds;
  for (auto &[key, t] : tensors)
    feeds[key] = &t;
  std::vector<Tensor> results;
  if (!model.run(*entry, feeds, results, error))
    return fail(error + " (feed it as --feed KIND:NAME=FILE.npy)");
  if (!makeDirectories(outputDir, error))
    return fail(error);
  for (size_t i = 0; i < results.size(); ++i) {
    const TensorSpec &r = entry->results[i];
    if (!writeNpy(outputDir + "/" + std::string(abi::kindName(r.kind)) + "." + r.name + ".npy", results[i], error))
      return fail(error);
  }
  std::printf("wrote %zu results of '%s' to %s\n", results.size(), entryName.c_str(),
              outputDir.c_str());
  return 0;
}

} // namespace
} // namespace tfc::rt

int main(int argc, char **argv) {
  using namespace tfc::rt;
  // Before anything else: a CPU without what the binary was compiled for
  // (tfc compile --cpu) gets a message, not an illegal instruction.
  if (int status = checkCpu())
    return status;
  Model model;
  std::string error;
  if (!model.load(error))
    return fail(error);
  const Manifest &m = model.manifest();

  CLI::App app{"The compiled model '" + m.model + "' (tfc). Run a command with --help for its options."};
  app.require_subcommand(1);
  app.fallthrough(); // `MODEL predict --threads 1 ...` works as well as before the command
  int threads = 0;
  app.add_option("--threads", threads, "Worker threads (default: every core; at most " +
                                          std::to_string(maxThreads()) + ")")
      ->check(atLeast(0));
  bool keepDenormals = false;
  app.add_flag("--keep-denormals", keepDenormals,
               "Keep subnormal floats as IEEE 754 has them (default: flushed to zero, "
               "as TensorFlow and oneDNN do; kept, a training step can get many times slower)");

  // A CUDA model's device: which GPU, and graphs or eager launches.
  DeviceOptions deviceOptions;
  if (m.device == tfc::abi::key::kDeviceCuda) {
    if (const char *index = std::getenv("TFC_CUDA_DEVICE"); index && *index)
      deviceOptions.index = std::atoi(index), deviceOptions.indexGiven = true;
    if (const char *graphs = std::getenv("TFC_CUDA_GRAPHS"); graphs && std::string(graphs) == "0")
      deviceOptions.graphs = false;
    if (const char *tuned = std::getenv("TFC_TUNED"); tuned && std::string(tuned) == "0")
      deviceOptions.tuned = false;
    auto chooseDevice = [&](const int &index) {
      deviceOptions.index = index;
      deviceOptions.indexGiven = true;
    };
    app.add_option_function<int>("--device", chooseDevice,
                                 "The CUDA device to run on (default: $TFC_CUDA_DEVICE, else 0; "
                                 "under mpirun, the rank's local rank modulo the node's GPUs)")
        ->check(atLeast(0));
    app.add_flag_function("--no-graph", [&](int64_t) { deviceOptions.graphs = false; },
                 "Launch every kernel eagerly (default: each entry is captured as a CUDA graph "
                 "on its second call and replayed; also TFC_CUDA_GRAPHS=0)");
  }

  CLI::App *infoCmd = app.add_subcommand("info", "Inputs, outputs, parameters and peak memory");

  CLI::App *initCmd = app.add_subcommand("init", "Write freshly initialised parameters");
  uint64_t seed = 0;
  std::string out;
  initCmd->add_option("--seed", seed, "Random seed")->capture_default_str();
  initCmd->add_option("--out", out, "The safetensors file to write")->required();

  CLI::App *predictCmd = app.add_subcommand("predict", "Run the model on .npy inputs");
  std::string params, outputDir;
  std::vector<std::string> inputs;
  predictCmd->add_option("--params", params, "Parameters (safetensors; default: init seed 0)");
  predictCmd->add_option("--input", inputs, "NAME=FILE.npy, once per input")->required();
  predictCmd->add_option("--output-dir", outputDir, "Where OUTPUT.npy files go")->required();

  CLI::App *trainCmd = app.add_subcommand(
      "train", "Train with the file's train block (flags override it); progress, "
               "RUN_DIR/metrics.jsonl, RUN_DIR/{last,best}.safetensors");
  TrainOptions trainOptions;
  trainCmd->add_option("--epochs", trainOptions.epochs, "Epochs (default: the train block's)")
      ->check(atLeast(1));
  trainCmd->add_option("--lr", trainOptions.lr, "Base learning rate (default: the optimizer's lr)");
  trainCmd->add_option("--seed", trainOptions.seed, "Seed of parameters, data order and dropout");
  trainCmd->add_option("--batch", trainOptions.batch, "Must equal the compiled batch");
  trainCmd->add_option("--run-dir", trainOptions.runDir, "Where checkpoints and metrics go (default: runs/MODEL)");
  trainCmd->add_option("--data", trainOptions.dataDir, "Train on DIR/{train,val,test}/INPUT.npy instead");
  trainCmd->add_flag("--resume", trainOptions.resume, "Continue from RUN_DIR/last.safetensors exactly");
  trainCmd->add_option("--best", trainOptions.best,
                       "The validation score that picks best.safetensors: NAME (the loss is "
                       "lower-better, a metric higher-better), min:NAME or max:NAME (default: "
                       "the train block's best, else the first metric, else the loss)");
  trainCmd->add_option("--stop-after", trainOptions.stopAfter,
                       "Stop after this many epochs, as Ctrl-C would (resume continues)")
      ->check(atLeast(0));

  CLI::App *evalCmd = app.add_subcommand("eval", "Loss and metrics of a checkpoint on val and test");
  EvalOptions evalOptions;
  evalCmd->add_option("--checkpoint", evalOptions.checkpoint, "Parameters (safetensors)")->required();
  evalCmd->add_option("--split", evalOptions.split, "val, test or all")
      ->check(CLI::IsMember({"val", "test", "all"}))
      ->capture_default_str();
  evalCmd->add_option("--data", evalOptions.dataDir, "Evaluate DIR/{val,test}/INPUT.npy instead");
  evalCmd->add_option("--seed", evalOptions.seed, "Seed of a generated dataset (default: the train block's)");

  CLI::App *attentionCmd = app.add_subcommand(
      "attention", "Draw every attention map of one sample as an SVG (needs --attention-maps)");
  std::string attentionCheckpoint, svgPath;
  std::vector<std::string> attentionInputs;
  int64_t attentionSample = 0;
  attentionCmd->add_option("--checkpoint", attentionCheckpoint, "Parameters (safetensors)")->required();
  attentionCmd->add_option("--input", attentionInputs, "NAME=FILE.npy, once per input")->required();
  attentionCmd->add_option("--sample", attentionSample, "Which sample of the inputs")->capture_default_str();
  attentionCmd->add_option("--svg", svgPath, "The SVG file to write")->required();

  CLI::App *runCmd = app.add_subcommand("run", "Call one entry (e.g. train_step) once on .npy feeds");
  std::string runEntryName, runParams, runOutputDir;
  std::vector<std::string> runFeeds;
  runCmd->add_option("entry", runEntryName, "predict, evaluate or train_step")->required();
  runCmd->add_option("--params", runParams, "Parameters (safetensors; default: init seed 0)");
  runCmd->add_option("--feed", runFeeds, "KIND:NAME=FILE.npy for each non-parameter argument");
  runCmd->add_option("--output-dir", runOutputDir, "Where KIND.NAME.npy files go")->required();

  BenchOptions benchOptions;
  CLI::App *benchCmd = addBenchCommand(app, benchOptions);
  TuneOptions tuneOptions;
  CLI::App *tuneCmd = addTuneCommand(app, tuneOptions);

  CLI::App *generateCmd = app.add_subcommand(
      "generate", "Continue a prompt token by token with a KV cache (a model that declares "
                  "`generate`)");
  GenerateOptions generateOptions;
  generateCmd->add_option("--params", generateOptions.params,
                          "Parameters (safetensors; default: init seed 0)");
  CLI::Option *promptOption = generateCmd->add_option(
      "--prompt", generateOptions.prompt, "The prompt as text: its bytes are the tokens");
  generateCmd->add_option("--prompt-npy", generateOptions.promptNpy,
                          "The prompt as token ids, i32 [n]")
      ->excludes(promptOption);
  generateCmd->add_option("--max-new-tokens", generateOptions.maxNewTokens,
                          "Tokens to generate, at most up to the model's sequence length")
      ->check(atLeast(1))
      ->capture_default_str();
  generateCmd->add_option("--temperature", generateOptions.temperature,
                          "Divides the logits; 0 takes the most likely token")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  generateCmd->add_option("--top-k", generateOptions.topK,
                          "Sample among the K most likely tokens (0: all)")
      ->check(atLeast(0))
      ->capture_default_str();
  generateCmd->add_option("--seed", generateOptions.seed, "Seed of the sampling")
      ->capture_default_str();
  generateCmd->add_option("--output", generateOptions.output,
                          "Also write every token (prompt, then new) to this .npy, i32");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help prints and exits 0; anything else is a usage error, 2 (CLI11's
    // own codes, 101 to 130, would read as crashes or signals).
    return app.exit(e) == 0 ? 0 : kUsageError;
  }
  if (threads > maxThreads()) {
    std::fprintf(stderr,
                 "error: --threads %d is above the limit of %d (4 x this machine's %u hardware "
                 "threads, at least 256): threads beyond the cores only slow every loop\n"
                 "Run with --help for more information.\n",
                 threads, maxThreads(), std::thread::hardware_concurrency());
    return kUsageError;
  }
  setNumThreads(threads);
  // Start the workers now, where a refused thread (a process limit, no memory
  // for its stack) is an error to report, not an exception deep in a step.
  if (std::string threadError; !startThreads(threadError)) {
    if (threads > 0)
      return fail("--threads " + std::to_string(threads) + ": " + threadError +
                  "; ask for fewer threads");
    std::fprintf(stderr, "warning: %s; running on %d thread(s)\n", threadError.c_str(),
                 numThreads());
  }
  // Data-parallel training (runtime/Distributed.h): a rank's GPU, unless
  // --device says, is its local rank's; the device plans memory for the
  // steps that run (a wrong TFC_DATA_PARALLEL is train's error).
  deviceOptions.localRank = dist::world().localRank;
  bool dataParallel = false;
  std::string switchError;
  if (dist::dataParallel(dataParallel, switchError)) {
    // bench steps alone: data-parallel (as one rank) by the switch only.
    const char *oneRank = std::getenv(dist::kDataParallelSwitch);
    deviceOptions.dataParallel = *trainCmd || *infoCmd ? dataParallel
                                 : *benchCmd           ? oneRank && *oneRank
                                                       : false;
  }
  // tune starts from the defaults, not from what it kept before.
  if (*tuneCmd)
    deviceOptions.tuned = false;
  model.device().configure(deviceOptions);
  model.device().setFlushDenormals(!keepDenormals);
  // Every command but info and init runs entries: open the device first, so
  // that a machine without one (no CUDA driver, no GPU) gets one line now.
  // Under mpirun, train is data-parallel; every other command is rank 0's.
  if (dist::parallel() && dist::world().rank != 0 && !*trainCmd)
    return 0;
  if (!*infoCmd && !*initCmd)
    if (!model.openDevice(error))
      return fail(error);
  auto command = [&] {
    if (*infoCmd)
      return info(model);
    if (*initCmd)
      return init(model, seed, out);
    if (*predictCmd)
      return predict(model, params, inputs, outputDir);
    if (*trainCmd)
      return train(model, trainOptions);
    if (*attentionCmd)
      return attention(model, attentionCheckpoint, attentionInputs, attentionSample, svgPath);
    if (*runCmd)
      return runEntry(model, runEntryName, runParams, runFeeds, runOutputDir);
    if (*evalCmd)
      return evaluate(model, evalOptions);
    if (*benchCmd)
      return bench(model, benchOptions);
    if (*tuneCmd)
      return tune(model, tuneOptions);
    if (*generateCmd) {
      generateOptions.promptGiven = promptOption->count() > 0;
      return generate(model, generateOptions);
    }
    return 1;
  };
  // Parameters, optimizer state, arenas and inputs are allocated as a command
  // needs them; a model too large for this machine ends in one line, not an
  // abort (outputs are written only when a command has succeeded).
  try {
    int status = command();
    // Ranks that stop together (done, a signal) leave MPI together; one that
    // fails alone takes the others down with it rather than leave them
    // waiting for it.
    if (dist::parallel() && status != 0 && status < 128)
      dist::abortAll(status);
    dist::finalize();
    return status;
  } catch (const std::bad_alloc &) {
    return fail("out of memory: model '" + m.model + "' needs more than this machine can "
                "give (`info` lists its parameters and arenas)");
  }
}
