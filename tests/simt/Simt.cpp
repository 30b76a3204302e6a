//===- Simt.cpp - CUDA's execution model on one CPU thread ----------------===//
//
// A launch runs its blocks one after another (Schedule's order). A block's
// threads are fibers on the calling thread, each with its own stack (a
// guard page below), switched by a few instructions on x86-64 (ucontext,
// whose every switch is a system call, elsewhere). A fiber runs until it
// blocks (a __syncthreads, a warp collective) or returns; then the
// scheduler resumes the runnable thread that comes first in the schedule's
// order: by index, reversed, or a permutation drawn again at every barrier.
// So the first warp in the order runs ahead as far as it can (to the next
// barrier, or its end) before the next warp starts, and, between
// collectives, the first lane before the next: a read before another
// thread's write (a missing barrier after the write) and a write before
// another thread's read (a missing barrier before it) each change the
// result under one of the orders. The rules are sm_70+'s:
//  - __syncthreads waits for all the block's threads that have not returned
//    (returned threads count as arrived). Threads at two different
//    __syncthreads (source lines) are an error, stricter than the hardware.
//  - A warp collective with the full mask waits for all 32 lanes of the warp
//    at the same one (same kind, same source line). A lane that returns,
//    reaches __syncthreads or another collective while warp-mates wait at
//    one is divergence: the launch fails and says where each lane is.
//  - wgmma.mma_async does not block; wgmma.wait_group waits until every
//    thread of the warpgroup (4 warps) has issued the wgmmas it waits for
//    and no thread can run (see "wgmma" below); in odd blocks until none
//    of the warpgroup's own threads can.
//  - cp.async does not block either: its source is read at issue, its
//    destination poisoned (NaN) then and written at the thread's
//    cp.async.wait_group that covers it.
//  - Nothing else blocks: memory is the host's, a thread's writes are seen
//    at once, so only a missing barrier (or a race) makes the result depend
//    on the schedule.
// An error (__trap, divergence, a deadlock) ends the launch: the scheduler
// abandons the block's fibers (the kernels hold no resources) and launch()
// returns the message.
//
//===----------------------------------------------------------------------===//

#include <sys/mman.h>
#include <unistd.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include "tests/simt/Simt.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

// The __shared__ section's bounds (the linker's; weak: no kernel may have any).
extern "C" char __start_tfc_simt_shared[] __attribute__((weak));
extern "C" char __stop_tfc_simt_shared[] __attribute__((weak));

#if defined(__x86_64__)
// tfc_simt_switch(from, to): saves the callee-saved registers on the
// current stack and its pointer in *from, then resumes the stack `to`
// (System V: everything else is caller-saved; MXCSR and the x87 control
// word are not touched by the kernels).
extern "C" void tfc_simt_switch(void **from, void *to);
asm(R"(
  .text
  .globl tfc_simt_switch
  .type tfc_simt_switch, @function
tfc_simt_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tfc_simt_switch, .-tfc_simt_switch
)");
#endif

