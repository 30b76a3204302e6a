//===- Manifest.cpp - parsing the embedded model description --------------===//

#include "runtime/Manifest.h"

#include "runtime/FileIO.h"
#include "runtime/JsonLimits.h"
#include "runtime/TrainBlock.h"

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace tfc::rt {

static int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t TensorSpec::numel() const { return product(shape); }
int64_t ParamSpec::numel() const { return product(shape); }

const EntrySpec *Manifest::entry(std::string_view name) const {
  for (const EntrySpec &e : entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

const ParamSpec *Manifest::param(const std::string &name) const {
  for (const ParamSpec &p : params)
    if (p.name == name)
      return &p;
  return nullptr;
}

const TensorSpec *Manifest::input(const std::string &name) const {
  for (const TensorSpec &i : inputs)
    if (i.name == name)
      return &i;
  return nullptr;
}

static bool parseDType(const json &j, DType &out) {
  if (!j.is_string())
    return false;
  std::string s = j.get<std::string>();
  if (s == abi::kF32)
    out = DType::F32;
  else if (s == abi::kI32)
    out = DType::I32;
  else if (s == abi::kBool)
    out = DType::Bool;
  else
    return false;
  return true;
}

static bool parseShape(const json &j, std::vector<int64_t> &out) {
  if (!j.is_array())
    return false;
  for (const json &d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      return false;
    out.push_back(d.get<int64_t>());
  }
  return detail::shapeProductFits(out); // numel() must not overflow
}

static bool parseTensor(const json &j, TensorSpec &out) {
  if (!j.is_object() || !j.contains(abi::key::kName) || !j[abi::key::kName].is_string() ||
      !j.contains(abi::key::kDtype) || !j.contains(abi::key::kShape))
    return false;
  out.name = j[abi::key::kName].get<std::string>();
  if (j.contains(abi::key::kKind)) {
    const json &kind = j[abi::key::kKind];
    std::optional<abi::ValueKind> parsed =
        kind.is_string() ? abi::parseKind(kind.get<std::string>()) : std::nullopt;
    if (!parsed)
      return false; // a kind this runtime does not know: another tfc's binary
    out.kind = *parsed;
  }
  return parseDType(j[abi::key::kDtype], out.dtype) && parseShape(j[abi::key::kShape], out.shape);
}

double TrainCallSpec::number(const std::string &key, double fallback) const {
  auto it = args.find(key);
  if (it == args.end())
    return fallback;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return double(*i);
  if (auto *d = std::get_if<double>(&it->second))
    return *d;
  return fallback;
}

// json::value() throws when the key holds another type (and an exception
// escaping parseManifest aborts); these return false instead.

/// `j[key]` when it is an integer, `fallback` when absent.
static bool optionalInt(const json &j, const char *key, int64_t fallback, int64_t &out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_number_integer())
    return false;
  out = it == j.end() ? fallback : it->get<int64_t>();
  return true;
}

/// `j[key]` when it is a number, `fallback` when absent.
static bool optionalNumber(const json &j, const char *key, double fallback, double &out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_number())
    return false;
  out = it == j.end() ? fallback : it->get<double>();
  return true;
}

/// `j[key]` when it is a string, `fallback` when absent.
static bool optionalString(const json &j, const char *key, const char *fallback,
                           std::string &out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_string())
    return false;
  out = it == j.end() ? std::string(fallback) : it->get<std::string>();
  return true;
}

/// `key`'s array of strings appended to `out`; absent is none.
static bool optionalStrings(const json &j, const char *key, std::vector<std::string> &out) {
  auto it = j.find(key);
  if (it == j.end())
    return true;
  if (!it->is_array())
    return false;
  for (const json &s : *it) {
    if (!s.is_string())
      return false;
    out.push_back(s.get<std::string>());
  }
  return true;
}

static bool parseCall(const json &j, TrainCallSpec &out) {
  if (!j.is_object() || !j.contains(train::key::kName) || !j[train::key::kName].is_string())
    return false;
  out.name = j[train::key::kName].get<std::string>();
  if (j.contains(train::key::kArgs) && j[train::key::kArgs].is_object())
    for (auto &[key, v] : j[train::key::kArgs].items()) {
      if (v.is_boolean())
        out.args[key] = v.get<bool>();
      else if (v.is_number_integer())
        out.args[key] = v.get<int64_t>();
      else if (v.is_number())
        out.args[key] = v.get<double>();
      else if (v.is_string())
        out.args[key] = v.get<std::string>();
      else
        return false;
    }
  return true;
}

