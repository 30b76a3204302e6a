#!/usr/bin/env bash
# tools/gpu/session.sh OUT [SECONDS]: a GPU session's checks in one call of the
# device tool, within SECONDS (default 540) of its start, everything it learns
# under OUT ($OUT there). Carry build/gpu-carry, made here by
#   tools/gpu/prepare.sh && tools/bench/gpu-prepare.sh && tools/gpu/pack.sh
# and run `bash tools/gpu/session.sh $OUT` with a timeout_s a little above
# SECONDS. In order:
#   1. the carry unpacked into build/ (tools/gpu/unpack.py);
#   2. tools/gpu/check.sh (issue 26's checks and more: about 4 minutes on an
#      H200), its output in OUT/check.txt, its logs in OUT/check-logs.tgz;
#   3. tools/bench/gpu.sh with what is left (less 30 s), its table in
#      OUT/bench/ and its output in OUT/bench.txt.
# Prints the check's summary and the bench's table last.
set -uo pipefail
# The runtime's defaults, not a choice `tune` kept on this machine (runtime/Tune.h).
export TFC_TUNE_CACHE=none
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: session.sh OUT [SECONDS]}"
limit="${2:-540}"
start=$(date +%s)
left() { echo $((limit - ($(date +%s) - start))); }
export PYTHONUNBUFFERED=1
mkdir -p "$out"
python3 "$root/tools/gpu/unpack.py" "$root/build/gpu-carry/tfc-gpu.tar.xz" "$root/build" >/dev/null ||
  { echo "session.sh: cannot unpack build/gpu-carry/tfc-gpu.tar.xz" >&2; exit 1; }
# The check is sized to 8 minutes at most; it gets what is left but 60 s,
# in a session of its own, all of which goes at the limit (its `timeout`s
# give their commands process groups of their own: a group's kill misses
# them, and they would go on running and holding their files).
setsid bash "$root/tools/gpu/check.sh" "$root/build/gpu-check" >"$out/check.txt" 2>&1 &
check=$!
(sleep $(($(left) - 60)) && echo "session.sh: check.sh stopped at its limit" >>"$out/check.txt" &&
  pkill -TERM -s "$check") &
watch=$!
wait "$check"
status=$?
kill "$watch" 2>/dev/null
pkill -KILL -s "$check" # anything it left behind
echo "check.sh exit $status after $(($(date +%s) - start)) s" >>"$out/check.txt"
# Its logs (parity's feeds are made again from its seed here; results of
# every model would not fit what the device tool brings back).
# (find's -size rounds up to its unit: -1024k is under a MiB, -1M empty.)
work=$(ls -td /tmp/tfc-gpu-check.* 2>/dev/null | head -n 1)
[ -n "$work" ] && (cd /tmp && find "$(basename "$work")" -type f \( -name '*.log' -o -name '*.jsonl' \) \
  -size -1024k -print0 | tar -czf "$out/check-logs.tgz" --null -T -)
budget=$(($(left) - 30))
if [ "$budget" -gt 60 ]; then
  "$root/tools/bench/gpu.sh" --out "$out/bench" --budget "$budget" >"$out/bench.txt" 2>&1
  echo "gpu.sh exit $? with a budget of $budget s" >>"$out/bench.txt"
else
  echo "no time left for tools/bench/gpu.sh ($budget s)" >"$out/bench.txt"
fi
grep -E '^(==|FAIL|[0-9]+ passed|check.sh exit)' "$out/check.txt"
grep -E '^\| |gpu.sh exit|no time left' "$out/bench.txt" | head -n 14
