#!/usr/bin/env python3
"""parity.py --cpu CPU_BINARY --cuda CUDA_BINARY --work DIR [--repeat] [--exact]

One model's GPU binary against its CPU twin (issue 26's correctness
contract), on the same parameters and the same random feeds:
  - predict: every output within 1e-5 of the CPU's, relative to the
    output's largest magnitude;
  - run train_step: every result (loss, metrics, updated parameters and
    optimizer moments, the step, lr, grad norm) within 1e-4, likewise;
  - run evaluate: loss and metrics within 1e-4;
  - run grad_step and apply_step (data-parallel training's halves): every
    result within 1e-4, grad_step's gradients relative to the step's
    largest gradient;
  - run prefill and decode (a model that generates): logits and key and
    value caches within 1e-4;
  - --repeat: train_step run twice on the GPU gives the same bytes;
  - --exact: instead of tolerances, every result file the same bytes (two
    builds of one target that must compute alike, e.g. with and without
    --no-merge-launches).
A ReLU flip: where every result over the tolerance differs in one unit's
slice only (one row of a weight and its moments, one element of a bias),
one pre-activation computed near zero rounded to the other side of a ReLU
on one side, and that unit's gradient took it or not: legitimate rounding
that no tolerance separates from a bug on those feeds. The check names the
unit and runs the entry again on fresh feeds, which must pass outright.
Each binary's run has 120 s.
Prints one `PASS name` or `FAIL name: why` line a check; exits 1 if any
failed. Pure Python (no numpy): the GPU machines need nothing installed.
Feeds: inputs uniform in [0, index_bound) (integers) or N(0, 1); the seed
1234; optimizer moments small (second moments positive); the step 10; lr
1e-3; total_steps 1000; masks 1. Parameters: `CPU init --seed 5`.
"""
import argparse
import array
import ast
import json
import os
import random
import subprocess
import sys

DTYPES = {"f32": ("<f4", "f"), "i32": ("<i4", "i"), "bool": ("|b1", "b")}


def manifest(binary):
    data = open(binary, "rb").read()
    # llvm::json writes keys sorted: the manifest starts with "batch".
    start = data.find(b'{"batch":')
    if start < 0:
        sys.exit(f"parity.py: no manifest in {binary}")
    return json.loads(data[start:data.find(b"\0", start)])


def write_npy(path, dtype, shape, values):
    descr, code = DTYPES[dtype]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join(f"{d}, " for d in shape) if len(shape) != 1 else f"{shape[0]},")
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.write(array.array(code, values).tobytes())


def read_npy(path, with_shape=False):
    data = open(path, "rb").read()
    length = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + length].decode())
    code = {"<f4": "f", "<i4": "i", "|b1": "b"}[header["descr"]]
    values = array.array(code)
    values.frombytes(data[10 + length:])
    return (list(values), tuple(header["shape"])) if with_shape else list(values)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def feed_values(arg, rng, bounds):
    n = numel(arg["shape"])
    kind, name, dtype = arg["kind"], arg["name"], arg["dtype"]
    if kind == "input":
        if dtype == "f32":
            return [rng.gauss(0, 1) for _ in range(n)]
        bound = bounds.get(name, 2)
        return [rng.randrange(bound) for _ in range(n)]
    if kind == "seed":
        return [1234] * n
    if kind == "sample_offset":  # one process: the batch is the global batch
        return [0] * n
    if kind == "state":
        if name.endswith("_sq"):
            return [rng.uniform(0, 1e-4) for _ in range(n)]
        return [rng.gauss(0, 1e-2) for _ in range(n)]
    if kind == "step":
        return [10.0] * n
    if kind == "hyper":
        return [{"lr": 1e-3, "total_steps": 1000.0}.get(name, 1.0)] * n
    if kind == "mask":
        return [1.0] * n
    if kind == "grad":
        return [rng.gauss(0, 1e-2) for _ in range(n)]
    if kind == "kv_cache":  # a decode step's keys and values so far
        return [rng.gauss(0, 1) for _ in range(n)]
    if kind == "position":  # within every model's sequence
        return [3] * n
    sys.exit(f"parity.py: no feed for {kind}:{name}")


