//===- KernelProfile.cpp - each operation of an entry timed on the GPU ----===//

#include "runtime/cuda/KernelProfile.h"

#include <algorithm>

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
  if (node_ >= 0 && !graphs_.empty()) {
    mark.graph = int64_t(graphs_.size()) - 1;
    mark.node = node_;
  }
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
  double outside = 0;
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
    if (mark.graph >= 0)
      graphs_[size_t(mark.graph)].ms[size_t(mark.node)] += ms;
    else
      outside += ms;
    free_.push_back(mark.start);
    free_.push_back(mark.end);
  }
  marks_.clear();
  // The call's entries one after another, each its longest path.
  if (!graphs_.empty()) {
    double path = outside;
    for (const Graph &g : graphs_) {
      std::vector<double> finish(g.ms.size(), 0.0);
      double longest = 0;
      for (size_t i = 0; i < g.ms.size(); ++i) {
        double ready = 0;
        for (int32_t d : g.deps[i])
          if (d >= 0 && size_t(d) < i)
            ready = std::max(ready, finish[size_t(d)]);
        finish[i] = ready + g.ms[i];
        longest = std::max(longest, finish[i]);
      }
      path += longest;
    }
    pathMs_ += path;
    pathCalls_ += 1;
  }
  graphs_.clear();
  node_ = -1;
  return true;
}

void KernelProfile::node(int64_t index, const int32_t *deps, int64_t count) {
  if (index == 0)
    graphs_.emplace_back();
  if (index < 0 || graphs_.empty()) {
    node_ = -1;
    return;
  }
  Graph &g = graphs_.back();
  if (size_t(index) >= g.ms.size()) {
    g.ms.resize(size_t(index) + 1, 0.0);
    g.deps.resize(size_t(index) + 1);
  }
  g.deps[size_t(index)].assign(deps, deps + std::max<int64_t>(0, count));
  node_ = index;
}

} // namespace tfc::rt::cuda
