//===- ThreadPool.h - the runtime's worker threads ------------------------===//
//
// One pool per process, sized to the machine's cores unless --threads says
// otherwise. parallelFor splits [0, n) into contiguous chunks, one per
// thread; the calling thread works too, so a pool of 1 runs inline.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_THREADPOOL_H
#define TFC_RUNTIME_THREADPOOL_H

#include <cstdint>
#include <functional>
#include <string>

namespace tfc::rt {

/// Sets the number of threads (>= 1) before the first parallelFor; 0 means
/// the machine's hardware concurrency. The workers start lazily, at the first
/// parallelFor that needs them (or at startThreads).
void setNumThreads(int threads);
int numThreads();
/// The most threads a command line should ask for: 4 x the hardware threads,
/// at least 256. More only cost (each parallel loop wakes every worker) and,
/// by the thousands, exhaust memory or the process limit.
int maxThreads();
/// Starts numThreads() - 1 workers now. If the system refuses a thread
/// (std::system_error from std::thread: a process limit, no memory for its
/// stack), the pool keeps the ones it started, numThreads() becomes their
/// number plus one, and this returns false with `error` saying so. The lazy
/// start in parallelFor does the same, printing `error` as a warning on
/// stderr once, so no thread failure ever escapes as an exception.
bool startThreads(std::string &error);
/// The threads a parallelFor called here would run on: numThreads(), or 1
/// inside a parallelFor's body (a nested call runs inline), where cutting
/// work into one task a thread only costs.
int availableThreads();

/// Calls body(begin, end) on disjoint chunks covering [0, n) and returns when
/// every chunk is done. Chunks smaller than `grain` are not split further.
/// Nested calls run inline.
void parallelFor(int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &body);

} // namespace tfc::rt

extern "C" {
/// What generated code calls for a parallel loop (tf-parallel-loops-to-runtime):
/// body(ctx, begin, end) over chunks of [0, n), at least `grain` iterations
/// each, on the same pool as parallelFor.
void tfc_parallel_for(void (*body)(void *, int64_t, int64_t), void *ctx, int64_t n,
                      int64_t grain);
}

#endif // TFC_RUNTIME_THREADPOOL_H
