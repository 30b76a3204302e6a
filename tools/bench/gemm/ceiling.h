//===- ceiling.h - what this machine allows a GEMM call, measured ---------===//
//
// gemm_bench's roofline: the rate at which the cores run FMAs, and the rate
// at which they read a buffer of a given size over and over (from L1, L2 or
// beyond, by its size). A call can go no faster than the lower of its FLOPs
// at the first rate and its bytes at the second, whichever library runs it:
// where both sit at that ceiling, a ratio of 1.0 is all there is to have.
// Measured in the same run as the calls, on the same threads.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_BENCH_GEMM_CEILING_H
#define TFC_TOOLS_BENCH_GEMM_CEILING_H

#include <cstddef>

namespace ceiling {

/// GFLOP/s of the pool's threads running nothing but independent FMAs (as
/// wide as this CPU's vectors go).
double fmaPeak();

/// GB/s at which the pool's threads read `bytes` (each its own share) over
/// and over: vector loads summed, in order, as a GEMV streams its matrix.
double readRate(size_t bytes);

/// "L1", "L2" or "L3": where a footprint of `bytes` per thread lives.
const char *levelOf(size_t bytes);

} // namespace ceiling

#endif // TFC_TOOLS_BENCH_GEMM_CEILING_H
