#!/usr/bin/env bash
# tools/gpu/quick.sh OUT [SECONDS]: the GPU checks and timings of a change to
# the hand-written kernels or the GEMMs, in one device call of SECONDS
# (default 330), when check.sh (about 4 minutes) and gpu.sh will not both fit.
# Carry build/gpu-carry as for session.sh. In order:
#   1. tfc-kernel-check: every hand-written kernel against the CPU, on the GPU,
#      and the wgmma probe (its lines shown whatever they say);
#   1b. attention's kernels alone (--bench-attention: every family, wgmma's
#      on sm_90a), early: what decides wgmma, before the rest can use up the call;
#   2. parity.py (GPU against CPU, twice the same bytes, float64 deciding a
#      ReLU flip) for reverse, set_anomaly, fleuret_cnn and encoder_decoder;
#      reverse and set_anomaly again with bias gradients by column sums
#      (TFC_BGRAD_COLUMNS=1) and with small GEMMs (TFC_SMALL_GEMM=1);
#      set_anomaly with 4 elements a generated
#      kernel's thread against one (--no-thread-coarsening): the same bytes;
#      reverse and set_anomaly with programmatic dependent launches
#      (TFC_DEPENDENT_LAUNCH=1) against without: the same bytes; reverse,
#      set_anomaly and fleuret_cnn with small launches as tails (the
#      default) against on their own (--no-launch-tails): the same bytes;
#   3. reverse trained to 100% test accuracy (its file's settings), in fp32
#      and in bf16 (attention on tensor cores), also with every GEMM on bf16
#      copies of its operands (--bf16-operands=all); under
#      TFC_GRAPH_DEPENDENCIES=1 too, twice to the same checkpoint bytes; the
#      other seed models in bf16 against fp32: the same scores, set_anomaly
#      and encoder_decoder with every GEMM on bf16 copies too
#      (precision-train.sh, when 150 s are left);
#   4h (first). bench of reverse, set_anomaly, encoder_decoder and the
#      medium encoder (tf32, bf16) with TFC_GRAPH_DEPENDENCIES=1 and 0, twice;
#   4t. of reverse, set_anomaly and the medium encoder (tf32, bf16) with
#      GEMM autotuning (TFC_GEMM_AUTOTUNE=1) and without, twice;
#   4u. `tune` of reverse and set_anomaly (fp32, bf16), encoder_decoder and
#      the medium encoder (tf32, bf16): every runtime switch (TFC_SMALL_GEMM,
#      TFC_BGRAD_COLUMNS, TFC_LAYER_NORM_ONE_LAUNCH, the attention ones,
#      TFC_DEPENDENT_LAUNCH, ...) tried from the defaults, its choice against
#      them (OUT/tuned-settings.txt); the rest of the script runs the
#      defaults (TFC_TUNE_CACHE=none);
#   4. bench of the medium encoder's train_step with 4 elements a generated
#      kernel's thread and with one (--no-thread-coarsening); of reverse,
#      set_anomaly and fleuret_cnn with tails and without; of the medium
#      encoder (tf32, bf16) and set_anomaly with attention on wgmma
#      (TFC_ATTENTION_WGMMA, and with it TFC_ATTENTION_WIDE); and the medium
#      encoder's bf16 step with
#      bf16 copies of its GEMMs' operands (the default), without, with
#      the forward's activation copies kept (--bf16-keep-activation-copies),
#      with fp32 activations beside their copies (--no-bf16-activations),
#      and the other variants gpu-prepare.sh builds (attention's outputs,
#      dropout gradients and residual sums by loop nests, every product
#      stored in fp32: --no-bf16-gemm-results);
#   5. bench --profile of reverse and of the medium encoder (tf32, bf16),
#      the medium encoder's GEMMs alone, fp32 data against bf16 storage (--bench-gemm),
#      and on each of the heuristic's first 8 algorithms (--bench-gemm-algorithms),
#      and the layer norm backward by rows a block (--bench-layer-norm);
#      5b: where ncu reads the counters, the tensor-core attention kernels'
#      and the medium encoder's layer norm backward's stalls (OUT/ncu-*.txt);
#   6. tools/bench/gpu.sh for reverse, set_anomaly and the medium encoder with
#      what is left, into OUT/bench.
# Prints `N passed, N failed` of 1-3 before the timings; everything it
# prints is also in OUT/quick.txt, written as it goes.
# Before the device call, `tools/gpu/dry-run.sh quick.sh` runs this here on the
# fakes and names what would waste the call (a flag refused, a binary missing).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: quick.sh OUT [SECONDS]}"
limit="${2:-330}"
start=$(date +%s)
left() { echo $((limit - ($(date +%s) - start))); }
export PYTHONUNBUFFERED=1
# The defaults, not a choice `tune` kept on this machine before (4u keeps its own).
export TFC_TUNE_CACHE=none
mkdir -p "$out"
# Everything printed also goes to OUT/quick.txt as it is printed, so that a
# device call cut off at its limit still brings back what ran.
exec > >(tee "$out/quick.txt") 2>&1
python3 "$root/tools/gpu/unpack.py" "$root/build/gpu-carry/tfc-gpu.tar.xz" "$root/build" >/dev/null ||
  { echo "quick.sh: cannot unpack build/gpu-carry/tfc-gpu.tar.xz" >&2; exit 1; }