static bool parseTrain(const json &j, TrainSpec &out) {
  if (!j.is_object())
    return false;
  for (auto [key, slot] : {std::pair{train::key::kData, &out.data},
                           std::pair{train::key::kOptimizer, &out.optimizer},
                           std::pair{train::key::kSchedule, &out.schedule}})
    if (j.contains(key)) {
      TrainCallSpec call;
      if (!parseCall(j[key], call))
        return false;
      *slot = std::move(call);
    }
  for (auto [key, slot] : {std::pair{train::key::kBatch, &out.batch},
                           std::pair{train::key::kEpochs, &out.epochs},
                           std::pair{train::key::kSeed, &out.seed}})
    if (j.contains(key) && j[key].is_number_integer())
      *slot = j[key].get<int64_t>();
  if (j.contains(train::key::kClipGradNorm) && j[train::key::kClipGradNorm].is_number())
    out.clipGradNorm = j[train::key::kClipGradNorm].get<double>();
  if (j.contains(train::key::kBest) && j[train::key::kBest].is_string())
    out.best = j[train::key::kBest].get<std::string>();
  return true;
}

static bool parseCpu(const json &j, CpuSpec &out) {
  return j.is_object() && optionalString(j, abi::key::kName, "", out.name) &&
         optionalString(j, abi::key::kCpuTarget, "", out.target) &&
         optionalStrings(j, abi::key::kCpuFeatures, out.features);
}

static bool parseCuda(const json &j, CudaSpec &out) {
  if (!j.is_object())
    return false;
  // "arch": "sm_90" or ["sm_80", "sm_90"], or absent (a PTX image).
  if (j.contains(abi::key::kCudaArch)) {
    const json &arch = j[abi::key::kCudaArch];
    if (arch.is_string())
      out.archs.push_back(arch.get<std::string>());
    else if (!arch.is_array())
      return false;
    for (const json &a : arch.is_array() ? arch : json::array()) {
      if (!a.is_string())
        return false;
      out.archs.push_back(a.get<std::string>());
    }
  }
  if (!optionalString(j, abi::key::kCudaImage, "", out.image) ||
      (out.image != "fatbin" && out.image != "ptx") || !j.contains(abi::key::kCudaKernels) ||
      !j[abi::key::kCudaKernels].is_array())
    return false;
  for (const json &k : j[abi::key::kCudaKernels]) {
    if (!k.is_string() || k.get<std::string>().empty())
      return false;
    out.kernels.push_back(k.get<std::string>());
  }
  // "kernel_sources": optional, one string a kernel; "dependent_launch":
  // optional, archs.
  if (!optionalStrings(j, abi::key::kCudaKernelSources, out.kernelSources) ||
      (j.contains(abi::key::kCudaKernelSources) &&
       out.kernelSources.size() != out.kernels.size()) ||
      !optionalStrings(j, abi::key::kCudaDependentLaunch, out.dependentLaunch))
    return false;
  // "persistent": absent is false.
  if (j.contains(abi::key::kCudaPersistent)) {
    if (!j[abi::key::kCudaPersistent].is_boolean())
      return false;
    out.persistent = j[abi::key::kCudaPersistent].get<bool>();
  }
  // "precision": absent (a model before --precision) is fp32.
  return optionalString(j, abi::key::kCudaPrecision, abi::key::kPrecisionFp32, out.precision) &&
         (out.precision == abi::key::kPrecisionFp32 || out.precision == abi::key::kPrecisionTf32 ||
          out.precision == abi::key::kPrecisionBf16);
}

