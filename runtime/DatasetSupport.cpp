//===- DatasetSupport.cpp - what every built-in dataset uses --------------===//
//
// The checking of a `data` call's arguments and of a dataset's arrays against
// the model's inputs (DatasetSupport.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/DatasetSupport.h"

#include <algorithm>
#include <cstdio>
#include <variant>

namespace tfc::rt::datasets {

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

namespace {

std::string valueText(const DataValue &v) {
  if (auto *i = std::get_if<int64_t>(&v))
    return std::to_string(*i);
  if (auto *d = std::get_if<double>(&v)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", *d);
    return buf;
  }
  if (auto *b = std::get_if<bool>(&v))
    return *b ? "true" : "false";
  return "\"" + std::get<std::string>(v) + "\"";
}

/// An integral value (an int, or a double without fraction), if it is one.
bool asInteger(const DataValue &v, int64_t &out) {
  if (auto *i = std::get_if<int64_t>(&v))
    return out = *i, true;
  if (auto *d = std::get_if<double>(&v))
    if (std::isfinite(*d) && *d == std::floor(*d) && std::fabs(*d) < 9e15)
      return out = int64_t(*d), true;
  return false;
}

} // namespace

bool checkArgs(const std::string &name, const DataArgs &args, const std::vector<ArgSpec> &accepted,
               std::string &error) {
  for (auto &[key, value] : args) {
    auto spec = std::find_if(accepted.begin(), accepted.end(),
                             [&](const ArgSpec &s) { return key == s.key; });
    if (spec == accepted.end()) {
      std::string keys;
      for (const ArgSpec &s : accepted)
        keys += (keys.empty() ? "" : ", ") + std::string(s.key);
      error = "dataset '" + name + "' has no argument '" + key + "' (it takes " + keys + ")";
      return false;
    }
    int64_t i = 0;
    const char *need = nullptr;
    switch (spec->kind) {
    case ArgKind::Count:
      if (!asInteger(value, i) || i < 0)
        need = "an integer >= 0";
      break;
    case ArgKind::Positive:
      if (!asInteger(value, i) || i < 1)
        need = "an integer >= 1";
      break;
    case ArgKind::Real: {
      auto *d = std::get_if<double>(&value);
      auto *n = std::get_if<int64_t>(&value);
      if (!(n && *n >= 0) && !(d && std::isfinite(*d) && *d >= 0))
        need = "a number >= 0";
      break;
    }
    case ArgKind::Text:
      if (!std::holds_alternative<std::string>(value))
        need = "a string";
      break;
    }
    if (need) {
      error = "argument '" + key + "' of dataset '" + name + "' must be " + need + ", not " +
              valueText(value);
      return false;
    }
  }
  return true;
}

int64_t intArg(const DataArgs &args, const std::string &key, int64_t fallback) {
  auto it = args.find(key);
  int64_t v = fallback;
  if (it != args.end())
    asInteger(it->second, v);
  return v;
}
double realArg(const DataArgs &args, const std::string &key, double fallback) {
  auto it = args.find(key);
  if (it == args.end())
    return fallback;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return double(*i);
  return std::get<double>(it->second);
}
std::string textArg(const DataArgs &args, const std::string &key) {
  auto it = args.find(key);
  return it == args.end() ? std::string() : std::get<std::string>(it->second);
}

//===----------------------------------------------------------------------===//
// Matching a dataset's arrays with the model's inputs
//===----------------------------------------------------------------------===//

std::string arrayText(DType dtype, const std::vector<int64_t> &shape) {
  return dtypeName(dtype) + shapeString(shape);
}

bool checkInputs(const std::string &name, const std::vector<ArraySpec> &arrays,
                 const std::vector<TensorSpec> &inputs, std::string &error) {
  if (arrays.size() != inputs.size()) {
    std::string gives, has;
    for (const ArraySpec &a : arrays)
      gives += (gives.empty() ? "" : ", ") + a.what + " " + arrayText(a.dtype, a.shape);
    for (const TensorSpec &in : inputs)
      has += (has.empty() ? "" : ", ") + in.name;
    error = "dataset '" + name + "' gives " + std::to_string(arrays.size()) + " arrays (" + gives +
            ") but the model has " + std::to_string(inputs.size()) + " inputs (" + has + ")";
    return false;
  }
  for (size_t i = 0; i < arrays.size(); ++i) {
    const ArraySpec &a = arrays[i];
    const TensorSpec &in = inputs[i];
    if (!in.shape.empty() && in.dtype == a.dtype &&
        std::equal(in.shape.begin() + 1, in.shape.end(), a.shape.begin(), a.shape.end()))
      continue;
    std::string per = in.shape.empty()
                          ? "no batch dimension"
                          : "per sample " + arrayText(in.dtype, std::vector<int64_t>(
                                                                    in.shape.begin() + 1,
                                                                    in.shape.end()));
    error = "dataset '" + name + "' gives its " + a.what + " as " + arrayText(a.dtype, a.shape) +
            " per sample, but the model's input " + std::to_string(i + 1) + " '" + in.name +
            "' is " + arrayText(in.dtype, in.shape) + " (" + per + ")";
    return false;
  }
  return true;
}

int64_t sampleDim(const std::vector<TensorSpec> &inputs, size_t i, size_t axis, int64_t fallback) {
  if (i < inputs.size() && axis + 1 < inputs[i].shape.size())
    return inputs[i].shape[axis + 1];
  return fallback;
}

bool splitSizes(const std::string &name, const DataArgs &args, const int64_t (&defaults)[3],
                int64_t (&sizes)[3], std::string &error) {
  for (int k = 0; k < 3; ++k)
    sizes[k] = intArg(args, kSplitNames[k], defaults[k]);
  if (sizes[0] < 1) {
    error = "dataset '" + name + "' needs at least one training sample (train: 0)";
    return false;
  }
  return true;
}

std::string groupedNumber(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

} // namespace tfc::rt::datasets
