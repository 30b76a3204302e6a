#!/usr/bin/env bash
# tools/bench/gpu.sh [--out DIR] [--dir DIR] [--workloads a,b] [--budget S] [--no-epochs]
#                    [--precision tf32|fp32] [--steps N] [--warmup N] [--python PY] [--tune] [--dry-run-cpu]
#
# Issue 28's `tools/bench --gpu` (tools/bench/run.sh --gpu comes here): on the GPU
# machine, tfc against PyTorch eager, torch.compile (without and with CUDA graphs)
# and JAX jit on the same GPU, in one run within 10 minutes, building nothing:
# the models from tools/bench/gpu-prepare.sh (DIR, default build/gpu-bench), the
# peers tools/bench/peers.py under the machine's python3 ($TFC_BENCH_PYTHON or
# --python for another). Prints one table: each side's median train step
# (reverse, set_anomaly, medium_encoder, then the other seed models as time
# allows) and reverse's 10 epochs, the ratio best peer / tfc, each side's peak
# GPU memory and the GPU's name; writes OUT/table.md, results.json and logs.txt
# (OUT default DIR/results). A missing peer is a note in its cell. tfc runs its
# default runtime settings; --tune first tunes each build (MODEL tune) and times it
# with the choice.
#
# --dry-run-cpu: the same pipeline on this CPU (gpu-prepare.sh --dry-run-cpu's
# binaries, the peers on the CPU from build/bench-venv when there, tiny step counts).
set -uo pipefail
# The runtime's defaults, not a choice `tune` kept on this machine (runtime/Tune.h).
export TFC_TUNE_CACHE=none
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
case " $* " in
  *" -h "* | *" --help "*)
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
    exec python3 "$root/tools/bench/gpu_bench.py" --help ;;
esac
exec python3 "$root/tools/bench/gpu_bench.py" "$@"
