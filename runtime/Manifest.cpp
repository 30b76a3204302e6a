//===- Manifest.cpp - parsing the embedded model description --------------===//

#include "runtime/Manifest.h"

#include "runtime/FileIO.h"
#include "runtime/JsonLimits.h"

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

const EntrySpec *Manifest::entry(const std::string &name) const {
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

static bool parseDType(const json &j, DType &out) {
  if (!j.is_string())
    return false;
  std::string s = j.get<std::string>();
  if (s == "f32")
    out = DType::F32;
  else if (s == "i32")
    out = DType::I32;
  else if (s == "bool")
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
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string() ||
      !j.contains("dtype") || !j.contains("shape"))
    return false;
  out.name = j["name"].get<std::string>();
  if (j.contains("kind") && j["kind"].is_string())
    out.kind = j["kind"].get<std::string>();
  return parseDType(j["dtype"], out.dtype) && parseShape(j["shape"], out.shape);
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

static bool parseCall(const json &j, TrainCallSpec &out) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
    return false;
  out.name = j["name"].get<std::string>();
  if (j.contains("args") && j["args"].is_object())
    for (auto &[key, v] : j["args"].items()) {
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
  for (auto [key, slot] : {std::pair{"data", &out.data}, std::pair{"optimizer", &out.optimizer},
                           std::pair{"schedule", &out.schedule}})
    if (j.contains(key)) {
      TrainCallSpec call;
      if (!parseCall(j[key], call))
        return false;
      *slot = std::move(call);
    }
  for (auto [key, slot] : {std::pair{"batch", &out.batch}, std::pair{"epochs", &out.epochs},
                           std::pair{"seed", &out.seed}})
    if (j.contains(key) && j[key].is_number_integer())
      *slot = j[key].get<int64_t>();
  if (j.contains("clip_grad_norm") && j["clip_grad_norm"].is_number())
    out.clipGradNorm = j["clip_grad_norm"].get<double>();
  return true;
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
  if (!optionalInt(j, "version", 0, version) || version != 1)
    return fail("unknown version");
  if (!optionalString(j, "model", "model", out.model))
    return fail("the model's name");
  // Batch 0 would divide by zero, and loop forever, in training.
  if (!optionalInt(j, "batch", 1, out.batch) || out.batch < 1)
    return fail("the batch");
  if (j.contains("params") && j["params"].is_array())
    for (const json &p : j["params"]) {
      ParamSpec param;
      TensorSpec spec;
      if (!parseTensor(p, spec))
        return fail("a parameter");
      param.name = spec.name;
      param.dtype = spec.dtype;
      param.shape = spec.shape;
      if (p.contains("init") && p["init"].is_object() &&
          (!optionalString(p["init"], "kind", "zeros", param.init.kind) ||
           !optionalNumber(p["init"], "scale", 0.0, param.init.scale)))
        return fail("parameter '" + param.name + "'");
      out.params.push_back(std::move(param));
    }
  if (j.contains("inputs") && j["inputs"].is_array())
    for (const json &i : j["inputs"]) {
      TensorSpec spec;
      if (!parseTensor(i, spec))
        return fail("an input");
      spec.kind = "input";
      if (i.contains("index_bound")) {
        const json &bound = i["index_bound"];
        if (!bound.is_number_integer() || bound.get<int64_t>() < 1 || spec.dtype != DType::I32)
          return fail("input '" + spec.name + "' (its index_bound)");
        spec.indexBound = bound.get<int64_t>();
      }
      out.inputs.push_back(std::move(spec));
    }
  if (j.contains("entries") && j["entries"].is_array())
    for (const json &e : j["entries"]) {
      EntrySpec entry;
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string() ||
          !e.contains("symbol") || !e["symbol"].is_string())
        return fail("an entry");
      entry.name = e["name"].get<std::string>();
      entry.symbol = e["symbol"].get<std::string>();
      if (!optionalInt(e, "arena_bytes", 0, entry.arenaBytes) || entry.arenaBytes < 0)
        return fail("entry '" + entry.name + "'");
      for (const char *list : {"args", "results"}) {
        if (!e.contains(list) || !e[list].is_array())
          return fail("entry '" + entry.name + "'");
        for (const json &t : e[list]) {
          TensorSpec spec;
          if (!parseTensor(t, spec))
            return fail("entry '" + entry.name + "'");
          (std::string(list) == "args" ? entry.args : entry.results).push_back(spec);
        }
      }
      out.entries.push_back(std::move(entry));
    }
  if (j.contains("train") && !parseTrain(j["train"], out.train))
    return fail("the train block");
  return true;
}

} // namespace tfc::rt
