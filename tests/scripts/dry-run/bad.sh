#!/usr/bin/env bash
# A GPU script with four mistakes that tools/gpu/dry-run.sh must each name:
# a binary the carry lacks, a timing that failed, a command that does not
# exist, and so a section never printed (set -e stops it). GpuScriptDryRun.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
out="${1:?usage: bad.sh OUT [SECONDS]}"
mkdir -p "$out"
echo "== 1. a section"
[ -x "$root/build/gpu-check/cuda-nothere/reverse" ] || echo "    skipped"
echo "    reverse TFC_SOMETHING=1: failed"
tfc-no-such-command --steps 50
echo "== 2. never printed"