bool parseManifest(const char *text, Manifest &out, std::string &error) {
  auto fail = [&](const std::string &what) {
    error = "the model's embedded manifest is malformed (" + what +
            "); recompile the model with this version of tfc";
    return false;
  };
  if (!detail::jsonDepthWithin(text))
    return fail("JSON nested deeper than " + std::to_string(detail::kMaxJsonDepth) +
                " levels");
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return fail("not a JSON object");
  int64_t version = 0;
  if (!optionalInt(j, abi::key::kVersion, 0, version) || version != abi::kManifestVersion)
    return fail("unknown version");
  if (!optionalString(j, abi::key::kModel, "model", out.model))
    return fail("the model's name");
  // Batch 0 would divide by zero, and loop forever, in training.
  if (!optionalInt(j, abi::key::kBatch, 1, out.batch) || out.batch < 1)
    return fail("the batch");
  if (j.contains(abi::key::kParams) && j[abi::key::kParams].is_array())
    for (const json &p : j[abi::key::kParams]) {
      ParamSpec param;
      TensorSpec spec;
      if (!parseTensor(p, spec))
        return fail("a parameter");
      param.name = spec.name;
      param.dtype = spec.dtype;
      param.shape = spec.shape;
      if (p.contains(abi::key::kInit) && p[abi::key::kInit].is_object() &&
          (!optionalString(p[abi::key::kInit], abi::key::kKind, "zeros", param.init.kind) ||
           !optionalNumber(p[abi::key::kInit], abi::key::kScale, 0.0, param.init.scale)))
        return fail("parameter '" + param.name + "'");
      out.params.push_back(std::move(param));
    }
  if (j.contains(abi::key::kInputs) && j[abi::key::kInputs].is_array())
    for (const json &i : j[abi::key::kInputs]) {
      TensorSpec spec;
      if (!parseTensor(i, spec))
        return fail("an input");
      spec.kind = abi::ValueKind::Input;
      if (i.contains(abi::key::kIndexBound)) {
        const json &bound = i[abi::key::kIndexBound];
        if (!bound.is_number_integer() || bound.get<int64_t>() < 1 || spec.dtype != DType::I32)
          return fail("input '" + spec.name + "' (its index_bound)");
        spec.indexBound = bound.get<int64_t>();
      }
      out.inputs.push_back(std::move(spec));
    }
  if (j.contains(abi::key::kEntries) && j[abi::key::kEntries].is_array())
    for (const json &e : j[abi::key::kEntries]) {
      EntrySpec entry;
      if (!e.is_object() || !e.contains(abi::key::kName) || !e[abi::key::kName].is_string() ||
          !e.contains(abi::key::kSymbol) || !e[abi::key::kSymbol].is_string())
        return fail("an entry");
      entry.name = e[abi::key::kName].get<std::string>();
      entry.symbol = e[abi::key::kSymbol].get<std::string>();
      if (!optionalInt(e, abi::key::kArenaBytes, 0, entry.arenaBytes) || entry.arenaBytes < 0)
        return fail("entry '" + entry.name + "'");
      if (e.contains(abi::key::kGraph)) {
        const json &g = e[abi::key::kGraph];
        if (!g.is_object() || !optionalInt(g, abi::key::kOps, 0, entry.graphOps) ||
            !optionalInt(g, abi::key::kLongestPath, 0, entry.graphLongestPath) ||
            entry.graphOps < 0 || entry.graphLongestPath < 0 ||
            entry.graphLongestPath > entry.graphOps)
          return fail("entry '" + entry.name + "'");
      }
      for (const char *list : {abi::key::kArgs, abi::key::kResults}) {
        if (!e.contains(list) || !e[list].is_array())
          return fail("entry '" + entry.name + "'");
        for (const json &t : e[list]) {
          TensorSpec spec;
          if (!parseTensor(t, spec) || (list == abi::key::kResults &&
                                        !optionalInt(t, abi::key::kInPlaceOf, -1, spec.inPlaceOf)))
            return fail("entry '" + entry.name + "'");
          (list == abi::key::kArgs ? entry.args : entry.results).push_back(spec);
        }
      }
      // A result written over an argument: one of the same kind, name,
      // dtype and shape, and no other result over it.
      std::vector<bool> overwritten(entry.args.size(), false);
      for (const TensorSpec &result : entry.results) {
        if (result.inPlaceOf < 0)
          continue;
        const size_t i = size_t(result.inPlaceOf);
        if (i >= entry.args.size() || overwritten[i] || entry.args[i].kind != result.kind ||
            entry.args[i].name != result.name || entry.args[i].dtype != result.dtype ||
            entry.args[i].shape != result.shape)
          return fail("entry '" + entry.name + "' (result '" + result.name + "' in place of " +
                      "argument " + std::to_string(result.inPlaceOf) + ")");
        overwritten[i] = true;
      }
      out.entries.push_back(std::move(entry));
    }
  if (j.contains(abi::key::kTrain) && !parseTrain(j[abi::key::kTrain], out.train))
    return fail("the train block");
  if (j.contains(abi::key::kCpu) && !parseCpu(j[abi::key::kCpu], out.cpu.emplace()))
    return fail("the cpu record");
  if (!optionalString(j, abi::key::kDevice, abi::key::kDeviceCpu, out.device) ||
      (out.device != abi::key::kDeviceCpu && out.device != abi::key::kDeviceCuda))
    return fail("the device");
  if (j.contains(abi::key::kCuda) && !parseCuda(j[abi::key::kCuda], out.cuda.emplace()))
    return fail("the cuda record");
  if ((out.device == abi::key::kDeviceCuda) != out.cuda.has_value())
    return fail(out.cuda ? "a cuda record on a cpu model" : "a cuda model without its cuda record");
  out.digest = 0xcbf29ce484222325ull;
  for (const char *c = text; *c; ++c)
    out.digest = (out.digest ^ uint8_t(*c)) * 0x100000001b3ull;
  return true;
}

} // namespace tfc::rt