namespace tfc::simt {
namespace {

constexpr int kWarp = 32, kWarpgroup = 128;
/// The shared addresses wgmma's descriptors reach: 14 bits of 16 bytes.
constexpr size_t kSharedWindow = size_t(1) << 18;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr size_t kStackBytes = 256 * 1024;

enum class State { Runnable, AtBarrier, AtCollective, Done };

/// A suspended fiber's stack pointer (x86-64) or context.
struct Context {
#if defined(__x86_64__)
  void *sp = nullptr;
#else
  ucontext_t context;
#endif
};

/// A thread's part of a wgmma.mma_async: where its accumulators and A
/// registers are, and what they held when it issued the wgmma.
struct WgmmaOp {
  float *c = nullptr;
  const uint32_t *a = nullptr; // null: A from shared memory
  uint32_t aAtIssue[4] = {};
  float cAtIssue[32] = {};
  size_t madeAtIssue = 0; // the warpgroup's wgmmas made when this one was issued
};

/// A thread's cp.async: the bytes it read at issue, for dst at its wait.
struct CpAsyncCopy {
  char *dst = nullptr;
  unsigned char bytes[16] = {};
  int size = 0;
};

struct Thread {
  Context context;
  unsigned index = 0;
  State state = State::Done;
  // Where it waits (a barrier or a collective), and the collective's operands.
  const char *file = "";
  int line = 0;
  Collective kind = Collective::Shfl;
  int arg = 0;
  uint32_t in[10] = {}, out[4] = {};
  // wgmma: the ones issued this block, the ends of the groups committed
  // among them, how many its waits covered (waiting: how many its wait
  // needs made), whether a wgmma.fence came since its last wait.
  std::vector<WgmmaOp> wgmma;
  std::vector<size_t> wgmmaGroups;
  size_t wgmmaWaited = 0;
  bool wgmmaFenced = false;
  // cp.async: the copies issued this block, the ends of the groups
  // committed among them, how many are in shared memory.
  std::vector<CpAsyncCopy> copies;
  std::vector<size_t> copyGroups;
  size_t copiesLanded = 0;
};

/// A warp's lanes at a collective (and which), at the barrier, returned.
struct Warp {
  int arrived = 0, atBarrier = 0, done = 0;
  Collective kind = Collective::Shfl;
  const char *file = "";
  int line = 0;
};

/// A wgmma as the first of its warpgroup's threads issued it: the
/// instruction (which every thread's must match) and the operands' bits in
/// shared memory then (which must hold until the products are made).
struct IssuedWgmma {
  uint64_t descA = 0, descB = 0;
  bool registersA = false, scaleD = false;
  int transB = 0;
  const char *file = "";
  int line = 0;
  std::vector<uint16_t> a, b; // A (64 x 16, from shared memory only) and B (16 x 64)
};

/// A warpgroup's wgmmas this block: issued (by how many of its threads),
/// made.
struct Warpgroup {
  std::vector<IssuedWgmma> issued;
  std::vector<int> issuers;
  size_t made = 0; // issued[0 .. made) are done
};

struct Emulator {
  Context scheduler;
  std::vector<Thread> threads;
  char *stacks = nullptr;
  size_t stackCount = 0;
  Thread *current = nullptr;
  const std::function<void()> *body = nullptr;
  int live = 0, atBarrier = 0;
  const char *barrierFile = "";
  int barrierLine = 0;
  std::vector<Warp> warps;
  std::vector<Warpgroup> warpgroups; // none unless blocks are whole warpgroups
  char *sharedBase = nullptr;        // the block's shared window (sharedAddress)
  bool eagerWgmma = false;           // wgmma.wait_group: a warpgroup's wgmmas made early
  std::string error;
  // The schedule: threads by rank (the order they are resumed in), each
  // thread's rank, and the runnable ones as bits by rank.
  Schedule schedule = Schedule::InOrder;
  std::mt19937_64 rng;
  std::vector<unsigned> byRank, rank;
  std::vector<uint64_t> runnable;
};

Emulator emu;

/// file:line, the file from the project's runtime/ or tests/ on.
std::string site(const char *file, int line) {
  const std::string f = file;
  size_t at = std::string::npos;
  for (const char *dir : {"/runtime/", "/tests/"}) {
    const size_t found = f.rfind(dir);
    if (found != std::string::npos && (at == std::string::npos || found > at))
      at = found;
  }
  return (at == std::string::npos ? f : f.substr(at + 1)) + ":" + std::to_string(line);
}

const char *collectiveName(Collective kind) {
  switch (kind) {
  case Collective::ShflXor:
    return "__shfl_xor_sync";
  case Collective::Shfl:
    return "__shfl_sync";
  case Collective::Any:
    return "__any_sync";
  case Collective::Mma:
    return "mma.sync m16n8k16";
  case Collective::WgmmaWait:
    return "wgmma.wait_group";
  }
  return "?";
}

std::string who(const Thread &t) {
  return "thread " + std::to_string(t.index) + " (warp " + std::to_string(t.index / kWarp) +
         ", lane " + std::to_string(t.index % kWarp) + ")";
}

std::string whereIs(const Thread &t) {
  switch (t.state) {
  case State::Runnable:
    return who(t) + " running";
  case State::AtBarrier:
    return who(t) + " at __syncthreads (" + site(t.file, t.line) + ")";
  case State::AtCollective:
    return who(t) + " at " + collectiveName(t.kind) + " (" + site(t.file, t.line) + ")";
  case State::Done:
    return who(t) + " returned";
  }
  return who(t);
}

void switchTo(Context &from, Context &to) {
#if defined(__x86_64__)
  tfc_simt_switch(&from.sp, to.sp);
#else
  swapcontext(&from.context, &to.context);
#endif
}

void fiberMain();

/// `t`'s context, to start fiberMain on its stack.
void start(Thread &t, char *stack, size_t bytes) {
#if defined(__x86_64__)
  // What tfc_simt_switch pops: 6 registers, then fiberMain as the return
  // address, above which a (never used) return address of fiberMain's own
  // keeps the ABI's alignment: rsp % 16 == 8 at its first instruction.
  void **top = reinterpret_cast<void **>(uintptr_t(stack + bytes) & ~uintptr_t(15));
  top[-1] = nullptr;
  top[-2] = reinterpret_cast<void *>(&fiberMain);
  for (int r = 3; r <= 8; ++r)
    top[-r] = nullptr;
  t.context.sp = top - 8;
#else
  getcontext(&t.context.context);
  t.context.context.uc_stack.ss_sp = stack;
  t.context.context.uc_stack.ss_size = bytes;
  t.context.context.uc_link = nullptr;
  makecontext(&t.context.context, fiberMain, 0);
#endif
}

/// Back to the scheduler; the thread resumes here when it is run again.
void yield() { switchTo(emu.current->context, emu.scheduler); }

[[noreturn]] void leave(const std::string &message) {
  if (emu.current == nullptr) {
    std::fprintf(stderr, "simt: %s (outside a launch)\n", message.c_str());
    std::abort();
  }
  if (emu.error.empty())
    emu.error = message;
  yield(); // never resumed: the launch ends
  std::abort();
}

Thread *lanesOf(const Thread &t) { return &emu.threads[t.index / kWarp * kWarp]; }
Warp &warpOf(const Thread &t) { return emu.warps[t.index / kWarp]; }

void setState(Thread &t, State state) {
  const unsigned r = emu.rank[t.index];
  if (state == State::Runnable)
    emu.runnable[r / 64] |= uint64_t(1) << (r % 64);
  else
    emu.runnable[r / 64] &= ~(uint64_t(1) << (r % 64));
  t.state = state;
}

/// The schedule's order of the block's threads (Shuffled: a new one).
void order() {
  const size_t n = emu.threads.size();
  emu.byRank.resize(n);
  std::iota(emu.byRank.begin(), emu.byRank.end(), 0u);
  if (emu.schedule == Schedule::Reversed)
    std::reverse(emu.byRank.begin(), emu.byRank.end());
  else if (emu.schedule == Schedule::Shuffled)
    std::shuffle(emu.byRank.begin(), emu.byRank.end(), emu.rng);
  emu.rank.resize(n);
  for (size_t r = 0; r < n; ++r)
    emu.rank[emu.byRank[r]] = unsigned(r);
  emu.runnable.assign((n + 63) / 64, 0);
  for (Thread &t : emu.threads)
    setState(t, t.state);
}

/// The runnable thread first in the order, or null.
Thread *next() {
  for (size_t w = 0; w < emu.runnable.size(); ++w)
    if (emu.runnable[w])
      return &emu.threads[emu.byRank[w * 64 + size_t(__builtin_ctzll(emu.runnable[w]))]];
  return nullptr;
}

/// Divergence: `t` does `what` while warp-mates are in state `state`.
[[noreturn]] void diverged(const Thread &t, const std::string &what, State state) {
  const Thread *lanes = lanesOf(t);
  int l = 0;
  while (l < kWarp - 1 && (&lanes[l] == &t || lanes[l].state != state))
    ++l;
  leave("divergence: " + who(t) + " " + what + " while " + whereIs(lanes[l]));
}

void releaseBarrier() {
  for (Thread &t : emu.threads)
    if (t.state == State::AtBarrier)
      t.state = State::Runnable;
  for (Warp &w : emu.warps)
    w.atBarrier = 0;
  emu.atBarrier = 0;
  order(); // the runnable bits (and, Shuffled, a new order)
}

float bf16Value(uint32_t reg, int half) {
  return valueOf<float>(((reg >> (16 * half)) & 0xffffu) << 16);
}

/// D = A B + C for the warp, from the fragment layouts of the PTX ISA,
/// section 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating
/// point type" (Figure 79 and the two after it), not from the kernel's
/// helpers: groupID = lane >> 2, threadID_in_group = lane % 4, and a
/// register's low 16 bits hold the lower-numbered element:
///   A (16x16, .bf16, a0..a7 in 4 registers): row groupID for a0, a1, a4,
///     a5, groupID + 8 for the others; col 2 threadID_in_group + (i & 1),
///     + 8 for i >= 4.
///   B (16x8, .bf16, b0..b3 in 2 registers): row 2 threadID_in_group +
///     (i & 1), + 8 for i >= 2; col groupID.
///   C, D (16x8, .f32, c0..c3): row groupID for c0, c1, groupID + 8 for c2,
///     c3; col 2 threadID_in_group + (i & 1).
/// The products of bf16 values are exact in fp32; here they and C are
/// summed in double, then rounded to fp32 (the hardware's order and
/// intermediate precision are not documented: its last bits may differ).
void multiply(Thread *lanes) {
  float A[16][16], B[16][8], C[16][8];
  for (int lane = 0; lane < kWarp; ++lane) {
    const int g = lane >> 2, t = lane % 4;
    const uint32_t *a = lanes[lane].in, *b = a + 4, *c = a + 6;
    for (int i = 0; i < 8; ++i) {
      const int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
      const int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
      A[row][col] = bf16Value(a[i / 2], i & 1);
    }
    for (int i = 0; i < 4; ++i) {
      B[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][g] = bf16Value(b[i / 2], i & 1);
      C[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)] = valueOf<float>(c[i]);
    }
  }
  for (int lane = 0; lane < kWarp; ++lane) {
    const int g = lane >> 2, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
      double sum = C[row][col];
      for (int k = 0; k < 16; ++k)
        sum += double(A[row][k]) * double(B[k][col]);
      lanes[lane].out[i] = wordOf(float(sum));
    }
  }
}

