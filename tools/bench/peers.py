#!/usr/bin/env python3
"""The peers of tfc's seed models: PyTorch eager and JAX (jax.jit), side by side.

One process times one configuration and prints one JSON line:

    peers.py --framework torch --workload reverse --entry train_step --threads 1 \
        --batch 128 --lr 5e-4 --schedule cosine_warmup --warmup-steps 50 \
        --total-steps 3900 --clip 5.0 --steps 30 --warmup 5

    {"framework": "torch", "workload": "reverse", "entry": "train_step", "threads": 1,
     "median_ms": ..., "min_ms": ..., "mean_ms": ..., "params": 10346, "max_rss_kib": ...}

Each model mirrors its models/NAME.tf file layer by layer (the DSL's layers in
compiler/dsl/Layers.cpp): the same shapes, parameter counts (tools/bench/bench.py
checks them against `./MODEL info`), dropout sites, loss and metrics; the train
step is Adam (PyTorch's definition) with the train block's lr, clipping by
global norm and the learning-rate schedule where the block has them.

PyTorch runs at its best: fused Adam (the fastest of its CPU Adams), and for
attention whichever of its fused scaled_dot_product_attention and the tutorials'
two matmuls a short trial in the same process finds faster (the JSON says which).

The thread count is fixed before torch or jax is imported: the process is pinned
to the first N CPUs (os.sched_setaffinity) and the libraries' own knobs are set
(OMP/MKL env vars and torch.set_num_threads; XLA's Eigen pool for JAX).
Only the step (or forward) call is inside the clock; the batch is made before.

On the GPU (`--device cuda`, tools/bench/gpu.sh): PyTorch on CUDA, eager or
`--compile` (torch.compile of the loss, forward and backward; `--compile-mode
reduce-overhead` is torch's name for the same with CUDA graphs), fused Adam,
TF32 matmuls with `--precision tf32` (bf16 autocast with `--precision bf16`);
JAX on whatever device it sees (the GPU when its CUDA plugin is installed: the
JSON's device says which), `--precision tf32|fp32` as its default matmul
precision. Each step is synchronised (torch.cuda.synchronize, or
jax.block_until_ready on the new parameters) before the clock stops, and the
JSON has the device, its name and the peak device memory (torch's
max_memory_allocated, JAX's peak_bytes_in_use). No CPU pinning there unless
--threads says so. `--entry epochs` trains the reverse tasks (reverse,
medium_encoder) for whole epochs on data made on the device, validating every
epoch and testing at the end, as `./MODEL train` does.
"""

import argparse
import json
import math
import os
import resource
import sys
import time

WORKLOADS = ["reverse", "set_anomaly", "fleuret_cnn", "fleuret_attention", "encoder_decoder",
             "medium_encoder"]
# The reverse tasks (reverse_sequences): classes and sequence length, for --entry epochs.
REVERSE_TASKS = {"reverse": (10, 16), "medium_encoder": (1000, 256)}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--framework", choices=["torch", "jax"], required=True)
    p.add_argument("--workload", choices=WORKLOADS, required=True)
    p.add_argument("--entry", choices=["train_step", "predict", "epochs"], required=True,
                   help="epochs: --epochs of training on the reverse tasks, timed as a whole")
    p.add_argument("--threads", type=int, default=None,
                   help="pin to the first N CPUs (default 1; with --device cuda: no pinning)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                   help="cuda: PyTorch on the GPU, JAX on whatever device it sees (not forced"
                        " to the CPU)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "bf16"],
                   help="on the GPU: fp32 (no TF32), tf32 (TF32 matmuls allowed) or bf16 "
                        "(PyTorch's autocast; fp32 weights and optimizer)")
    p.add_argument("--compile", action="store_true", help="PyTorch: torch.compile the loss")
    p.add_argument("--compile-mode", default=None,
                   choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"],
                   help="torch.compile's mode (reduce-overhead: with CUDA graphs); implies --compile")
    p.add_argument("--attention", default="auto", choices=["auto", "sdpa", "matmul"],
                   help="PyTorch: auto times both briefly in eager mode and keeps the faster; "
                        "compiled, auto is sdpa")
    p.add_argument("--epochs", type=int, default=10, help="--entry epochs: how many")
    p.add_argument("--train-samples", type=int, default=50000, help="--entry epochs")
    p.add_argument("--val-samples", type=int, default=1000, help="--entry epochs")
    p.add_argument("--test-samples", type=int, default=10000, help="--entry epochs")
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--schedule", default="constant", choices=["constant", "cosine_warmup"])
    p.add_argument("--warmup-steps", type=int, default=0, help="the schedule's warmup")
    p.add_argument("--total-steps", type=int, default=1, help="the schedule's T")
    p.add_argument("--clip", type=float, default=0.0, help="clip_grad_norm (0: none)")
    p.add_argument("--data", default="",
                   help="a directory of NAME.npy inputs (the tfc binary's batch: bench --save-batch);"
                        " without it, synthetic inputs of the same shapes")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--min-seconds", type=float, default=0.0,
                   help="go on timing steps past --steps until they add up to this long "
                        "(the loss reported stays the one after --steps), as tfc's bench")
    args = p.parse_args()
    if args.compile_mode:
        args.compile = True
    elif args.compile:
        args.compile_mode = "default"
    if args.threads is None:
        args.threads = 1 if args.device == "cpu" else 0
    if args.device == "cpu" and args.precision != "fp32":
        p.error("--precision %s is for --device cuda" % args.precision)
    if args.entry == "epochs" and args.workload not in REVERSE_TASKS:
        p.error("--entry epochs makes the data of the reverse tasks only (%s)" % ", ".join(REVERSE_TASKS))
    return args


