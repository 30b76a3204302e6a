//===- Distributed.h - the ranks of a data-parallel run -------------------===//
//
// A compiled model started by `mpirun -np N` trains data-parallel: each of
// the N ranks runs grad_step on its share of the global batch, the ranks
// average their gradients (and losses and metrics), and each runs
// apply_step on the average, so every rank holds the same parameters.
// Started without mpirun it is one process and loads nothing of MPI.
//
// MPI (Open MPI's libmpi.so.40) is loaded with dlopen when the launcher's
// environment says there are several ranks, so a binary starts on a machine
// without MPI; one built where mpi.h was missing says it has no MPI when
// started as several ranks.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_DISTRIBUTED_H
#define TFC_RUNTIME_DISTRIBUTED_H

#include <cstddef>
#include <string>

namespace tfc::rt::dist {

struct World {
  int rank = 0, size = 1;
  int localRank = 0, localSize = 1; // on this node
};

/// The ranks as the launcher's environment describes them (Open MPI's
/// OMPI_COMM_WORLD_*, else PMIx's or PMI's): one rank when not launched.
const World &world();
/// Several ranks.
inline bool parallel() { return world().size > 1; }

/// The environment variable that makes one process, started without
/// mpirun, train on the data-parallel path as one rank: grad_step, the
/// exchange (a GPU's NCCL over a communicator of one), apply_step. A check
/// and debug switch for that path on a machine with one GPU and no mpirun;
/// its only value is "nccl".
inline constexpr const char *kDataParallelSwitch = "TFC_DATA_PARALLEL";
/// Whether training takes the data-parallel path: several ranks, or one
/// with TFC_DATA_PARALLEL=nccl. False with `error` set when the switch has
/// another value.
bool dataParallel(bool &on, std::string &error);

/// Loads MPI and joins the other ranks (once; nothing for one rank); false
/// with `error` set ("this binary has no MPI", "cannot load libmpi.so.40: ...").
bool init(std::string &error);
/// Leaves MPI (at exit; nothing if init did not join).
void finalize();

/// `data` (n floats) replaced by the mean over the ranks of each rank's
/// `data`: summed in rank order (rank 0's + rank 1's + ...), then divided
/// by the rank count, the same bits on every rank and in every run.
bool allreduceMean(float *data, size_t n, std::string &error);
/// The largest of the ranks' `value`.
bool allreduceMax(int &value, std::string &error);
/// `bytes` of `data` from rank 0 to every rank.
bool broadcast(void *data, size_t bytes, std::string &error);
/// Stops every rank at once (a rank that cannot go on): never returns.
[[noreturn]] void abortAll(int status);

} // namespace tfc::rt::dist

#endif // TFC_RUNTIME_DISTRIBUTED_H
