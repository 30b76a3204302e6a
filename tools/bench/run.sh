#!/usr/bin/env bash
# The benchmark: tfc against PyTorch eager and JAX (jax.jit) on the seed models.
#
#   tools/bench/run.sh [--build-dir DIR] [--steps N] [--warmup N] [--min-seconds S] [--threads 1,2]
#                      [--workloads reverse,set_anomaly,...] [--no-build] [--no-peers]
#   tools/bench/run.sh --gpu [ARGS]     the GPU benchmark instead: tools/bench/gpu.sh ARGS
#
# 1. builds tfc and its runtime in DIR (default: build/; configured with CMake +
#    Ninja when DIR has no build yet);
# 2. installs the peers into DIR/bench-venv with pip when missing (torch, jax,
#    jaxlib, numpy; TFC_BENCH_TORCH_INDEX=URL tries that index for a CPU-only
#    torch first); a peer that cannot be installed is reported in its cells;
# 3. runs tools/bench/bench.py: compiles each models/NAME.tf with `tfc compile`,
#    times every side with 1 and 2 threads, and prints the table, also written to
#    DIR/bench/table.md (raw numbers in DIR/bench/results.json, logs in DIR/bench/logs).
#
# The machine should be otherwise idle: every figure is a ratio against peers
# measured in the same run, but a busy machine makes them noisy.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ ${1:-} == --gpu ]]; then  # issue 28's GPU table: builds nothing (gpu-prepare.sh did)
  shift
  exec "$ROOT/tools/bench/gpu.sh" "$@"
fi
BUILD=${TFC_BUILD_DIR:-$ROOT/build}
BUILD_TFC=1
PEERS=1
PASS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) BUILD=$2; shift 2 ;;
    --build-dir=*) BUILD=${1#*=}; shift ;;
    --no-build) BUILD_TFC=0; shift ;;
    --no-peers) PEERS=0; shift ;;
    --steps|--warmup|--min-seconds|--threads|--workloads|--timeout) PASS+=("$1" "$2"); shift 2 ;;
    --steps=*|--warmup=*|--min-seconds=*|--threads=*|--workloads=*|--timeout=*) PASS+=("$1"); shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
OUT=$BUILD/bench
mkdir -p "$OUT/logs"

# 1. tfc and the runtime its binaries link.
if [[ $BUILD_TFC == 1 ]]; then
  if [[ ! -f $BUILD/build.ninja && ! -f $BUILD/Makefile ]]; then
    echo "== configuring $BUILD" >&2
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
  fi
  echo "== building tfc and tfc_runtime in $BUILD" >&2
  cmake --build "$BUILD" --target tfc tfc_runtime >&2
fi

# 2. The peers, in a virtualenv; failures are notes, never fatal.
VENV=$BUILD/bench-venv
NOTES=$OUT/peer-notes.json
PYTHON=""
torch_note="" jax_note=""
if [[ $PEERS == 1 ]]; then
  if [[ ! -x $VENV/bin/python ]]; then
    echo "== creating $VENV" >&2
    python3 -m venv "$VENV" >"$OUT/logs/venv.log" 2>&1 || rm -rf "$VENV"
  fi
  if [[ -x $VENV/bin/python ]]; then
    PYTHON=$VENV/bin/python
    pip() { "$PYTHON" -m pip --disable-pip-version-check "$@"; }
    if ! "$PYTHON" -c 'import torch, numpy' >/dev/null 2>&1; then
      echo "== installing torch into $VENV (log: $OUT/logs/pip-torch.log)" >&2
      { [[ -n ${TFC_BENCH_TORCH_INDEX:-} ]] &&
          pip install torch numpy --index-url "$TFC_BENCH_TORCH_INDEX" --timeout 30 --retries 1; } \
        >"$OUT/logs/pip-torch.log" 2>&1 ||
        pip install torch numpy >>"$OUT/logs/pip-torch.log" 2>&1 ||
        torch_note="pip install torch failed: $(tail -n 1 "$OUT/logs/pip-torch.log" | tr -d '"\\' | cut -c1-100)"
    fi
    if ! "$PYTHON" -c 'import jax, numpy' >/dev/null 2>&1; then
      echo "== installing jax into $VENV (log: $OUT/logs/pip-jax.log)" >&2
      pip install jax jaxlib numpy >"$OUT/logs/pip-jax.log" 2>&1 ||
        jax_note="pip install jax failed: $(tail -n 1 "$OUT/logs/pip-jax.log" | tr -d '"\\' | cut -c1-100)"
    fi
  else
    torch_note="python3 -m venv failed (see $OUT/logs/venv.log)"
    jax_note=$torch_note
  fi
else
  torch_note="skipped (--no-peers)"
  jax_note=$torch_note
fi
printf '{"torch": "%s", "jax": "%s"}\n' "$torch_note" "$jax_note" >"$NOTES"

# 3. Measure and print the table.
exec python3 "$ROOT/tools/bench/bench.py" --root "$ROOT" --build-dir "$BUILD" \
  --python "$PYTHON" --peer-notes "$NOTES" ${PASS[@]+"${PASS[@]}"}
