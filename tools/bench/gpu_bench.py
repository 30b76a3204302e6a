#!/usr/bin/env python3
"""tfc against PyTorch (eager, torch.compile, torch.compile with CUDA graphs) and JAX jit on one GPU.

Issue 28's `tools/bench --gpu`, run by tools/bench/gpu.sh on the GPU machine. It
builds nothing there: the models come compiled for the GPU from the CPU machine
(tools/bench/gpu-prepare.sh, into BUILD/gpu-bench/cuda), the peers are
tools/bench/peers.py under the machine's own Python. In order, as long as the
time budget lasts (default 500 s, so that the whole run ends within 10 minutes;
every process is bounded by what is left):

  1. a train step of reverse, set_anomaly and medium_encoder:
       tfc      ./MODEL bench --entry train_step --save-batch DIR (the median)
       peers    peers.py --device cuda --precision tf32 --data DIR, each of:
                PyTorch eager, --compile, --compile-mode reduce-overhead
                (CUDA graphs), --framework jax (jit);
  2. reverse's 10 epochs: `./reverse train` (wall time of the process: start-up,
     data, every epoch's validation and the test at the end) against
     `peers.py --entry epochs` (the same epochs on data made on the GPU, timed
     in the process after warm-up steps that compile);
  3. the other seed models' train steps, if time is left.

It prints one table (also OUT/table.md; every number in OUT/results.json and
every command's output in OUT/logs.txt): per workload each side's median, the
ratio best peer / best tfc (above 1: tfc is faster; tfc's fastest build at the
peers' TF32 or finer: fp32, tf32 or persistent, not bf16), each side's peak GPU memory, the
GPU's name (nvidia-smi). A peer that is missing or fails gets a note in its
cell, never a failed run; a peer whose parameter count differs from tfc's is an
error (exit status 1).

--tune: each tfc build is first tuned (`MODEL tune`, its runtime switches chosen by
timing) and timed with the choice, noted in its row; by default the runtime's defaults.

--dry-run-cpu runs the same pipeline on the CPU (`gpu-prepare.sh --dry-run-cpu`'s
binaries, the peers with --device cpu, tiny step counts, one epoch), to test it
where there is no GPU. Needs only the standard library.
"""

import argparse
import datetime
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (parse_info, parse_bench, fmt_ms, fmt_bytes)

STEP_FIRST = ["reverse", "set_anomaly", "medium_encoder"]  # issue 28's rows, before the epochs
STEP_LATER = ["fleuret_cnn", "fleuret_attention", "encoder_decoder"]  # if time is left
EPOCHS_WORKLOAD = "reverse"
# (key, column, peers.py flags)
PEERS = [
    ("eager", "PyTorch eager", ["--framework", "torch"]),
    ("compile", "torch.compile", ["--framework", "torch", "--compile"]),
    ("graphs", "torch.compile + CUDA graphs", ["--framework", "torch", "--compile-mode", "reduce-overhead"]),
    ("jax", "JAX jit", ["--framework", "jax"]),
]
# tfc's own: the default (fp32, graph-replayed) build, and where
# gpu-prepare.sh made them, the same model with its GEMMs on TF32 or bf16
# tensor cores (WORKLOAD.tf32, WORKLOAD.bf16: tfc compile --precision) and
# as one persistent kernel a step (WORKLOAD.persistent: --persistent-kernels).
VARIANTS = ["tf32", "bf16", "persistent"]
SIDES = [("tfc", "tfc")] + [("tfc_" + v, "tfc " + v) for v in VARIANTS] + [
    (k, title) for k, title, _ in PEERS]
# Seconds a process may take at most (less when the budget has less left).
CAP = {"info": 60, "tfc": 90, "tune": 120, "eager": 150, "compile": 240, "graphs": 240, "jax": 180,
       "train": 120}
MIN_START = 15  # seconds: a process is not started with less of the budget left



# tfc's builds that compute at the peers' precision (TF32 matmuls) or finer:
# the ratio's tfc side is the fastest of them, as the peers are each at their
# best; bf16 is coarser and stays out of it.
AS_PRECISE_AS_PEERS = ["tfc", "tfc_tf32", "tfc_persistent"]