def limit_threads(n, device="cpu"):
    """Before importing torch or jax: pin to N CPUs and size every pool to N
    (N = 0: leave both alone, as on the GPU by default)."""
    if device != "cpu" and n == 0:
        return
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cpus[:n])
    for var in ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"]:
        os.environ[var] = str(n)
    if device == "cpu":
        os.environ["JAX_PLATFORMS"] = "cpu"
    if n == 1 and device == "cpu":
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false").strip()


def schedule_factor(t, schedule, warmup, total):
    """The UvA CosineWarmupScheduler, as tfc's cosine_warmup: t = steps taken."""
    if schedule == "constant":
        return 1.0
    f = 0.5 * (1 + math.cos(math.pi * t / max(total, 1)))
    if warmup > 0 and t <= warmup:
        f *= t / warmup
    return f


def load_data(workload, batch, directory):
    """The batch tfc times (`bench --save-batch`): its inputs by name, checked
    against make_data's names and shapes."""
    import numpy as np
    expected = make_data(workload, batch)
    data = {}
    for name, like in expected.items():
        array = np.load(os.path.join(directory, name + ".npy"))
        if array.shape != like.shape or array.dtype != like.dtype:
            raise ValueError("%s.npy is %s %s, the peers expect %s %s"
                             % (name, array.dtype, array.shape, like.dtype, like.shape))
        data[name] = np.ascontiguousarray(array)
    return data


def make_data(workload, batch):
    """One batch of synthetic but valid inputs (numpy), as the tfc datasets shape them."""
    import numpy as np
    rng = np.random.default_rng(0)
    if workload in REVERSE_TASKS:  # tokens, the label is the reversed sequence
        classes, seq = REVERSE_TASKS[workload]
        tokens = rng.integers(0, classes, size=(batch, seq), dtype=np.int32)
        return {"tokens": tokens, "labels": np.ascontiguousarray(tokens[:, ::-1])}
    if workload == "set_anomaly":  # 10 feature vectors of 512, the odd one's index
        return {"features": rng.standard_normal((batch, 10, 512), dtype=np.float32),
                "labels": rng.integers(0, 10, size=(batch,), dtype=np.int32)}
    if workload in ("fleuret_cnn", "fleuret_attention"):  # normalised sequences
        return {"input": rng.standard_normal((batch, 1, 100), dtype=np.float32),
                "target": rng.standard_normal((batch, 1, 100), dtype=np.float32)}
    if workload == "encoder_decoder":  # two corners of a square in, two out
        return {"source": rng.uniform(-1, 1, size=(batch, 2, 2)).astype(np.float32),
                "target": rng.uniform(-1, 1, size=(batch, 2, 2)).astype(np.float32)}
    raise ValueError(workload)


def positional_encoding(length, dim):
    """PE[pos, 2i] = sin(pos w_i), PE[pos, 2i+1] = cos(pos w_i), w_i = 10000^(-2i/dim)."""
    import numpy as np
    pe = np.zeros((length, dim), dtype=np.float32)
    pos = np.arange(length)[:, None]
    w = np.exp(np.arange(0, dim, 2) * (-math.log(10000.0) / dim))
    pe[:, 0::2] = np.sin(pos * w)
    pe[:, 1::2] = np.cos(pos * w)
    return pe


# ===========================================================================
# PyTorch eager
# ===========================================================================

ATTENTION = {"impl": "sdpa"}  # or "matmul"; run_torch picks the faster

