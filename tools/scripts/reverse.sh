#!/usr/bin/env bash
# The main job: build tfc, compile models/reverse.tf into a native training
# binary and train it with the file's settings (10 epochs of the UvA reverse
# task) to 100% test accuracy, printing progress; then evaluate the best
# checkpoint and predict on a few sequences.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${TFC_BUILD_DIR:-$root/build}"
"$root/tools/scripts/build.sh" tfc tfc_runtime
out="${TFC_RUN_DIR:-$build/runs/reverse}"
mkdir -p "$out"
"$build/bin/tfc" compile "$root/models/reverse.tf" -o "$out/reverse" -v
"$out/reverse" info
"$out/reverse" train --run-dir "$out"
"$out/reverse" eval --checkpoint "$out/best.safetensors"
# Five digit sequences (numpy-free: the .npy header is written by hand).
python3 - "$out/tokens.npy" <<'PY'
import random, struct, sys
rows, cols = 5, 16
header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
rng = random.Random(0)
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%di" % (rows * cols), *[rng.randrange(10) for _ in range(rows * cols)]))
PY
"$out/reverse" predict --params "$out/best.safetensors" --input tokens="$out/tokens.npy" \
  --output-dir "$out/predict"
