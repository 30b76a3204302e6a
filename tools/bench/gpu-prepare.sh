#!/usr/bin/env bash
# tools/bench/gpu-prepare.sh [--dry-run-cpu] [BUILD_DIR]: on the CPU machine (LLVM/MLIR
# and the CUDA toolkit), what tools/bench/gpu.sh runs on the GPU machine, which
# builds nothing: every seed model and models/medium_encoder.tf compiled with
# --target=cuda (host code for x86-64-v3, any x86-64 the GPU machine has) into
# BUILD_DIR/gpu-bench/cuda, with a STAMP naming the commit, and reverse,
# set_anomaly and medium_encoder also with --precision tf32 and bf16
# (cuda/MODEL.tf32, cuda/MODEL.bf16: their GEMMs on TF32 or bf16 tensor
# cores, for issue 28's targets; gpu.sh times them beside the fp32 build),
# and reverse and encoder_decoder with --persistent-kernels (cuda/MODEL.persistent:
# each entry one cooperative kernel, the mode issue 28 asks to choose by
# measurement).
# BUILD_DIR (default build/) needs a configured build; tfc is built there
# first.
#
# --dry-run-cpu compiles the same models for this CPU into BUILD_DIR/gpu-bench/cpu,
# for `tools/bench/gpu.sh --dry-run-cpu` (the same pipeline without a GPU).
#
# Then carry it to the GPU machine (tools/gpu/pack.sh packs it with
# tools/gpu/prepare.sh's checks into a few MiB for the device tool's `carry`)
# and run tools/bench/gpu.sh there (tools/bench/README.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target=cuda
if [[ ${1:-} == --dry-run-cpu ]]; then
  target=cpu
  shift
fi
build="${1:-$root/build}"
out="$build/gpu-bench"
models=(reverse set_anomaly medium_encoder fleuret_cnn fleuret_attention encoder_decoder)
precision_models=(reverse set_anomaly medium_encoder)
persistent_models=(reverse encoder_decoder)
ninja -C "$build" tfc >/dev/null
rm -rf "$out/$target"
mkdir -p "$out/$target"
for model in "${models[@]}"; do
  if [[ $target == cuda ]]; then
    "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 -o "$out/cuda/$model"
    if [[ " ${precision_models[*]} " == *" $model "* ]]; then
      for precision in tf32 bf16; do
        "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
          --precision "$precision" -o "$out/cuda/$model.$precision"
      done
    fi
    # The bf16 step without bf16 copies of the GEMMs' operands, with the
    # forward's activation copies kept for the backward, with fp32
    # activations beside their copies, with attention's outputs copied by
    # loop nests, with the dropout gradients drawn by loop nests after the
    # layer norm backwards, with the residual sums in loop nests before
    # the layer norms, and with every product stored in fp32, for
    # tools/gpu/verify.sh's and quick.sh's A/Bs.
    if [[ $model == medium_encoder ]]; then
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --precision bf16 --bf16-operands=none -o "$out/cuda/$model.bf16-fp32-operands"
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --precision bf16 --bf16-keep-activation-copies -o "$out/cuda/$model.bf16-keep-copies"
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --precision bf16 --no-bf16-activations -o "$out/cuda/$model.bf16-fp32-activations"
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --precision bf16 --no-bf16-attention-outputs -o "$out/cuda/$model.bf16-attention-nests"
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --precision bf16 --no-layer-norm-dropout -o "$out/cuda/$model.bf16-dropout-nests"
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --precision bf16 --no-layer-norm-residual -o "$out/cuda/$model.bf16-residual-nests"
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --precision bf16 --no-bf16-gemm-results -o "$out/cuda/$model.bf16-fp32-results"
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --precision bf16 --no-bf16-attention-inputs -o "$out/cuda/$model.bf16-fp32-qkv"
    fi
    if [[ $model == set_anomaly ]]; then # launch-bound: 16 launches against 24
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --no-layer-norm-residual -o "$out/cuda/$model.residual-nests"
    fi
    if [[ " ${persistent_models[*]} " == *" $model "* ]]; then
      "$build/bin/tfc" compile "$root/models/$model.tf" --target=cuda --cpu=x86-64-v3 \
        --persistent-kernels -o "$out/cuda/$model.persistent"
    fi
  else
    "$build/bin/tfc" compile "$root/models/$model.tf" -o "$out/cpu/$model"
  fi
done
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- models compiler runtime 2>/dev/null || commit="$commit with local changes"
echo "commit $commit, compiled for $target by gpu-prepare.sh on $(date -u '+%Y-%m-%d %H:%M UTC')" \
  >"$out/$target/STAMP"
du -sh "$out/$target"
