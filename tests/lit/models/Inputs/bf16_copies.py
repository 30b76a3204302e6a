"""Counts the bf16 copies of train_step's GEMM operands in --emit=buffers
output (stdin), for bf16-operands.tf: every i16 result (a copy nest's, or a
producer's second result) plus the layer norms that write a y16, the layer
norm backwards that store their dx's dropout, or dx itself, as bits, the
attention calls that store bf16 (a forward's out16, a backward's
gradsBf16) and the loss's call that stores dlogits as bits; the copy nests
(tfc.bf16_cast); the producers that write the copy alone (no f32 result
beside it); the loop nests that read bits (widened to f32); and the layer
norm backwards that read their gate as bits (GateBits), each from a
forward that stores the bits alone (Y 0); the products stored in bf16
(kBf16 in tfc_cuda_sgemm's Accumulate, argument 15: those only loop nests
read, and the out projections' input gradients); the QKV projections
stored in bf16 (tfc_cuda_sgemm_fused's) and the attention calls reading
their bits (inputsBf16, the last argument, 1, or 3 with dO's); and the
attention backwards reading dO as bits too (3: kQkvBf16 | kDoBf16)."""
import re
import sys

s = sys.stdin.read()
s = s[s.index("func.func @train_step("):]
s = s[: s.index("func.func @", 10)]


def calls(callee):
    """Each call of `callee` (a regex of the name) as its list of arguments."""
    return [args.split(", ") for args in re.findall(r"call @" + callee + r"\(([^)]*)\)", s)]


def constant(arg, value):
    """Whether `arg` is the index constant `value` (%c0, %c0_12, ...)."""
    return re.fullmatch(r"%c" + str(value) + r"(_[0-9]+)?", arg) is not None


# Layer norm forwards writing a y16 (argument 8 not 0); attention calls
# storing bf16 (their second to last argument, out16 or gradsBf16, not 0;
# the last is inputsBf16).
norms = [a for a in calls("tfc_cuda_layer_norm_forward") if not constant(a[8], 0)]
attention = [a for a in calls("tfc_cuda_attention_(?:forward|backward)") if not constant(a[-2], 0)]
# Layer norm backwards storing their dx's dropout as bits (DropoutBits,
# argument 13, is 1).
dropouts = [a for a in calls("tfc_cuda_layer_norm_backward") if constant(a[13], 1)]
# The loss's call storing dlogits as bits (DlogitsBits, argument 12, is 1).
losses = [a for a in calls("tfc_cuda_cross_entropy_fused") if constant(a[12], 1)]
# Layer norm backwards reading their gate as bits (GateBits, argument 20,
# is 1), and forwards storing y16 alone (Y, argument 6, is 0).
gates = [a for a in calls("tfc_cuda_layer_norm_backward") if constant(a[20], 1)]
bare = [a for a in norms if constant(a[6], 0)]
# Products stored in bf16 (kBf16, 2, in tfc_cuda_sgemm's Accumulate, argument 15).
results = [a for a in calls("tfc_cuda_sgemm") if constant(a[15], 2)]
qkv = [a for a in calls("tfc_cuda_sgemm_fused") if constant(a[15], 2)]
inputs = [a for a in calls("tfc_cuda_attention_(?:forward|backward)")
          if constant(a[-1], 1) or constant(a[-1], 3)]
dout = [a for a in calls("tfc_cuda_attention_backward") if constant(a[-1], 3)]
outs = re.findall(r"outs\(([^)]*)\)( attrs = *\{[^}]*\})?", s)
alone = sum(1 for o, attrs in outs if "xi16>" in o and "xf32>" not in o and "bf16_cast" not in attrs)
print("copies",
      sum(1 for o, _ in outs if "xi16>" in o) + len(norms) + len(dropouts) + len(attention)
      + len(losses),
      "nests", s.count("tfc.bf16_cast"), "norms", len(norms), "dropouts", len(dropouts),
      "attention", len(attention), "losses", len(losses),
      "alone", alone, "widened", len(re.findall(r"ins\([^)]*xi16>", s)),
      "gates", len(gates), "from", len(bare), "results", len(results), "qkv", len(qkv),
      "inputs", len(inputs), "dout", len(dout))
