#!/usr/bin/env bash
# tools/gpu/dry-run.sh SCRIPT [SECONDS]: a GPU script (tools/gpu/quick.sh,
# verify.sh, session.sh) run here, on the fake CUDA driver, cuBLASLt and
# NCCL, to find before a device call what would waste it: a command that
# does not start, a flag a binary refuses, a binary the carry lacks, a
# launch a GPU would refuse, a section that never prints, a timing line
# without a time. No kernel runs
# and no product is computed (TFC_FAKE_CUBLASLT_NO_PRODUCTS), so the
# script's PASS and FAIL lines mean nothing here and are not counted.
# SECONDS (default 3000) is the script's own budget: enough that every
# section its time gates would skip runs.
#
# Needs the carry (tools/gpu/prepare.sh && tools/bench/gpu-prepare.sh &&
# tools/gpu/pack.sh; without it the script's own `cannot unpack` is the
# problem) and the fakes (ninja -C build tfc_fake_cuda tfc_fake_cublaslt;
# $TFC_BUILD_DIR for another build directory than build). Writes the
# script's output to build/gpu-dry-run/SCRIPT.txt; prints each problem,
# then `dry run of SCRIPT: N problems`, and exits 1 if there is one. About
# 4 minutes for quick.sh or verify.sh on 2 cores.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
script="${1:?usage: dry-run.sh quick.sh|verify.sh [SECONDS]}"
limit="${2:-3000}"
[ -f "$script" ] || script="$root/tools/gpu/$script"
[ -f "$script" ] || { echo "dry-run.sh: no script $1" >&2; exit 2; }
name="$(basename "$script" .sh)"
build="${TFC_BUILD_DIR:-$root/build}" # where the fakes are, and the dry run goes
for fake in libtfc_fake_cuda.so libtfc_fake_cublaslt.so; do
  [ -f "$build/tests/lib/$fake" ] ||
    { echo "dry-run.sh: $build/tests/lib/$fake is missing (ninja -C build tfc_fake_cuda tfc_fake_cublaslt)" >&2; exit 2; }
done
[ -f "$root/build/gpu-carry/tfc-gpu.tar.xz" ] ||
  echo "dry-run.sh: no carry (tools/gpu/prepare.sh && tools/bench/gpu-prepare.sh && tools/gpu/pack.sh)"

dry="$build/gpu-dry-run"
rm -rf "$dry/$name" "$dry/$name".*
mkdir -p "$dry/$name/bin"
# nvidia-smi answers as a GPU machine's would; the rest is the fakes'.
printf '#!/bin/sh\necho "fake GPU (tools/gpu/dry-run.sh), 0.0, 0 MiB"\n' >"$dry/$name/bin/nvidia-smi"
chmod +x "$dry/$name/bin/nvidia-smi"
export PATH="$dry/$name/bin:$PATH"
export TFC_CUDA_DRIVER="$build/tests/lib/libtfc_fake_cuda.so"
export TFC_CUBLASLT="$build/tests/lib/libtfc_fake_cublaslt.so"
export TFC_FAKE_CUBLASLT_NO_PRODUCTS=1
# NCCL too (check.sh's data-parallel checks: the real one fails on the fake
# driver), where the fake is built.
[ -f "$build/tests/lib/libtfc_fake_nccl.so" ] && export TFC_NCCL_LIBRARY="$build/tests/lib/libtfc_fake_nccl.so"
export TFC_FAKE_CUDA_LOG="$dry/$name/fake-cuda.log"

# The script traced (bash -x) to a file of its own: each `[ -x PATH ]` it
# tests shows PATH, which the carry must hold.
# Through a pipe: cat ends when every writer has, the tee a script's
# `exec > >(tee ...)` leaves running after it exits included.
BASH_XTRACEFD=7 timeout $((limit + 600)) bash -x "$script" "$dry/$name/out" "$limit" \
  2>&1 7>"$dry/$name/trace.txt" | cat >"$dry/$name.txt"
echo "dry-run.sh: $script ran (exit ${PIPESTATUS[0]}); its output: $dry/$name.txt"

problems=0
problem() { problems=$((problems + 1)); echo "PROBLEM $*"; }

# Every section the script announces is printed.
while IFS= read -r header; do
  grep -qxF -- "$header" "$dry/$name.txt" || problem "section never printed: $header"
done < <(sed -n 's/^echo "\(== [^"$]*\)"$/\1/p' "$script")

# Lines that say a command, a flag or a file is wrong, in the order they
# came, in the output, in what it wrote under OUT and in the logs it keeps
# (OUT/*-logs.tgz).
pattern='command not found|unbound variable|syntax error|No such file or directory|Permission denied|cannot unpack|Traceback \(most recent call last\)|[Uu]sage: |unknown (option|flag|command|entry)|unrecognized|invalid option|\(no result\)|\(no summary\)|\(no ([a-z0-9-]+ )?build\)|: failed( |$)|CUDA_ERROR_|CUBLAS_STATUS_'
mkdir -p "$dry/$name/logs"
for logs in "$dry/$name/out"/*-logs.tgz; do
  [ -f "$logs" ] && tar -xzf "$logs" -C "$dry/$name/logs"
done
while IFS= read -r line; do
  problem "$line"
done < <(cd "$dry/$name" && grep -rE --include='*.txt' --include='*.log' -- "$pattern" \
  "../$name.txt" out logs | sed 's|^\.\./||' | awk '!seen[substr($0, index($0, ":") + 1)]++')

# Launches and calls the fake refused as a GPU would.
[ -f "$TFC_FAKE_CUDA_LOG" ] && while IFS= read -r line; do
  problem "refused by the fake driver: $line"
done < <(grep -E 'INVALID' "$TFC_FAKE_CUDA_LOG" | awk '!seen[$0]++' | head -n 20)

# Binaries the script looked for and the carry lacks.
while IFS= read -r path; do
  [ -x "$path" ] || problem "not in the carry: ${path#"$root/"}"
done < <(sed -n "s/^+* '\[' -x \(.*\) '\]'$/\1/p" "$dry/$name/trace.txt" | sort -u)

echo "dry run of $(basename "$script"): $problems problems"
[ "$problems" -eq 0 ]