def best_ratio(times):
    """"R.RRx (best peer / best tfc build)" for {side key: time}, or "-"."""
    peers = [(t, k) for k, t in times.items() if not k.startswith("tfc")]
    ours = [(t, k) for k, t in times.items() if k in AS_PRECISE_AS_PEERS]
    if not peers or not ours:
        return "-"
    (theirs, peer), (mine, tfc) = min(peers), min(ours)
    return "%.2fx (%s / %s)" % (theirs / mine, dict(SIDES)[peer], dict(SIDES)[tfc])


def parse_args():
    root = os.path.dirname(os.path.dirname(HERE))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", default=os.path.join(root, "build", "gpu-bench"),
                   help="what gpu-prepare.sh wrote (cuda/MODEL, or cpu/MODEL for --dry-run-cpu)")
    p.add_argument("--out", default="", help="table.md, results.json, logs.txt (default DIR/results)")
    p.add_argument("--python", default=os.environ.get("TFC_BENCH_PYTHON", ""),
                   help="the peers' interpreter (default $TFC_BENCH_PYTHON, else python3; "
                        "in a dry run DIR/../bench-venv's when there)")
    p.add_argument("--workloads", default=",".join(STEP_FIRST + STEP_LATER))
    p.add_argument("--no-epochs", action="store_true", help="leave out reverse's epochs")
    p.add_argument("--precision", default="tf32", choices=["tf32", "fp32"],
                   help="the peers' matmuls (tf32: each at its best, as issue 28 measured them)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds for all runs (default 500: with the peers' probe the whole "
                        "run ends within 10 minutes; 3600 with --dry-run-cpu)")
    p.add_argument("--steps", type=int, default=None, help="timed steps (default 100; dry run 2)")
    p.add_argument("--warmup", type=int, default=None,
                   help="untimed steps first (default 10, CUDA graphs need a few; dry run 1)")
    p.add_argument("--min-seconds", type=float, default=None,
                   help="time each side at least this long (default 1; dry run 0)")
    p.add_argument("--tune", action="store_true",
                   help="time each tfc build with the runtime settings `tune` chooses for it, "
                        "run first (20 steps a try; OUT/tuned-settings.txt); default: the "
                        "runtime's defaults")
    p.add_argument("--dry-run-cpu", action="store_true",
                   help="the same pipeline on the CPU: cpu/ binaries, peers on the CPU, 1 thread, "
                        "tiny step counts, 1 epoch")
    args = p.parse_args()
    dry = args.dry_run_cpu
    for name, gpu, cpu in [("budget", 500.0, 3600.0), ("steps", 100, 2), ("warmup", 10, 1),
                           ("min_seconds", 1.0, 0.0)]:
        if getattr(args, name) is None:
            setattr(args, name, cpu if dry else gpu)
    if not args.python:  # the dry run's peers from run.sh's virtualenv, when there
        venv = os.path.join(os.path.dirname(os.path.abspath(args.dir)), "bench-venv", "bin", "python")
        args.python = venv if dry and os.access(venv, os.X_OK) else "python3"
    args.out = args.out or os.path.join(args.dir, "results")
    return args


class Runner:
    """Runs commands within the budget, each in its own process group (torch.compile's
    workers die with it on a timeout), keeping every command's output."""

    def __init__(self, budget, dry):
        self.start = time.monotonic()
        self.deadline = self.start + budget
        self.budget = budget
        self.dry = dry
        self.logs = []

    def left(self):
        return self.deadline - time.monotonic()

    def __call__(self, cmd, kind, env=None):
        """(stdout, error or None, seconds)."""
        left = self.left()
        if left < MIN_START:
            return "", "skipped: the %.0f s budget was spent" % self.budget, 0.0
        timeout = left if self.dry else min(CAP[kind], left)
        started = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True, env=env)
        except OSError as e:
            return "", str(e), 0.0
        try:
            out, err = proc.communicate(timeout=timeout)
            error = None
            if proc.returncode != 0:
                lines = [l for l in (err + out).strip().splitlines() if l.strip()]
                error = "exit %d: %s" % (proc.returncode, lines[-1][:150] if lines else "no output")
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            error = "timed out after %.0f s" % timeout
        seconds = time.monotonic() - started
        self.logs.append("$ %s\n(%.1f s%s)\n%s%s\n" % (" ".join(cmd), seconds,
                                                     ", " + error if error else "", out, err))
        return out, error, seconds


