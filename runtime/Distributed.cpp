//===- Distributed.cpp - the ranks of a data-parallel run -----------------===//

#include "runtime/Distributed.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#ifdef TFC_HAVE_MPI
#define OMPI_SKIP_MPICXX 1
#include <dlfcn.h>
#include <mpi.h>
#endif

namespace tfc::rt::dist {

namespace {

int envInt(std::initializer_list<const char *> names, int fallback) {
  for (const char *name : names)
    if (const char *text = std::getenv(name); text && *text)
      return std::atoi(text);
  return fallback;
}

} // namespace

const World &world() {
  static const World w = [] {
    World w;
    w.size = envInt({"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}, 1);
    w.rank = envInt({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}, 0);
    w.localSize = envInt({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}, 1);
    w.localRank = envInt({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}, 0);
    if (w.size < 1 || w.rank < 0 || w.rank >= w.size)
      w = World();
    return w;
  }();
  return w;
}

bool dataParallel(bool &on, std::string &error) {
  on = parallel();
  const char *choice = std::getenv(kDataParallelSwitch);
  if (!choice || !*choice)
    return true;
  if (std::string(choice) != "nccl") {
    error = std::string(kDataParallelSwitch) + "=" + choice +
            ": the only value is 'nccl' (one process on the data-parallel path, as one rank)";
    return false;
  }
  on = true;
  return true;
}

#ifndef TFC_HAVE_MPI

bool init(std::string &error) {
  if (!parallel())
    return true;
  error = "started as " + std::to_string(world().size) +
          " ranks, but this binary has no MPI (its runtime was built where Open MPI's mpi.h "
          "was missing: install libopenmpi-dev and rebuild tfc)";
  return false;
}
void finalize() {}
bool allreduceMean(float *, size_t, std::string &) { return true; }
bool allreduceMax(int &, std::string &) { return true; }
bool broadcast(void *, size_t, std::string &) { return true; }
void abortAll(int status) { std::_Exit(status); }

#else

namespace {

/// The MPI functions and handles tfc uses, from libmpi.so.40.
struct Mpi {
  void *library = nullptr;
  decltype(&MPI_Init) init = nullptr;
  decltype(&MPI_Finalize) finalize = nullptr;
  decltype(&MPI_Comm_rank) commRank = nullptr;
  decltype(&MPI_Comm_size) commSize = nullptr;
  decltype(&MPI_Alltoall) alltoall = nullptr;
  decltype(&MPI_Allgather) allgather = nullptr;
  decltype(&MPI_Allreduce) allreduce = nullptr;
  decltype(&MPI_Bcast) bcast = nullptr;
  decltype(&MPI_Abort) abort = nullptr;
  decltype(&MPI_Error_string) errorString = nullptr;
  MPI_Comm world = nullptr;
  MPI_Datatype floatType = nullptr, intType = nullptr, byteType = nullptr;
  MPI_Op max = nullptr;
  bool joined = false;
};

Mpi &mpi() {
  static Mpi m;
  return m;
}

/// MPI waits for the other ranks without a limit: a rank that hangs (rather
/// than dies, which mpirun notices) would hold every other rank forever. A
/// watchdog stops the job when one exchange has waited longer than
/// TFC_MPI_TIMEOUT seconds (default 1800: longer than any validation rank 0
/// runs while the others wait; 0 turns it off).
struct Watchdog {
  std::atomic<int64_t> since{0}; // steady-clock ms when the wait began; 0: none
  std::atomic<const char *> call{nullptr};
  double limit = 1800;

  void start() {
    if (const char *text = std::getenv("TFC_MPI_TIMEOUT"); text && *text)
      limit = std::atof(text);
    if (limit <= 0)
      return;
    std::thread([this] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        int64_t began = since.load();
        if (began && double(now() - began) / 1000.0 > limit) {
          std::fprintf(stderr,
                       "error: rank %d waited %.0f s in %s for the other ranks (TFC_MPI_TIMEOUT): "
                       "one of them hangs; stopping every rank\n",
                       world().rank, limit, call.load() ? call.load() : "MPI");
          abortAll(1);
        }
      }
    }).detach();
  }
  static int64_t now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

Watchdog &watchdog() {
  static Watchdog w;
  return w;
}

/// Marks an exchange with the other ranks, for the watchdog.
struct Waiting {
  explicit Waiting(const char *call) {
    watchdog().call.store(call);
    watchdog().since.store(Watchdog::now());
  }
  ~Waiting() { watchdog().since.store(0); }
};

bool check(int code, const char *call, std::string &error) {
  if (code == MPI_SUCCESS)
    return true;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (mpi().errorString)
    mpi().errorString(code, text, &length);
  error = std::string(call) + " failed on rank " + std::to_string(world().rank) + ": " +
          (length ? std::string(text, size_t(length)) : "error " + std::to_string(code));
  return false;
}

} // namespace

bool init(std::string &error) {
  Mpi &m = mpi();
  if (!parallel() || m.joined)
    return true;
  // RTLD_GLOBAL: Open MPI's own plugins resolve against libmpi's symbols.
  const char *names[] = {"libmpi.so.40", "libmpi.so"};
  std::string tried;
  for (const char *name : names) {
    m.library = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (m.library)
      break;
    tried += std::string(tried.empty() ? "" : ", ") + name;
  }
  if (!m.library) {
    error = "started as " + std::to_string(world().size) + " ranks, but Open MPI cannot be " +
            "loaded (tried " + tried + ": " + dlerror() + "); install openmpi-bin";
    return false;
  }
  bool missing = false;
  auto symbol = [&](auto &out, const char *name) {
    out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(dlsym(m.library, name));
    if (!out && !missing) {
      missing = true;
      error = std::string("Open MPI's library has no ") + name;
    }
  };
  symbol(m.init, "MPI_Init");
  symbol(m.finalize, "MPI_Finalize");
  symbol(m.commRank, "MPI_Comm_rank");
  symbol(m.commSize, "MPI_Comm_size");
  symbol(m.alltoall, "MPI_Alltoall");
  symbol(m.allgather, "MPI_Allgather");
  symbol(m.allreduce, "MPI_Allreduce");
  symbol(m.bcast, "MPI_Bcast");
  symbol(m.abort, "MPI_Abort");
  symbol(m.errorString, "MPI_Error_string");
  // Open MPI's handles are the addresses of its predefined objects.
  auto handle = [&](auto &out, const char *name) {
    void *address = dlsym(m.library, name);
    if (!address && !missing) {
      missing = true;
      error = std::string("Open MPI's library has no ") + name + " (not Open MPI?)";
    }
    out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(address);
  };
  handle(m.world, "ompi_mpi_comm_world");
  handle(m.floatType, "ompi_mpi_float");
  handle(m.intType, "ompi_mpi_int");
  handle(m.byteType, "ompi_mpi_byte");
  handle(m.max, "ompi_mpi_op_max");
  if (missing)
    return false;
  if (!check(m.init(nullptr, nullptr), "MPI_Init", error))
    return false;
  m.joined = true;
  watchdog().start();
  int rank = -1, size = 0;
  if (!check(m.commRank(m.world, &rank), "MPI_Comm_rank", error) ||
      !check(m.commSize(m.world, &size), "MPI_Comm_size", error))
    return false;
  if (rank != world().rank || size != world().size) {
    error = "MPI says rank " + std::to_string(rank) + " of " + std::to_string(size) +
            ", the launcher's environment rank " + std::to_string(world().rank) + " of " +
            std::to_string(world().size);
    return false;
  }
  return true;
}

void finalize() {
  Mpi &m = mpi();
  if (m.joined) {
    m.finalize();
    m.joined = false;
  }
}

bool allreduceMean(float *data, size_t n, std::string &error) {
  Mpi &m = mpi();
  const int ranks = world().size;
  if (ranks == 1)
    return true;
  // Each rank sums one chunk of every rank's data in rank order (all to
  // all), then every rank gathers every chunk: the same order, so the same
  // bits, wherever a chunk is summed.
  const size_t chunk = (n + size_t(ranks) - 1) / size_t(ranks);
  std::vector<float> padded(chunk * size_t(ranks), 0.0f), gathered(padded.size());
  std::memcpy(padded.data(), data, n * sizeof(float));
  Waiting waiting("the gradient exchange");
  if (!check(m.alltoall(padded.data(), int(chunk), m.floatType, gathered.data(), int(chunk),
                        m.floatType, m.world),
             "MPI_Alltoall", error))
    return false;
  std::vector<float> mine(chunk);
  for (size_t i = 0; i < chunk; ++i) {
    float sum = gathered[i];
    for (int r = 1; r < ranks; ++r)
      sum += gathered[size_t(r) * chunk + i];
    mine[i] = sum / float(ranks);
  }
  if (!check(m.allgather(mine.data(), int(chunk), m.floatType, padded.data(), int(chunk),
                         m.floatType, m.world),
             "MPI_Allgather", error))
    return false;
  std::memcpy(data, padded.data(), n * sizeof(float));
  return true;
}

bool allreduceMax(int &value, std::string &error) {
  Mpi &m = mpi();
  if (world().size == 1)
    return true;
  int in = value;
  Waiting waiting("an agreement of the ranks");
  return check(m.allreduce(&in, &value, 1, m.intType, m.max, m.world), "MPI_Allreduce", error);
}

bool broadcast(void *data, size_t bytes, std::string &error) {
  Mpi &m = mpi();
  if (world().size == 1)
    return true;
  // In pieces below MPI's int count.
  Waiting waiting("the start's broadcast");
  for (size_t done = 0; done < bytes;) {
    int piece = int(std::min<size_t>(bytes - done, size_t(1) << 30));
    if (!check(m.bcast(static_cast<char *>(data) + done, piece, m.byteType, 0, m.world),
               "MPI_Bcast", error))
      return false;
    done += size_t(piece);
  }
  return true;
}

void abortAll(int status) {
  Mpi &m = mpi();
  std::fflush(stdout);
  std::fflush(stderr);
  if (m.joined)
    m.abort(m.world, status);
  std::_Exit(status);
}

#endif

} // namespace tfc::rt::dist
