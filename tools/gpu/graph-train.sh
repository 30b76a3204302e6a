#!/usr/bin/env bash
# tools/gpu/graph-train.sh BINARY WORK: BINARY (reverse's GPU build) trained
# twice under TFC_GRAPH_DEPENDENCIES=1 (a captured step's launches and calls
# wait only for what they depend on: tf-graph-dependencies), in WORK. Prints
# a PASS or FAIL line for 100% test accuracy and for the two runs' checkpoints
# being the same bytes (a missing dependency would race); quick.sh and
# verify.sh count them.
set -uo pipefail
binary="${1:?usage: graph-train.sh BINARY WORK}"
work="${2:?usage: graph-train.sh BINARY WORK}"
for round in 1 2; do
  TFC_GRAPH_DEPENDENCIES=1 timeout 120 "$binary" train --run-dir "$work/graph-run-$round" \
    >"$work/graph-train-$round.log" 2>&1
done
grep '^test' "$work/graph-train-1.log" | tail -n 1 | sed 's/^/    graph dependencies: /'
if grep -q '^test.*accuracy 1\.0000' "$work/graph-train-1.log"; then
  echo "PASS reverse trains to 100% test accuracy (TFC_GRAPH_DEPENDENCIES=1)"
else
  echo "FAIL reverse trains to 100% test accuracy (TFC_GRAPH_DEPENDENCIES=1)"
  tail -n 5 "$work/graph-train-1.log"
fi
if cmp -s "$work/graph-run-1/last.safetensors" "$work/graph-run-2/last.safetensors"; then
  echo "PASS reverse trained twice under TFC_GRAPH_DEPENDENCIES=1: the same bytes"
else
  echo "FAIL reverse trained twice under TFC_GRAPH_DEPENDENCIES=1: the same bytes"
fi