dir="$root/build/gpu-check"
bench="$root/build/gpu-bench/cuda"
work="$(mktemp -d /tmp/tfc-gpu-quick.XXXXXX)"
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

echo "== 1b. attention alone (tfc-kernel-check --bench-attention)"
timeout 60 "$dir/tfc-kernel-check" --bench-attention 2>&1 | sed 's/^/    /'

# parity LABEL ENV PARITY_ARGS...: parity.py under ENV (VAR=VALUE, or -),
# its log shown and counted.
parity() {
  local label="$1" settings=()
  [ "$2" = - ] || settings=("$2")
  shift 2
  env "${settings[@]}" timeout 200 python3 "$root/tools/gpu/parity.py" --work "$work/$label" "$@" \
    >"$work/parity-$label.log" 2>&1
  grep -v '^       ' "$work/parity-$label.log"
  passed=$((passed + $(grep -c '^PASS' "$work/parity-$label.log")))
  failed=$((failed + $(grep -c '^FAIL' "$work/parity-$label.log")))
  grep -q -e '^PASS' -e '^FAIL' "$work/parity-$label.log" ||
    { failed=$((failed + 1)); echo "FAIL parity $label (no result)"; tail -n 3 "$work/parity-$label.log"; }
}

echo "== 2. GPU against CPU"
for model in reverse set_anomaly fleuret_cnn encoder_decoder; do
  parity "$model" - --cpu "$dir/cpu/$model" --cuda "$dir/cuda/$model" --repeat \
    --oracle-dir "$dir/oracle/$model"
done
for model in reverse set_anomaly; do
  parity "$model.columns" TFC_BGRAD_COLUMNS=1 --cpu "$dir/cpu/$model" --cuda "$dir/cuda/$model" \
    --oracle-dir "$dir/oracle/$model"
done
# Small GEMMs in one launch each (their last block adds the partials:
# concurrent blocks, a ticket, fences) against the CPU.
for model in reverse set_anomaly encoder_decoder; do
  parity "$model.small" TFC_SMALL_GEMM=1 --cpu "$dir/cpu/$model" --cuda "$dir/cuda/$model" \
    --oracle-dir "$dir/oracle/$model"
done
[ -x "$dir/cuda-one/set_anomaly" ] &&
  parity set_anomaly.one - --cpu "$dir/cuda-one/set_anomaly" --cuda "$dir/cuda/set_anomaly" --exact
# Small launches as tails (the last block to finish runs them: concurrent
# blocks, a ticket, fences) against on their own: the same bytes.
for model in reverse set_anomaly fleuret_cnn; do
  [ -x "$dir/cuda-no-tails/$model" ] &&
    parity "$model.tails" - --cpu "$dir/cuda-no-tails/$model" --cuda "$dir/cuda/$model" --exact
done
# Programmatic dependent launches (every kernel of a fatbin on sm_90)
# against the same binary without: the same bytes.
for model in reverse set_anomaly; do
  parity "$model.dependent" - --cpu "$dir/cuda/$model" --cuda "$dir/cuda/$model" --exact \
    --cuda-env TFC_DEPENDENT_LAUNCH=1
done

echo "== 3. reverse trained on the GPU"
begin=$(date +%s%N)
timeout 120 "$dir/cuda/reverse" train --run-dir "$work/reverse-run" \
  >"$work/train.log" 2>&1
echo "    10 epochs in $((($(date +%s%N) - begin) / 1000000)) ms (wall, with start-up and evaluation)"
grep '^test' "$work/train.log" | sed 's/^/    /'
if grep -q '^test.*accuracy 1\.0000' "$work/train.log"; then
  passed=$((passed + 1)); echo "PASS reverse trains to 100% test accuracy"
else
  failed=$((failed + 1)); echo "FAIL reverse trains to 100% test accuracy"; tail -n 5 "$work/train.log"