def gpu_name(dry):
    if dry:
        cpu = platform.processor() or "?"
        try:
            cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
        except (OSError, StopIteration):
            pass
        return "no GPU: a dry run on the CPU (%s, %d CPUs)" % (cpu, os.cpu_count())
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        name = r.stdout.strip().splitlines()[0] if r.stdout.strip() else r.stderr.strip()[:100]
        return "%s (nvidia-smi: name, driver, memory)" % name
    except (OSError, subprocess.TimeoutExpired, IndexError) as e:
        return "unknown (nvidia-smi: %s)" % e


PROBE = r"""
import json
v = {}
try:
    import torch
    v["torch"] = torch.__version__
    v["torch_cuda"] = torch.cuda.is_available()
    if v["torch_cuda"]:
        v["torch_device"] = torch.cuda.get_device_name()
except Exception as e:
    v["torch_error"] = str(e)[:150]
try:
    import os
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # a probe only
    import jax
    v["jax"] = jax.__version__
    d = jax.devices()[0]
    v["jax_platform"], v["jax_device"] = d.platform, getattr(d, "device_kind", str(d))
except Exception as e:
    v["jax_error"] = str(e)[:150]
print(json.dumps(v))
"""


def probe_peers(python, dry):
    """({key: why a peer cannot run}, versions)."""
    try:
        r = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=180,
                           env=dict(os.environ, JAX_PLATFORMS="cpu") if dry else None)
        v = json.loads(r.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001 - any failure means: no peers
        v = {"error": "%s: %s" % (python, str(e)[:150])}
    why = {}
    if not v.get("torch"):
        torch_why = "no PyTorch (%s)" % (v.get("torch_error") or v.get("error") or "?")
    elif not dry and not v.get("torch_cuda"):
        torch_why = "PyTorch %s sees no GPU" % v["torch"]
    else:
        torch_why = None
    if torch_why:
        why.update(eager=torch_why, compile=torch_why, graphs=torch_why)
    if not v.get("jax"):
        why["jax"] = "no JAX (%s)" % (v.get("jax_error") or v.get("error") or "?")
    elif not dry and v.get("jax_platform") == "cpu":
        why["jax"] = "JAX %s has no GPU backend here (CPU only)" % v["jax"]
    return why, v


def parse_device_memory(info_text):
    """tfc's device memory: the one allocation `info` plans (parameters, optimizer state,
    every entry's arena, the cuBLASLt workspace)."""
    if m := re.search(r"device memory: one allocation of [^(]*\(([\d,]+) bytes\)", info_text):
        return int(m.group(1).replace(",", ""))
    m = re.search(r"device memory: one allocation of ([\d.]+) (B|KiB|MiB|GiB|TiB)", info_text)
    if not m:
        return None
    return int(float(m.group(1)) * 1024 ** ["B", "KiB", "MiB", "GiB", "TiB"].index(m.group(2)))


def split_sizes(info_text):
    sizes = {}
    if m := re.search(r"^\s*data \w+\((.*)\)", info_text, re.M):
        for key in ["train", "val", "test"]:
            if k := re.search(r"\b%s: (\d+)" % key, m.group(1)):
                sizes[key] = int(k.group(1))
    return sizes


def last_json(stdout):
    try:
        return json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def main():
    args = parse_args()
    dry = args.dry_run_cpu
    target = "cpu" if dry else "cuda"
    bins = os.path.join(args.dir, target)
    work = os.path.join(args.dir, "work")
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    run = Runner(args.budget, dry)
    workloads = [w for w in args.workloads.split(",") if w]
    for w in workloads:
        if w not in STEP_FIRST + STEP_LATER:
            sys.exit("unknown workload '%s' (known: %s)" % (w, ", ".join(STEP_FIRST + STEP_LATER)))
    if not os.path.isdir(bins):
        sys.exit("no %s: run tools/bench/gpu-prepare.sh%s on the CPU machine first"
                 % (bins, " --dry-run-cpu" if dry else ""))
    stamp_path = os.path.join(bins, "STAMP")
    stamp = open(stamp_path).read().strip() if os.path.exists(stamp_path) else "binaries of unknown origin"
    # The dry run skips PyTorch's attention trial (14 CPU steps of the medium encoder).
    device_flags = ["--device", "cpu", "--threads", "1", "--attention", "sdpa"] if dry else ["--device", "cuda", "--precision",
                                                                        args.precision]
    tfc_flags = ["--threads", "1"] if dry else []
    # --tune: each tfc build's settings as `tune` chooses them (kept here, so
    # that a choice on this machine before does not count); else the defaults.
    tuned_cache = os.path.join(os.path.abspath(args.out), "tuned-settings.txt")
    tfc_env = dict(os.environ, TFC_TUNE_CACHE=tuned_cache if args.tune else "none")
    gpu = gpu_name(dry)
    unavailable, versions = probe_peers(args.python, dry)
    print("GPU: %s\npeers: %s" % (gpu, json.dumps(versions)), file=sys.stderr, flush=True)

    infos = {}
    failures = []

    def info_of(w):
        if w not in infos:
            exe = os.path.join(bins, w)
            if not os.access(exe, os.X_OK):
                infos[w] = {"error": "no %s (gpu-prepare.sh compiles it)" % exe}
            else:
                out, err, _ = run([exe, "info"], "info")
                # A budget already spent says so, not that `info` failed.
                infos[w] = {"error": err if err.startswith("skipped:") else "info failed: " + err} if err else dict(
                    bench.parse_info(out), device_bytes=parse_device_memory(out), splits=split_sizes(out))
        return infos[w]

    def hyper(info, total_steps):
        return ["--batch", str(info["batch"]), "--lr", repr(info["lr"]), "--schedule", info["schedule"],
                "--warmup-steps", str(info["warmup_steps"]), "--total-steps", str(total_steps),
                "--clip", repr(info["clip"])]

    def peer_run(w, key, flags, info, extra):
        """One peer's run: its JSON, or {"error": ...}."""
        if key in unavailable:
            return {"error": unavailable[key]}
        if info["optimizer"] != "adam":
            return {"error": "peers implement adam, the model trains with " + info["optimizer"]}
        print("   %s: %s" % (w, key), file=sys.stderr, flush=True)
        cmd = [args.python, os.path.join(HERE, "peers.py"), "--workload", w] + flags + device_flags + extra
        out, err, seconds = run(cmd, key)
        result = None if err else last_json(out)
        if result is None:
            return {"error": err or "no JSON result", "wall_s": seconds}
        result["wall_s"] = seconds
        if result.get("params") != info.get("params"):
            result["error"] = "%d parameters, tfc %s" % (result.get("params", -1), info.get("params"))
            failures.append("%s %s: %s" % (w, key, result["error"]))
        elif not dry and result.get("device") == "cpu":
            result["error"] = "ran on the CPU, not the GPU"
        return result

    rows = []  # {"workload", "kind": "step"|"epochs", "info", "sides": {key: result}}

    def step_row(w):
        info = info_of(w)
        row = {"workload": w, "kind": "step", "info": info, "sides": {}}
        rows.append(row)
        if "error" in info:
            return
        print("== %s: train step" % w, file=sys.stderr, flush=True)
        data = os.path.join(work, "data", w)
        os.makedirs(data, exist_ok=True)
        exe = os.path.join(bins, w)

        def tfc_step(binary, extra=()):
            """One tfc binary's `bench train_step`: its parsed line, or {"error": ...};
            with --tune, after `tune` (its choice in "tuned")."""
            tuned = None
            if args.tune:
                out, err, _ = run([binary] + tfc_flags + ["tune", "--steps", "20", "--warmup", "5"],
                                  "tune", env=tfc_env)
                m = re.search(r"^tune chose (.*)$", out, re.M)
                tuned = ("tune failed: " + err) if err else (m.group(1) if m else "nothing to tune")
            out, err, seconds = run([binary] + tfc_flags + [
                "bench", "--entry", "train_step", "--steps", str(args.steps), "--warmup",
                str(args.warmup), "--min-seconds", repr(args.min_seconds)] + list(extra), "tfc",
                env=tfc_env)
            parsed = None if err else bench.parse_bench(out, "train_step")
            result = dict(parsed, wall_s=seconds) if parsed else {
                "error": err or "no `bench train_step` line"}
            if tuned:
                result["tuned"] = tuned
            return result

        row["sides"]["tfc"] = tfc_step(exe, ["--save-batch", data])
        parsed = "error" not in row["sides"]["tfc"]
        for name in VARIANTS:
            variant = exe + "." + name
            if os.access(variant, os.X_OK):
                row["sides"]["tfc_" + name] = tfc_step(variant)
        steps_per_epoch = max(1, (info["train_samples"] or info["batch"]) // info["batch"])
        extra = ["--entry", "train_step"] + hyper(info, info["epochs"] * steps_per_epoch) + [
            "--steps", str(args.steps), "--warmup", str(args.warmup),
            "--min-seconds", repr(args.min_seconds)]
        if parsed:  # tfc's batch, so that the losses compare
            extra += ["--data", data]
        for key, _, flags in PEERS:
            row["sides"][key] = peer_run(w, key, flags, info, extra)

    def epochs_row(w):
        info = info_of(w)
        row = {"workload": w, "kind": "epochs", "info": info, "sides": {}}
        rows.append(row)
        if "error" in info:
            return
        epochs = 1 if dry else info["epochs"]
        splits = info["splits"]
        steps = epochs * (splits.get("train", info["batch"]) // info["batch"])
        row["epochs"], row["steps"] = epochs, steps
        print("== %s: %d epochs" % (w, epochs), file=sys.stderr, flush=True)
        run_dir = os.path.join(work, "run-" + w)
        cmd = [os.path.join(bins, w)] + tfc_flags + ["train", "--run-dir", run_dir]
        if dry:
            cmd += ["--epochs", str(epochs)]
        out, err, seconds = run(cmd, "train", env=tfc_env)  # reverse's step row tuned it
        tfc = {"epochs_s": seconds} if not err else {"error": err}
        if m := re.search(r"^test.*loss ([\d.]+)\s+accuracy ([\d.]+)", out, re.M):
            tfc.update(test_loss=float(m.group(1)), test_accuracy=float(m.group(2)))
        # Where the process's time went, as `train` says at its end (the steps
        # against start-up, validation, checkpoints and the test).
        if m := re.search(r"^time: [\d.]+ s: (.*)$", out, re.M):
            tfc["parts"] = m.group(1)
        row["sides"]["tfc"] = tfc
        extra = ["--entry", "epochs", "--epochs", str(epochs)] + hyper(info, steps) + [
            "--warmup", str(max(3, args.warmup if not dry else 1)),
            "--train-samples", str(splits.get("train", 50000)),
            "--val-samples", str(splits.get("val", 1000)), "--test-samples", str(splits.get("test", 10000))]
        for key, _, flags in PEERS:
            row["sides"][key] = peer_run(w, key, flags, info, extra)

    def save():
        """OUT's files as they stand: rewritten after every row, so that a run
        killed from outside still leaves the rows it finished."""
        elapsed = time.monotonic() - run.start
        table = render(args, rows, gpu, versions, stamp, elapsed)
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "table.md"), "w") as f:
            f.write(table)
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump({"gpu": gpu, "versions": versions, "stamp": stamp, "args": vars(args),
                       "elapsed_s": elapsed, "rows": rows}, f, indent=1)
        with open(os.path.join(args.out, "logs.txt"), "w") as f:
            f.write("\n".join(run.logs))
        return table, elapsed

    plan = [(step_row, w) for w in STEP_FIRST if w in workloads]
    if not args.no_epochs and EPOCHS_WORKLOAD in workloads:
        plan.append((epochs_row, EPOCHS_WORKLOAD))
    plan += [(step_row, w) for w in STEP_LATER if w in workloads]
    for make_row, w in plan:
        make_row(w)
        save()
    table, elapsed = save()
    print(table)
    print("wrote %s/{table.md,results.json,logs.txt} in %.0f s" % (args.out, elapsed), file=sys.stderr)
    for message in failures:
        print("error: " + message, file=sys.stderr)
    return 1 if failures else 0


def render(args, rows, gpu, versions, stamp, elapsed):
    dry = args.dry_run_cpu
    memory = "max RSS" if dry else "peak GPU memory"
    lines = ["# tfc against PyTorch and JAX on %s (issue 28)" % ("the CPU: a dry run" if dry else "one GPU"), "",
             "- device: %s" % gpu,
             "- peers: PyTorch %s%s, JAX %s%s; %s" % (
                 versions.get("torch") or "-", " (%s)" % versions["torch_device"] if versions.get("torch_device") else "",
                 versions.get("jax") or "-", " (%s: %s)" % (versions.get("jax_platform"), versions.get("jax_device"))
                 if versions.get("jax") else "", "peers' matmuls fp32" if dry else "peers' matmuls " + args.precision
                 + " (tfc computes in fp32)"),
             "- tfc: %s; runtime settings: %s" % (
                 stamp, "each build's as `tune` chose them just before (--tune)" if args.tune
                 else "the defaults"),
             "- %s; %.0f s of runs (budget %.0f s)" % (
                 datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), elapsed, args.budget),
             "",
             "Train step: the median of %d steps (more where they take under %g s) after %d untimed ones "
             "(compilation, CUDA graph capture), each synchronised; every side on tfc's batch "
             "(`bench --save-batch`), from its own initial parameters; PyTorch with fused Adam. "
             "Epochs: tfc's is the wall time of `./reverse train` (start-up, data, each epoch's "
             "validation, the test and the checkpoints included); the peers' is the same epochs in the "
             "process after warm-up steps that compile (imports and compilation not included: see the "
             "details). Ratio: the fastest peer / the fastest tfc build at the peers' precision or finer "
             "(fp32, tf32 or persistent, not bf16; above 1: tfc is faster). Memory: tfc's one "
             "device allocation (`info`: parameters, optimizer state, every entry's arena, the cuBLASLt "
             "workspace); PyTorch's max_memory_allocated, JAX's peak_bytes_in_use%s." % (
                 args.steps, args.min_seconds, args.warmup, "; in the dry run: max RSS" if dry else ""),
             ""]
    head = ["workload", "batch", "params"] + [title for _, title in SIDES] + ["best peer / best tfc"] + [
        "%s %s" % (title, memory) for _, title in SIDES]
    body, details = [], []
    for row in rows:
        info, sides, w = row["info"], row["sides"], row["workload"]
        epochs = row["kind"] == "epochs"
        name = "%s, %d epoch%s (%s steps)" % (w, row["epochs"], "s" * (row["epochs"] != 1),
                                              "{:,}".format(row["steps"])) if epochs and "epochs" in row \
            else (w + (" epochs" if epochs else " train step"))
        if "error" in info:
            body.append([name, "-", "-", info["error"]] + [""] * (len(head) - 4))
            continue
        value = (lambda r: r.get("epochs_s")) if epochs else (lambda r: r.get("median_ms"))
        fmt = (lambda v: "%.2f s" % v) if epochs else (lambda v: bench.fmt_ms(v) + " ms")
        ok = {k: r for k, r in sides.items() if not r.get("error") and value(r) is not None}

        def cell(key):
            if key in ok:
                return fmt(value(ok[key]))
            r = sides.get(key)
            return r["error"] if r else ("not run" if not key.startswith("tfc") else "-")

        ratio = best_ratio({k: value(r) for k, r in ok.items()})

        def mem(key):
            r = sides.get(key)
            if not r or r.get("error"):
                return "-"
            if dry:
                return bench.fmt_bytes(r["max_rss_kib"] * 1024) if r.get("max_rss_kib") else "-"
            if key.startswith("tfc"):
                return bench.fmt_bytes(info.get("device_bytes"))
            return bench.fmt_bytes(r.get("peak_device_bytes"))

        body.append([name, str(info["batch"]), "{:,}".format(info["params"])] + [cell(k) for k, _ in SIDES]
                    + [ratio] + [mem(k) for k, _ in SIDES])
        for key, title in SIDES:
            r = sides.get(key)
            if not r:
                continue
            if epochs:
                result = ("test accuracy %.4f" % r["test_accuracy"]) if r.get("test_accuracy") is not None else ""
                extra = ("warm-up %.1f s, " % r["warmup_s"]) if r.get("warmup_s") is not None else ""
                extra += ("%s, " % r["parts"]) if r.get("parts") else ""
            else:
                result = ("loss %.4g" % r["loss"]) if r.get("loss") is not None else ""
                extra = ("min %s ms, " % bench.fmt_ms(r["min_ms"])) if r.get("min_ms") is not None else ""
            note = ", ".join(x for x in [r.get("tuned") and "tune: " + r["tuned"],
                                         r.get("attention") and "attention " + r["attention"],
                                         r.get("adam") and "Adam " + r["adam"],
                                         r.get("precision"), r.get("device_name")] if x)
            details.append([name, title, cell(key) if key in ok else "-",
                            (extra + ("process %.2f s" % r["wall_s"] if r.get("wall_s") else "")).rstrip(", "),
                            result, r.get("error") or note])

    def md(header, table):
        out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        out += ["| " + " | ".join(str(c).replace("|", "/") for c in r) + " |" for r in table]
        return out

    lines += md(head, body)
    lines += ["", "Every run:", ""]
    lines += md(["workload", "side", "time", "also", "result", "note"], details)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
