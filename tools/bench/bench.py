#!/usr/bin/env python3
"""Drives the benchmark: tfc against PyTorch eager and JAX (jax.jit) on the seed models.

For each workload (models/NAME.tf): `tfc compile` to a linked binary (timed), `./NAME
info` (batch, parameter count, planned arena peaks, the train block), then every
configuration in a fresh process pinned to N CPUs, N in --threads:

  tfc     ./NAME --threads N bench --entry E --steps S --warmup W
  peers   PYTHON tools/bench/peers.py --framework torch|jax --entry E --threads N ...

and one table (stdout and BUILD/bench/table.md; raw results in results.json):
per workload and entry the median milliseconds per call of each side at its best
thread count, the ratios peer / tfc (above 1: tfc is faster), the peak memory
(tfc: the planned arena of `info` and the process's max RSS; peers: max RSS) and
the compile time. Needs only the standard library; the peers run under --python.
A peer that is missing or fails gets a note in its cell, never a failed run; a
peer whose parameter count differs from tfc's is an error (exit status 1).
"""

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time

WORKLOADS = ["reverse", "set_anomaly", "fleuret_cnn", "fleuret_attention", "encoder_decoder"]
# Known but not run by default: a CPU train step of the medium encoder takes ~10 s.
KNOWN = WORKLOADS + ["medium_encoder"]
ENTRIES = ["train_step", "predict"]
PEERS = [("torch", "PyTorch"), ("jax", "JAX")]
HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)), help="the tfc checkout")
    p.add_argument("--build-dir", required=True, help="holds bin/tfc and lib/libtfc_runtime.a")
    p.add_argument("--python", default="", help="the peers' interpreter (empty: no peers)")
    p.add_argument("--peer-notes", default="", help="JSON {torch: why, jax: why} of failed installs")
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--threads", default="1,2", help="thread counts to try; each side reports its best")
    p.add_argument("--steps", type=int, default=30, help="timed calls per configuration")
    p.add_argument("--min-seconds", type=float, default=1.0,
                   help="time each configuration at least this long, past --steps if need be "
                        "(a millisecond step timed 30 times is spoiled by one busy moment)")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls before them")
    p.add_argument("--timeout", type=int, default=900, help="seconds per process")
    return p.parse_args()


def log(message):
    print(message, file=sys.stderr, flush=True)


def pin(n):
    """A preexec_fn: run the child on the first n CPUs."""
    cpus = sorted(os.sched_getaffinity(0))[:n]
    return lambda: os.sched_setaffinity(0, cpus)