/// The warp's collective, all 32 lanes arrived.
void complete(Thread *lanes) {
  const Collective kind = lanes[0].kind;
  if (kind == Collective::Mma) {
    multiply(lanes);
  } else if (kind == Collective::Any) {
    uint32_t any = 0;
    for (int l = 0; l < kWarp; ++l)
      any |= lanes[l].in[0];
    for (int l = 0; l < kWarp; ++l)
      lanes[l].out[0] = any;
  } else {
    for (int l = 0; l < kWarp; ++l) {
      const int from = kind == Collective::ShflXor ? (l ^ lanes[l].arg) : (lanes[l].arg & 31);
      lanes[l].out[0] = lanes[from < kWarp ? from : l].in[0];
    }
  }
  for (int l = 0; l < kWarp; ++l)
    setState(lanes[l], State::Runnable);
}

// wgmma: Hopper's warpgroup MMA, wgmma.mma_async.sync.aligned.m64n64k16
// .f32.bf16.bf16 with scale-a and scale-b 1 and A not transposed, as the
// PTX ISA (section 9.7.15, "Asynchronous Warpgroup Level Matrix Multiply-
// Accumulate") defines it, written from its text, not from the kernels'
// helpers or WgmmaProbe.h (the probe checks those on a GPU, and
// SimtKernelsTest runs the probe here: the two readings must agree):
//  - Accumulators (D, 64 x 64 .f32, d0..d31 a thread): thread i of the
//    warpgroup, warp w = i / 32, groupID = lane >> 2, threadID_in_group =
//    lane % 4; d_r is row 16w + groupID (+ 8 for r % 4 >= 2), column
//    8 (r / 4) + 2 threadID_in_group + (r & 1).
//  - A from registers (64 x 16 .bf16, a0..a7 in 4 registers, the low half
//    the lower-numbered): row 16w + groupID for a0, a1, a4, a5, + 8 for
//    the others; column 2 threadID_in_group + (i & 1), + 8 for i >= 4.
//  - A and B from shared memory through a matrix descriptor: the start
//    address, the leading (LBO) and the stride (SBO) byte offset, each in
//    16-byte units (bits 0-13, 16-29, 32-45), the base offset (bits 49-51,
//    0 here) and the swizzle (bits 62-63: 0 none, 1 128-byte; 64- and
//    32-byte are not modelled). Without swizzle, K-major: 8 x 16-byte core
//    matrices, element (mn, k) at start + (mn / 8) SBO + (k / 8) LBO +
//    16 (mn % 8) + 2 (k % 8). 128-byte swizzle, K-major: rows of 128
//    bytes, 8-row atoms SBO apart, element (mn, k) at start + (mn / 8) SBO
//    + 128 (mn % 8) + 2 k; MN-major (B with imm-trans-b 1): rows of k,
//    element (k, n) at start + (n / 64) LBO + (k / 8) SBO + 128 (k % 8) +
//    2 (n % 64); the swizzle then XORs the address's bits 4-6 with its
//    bits 7-9 (a row's 16-byte chunks permuted by the row within the
//    1,024-byte atom).
//  - D = A B (+ D with scale-d), each element's 16 products (exact in
//    fp32) and D summed in double and rounded once: mmaM16n8k16Bf16's
//    rounding, so that a kernel on wgmma gives the bits of one on mma.sync
//    with the same k-steps (the hardware's order may differ in the last
//    bit).

