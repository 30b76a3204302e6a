#!/usr/bin/env python3
"""parity.py --cpu CPU_BINARY --cuda CUDA_BINARY --work DIR [--repeat] [--exact]
             [--cuda-env VAR=VALUE]...
             [--oracle 'tfc interpret MODEL.tf [--batch N]'] [--oracle-dir DIR [--save-oracle]]

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
    --no-merge-launches);
  - --cuda-env VAR=VALUE: set in the second binary's runs only, so one
    binary runs against itself with a runtime switch (TFC_DEPENDENT_LAUNCH=1).
A ReLU flip: where every result over the tolerance differs in one unit's
slice only (one row of a weight and its moments, one element of a bias),
one pre-activation computed near zero rounded to the other side of a ReLU
on one side, and that unit's gradient took it or not: legitimate rounding
that no tolerance separates from a bug on those feeds. The check names the
unit and runs the entry again on fresh feeds, which must pass outright.
Unless float64 decides first: with --oracle (a command that runs an entry
as the binaries' `run` does, in double precision: `tfc interpret`), or
--oracle-dir (its results saved beforehand, for a GPU machine without tfc:
`--save-oracle` writes them there for train_step and grad_step on the
first and the fresh feeds, rounded to f32, and runs no binary but the
CPU's init), a
one-unit miss where the GPU is within the tolerance of float64 passes: the
CPU build took the other side. Where the CPU is, the fresh feeds decide.
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
import hashlib
import json
import os
import random
import shlex
import subprocess
import sys

DTYPES = {"f32": ("<f4", "f"), "i32": ("<i4", "i"), "bool": ("|b1", "b")}


def manifest(binary):
    try:
        data = open(binary, "rb").read()
    except OSError as e:
        sys.exit(f"parity.py: cannot read {binary}: {e.strerror}")
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


def npy_header(data):
    """A .npy file's header (version 1.0) and where its data starts."""
    length = int.from_bytes(data[8:10], "little")
    return ast.literal_eval(data[10:10 + length].decode()), 10 + length


def read_npy(path, with_shape=False):
    data = open(path, "rb").read()
    header, start = npy_header(data)
    code = {"<f4": "f", "<f8": "d", "<i4": "i", "|b1": "b"}[header["descr"]]
    values = array.array(code)
    values.frombytes(data[start:])
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


def run(command, env=None):
    # A time limit, so that a kernel that never ends (a grid barrier that
    # waits for a block that never runs) is a failure with its command.
    # The command is named by its binary and subcommand: the feeds would
    # fill a screen.
    short = " ".join(command[:3]) + (f" ({(len(command) - 3) // 2} options)" if len(command) > 3 else "")
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        raise RuntimeError(short + " did not finish within 120 s")
    except OSError as e:
        raise RuntimeError(f"{short}: {e.strerror}")
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


def entry_error(ref_dir, other_dir, outputs, tolerance):
    """The worst relative error of `other_dir`'s results against `ref_dir`'s,
    the file where it is, and the scale of the gradients: grad_step's raw
    gradients against the step's largest gradient (a gradient that is
    mathematically zero, attention's key bias, which softmax ignores, is
    rounding noise on both sides), every other result against its own
    largest magnitude."""
    grads = [f for f in outputs if f.startswith("grad.")]
    rest = [f for f in outputs if f not in grads]
    scale = None
    worst, where = compare(ref_dir, other_dir, rest, tolerance)
    if grads:
        scale = max(max((abs(x) for x in read_npy(os.path.join(ref_dir, f))),
                        default=0.0) for f in grads) or 1.0
        w, at = compare(ref_dir, other_dir, grads, tolerance, scale)
        if w > worst:
            worst, where = w, at
    return worst, where, scale


def feeds_digest(params, feeds):
    """What the oracle's saved results were computed from: the parameters and
    every feed, by name and bytes."""
    digest = hashlib.sha256(open(params, "rb").read())
    for arg, path in feeds:
        digest.update(f"{arg['kind']}:{arg['name']}".encode())
        digest.update(open(path, "rb").read())
    return digest.hexdigest()


