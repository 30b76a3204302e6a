#!/usr/bin/env python3
"""A stand-in GPU binary for tools/gpu/parity.py's test (parity-relu-flip.tf).

  parity_flip.py make CPU_BINARY MODE OUT: writes OUT, an executable that
      carries CPU_BINARY's manifest (parity.py reads it) and runs
      `parity_flip.py run CPU_BINARY MODE ARGS...`.
  parity_flip.py run CPU_BINARY MODE ARGS...: CPU_BINARY ARGS..., then for
      `run train_step` moves encoder.0.linear1.weight's Adam moment past the
      tolerance:
        row:    in row 5 only, on the first feeds only (a ReLU flip);
        spread: in rows 5 and 9 (a bug: no one unit);
        always: in row 5, on every feeds (a bug that looks like a flip).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "tools", "gpu"))
import parity  # noqa: E402

MOMENT = "state.encoder.0.linear1.weight.exp_avg.npy"


def make(cpu, mode, out):
    manifest = json.dumps(parity.manifest(cpu), sort_keys=True, separators=(",", ":"))
    with open(out, "wb") as f:
        f.write(b"#!/bin/sh\nexec %s %s run %s %s \"$@\"\n# " % (
            sys.executable.encode(), os.path.abspath(__file__).encode(),
            os.path.abspath(cpu).encode(), mode.encode()))
        f.write(manifest.encode() + b"\0\n")
    os.chmod(out, 0o755)


def run(cpu, mode, args):
    subprocess.run([cpu] + args, check=True, stdout=subprocess.DEVNULL)
    if args[:2] != ["run", "train_step"]:
        return
    first = not any(".fresh." in a for a in args)
    if mode == "row" and not first:
        return
    path = os.path.join(args[args.index("--output-dir") + 1], MOMENT)
    values, shape = parity.read_npy(path, with_shape=True)
    largest = max(abs(x) for x in values)
    cols = shape[1]
    for row in ([5, 9] if mode == "spread" else [5]):
        for c in range(cols):
            values[row * cols + c] += 3e-4 * largest
    parity.write_npy(path, "f32", shape, values)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(*sys.argv[2:5])
    else:
        run(sys.argv[2], sys.argv[3], sys.argv[4:])
