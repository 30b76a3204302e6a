"""Counts the bf16 copies of train_step's GEMM operands in --emit=buffers
output (stdin), for bf16-operands.tf: every i16 result (a copy nest's, or a
producer's second result) plus the layer norms that write a y16, the layer
norm backwards that store their dx's dropout, or dx itself, as bits, the
attention calls that store bf16 (a forward's out16, a backward's
gradsBf16) and the loss's call that stores dlogits as bits; the copy nests
(tfc.bf16_cast); the producers that write the copy alone (no f32 result
beside it); the loop nests that read bits (widened to f32); and the layer
norm backwards that read their gate as bits (GateBits), each from a
forward that stores the bits alone (Y 0); and the products stored in bf16
(kBf16 in tfc_cuda_sgemm's Accumulate, argument 15)."""
import re
import sys

s = sys.stdin.read()
s = s[s.index("func.func @train_step("):]
s = s[: s.index("func.func @", 10)]
norms = [
    args
    for args in re.findall(r"call @tfc_cuda_layer_norm_forward\(([^)]*)\)", s)
    if not re.fullmatch(r"%c0(_[0-9]+)?", args.split(", ")[8])  # Y16
]
attention = [
    args
    for args in re.findall(r"call @tfc_cuda_attention_(?:forward|backward)\(([^)]*)\)", s)
    if not re.fullmatch(r"%c0(_[0-9]+)?", args.split(", ")[-1])
]
# Layer norm backwards storing their dx's dropout as bits (DropoutBits,
# argument 13, is 1).
dropouts = [
    args
    for args in re.findall(r"call @tfc_cuda_layer_norm_backward\(([^)]*)\)", s)
    if re.fullmatch(r"%c1(_[0-9]+)?", args.split(", ")[13])
]
# The loss's call storing dlogits as bits (DlogitsBits, argument 12, is 1).
losses = [
    args
    for args in re.findall(r"call @tfc_cuda_cross_entropy_fused\(([^)]*)\)", s)
    if re.fullmatch(r"%c1(_[0-9]+)?", args.split(", ")[12])
]
# Layer norm backwards reading their gate as bits (GateBits, argument 20,
# is 1), and forwards storing y16 alone (Y, argument 6, is 0).
gates = [
    args
    for args in re.findall(r"call @tfc_cuda_layer_norm_backward\(([^)]*)\)", s)
    if re.fullmatch(r"%c1(_[0-9]+)?", args.split(", ")[20])
]
results = [
    args
    for args in re.findall(r"call @tfc_cuda_sgemm\(([^)]*)\)", s)
    if re.fullmatch(r"%c2(_[0-9]+)?", args.split(", ")[15])
]
bare = [args for args in norms if re.fullmatch(r"%c0(_[0-9]+)?", args.split(", ")[6])]
outs = re.findall(r"outs\(([^)]*)\)( attrs = *\{[^}]*\})?", s)
alone = sum(1 for o, attrs in outs if "xi16>" in o and "xf32>" not in o and "bf16_cast" not in attrs)
print("copies",
      sum(1 for o, _ in outs if "xi16>" in o) + len(norms) + len(dropouts) + len(attention)
      + len(losses),
      "nests", s.count("tfc.bf16_cast"), "norms", len(norms), "dropouts", len(dropouts),
      "attention", len(attention), "losses", len(losses),
      "alone", alone, "widened", len(re.findall(r"ins\([^)]*xi16>", s)),
      "gates", len(gates), "from", len(bare), "results", len(results))