def torch_models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def attend(q, k, v, mask=None, scale=None):
        """softmax(q k^T * scale, masked) v: PyTorch's fused SDPA or the
        tutorials' two matmuls, whichever run_torch found faster."""
        if ATTENTION["impl"] == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
        logits = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5 if scale is None else scale)
        if mask is not None:
            logits = logits.masked_fill(~mask, float("-inf"))
        return torch.softmax(logits, -1) @ v

    class MultiheadAttention(nn.Module):
        """The UvA tutorial's: one fused qkv projection each head chunks (a q
        and a fused kv projection for cross-attention), xavier weights, zero
        biases, an out projection."""

        def __init__(self, dim, heads, cross=False):
            super().__init__()
            self.heads, self.cross = heads, cross
            if cross:
                self.q, self.kv = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim)
            else:
                self.qkv = nn.Linear(dim, 3 * dim)
            self.out = nn.Linear(dim, dim)
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    nn.init.xavier_uniform_(m.weight)
                    nn.init.zeros_(m.bias)

        def forward(self, x, memory=None, mask=None):
            b, t, d = x.shape
            h = self.heads
            hd = d // h
            if self.cross:
                s = memory.shape[1]
                q = self.q(x).reshape(b, t, h, hd).permute(0, 2, 1, 3)
                k, v = self.kv(memory).reshape(b, s, h, 2 * hd).permute(0, 2, 1, 3).chunk(2, -1)
            else:
                q, k, v = self.qkv(x).reshape(b, t, h, 3 * hd).permute(0, 2, 1, 3).chunk(3, -1)
            values = attend(q, k, v, mask)
            return self.out(values.permute(0, 2, 1, 3).reshape(b, t, d))

    class FeedForward(nn.Module):  # linear1 -> dropout -> relu -> linear2
        def __init__(self, dim, ffn, rate):
            super().__init__()
            self.linear1, self.linear2 = nn.Linear(dim, ffn), nn.Linear(ffn, dim)
            self.dropout = nn.Dropout(rate)

        def forward(self, x):
            return self.linear2(F.relu(self.dropout(self.linear1(x))))

    class EncoderBlock(nn.Module):
        def __init__(self, dim, heads, ffn, rate, pre):
            super().__init__()
            self.pre = pre
            self.self_attn = MultiheadAttention(dim, heads)
            self.ffn = FeedForward(dim, ffn, rate)
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.dropout = nn.Dropout(rate)

        def forward(self, x, mask=None):
            if self.pre:
                x = x + self.dropout(self.self_attn(self.norm1(x), mask=mask))
                return x + self.dropout(self.ffn(self.norm2(x)))
            x = self.norm1(x + self.dropout(self.self_attn(x, mask=mask)))
            return self.norm2(x + self.dropout(self.ffn(x)))

    class Encoder(nn.Module):  # post-norm (UvA) or pre-norm with a final norm (the book)
        def __init__(self, layers, dim, heads, ffn, rate, pre):
            super().__init__()
            self.layers = nn.ModuleList(EncoderBlock(dim, heads, ffn, rate, pre) for _ in range(layers))
            self.norm = nn.LayerNorm(dim) if pre else None

        def forward(self, x, mask=None):
            for layer in self.layers:
                x = layer(x, mask)
            return self.norm(x) if self.norm is not None else x

    class DecoderBlock(nn.Module):  # pre-norm: self, cross, feed-forward
        def __init__(self, dim, heads, ffn, rate):
            super().__init__()
            self.self_attn = MultiheadAttention(dim, heads)
            self.cross_attn = MultiheadAttention(dim, heads, cross=True)
            self.ffn = FeedForward(dim, ffn, rate)
            self.norm1, self.norm2, self.norm3 = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.dropout = nn.Dropout(rate)

        def forward(self, x, memory, mask):
            x = x + self.dropout(self.self_attn(self.norm1(x), mask=mask))
            x = x + self.dropout(self.cross_attn(self.norm2(x), memory=memory))
            return x + self.dropout(self.ffn(self.norm3(x)))

    class Reverse(nn.Module):
        """reverse.tf, and at medium_encoder.tf's sizes the same model scaled up."""

        def __init__(self, classes=10, seq=16, dim=32, layers=1, heads=1, ffn=64, rate=0.0):
            super().__init__()
            self.classes = classes
            self.input_net = nn.Linear(classes, dim)
            self.register_buffer("pe", torch.from_numpy(positional_encoding(seq, dim)))
            self.encoder = Encoder(layers, dim, heads, ffn, rate, pre=False)
            self.linear, self.layer_norm = nn.Linear(dim, dim), nn.LayerNorm(dim)
            self.output = nn.Linear(dim, classes)

        def forward(self, tokens):
            x = self.input_net(F.one_hot(tokens, self.classes).float()) + self.pe
            x = self.encoder(x)
            return self.output(F.relu(self.layer_norm(self.linear(x))))

        def loss(self, batch):
            logits = self(batch["tokens"])
            labels = batch["labels"]
            loss = F.cross_entropy(logits.reshape(-1, self.classes), labels.reshape(-1))
            return loss, (logits.argmax(-1) == labels).float().mean()

        def predict(self, batch):
            return self(batch["tokens"])

    class SetAnomaly(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_net = nn.Linear(512, 256)
            self.encoder = Encoder(4, 256, 4, 512, 0.1, pre=False)
            self.linear, self.layer_norm, self.output = nn.Linear(256, 256), nn.LayerNorm(256), nn.Linear(256, 1)
            self.dropout = nn.Dropout(0.1)

        def forward(self, features):
            x = self.input_net(self.dropout(features))
            x = self.encoder(x)
            x = self.dropout(F.relu(self.layer_norm(self.linear(x))))
            return self.output(x).squeeze(-1)

        def loss(self, batch):
            logits = self(batch["features"])
            labels = batch["labels"]
            return F.cross_entropy(logits, labels), (logits.argmax(-1) == labels).float().mean()

        def predict(self, batch):
            return self(batch["features"])

    class FleuretAttention(nn.Module):
        """François Fleuret's layer: 1x1 convolutions to q, k (96) and v, softmax(q^T k) v, unscaled."""

        def __init__(self, channels, out, key):
            super().__init__()
            self.conv_q = nn.Conv1d(channels, key, 1, bias=False)
            self.conv_k = nn.Conv1d(channels, key, 1, bias=False)
            self.conv_v = nn.Conv1d(channels, out, 1, bias=False)

        def forward(self, x):  # [B, C, T]
            q = self.conv_q(x).transpose(1, 2)
            k = self.conv_k(x).transpose(1, 2)
            v = self.conv_v(x).transpose(1, 2)
            return attend(q, k, v, scale=1.0).transpose(1, 2)

    class Fleuret(nn.Module):  # get_model_cnn(ks=5), optionally the third conv replaced
        def __init__(self, attention):
            super().__init__()
            c = 64
            third = FleuretAttention(c, c, 96) if attention else nn.Conv1d(c, c, 5, padding=2)
            self.layers = nn.ModuleList([nn.Conv1d(1, c, 5, padding=2), nn.Conv1d(c, c, 5, padding=2),
                                         third, nn.Conv1d(c, c, 5, padding=2)])
            self.last = nn.Conv1d(c, 1, 5, padding=2)

        def forward(self, x):
            for layer in self.layers:
                x = F.relu(layer(x))
            return self.last(x)

        def loss(self, batch):
            return F.mse_loss(self(batch["input"]), batch["target"]), None

        def predict(self, batch):
            return self(batch["input"])

    class EncoderDecoder(nn.Module):  # the step-by-step book's, norm-first
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(2, 6)
            self.register_buffer("pe", torch.from_numpy(positional_encoding(2, 6)))
            self.register_buffer("causal", torch.tril(torch.ones(2, 2, dtype=torch.bool)))
            self.encoder = Encoder(2, 6, 3, 10, 0.1, pre=True)
            self.decoder = nn.ModuleList(DecoderBlock(6, 3, 10, 0.1) for _ in range(2))
            self.decoder_norm = nn.LayerNorm(6)
            self.linear = nn.Linear(6, 2)

        def forward(self, source, target):
            b = source.shape[0]
            shifted = torch.cat([source[:, 1:2], target[:, 0:1]], 1)  # teacher forcing
            both = self.proj(torch.cat([source, shifted], 0)) * math.sqrt(6) + self.pe
            memory = self.encoder(both[:b])
            x = both[b:]
            for layer in self.decoder:
                x = layer(x, memory, self.causal)
            return self.linear(self.decoder_norm(x))

        def loss(self, batch):
            return F.mse_loss(self(batch["source"], batch["target"]), batch["target"]), None

        def predict(self, batch):
            return self(batch["source"], batch["target"])

    return {"reverse": Reverse, "set_anomaly": SetAnomaly,
            "medium_encoder": lambda: Reverse(1000, 256, 512, 6, 8, 2048, 0.1),
            "fleuret_cnn": lambda: Fleuret(False), "fleuret_attention": lambda: Fleuret(True),
            "encoder_decoder": EncoderDecoder}


def run_torch(args, data):
    """(call, info, hooks): call() runs one timed step; hooks' sync and
    memory are the device's (no-ops on the CPU); hooks' epochs trains whole
    epochs (--entry epochs)."""
    import torch
    # The float mode of tfc's binaries (runtime/FloatMode.h) and of XLA's CPU
    # runtime: subnormals flushed to zero. Set before the first parallel
    # region, so that PyTorch's OpenMP threads inherit it with the rest of
    # the floating-point environment (POSIX threads do).
    torch.set_flush_denormal(True)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
    torch.manual_seed(0)
    device = torch.device(args.device)
    cuda = args.device == "cuda"
    if cuda:
        if not torch.cuda.is_available():
            raise SystemExit("peers.py: --device cuda, but torch %s sees no GPU" % torch.__version__)
        # fp32 as tfc's CUDA binaries compute, or TF32 matmuls (PyTorch at its best).
        tf32 = args.precision != "fp32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
    model = torch_models()[args.workload]().to(device)
    params = sum(p.numel() for p in model.parameters())
    # int32 ids become int64, as PyTorch's one_hot and cross_entropy want them.
    batch = {k: (torch.from_numpy(v).long() if v.dtype.kind == "i" else torch.from_numpy(v)).to(device)
             for k, v in data.items()}
    info = {"params": params, "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "device": args.device, "precision": args.precision if cuda else "fp32"}
    if cuda:
        info["device_name"] = torch.cuda.get_device_name()
    if args.compile:
        info["compile"] = args.compile_mode

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def memory():
        return torch.cuda.max_memory_allocated() if cuda else None

    def autocast():
        return torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.precision == "bf16")

    # The compiled loss (forward and, through AOTAutograd, backward); the
    # optimizer and clipping stay eager: fused Adam is already few kernels.
    loss_fn, predict_fn = model.loss, model.predict
    if args.compile:
        loss_fn = torch.compile(model.loss, mode=args.compile_mode)
        predict_fn = torch.compile(model.predict, mode=args.compile_mode)
    graphs = args.compile and "cudagraphs" not in args.compile_mode and args.compile_mode != "default"

    def step_begin():
        if graphs:  # a new iteration: the graphs' outputs of the last may be overwritten
            torch.compiler.cudagraph_mark_step_begin()

    hooks = {"sync": sync, "memory": memory}
    opt = sched = None
    if args.entry == "predict":
        model.eval()

        def call():
            step_begin()
            with torch.inference_mode(), autocast():
                out = predict_fn(batch)
            sync()  # the time of the whole call
            return out
    else:
        model.train()
        # The fastest Adam PyTorch has on CPU and GPU: fused (2.4+), else multi-tensor.
        try:
            opt = torch.optim.Adam(model.parameters(), lr=args.lr, fused=True)
            info["adam"] = "fused"
        except (RuntimeError, TypeError):
            opt = torch.optim.Adam(model.parameters(), lr=args.lr, foreach=True)
            info["adam"] = "foreach"
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda t: schedule_factor(t, args.schedule, args.warmup_steps, args.total_steps))
        plist = list(model.parameters())

        def train_step(b):
            step_begin()
            opt.zero_grad(set_to_none=True)
            with autocast():
                loss, _metric = loss_fn(b)
            loss.backward()
            if args.clip > 0:
                torch.nn.utils.clip_grad_norm_(plist, args.clip)
            opt.step()
            sched.step()
            return loss.detach()

        def call():
            return train_step(batch).item()  # waits for the step

    import copy

    def snapshot():
        return copy.deepcopy((model.state_dict(), opt.state_dict() if opt else None,
                              sched.state_dict() if sched else None))

    def restore(saved):
        model.load_state_dict(saved[0])
        if opt:
            opt.load_state_dict(saved[1])
            sched.load_state_dict(saved[2])

    # PyTorch at its best: fused SDPA wins on some shapes, two matmuls on
    # others (small heads), so time both briefly and keep the faster (eager
    # only: compiled, each would be another compilation; SDPA there).
    if args.workload != "fleuret_cnn":
        if args.attention != "auto" or args.compile:
            ATTENTION["impl"] = "sdpa" if args.attention == "auto" else args.attention
        else:
            # The trial's steps are undone afterwards, so that the loss reported
            # is the one after the same number of steps as tfc's and JAX's.
            saved = snapshot() if args.entry != "predict" else None
            trial = {}
            for impl in ["sdpa", "matmul"]:
                ATTENTION["impl"] = impl
                times = []
                for i in range(max(2, args.warmup) + 5):
                    start = time.perf_counter()
                    call()
                    times.append(time.perf_counter() - start)
                trial[impl] = sorted(times[-5:])[2]
            ATTENTION["impl"] = min(trial, key=trial.get)
            if saved is not None:
                restore(saved)
        info["attention"] = ATTENTION["impl"]

    if args.entry == "epochs":
        hooks["epochs"] = lambda: torch_epochs(args, model, train_step, autocast, snapshot, restore,
                                               device)
    return call, info, hooks


