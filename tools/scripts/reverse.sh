#!/usr/bin/env bash
# The main job: build tfc, compile models/reverse.tf into a native binary,
# and run it (describe it, draw parameters, predict on random tokens).
# Training (`./reverse train`) arrives with autodiff (issue 5).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${TFC_BUILD_DIR:-$root/build}"
"$root/tools/scripts/build.sh" tfc tfc_runtime
out="${TFC_RUN_DIR:-$build/runs/reverse}"
mkdir -p "$out"
"$build/bin/tfc" compile "$root/models/reverse.tf" -o "$out/reverse" -v
"$out/reverse" info
"$out/reverse" init --seed 42 --out "$out/init.safetensors"
# 300 random digit sequences (numpy-free: the .npy header is written by hand).
python3 - "$out/tokens.npy" <<'PY'
import random, struct, sys
rows, cols = 300, 16
header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
rng = random.Random(0)
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%di" % (rows * cols), *[rng.randrange(10) for _ in range(rows * cols)]))
PY
"$out/reverse" predict --params "$out/init.safetensors" --input tokens="$out/tokens.npy" \
  --output-dir "$out/predict"
