#!/usr/bin/env bash
# tools/gpu/prepare.sh [BUILD_DIR]: on a CPU machine (with LLVM/MLIR and the
# CUDA toolkit), everything tools/gpu/check.sh and tools/gpu/bench.sh run on a
# GPU machine (which has neither): every seed model compiled for the GPU (a
# fatbin; again without fused GEMM epilogues and without merged launches, for
# bench.sh and check.sh) and for the CPU
# (x86-64-v3: any x86-64 the GPU machine has), and the test programs, in
# BUILD_DIR/gpu-check (carried to the GPU machine).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
out="$build/gpu-check"
ninja -C "$build" tfc CudaDriverTest tfc-kernel-check >/dev/null
rm -rf "$out" && mkdir -p "$out/cpu" "$out/cuda" "$out/cuda-no-epilogues" "$out/cuda-separate" \
  "$out/cuda-tf32" "$out/cuda-bf16" "$out/cuda-bf16-all" "$out/cuda-unfused-loss"
for model in reverse set_anomaly fleuret_cnn fleuret_attention encoder_decoder; do
  "$build/bin/tfc" compile "$root/models/$model.tf" --cpu=x86-64-v3 -o "$out/cpu/$model"
  "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda -o "$out/cuda/$model"
  # For bench.sh: the GEMMs' epilogues not fused (kernels of their own).
  "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --no-gemm-epilogues \
    -o "$out/cuda-no-epilogues/$model"
  # For check.sh (the same bits) and bench.sh: a launch each loop nest.
  "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --no-merge-launches \
    -o "$out/cuda-separate/$model"
done
# For check.sh (the same bits): the loss and its gradient as two kernel
# calls, not tfc_cuda_cross_entropy_fused (the models whose loss is
# tf.cross_entropy).
for model in reverse set_anomaly; do
  "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --no-fused-cross-entropy \
    -o "$out/cuda-unfused-loss/$model"
done
# The GEMMs on tensor cores (issue 28): reverse must still reach 100%, and
# the other seed models train in bf16 as in fp32 (precision-train.sh).
for precision in tf32 bf16; do
  "$build/bin/tfc" compile "$root/models/reverse.tf" --target=cuda --precision "$precision" \
    -o "$out/cuda-$precision/reverse"
done
for model in set_anomaly fleuret_cnn fleuret_attention encoder_decoder; do
  "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --precision bf16 \
    -o "$out/cuda-bf16/$model"
done
# Every GEMM on bf16 copies of its operands (reverse's are too small for the
# default, large): cuBLASLt's bf16 plans with every epilogue, still 100%;
# set_anomaly's and encoder_decoder's with their products stored in bf16
# and activations kept as bits too (precision-train.sh: as fp32 scores).
for model in reverse set_anomaly encoder_decoder; do
  "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --precision bf16 \
    --bf16-operands=all -o "$out/cuda-bf16-all/$model"
done
# One element a thread in every generated kernel (--no-thread-coarsening),
# for quick.sh: the same bits as the default's 4 (16-byte accesses on the
# GPU's real alignment), and the medium encoder's step timed both ways.
mkdir -p "$out/cuda-one"
"$build/bin/tfc" compile "$root/models/set_anomaly.tf" --target=cuda --no-thread-coarsening \
  -o "$out/cuda-one/set_anomaly"
"$build/bin/tfc" compile "$root/models/medium_encoder.tf" --target=cuda --precision tf32 \
  --no-thread-coarsening -o "$out/cuda-one/medium_encoder.tf32"
# Small launches on their own (--no-launch-tails), for quick.sh: the same
# bytes as the default's tails (run by the last block to finish, which only
# a GPU's concurrent blocks test), and the steps timed both ways.
mkdir -p "$out/cuda-no-tails"
for model in reverse set_anomaly fleuret_cnn; do
  "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --no-launch-tails \
    -o "$out/cuda-no-tails/$model"
done
# Persistent kernels (issue 28): each entry one cooperative kernel, for the
# launch-bound models.
mkdir -p "$out/cuda-persistent"
for model in reverse encoder_decoder; do
  "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --persistent-kernels \
    -o "$out/cuda-persistent/$model"
done
# Every op of tests/e2e/ops.tf (two models of the file), small batches.
for model in ops scalars; do
  "$build/bin/tfc" compile "$root/tests/e2e/ops.tf" --model "$model" --batch 4 --cpu=x86-64-v3 \
    -o "$out/cpu/$model"
  "$build/bin/tfc" compile "$root/tests/e2e/ops.tf" --model "$model" --batch 4 --target=cuda \
    -o "$out/cuda/$model"
done
# Generation (issue 29): the byte-level GPT's prefill and decode entries.
"$build/bin/tfc" compile "$root/models/gpt_bytes.tf" --cpu=x86-64-v3 -o "$out/cpu/gpt_bytes"
"$build/bin/tfc" compile "$root/models/gpt_bytes.tf" --target=cuda -o "$out/cuda/gpt_bytes"
# Float64 results for parity.py's arbiter of a ReLU flip (docs/cuda.md,
# "Parity"): `tfc interpret` on parity's feeds, as the GPU machine has no
# tfc. The models with a ReLU whose results are small; set_anomaly's (2.2 M
# parameters: 140 MB) would not fit the carry, and there the fresh feeds
# decide alone.
for model in reverse fleuret_cnn fleuret_attention encoder_decoder; do
  python3 "$root/tools/gpu/parity.py" --cpu "$out/cpu/$model" --cuda "$out/cuda/$model" \
    --work "$build/gpu-oracle-work/$model" --oracle "$build/bin/tfc interpret $root/models/$model.tf" \
    --oracle-dir "$out/oracle/$model" --save-oracle >/dev/null
done
rm -rf "$build/gpu-oracle-work"
# Issue 27's scaling table (tools/gpu/scaling.sh) on the GPU machine's cores:
# set_anomaly and fleuret_attention for the CPU at their global batch and at
# 1/2, 1/4 and 1/8 of it (a rank's share), and Open MPI, which the GPU
# machines lack, as a folder that runs from anywhere.
mkdir -p "$out/scaling"
for pair in set_anomaly:64 fleuret_attention:128; do
  model=${pair%%:*} global=${pair##*:}
  for ranks in 1 2 4 8; do
    "$build/bin/tfc" compile "$root/models/$model.tf" --cpu=x86-64-v3 --batch $((global / ranks)) \
      -o "$out/scaling/$model-$ranks"
  done
done
if command -v orterun >/dev/null; then
  "$root/tools/gpu/mpi-bundle.sh" "$out/mpi" >/dev/null
else
  echo "prepare.sh: no Open MPI here (openmpi-bin): scaling.sh will have threads alone" >&2
fi
cp "$build/tests/bin/CudaDriverTest" "$build/tools/gpu/tfc-kernel-check" "$out/"
du -sh "$out"