def torch_epochs(args, model, train_step, autocast, snapshot, restore, device):
    """`./MODEL train` in PyTorch: --epochs over --train-samples made on the
    device (uniform tokens, the label their reverse), each epoch in a fresh
    order on the device, a validation pass after each, a test pass at the end.
    Before the clock: --warmup steps (compilation, CUDA graphs), then undone."""
    import torch
    classes, seq = REVERSE_TASKS[args.workload]
    g = torch.Generator(device=device)
    g.manual_seed(42)

    def split(n):
        tokens = torch.randint(0, classes, (n, seq), generator=g, device=device)
        return {"tokens": tokens, "labels": tokens.flip(1)}

    train, val, test = split(args.train_samples), split(args.val_samples), split(args.test_samples)
    b = args.batch
    steps = args.train_samples // b  # the last partial batch dropped, as tfc's train
    first = {k: v[:b] for k, v in train.items()}
    saved = snapshot()
    start = time.perf_counter()
    for _ in range(args.warmup):
        train_step(first)
    if device.type == "cuda":
        torch.cuda.synchronize()
    warmup_s = time.perf_counter() - start
    restore(saved)

    def evaluate(data):  # eager, full batches only (the model's compiled batch)
        model.eval()
        loss = correct = 0.0
        n = data["tokens"].shape[0] // b
        with torch.no_grad(), autocast():
            for i in range(n):
                part = {k: v[i * b:(i + 1) * b] for k, v in data.items()}
                l, acc = model.loss(part)
                loss, correct = loss + l.float(), correct + acc
        model.train()
        return (loss / n).item(), (correct / n).item()

    history = []
    start = time.perf_counter()
    for epoch in range(args.epochs):
        order = torch.randperm(args.train_samples, generator=g, device=device)
        tokens, labels = train["tokens"][order], train["labels"][order]
        total = torch.zeros((), device=device)
        for i in range(steps):
            total += train_step({"tokens": tokens[i * b:(i + 1) * b], "labels": labels[i * b:(i + 1) * b]})
        val_loss, val_acc = evaluate(val)
        history.append({"epoch": epoch + 1, "train_loss": (total / steps).item(),
                        "val_loss": val_loss, "val_accuracy": val_acc})
    test_loss, test_acc = evaluate(test)
    seconds = time.perf_counter() - start
    return {"epochs_s": seconds, "warmup_s": warmup_s, "steps": steps * args.epochs,
            "test_loss": test_loss, "test_accuracy": test_acc, "history": history}


