#!/usr/bin/env bash
# tools/gpu/verify.sh OUT [SECONDS]: the shortest GPU check of a change that
# quick.sh has already measured the rest of (5 minutes, for a device call
# with little time left), carrying build/gpu-carry as for quick.sh, plus
# build/gpu-carry/baseline.tar.xz when there (tools/gpu/baseline.sh: the
# binaries of the commit before the change). In order:
#   1. tfc-kernel-check: every hand-written kernel against the CPU, and the
#      wgmma probe (its lines shown whatever they say);
#   2. parity.py of reverse, set_anomaly, fleuret_cnn and encoder_decoder;
#   3. reverse trained to 100% in fp32 and bf16, and in bf16 with every
#      GEMM on bf16 copies of its operands (--bf16-operands=all); under
#      TFC_GRAPH_DEPENDENCIES=1 to 100%, and twice to the same bytes; the
#      other seed models in bf16 against fp32 (precision-train.sh);
#   4. each baseline binary's train_step against the same binary of this
#      build, alternately, three times each (median of 50 steps); reverse,
#      set_anomaly, encoder_decoder and the medium encoder (tf32, bf16)
#      with TFC_GRAPH_DEPENDENCIES=1 against 0, twice; reverse, set_anomaly
#      and the medium encoder with GEMM autotuning (TFC_GEMM_AUTOTUNE=1)
#      against 0, twice; and the
#      medium encoder with attention's lean kernels (TFC_ATTENTION_LEAN=1)
#      against 0 and on wgmma (TFC_ATTENTION_WGMMA=1) against 0, and its bf16
#      step with bf16 copies of the GEMMs' operands against without,
#      against the forward's copies kept (--bf16-keep-activation-copies)
#      and against fp32 activations beside their copies (--no-bf16-activations);
#   5. attention's kernels alone (--bench-attention), the medium encoder's
#      GEMMs on cuBLASLt's first 8 algorithms (--bench-gemm-algorithms: the
#      weight gradients and the sums), and bench --profile
#      of the medium encoder, of reverse and of reverse with every small
#      product on gemm_small.cu (TFC_SMALL_GEMM=1).
# Prints `N passed, N failed` of 1-3; everything it prints also goes to
# OUT/verify.txt as it is printed.
# Before the device call, `tools/gpu/dry-run.sh verify.sh` runs this here on the
# fakes and names what would waste the call (a flag refused, a binary missing).
set -uo pipefail
# The runtime's defaults, not a choice `tune` kept on this machine (runtime/Tune.h).
export TFC_TUNE_CACHE=none
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: verify.sh OUT [SECONDS]}"
limit="${2:-300}"
start=$(date +%s)
left() { echo $((limit - ($(date +%s) - start))); }
export PYTHONUNBUFFERED=1
mkdir -p "$out"
exec > >(tee "$out/verify.txt") 2>&1
python3 "$root/tools/gpu/unpack.py" "$root/build/gpu-carry/tfc-gpu.tar.xz" "$root/build" >/dev/null ||
  { echo "verify.sh: cannot unpack build/gpu-carry/tfc-gpu.tar.xz" >&2; exit 1; }
dir="$root/build/gpu-check"
bench="$root/build/gpu-bench/cuda"
baseline="$root/build/gpu-baseline"
if [ -f "$root/build/gpu-carry/baseline.tar.xz" ]; then
  python3 "$root/tools/gpu/unpack.py" "$root/build/gpu-carry/baseline.tar.xz" "$root/build" >/dev/null ||
    echo "verify.sh: cannot unpack build/gpu-carry/baseline.tar.xz"
fi
work="$(mktemp -d /tmp/tfc-gpu-verify.XXXXXX)"
passed=0
failed=0

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1

echo "== 1. hand-written kernels against the CPU"
timeout 120 "$dir/tfc-kernel-check" >"$work/kernels.log" 2>&1
grep -E '^FAIL' "$work/kernels.log" | head -n 20
# The wgmma probe's outcome whatever it is (which layouts a wgmma kernel can rest on).
grep -E '^(PASS|SKIP|info) wgmma' "$work/kernels.log" | head -n 30
tail -n 1 "$work/kernels.log"
passed=$((passed + $(grep -c '^PASS' "$work/kernels.log")))
failed=$((failed + $(grep -c '^FAIL' "$work/kernels.log")))
grep -q 'passed' "$work/kernels.log" || { failed=$((failed + 1)); echo "FAIL tfc-kernel-check (no summary)"; }