Warpgroup &warpgroupOf(const Thread &t, const char *file, int line) {
  if (emu.warpgroups.empty())
    fail("wgmma in blocks of " + std::to_string(emu.threads.size()) +
             " threads: the emulator models whole warpgroups of 128",
         file, line);
  return emu.warpgroups[t.index / kWarpgroup];
}

/// The shared-memory offset of element (mn, k) of a wgmma operand (mn: A's
/// row or B's column; k < 16) under descriptor `desc`, or "" in `why`.
size_t operandOffset(uint64_t desc, bool mnMajor, int mn, int k, std::string &why) {
  const size_t start = size_t(desc & 0x3fff) << 4, lbo = size_t((desc >> 16) & 0x3fff) << 4,
               sbo = size_t((desc >> 32) & 0x3fff) << 4;
  const unsigned base = unsigned(desc >> 49) & 7u, swizzle = unsigned(desc >> 62);
  if (base != 0 || (swizzle != 0 && swizzle != 1) || (swizzle == 0 && mnMajor)) {
    why = "a descriptor with base offset " + std::to_string(base) + ", swizzle mode " +
          std::to_string(swizzle) + (mnMajor ? ", MN-major" : ", K-major") +
          ": not modelled (base offset 0; no swizzle K-major, or the 128-byte swizzle)";
    return 0;
  }
  if (swizzle == 0)
    return start + size_t(mn / 8) * sbo + size_t(k / 8) * lbo + size_t(mn % 8) * 16 +
           size_t(k % 8) * 2;
  const size_t at = mnMajor ? start + size_t(mn / 64) * lbo + size_t(k / 8) * sbo +
                                  size_t(k % 8) * 128 + size_t(mn % 64) * 2
                            : start + size_t(mn / 8) * sbo + size_t(mn % 8) * 128 + size_t(k) * 2;
  return at ^ (((at >> 7) & 7) << 4);
}