# ===========================================================================
# JAX (jax.numpy, jax.jit; Adam by hand)
# ===========================================================================

def jax_models():
    import jax
    import jax.numpy as jnp
    import numpy as np

    class Keys:
        """One fresh key per dropout site, in call order (resolved at trace time)."""

        def __init__(self, key):
            self.key, self.n = key, 0

        def __call__(self):
            self.n += 1
            return jax.random.fold_in(self.key, self.n)

    def uniform(key, shape, bound):
        return jax.random.uniform(key, shape, jnp.float32, -bound, bound)

    def linear_init(key, fan_in, out, bias=True, xavier=False):
        k1, k2 = jax.random.split(key)
        if xavier:  # attention projections: xavier weight, zero bias
            return {"weight": uniform(k1, (out, fan_in), math.sqrt(6 / (fan_in + out))),
                    "bias": jnp.zeros((out,), jnp.float32)}
        bound = 1 / math.sqrt(fan_in)
        p = {"weight": uniform(k1, (out, fan_in), bound)}
        if bias:
            p["bias"] = uniform(k2, (out,), bound)
        return p

    def linear(p, x):
        y = x @ p["weight"].T
        return y + p["bias"] if "bias" in p else y

    def norm_init(dim):
        return {"weight": jnp.ones((dim,), jnp.float32), "bias": jnp.zeros((dim,), jnp.float32)}

    def layer_norm(p, x, eps=1e-5):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + eps) * p["weight"] + p["bias"]

    def dropout(keys, x, rate, train):
        if not train or rate == 0.0:
            return x
        keep = jax.random.bernoulli(keys(), 1.0 - rate, x.shape)
        return jnp.where(keep, x / (1.0 - rate), 0.0)

    def attention(q, k, v, mask=None, scale=None):  # [..., T, d]
        scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
        logits = jnp.einsum("...qd,...kd->...qk", q, k) * scale
        if mask is not None:
            logits = jnp.where(mask, logits, -9e15)
        return jnp.einsum("...qk,...kd->...qd", jax.nn.softmax(logits, -1), v)

    def mha_init(key, dim, cross=False):
        ks = jax.random.split(key, 3)
        if cross:
            return {"q": linear_init(ks[0], dim, dim, xavier=True),
                    "kv": linear_init(ks[1], dim, 2 * dim, xavier=True),
                    "out": linear_init(ks[2], dim, dim, xavier=True)}
        return {"qkv": linear_init(ks[0], dim, 3 * dim, xavier=True),
                "out": linear_init(ks[2], dim, dim, xavier=True)}

    def mha(p, x, heads, memory=None, mask=None):
        b, t, d = x.shape
        hd = d // heads
        if memory is not None:
            s = memory.shape[1]
            q = linear(p["q"], x).reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
            kv = linear(p["kv"], memory).reshape(b, s, heads, 2 * hd).transpose(0, 2, 1, 3)
            k, v = kv[..., :hd], kv[..., hd:]
        else:
            qkv = linear(p["qkv"], x).reshape(b, t, heads, 3 * hd).transpose(0, 2, 1, 3)
            q, k, v = qkv[..., :hd], qkv[..., hd:2 * hd], qkv[..., 2 * hd:]
        values = attention(q, k, v, mask)
        return linear(p["out"], values.transpose(0, 2, 1, 3).reshape(b, t, d))

    def ffn_init(key, dim, ffn):
        k1, k2 = jax.random.split(key)
        return {"linear1": linear_init(k1, dim, ffn), "linear2": linear_init(k2, ffn, dim)}

    def feed_forward(p, x, rate, keys, train):
        return linear(p["linear2"], jax.nn.relu(dropout(keys, linear(p["linear1"], x), rate, train)))

    def encoder_init(key, layers, dim, ffn, pre):
        blocks = []
        for k in jax.random.split(key, layers):
            k1, k2 = jax.random.split(k)
            blocks.append({"self_attn": mha_init(k1, dim), "ffn": ffn_init(k2, dim, ffn),
                           "norm1": norm_init(dim), "norm2": norm_init(dim)})
        p = {"layers": blocks}
        if pre:
            p["norm"] = norm_init(dim)
        return p

    def encoder(p, x, heads, rate, pre, keys, train, mask=None):
        for blk in p["layers"]:
            if pre:
                x = x + dropout(keys, mha(blk["self_attn"], layer_norm(blk["norm1"], x), heads, mask=mask), rate, train)
                x = x + dropout(keys, feed_forward(blk["ffn"], layer_norm(blk["norm2"], x), rate, keys, train), rate, train)
            else:
                x = layer_norm(blk["norm1"], x + dropout(keys, mha(blk["self_attn"], x, heads, mask=mask), rate, train))
                x = layer_norm(blk["norm2"], x + dropout(keys, feed_forward(blk["ffn"], x, rate, keys, train), rate, train))
        return layer_norm(p["norm"], x) if pre else x

    def decoder_init(key, layers, dim, ffn):
        blocks = []
        for k in jax.random.split(key, layers):
            k1, k2, k3 = jax.random.split(k, 3)
            blocks.append({"self_attn": mha_init(k1, dim), "cross_attn": mha_init(k2, dim, cross=True),
                           "ffn": ffn_init(k3, dim, ffn), "norm1": norm_init(dim),
                           "norm2": norm_init(dim), "norm3": norm_init(dim)})
        return {"layers": blocks, "norm": norm_init(dim)}

    def decoder(p, x, memory, heads, rate, keys, train, mask):  # pre-norm
        for blk in p["layers"]:
            x = x + dropout(keys, mha(blk["self_attn"], layer_norm(blk["norm1"], x), heads, mask=mask), rate, train)
            x = x + dropout(keys, mha(blk["cross_attn"], layer_norm(blk["norm2"], x), heads, memory=memory), rate, train)
            x = x + dropout(keys, feed_forward(blk["ffn"], layer_norm(blk["norm3"], x), rate, keys, train), rate, train)
        return layer_norm(p["norm"], x)

    def cross_entropy(logits, labels):  # class axis last, mean over the rest
        logp = jax.nn.log_softmax(logits, -1)
        return -jnp.take_along_axis(logp, labels[..., None], -1).mean()

    def accuracy(logits, labels):
        return (jnp.argmax(logits, -1) == labels).astype(jnp.float32).mean()

    def conv1d_init(key, cin, cout, kernel, bias=True):
        k1, k2 = jax.random.split(key)
        bound = 1 / math.sqrt(cin * kernel)
        p = {"weight": uniform(k1, (cout, cin, kernel), bound)}
        if bias:
            p["bias"] = uniform(k2, (cout,), bound)
        return p

    def conv1d(p, x, padding):  # NCW, weight [out, in, k]
        y = jax.lax.conv_general_dilated(x, p["weight"], (1,), [(padding, padding)],
                                         dimension_numbers=("NCH", "OIH", "NCH"))
        return y + p["bias"][None, :, None] if "bias" in p else y

    # --- the models: init(key) -> params; forward(params, batch, keys, train) ---

    def reverse_model(classes, seq, dim, layers, heads, ffn, rate):
        """reverse.tf, and at medium_encoder.tf's sizes the same model scaled up."""
        pe = jnp.asarray(positional_encoding(seq, dim))

        def init(key):
            ks = jax.random.split(key, 5)
            return {"input_net": linear_init(ks[0], classes, dim),
                    "encoder": encoder_init(ks[1], layers, dim, ffn, False),
                    "linear": linear_init(ks[2], dim, dim), "layer_norm": norm_init(dim),
                    "output": linear_init(ks[3], dim, classes)}

        def forward(p, batch, keys, train):
            x = linear(p["input_net"], jax.nn.one_hot(batch["tokens"], classes, dtype=jnp.float32)) + pe
            x = encoder(p["encoder"], x, heads, rate, False, keys, train)
            logits = linear(p["output"], jax.nn.relu(layer_norm(p["layer_norm"], linear(p["linear"], x))))
            return logits, cross_entropy(logits, batch["labels"]), accuracy(logits, batch["labels"])
        return init, forward

    def set_anomaly_init(key):
        ks = jax.random.split(key, 4)
        return {"input_net": linear_init(ks[0], 512, 256), "encoder": encoder_init(ks[1], 4, 256, 512, False),
                "linear": linear_init(ks[2], 256, 256), "layer_norm": norm_init(256),
                "output": linear_init(ks[3], 256, 1)}

    def set_anomaly_forward(p, batch, keys, train):
        x = linear(p["input_net"], dropout(keys, batch["features"], 0.1, train))
        x = encoder(p["encoder"], x, 4, 0.1, False, keys, train)
        x = dropout(keys, jax.nn.relu(layer_norm(p["layer_norm"], linear(p["linear"], x))), 0.1, train)
        logits = linear(p["output"], x)[..., 0]
        return logits, cross_entropy(logits, batch["labels"]), accuracy(logits, batch["labels"])

    def fleuret_init(attention_layer):
        def init(key):
            ks = jax.random.split(key, 8)
            p = {"conv1": conv1d_init(ks[0], 1, 64, 5), "conv2": conv1d_init(ks[1], 64, 64, 5),
                 "conv4": conv1d_init(ks[3], 64, 64, 5), "last": conv1d_init(ks[4], 64, 1, 5)}
            if attention_layer:
                p["attention"] = {"q": conv1d_init(ks[5], 64, 96, 1, bias=False),
                                  "k": conv1d_init(ks[6], 64, 96, 1, bias=False),
                                  "v": conv1d_init(ks[7], 64, 64, 1, bias=False)}
            else:
                p["conv3"] = conv1d_init(ks[2], 64, 64, 5)
            return p
        return init

    def fleuret_forward(p, batch, keys, train):
        h = jax.nn.relu(conv1d(p["conv1"], batch["input"], 2))
        h = jax.nn.relu(conv1d(p["conv2"], h, 2))
        if "attention" in p:
            a = p["attention"]
            q, k, v = (conv1d(a[n], h, 0).transpose(0, 2, 1) for n in "qkv")
            h = jax.nn.relu(attention(q, k, v, scale=1.0).transpose(0, 2, 1))
        else:
            h = jax.nn.relu(conv1d(p["conv3"], h, 2))
        h = jax.nn.relu(conv1d(p["conv4"], h, 2))
        prediction = conv1d(p["last"], h, 2)
        return prediction, ((prediction - batch["target"]) ** 2).mean(), None

    pe2 = jnp.asarray(positional_encoding(2, 6))
    causal = jnp.asarray(np.tril(np.ones((2, 2), dtype=bool)))

    def encoder_decoder_init(key):
        ks = jax.random.split(key, 4)
        return {"proj": linear_init(ks[0], 2, 6), "encoder": encoder_init(ks[1], 2, 6, 10, True),
                "decoder": decoder_init(ks[2], 2, 6, 10), "linear": linear_init(ks[3], 6, 2)}

    def encoder_decoder_forward(p, batch, keys, train):
        source, target = batch["source"], batch["target"]
        b = source.shape[0]
        shifted = jnp.concatenate([source[:, 1:2], target[:, 0:1]], 1)
        both = linear(p["proj"], jnp.concatenate([source, shifted], 0)) * math.sqrt(6) + pe2
        memory = encoder(p["encoder"], both[:b], 3, 0.1, True, keys, train)
        states = decoder(p["decoder"], both[b:], memory, 3, 0.1, keys, train, causal)
        prediction = linear(p["linear"], states)
        return prediction, ((prediction - target) ** 2).mean(), None

    return {"reverse": reverse_model(10, 16, 32, 1, 1, 64, 0.0),
            "medium_encoder": reverse_model(1000, 256, 512, 6, 8, 2048, 0.1),
            "set_anomaly": (set_anomaly_init, set_anomaly_forward),
            "fleuret_cnn": (fleuret_init(False), fleuret_forward),
            "fleuret_attention": (fleuret_init(True), fleuret_forward),
            "encoder_decoder": (encoder_decoder_init, encoder_decoder_forward)}, Keys


