// stream: how fast one core reads a buffer of a given size over and over (the
// ceiling of a memory-bound product such as a GEMV whose matrix stays in L2).
//
//   g++ -O3 -march=native tools/bench/gemm/stream.cpp -o stream && ./stream
//
// Sums the buffer with eight vector accumulators (GCC's vector extension, 64
// bytes a vector) and prints GB/s for a few sizes from L1 to beyond L2. Not a
// test: nothing fails.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

typedef float V16 __attribute__((vector_size(64)));

__attribute__((noinline)) float sumAll(const V16 *b, long vectors) {
  V16 s[8] = {};
  for (long i = 0; i < vectors; i += 8)
    for (int v = 0; v < 8; ++v)
      s[v] += b[i + v];
  for (int v = 1; v < 8; ++v)
    s[0] += s[v];
  float total = 0;
  for (int l = 0; l < 16; ++l)
    total += s[0][l];
  return total;
}

int main() {
  for (long kib : {16L, 256L, 640L, 900L, 4096L}) {
    const long vectors = kib * 1024 / 64;
    V16 *b = static_cast<V16 *>(std::aligned_alloc(64, size_t(vectors) * 64));
    for (long i = 0; i < vectors; ++i)
      for (int l = 0; l < 16; ++l)
        b[i][l] = 1.0f;
    volatile float sink = 0;
    const long reps = 200000000L / (vectors * 16) + 1;
    std::vector<double> seconds;
    for (int s = 0; s < 9; ++s) {
      auto start = std::chrono::steady_clock::now();
      for (long r = 0; r < reps; ++r)
        sink = sink + sumAll(b, vectors);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps);
    }
    std::sort(seconds.begin(), seconds.end());
    std::printf("%5ld KiB: %6.1f GB/s (median of 9)\n", kib,
                double(vectors) * 64 / seconds[4] * 1e-9);
    std::free(b);
  }
}