/// An operand's 64 x 16 (A: [mn][k]) or 16 x 64 (B: [k][n]) bf16 bits
/// from shared memory, or "" in `why`.
std::vector<uint16_t> readOperand(uint64_t desc, bool isB, bool mnMajor, std::string &why) {
  std::vector<uint16_t> bits(64 * 16);
  const size_t size =
      emu.sharedBase ? std::min(size_t(__stop_tfc_simt_shared - emu.sharedBase), kSharedWindow) : 0;
  for (int mn = 0; mn < 64; ++mn)
    for (int k = 0; k < 16; ++k) {
      const size_t at = operandOffset(desc, mnMajor, mn, k, why);
      if (!why.empty())
        return {};
      if (at + 2 > size) {
        why = std::string("an operand element at shared address ") + std::to_string(at) +
              ", past the shared memory this block addressed";
        return {};
      }
      std::memcpy(&bits[size_t(isB ? k * 64 + mn : mn * 16 + k)], emu.sharedBase + at, 2);
    }
  return bits;
}

std::string siteOf(const IssuedWgmma &w) {
  return "wgmma.mma_async (" + site(w.file, w.line) + ")";
}

/// Makes wgmma j of the warpgroup whose threads are `lanes`: checks that
/// its operands and accumulators hold what they did at its issue (the
/// accumulators unless a wgmma before it, made since, wrote them: a chain
/// of k-steps), then D = A B (+ D).
std::string makeWgmma(Thread *lanes, size_t j) {
  IssuedWgmma &w = emu.warpgroups[lanes[0].index / kWarpgroup].issued[j];
  std::string why;
  const std::vector<uint16_t> a =
      w.registersA ? std::vector<uint16_t>() : readOperand(w.descA, false, false, why);
  const std::vector<uint16_t> b =
      why.empty() ? readOperand(w.descB, true, w.transB != 0, why) : std::vector<uint16_t>();
  if (!why.empty())
    return siteOf(w) + ": " + why;
  for (const auto &[now, then, name] : {std::tuple(&a, &w.a, "A"), std::tuple(&b, &w.b, "B")})
    if (*now != *then) {
      size_t e = 0;
      while ((*now)[e] == (*then)[e])
        ++e;
      return siteOf(w) + ": " + name + " element (" +
             std::to_string(e / (name[0] == 'A' ? 16 : 64)) + ", " +
             std::to_string(e % (name[0] == 'A' ? 16 : 64)) +
             ") in shared memory changed between the wgmma's issue and its wait_group (stored "
             "without a barrier before the wgmma, or overwritten before the wait)";
    }
  float A[64][16], B[16][64];
  for (int e = 0; e < 64 * 16; ++e)
    B[e / 64][e % 64] = bf16Value(b[size_t(e)], 0);
  if (!w.registersA)
    for (int e = 0; e < 64 * 16; ++e)
      A[e / 16][e % 16] = bf16Value(a[size_t(e)], 0);
  for (int i = 0; i < kWarpgroup; ++i) {
    const WgmmaOp &op = lanes[i].wgmma[j];
    const int warp = i / kWarp, g = (i % kWarp) >> 2, t = i % 4;
    if (w.registersA) {
      if (std::memcmp(op.a, op.aAtIssue, sizeof op.aAtIssue) != 0)
        return siteOf(w) + ": " + who(lanes[i]) +
               "'s A registers changed between the wgmma's issue and its wait_group";
      for (int e = 0; e < 8; ++e) {
        const int row = 16 * warp + g + ((e / 2) % 2 ? 8 : 0),
                  col = 2 * t + (e & 1) + (e >= 4 ? 8 : 0);
        A[row][col] = bf16Value(op.a[e / 2], e & 1);
      }
    }
    bool chained = false;
    for (size_t k = op.madeAtIssue; k < j && !chained; ++k)
      chained = lanes[i].wgmma[k].c == op.c;
    if (!chained && std::memcmp(op.c, op.cAtIssue, sizeof op.cAtIssue) != 0)
      return siteOf(w) + ": " + who(lanes[i]) +
             "'s accumulators changed between the wgmma's issue and its wait_group";
  }
  for (int i = 0; i < kWarpgroup; ++i) {
    const WgmmaOp &op = lanes[i].wgmma[j];
    const int warp = i / kWarp, g = (i % kWarp) >> 2, t = i % 4;
    for (int r = 0; r < 32; ++r) {
      const int row = 16 * warp + g + (r % 4 >= 2 ? 8 : 0), col = 8 * (r / 4) + 2 * t + (r & 1);
      double sum = w.scaleD ? double(op.c[r]) : 0.0;
      for (int k = 0; k < 16; ++k)
        sum += double(A[row][k]) * double(B[k][col]);
      op.c[r] = float(sum);
    }
  }
  w.a = w.b = {}; // the snapshot's work is done
  return "";
}

