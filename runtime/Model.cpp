//===- Model.cpp - binding a compiled model's entries to tensors ----------===//

#include "runtime/Model.h"
#include "runtime/Philox.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

// Defined by the generated object; weak so that the runtime's own tests link.
extern "C" const char tfc_manifest[] __attribute__((weak));
extern "C" void tfc_entry_predict(void **) __attribute__((weak));
extern "C" void tfc_entry_evaluate(void **) __attribute__((weak));
extern "C" void tfc_entry_train_step(void **) __attribute__((weak));

namespace tfc::rt {

/// The entry whose manifest symbol is `symbol` (abi::kEntrySymbolPrefix and
/// the entry's name; the declarations above spell the same three).
static EntryFn findEntry(const std::string &symbol) {
  auto is = [&](std::string_view entry) {
    return symbol == std::string(abi::kEntrySymbolPrefix) + std::string(entry);
  };
  if (is(abi::kPredict))
    return tfc_entry_predict;
  if (is(abi::kEvaluate))
    return tfc_entry_evaluate;
  if (is(abi::kTrainStep))
    return tfc_entry_train_step;
  return nullptr;
}

std::string withThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

Model::~Model() {
  if (device_)
    for (auto &[name, memory] : memory_)
      for (void *buffer : memory.buffers)
        device_->release(buffer);
}

bool Model::load(std::string &error) {
  if (!tfc_manifest) {
    error = "this binary holds no compiled model (no tfc_manifest)";
    return false;
  }
  if (!parseManifest(tfc_manifest, manifest_, error))
    return false;
  device_ = createDevice();
  // A manifest for another device than the runtime linked in ("cpu" and
  // "cpu-copied", "cuda" and "cuda:0"): a build mismatch, said plainly.
  if (device_->name().rfind(manifest_.device, 0) != 0) {
    error = "model '" + manifest_.model + "' was compiled for device '" + manifest_.device +
            "' but this binary's runtime runs on '" + device_->name() +
            "'; recompile it with this version of tfc";
    return false;
  }
  // Allocated when drawn or loaded: `info` of a model with gigabytes of
  // parameters needs none of them.
  params_.assign(manifest_.params.size(), Tensor());
  return true;
}

/// FNV-1a: a stable 64-bit key per parameter name.
static uint64_t nameKey(const std::string &name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

void Model::initParams(uint64_t seed) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamSpec &spec = manifest_.params[i];
    Tensor &t = params_[i];
    t = Tensor(spec.dtype, spec.shape);
    uint64_t key = nameKey(spec.name);
    float *data = t.f32();
    for (int64_t e = 0; e < t.numel(); ++e) {
      auto r = philox4x32({uint32_t(e), uint32_t(uint64_t(e) >> 32), uint32_t(seed >> 32), 0u},
                          {uint32_t(seed) ^ uint32_t(key >> 32), uint32_t(key)});
      // Uniforms in (0, 1): never 0, so the log below is finite.
      double u0 = (r[0] + 0.5) * (1.0 / 4294967296.0);
      double u1 = (r[1] + 0.5) * (1.0 / 4294967296.0);
      double v = 0;
      if (spec.init.kind == "ones")
        v = 1;
      else if (spec.init.kind == "uniform")
        v = (2 * u0 - 1) * spec.init.scale;
      else if (spec.init.kind == "normal")
        v = std::sqrt(-2 * std::log(u0)) * std::cos(2 * M_PI * u1) * spec.init.scale;
      data[e] = float(v);
    }
  }
}

bool Model::loadParams(const std::string &path, std::string &error) {
  std::vector<std::pair<std::string, Tensor>> file;
  if (!readSafetensors(path, file, error))
    return false;
  std::map<std::string, Tensor *> byName;
  for (auto &[name, tensor] : file)
    byName[name] = &tensor;
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamSpec &spec = manifest_.params[i];
    auto it = byName.find(spec.name);
    if (it == byName.end()) {
      error = "'" + path + "' has no parameter '" + spec.name + "' (the model expects " +
              dtypeName(spec.dtype) + shapeString(spec.shape) + ")";
      return false;
    }
    const Tensor &t = *it->second;
    if (t.dtype != spec.dtype || t.shape != spec.shape) {
      error = "parameter '" + spec.name + "' in '" + path + "' is " + dtypeName(t.dtype) +
              shapeString(t.shape) + "; the model expects " + dtypeName(spec.dtype) +
              shapeString(spec.shape);
      return false;
    }
  }
  for (size_t i = 0; i < params_.size(); ++i)
    params_[i] = std::move(*byName[manifest_.params[i].name]);
  return true;
}

