//===- CpuCheck.h - what a binary needs of the CPU it runs on -------------===//
//
// `tfc compile --cpu=NAME` records in the manifest the CPU it compiled for
// and that CPU's instruction-set extensions (abi::key::kCpu); the runtime's
// kernels record theirs, the ones the -march they were built with lets the
// C++ compiler use (runtime/cpu/KernelIsa.cpp). The first thing a compiled
// model does (Cli.cpp's main) is test each one with cpuid, so that a binary
// started on a CPU that lacks one says so and exits 1 instead of dying of
// an illegal instruction.
//
// kFeatures is the one list of features both sides know, by LLVM's names:
// the compiler records only these, the runtime tests exactly these. It holds
// what code generation can use (vector, bit-manipulation and matrix
// extensions, and what the x86-64-v2/v3/v4 levels name), not x86-64's
// baseline (SSE2 and older: every x86-64 CPU has them) nor system features
// (TSX, SGX, ...: never generated, and a microcode update or hypervisor may
// turn them off on one machine of a cluster). Plain C++17: the compiler
// includes it too.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CPUCHECK_H
#define TFC_RUNTIME_CPUCHECK_H

#include <cstdint>
#include <string>
#include <string_view>

namespace tfc::cpu {

/// Where cpuid reports a feature: leaf, subleaf, register, bit.
enum class Reg : uint8_t { Eax, Ebx, Ecx, Edx };
/// The register state the OS must save (XCR0) for the feature to be usable.
enum class State : uint8_t { None, Avx, Avx512, Amx };

struct Feature {
  std::string_view name; // LLVM's name (`llc -mattr=+NAME`)
  uint32_t leaf, subleaf;
  Reg reg;
  uint8_t bit;
  State state;
};

inline constexpr uint32_t kExt1 = 0x80000001;

// The bits are those of LLVM's sys::getHostCPUFeatures (Intel SDM vol. 2,
// CPUID; AMD APM vol. 3, appendix E).
inline constexpr Feature kFeatures[] = {
    // x86-64-v2
    {"sse3", 1, 0, Reg::Ecx, 0, State::None},
    {"ssse3", 1, 0, Reg::Ecx, 9, State::None},
    {"cx16", 1, 0, Reg::Ecx, 13, State::None},
    {"sse4.1", 1, 0, Reg::Ecx, 19, State::None},
    {"sse4.2", 1, 0, Reg::Ecx, 20, State::None},
    {"crc32", 1, 0, Reg::Ecx, 20, State::None},
    {"popcnt", 1, 0, Reg::Ecx, 23, State::None},
    {"sahf", kExt1, 0, Reg::Ecx, 0, State::None},
    // x86-64-v3
    {"avx", 1, 0, Reg::Ecx, 28, State::Avx},
    {"avx2", 7, 0, Reg::Ebx, 5, State::Avx},
    {"bmi", 7, 0, Reg::Ebx, 3, State::None},
    {"bmi2", 7, 0, Reg::Ebx, 8, State::None},
    {"f16c", 1, 0, Reg::Ecx, 29, State::Avx},
    {"fma", 1, 0, Reg::Ecx, 12, State::Avx},
    {"lzcnt", kExt1, 0, Reg::Ecx, 5, State::None},
    {"movbe", 1, 0, Reg::Ecx, 22, State::None},
    {"xsave", 1, 0, Reg::Ecx, 26, State::Avx},
    // x86-64-v4 and the later AVX-512 extensions
    {"avx512f", 7, 0, Reg::Ebx, 16, State::Avx512},
    {"avx512dq", 7, 0, Reg::Ebx, 17, State::Avx512},
    {"avx512ifma", 7, 0, Reg::Ebx, 21, State::Avx512},
    {"avx512cd", 7, 0, Reg::Ebx, 28, State::Avx512},
    {"avx512bw", 7, 0, Reg::Ebx, 30, State::Avx512},
    {"avx512vl", 7, 0, Reg::Ebx, 31, State::Avx512},
    {"avx512vbmi", 7, 0, Reg::Ecx, 1, State::Avx512},
    {"avx512vbmi2", 7, 0, Reg::Ecx, 6, State::Avx512},
    {"avx512vnni", 7, 0, Reg::Ecx, 11, State::Avx512},
    {"avx512bitalg", 7, 0, Reg::Ecx, 12, State::Avx512},
    {"avx512vpopcntdq", 7, 0, Reg::Ecx, 14, State::Avx512},
    {"avx512vp2intersect", 7, 0, Reg::Edx, 8, State::Avx512},
    {"avx512fp16", 7, 0, Reg::Edx, 23, State::Avx512},
    {"avx512bf16", 7, 1, Reg::Eax, 5, State::Avx512},
    // VEX-encoded extensions after AVX2
    {"avxvnni", 7, 1, Reg::Eax, 4, State::Avx},
    {"avxifma", 7, 1, Reg::Eax, 23, State::Avx},
    {"avxvnniint8", 7, 1, Reg::Edx, 4, State::Avx},
    {"avxneconvert", 7, 1, Reg::Edx, 5, State::Avx},
    {"avxvnniint16", 7, 1, Reg::Edx, 10, State::Avx},
    // Bit manipulation, Galois field, carry-less multiply, crypto
    {"adx", 7, 0, Reg::Ebx, 19, State::None},
    {"gfni", 7, 0, Reg::Ecx, 8, State::None},
    {"pclmul", 1, 0, Reg::Ecx, 1, State::None},
    {"vpclmulqdq", 7, 0, Reg::Ecx, 10, State::Avx},
    {"aes", 1, 0, Reg::Ecx, 25, State::None},
    {"vaes", 7, 0, Reg::Ecx, 9, State::Avx},
    {"sha", 7, 0, Reg::Ebx, 29, State::None},
    {"sha512", 7, 1, Reg::Eax, 0, State::Avx},
    {"sm3", 7, 1, Reg::Eax, 1, State::Avx},
    {"sm4", 7, 1, Reg::Eax, 2, State::Avx},
    // AMX
    {"amx-tile", 7, 0, Reg::Edx, 24, State::Amx},
    {"amx-int8", 7, 0, Reg::Edx, 25, State::Amx},
    {"amx-bf16", 7, 0, Reg::Edx, 22, State::Amx},
    {"amx-fp16", 7, 1, Reg::Eax, 21, State::Amx},
    {"amx-complex", 7, 1, Reg::Edx, 8, State::Amx},
    // AMD's
    {"sse4a", kExt1, 0, Reg::Ecx, 6, State::None},
    {"fma4", kExt1, 0, Reg::Ecx, 16, State::Avx},
    {"xop", kExt1, 0, Reg::Ecx, 11, State::Avx},
    {"tbm", kExt1, 0, Reg::Ecx, 21, State::None},
};

/// The table's entry for `name`, or null.
constexpr const Feature *findFeature(std::string_view name) {
  for (const Feature &f : kFeatures)
    if (f.name == name)
      return &f;
  return nullptr;
}

/// What x86-64-v3 adds to x86-64 (AVX2, FMA, BMI1/2, ...): what the
/// portable runtime's kernels need, and what `--cpu=x86-64-v3` suggests.
inline constexpr std::string_view kX86_64_v3[] = {
    "sse3", "ssse3", "cx16", "sse4.1", "sse4.2", "crc32", "popcnt", "sahf", "avx",
    "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"};

} // namespace tfc::cpu

namespace tfc::rt {

/// Whether this CPU has feature `name` (a kFeatures name) and the OS saves
/// its registers; false for a name not in the table or off x86.
bool cpuHas(std::string_view name);

/// This CPU as it names itself (cpuid's brand string, else /proc/cpuinfo's
/// model name), or "unknown".
std::string cpuBrand();

/// The -march the runtime's kernels in this binary were built with
/// ("native", "x86-64-v3"; "" for none) and the features it let the C++
/// compiler use (kFeatures names, space separated).
const char *kernelMarch();
const char *kernelFeatures();

/// Tests this CPU for everything the binary needs: the features of the
/// manifest's cpu record (the generated code's) and the kernels'. 0 when it
/// has them all; otherwise prints one line naming what is missing, what the
/// binary was compiled for and what to do, and returns 1 (the exit status).
/// Main calls it first: it uses nothing but cpuid, the C library and two
/// constant strings, and reads the manifest itself (no JSON library, no C++
/// library template a kernel built with -march could have instantiated).
int checkCpu();

} // namespace tfc::rt

#endif // TFC_RUNTIME_CPUCHECK_H
