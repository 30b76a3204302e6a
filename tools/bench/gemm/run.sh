#!/usr/bin/env bash
# tfc_sgemm against OpenBLAS on the seed models' GEMMs (shapes.txt), one table
# per thread count and OpenBLAS kernel set:
#
#   tools/bench/gemm/run.sh                 # 1 and 2 threads; OpenBLAS as Debian
#                                           # picks it, then forced to SkylakeX
#   THREADS=1 CORES=default SAMPLES=41 tools/bench/gemm/run.sh
#
# Installs libopenblas-dev when it is missing and builds gemm_bench with g++
# straight from runtime/ (the same flags as the runtime: -O3, Gemm.cpp with
# -march=native) into $BUILD (default build-gemm-bench/, gitignored).
# Debian's OpenBLAS 0.3.21 does not know Zen 5 and runs its Haswell (AVX2)
# kernels here; OPENBLAS_CORETYPE=SkylakeX gives it its AVX-512 ones, small-
# matrix kernels included. Regenerate shapes.txt with shapes.py after a model
# changes. Each row shows the call's ceiling on this machine (ceiling.cpp:
# the FMA rate, or the rate at which the cores read the call's bytes), and
# `$BUILD/gemm_bench --threads 1 --ceilings` prints those rates alone.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${BUILD:-$ROOT/build-gemm-bench}
THREADS=${THREADS:-"1 2"}
CORES=${CORES:-"default SkylakeX"}
SAMPLES=${SAMPLES:-21}

if [ ! -e /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h ]; then
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  $SUDO apt-get install -y libopenblas-dev
fi

mkdir -p "$BUILD"
FLAGS=(-O3 -DNDEBUG -std=c++17 -I"$ROOT")
g++ "${FLAGS[@]}" -march=native -c "$ROOT/runtime/cpu/Gemm.cpp" -o "$BUILD/Gemm.o" &
g++ "${FLAGS[@]}" -march=native -c "$ROOT/runtime/cpu/Winograd.cpp" -o "$BUILD/Winograd.o" &
g++ "${FLAGS[@]}" -c "$ROOT/runtime/cpu/GemmKernels.cpp" -o "$BUILD/GemmKernels.o" &
g++ "${FLAGS[@]}" -c "$ROOT/runtime/ThreadPool.cpp" -o "$BUILD/ThreadPool.o" &
g++ "${FLAGS[@]}" -march=native -c "$ROOT/tools/bench/gemm/ceiling.cpp" -o "$BUILD/ceiling.o" &
g++ "${FLAGS[@]}" -I/usr/include/x86_64-linux-gnu/openblas-pthread \
  -c "$ROOT/tools/bench/gemm/gemm_bench.cpp" -o "$BUILD/gemm_bench.o" &
wait
g++ "$BUILD"/{gemm_bench,ceiling,Gemm,GemmKernels,Winograd,ThreadPool}.o \
  -L/usr/lib/x86_64-linux-gnu/openblas-pthread -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-pthread \
  -lopenblas -lpthread -o "$BUILD/gemm_bench"

for core in $CORES; do
  for threads in $THREADS; do
    echo
    if [ "$core" = default ]; then
      "$BUILD/gemm_bench" --threads "$threads" --samples "$SAMPLES" \
        --shapes "$ROOT/tools/bench/gemm/shapes.txt"
    else
      OPENBLAS_CORETYPE=$core "$BUILD/gemm_bench" --threads "$threads" --samples "$SAMPLES" \
        --shapes "$ROOT/tools/bench/gemm/shapes.txt"
    fi
  done
done