def run_jax(args, data):
    """(call, info, hooks) as run_torch's."""
    import warnings
    warnings.filterwarnings("ignore", message=".*donat.*")
    import jax
    import jax.numpy as jnp
    dev = jax.devices()[0]
    on_gpu = dev.platform != "cpu"
    if args.precision == "bf16":
        raise SystemExit("peers.py: --precision bf16 is PyTorch's autocast only")
    if on_gpu:  # JAX's own default on the GPU is TF32; fp32 asks for full precision
        jax.config.update("jax_default_matmul_precision",
                          "tensorfloat32" if args.precision == "tf32" else "float32")
    models, Keys = jax_models()
    init, forward = models[args.workload]
    params = init(jax.random.PRNGKey(0))
    count = sum(int(x.size) for x in jax.tree_util.tree_leaves(params))
    batch = {k: jnp.asarray(v) for k, v in data.items()}
    info = {"params": count, "jax": jax.__version__, "device": dev.platform,
            "device_name": getattr(dev, "device_kind", str(dev)),
            "precision": args.precision if on_gpu else "fp32"}

    def memory():
        try:
            stats = dev.memory_stats() or {}
        except Exception:  # noqa: BLE001 - not every backend has them (the CPU)
            return None
        return stats.get("peak_bytes_in_use")

    hooks = {"sync": lambda: None, "memory": memory}

    if args.entry == "predict":
        predict = jax.jit(lambda p, b: forward(p, b, None, False)[0])

        def call():
            return predict(params, batch).block_until_ready()
        return call, info, hooks

    b1, b2, eps, lr, clip = 0.9, 0.999, 1e-8, args.lr, args.clip

    def lr_at(t):  # t = steps taken before this one, as tfc and LambdaLR count
        if args.schedule == "constant":
            return lr
        f = 0.5 * (1 + jnp.cos(jnp.pi * t / max(args.total_steps, 1)))
        if args.warmup_steps > 0:
            f = jnp.where(t <= args.warmup_steps, f * t / args.warmup_steps, f)
        return lr * f

    def train_step(params, state, step, key, batch):
        def loss_fn(p):
            _, loss, metric = forward(p, batch, Keys(key), True)
            return loss, metric
        (loss, metric), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        if clip > 0:
            norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree_util.tree_leaves(grads)))
            scale = jnp.minimum(1.0, clip / (norm + 1e-6))
            grads = jax.tree_util.tree_map(lambda g: g * scale, grads)
        t = step + 1.0
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
        step_size = lr_at(step) / (1 - b1 ** t)
        root = jnp.sqrt(1 - b2 ** t)
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - step_size * m / (jnp.sqrt(v) / root + eps), params, m, v)
        return params, {"m": m, "v": v}, loss, metric

    step_fn = jax.jit(train_step, donate_argnums=(0, 1))
    zeros = lambda: jax.tree_util.tree_map(jnp.zeros_like, params)  # noqa: E731
    holder = {"params": params, "state": {"m": zeros(), "v": zeros()}, "step": 0}
    base = jax.random.PRNGKey(1)

    def step(b):
        s = holder["step"]
        holder["params"], holder["state"], loss, _ = step_fn(
            holder["params"], holder["state"], jnp.float32(s), jax.random.fold_in(base, s), b)
        holder["step"] = s + 1
        return loss

    def call():
        loss = step(batch)
        if on_gpu:  # the whole step, its update too, not only the loss
            jax.block_until_ready(holder["params"])
        return float(loss)  # waits for the step, as tfc's returns its loss

    if args.entry == "epochs":
        def train_step_at(params, state, step, key, data, i):  # batch i of an epoch's samples
            b = {k: jax.lax.dynamic_slice_in_dim(v, i * args.batch, args.batch) for k, v in data.items()}
            return train_step(params, state, step, key, b)
        step_at_fn = jax.jit(train_step_at, donate_argnums=(0, 1))

        def step_at(data, i):
            s = holder["step"]
            holder["params"], holder["state"], loss, _ = step_at_fn(
                holder["params"], holder["state"], jnp.float32(s), jax.random.fold_in(base, s), data,
                jnp.int32(i))
            holder["step"] = s + 1
            return loss
        evaluate_fn = jax.jit(lambda p, b: forward(p, b, None, False)[1:])
        hooks["epochs"] = lambda: jax_epochs(args, holder, step_at, evaluate_fn)
    return call, info, hooks