def run(cmd, log_path, timeout, threads=None):
    """Runs cmd; returns (stdout, error or None). Both streams go to log_path."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=pin(threads) if threads else None)
    except subprocess.TimeoutExpired:
        return "", "timed out after %d s" % timeout
    except OSError as e:
        return "", str(e)
    with open(log_path, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode != 0:
        lines = [l for l in (r.stderr + r.stdout).strip().splitlines() if l.strip()]
        return r.stdout, "exit %d: %s" % (r.returncode, lines[-1][:120] if lines else "no output")
    return r.stdout, None


def number(text):
    return int(text.replace(",", ""))


def parse_info(text):
    """What the harness needs from `./MODEL info`."""
    info = {"entries": {}, "lr": 1e-3, "optimizer": "adam", "schedule": "constant",
            "warmup_steps": 0, "clip": 0.0, "epochs": 1, "train_samples": None}
    if m := re.search(r"compiled for batch (\d+)", text):
        info["batch"] = int(m.group(1))
    if m := re.search(r"^\s*total\s+([\d,]+)\s*$", text, re.M):
        info["params"] = number(m.group(1))
    for m in re.finditer(r"^\s*(\w+): peak of intermediate buffers ([\d,]+) bytes", text, re.M):
        info["entries"][m.group(1)] = number(m.group(2))
    if m := re.search(r"^\s*optimizer (\w+)\((.*)\)", text, re.M):
        info["optimizer"] = m.group(1)
        if lr := re.search(r"lr: ([0-9.eE+-]+)", m.group(2)):
            info["lr"] = float(lr.group(1))
    if m := re.search(r"^\s*schedule (\w+)(?:\((.*)\))?", text, re.M):
        info["schedule"] = m.group(1)
        if w := re.search(r"warmup: (\d+)", m.group(2) or ""):
            info["warmup_steps"] = int(w.group(1))
    if m := re.search(r"^\s*clip_grad_norm ([0-9.eE+-]+)", text, re.M):
        info["clip"] = float(m.group(1))
    if m := re.search(r"^\s*epochs (\d+)", text, re.M):
        info["epochs"] = int(m.group(1))
    if m := re.search(r"^\s*data \w+\(.*\btrain: (\d+)", text, re.M):
        info["train_samples"] = int(m.group(1))
    return info


def parse_bench(stdout, entry):
    """`bench ENTRY median_ms=... min_ms=... k=v ...` -> dict."""
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[0] == "bench" and parts[1] == entry:
            out = {}
            for kv in parts[2:]:
                k, _, v = kv.partition("=")
                try:
                    out[k] = float(v)
                except ValueError:
                    out[k] = v
            return out
    return None


def peer_versions(python):
    code = ("import json, importlib\nv = {}\nfor m in ('torch', 'jax', 'numpy'):\n"
            "    try:\n        v[m] = importlib.import_module(m).__version__\n"
            "    except Exception as e:\n        v[m] = None\n        v[m + '_error'] = str(e)[:200]\n"
            "print(json.dumps(v))")
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
        return json.loads(r.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001 - any failure means: no peers
        return {"error": str(e)}


def fmt_ms(ms):
    return "%.3g" % ms if ms < 1 else ("%.1f" % ms if ms < 1000 else "%.0f" % ms)


def fmt_bytes(b):
    if b is None:
        return "-"
    if b >= 1 << 20:
        return "%.1f MiB" % (b / 1048576)
    return "%.0f KiB" % (b / 1024) if b >= 1024 else "%d B" % b


def best(results):
    """The fastest (lowest median) of a side's successful runs, or None."""
    ok = [r for r in results if r.get("median_ms") is not None and not r.get("error")]
    return min(ok, key=lambda r: r["median_ms"]) if ok else None


