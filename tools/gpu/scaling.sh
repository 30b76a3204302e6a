#!/usr/bin/env bash
# tools/gpu/scaling.sh [DIR] [SECONDS] [CORES]: issue 27's scaling table on
# the machine it runs on (made for the GPU machines' 16 cores; their GPU is
# not used): steps per second of `train` for set_anomaly (global batch 64)
# and fleuret_attention (128), one process on 1, 2, 4 and 8 threads against
# 2, 4 and 8 ranks of a share of the batch on 1 thread each (`mpirun`: the
# same global batch, so the same steps). DIR (default build/gpu-check) holds
# what tools/gpu/prepare.sh built: scaling/MODEL-RANKS and mpi/ (Open MPI,
# tools/gpu/mpi-bundle.sh; the system's mpirun when absent). Each run is
# stopped by SIGINT after SECONDS (default 25); its rate is the steps between
# its last two progress lines over their time (the lines say steps and the
# rate since the start), start-up excluded; a run with one line gives that
# line's rate, start-up included, marked *. Counts above CORES (default
# nproc) are skipped. Prints a markdown table. 14 runs: about 6 minutes at
# the default, a device call of its own.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${1:-$root/build/gpu-check}"
seconds="${2:-25}"
cores="${3:-$(nproc)}"
work="$(mktemp -d /tmp/tfc-scaling.XXXXXX)"
[ -f "$dir/mpi/env.sh" ] && . "$dir/mpi/env.sh"
mpirun=$(command -v mpirun || true)

# rate LOG: the steady rate of a run's progress lines ("step S/N ... R steps/s").
rate() {
  tr '\r' '\n' <"$1" | awk '
    match($0, /step [0-9]+\//) { s = substr($0, RSTART + 5, RLENGTH - 6) + 0 }
    match($0, /[0-9.]+ steps\/s/) { r = substr($0, RSTART, RLENGTH - 8) + 0
      if (r > 0) { n++; s1 = s0; t1 = t0; s0 = s; t0 = s / r } }
    END { if (n >= 2 && t0 > t1) printf "%.1f", (s0 - s1) / (t0 - t1)
          else if (n == 1) printf "%.1f*", s0 / t0
          else printf "-" }'
}
# run LABEL COMMAND...: the command stopped by SIGINT after $seconds.
run() {
  local label="$1"
  shift
  rm -rf "$work/run-$label"
  timeout -s INT "$seconds" "$@" --run-dir "$work/run-$label" >"$work/$label.log" 2>&1
  rate "$work/$label.log"
}

echo "| model | global batch | $(for t in 1 2 4 8; do [ "$t" -le "$cores" ] && printf '1 process, %s threads | ' "$t"; done)$(for n in 2 4 8; do [ "$n" -le "$cores" ] && printf '%s ranks x 1 thread | ' "$n"; done)"
echo "|---|---|$(for t in 1 2 4 8; do [ "$t" -le "$cores" ] && printf -- '---|'; done)$(for n in 2 4 8; do [ "$n" -le "$cores" ] && printf -- '---|'; done)"
for pair in set_anomaly:64 fleuret_attention:128; do
  model=${pair%%:*} global=${pair##*:}
  [ -x "$dir/scaling/$model-1" ] || { echo "| $model | no $dir/scaling/$model-1: run tools/gpu/prepare.sh |"; continue; }
  line="| $model | $global |"
  for threads in 1 2 4 8; do
    [ "$threads" -le "$cores" ] || continue
    line+=" $(run "$model-t$threads" "$dir/scaling/$model-1" train --threads "$threads") |"
  done
  for ranks in 2 4 8; do
    [ "$ranks" -le "$cores" ] || continue
    if [ -z "$mpirun" ]; then line+=" no mpirun |"; continue; fi
    line+=" $(run "$model-r$ranks" "$mpirun" --allow-run-as-root --oversubscribe -np "$ranks" \
      "$dir/scaling/$model-$ranks" train --threads 1) |"
  done
  echo "$line"
done
echo
echo "$(lscpu | grep -m1 'Model name' | sed 's/  */ /g'), $(nproc) cores; ${seconds} s a run; logs in $work"
