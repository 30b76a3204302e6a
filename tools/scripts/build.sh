#!/usr/bin/env bash
# Configures and builds tfc in ./build (or $TFC_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${TFC_BUILD_DIR:-$root/build}"
"$root/tools/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja >/dev/null
ninja -C "$build" "$@"
