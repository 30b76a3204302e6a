//===- CpuCheck.cpp - refusing a CPU that lacks what the binary needs -----===//
//
// checkCpu runs before anything else in a compiled model, so it must not
// need what it checks. This file is built without -march (as all of
// runtime/ is; only runtime/cpu's kernels get one), and what it runs is its
// own code, cpuid and the C library: no JSON library and no C++ library
// template, whose out-of-line copy the linker may take from a kernel file
// built with -march=native (the kernels instantiate std::vector<float>, for
// one). It reads the manifest's cpu record with a few lines of its own.
//
//===----------------------------------------------------------------------===//

#include "runtime/CpuCheck.h"
#include "runtime/Abi.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define TFC_CPUID 1
#endif

// The generated object's manifest (weak: the runtime's own tests link
// without one) and what the kernels were built for (runtime/cpu/KernelIsa.cpp).
extern "C" const char tfc_manifest[] __attribute__((weak));
extern "C" const char tfc_kernel_march[];
extern "C" const char tfc_kernel_isa[];

namespace tfc::rt {
namespace {

using cpu::Feature;
using cpu::kFeatures;

constexpr size_t kNumFeatures = sizeof(kFeatures) / sizeof(kFeatures[0]);

/// A piece of the manifest's text (or of tfc_kernel_isa).
struct Text {
  const char *p = nullptr;
  size_t n = 0;
  bool is(std::string_view s) const { return n == s.size() && std::memcmp(p, s.data(), n) == 0; }
  std::string_view view() const { return {p, n}; }
};

/// The manifest's "cpu": {"name", "target", "features"}.
struct CpuRecord {
  Text name, target;
  static constexpr size_t kMaxFeatures = 256;
  Text features[kMaxFeatures];
  size_t numFeatures = 0;
};

/// Just enough JSON to find one key of the top-level object and read the
/// strings of the cpu record; every other value is skipped unread. Any
/// surprise makes it give up (the check then tests the kernels' features
/// alone, and Manifest.cpp reports a malformed manifest).
class Scanner {
public:
  explicit Scanner(const char *text) : p_(text) {}

  bool findCpu(CpuRecord &out) {
    if (!eat('{') || eat('}'))
      return false;
    do {
      Text key;
      if (!string(key) || !eat(':'))
        return false;
      if (key.is(abi::key::kCpu))
        return cpu(out);
      if (!skip())
        return false;
    } while (eat(','));
    return false;
  }

private:
  const char *p_;

  void space() {
    while (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')
      ++p_;
  }
  bool eat(char c) {
    space();
    if (*p_ != c)
      return false;
    ++p_;
    return true;
  }
  /// A string's contents, escapes as they are (names have none).
  bool string(Text &out) {
    space();
    if (*p_ != '"')
      return false;
    const char *begin = ++p_;
    while (*p_ && *p_ != '"')
      p_ += (*p_ == '\\' && p_[1]) ? 2 : 1;
    if (*p_ != '"')
      return false;
    out = {begin, size_t(p_ - begin)};
    ++p_;
    return true;
  }
  /// Skips one value: a string, a number or literal, or a whole object or
  /// array (brackets counted, strings stepped over).
  bool skip() {
    space();
    int depth = 0;
    while (*p_) {
      const char c = *p_;
      if (c == '"') {
        Text ignored;
        if (!string(ignored))
          return false;
        if (depth == 0)
          return true;
        continue;
      }
      if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0)
          return true; // the end of the enclosing object
        if (--depth == 0) {
          ++p_;
          return true;
        }
      } else if (c == ',' && depth == 0) {
        return true;
      }
      ++p_;
    }
    return false;
  }
  bool cpu(CpuRecord &out) {
    if (!eat('{'))
      return false;
    if (eat('}'))
      return true;
    do {
      Text key;
      if (!string(key) || !eat(':'))
        return false;
      if (key.is(abi::key::kName)) {
        if (!string(out.name))
          return false;
      } else if (key.is(abi::key::kCpuTarget)) {
        if (!string(out.target))
          return false;
      } else if (key.is(abi::key::kCpuFeatures)) {
        if (!eat('['))
          return false;
        if (!eat(']')) {
          do {
            Text feature;
            if (!string(feature))
              return false;
            if (out.numFeatures < CpuRecord::kMaxFeatures)
              out.features[out.numFeatures++] = feature;
          } while (eat(','));
          if (!eat(']'))
            return false;
        }
      } else if (!skip()) {
        return false;
      }
    } while (eat(','));
    return eat('}');
  }
};

#ifdef TFC_CPUID
/// The cpuid leaves the table reads, and the register state the OS saves.
struct CpuidWords {
  uint32_t leaf1[4] = {}, leaf7[4] = {}, leaf7s1[4] = {}, ext1[4] = {};
  bool avxState = false, avx512State = false, amxState = false;
  CpuidWords() {
    unsigned a, b, c, d;
    auto store = [](uint32_t *words, unsigned a, unsigned b, unsigned c, unsigned d) {
      words[0] = a, words[1] = b, words[2] = c, words[3] = d;
    };
    if (__get_cpuid(1, &a, &b, &c, &d))
      store(leaf1, a, b, c, d);
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
      store(leaf7, a, b, c, d);
      // EAX of subleaf 0: the last subleaf there is.
      if (a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d))
        store(leaf7s1, a, b, c, d);
    }
    if (__get_cpuid(cpu::kExt1, &a, &b, &c, &d))
      store(ext1, a, b, c, d);
    // XCR0 says which registers the OS saves across a context switch; it
    // can be read when the OS has set CR4.OSXSAVE (CPUID.1:ECX bit 27).
    if ((leaf1[2] >> 27) & 1) {
      uint32_t lo, hi;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      avxState = (lo & 0x6) == 0x6;                         // SSE, AVX
      avx512State = avxState && (lo & 0xe0) == 0xe0;       // opmask, ZMM
      amxState = (lo & 0x60000) == 0x60000;                 // tile config, data
    }
  }
  bool has(const Feature &f) const {
    const uint32_t *words = f.leaf == 1   ? leaf1
                            : f.leaf == 7 ? (f.subleaf == 0 ? leaf7 : leaf7s1)
                                          : ext1;
    if (!((words[unsigned(f.reg)] >> f.bit) & 1))
      return false;
    switch (f.state) {
    case cpu::State::None:
      return true;
    case cpu::State::Avx:
      return avxState;
    case cpu::State::Avx512:
      return avx512State;
    case cpu::State::Amx:
      return amxState;
    }
    return false;
  }
};

