"""params.py BINARY PARAMS.safetensors: a model's parameters as its manifest
lists them (name, shape, initialiser) beside what `init` drew for each
(min, max, mean, std over the elements). Pure Python (no numpy)."""
import json
import math
import struct
import sys

binary, path = sys.argv[1], sys.argv[2]
data = open(binary, "rb").read()
start = data.find(b'{"batch":')  # llvm::json writes keys sorted
manifest = json.loads(data[start:data.find(b"\0", start)])

raw = open(path, "rb").read()
length = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + length])
body = raw[8 + length:]

for p in manifest["params"]:
    init = p["init"]
    kind = init["kind"] + (f"({init['scale']:g})" if init["kind"] in ("normal", "uniform") else "")
    entry = header[p["name"]]
    begin, end = entry["data_offsets"]
    values = struct.unpack(f"<{(end - begin) // 4}f", body[begin:end])
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    print(f"{p['name']} {entry['shape']} {kind}: min {min(values):.4f} max {max(values):.4f} "
          f"mean {mean:.4f} std {std:.4f}")