/// Makes warpgroup gi's wgmmas, in order, as far as every thread has
/// issued them and a thread's wait needs them, and resumes the threads
/// whose waits they satisfy. Returns whether a thread was resumed; an
/// error in emu.error.
bool makeWarpgroupsWgmmas(size_t gi) {
  bool resumed = false;
  Warpgroup &g = emu.warpgroups[gi];
  Thread *lanes = &emu.threads[gi * kWarpgroup];
  size_t needed = 0;
  for (int i = 0; i < kWarpgroup; ++i)
    if (lanes[i].state == State::AtCollective && lanes[i].kind == Collective::WgmmaWait)
      needed = std::max(needed, lanes[i].wgmmaWaited);
  while (g.made < needed && g.issuers[g.made] == kWarpgroup && emu.error.empty()) {
    emu.error = makeWgmma(lanes, g.made);
    ++g.made;
  }
  for (int i = 0; i < kWarpgroup; ++i)
    if (lanes[i].state == State::AtCollective && lanes[i].kind == Collective::WgmmaWait &&
        lanes[i].wgmmaWaited <= g.made) {
      setState(lanes[i], State::Runnable);
      resumed = true;
    }
  return resumed;
}

/// When no thread can run: makes each warpgroup's wgmmas. So a wgmma reads
/// its operands as late as the hardware may (anything a thread could still
/// write before its wait is written first). Returns whether a thread was
/// resumed.
bool makeWgmmas() {
  bool resumed = false;
  for (size_t gi = 0; gi < emu.warpgroups.size() && emu.error.empty(); ++gi)
    resumed |= makeWarpgroupsWgmmas(gi);
  return resumed;
}

void fiberMain() {
  (*emu.body)();
  Thread &t = *emu.current;
  if (warpOf(t).arrived > 0)
    diverged(t, "returned", State::AtCollective);
  if (t.wgmma.size() > t.wgmmaWaited)
    leave(who(t) + " returned with wgmmas it did not wait for (wgmma.wait_group)");
  if (t.copies.size() > t.copiesLanded)
    leave(who(t) + " returned with cp.async copies it did not wait for (cp.async.wait_group)");
  setState(t, State::Done);
  ++warpOf(t).done;
  --emu.live;
  if (emu.atBarrier > 0 && emu.atBarrier == emu.live)
    releaseBarrier();
  yield(); // never resumed
  std::abort();
}

void ensureStacks(size_t count) {
  if (emu.stackCount >= count)
    return;
  const size_t page = size_t(sysconf(_SC_PAGESIZE)), slot = kStackBytes + page;
  if (emu.stacks)
    munmap(emu.stacks, emu.stackCount * slot);
  void *p = mmap(nullptr, count * slot, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("simt: mmap");
    std::abort();
  }
  emu.stacks = static_cast<char *>(p);
  emu.stackCount = count;
  for (size_t i = 0; i < count; ++i)
    mprotect(emu.stacks + i * slot, page, PROT_NONE); // the guard below each stack
}

void poisonSharedMemory() {
  if (__start_tfc_simt_shared && __stop_tfc_simt_shared)
    std::memset(__start_tfc_simt_shared, 0xff,
                size_t(__stop_tfc_simt_shared - __start_tfc_simt_shared));
}

std::map<std::string, Kernel> &registry() {
  static std::map<std::string, Kernel> kernels;
  return kernels;
}

} // namespace

void collective(Collective kind, unsigned mask, const uint32_t *in, int inWords, int arg,
                uint32_t *out, const char *file, int line) {
  Thread &t = *emu.current;
  if (mask != kFullMask) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08x", mask);
    leave(std::string(collectiveName(kind)) + " with mask " + hex + " at " + site(file, line) +
          ": only the full mask is emulated");
  }
  Warp &w = warpOf(t);
  auto what = [&] {
    return std::string("at ") + collectiveName(kind) + " (" + site(file, line) + ", full mask)";
  };
  if (w.done > 0)
    diverged(t, what(), State::Done);
  if (w.atBarrier > 0)
    diverged(t, what(), State::AtBarrier);
  if (w.arrived > 0 &&
      (w.kind != kind || w.line != line || (w.file != file && std::strcmp(w.file, file) != 0)))
    diverged(t, what(), State::AtCollective);
  w.kind = kind;
  w.file = file;
  w.line = line;
  t.kind = kind;
  t.file = file;
  t.line = line;
  t.arg = arg;
  std::memcpy(t.in, in, size_t(inWords) * sizeof(uint32_t));
  setState(t, State::AtCollective);
  if (++w.arrived == kWarp) {
    w.arrived = 0;
    complete(lanesOf(t));
  }
  yield();
  std::memcpy(out, t.out, (kind == Collective::Mma ? 4 : 1) * sizeof(uint32_t));
}

void syncThreads(const char *file, int line) {
  Thread &t = *emu.current;
  if (warpOf(t).arrived > 0)
    diverged(t, "at __syncthreads (" + site(file, line) + ")", State::AtCollective);
  if (emu.atBarrier == 0) {
    emu.barrierFile = file;
    emu.barrierLine = line;
  } else if (emu.barrierLine != line || std::strcmp(emu.barrierFile, file) != 0) {
    leave(who(t) + " at __syncthreads (" + site(file, line) + ") while others wait at " +
          site(emu.barrierFile, emu.barrierLine));
  }
  setState(t, State::AtBarrier);
  t.file = file;
  t.line = line;
  ++warpOf(t).atBarrier;
  if (++emu.atBarrier == emu.live)
    releaseBarrier();
  yield();
}

