//===- KernelProfile.cpp - each operation of an entry timed on the GPU ----===//

#include "runtime/cuda/KernelProfile.h"

namespace tfc::rt::cuda {

KernelProfile::~KernelProfile() {
  for (CUevent e : all_)
    driver_.api().eventDestroy(e);
}

bool KernelProfile::event(CUevent &out, std::string &error) {
  if (!free_.empty()) {
    out = free_.back();
    free_.pop_back();
    return true;
  }
  if (!driver_.check(driver_.api().eventCreate(&out, CU_EVENT_DEFAULT),
                     "cuEventCreate (bench --profile)", error))
    return false;
  all_.push_back(out);
  return true;
}

bool KernelProfile::begin(const std::string &name, const char *kind, CUstream stream,
                          std::string &error) {
  auto [at, added] = byName_.try_emplace(name, ops_.size());
  if (added)
    ops_.push_back({name, kind, 0, 0.0});
  Mark mark{at->second, nullptr, nullptr};
  if (!event(mark.start, error) || !event(mark.end, error))
    return false;
  marks_.push_back(mark);
  return driver_.check(driver_.api().eventRecord(mark.start, stream),
                       "cuEventRecord (bench --profile)", error);
}

bool KernelProfile::end(CUstream stream, std::string &error) {
  return driver_.check(driver_.api().eventRecord(marks_.back().end, stream),
                       "cuEventRecord (bench --profile)", error);
}

bool KernelProfile::collect(CUstream stream, std::string &error) {
  if (marks_.empty())
    return true;
  if (!driver_.check(driver_.api().streamSynchronize(stream), "cuStreamSynchronize (bench --profile)",
                     error))
    return false;
  for (const Mark &mark : marks_) {
    float ms = 0;
    if (!driver_.check(driver_.api().eventElapsedTime(&ms, mark.start, mark.end),
                       "cuEventElapsedTime (bench --profile)", error))
      return false;
    ops_[mark.op].calls += 1;
    ops_[mark.op].ms += ms;
    free_.push_back(mark.start);
    free_.push_back(mark.end);
  }
  marks_.clear();
  return true;
}

} // namespace tfc::rt::cuda
