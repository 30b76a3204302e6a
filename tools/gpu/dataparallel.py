#!/usr/bin/env python3
"""dataparallel.py --cuda REVERSE_CUDA_BINARY --work DIR [--steps N]

The data-parallel step on one GPU (issue 27): the reverse task's CUDA binary
trained with TFC_DATA_PARALLEL=nccl (grad_step, NCCL's all-reduce over a
communicator of one, apply_step, the gradients never leaving the GPU)
against the same binary trained plainly (train_step), from the same seed on
the same data:
  - each step's loss within 1e-6 (relative), its accuracy within 1e-6;
  - every parameter and Adam moment of the last checkpoint within 1e-5 of
    its tensor's largest value, but the few elements whose gradient is
    rounding noise in both runs (second moment below 1e-12 of its tensor's
    largest: attention's key bias, which softmax ignores), fewer than 1%;
  - the NCCL run twice: the same checkpoint bytes (NCCL's order is fixed).
One training sample batch (the binary's batch), so each epoch is one step
and each train line of metrics.jsonl one step's scores. Prints one
`PASS name` or `FAIL name: why` line a check, or `SKIP ...` (exit 0) where
NCCL is not installed. Pure Python, as parity.py.
"""
import argparse
import array
import ctypes
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity import manifest, write_npy  # noqa: E402


def have_nccl():
    for name in [os.environ.get("TFC_NCCL_LIBRARY", ""), "libnccl.so.2",
                 "/usr/local/cuda/lib64/libnccl.so.2", "/usr/lib/x86_64-linux-gnu/libnccl.so.2"]:
        if not name:
            continue
        try:
            ctypes.CDLL(name)
            return name
        except OSError:
            pass
    return None


def read_safetensors(path):
    data = open(path, "rb").read()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        begin, end = info["data_offsets"]
        values = array.array("f")
        values.frombytes(data[8 + length + begin:8 + length + end])
        tensors[name] = values
    return tensors


def train_scores(run_dir):
    scores = []
    for line in open(os.path.join(run_dir, "metrics.jsonl")):
        record = json.loads(line)
        if record.get("split") == "train":
            scores.append((record["loss"], record.get("accuracy", 0.0)))
    return scores


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cuda", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    nccl = have_nccl()
    if not nccl:
        print("SKIP data-parallel on one GPU: libnccl.so.2 not found (NCCL is not installed "
              "here; TFC_NCCL_LIBRARY names another path)")
        return 0
    print(f"     NCCL: {nccl}")
    batch = manifest(args.cuda)["batch"]
    rng = random.Random(27)
    for split in ("train", "val", "test"):
        os.makedirs(os.path.join(args.work, "data", split), exist_ok=True)
        tokens = [rng.randrange(10) for _ in range(batch * 16)]
        labels = [tokens[i * 16 + 15 - t] for i in range(batch) for t in range(16)]
        for name, values in (("tokens", tokens), ("labels", labels)):
            write_npy(os.path.join(args.work, "data", split, name + ".npy"), "i32", [batch, 16],
                      values)
    failures = 0

    def report(label, why):
        nonlocal failures
        if why:
            failures += 1
            print(f"FAIL reverse data-parallel {label}: {why}", flush=True)
        else:
            print(f"PASS reverse data-parallel {label}", flush=True)

    def train(run, switch):
        env = dict(os.environ)
        env.pop("TFC_DATA_PARALLEL", None)
        if switch:
            env["TFC_DATA_PARALLEL"] = "nccl"
        command = [args.cuda, "train", "--epochs", str(args.steps), "--lr", "1e-2", "--seed", "3",
                   "--data", os.path.join(args.work, "data"),
                   "--run-dir", os.path.join(args.work, run)]
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=240)
        if result.returncode != 0:
            return f"exit {result.returncode}: " + (result.stderr or result.stdout).strip()[-400:]
        if switch and "data-parallel: 1 rank" not in result.stdout:
            return "the switch did not take the data-parallel path: " + result.stdout[-300:]
        return ""

    for run, switch in (("plain", False), ("nccl", True), ("nccl-again", True)):
        why = train(run, switch)
        if why:
            report(f"training ({run})", why)
            return 1

    a, b = train_scores(os.path.join(args.work, "plain")), train_scores(os.path.join(args.work, "nccl"))
    why = ""
    if len(a) != args.steps or len(b) != args.steps:
        why = f"{len(a)} and {len(b)} steps of scores, not {args.steps}"
    worst = 0.0
    for step, ((la, aa), (lb, ab)) in enumerate(zip(a, b)):
        error = abs(la - lb) / max(abs(la), 1e-30)
        worst = max(worst, error)
        if not why and (error > 1e-6 or abs(aa - ab) > 1e-6):
            why = f"step {step + 1}: loss {lb!r} against {la!r}, accuracy {ab!r} against {aa!r}"
    print(f"     losses: worst relative difference {worst:.2e} over {len(a)} steps", flush=True)
    report("losses step for step within 1e-6 of train_step's", why)

    x = read_safetensors(os.path.join(args.work, "plain", "last.safetensors"))
    y = read_safetensors(os.path.join(args.work, "nccl", "last.safetensors"))
    compared = noise = 0
    why = ""
    for name, t in x.items():
        if name.startswith("train.") or why:
            continue
        if name not in y:
            why = f"{name} missing"
            break
        param = name[len("optimizer."):] if name.startswith("optimizer.") else name
        for suffix in (".exp_avg_sq", ".exp_avg"):
            if param.endswith(suffix):
                param = param[:-len(suffix)]
        moment = x.get("optimizer." + param + ".exp_avg_sq", t)
        scale = max((abs(v) for v in t), default=0.0)
        moment_scale = max(moment, default=0.0)
        for i, (u, v) in enumerate(zip(t, y[name])):
            compared += 1
            if abs(u - v) <= 1e-5 * scale:
                continue
            if moment[i] <= 1e-12 * moment_scale:
                noise += 1
                continue
            why = f"{name}[{i}]: {v!r} against {u!r} (1e-5 of {scale:g})"
            break
    if not why and noise >= max(compared // 100, 1):
        why = f"{noise} of {compared} elements apart with noise-level gradients"
    print(f"     checkpoint: {compared} elements compared, {noise} apart with noise-level "
          "gradients", flush=True)
    report("checkpoint within 1e-5 of train_step's", why)

    same = (open(os.path.join(args.work, "nccl", "last.safetensors"), "rb").read() ==
            open(os.path.join(args.work, "nccl-again", "last.safetensors"), "rb").read())
    report("twice: the same checkpoint bytes", "" if same else "the checkpoints differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
