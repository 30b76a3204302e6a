#!/usr/bin/env bash
# tools/gpu/pack.sh [BUILD_DIR]: what tools/gpu/prepare.sh and
# tools/bench/gpu-prepare.sh built (BUILD_DIR/gpu-check and
# BUILD_DIR/gpu-bench/cuda, whichever exist) as one xz archive,
# BUILD_DIR/gpu-carry/tfc-gpu.tar.xz, for the device tool: its carry takes
# 64 MiB in all, the binaries take ~480 MiB, and xz packs them in ~27 MiB
# (each is mostly the same runtime). On the GPU machine:
#   python3 tools/gpu/unpack.py build/gpu-carry/tfc-gpu.tar.xz build
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
parts=()
for part in gpu-check gpu-bench/cuda; do
  [ -d "$build/$part" ] && parts+=("$part")
done
[ ${#parts[@]} -gt 0 ] || { echo "pack.sh: nothing to pack: run tools/gpu/prepare.sh first" >&2; exit 1; }
mkdir -p "$build/gpu-carry"
# xz -9: a 64 MiB dictionary, so each binary (8-13 MiB, mostly the same
# runtime) is packed against the ones before it: 27 MiB where the default
# 8 MiB dictionary made 66 (the twenty-seventh session's binaries).
XZ_OPT="-9 -T0" tar -C "$build" -cJf "$build/gpu-carry/tfc-gpu.tar.xz" "${parts[@]}"
du -h "$build/gpu-carry/tfc-gpu.tar.xz"
echo "pack.sh: next, here: tools/gpu/dry-run.sh quick.sh (the script the device call runs, on the fakes)"