def main():
    args = parse_args()
    build = os.path.abspath(args.build_dir)
    tfc = os.path.join(build, "bin", "tfc")
    out_dir = os.path.join(build, "bench")
    bin_dir, logs = os.path.join(out_dir, "bin"), os.path.join(out_dir, "logs")
    os.makedirs(bin_dir, exist_ok=True)
    os.makedirs(logs, exist_ok=True)
    threads = [int(t) for t in args.threads.split(",") if t]
    workloads = [w for w in args.workloads.split(",") if w]
    for w in workloads:
        if w not in KNOWN:
            sys.exit("unknown workload '%s' (known: %s)" % (w, ", ".join(KNOWN)))
    if not os.access(tfc, os.X_OK):
        sys.exit("no tfc at %s: build it first (tools/bench/run.sh does)" % tfc)

    # Which peers can run at all, and why not.
    notes = json.loads(open(args.peer_notes).read()) if args.peer_notes and os.path.exists(args.peer_notes) else {}
    versions = peer_versions(args.python) if args.python else {"error": "no peer interpreter"}
    unavailable = {}
    for fw, name in PEERS:
        if not versions.get(fw) or not versions.get("numpy"):
            why = versions.get(fw + "_error") or versions.get("numpy_error") or versions.get("error")
            unavailable[fw] = notes.get(fw) or "%s not available (%s)" % (name, (why or "not installed")[:80])
    log("peers: %s" % json.dumps(versions))

    results = {}  # workload -> {"info", "compile_s", "runs": [..]}
    failures = []
    for w in workloads:
        model = os.path.join(args.root, "models", w + ".tf")
        exe = os.path.join(bin_dir, w)
        rec = results[w] = {"runs": []}
        log("== %s: tfc compile" % w)
        # The fastest of three compiles: the work is deterministic, so a slower
        # one only measures the machine's other load.
        times = []
        for _ in range(3):
            start = time.perf_counter()
            _, err = run([tfc, "compile", model, "-o", exe], os.path.join(logs, w + ".compile.log"), args.timeout)
            if err:
                break
            times.append(time.perf_counter() - start)
        rec["compile_s"] = None if err else min(times)
        if err:
            rec["error"] = "tfc compile failed: " + err
            failures.append("%s: %s" % (w, rec["error"]))
            continue
        stdout, err = run([exe, "info"], os.path.join(logs, w + ".info.log"), args.timeout)
        if err:
            rec["error"] = "info failed: " + err
            failures.append("%s: %s" % (w, rec["error"]))
            continue
        info = rec["info"] = parse_info(stdout)
        entries = [e for e in ENTRIES if e in info["entries"]]
        steps_per_epoch = max(1, (info["train_samples"] or info["batch"]) // info["batch"])
        total_steps = info["epochs"] * steps_per_epoch

        # The batch tfc times, for the peers to time too (bench --save-batch).
        batch_dir = os.path.join(out_dir, "data", w)
        os.makedirs(batch_dir, exist_ok=True)
        for n in threads:
            for e in entries:
                log("   tfc %s, %d thread(s)" % (e, n))
                stdout, err = run([exe, "--threads", str(n), "bench", "--entry", e, "--steps",
                                   str(args.steps), "--warmup", str(args.warmup),
                                   "--min-seconds", repr(args.min_seconds),
                                   "--save-batch", batch_dir],
                                  os.path.join(logs, "%s.tfc.%s.t%d.log" % (w, e, n)), args.timeout, n)
                r = {"side": "tfc", "entry": e, "threads": n}
                parsed = None if err else parse_bench(stdout, e)
                if parsed:
                    r.update(median_ms=parsed["median_ms"], min_ms=parsed["min_ms"],
                             max_rss_kib=parsed.get("max_rss_kib"), loss=parsed.get("loss"))
                else:
                    r["error"] = err or "no `bench %s` line" % e
                rec["runs"].append(r)
                for fw, name in PEERS:
                    r = {"side": fw, "entry": e, "threads": n}
                    rec["runs"].append(r)
                    if fw in unavailable:
                        r["error"] = unavailable[fw]
                        continue
                    if e == "train_step" and info["optimizer"] != "adam":
                        r["error"] = "peers implement adam, the model trains with " + info["optimizer"]
                        continue
                    log("   %s %s, %d thread(s)" % (name, e, n))
                    cmd = [args.python, os.path.join(HERE, "peers.py"), "--framework", fw,
                           "--workload", w, "--entry", e, "--threads", str(n),
                           "--batch", str(info["batch"]), "--lr", repr(info["lr"]),
                           "--schedule", info["schedule"], "--warmup-steps", str(info["warmup_steps"]),
                           "--total-steps", str(total_steps), "--clip", repr(info["clip"]),
                           "--steps", str(args.steps), "--warmup", str(args.warmup),
                           "--min-seconds", repr(args.min_seconds), "--data", batch_dir]
                    stdout, err = run(cmd, os.path.join(logs, "%s.%s.%s.t%d.log" % (w, fw, e, n)),
                                      args.timeout)
                    try:
                        peer = json.loads(stdout.strip().splitlines()[-1]) if not err else None
                    except (ValueError, IndexError):
                        peer, err = None, "no JSON result"
                    if peer is None:
                        r["error"] = "%s failed: %s" % (name, err)
                        continue
                    r.update(median_ms=peer["median_ms"], min_ms=peer["min_ms"],
                             max_rss_kib=peer["max_rss_kib"], loss=peer.get("loss"),
                             params=peer["params"],
                             note=", ".join(x for x in [peer.get("adam") and "Adam " + peer["adam"],
                                                        peer.get("attention") and "attention " + peer["attention"]] if x))
                    if peer["params"] != info.get("params"):
                        r["error"] = "%s has %d parameters, tfc %s" % (name, peer["params"], info.get("params"))
                        failures.append("%s %s: %s" % (w, e, r["error"]))
                        r["median_ms"] = None

    table = render(args, results, workloads, threads, versions)
    print(table)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"versions": versions, "args": vars(args), "results": results}, f, indent=1)
    log("wrote %s/table.md and results.json (logs in %s)" % (out_dir, logs))
    for message in failures:
        log("error: " + message)
    return 1 if failures else 0


