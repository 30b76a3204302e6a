//===- Model.cpp - binding a compiled model's entries to tensors ----------===//

#include "runtime/Model.h"
#include "runtime/Philox.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

// Defined by the generated object; weak so that the runtime's own tests link.
extern "C" const char tfc_manifest[] __attribute__((weak));
extern "C" void tfc_entry_predict(void **) __attribute__((weak));
extern "C" void tfc_entry_evaluate(void **) __attribute__((weak));
extern "C" void tfc_entry_train_step(void **) __attribute__((weak));
extern "C" void tfc_entry_grad_step(void **) __attribute__((weak));
extern "C" void tfc_entry_apply_step(void **) __attribute__((weak));
extern "C" void tfc_entry_prefill(void **) __attribute__((weak));
extern "C" void tfc_entry_decode(void **) __attribute__((weak));

namespace tfc::rt {

/// The entry whose manifest symbol is `symbol` (abi::kEntrySymbolPrefix and
/// the entry's name; the declarations above spell the same seven).
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
  if (is(abi::kGradStep))
    return tfc_entry_grad_step;
  if (is(abi::kApplyStep))
    return tfc_entry_apply_step;
  if (is(abi::kPrefill))
    return tfc_entry_prefill;
  if (is(abi::kDecode))
    return tfc_entry_decode;
  return nullptr;
}

Model::~Model() {
  if (!device_)
    return;
  device_->release(arena_);
  for (auto &[name, memory] : memory_) {
    for (void *buffer : memory.args)
      device_->release(buffer);
    for (auto &slot : memory.slots)
      for (void *buffer : slot)
        device_->release(buffer);
  }
  for (DeviceCopy &copy : paramCopies_)
    release(copy);
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
  paramCopies_.assign(manifest_.params.size(), DeviceCopy());
  return true;
}

std::vector<Tensor> &Model::params() {
  for (size_t i = 0; i < params_.size(); ++i) {
    toHost(params_[i], paramCopies_[i]);
    paramCopies_[i].onDevice = false; // the caller may change the host's
  }
  return params_;
}

bool Model::syncParams(std::string &error) {
  for (size_t i = 0; i < params_.size(); ++i)
    toHost(params_[i], paramCopies_[i]);
  return device_->takeError(error);
}

bool Model::toDevice(const Tensor &host, DeviceCopy &copy, std::string &error) {
  if (copy.onDevice)
    return true;
  if (!copy.current) {
    copy.current = device_->allocate(host.bytes.size());
    if (!copy.current) {
      std::string why;
      error = "cannot allocate " + withThousands(int64_t(host.bytes.size())) +
              " bytes on device '" + device_->name() + "'" +
              (device_->takeError(why) ? "" : " (" + why + ")");
      return false;
    }
  }
  device_->copyIn(copy.current, host.bytes.data(), host.bytes.size());
  copy.onDevice = true;
  return true;
}

void Model::toHost(Tensor &host, DeviceCopy &copy) {
  if (copy.onHost)
    return;
  device_->copyOut(host.bytes.data(), copy.current, host.bytes.size());
  copy.onHost = true;
}

void Model::release(DeviceCopy &copy) {
  device_->release(copy.current);
  device_->release(copy.spare);
  copy = DeviceCopy();
}

/// FNV-1a: a stable 64-bit key per parameter name.
static uint64_t nameKey(const std::string &name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

void Model::initParams(uint64_t seed) {
  for (DeviceCopy &copy : paramCopies_)
    copy.onHost = true, copy.onDevice = false;
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
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i] = std::move(*byName[manifest_.params[i].name]);
    paramCopies_[i].onHost = true, paramCopies_[i].onDevice = false;
  }
  return true;
}

