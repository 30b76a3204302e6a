#!/usr/bin/env python3
"""Writes the seed models' tfc_sgemm calls as one line per distinct call.

    tools/bench/gemm/shapes.py [--tfc build/bin/tfc] > tools/bench/gemm/shapes.txt

Each line: model, pass (fwd: the call is in `predict`; bwd: only in
`train_step`), calls per train step, then tfc_sgemm's arguments without the
pointers: batch m n k lda strideA transA ldb strideB transB ldc strideC accumulate
(a tfc_sgemm_pair is its two calls);
a convolution's tfc_sgemm_windows call adds `windows kInner ldbInner pad width`,
a weight gradient's tfc_sgemm_taps call `taps mInner ldaOuter pad width`, and
the same calls by Winograd's minimal filtering (tfc_conv1d_winograd,
tfc_conv1d_winograd_taps) `winograd ...` and `winograd_taps ...` (runtime/cpu/Gemm.h).
"""

import argparse
import collections
import pathlib
import re
import subprocess

MODELS = ["reverse", "set_anomaly", "fleuret_attention", "fleuret_cnn", "encoder_decoder"]
ROOT = pathlib.Path(__file__).resolve().parents[3]


def calls(tfc, model):
    """(entry, args) for every tfc_sgemm call of the model, in order."""
    out = subprocess.run([tfc, "compile", str(ROOT / "models" / f"{model}.tf"), "--emit=buffers"],
                         capture_output=True, text=True, check=True).stdout
    entry = None
    for line in out.splitlines():
        if m := re.match(r"\s*func.func (?:private )?@(\w+)\(", line):
            entry = m.group(1)
        if m := re.search(r"call @tfc_(?:sgemm|conv1d_(winograd))(_windows|_taps|_pair)?\(([^)]*)\)",
                          line):
            args = [a.strip() for a in m.group(3).split(",")]
            kind = (m.group(2) or "").lstrip("_")
            if m.group(1):  # tfc_conv1d_winograd: the windows' arguments; _taps: the taps'
                kind = "winograd_taps" if kind == "taps" else "winograd"
            # A pair is two tfc_sgemm calls' arguments, one after the other.
            for part in ([args[:16], args[16:]] if kind == "pair" else [args]):
                # Constants print as %c<value>[_<n>]; 4, 8 and 12 are the pointers.
                values = tuple(int(re.match(r"%c(\d+)", a).group(1))
                               for i, a in enumerate(part) if i not in (4, 8, 12))
                extra = (kind,) + values[13:] if kind not in ("", "pair") else ()
                yield entry, values[:13] + extra


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tfc", default=str(ROOT / "build" / "bin" / "tfc"))
    args = parser.parse_args()
    print("# model pass calls/step batch m n k lda strideA transA ldb strideB transB ldc strideC acc")
    for model in MODELS:
        per_step = collections.Counter()
        in_predict = set()
        order = []
        for entry, shape in calls(args.tfc, model):
            if shape not in per_step and shape not in in_predict:
                order.append(shape)
            if entry == "train_step":
                per_step[shape] += 1
            if entry == "predict":
                in_predict.add(shape)
        for shape in order:
            tag = "fwd" if shape in in_predict else "bwd"
            print(model, tag, per_step[shape], *shape)


if __name__ == "__main__":
    main()