def render(args, results, workloads, threads, versions):
    cpu = platform.processor() or ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    lines = ["# tfc against PyTorch eager and JAX (jax.jit), CPU", "",
             "%s; %s, %d CPUs; load average %s at the end; PyTorch %s, JAX %s." % (
                 datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), cpu, os.cpu_count(),
                 " ".join("%.2f" % x for x in os.getloadavg()), versions.get("torch") or "-",
                 versions.get("jax") or "-"),
             "Milliseconds per call: the median of %d calls (more where they take under %g s) after "
             "%d warm-up calls, each side at its "
             "best of %s thread(s) (the winner in brackets; every process pinned to that many CPUs). "
             "Ratios are peer / tfc: above 1, tfc is faster. Memory: tfc's planned arena "
             "(`info`) and each process's max RSS (that of the fastest configuration). "
             "tfc compile: the fastest of three, to a linked binary. Every side runs on the "
             "batch tfc times (the first of its train block's dataset, `bench --save-batch`) "
             "from its own initial parameters." % (
                 args.steps, args.min_seconds, args.warmup, ", ".join(map(str, threads))), ""]
    head = ["workload", "batch", "params", "entry", "tfc ms", "PyTorch ms", "JAX ms", "PyTorch / tfc",
            "JAX / tfc", "tfc arena", "tfc RSS", "PyTorch RSS", "JAX RSS", "tfc compile"]
    rows = []
    details = []
    for w in workloads:
        rec = results[w]
        if "info" not in rec:
            rows.append([w] + ["-"] * 3 + [rec.get("error", "failed")] + [""] * (len(head) - 5))
            continue
        info = rec["info"]
        first = True
        for e in ENTRIES:
            if e not in info["entries"]:
                continue
            by_side = {s: [r for r in rec["runs"] if r["side"] == s and r["entry"] == e]
                       for s in ["tfc"] + [fw for fw, _ in PEERS]}
            bests = {s: best(rs) for s, rs in by_side.items()}

            def cell(s):
                b = bests[s]
                if b:
                    return "%s (%dt)" % (fmt_ms(b["median_ms"]), b["threads"])
                errors = sorted({r.get("error", "") for r in by_side[s]})
                return "; ".join(x for x in errors if x) or "-"

            def ratio(s):
                if bests[s] and bests["tfc"]:
                    return "%.2fx" % (bests[s]["median_ms"] / bests["tfc"]["median_ms"])
                return "-"

            def rss(s):
                b = bests[s]
                return fmt_bytes(b["max_rss_kib"] * 1024) if b and b.get("max_rss_kib") else "-"

            compile_s = rec.get("compile_s")
            rows.append([w if first else "", str(info["batch"]) if first else "",
                         "{:,}".format(info["params"]) if first else "", e, cell("tfc"), cell("torch"),
                         cell("jax"), ratio("torch"), ratio("jax"), fmt_bytes(info["entries"][e]),
                         rss("tfc"), rss("torch"), rss("jax"),
                         ("%.1f s" % compile_s if compile_s is not None else "-") if first else ""])
            first = False
            for s, rs in by_side.items():
                for r in rs:
                    details.append([w, e, {"tfc": "tfc", "torch": "PyTorch", "jax": "JAX"}[s], str(r["threads"]),
                                    fmt_ms(r["median_ms"]) if r.get("median_ms") is not None else "-",
                                    fmt_ms(r["min_ms"]) if r.get("min_ms") is not None else "-",
                                    fmt_bytes(r["max_rss_kib"] * 1024) if r.get("max_rss_kib") else "-",
                                    "%.4g" % r["loss"] if r.get("loss") is not None else "",
                                    r.get("error") or r.get("note", "")])

    def md(header, body):
        out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        out += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in body]
        return out

    lines += md(head, rows)
    lines += ["", "Every configuration (loss: after the last timed train step; it falls as the "
              "steps repeat one batch):", ""]
    lines += md(["workload", "entry", "side", "threads", "median ms", "min ms", "max RSS", "loss", "note"],
                details)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