const CpuidWords &cpuid() {
  static const CpuidWords words;
  return words;
}
#endif

bool has(const Feature &f) {
#ifdef TFC_CPUID
  return cpuid().has(f);
#else
  (void)f;
  return false;
#endif
}

/// The brand string into `out` (at least 64 bytes), spaces trimmed.
void brand(char *out, size_t size) {
  out[0] = 0;
#ifdef TFC_CPUID
  unsigned words[12] = {};
  unsigned max = __get_cpuid_max(0x80000000, nullptr);
  if (max >= 0x80000004)
    for (unsigned i = 0; i < 3; ++i)
      __get_cpuid(0x80000002 + i, &words[4 * i], &words[4 * i + 1], &words[4 * i + 2],
                  &words[4 * i + 3]);
  char text[49] = {};
  std::memcpy(text, words, 48);
  std::snprintf(out, size, "%s", text);
#endif
  if (!out[0]) {
    // /proc/cpuinfo's "model name : ..." line.
    if (FILE *f = std::fopen("/proc/cpuinfo", "r")) {
      char line[512];
      while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "model name", 10) == 0) {
          if (const char *colon = std::strchr(line, ':'))
            std::snprintf(out, size, "%s", colon + 1);
          break;
        }
      std::fclose(f);
    }
  }
  // Trim spaces and the newline.
  size_t begin = 0, end = std::strlen(out);
  while (begin < end && (out[begin] == ' ' || out[begin] == '\t'))
    ++begin;
  while (end > begin && (out[end - 1] == ' ' || out[end - 1] == '\n' || out[end - 1] == '\t'))
    --end;
  std::memmove(out, out + begin, end - begin);
  out[end - begin] = 0;
  if (!out[0])
    std::snprintf(out, size, "unknown");
}

/// Marks in `missing` each feature of `name` this CPU lacks (a name the
/// table does not know cannot be tested and is passed over).
void mark(std::string_view name, bool *missing) {
  for (size_t i = 0; i < kNumFeatures; ++i)
    if (kFeatures[i].name == name && !has(kFeatures[i]))
      missing[i] = true;
}

/// For each space-separated word of `list`.
template <typename F> void forEachWord(const char *list, F f) {
  for (const char *p = list; *p;) {
    while (*p == ' ')
      ++p;
    const char *begin = p;
    while (*p && *p != ' ')
      ++p;
    if (p > begin)
      f(std::string_view(begin, size_t(p - begin)));
  }
}