void wgmmaMmaAsync(float *c, const uint32_t *a, uint64_t descA, uint64_t descB, bool scaleD,
                   int transB, const char *file, int line) {
  Thread &t = *emu.current;
  Warpgroup &g = warpgroupOf(t, file, line);
  if (!t.wgmmaFenced)
    fail("wgmma.mma_async without a wgmma.fence since the thread's last wait_group (or its "
         "start): the registers it reads may not be the ones written before it",
         file, line);
  const size_t j = t.wgmma.size();
  IssuedWgmma w;
  w.descA = a ? 0 : descA;
  w.descB = descB;
  w.registersA = a != nullptr;
  w.scaleD = scaleD;
  w.transB = transB;
  w.file = file;
  w.line = line;
  if (j == g.issued.size()) { // the first thread: the instruction and its operands' bits now
    std::string why;
    if (!w.registersA)
      w.a = readOperand(w.descA, false, false, why);
    if (why.empty())
      w.b = readOperand(w.descB, true, transB != 0, why);
    if (!why.empty())
      fail("wgmma.mma_async: " + why, file, line);
    g.issued.push_back(std::move(w));
    g.issuers.push_back(0);
  } else {
    const IssuedWgmma &first = g.issued[j];
    if (first.descA != w.descA || first.descB != w.descB || first.registersA != w.registersA ||
        first.scaleD != w.scaleD || first.transB != w.transB || first.line != w.line ||
        std::strcmp(first.file, w.file) != 0)
      fail("wgmma.mma_async: the warpgroup's threads issue different wgmmas (this one's "
           "descriptors, scale-d or site differ from the first thread's at " +
               siteOf(first) + ")",
           file, line);
  }
  WgmmaOp op;
  op.c = c;
  op.a = a;
  if (a)
    std::memcpy(op.aAtIssue, a, sizeof op.aAtIssue);
  std::memcpy(op.cAtIssue, c, sizeof op.cAtIssue);
  op.madeAtIssue = g.made;
  t.wgmma.push_back(op);
  ++g.issuers[j];
}

void wgmmaFence(const char *file, int line) {
  Thread &t = *emu.current;
  warpgroupOf(t, file, line);
  t.wgmmaFenced = true;
}

void wgmmaCommitGroup(const char *file, int line) {
  Thread &t = *emu.current;
  warpgroupOf(t, file, line);
  t.wgmmaGroups.push_back(t.wgmma.size());
}

void wgmmaWaitGroup(int pending, const char *file, int line) {
  Thread &t = *emu.current;
  Warpgroup &g = warpgroupOf(t, file, line);
  const std::vector<size_t> &groups = t.wgmmaGroups;
  if (groups.size() > size_t(pending))
    t.wgmmaWaited = std::max(t.wgmmaWaited, groups[groups.size() - 1 - size_t(pending)]);
  t.wgmmaFenced = false;
  if (g.made >= t.wgmmaWaited)
    return;
  t.kind = Collective::WgmmaWait;
  t.file = file;
  t.line = line;
  setState(t, State::AtCollective);
  // Odd blocks make a warpgroup's wgmmas as soon as none of its own
  // threads can run, as early as the hardware may: the warpgroup runs on
  // while the block's others still issue theirs, so that a tile it writes
  // which another warpgroup's wgmma still reads (a tile they share,
  // rewritten after the writer's own wait but before a barrier) shows.
  if (emu.eagerWgmma) {
    const Thread *lanes = &emu.threads[t.index / kWarpgroup * kWarpgroup];
    if (std::none_of(lanes, lanes + kWarpgroup,
                     [](const Thread &u) { return u.state == State::Runnable; }))
      makeWarpgroupsWgmmas(t.index / kWarpgroup);
    if (!emu.error.empty())
      leave(emu.error);
  }
  yield(); // until makeWgmmas makes what this wait needs
}

void cpAsync(void *dst, const void *src, int bytes, int srcBytes, const char *file, int line) {
  Thread &t = *emu.current;
  char *to = static_cast<char *>(dst);
  if (bytes != 4 && bytes != 8 && bytes != 16)
    fail("cp.async of " + std::to_string(bytes) + " bytes (4, 8 or 16)", file, line);
  if (srcBytes != 0 && srcBytes != bytes)
    fail("cp.async reading " + std::to_string(srcBytes) + " of its " + std::to_string(bytes) +
             " bytes (the kernels read all or none)",
         file, line);
  if (!__start_tfc_simt_shared || to < __start_tfc_simt_shared ||
      to + bytes > __stop_tfc_simt_shared)
    fail("cp.async into an address outside __shared__ memory", file, line);
  if (uintptr_t(to) % unsigned(bytes) != 0 || uintptr_t(src) % unsigned(bytes) != 0)
    fail("cp.async of " + std::to_string(bytes) + " bytes from or to an address not aligned to " +
             std::to_string(bytes),
         file, line);
  CpAsyncCopy copy;
  copy.dst = to;
  copy.size = bytes;
  if (srcBytes > 0)
    std::memcpy(copy.bytes, src, size_t(srcBytes));
  std::memset(to, 0xff, size_t(bytes)); // in flight: neither the old bytes nor the new
  t.copies.push_back(copy);
}