def jax_epochs(args, holder, step_at, evaluate_fn):
    """torch_epochs in JAX: the data made on the device, a fresh order each
    epoch by jax.random.permutation; --warmup steps (compilation) undone."""
    import jax
    import jax.numpy as jnp
    classes, seq = REVERSE_TASKS[args.workload]
    key = jax.random.PRNGKey(42)

    def split(k, n):
        tokens = jax.random.randint(k, (n, seq), 0, classes, dtype=jnp.int32)
        return {"tokens": tokens, "labels": tokens[:, ::-1]}

    k1, k2, k3, key = jax.random.split(key, 4)
    train = split(k1, args.train_samples)
    val, test = split(k2, args.val_samples), split(k3, args.test_samples)
    b = args.batch
    steps = args.train_samples // b
    saved = jax.tree_util.tree_map(jnp.copy, (holder["params"], holder["state"]))
    start = time.perf_counter()
    for _ in range(args.warmup):
        step_at(train, 0)
    jax.block_until_ready(holder["params"])
    warmup_s = time.perf_counter() - start
    holder["params"], holder["state"] = saved
    holder["step"] = 0

    def evaluate(data):
        n = data["tokens"].shape[0] // b
        results = [evaluate_fn(holder["params"], {k: v[i * b:(i + 1) * b] for k, v in data.items()})
                   for i in range(n)]
        return (float(sum(r[0] for r in results) / n), float(sum(r[1] for r in results) / n))

    history = []
    start = time.perf_counter()
    for epoch in range(args.epochs):
        key, k = jax.random.split(key)
        order = jax.random.permutation(k, args.train_samples)
        epoch_data = {k: v[order] for k, v in train.items()}
        losses = [step_at(epoch_data, i) for i in range(steps)]
        val_loss, val_acc = evaluate(val)
        history.append({"epoch": epoch + 1, "train_loss": float(jnp.mean(jnp.stack(losses))),
                        "val_loss": val_loss, "val_accuracy": val_acc})
    test_loss, test_acc = evaluate(test)
    seconds = time.perf_counter() - start
    return {"epochs_s": seconds, "warmup_s": warmup_s, "steps": steps * args.epochs,
            "test_loss": test_loss, "test_accuracy": test_acc, "history": history}