echo "== 2. GPU against CPU"
for model in reverse set_anomaly fleuret_cnn encoder_decoder; do
  timeout 100 python3 "$root/tools/gpu/parity.py" --work "$work/$model" --cpu "$dir/cpu/$model" \
    --cuda "$dir/cuda/$model" --oracle-dir "$dir/oracle/$model" >"$work/parity-$model.log" 2>&1
  grep -E '^(PASS|FAIL)' "$work/parity-$model.log"
  passed=$((passed + $(grep -c '^PASS' "$work/parity-$model.log")))
  failed=$((failed + $(grep -c '^FAIL' "$work/parity-$model.log")))
  grep -q -e '^PASS' -e '^FAIL' "$work/parity-$model.log" ||
    { failed=$((failed + 1)); echo "FAIL parity $model (no result)"; tail -n 3 "$work/parity-$model.log"; }
done

echo "== 3. reverse trained on the GPU"
for build in cuda cuda-bf16 cuda-bf16-all; do
  [ -x "$dir/$build/reverse" ] || continue
  begin=$(date +%s%N)
  timeout 60 "$dir/$build/reverse" train --run-dir "$work/run-$build" >"$work/train-$build.log" 2>&1
  echo "    $build: 10 epochs in $((($(date +%s%N) - begin) / 1000000)) ms (wall, with start-up)"
  if grep -q '^test.*accuracy 1\.0000' "$work/train-$build.log"; then
    passed=$((passed + 1)); echo "PASS reverse ($build) trains to 100% test accuracy"
  else
    failed=$((failed + 1)); echo "FAIL reverse ($build) trains to 100% test accuracy"
    tail -n 3 "$work/train-$build.log"
  fi
done
# Under TFC_GRAPH_DEPENDENCIES=1: reverse to 100%, twice to the same bytes.
bash "$root/tools/gpu/graph-train.sh" "$dir/cuda/reverse" "$work" | tee "$work/graph-train.txt"
passed=$((passed + $(grep -c '^PASS' "$work/graph-train.txt")))
failed=$((failed + $(grep -c '^FAIL' "$work/graph-train.txt")))
# The other four seed models in bf16 against fp32 (issue 28: the same scores).
if [ "$(left)" -gt 150 ]; then
  bash "$root/tools/gpu/precision-train.sh" "$dir" "$work" "$(($(left) - 120))" |
    tee "$work/precision-train.txt"
  passed=$((passed + $(grep -c '^PASS' "$work/precision-train.txt")))
  failed=$((failed + $(grep -c '^FAIL' "$work/precision-train.txt")))
fi
echo "$passed passed, $failed failed"

# step BINARY [ENV]: BINARY's train_step, median of 50 (and its minimum), or
# `failed`.
step() {
  local line
  line=$(env ${2:+$2} timeout 60 "$1" bench --entry train_step --steps 50 2>&1 |
    grep '^bench train_step' | cut -d' ' -f3-4)
  echo "${line:-failed}"
}

