#!/usr/bin/env bash
# tools/gpu/baseline.sh [BUILD_DIR] BINARY...: compiled models to time on the
# GPU against this build's (tools/gpu/verify.sh, section 4): copied into
# BUILD_DIR/gpu-baseline and packed as BUILD_DIR/gpu-carry/baseline.tar.xz
# (carried with build/gpu-carry). Each keeps its name, which verify.sh looks
# up in gpu-check/cuda, then gpu-bench/cuda. Take them from a build of the
# commit before the change, before prepare.sh rebuilds them, e.g.
#   tools/gpu/baseline.sh build build/gpu-check/cuda/reverse build/gpu-bench/cuda/medium_encoder.tf32
set -euo pipefail
build="$1"
shift
[ $# -gt 0 ] || { echo "usage: baseline.sh BUILD_DIR BINARY..." >&2; exit 1; }
stage="$(mktemp -d)"
mkdir -p "$stage/gpu-baseline" "$build/gpu-carry"
cp "$@" "$stage/gpu-baseline/"
tar -C "$stage" -cJf "$build/gpu-carry/baseline.tar.xz" gpu-baseline
rm -rf "$stage"
du -h "$build/gpu-carry/baseline.tar.xz"
