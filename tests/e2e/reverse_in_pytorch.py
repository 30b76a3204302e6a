"""Loads parameters written by `reverse init` into PyTorch, by name.

Usage: reverse_in_pytorch.py PARAMS.safetensors

The file is read with the format's definition alone (an 8-byte header size,
a JSON header, raw little-endian data), then loaded with
`load_state_dict(strict=True)` into a PyTorch module whose attribute names
are tfc's (the UvA tutorial's layers). Without torch the check stops after
the format and the names; exit 77 tells the caller numpy is missing.
"""
import json
import struct
import sys

try:
    import numpy as np
except ImportError:
    sys.exit(77)

EXPECTED = {
    "input_net.weight": (32, 10), "input_net.bias": (32,),
    "encoder.0.self_attn.qkv.weight": (96, 32), "encoder.0.self_attn.qkv.bias": (96,),
    "encoder.0.self_attn.out.weight": (32, 32), "encoder.0.self_attn.out.bias": (32,),
    "encoder.0.norm1.weight": (32,), "encoder.0.norm1.bias": (32,),
    "encoder.0.linear1.weight": (64, 32), "encoder.0.linear1.bias": (64,),
    "encoder.0.linear2.weight": (32, 64), "encoder.0.linear2.bias": (32,),
    "encoder.0.norm2.weight": (32,), "encoder.0.norm2.bias": (32,),
    "linear.weight": (32, 32), "linear.bias": (32,),
    "layer_norm.weight": (32,), "layer_norm.bias": (32,),
    "output.weight": (10, 32), "output.bias": (10,),
}


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", (name, info["dtype"])
        begin, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(info["shape"])
    return tensors


def main():
    tensors = read_safetensors(sys.argv[1])
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if shapes != EXPECTED:
        print("names or shapes differ from the PyTorch module's:", sorted(set(shapes.items()) ^ set(EXPECTED.items())))
        return 1
    if not all(np.isfinite(t).all() for t in tensors.values()):
        print("non-finite parameter values")
        return 1
    try:
        import torch
        from torch import nn
    except ImportError:
        print("format and names match; torch is not installed, load_state_dict skipped")
        return 0

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(32, 96)
            self.out = nn.Linear(32, 32)

    class EncoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attn = SelfAttention()
            self.norm1 = nn.LayerNorm(32)
            self.linear1 = nn.Linear(32, 64)
            self.linear2 = nn.Linear(64, 32)
            self.norm2 = nn.LayerNorm(32)

    class Reverse(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_net = nn.Linear(10, 32)
            self.encoder = nn.ModuleList([EncoderLayer()])
            self.linear = nn.Linear(32, 32)
            self.layer_norm = nn.LayerNorm(32)
            self.output = nn.Linear(32, 10)

    model = Reverse()
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in tensors.items()}, strict=True)
    print("loaded into PyTorch with strict=True")
    return 0


if __name__ == "__main__":
    sys.exit(main())