/// Appends printf-style text to a fixed buffer (cut at its end).
struct Line {
  char text[4096];
  size_t used = 0;
  Line() { text[0] = 0; }
  template <typename... Args> void add(const char *format, Args... args) {
    if (used + 1 >= sizeof text)
      return;
    int n = std::snprintf(text + used, sizeof text - used, format, args...);
    if (n > 0)
      used = std::min(sizeof text - 1, used + size_t(n));
  }
  void addText(Text t) { add("%.*s", int(t.n), t.p); }
};

/// "a, b and c" of the features marked in `missing`, in the table's order
/// (x86-64-v3's, then v4's first), the first 8 of them and how many more.
void addList(Line &line, const bool *missing) {
  constexpr size_t kShown = 8;
  size_t count = 0, total = 0;
  for (size_t i = 0; i < kNumFeatures; ++i)
    total += missing[i];
  const size_t shown = total > kShown ? kShown : total;
  for (size_t i = 0; i < kNumFeatures && count < shown; ++i) {
    if (!missing[i])
      continue;
    ++count;
    line.add("%s%.*s", count == 1 ? "" : count == shown && shown == total ? " and " : ", ",
             int(kFeatures[i].name.size()), kFeatures[i].name.data());
  }
  if (total > shown)
    line.add(" and %zu more", total - shown);
}

} // namespace

bool cpuHas(std::string_view name) {
  const Feature *f = cpu::findFeature(name);
  return f && has(*f);
}

std::string cpuBrand() {
  char text[128];
  brand(text, sizeof text);
  return text;
}

const char *kernelMarch() { return tfc_kernel_march; }
const char *kernelFeatures() { return tfc_kernel_isa; }

int checkCpu() {
#ifndef TFC_CPUID
  return 0; // the table is x86's
#else
  CpuRecord record;
  const bool recorded = tfc_manifest && Scanner(tfc_manifest).findCpu(record);
  bool codeMissing[kNumFeatures] = {}, kernelMissing[kNumFeatures] = {};
  for (size_t i = 0; i < record.numFeatures; ++i)
    mark(record.features[i].view(), codeMissing);
  forEachWord(tfc_kernel_isa, [&](std::string_view name) { mark(name, kernelMissing); });
  bool missing[kNumFeatures] = {}, any = false, anyCode = false;
  for (size_t i = 0; i < kNumFeatures; ++i) {
    missing[i] = codeMissing[i] || kernelMissing[i];
    any |= missing[i];
    anyCode |= codeMissing[i];
  }
  if (!any)
    return 0;

  char cpuName[128];
  brand(cpuName, sizeof cpuName);
  bool v3 = true; // whether this CPU runs what --cpu=x86-64-v3 builds
  for (std::string_view name : cpu::kX86_64_v3)
    v3 &= cpuHas(name);
  const bool nativeKernels = std::strcmp(tfc_kernel_march, "native") == 0;
  Line line;
  if (recorded && anyCode) {
    // The generated code's CPU: what --cpu said.
    if (record.name.is("native")) {
      line.add("error: this binary was compiled for the CPU of the machine that compiled it (");
      if (record.target.n)
        line.addText(record.target), line.add("; ");
      line.add("tfc compile --cpu=native, the default) and needs ");
    } else {
      line.add("error: this binary was compiled for ");
      line.addText(record.name);
      line.add(" (tfc compile --cpu=");
      line.addText(record.name);
      line.add(") and needs ");
    }
    addList(line, missing);
    line.add(", which this CPU (%s) lacks; recompile it with --cpu=native on this machine%s",
             cpuName, v3 ? ", or with --cpu=x86-64-v3 to run on any x86-64-v3 CPU" : "");
  } else {
    // The kernels' -march alone (a tfc built on another machine).
    if (tfc_kernel_march[0])
      line.add("error: this binary's runtime kernels were built with -march=%s%s and need ",
               tfc_kernel_march, nativeKernels ? " (for the machine that built tfc)" : "");
    else
      line.add("error: this binary's runtime kernels need ");
    addList(line, missing);
    line.add(", which this CPU (%s) lacks; ", cpuName);
    if (v3 && nativeKernels)
      line.add("recompile it with --cpu=x86-64-v3 (portable kernels), or build tfc with "
               "-DTFC_RUNTIME_NATIVE=OFF");
    else
      line.add("this CPU is older than x86-64-v3, the oldest tfc's portable runtime runs on: "
               "build tfc on this machine and compile with --cpu=native");
  }
  std::fprintf(stderr, "%s\n", line.text);
  return 1;
#endif
}

} // namespace tfc::rt
