#!/usr/bin/env python3
"""oracle_entries.py TFC WORK SOURCE.tf BATCH [MODEL]: every entry of one
model's CPU binary against `tfc interpret` (the reference interpreter, in
float64) on the same parameters and feeds (tools/gpu/parity.py's feeds).
Prints one line an entry with its worst relative error (parity.py's
measure) and whether it is within 1e-5; exits 1 if any is not."""
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "tools", "gpu"))
import parity  # noqa: E402

tfc, work, source, batch = sys.argv[1:5]
options = ["--batch", batch] + (["--model", sys.argv[5]] if len(sys.argv) > 5 else [])
os.makedirs(work, exist_ok=True)
binary = os.path.join(work, "model")
subprocess.run([tfc, "compile", source, "-o", binary] + options, check=True)
params = os.path.join(work, "params.safetensors")
subprocess.run([binary, "init", "--seed", "5", "--out", params], check=True, capture_output=True)
model = parity.manifest(binary)
bounds = {i["name"]: i["index_bound"] for i in model["inputs"] if i.get("index_bound")}
rng = random.Random(7)
failed = False
for entry in model["entries"]:
    feeds = []
    for arg in entry["args"]:
        if arg["kind"] == "param":
            continue
        path = os.path.join(work, f"{entry['name']}.{arg['kind']}.{arg['name']}.npy")
        parity.write_npy(path, arg["dtype"], arg["shape"], parity.feed_values(arg, rng, bounds))
        feeds += ["--feed", f"{arg['kind']}:{arg['name']}={path}"]
    compiled, oracle = (os.path.join(work, f"{entry['name']}.{side}") for side in ("cpu", "oracle"))
    common = ["--params", params, "--output-dir"]
    subprocess.run([binary, "run", entry["name"]] + common + [compiled] + feeds, check=True,
                   capture_output=True)
    subprocess.run([tfc, "interpret", source, entry["name"]] + options + common + [oracle] + feeds,
                   check=True, capture_output=True)
    outputs = [f"{r['kind']}.{r['name']}.npy" for r in entry["results"]]
    worst, where, _ = parity.entry_error(oracle, compiled, outputs, 1e-5)
    within = worst <= 1e-5
    failed |= not within
    print(f"{model['model']} {entry['name']}: {'within' if within else 'NOT within'} 1e-5 of "
          f"float64 ({worst:.1e}, {where})")
sys.exit(1 if failed else 0)