echo "== 4. train_step (median of 50): the baseline's binaries against this build's, alternately"
if [ -d "$baseline" ]; then
  for old in "$baseline"/*; do
    name=$(basename "$old")
    new="$dir/cuda/$name"
    [ -e "$new" ] || new="$bench/$name"
    [ -x "$new" ] || { echo "    $name: not in this build"; continue; }
    for round in 1 2 3; do
      [ "$(left)" -gt 100 ] || break
      echo "    $name baseline: $(step "$old")  now: $(step "$new")"
    done
  done
else
  echo "    no baseline carried"
fi
for binary in "$dir/cuda/reverse" "$dir/cuda/set_anomaly" "$dir/cuda/encoder_decoder" \
  "$bench/medium_encoder.tf32" "$bench/medium_encoder.bf16"; do
  [ -x "$binary" ] || continue
  for round in 1 2; do
    [ "$(left)" -gt 90 ] || break
    echo "    $(basename "$binary") TFC_GRAPH_DEPENDENCIES=1: $(step "$binary" TFC_GRAPH_DEPENDENCIES=1)  0: $(step "$binary" TFC_GRAPH_DEPENDENCIES=0)"
  done
done
for binary in "$dir/cuda/reverse" "$dir/cuda/set_anomaly" "$bench/medium_encoder.tf32" \
  "$bench/medium_encoder.bf16"; do
  [ -x "$binary" ] || continue
  for round in 1 2; do
    [ "$(left)" -gt 90 ] || break
    echo "    $(basename "$binary") TFC_GEMM_AUTOTUNE=1: $(step "$binary" TFC_GEMM_AUTOTUNE=1)  0: $(step "$binary" TFC_GEMM_AUTOTUNE=0)"
  done
done
if [ -x "$bench/medium_encoder.bf16-fp32-operands" ]; then
  for round in 1 2 3; do
    [ "$(left)" -gt 100 ] || break
    echo "    medium_encoder.bf16 --bf16-operands=large: $(step "$bench/medium_encoder.bf16")  none: $(step "$bench/medium_encoder.bf16-fp32-operands")  large, activation copies kept: $(step "$bench/medium_encoder.bf16-keep-copies")  large, fp32 activations beside their copies: $(step "$bench/medium_encoder.bf16-fp32-activations")  large, attention's outputs copied by nests: $(step "$bench/medium_encoder.bf16-attention-nests")  dropout gradients by nests: $(step "$bench/medium_encoder.bf16-dropout-nests")  residual sums by nests: $(step "$bench/medium_encoder.bf16-residual-nests")  products in fp32: $(step "$bench/medium_encoder.bf16-fp32-results")  QKV in fp32: $(step "$bench/medium_encoder.bf16-fp32-qkv")"
  done
fi
if [ -x "$bench/set_anomaly.residual-nests" ]; then
  for round in 1 2 3; do
    [ "$(left)" -gt 60 ] || break
    echo "    set_anomaly residual sums in the layer norms: $(step "$bench/set_anomaly")  by nests: $(step "$bench/set_anomaly.residual-nests")"
  done
fi
for binary in "$bench/medium_encoder.tf32" "$bench/medium_encoder.bf16"; do
  [ -x "$binary" ] && [ "$(left)" -gt 80 ] || continue
  for value in 1 0; do
    echo "    $(basename "$binary") TFC_ATTENTION_LEAN=$value: $(step "$binary" "TFC_ATTENTION_LEAN=$value")"
    echo "    $(basename "$binary") TFC_ATTENTION_WGMMA=$value: $(step "$binary" "TFC_ATTENTION_WGMMA=$value")"
  done
  echo "    $(basename "$binary") TFC_ATTENTION_WGMMA=1 TFC_ATTENTION_WIDE=1: $(step "$binary" "TFC_ATTENTION_WGMMA=1 TFC_ATTENTION_WIDE=1")"
done

echo "== 5. attention alone; the profiles of the medium encoder and of reverse"
[ "$(left)" -gt 40 ] && timeout 40 "$dir/tfc-kernel-check" --bench-attention 2>&1 | sed 's/^/    /'
# The medium encoder's GEMMs on each of cuBLASLt's first 8 algorithms.
[ "$(left)" -gt 40 ] && timeout 30 "$dir/tfc-kernel-check" --bench-gemm-algorithms 2>&1 |
  grep -E 'dw|step' | sed 's/^/    /'
# profile BINARY [ENV]: every operation of its train_step, timed alone.
profile() {
  echo "    $(basename "$1") ${2:-}:"
  env ${2:+"$2"} timeout 30 "$1" bench --entry train_step --steps 10 --warmup 3 --profile 2>&1 |
    grep -v '^bench model=' | head -n 60 | sed 's/^/    /'
}
[ "$(left)" -gt 20 ] && [ -x "$bench/medium_encoder.bf16" ] && profile "$bench/medium_encoder.bf16"
[ "$(left)" -gt 10 ] && profile "$dir/cuda/reverse"
[ "$(left)" -gt 10 ] && profile "$dir/cuda/reverse" TFC_SMALL_GEMM=1
(cd /tmp && find "$(basename "$work")" -type f -name '*.log' -size -1024k -print0 |
  tar -czf "$out/verify-logs.tgz" --null -T -)
[ "$failed" -eq 0 ]
