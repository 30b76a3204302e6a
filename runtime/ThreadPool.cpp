//===- ThreadPool.cpp - the runtime's worker threads ----------------------===//
//
// numThreads() - 1 persistent workers sleep on a condition variable. A
// parallelFor publishes a Job and bumps a generation counter; workers and
// the caller then claim chunks from the job's atomic counter until none are
// left. The caller returns once every worker that joined the job has left
// it, so a slow-waking worker can never touch a finished job.
//
// A train step is thousands of short parallel loops, and waking a sleeping
// thread costs tens of microseconds (more than many loops take), so workers
// and the caller spin for a while (kSpin) on the generation and on the
// job's leaving workers before they sleep on the condition variables.
//
//===----------------------------------------------------------------------===//

#include "runtime/ThreadPool.h"

#include "runtime/FloatMode.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tfc::rt {
namespace {

struct Job {
  const std::function<void(int64_t, int64_t)> *body;
  int64_t n, chunks;
  std::atomic<int64_t> next{0};
  std::atomic<int> workersInside{0}; // changed under Pool::mutex
  unsigned floatControl;             // the caller's (FloatMode.h), taken by every worker
};

/// How long a thread busy-waits for the next job (or for workers to leave
/// one) before sleeping: about the gap between a step's loops.
constexpr std::chrono::microseconds kSpin{200};

/// Spins until `ready()` or kSpin has passed; true when ready.
template <typename Ready> bool spinUntil(Ready ready) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    if (ready())
      return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() - start > kSpin)
      return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

/// True on pool workers and on a caller while it runs chunks: a nested
/// parallelFor then runs inline instead of deadlocking on the pool.
thread_local bool insideParallel = false;

int hardwareThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

/// Runs chunks of `job` until none are left. Chunk c covers
/// [c*base + min(c, rem), ...) so sizes differ by at most one and nothing
/// overflows for any n.
void runChunks(Job &job) {
  int64_t base = job.n / job.chunks, rem = job.n % job.chunks;
  for (int64_t c; (c = job.next.fetch_add(1)) < job.chunks;) {
    int64_t begin = c * base + std::min(c, rem);
    int64_t end = begin + base + (c < rem ? 1 : 0);
    (*job.body)(begin, end);
  }
}

class Pool {
public:
  ~Pool() { stop(); }

  void setThreads(int threads) {
    requested.store(threads <= 0 ? hardwareThreads() : threads);
  }
  int threads() const { return requested.load(); }

  void run(int64_t n, int64_t grain,
           const std::function<void(int64_t, int64_t)> &body) {
    if (n <= 0)
      return;
    if (grain < 1)
      grain = 1;
    int threadCount = threads();
    int64_t chunks = std::min<int64_t>(threadCount, n / grain);
    if (chunks <= 1 || insideParallel) {
      body(0, n);
      return;
    }

    // One job at a time: concurrent top-level callers take turns.
    std::lock_guard<std::mutex> submitLock(submitMutex);
    std::string error;
    if (!ensureWorkers(threadCount - 1, error) && !warned) {
      std::fprintf(stderr, "warning: %s; running on %d thread(s)\n", error.c_str(),
                   int(workers.size()) + 1);
      warned = true;
    }
    threadCount = int(workers.size()) + 1;
    chunks = std::min<int64_t>(threadCount, n / grain);
    if (chunks <= 1) {
      body(0, n);
      return;
    }
    Job job;
    job.body = &body;
    job.n = n;
    job.chunks = chunks;
    job.floatControl = floatControl();
    {
      std::lock_guard<std::mutex> lock(mutex);
      current = &job;
      generation.fetch_add(1);
    }
    wake.notify_all();

    insideParallel = true;
    runChunks(job);
    insideParallel = false;

    // Every chunk is claimed; those claimed by workers are done once the
    // workers have left the job.
    spinUntil([&] { return job.workersInside.load() == 0; });
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return job.workersInside == 0; });
    current = nullptr;
  }

  bool start(std::string &error) {
    std::lock_guard<std::mutex> submitLock(submitMutex);
    return ensureWorkers(threads() - 1, error);
  }

private:
  std::atomic<int> requested{hardwareThreads()};
  std::mutex submitMutex; // serializes run() and worker restarts
  bool warned = false;    // the lazy start has reported a failure (under submitMutex)

  std::mutex mutex; // guards everything below
  std::condition_variable wake, done;
  std::vector<std::thread> workers;
  Job *current = nullptr;
  std::atomic<uint64_t> generation{0}; // changed under mutex, read by spinners
  std::atomic<bool> stopping{false};

  /// Starts the workers lazily, restarting them if setNumThreads changed the
  /// count. Called with submitMutex held, so no job is in flight. When the
  /// system refuses a thread, keeps those started and lowers the count to
  /// match (false, with `error`): a job's chunks are claimed, not assigned,
  /// so any number of workers finishes it, with the same bits.
  bool ensureWorkers(int count, std::string &error) {
    if (static_cast<int>(workers.size()) == count)
      return true;
    stop();
    stopping = false;
    for (int i = 0; i < count; ++i) {
      try {
        workers.emplace_back([this, g = generation.load()] { workerLoop(g); });
      } catch (const std::system_error &e) {
        error = "the system refused a thread after " + std::to_string(i) + " of " +
                std::to_string(count) + " workers (" + e.what() + ")";
        requested.store(i + 1);
        return false;
      } catch (const std::bad_alloc &) {
        error = "out of memory after starting " + std::to_string(i) + " of " +
                std::to_string(count) + " workers";
        requested.store(i + 1);
        return false;
      }
    }
    return true;
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &t : workers)
      t.join();
    workers.clear();
  }

  /// `seen` is the generation at spawn, so a worker that starts running
  /// only after the first job is published still joins it.
  void workerLoop(uint64_t seen) {
    insideParallel = true;
    for (;;) {
      Job *job;
      spinUntil([&] { return stopping.load() || generation.load() != seen; });
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping)
          return;
        seen = generation;
        job = current;
        if (!job) // woke after the job was already finished
          continue;
        ++job->workersInside;
      }
      setFloatControl(job->floatControl);
      runChunks(*job);
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (job->workersInside.fetch_sub(1) == 1)
          done.notify_all();
      }
    }
  }
};

Pool &pool() {
  static Pool instance;
  return instance;
}

} // namespace

void setNumThreads(int threads) { pool().setThreads(threads); }

int numThreads() { return pool().threads(); }

int maxThreads() { return std::max(256, 4 * hardwareThreads()); }

bool startThreads(std::string &error) { return pool().start(error); }

int availableThreads() { return insideParallel ? 1 : pool().threads(); }

void parallelFor(int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &body) {
  pool().run(n, grain, body);
}

} // namespace tfc::rt

extern "C" void tfc_parallel_for(void (*body)(void *, int64_t, int64_t), void *ctx, int64_t n,
                                 int64_t grain) {
  tfc::rt::parallelFor(n, grain, [=](int64_t begin, int64_t end) { body(ctx, begin, end); });
}
