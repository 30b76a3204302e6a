//===- SimtLaunch.h - launching kernels on the SIMT emulator --------------===//
//
// The host side of tests/simt (Simt.h is the device side, the CUDA that the
// kernels' own source is compiled against): the kernels of
// runtime/cuda/kernels/*.cu compiled as host C++ (tests/simt/kernels/, one
// TU a .cu), found by name, and launch(), which runs one on the CPU with
// CUDA's execution model. Simt.cpp says how.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TESTS_SIMT_SIMTLAUNCH_H
#define TFC_TESTS_SIMT_SIMTLAUNCH_H

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <utility>

namespace tfc::simt {

/// The order a launch runs its blocks and, at every scheduling round, its
/// runnable threads: by index, by index reversed, or a permutation drawn
/// anew each round from the launch's seed. A kernel whose result depends on
/// the order (a missing __syncthreads, a race on shared or global memory)
/// gives different bytes under two of them.
enum class Schedule { InOrder, Reversed, Shuffled };

/// Runs `body` (one thread's kernel, its parameters bound) on `grid` blocks
/// of `block` threads (x only; block a multiple of 32). Returns "" or what
/// went wrong, naming the kernel, the block and the threads: __trap(), a
/// warp collective some lanes of a warp did not reach together
/// (divergence), threads at two different __syncthreads, a deadlock.
std::string launch(const char *kernel, unsigned grid, unsigned block, Schedule schedule,
                   uint64_t seed, const std::function<void()> &body);

/// A kernel compiled for the host: bind() unpacks cuLaunchKernel's array
/// of parameter pointers into a call of it.
struct Kernel {
  const char *name;
  int paramCount;
  std::function<std::function<void()>(void *const *params)> bind;
};

/// The kernel registered under `name` (TFC_SIMT_KERNEL), or null.
const Kernel *findKernel(const std::string &name);
void registerKernel(const Kernel &kernel);

template <typename T> T parameter(const void *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

template <typename... A, size_t... I>
std::function<void()> bindParameters(void (*fn)(A...), void *const *params,
                                     std::index_sequence<I...>) {
  return [fn, args = std::make_tuple(parameter<A>(params[I])...)] { std::apply(fn, args); };
}

/// Registers kernel `fn` under `name`, its parameters read by their types.
template <typename... A> struct Registration {
  Registration(const char *name, void (*fn)(A...)) {
    registerKernel({name, int(sizeof...(A)), [fn](void *const *params) {
                      return bindParameters(fn, params, std::index_sequence_for<A...>{});
                    }});
  }
};
template <typename... A> Registration(const char *, void (*)(A...)) -> Registration<A...>;

} // namespace tfc::simt

#endif // TFC_TESTS_SIMT_SIMTLAUNCH_H
