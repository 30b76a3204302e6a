#!/usr/bin/env bash
# tools/gpu/check.sh [DIR]: every GPU check of the CUDA backend (issue 26), on
# a GPU machine, with what tools/gpu/prepare.sh built on a CPU machine in DIR
# (default build/gpu-check): the GPU machines have no LLVM and no MLIR.
#   1. the driver: a round trip through device 0 (CudaDriverTest, Real);
#   2. the hand-written kernels against the CPU's (tfc-kernel-check);
#   3. each seed model's GPU binary against its CPU twin on the same
#      parameters and feeds: predict within 1e-5, one train_step's results
#      (parameters, moments, loss) within 1e-4, evaluate; train_step twice on
#      the GPU gives the same bytes (tools/gpu/parity.py);
#   4. the reverse task trained on the GPU to 100% test accuracy (its
#      file's settings), and twice with one seed: the same checkpoint bytes;
#   5. `bench` of every model's train_step, GPU and CPU (this machine's
#      cores) in the same run.
# Prints `N passed, N failed` last; exits 1 if any check failed. Sized to
# run within 8 minutes.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${1:-$root/build/gpu-check}"
work="$(mktemp -d /tmp/tfc-gpu-check.XXXXXX)"
passed=0
failed=0
models="reverse set_anomaly fleuret_cnn fleuret_attention encoder_decoder"

pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
# check NAME COMMAND...: runs COMMAND, its output in $work/NAME.log.
check() {
  local name="$1"
  shift
  if "$@" >"$work/$name.log" 2>&1; then pass "$name"; else
    fail "$name (exit $?)"
    tail -n 15 "$work/$name.log" | sed 's/^/    /'
  fi
}

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
lscpu | grep -m1 'Model name' || true
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
ldconfig -p | grep -E 'libcuda.so.1|libcublasLt.so' | head -4

echo "== 1. driver"
check driver "$dir/CudaDriverTest" --gtest_filter='*Real*'

echo "== 2. hand-written kernels"
check kernels "$dir/tfc-kernel-check"
sed -n '$p' "$work/kernels.log"

echo "== 3. GPU against CPU"
for model in $models; do
  python3 "$root/tools/gpu/parity.py" --cpu "$dir/cpu/$model" --cuda "$dir/cuda/$model" \
    --work "$work/$model" --repeat >"$work/parity-$model.log" 2>&1
  cat "$work/parity-$model.log"
  passed=$((passed + $(grep -c '^PASS' "$work/parity-$model.log")))
  failed=$((failed + $(grep -c '^FAIL' "$work/parity-$model.log")))
  grep -q -e '^PASS' -e '^FAIL' "$work/parity-$model.log" || fail "parity $model (no result)"
done

echo "== 4. reverse trained on the GPU"
start=$(date +%s%N)
if timeout 240 "$dir/cuda/reverse" train --run-dir "$work/reverse-run" >"$work/train.log" 2>&1; then
  ms=$((($(date +%s%N) - start) / 1000000))
  grep -E '^epoch [0-9]+/[0-9]+ +train:' "$work/train.log" | tail -n 3
  grep '^test' "$work/train.log"
  echo "    reverse: 10 epochs on the GPU in ${ms} ms (wall, with start-up and evaluation)"
  if grep -q '^test.*accuracy 1\.0000' "$work/train.log"; then pass "reverse trains to 100% test accuracy"
  else fail "reverse trains to 100% test accuracy"; fi
else
  fail "reverse training (exit $?)"
  tail -n 15 "$work/train.log" | sed 's/^/    /'
fi
for run in a b; do
  timeout 120 "$dir/cuda/reverse" train --epochs 1 --seed 3 --run-dir "$work/same-$run" \
    >"$work/same-$run.log" 2>&1
done
if cmp -s "$work/same-a/last.safetensors" "$work/same-b/last.safetensors"; then
  pass "same seed, same GPU: the same checkpoint bytes"
else
  fail "same seed, same GPU: the same checkpoint bytes"
fi

echo "== 5. bench (train_step; GPU, then CPU on $(nproc) cores)"
for model in $models; do
  for side in cuda cpu; do
    line=$(timeout 60 "$dir/$side/$model" bench --entry train_step 2>&1 | grep '^bench' | head -1)
    echo "    $model $side: ${line:-failed}"
  done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