fi
# In bf16: attention on tensor cores, its dq from the dS dkv stored; and
# with every GEMM on bf16 copies of its operands (--bf16-operands=all).
for build in cuda-bf16 cuda-bf16-all; do
  [ -x "$dir/$build/reverse" ] || continue
  timeout 120 "$dir/$build/reverse" train --run-dir "$work/reverse-$build-run" \
    >"$work/train-$build.log" 2>&1
  grep '^test' "$work/train-$build.log" | tail -n 1 | sed "s/^/    $build: /"
  if grep -q '^test.*accuracy 1\.0000' "$work/train-$build.log"; then
    passed=$((passed + 1)); echo "PASS reverse trains to 100% test accuracy ($build)"
  else
    failed=$((failed + 1)); echo "FAIL reverse trains to 100% test accuracy ($build)"
    tail -n 5 "$work/train-$build.log"
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

# ab VAR BINARY...: each BINARY's train_step (median of 50) with VAR=1, then 0.
ab() {
  local var="$1" binary value line
  shift
  for binary in "$@"; do
    [ -x "$binary" ] || continue
    for value in 1 0; do
      line=$(env "$var=$value" timeout 60 "$binary" bench --entry train_step --steps 50 2>&1 |
        grep '^bench train_step' | cut -d' ' -f3-4)
      echo "    $(basename "$binary") $var=$value: ${line:-failed}"
    done
  done
}

echo "== 4h. train_step (median of 50): independent launches and calls at once (graph dependencies) against a chain, twice"
for round in 1 2; do
  ab TFC_GRAPH_DEPENDENCIES "$dir/cuda/reverse" "$dir/cuda/set_anomaly" "$dir/cuda/encoder_decoder" \
    "$bench/medium_encoder.tf32" "$bench/medium_encoder.bf16"
done

echo "== 4t. train_step (median of 50): each GEMM on the fastest of cuBLASLt's first 8 algorithms (TFC_GEMM_AUTOTUNE) against the heuristic's first, twice"
for round in 1 2; do
  ab TFC_GEMM_AUTOTUNE "$dir/cuda/reverse" "$dir/cuda/set_anomaly" "$bench/medium_encoder.tf32" \
    "$bench/medium_encoder.bf16"
done

echo "== 4u. tune: each runtime setting tried from the defaults (median of 30 a try), the faster kept twice over, the choice against the defaults"
for binary in "$dir/cuda/reverse" "$bench/reverse.bf16" "$dir/cuda/set_anomaly" \
  "$bench/set_anomaly.bf16" "$dir/cuda/encoder_decoder" "$bench/medium_encoder.tf32" \
  "$bench/medium_encoder.bf16"; do
  [ -x "$binary" ] || continue
  echo "    $(basename "$binary"):"
  TFC_TUNE_CACHE="$work/tuned-settings.txt" timeout 90 "$binary" tune 2>&1 | sed 's/^/      /'
done
cp "$work/tuned-settings.txt" "$out/" 2>/dev/null

echo "== 4b. train_step (median of 20): 4 elements a generated kernel's thread against one"
for binary in "$bench/medium_encoder.tf32" "$dir/cuda-one/medium_encoder.tf32"; do
  [ -x "$binary" ] || continue
  line=$(timeout 60 "$binary" bench --entry train_step --steps 20 2>&1 | grep '^bench train_step' |
    cut -d' ' -f3-4)
  echo "    $(basename "$(dirname "$binary")")/$(basename "$binary"): ${line:-failed}"
done

echo "== 4e. train_step (median of 50): small launches as tails against on their own"
for model in reverse set_anomaly fleuret_cnn; do
  for binary in "$dir/cuda/$model" "$dir/cuda-no-tails/$model"; do
    [ -x "$binary" ] || continue
    line=$(timeout 60 "$binary" bench --entry train_step --steps 50 2>&1 | grep '^bench train_step' |
      cut -d' ' -f3-4)
    echo "    $(basename "$(dirname "$binary")")/$model: ${line:-failed}"
  done
done

echo "== 4f. train_step (median of 50): attention on wgmma against mma.sync (tune tries it from the defaults; here alone too), and with it its wide kernels"
ab TFC_ATTENTION_WGMMA "$bench/medium_encoder.bf16" "$bench/medium_encoder.tf32" "$dir/cuda/set_anomaly"
(export TFC_ATTENTION_WGMMA=1 # and with it, its wide forward, dq and dkv against the default
 ab TFC_ATTENTION_WIDE "$bench/medium_encoder.bf16" "$bench/medium_encoder.tf32")