# The entries with a backward pass: where a ReLU flip shows.
BACKWARD = ("train_step", "grad_step")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", required=True)
    parser.add_argument("--cuda", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--repeat", action="store_true")
    parser.add_argument("--exact", action="store_true",
                        help="every result file of the second binary the first's bytes")
    parser.add_argument("--verbose", action="store_true", help="every result's error")
    parser.add_argument("--cuda-env", action="append", default=[], metavar="VAR=VALUE",
                        help="set in the second binary's environment only (repeatable): a "
                        "runtime switch against the same binary without it")
    parser.add_argument("--oracle", help="a command that runs an entry in float64 with the "
                        "binaries' `run` arguments, e.g. 'tfc interpret models/reverse.tf': "
                        "it decides a one-unit miss")
    parser.add_argument("--oracle-dir", help="the oracle's results saved by --save-oracle")
    parser.add_argument("--save-oracle", action="store_true",
                        help="with --oracle and --oracle-dir: only save the oracle's results "
                        "of train_step and grad_step on the first and the fresh feeds")
    args = parser.parse_args()
    if args.save_oracle and not (args.oracle and args.oracle_dir):
        parser.error("--save-oracle needs --oracle and --oracle-dir")
    global VERBOSE
    VERBOSE = args.verbose
    for setting in args.cuda_env:
        if "=" not in setting or setting.startswith("="):
            parser.error(f"--cuda-env '{setting}': expected VAR=VALUE")
    cuda_env = dict(os.environ, **dict(s.split("=", 1) for s in args.cuda_env)) \
        if args.cuda_env else None
    # (A binary named without a folder is this folder's, not one on PATH.)
    args.cpu, args.cuda = os.path.abspath(args.cpu), os.path.abspath(args.cuda)
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

        def fresh_feeds():
            return make_feeds(".fresh", random.Random(f"{name}.{entry['name']}"))

        outputs = [f"{r['kind']}.{r['name']}.npy" for r in entry["results"]]
        tolerance = 1e-5 if entry["name"] == "predict" else 1e-4
        # The feeds and result folders of the attempt that decided.
        last = {"feeds": make_feeds(""), "attempt": ""}

        def feed_options(feeds):
            return [o for arg, path in feeds for o in ("--feed", f"{arg['kind']}:{arg['name']}={path}")]

        def run_side(side, feeds, out):
            binary = args.cpu if side == "cpu" else args.cuda
            run([binary, "run", entry["name"], "--params", params, "--output-dir", out]
                + feed_options(feeds), cuda_env if side == "cuda" else None)

        def run_oracle(feeds, out):
            run(shlex.split(args.oracle) + [entry["name"], "--params", params, "--output-dir", out]
                + feed_options(feeds))

        if args.save_oracle:
            if entry["name"] in BACKWARD:
                for suffix, feeds in (("", last["feeds"]), (".fresh", fresh_feeds())):
                    folder = os.path.join(args.oracle_dir, entry["name"] + suffix)
                    run_oracle(feeds, folder)
                    # Rounded to f32 (6e-8 against a 1e-4 tolerance): half
                    # the bytes to carry to the GPU machine.
                    for file in outputs:
                        path = os.path.join(folder, file)
                        if npy_header(open(path, "rb").read())[0]["descr"] == "<f8":
                            values, shape = read_npy(path, with_shape=True)
                            write_npy(path, "f32", shape, values)
                    with open(os.path.join(folder, "feeds.sha256"), "w") as f:
                        f.write(feeds_digest(params, feeds) + "\n")
                print(f"saved {name} {entry['name']}: float64 results on the first and the "
                      f"fresh feeds in {args.oracle_dir}", flush=True)
            continue

        def oracle(feeds, suffix):
            """The folder of the float64 results on `feeds`, or None."""
            if args.oracle:
                folder = os.path.join(args.work, f"{entry['name']}{suffix}.oracle")
                run_oracle(feeds, folder)
                return folder
            if args.oracle_dir:
                folder = os.path.join(args.oracle_dir, entry["name"] + suffix)
                saved = os.path.join(folder, "feeds.sha256")
                if os.path.exists(saved) and open(saved).read().strip() == feeds_digest(params, feeds):
                    return folder
                print(f"     {name} {entry['name']}{suffix}: no float64 results for these feeds "
                      f"in {args.oracle_dir}", flush=True)
            return None

        def attempt(feeds, suffix):
            """The check on one set of feeds: "" or why it failed, and the
            results over the tolerance that lie in one unit's slice."""
            dirs = {}
            for side in ("cpu", "cuda"):
                dirs[side] = os.path.join(args.work, f"{entry['name']}{suffix}.{side}")
                run_side(side, feeds, dirs[side])
            worst, where, scale = entry_error(dirs["cpu"], dirs["cuda"], outputs, tolerance)
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

        def gpu_agrees_with_float64(feeds, suffix):
            """After a one-unit miss: True where the GPU's results are within
            the tolerance of float64's (the CPU build took the other side),
            having said which side float64 takes."""
            folder = oracle(feeds, suffix)
            if not folder:
                return False
            label = f"     {name} {entry['name']}{suffix}: float64 (the reference interpreter):"
            gpu, where, _ = entry_error(folder, os.path.join(args.work, f"{entry['name']}{suffix}.cuda"),
                                        outputs, tolerance)
            cpu, _, _ = entry_error(folder, os.path.join(args.work, f"{entry['name']}{suffix}.cpu"),
                                    outputs, tolerance)
            sides = f"the GPU {gpu:.2e} from it ({where}), the CPU {cpu:.2e}"
            if gpu <= tolerance:
                print(f"{label} {sides}: the GPU agrees, the CPU build took the other side", flush=True)
                return True
            print(f"{label} {sides}: " + ("the CPU agrees, the GPU build took the other side"
                                           if cpu <= tolerance else "neither agrees"), flush=True)
            return False

        def one_entry():
            why, units = attempt(last["feeds"], "")
            if not why or not units or None in units.values():
                return why
            # Every result over the tolerance differs in one unit's slice
            # only: one pre-activation near zero took the other side of a
            # ReLU on one side (docs/cuda.md, "Parity"). Legitimate rounding,
            # but on these feeds the tolerance cannot tell it from a bug:
            # float64 decides if it agrees with the GPU, else fresh feeds
            # must pass outright.
            print(f"     {name} {entry['name']}: every result over the tolerance is one unit's slice ("
                  + ", ".join(f"{f} axis {a} index {i}" for f, (a, i) in units.items())
                  + "): a ReLU that one pre-activation near zero takes on one side only", flush=True)
            if gpu_agrees_with_float64(last["feeds"], ""):
                return ""
            print(f"     {name} {entry['name']}: again on fresh feeds", flush=True)
            last["feeds"] = fresh_feeds()
            last["attempt"] = ".fresh"
            why, again = attempt(last["feeds"], ".fresh")
            if why and again and None not in again.values():
                # Still a failure; said so that a flip can be told from a
                # unit's bug, which would repeat at the same unit.
                print(f"     {name} {entry['name']}.fresh: again one unit's slice ("
                      + ", ".join(f"{f} axis {a} index {i}" for f, (a, i) in again.items())
                      + ")", flush=True)
                if gpu_agrees_with_float64(last["feeds"], ".fresh"):
                    return ""
            return why and why + " (fresh feeds, after a ReLU flip on the first)"

        check(f"{entry['name']} " + ("the same bits" if args.exact else "GPU vs CPU"), one_entry)
        if args.repeat and entry["name"] == "train_step":
            def repeat():
                again = os.path.join(args.work, "train_step.cuda2")
                run_side("cuda", last["feeds"], again)
                first = os.path.join(args.work, f"train_step{last['attempt']}.cuda")
                for file in outputs:
                    if open(os.path.join(first, file), "rb").read() != open(os.path.join(again, file), "rb").read():
                        return f"{file} differs between two runs"
                return ""
            check("train_step twice on the GPU: the same bytes", repeat)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
