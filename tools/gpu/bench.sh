#!/usr/bin/env bash
# tools/gpu/bench.sh [DIR]: one train step of every seed model on the GPU
# machine, in one run: tfc's GPU binary, the same compiled with
# --no-gemm-epilogues (each GEMM's epilogue a kernel of its own instead of
# cuBLASLt's) and with --no-merge-launches (a launch each loop nest), and
# PyTorch eager on the same GPU (tools/bench/peers.py, fp32, fused Adam).
# DIR is what tools/gpu/prepare.sh built (default build/gpu-check). tfc's
# three binaries run alternately, 3 times each, and give the median of their
# 3 medians (steps of a millisecond or less vary by 10% between runs).
# Prints a table of medians in ms; builds nothing.
set -uo pipefail
# The runtime's defaults, not a choice `tune` kept on this machine (runtime/Tune.h).
export TFC_TUNE_CACHE=none
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${1:-$root/build/gpu-check}"
steps=200
repeats=3
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 || true
python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 || true

median() { # BINARY: the median of `bench` over $steps train steps, or "-"
  local line
  line=$(timeout 60 "$1" bench --entry train_step --steps "$steps" 2>&1 |
    grep -o 'median_ms=[0-9.]*' | cut -d= -f2)
  echo "${line:--}"
}
middle() { # VALUES...: the median of numbers ("-" when any is missing)
  python3 -c 'import sys; v = sys.argv[1:]
print("-" if "-" in v or not v else "%.4f" % sorted(map(float, v))[len(v) // 2])' "$@"
}
batchOf() { # BINARY: its compiled batch size (`info`)
  "$1" info 2>/dev/null | grep -o -m1 'batch [0-9]*' | grep -o '[0-9]*'
}

printf '%-18s %6s %12s %22s %20s %12s %14s\n' model batch "tfc ms" "tfc no-epilogues ms" \
  "tfc separate ms" "torch ms" "torch / tfc"
for model in reverse set_anomaly fleuret_cnn fleuret_attention encoder_decoder; do
  fused=() unfused=() separate=()
  for ((i = 0; i < repeats; ++i)); do
    fused+=("$(median "$dir/cuda/$model")")
    [ -x "$dir/cuda-no-epilogues/$model" ] && unfused+=("$(median "$dir/cuda-no-epilogues/$model")")
    [ -x "$dir/cuda-separate/$model" ] && separate+=("$(median "$dir/cuda-separate/$model")")
  done
  tfc=$(middle "${fused[@]}")
  plain=$(middle "${unfused[@]}")
  apart=$(middle "${separate[@]}")
  batch=$(batchOf "$dir/cuda/$model")
  torch=$(timeout 120 python3 "$root/tools/bench/peers.py" --framework torch --workload "$model" \
    --entry train_step --batch "${batch:-1}" --device cuda --steps "$steps" --warmup 10 2>/dev/null |
    python3 -c 'import json, sys; print("%.3f" % json.loads(sys.stdin.read())["median_ms"])' \
      2>/dev/null)
  ratio=$(python3 -c "print('%.1fx' % ($torch / $tfc))" 2>/dev/null)
  printf '%-18s %6s %12s %22s %20s %12s %14s\n' "$model" "${batch:--}" "$tfc" "$plain" "$apart" \
    "${torch:--}" "${ratio:--}"
done