def main():
    args = parse_args()
    limit_threads(args.threads, args.device)
    data = (load_data(args.workload, args.batch, args.data) if args.data
            else make_data(args.workload, args.batch))
    run = run_torch if args.framework == "torch" else run_jax
    call, info, hooks = run(args, data)
    head = {"framework": args.framework, "workload": args.workload, "entry": args.entry,
            "threads": args.threads, "batch": args.batch}
    if args.entry == "epochs":
        out = dict(head, **hooks["epochs"]())
        out.update(epochs=args.epochs, train_samples=args.train_samples,
                   max_rss_kib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                   peak_device_bytes=hooks["memory"](), **info)
        print(json.dumps(out))
        sys.stdout.flush()
        return
    sync = hooks["sync"]
    times = []
    last = None
    fixed = args.warmup + args.steps
    i = 0
    while i < fixed or (sum(times) < 1e3 * args.min_seconds and i < args.warmup + 100000):
        sync()  # nothing of the last call still running on the device
        start = time.perf_counter()
        result = call()
        sync()
        elapsed = (time.perf_counter() - start) * 1e3
        if i < fixed:
            last = result
        if i >= args.warmup:
            times.append(elapsed)
        i += 1
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    out = dict(head, median_ms=median, min_ms=times[0], mean_ms=sum(times) / n, steps=n,
               warmup=args.warmup, max_rss_kib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               cpus=len(os.sched_getaffinity(0)))
    peak = hooks["memory"]()
    if peak is not None:
        out["peak_device_bytes"] = peak
    if isinstance(last, float):
        out["loss"] = last
    out.update(info)
    print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