bool Model::saveParams(const std::string &path, std::string &error) {
  if (!syncParams(error))
    return false;
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

bool Model::bindArgs(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
                     const std::map<std::string, KeptValue> *kept,
                     std::vector<const Tensor *> &args, std::string &error,
                     const std::map<std::string, const void *> *readAt) {
  args.clear();
  for (const TensorSpec &arg : entry.args) {
    if (readAt && readAt->count(arg.feedKey())) {
      args.push_back(nullptr);
      continue;
    }
    const Tensor *t = nullptr;
    if (arg.kind == abi::ValueKind::Param) {
      const ParamSpec *spec = manifest_.param(arg.name);
      if (spec)
        t = &params_[size_t(spec - manifest_.params.data())];
    } else if (kept && kept->count(arg.feedKey())) {
      t = kept->at(arg.feedKey()).host;
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
  return true;
}

bool Model::deviceBuffer(void *&buffer, size_t bytes, const EntrySpec &entry, std::string &error) {
  if (buffer)
    return true;
  buffer = device_->allocate(bytes);
  if (buffer)
    return true;
  std::string why;
  error = "cannot allocate " + withThousands(int64_t(bytes)) + " bytes on device '" +
          device_->name() + "' for entry '" + entry.name + "'" +
          (device_->takeError(why) ? "" : " (" + why + ")");
  return false;
}

bool Model::sharedArena(const EntrySpec &entry, void *&arena, std::string &error) {
  if (!deviceBuffer(arena_, manifest_.sharedArenaAllocation(), entry, error))
    return false;
  arena = arena_;
  return true;
}

Model::EntryMemory &Model::memoryFor(const EntrySpec &entry, size_t slots) {
  EntryMemory &memory = memory_[entry.name];
  memory.args.resize(entry.args.size(), nullptr);
  if (memory.slots.size() < slots)
    memory.slots.resize(slots, std::vector<void *>(entry.results.size(), nullptr));
  return memory;
}


bool Model::fillArgument(const TensorSpec &arg, void *to, const Tensor &host,
                         const DeviceBatch *batch, BatchGather &gathers, std::string &error) {
  const RowGather *from = nullptr;
  if (batch) {
    auto it = batch->inputs.find(arg.feedKey());
    if (it == batch->inputs.end())
      it = batch->inputs.find(arg.name);
    if (it != batch->inputs.end())
      from = &it->second;
  }
  const size_t bytes = host.bytes.size();
  if (!from) {
    device_->copyIn(to, host.bytes.data(), bytes);
    return true;
  }
  if (from->rowBytes == 0 || bytes % from->rowBytes != 0) {
    error = std::string(abi::kindName(arg.kind)) + " '" + arg.name + "' (" +
            std::to_string(bytes) + " bytes) is not a whole number of rows of " +
            std::to_string(from->rowBytes) + " bytes to gather";
    return false;
  }
  gathers.first = batch->first;
  gathers.advance = batch->advance;
  gathers.inputs.push_back({to, from->rows, from->rowBytes, from->order, bytes / from->rowBytes});
  return true;
}

bool Model::run(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
                std::vector<Tensor> &results, std::string &error,
                const DeviceBatch *batch) {
  EntryFn fn = findEntry(entry.symbol);
  if (!fn) {
    error = "this binary has no code for entry '" + entry.name + "' (" + entry.symbol + ")";
    return false;
  }
  std::vector<const Tensor *> args;
  if (!bindArgs(entry, feeds, nullptr, args, error))
    return false;
  // Reuse the caller's result tensors when they already fit (the training
  // loop calls the same entry thousands of times).
  bool fits = results.size() == entry.results.size();
  for (size_t i = 0; fits && i < results.size(); ++i)
    fits = results[i].dtype == entry.results[i].dtype && results[i].shape == entry.results[i].shape &&
           results[i].bytes.size() == size_t(results[i].numel()) * dtypeSize(results[i].dtype);
  if (!fits) {
    results.clear();
    for (const TensorSpec &r : entry.results)
      results.emplace_back(r.dtype, r.shape);
  }

  // Device memory for the entry, allocated at its first call: the arena, and
  // where the device's memory is not the host's, a buffer per argument and
  // result (the host's tensors copied in and out around the call), but for
  // the parameters, which stay on the device (copied in when they changed).
  if (!openDevice(error))
    return false;
  EntryMemory &memory = memoryFor(entry, 1);
  void *arena = nullptr;
  if (!sharedArena(entry, arena, error))
    return false;
  std::vector<void *> buffers;
  BatchGather gathers;
  if (device_->hostMemory()) {
    for (const Tensor *t : args)
      buffers.push_back(const_cast<uint8_t *>(t->bytes.data()));
    for (size_t r = 0; r < results.size(); ++r) {
      // A result written over its argument: over a copy of it, the
      // caller's argument unchanged.
      if (int64_t j = entry.results[r].inPlaceOf; j >= 0) {
        results[r].bytes = args[size_t(j)]->bytes;
        buffers[size_t(j)] = results[r].bytes.data();
      }
      buffers.push_back(results[r].bytes.data());
    }
    buffers.push_back(arena);
  } else {
    for (size_t i = 0; i < args.size(); ++i) {
      if (entry.args[i].kind == abi::ValueKind::Param) {
        size_t p = size_t(args[i] - params_.data());
        if (!toDevice(params_[p], paramCopies_[p], error))
          return false;
        buffers.push_back(paramCopies_[p].current);
        continue;
      }
      if (!deviceBuffer(memory.args[i], args[i]->bytes.size(), entry, error) ||
          !fillArgument(entry.args[i], memory.args[i], *args[i], batch, gathers, error))
        return false;
      buffers.push_back(memory.args[i]);
    }
    for (size_t r = 0; r < results.size(); ++r) {
      if (!deviceBuffer(memory.slots[0][r], results[r].bytes.size(), entry, error))
        return false;
      // A result written over its argument: over a copy of it (a
      // parameter's device copy stays as it was).
      if (int64_t j = entry.results[r].inPlaceOf; j >= 0) {
        device_->copyWithin(memory.slots[0][r], buffers[size_t(j)], results[r].bytes.size());
        buffers[size_t(j)] = memory.slots[0][r];
      }
      buffers.push_back(memory.slots[0][r]);
    }
    buffers.push_back(arena);
  }
  if (!device_->run(fn, buffers.data(), buffers.size(), error,
                    gathers.first ? &gathers : nullptr))
    return false;
  // The results out: an evaluation batch's scores in one copy and one wait.
  if (!device_->hostMemory()) {
    std::vector<OutPiece> pieces;
    for (size_t i = 0; i < results.size(); ++i)
      pieces.push_back({results[i].bytes.data(),
                        static_cast<const unsigned char *>(buffers[args.size() + i]),
                        results[i].bytes.size()});
    copyOut(pieces, /*oneCopy=*/true);
  }
  return device_->takeError(error);
}

bool Model::runStep(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
                    const std::map<std::string, KeptValue> &kept, size_t slot,
                    std::string &error, const DevicePlacement &placed) {
  BatchGather gathers;
  DeviceOp step;
  return prepareStep(entry, feeds, kept, slot, gathers, step, error, placed) &&
         device_->enqueue(step.entry, step.buffers.data(), step.buffers.size(), error,
                          step.batch) &&
         device_->takeError(error);
}

bool Model::prepareStep(const EntrySpec &entry, const std::map<std::string, const Tensor *> &feeds,
                        const std::map<std::string, KeptValue> &kept, size_t slot,
                        BatchGather &gathers, DeviceOp &step, std::string &error,
                        const DevicePlacement &placed) {
  EntryFn fn = findEntry(entry.symbol);
  if (!fn) {
    error = "this binary has no code for entry '" + entry.name + "' (" + entry.symbol + ")";
    return false;
  }
  if (!openDevice(error))
    return false;
  if (device_->hostMemory()) {
    error = "Model::runStep is for a device whose memory is not the host's";
    return false;
  }
  std::vector<const Tensor *> args;
  if (!bindArgs(entry, feeds, &kept, args, error, &placed.readAt))
    return false;
  EntryMemory &memory = memoryFor(entry, slot + 1);
  void *arena = nullptr;
  if (!sharedArena(entry, arena, error))
    return false;

  // Arguments: the kept ones' current copies, the batch's gathered as part
  // of the call, the others copied in.
  std::vector<void *> buffers;
  gathers = {};
  std::map<std::pair<abi::ValueKind, std::string>, std::pair<const Tensor *, DeviceCopy *>> byName;
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorSpec &arg = entry.args[i];
    if (!args[i]) { // read in place in the caller's memory
      buffers.push_back(const_cast<void *>(placed.readAt.at(arg.feedKey())));
      continue;
    }
    DeviceCopy *copy = nullptr;
    if (arg.kind == abi::ValueKind::Param)
      copy = &paramCopies_[size_t(args[i] - params_.data())];
    else if (auto it = kept.find(arg.feedKey()); it != kept.end())
      copy = it->second.copy;
    if (copy) {
      if (!toDevice(*args[i], *copy, error))
        return false;
      byName[{arg.kind, arg.name}] = {args[i], copy};
      buffers.push_back(copy->current);
      continue;
    }
    if (!deviceBuffer(memory.args[i], args[i]->bytes.size(), entry, error) ||
        !fillArgument(arg, memory.args[i], *args[i], &placed.batch, gathers, error))
      return false;
    buffers.push_back(memory.args[i]);
  }
  // Results: a kept argument's next value over it or into its spare, the
  // rest into the slot.
  std::vector<DeviceCopy *> swaps, overwritten;
  memory.swapped.assign(entry.results.size(), false);
  for (size_t r = 0; r < entry.results.size(); ++r) {
    const TensorSpec &result = entry.results[r];
    size_t bytes = dtypeSize(result.dtype);
    for (int64_t d : result.shape)
      bytes *= size_t(d);
    if (result.inPlaceOf >= 0) {
      auto it = byName.find({result.kind, result.name});
      if (it == byName.end()) {
        error = "entry '" + entry.name + "' writes " + std::string(abi::kindName(result.kind)) +
                " '" + result.name +
                "' over its argument, which the step does not keep on the device";
        return false;
      }
      overwritten.push_back(it->second.second);
      memory.swapped[r] = true;
      buffers.push_back(buffers[size_t(result.inPlaceOf)]);
      continue;
    }
    if (auto at = placed.writeAt.find(result.feedKey()); at != placed.writeAt.end()) {
      buffers.push_back(at->second); // the caller's memory: not a slot's
      memory.swapped[r] = true;
      continue;
    }
    auto it = byName.find({result.kind, result.name});
    if (it != byName.end() && it->second.first->bytes.size() == bytes) {
      DeviceCopy &copy = *it->second.second;
      if (!deviceBuffer(copy.spare, bytes, entry, error))
        return false;
      swaps.push_back(&copy);
      memory.swapped[r] = true;
      buffers.push_back(copy.spare);
      continue;
    }
    if (!deviceBuffer(memory.slots[slot][r], bytes, entry, error))
      return false;
    buffers.push_back(memory.slots[slot][r]);
  }
  buffers.push_back(arena);
  if (!device_->takeError(error)) // a copy in failed
    return false;
  step = {};
  step.entry = fn;
  step.buffers = std::move(buffers);
  step.batch = gathers.first ? &gathers : nullptr;
  for (DeviceCopy *copy : swaps) {
    std::swap(copy->current, copy->spare);
    copy->onHost = false;
  }
  for (DeviceCopy *copy : overwritten)
    copy->onHost = false;
  return true;
}

bool Model::readSlots(const EntrySpec &entry, const std::vector<size_t> &slots,
                      const std::vector<std::vector<Tensor> *> &results, std::string &error,
                      bool oneCopy) {
  auto it = memory_.find(entry.name);
  for (size_t slot : slots)
    if (it == memory_.end() || slot >= it->second.slots.size()) {
      error = "entry '" + entry.name + "' has no results in slot " + std::to_string(slot);
      return false;
    }
  std::vector<OutPiece> pieces;
  const EntryMemory &memory = it->second;
  for (size_t i = 0; i < slots.size(); ++i) {
    const std::vector<void *> &buffers = memory.slots[slots[i]];
    std::vector<Tensor> &out = *results[i];
    out.resize(entry.results.size());
    for (size_t r = 0; r < entry.results.size(); ++r) {
      const TensorSpec &spec = entry.results[r];
      if (!buffers[r] || (r < memory.swapped.size() && memory.swapped[r])) { // a kept value's
        out[r] = Tensor();
        continue;
      }
      if (out[r].dtype != spec.dtype || out[r].shape != spec.shape || out[r].bytes.empty())
        out[r] = Tensor(spec.dtype, spec.shape);
      pieces.push_back({out[r].bytes.data(), static_cast<const unsigned char *>(buffers[r]),
                        out[r].bytes.size()});
    }
  }
  copyOut(pieces, oneCopy);
  return device_->takeError(error);
}

void Model::copyOut(const std::vector<OutPiece> &pieces, bool oneCopy) {
  if (pieces.empty())
    return;
  // One copy of the span that holds them all, where it is small (on a GPU
  // every copy out waits for the stream: one wait instead of one a piece).
  const unsigned char *low = pieces[0].device, *high = low;
  for (const OutPiece &p : pieces) {
    low = std::min(low, p.device);
    high = std::max(high, p.device + p.bytes);
  }
  // The span must lie in one allocation: a read past one's end is an
  // error on a GPU (a result outside the pool, a parameter's own copy).
  if (oneCopy && pieces.size() > 1 && size_t(high - low) <= kSlotsOneCopyBytes &&
      !device_->hostMemory() && device_->oneAllocation(low, size_t(high - low))) {
    std::vector<unsigned char> span(size_t(high - low));
    device_->copyOut(span.data(), low, span.size());
    for (const OutPiece &p : pieces)
      std::memcpy(p.host, span.data() + (p.device - low), p.bytes);
  } else {
    for (const OutPiece &p : pieces)
      device_->copyOut(p.host, p.device, p.bytes);
  }
}

} // namespace tfc::rt