def run(command):
    # A time limit, so that a kernel that never ends (a grid barrier that
    # waits for a block that never runs) is a failure with its command.
    # The command is named by its binary and subcommand: the feeds would
    # fill a screen.
    short = " ".join(command[:3]) + (f" ({(len(command) - 3) // 2} options)" if len(command) > 3 else "")
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise RuntimeError(short + " did not finish within 120 s")
    if result.returncode != 0:
        raise RuntimeError(short + f" exited {result.returncode}: " +
                           (result.stderr or result.stdout).strip()[-400:])
    return result


VERBOSE = False


def relative_errors(a, b, scale):
    return [abs(x - y) / scale if x == x and y == y else (0.0 if x != x and y != y else float("inf"))
            for x, y in zip(a, b)]


def one_unit(cpu_dir, cuda_dir, file, tolerance, scale=None):
    """`axis, index` when every element of `file` over the tolerance has that
    index on that axis (one row of a weight, one element of a bias) and the
    slice is a small part of the result: what one pre-activation computed
    near zero and rounded to the other side of a ReLU on one side does to
    the gradients of its unit (its mask is 1 on one side and 0 on the
    other). None otherwise: scalars, or differences spread over the result."""
    a, shape = read_npy(os.path.join(cpu_dir, file), with_shape=True)
    b = read_npy(os.path.join(cuda_dir, file))
    if len(a) != len(b) or len(a) < 2:
        return None
    errors = relative_errors(a, b, scale or max((abs(x) for x in a), default=0.0) or 1.0)
    over = [i for i, e in enumerate(errors) if e > tolerance]
    if not over:
        return None
    shape = shape or (len(a),)
    for axis in range(len(shape)):
        if shape[axis] < 8:  # one index of fewer is no small slice
            continue
        inner = numel(shape[axis + 1:])
        units = {(i // inner) % shape[axis] for i in over}
        if len(units) == 1:
            return axis, units.pop()
    return None


def compare(cpu_dir, cuda_dir, files, tolerance, scale=None):
    """The worst relative error over `files`, and the file where it is:
    relative to each file's largest magnitude, or to `scale` when given."""
    worst, where = 0.0, ""
    for file in files:
        if VERBOSE:
            w, _ = compare(cpu_dir, cuda_dir, [file], tolerance, scale) if len(files) > 1 else (None, None)
            if w is not None:
                print(f"       {file}: {w:.2e}", flush=True)
        a, b = read_npy(os.path.join(cpu_dir, file)), read_npy(os.path.join(cuda_dir, file))
        if len(a) != len(b):
            return float("inf"), file + " (sizes differ)"
        file_scale = scale or max((abs(x) for x in a), default=0.0) or 1.0
        error = max(relative_errors(a, b, file_scale), default=0.0)
        if error > worst:
            worst, where = error, file
    return worst, where


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", required=True)
    parser.add_argument("--cuda", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--repeat", action="store_true")
    parser.add_argument("--exact", action="store_true",
                        help="every result file of the second binary the first's bytes")
    parser.add_argument("--verbose", action="store_true", help="every result's error")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    model = manifest(args.cpu)
    name = model["model"]
    os.makedirs(args.work, exist_ok=True)
    rng = random.Random(20261126)
    bounds = {i["name"]: i["index_bound"] for i in model["inputs"] if i.get("index_bound")}
    params = os.path.join(args.work, "params.safetensors")
    failures = 0

    def check(label, body):
        nonlocal failures
        try:
            why = body()
        except RuntimeError as e:
            why = str(e)
        if why:
            failures += 1
            print(f"FAIL {name} {label}: {why}", flush=True)
        else:
            print(f"PASS {name} {label}", flush=True)

    try:
        run([args.cpu, "init", "--seed", "5", "--out", params])
    except RuntimeError as e:
        print(f"FAIL {name} init: {e}")
        return 1
    # The entries both binaries have (a CPU build also has the data-parallel
    # halves, grad_step and apply_step).
    theirs = {e["name"] for e in manifest(args.cuda)["entries"]}
    for entry in model["entries"]:
        if entry["name"] not in theirs:
            continue
        def make_feeds(attempt, rng=rng):
            feeds = []
            for arg in entry["args"]:
                if arg["kind"] == "param":
                    continue
                path = os.path.join(args.work, f"{entry['name']}{attempt}.{arg['kind']}.{arg['name']}.npy")
                write_npy(path, arg["dtype"], arg["shape"], feed_values(arg, rng, bounds))
                feeds.append((arg, path))
            return feeds

        outputs = [f"{r['kind']}.{r['name']}.npy" for r in entry["results"]]
        tolerance = 1e-5 if entry["name"] == "predict" else 1e-4
        # The feeds and result folders of the attempt that decided.
        last = {"feeds": make_feeds(""), "attempt": ""}

        def run_side(binary, feeds, out):
            command = [binary, "run", entry["name"], "--params", params, "--output-dir", out]
            for arg, path in feeds:
                command += ["--feed", f"{arg['kind']}:{arg['name']}={path}"]
            run(command)

        def attempt(feeds, suffix):
            """The check on one set of feeds: "" or why it failed, and the
            results over the tolerance that lie in one unit's slice."""
            dirs = {}
            for side, binary in (("cpu", args.cpu), ("cuda", args.cuda)):
                dirs[side] = os.path.join(args.work, f"{entry['name']}{suffix}.{side}")
                run_side(binary, feeds, dirs[side])
            # grad_step's raw gradients against the step's largest gradient:
            # a gradient that is mathematically zero (attention's key bias,
            # which softmax ignores) is rounding noise on both sides.
            grads = [f for f in outputs if f.startswith("grad.")]
            rest = [f for f in outputs if f not in grads]
            scale = None
            worst, where = compare(dirs["cpu"], dirs["cuda"], rest, tolerance)
            if grads:
                scale = max(max((abs(x) for x in read_npy(os.path.join(dirs["cpu"], f))),
                                default=0.0) for f in grads) or 1.0
                w, at = compare(dirs["cpu"], dirs["cuda"], grads, tolerance, scale)
                if w > worst:
                    worst, where = w, at
            detail = f"worst relative error {worst:.2e} ({where})"
            print(f"     {name} {entry['name']}{suffix}: {detail}", flush=True)
            if args.exact:
                differ = [f for f in outputs if open(os.path.join(dirs["cpu"], f), "rb").read() !=
                          open(os.path.join(dirs["cuda"], f), "rb").read()]
                return (f"{len(differ)} results' bytes differ, first {differ[0]}; {detail}" if differ else ""), None
            if worst <= tolerance:
                return "", None
            units = {}
            for f in outputs:
                if compare(dirs["cpu"], dirs["cuda"], [f], tolerance,
                           scale if f.startswith("grad.") else None)[0] > tolerance:
                    units[f] = one_unit(dirs["cpu"], dirs["cuda"], f, tolerance,
                                        scale if f.startswith("grad.") else None)
            return detail + f" > {tolerance:g}", units

        def one_entry():
            why, units = attempt(last["feeds"], "")
            if not why or not units or None in units.values():
                return why
            # Every result over the tolerance differs in one unit's slice
            # only: one pre-activation near zero took the other side of a
            # ReLU on one side (docs/cuda.md, "Parity"). Legitimate rounding,
            # but on these feeds the tolerance cannot tell it from a bug:
            # fresh feeds must then pass outright.
            print(f"     {name} {entry['name']}: every result over the tolerance is one unit's slice ("
                  + ", ".join(f"{f} axis {a} index {i}" for f, (a, i) in units.items())
                  + "): a ReLU that one pre-activation near zero takes on one side only;"
                  " again on fresh feeds", flush=True)
            last["feeds"] = make_feeds(".fresh", random.Random(f"{name}.{entry['name']}"))
            last["attempt"] = ".fresh"
            why, again = attempt(last["feeds"], ".fresh")
            if why and again and None not in again.values():
                # Still a failure; said so that a flip can be told from a
                # unit's bug, which would repeat at the same unit.
                print(f"     {name} {entry['name']}.fresh: again one unit's slice ("
                      + ", ".join(f"{f} axis {a} index {i}" for f, (a, i) in again.items())
                      + ")", flush=True)
            return why and why + " (fresh feeds, after a ReLU flip on the first)"

        check(f"{entry['name']} " + ("the same bits" if args.exact else "GPU vs CPU"), one_entry)
        if args.repeat and entry["name"] == "train_step":
            def repeat():
                again = os.path.join(args.work, "train_step.cuda2")
                run_side(args.cuda, last["feeds"], again)
                first = os.path.join(args.work, f"train_step{last['attempt']}.cuda")
                for file in outputs:
                    if open(os.path.join(first, file), "rb").read() != open(os.path.join(again, file), "rb").read():
                        return f"{file} differs between two runs"
                return ""
            check("train_step twice on the GPU: the same bytes", repeat)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