bool Model::saveParams(const std::string &path, std::string &error) const {
  std::vector<std::pair<std::string, const Tensor *>> tensors;
  for (size_t i = 0; i < params_.size(); ++i)
    tensors.push_back({manifest_.params[i].name, &params_[i]});
  return writeSafetensors(path, tensors, error);
}

bool Model::openDevice(std::string &error) {
  if (!deviceOpenTried_) {
    deviceOpenTried_ = true;
    deviceOpened_ = device_->open(manifest_, deviceError_);
  }
  if (!deviceOpened_)
    error = deviceError_;
  return deviceOpened_;
}

bool Model::run(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
                std::vector<Tensor> &results, std::string &error) {
  EntryFn fn = findEntry(entry.symbol);
  if (!fn) {
    error = "this binary has no code for entry '" + entry.name + "' (" + entry.symbol + ")";
    return false;
  }
  std::vector<const Tensor *> args;
  for (const TensorSpec &arg : entry.args) {
    const Tensor *t = nullptr;
    if (arg.kind == abi::ValueKind::Param) {
      const ParamSpec *spec = manifest_.param(arg.name);
      if (spec)
        t = &params_[size_t(spec - manifest_.params.data())];
    } else {
      // "kind:name" first (state, hyperparameters), then the bare name.
      auto it = feeds.find(arg.feedKey());
      if (it == feeds.end())
        it = feeds.find(arg.name);
      if (it != feeds.end())
        t = it->second;
    }
    if (!t) {
      error = "no value for " + std::string(abi::kindName(arg.kind)) + " '" + arg.name + "'";
      return false;
    }
    if (t->dtype != arg.dtype || t->shape != arg.shape) {
      error = std::string(abi::kindName(arg.kind)) + " '" + arg.name + "' is " + dtypeName(t->dtype) +
              shapeString(t->shape) + "; entry '" + entry.name + "' expects " +
              dtypeName(arg.dtype) + shapeString(arg.shape);
      return false;
    }
    args.push_back(t);
  }
  // Reuse the caller's result tensors when they already fit (the training
  // loop calls the same entry thousands of times).
  bool fits = results.size() == entry.results.size();
  for (size_t i = 0; fits && i < results.size(); ++i)
    fits = results[i].dtype == entry.results[i].dtype && results[i].shape == entry.results[i].shape;
  if (!fits) {
    results.clear();
    for (const TensorSpec &r : entry.results)
      results.emplace_back(r.dtype, r.shape);
  }

  // Device memory for the entry, allocated at its first call: the arena, and
  // where the device's memory is not the host's, a buffer per argument and
  // result (the host's tensors copied in and out around the call).
  if (!openDevice(error))
    return false;
  EntryMemory &memory = memory_[entry.name];
  if (memory.buffers.empty()) {
    std::vector<size_t> sizes;
    if (!device_->hostMemory()) {
      for (const Tensor *t : args)
        sizes.push_back(t->bytes.size());
      for (const Tensor &r : results)
        sizes.push_back(r.bytes.size());
    }
    sizes.push_back(size_t(std::max<int64_t>(64, (entry.arenaBytes + 63) / 64 * 64)));
    for (size_t bytes : sizes) {
      void *p = device_->allocate(bytes);
      if (!p) {
        std::string why;
        error = "cannot allocate " + withThousands(int64_t(bytes)) + " bytes on device '" +
                device_->name() + "' for entry '" + entry.name + "'" +
                (device_->takeError(why) ? "" : " (" + why + ")");
        return false;
      }
      memory.buffers.push_back(p);
    }
  }
  std::vector<void *> buffers;
  if (device_->hostMemory()) {
    for (const Tensor *t : args)
      buffers.push_back(const_cast<uint8_t *>(t->bytes.data()));
    for (Tensor &r : results)
      buffers.push_back(r.bytes.data());
    buffers.push_back(memory.buffers.back());
  } else {
    buffers = memory.buffers;
    for (size_t i = 0; i < args.size(); ++i)
      device_->copyIn(buffers[i], args[i]->bytes.data(), args[i]->bytes.size());
  }
  // On a device whose memory is not the host's, an entry's buffers are the
  // same at every call (a GPU replays the graph it captured on them).
  if (!device_->run(fn, buffers.data(), buffers.size(), error))
    return false;
  if (!device_->hostMemory())
    for (size_t i = 0; i < results.size(); ++i)
      device_->copyOut(results[i].bytes.data(), buffers[args.size() + i], results[i].bytes.size());
  return device_->takeError(error);
}

} // namespace tfc::rt
