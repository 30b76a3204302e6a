"""Counts, in train_step of --emit=gpu output (stdin), the kernel launches,
the weights (2-D fp32 entry arguments) a launch copies to bf16 (an i16
argument of the same shape beside them), and how many launches those copies
take, for bf16-operands.tf."""
import re
import sys

s = sys.stdin.read()
s = s[s.index("func.func @train_step("):]
s = s[: s.index("func.func @", 10)]
launches = re.findall(r"gpu\.launch_func[^\n]*args\(([^\n]*)\)", s)
copied, copying = 0, 0
for args in launches:
    typed = re.findall(r"(%[\w]+) : memref<(\d+x\d+)x(f32|i16)>", args)
    bits = [shape for _, shape, t in typed if t == "i16"]
    n = 0
    for name, shape, t in typed:
        if t == "f32" and name.startswith("%arg") and shape in bits:
            bits.remove(shape)
            n += 1
    copied += n
    copying += n > 0
print("launches", len(launches), "weights", copied, "in", copying)
