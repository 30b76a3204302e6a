"""Two dependent one-block launches (the first writes %y, the second reads it
and writes %x, which the first reads), each capturing both buffers and N
indices of its own (computed from an argument, so not constants): 2 * N + 2
captured values together."""
import sys

n = int(sys.argv[1])
lines = ["func.func @captures(%x: memref<64xf32>, %y: memref<64xf32>, %n: index) {",
         "  %c1 = arith.constant 1 : index",
         "  %c64 = arith.constant 64 : index"]
for i in range(2 * n):
    lines.append(f"  %k{i} = arith.addi %n, %c{'64' if i % 2 else '1'} : index" if i < 2 else
                 f"  %k{i} = arith.addi %k{i - 1}, %c1 : index")
for member in range(2):
    src, dst = ("%x", "%y") if member == 0 else ("%y", "%x")
    lines.append("  gpu.launch blocks(%b, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)")
    lines.append("             threads(%t, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {")
    lines.append("    %s0 = arith.addi %t, %t : index")
    for i in range(n):
        lines.append(f"    %s{i + 1} = arith.addi %s{i}, %k{member * n + i} : index")
    lines.append(f"    %i = arith.remui %s{n}, %c64 : index")
    lines.append(f"    %v = memref.load {src}[%i] : memref<64xf32>")
    lines.append(f"    memref.store %v, {dst}[%t] : memref<64xf32>")
    lines.append("    gpu.terminator")
    lines.append("  }")
lines += ["  return", "}"]
print("\n".join(lines))