echo "== 4g. train_step (median of 50): the medium encoder's bf16 step with bf16 copies of the GEMMs' operands, without, with the forward's activation copies kept, with fp32 activations beside their copies, with attention's outputs copied by loop nests, with the dropout gradients drawn by loop nests after the layer norm backwards, with the residual sums in loop nests before the layer norms, with every product stored in fp32, and with the QKV projections stored in fp32 (attention reading f32 q, k, v; set_anomaly fp32 too)"
for binary in "$bench/medium_encoder.bf16" "$bench/medium_encoder.bf16-fp32-operands" \
  "$bench/medium_encoder.bf16-keep-copies" "$bench/medium_encoder.bf16-fp32-activations" \
  "$bench/medium_encoder.bf16-attention-nests" "$bench/medium_encoder.bf16-dropout-nests" \
  "$bench/medium_encoder.bf16-residual-nests" "$bench/medium_encoder.bf16-fp32-results" \
  "$bench/medium_encoder.bf16-fp32-qkv" "$bench/set_anomaly" "$bench/set_anomaly.residual-nests" \
  "$bench/medium_encoder.bf16" "$bench/medium_encoder.bf16-fp32-operands" \
  "$bench/medium_encoder.bf16-keep-copies" "$bench/medium_encoder.bf16-fp32-activations" \
  "$bench/medium_encoder.bf16-attention-nests" "$bench/medium_encoder.bf16-dropout-nests" \
  "$bench/medium_encoder.bf16-residual-nests" "$bench/medium_encoder.bf16-fp32-results" \
  "$bench/medium_encoder.bf16-fp32-qkv" "$bench/set_anomaly" "$bench/set_anomaly.residual-nests"; do
  [ -x "$binary" ] || continue
  line=$(timeout 60 "$binary" bench --entry train_step --steps 50 2>&1 | grep '^bench train_step' |
    cut -d' ' -f3-4)
  echo "    $(basename "$binary"): ${line:-failed}"
done

echo "== 5. bench --profile"
for binary in "$dir/cuda/reverse" "$bench/medium_encoder.tf32" "$bench/medium_encoder.bf16"; do
  [ -x "$binary" ] || continue
  echo "    $(basename "$binary"):"
  timeout 90 "$binary" bench --entry train_step --steps 10 --warmup 3 --profile 2>&1 |
    grep -v '^bench model=' | head -n 30 | sed 's/^/    /'
done
# The medium encoder's GEMMs alone: fp32 data (today) against bf16 storage.
timeout 60 "$dir/tfc-kernel-check" --bench-gemm 2>&1 | sed 's/^/    /'
# Each of them on the first 8 algorithms cuBLASLt's heuristic offers (the
# runtime takes the first): whether choosing (split-K for the weight
# gradients' few tiles) would pay.
timeout 60 "$dir/tfc-kernel-check" --bench-gemm-algorithms 2>&1 | sed 's/^/    /'
# The layer norm backward alone, 8 to 64 rows a block, one launch and two.
timeout 30 "$dir/tfc-kernel-check" --bench-layer-norm 2>&1 | sed 's/^/    /'

echo "== 5b. ncu: what the attention kernels and the layer norm backward wait on"
# Nsight Compute reads the counters on the Firecracker machines (KINDS.md);
# the clocks stay as they are. The tensor-core kernels of --bench-attention
# (forward, dq, dkv: their first launches), then the medium encoder's first
# layer norm backward; the full reports go to OUT/ncu-*.txt.
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)
if [ -n "$ncu" ] && [ "$(left)" -gt 150 ]; then
  sections=(--section SpeedOfLight --section Occupancy --section LaunchStats
    --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis)
  timeout 60 "$ncu" --clock-control none -k regex:attention_tc --launch-count 3 "${sections[@]}" \
    "$dir/tfc-kernel-check" --bench-attention >"$out/ncu-attention.txt" 2>&1
  [ -x "$bench/medium_encoder.tf32" ] &&
    timeout 45 "$ncu" --clock-control none -k regex:layer_norm_backward --launch-count 1 \
      "${sections[@]}" "$bench/medium_encoder.tf32" bench --entry train_step --steps 1 --warmup 0 \
      >"$out/ncu-layer-norm.txt" 2>&1
  grep -hE '^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued' \
    "$out"/ncu-*.txt | head -n 40 | sed 's/^/    /'
else
  echo "    no ncu, or no time left"
fi

echo "== 6. tools/bench/gpu.sh"
budget=$(($(left) - 20))
if [ "$budget" -gt 60 ]; then
  "$root/tools/bench/gpu.sh" --out "$out/bench" --budget "$budget" \
    --workloads reverse,set_anomaly,medium_encoder >"$out/bench.txt" 2>&1
  grep -E '^\| ' "$out/bench.txt" | head -n 5
else
  echo "    no time left ($budget s)"
fi
(cd /tmp && find "$(basename "$work")" -type f -name '*.log' -size -1024k -print0 |
  tar -czf "$out/quick-logs.tgz" --null -T -)
[ "$failed" -eq 0 ]
