#!/usr/bin/env bash
# A GPU script as tools/gpu/dry-run.sh expects one (OUT [SECONDS]) with
# nothing wrong: its FAIL lines mean nothing on the fakes. GpuScriptDryRun.
set -uo pipefail
out="${1:?usage: good.sh OUT [SECONDS]}"
mkdir -p "$out"
exec > >(tee "$out/good.txt") 2>&1
echo "== 1. a section"
[ -x /bin/sh ] && echo "    /bin/sh: median_ms=0.02 min_ms=0.02"
echo "FAIL a check (no kernel runs on the fakes)"
echo "== 2. another"
exit 1