void cpAsyncCommitGroup(const char *, int) {
  Thread &t = *emu.current;
  t.copyGroups.push_back(t.copies.size());
}

void cpAsyncWaitGroup(int pending, const char *, int) {
  Thread &t = *emu.current;
  const std::vector<size_t> &groups = t.copyGroups;
  if (groups.size() <= size_t(pending))
    return;
  const size_t landed = groups[groups.size() - 1 - size_t(pending)];
  for (; t.copiesLanded < landed; ++t.copiesLanded) {
    const CpAsyncCopy &copy = t.copies[t.copiesLanded];
    std::memcpy(copy.dst, copy.bytes, size_t(copy.size));
  }
}

size_t sharedAddress(const void *p, const char *file, int line) {
  const char *at = static_cast<const char *>(p);
  if (!__start_tfc_simt_shared || at < __start_tfc_simt_shared || at >= __stop_tfc_simt_shared)
    fail("__cvta_generic_to_shared of an address outside __shared__ memory", file, line);
  // The block's window: 256 KiB (what a descriptor reaches) from 1,024-byte
  // aligned (the swizzle's atom), half of it before the first address
  // asked; the emulator's __shared__ variables, every kernel's, share one
  // section, larger than a block's shared memory can be.
  if (emu.sharedBase == nullptr)
    emu.sharedBase = reinterpret_cast<char *>(
        std::max(uintptr_t(at) - std::min(uintptr_t(at), uintptr_t(kSharedWindow / 2)),
                 uintptr_t(__start_tfc_simt_shared)) &
        ~uintptr_t(1023));
  if (at < emu.sharedBase || size_t(at - emu.sharedBase) >= kSharedWindow)
    fail("__cvta_generic_to_shared: the block's __shared__ variables lie more than 128 KiB "
         "apart in the emulator's section",
         file, line);
  return size_t(at - emu.sharedBase);
}

void fail(const std::string &message, const char *file, int line) {
  leave(message + " at " + site(file, line) +
        (emu.current ? " in " + who(*emu.current) : std::string()));
}

std::string launch(const char *kernel, unsigned grid, unsigned block, Schedule schedule,
                   uint64_t seed, const std::function<void()> &body) {
  const std::string name = kernel;
  if (block == 0 || block % kWarp != 0)
    return name + ": blocks of " + std::to_string(block) +
           " threads (the emulator runs whole warps only)";
  ensureStacks(block);
  emu.threads.assign(block, Thread());
  emu.body = &body;
  emu.error.clear();
  emu.schedule = schedule;
  emu.rng.seed(seed);
  std::vector<unsigned> blocks(grid);
  std::iota(blocks.begin(), blocks.end(), 0u);
  if (schedule == Schedule::Reversed)
    std::reverse(blocks.begin(), blocks.end());
  else if (schedule == Schedule::Shuffled)
    std::shuffle(blocks.begin(), blocks.end(), emu.rng);
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  const size_t slot = kStackBytes + size_t(sysconf(_SC_PAGESIZE));
  for (unsigned b : blocks) {
    blockIdx = {b, 0, 0};
    poisonSharedMemory();
    for (unsigned i = 0; i < block; ++i) {
      Thread &t = emu.threads[i];
      t = Thread();
      t.index = i;
      t.state = State::Runnable;
      start(t, emu.stacks + i * slot + (slot - kStackBytes), kStackBytes);
    }
    emu.live = int(block);
    emu.atBarrier = 0;
    emu.warps.assign(block / kWarp, Warp());
    emu.warpgroups.assign(block % kWarpgroup ? 0 : block / kWarpgroup, Warpgroup());
    emu.sharedBase = nullptr;
    emu.eagerWgmma = b % 2 == 1;
    order();
    while (emu.live > 0 && emu.error.empty()) {
      Thread *t = next();
      if (t == nullptr && makeWgmmas())
        t = next();
      if (!emu.error.empty())
        break;
      if (t == nullptr) {
        std::string states;
        for (const Thread &u : emu.threads)
          if (u.state != State::Done && states.size() < 400)
            states += "; " + whereIs(u);
        emu.error = "deadlock" + states;
        break;
      }
      emu.current = t;
      threadIdx = {t->index, 0, 0};
      switchTo(emu.scheduler, t->context);
      emu.current = nullptr;
    }
    if (!emu.error.empty())
      return name + " (block " + std::to_string(b) + " of " + std::to_string(grid) +
             "): " + emu.error;
  }
  return "";
}

const Kernel *findKernel(const std::string &name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

void registerKernel(const Kernel &kernel) { registry()[kernel.name] = kernel; }

} // namespace tfc::simt
