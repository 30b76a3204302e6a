# tfc compile --cpu=NAME (issue 25): the manifest records the CPU the code is
# for and its features (the runtime checks them at start-up); an unknown
# CPU, or one without what the portable runtime's kernels need (x86-64-v3),
# is a usage error that lists what --cpu takes.
# RUN: tfc compile %s --cpu=x86-64-v3 --emit=buffers | FileCheck %s --check-prefix=V3
# RUN: tfc compile %s --cpu=x86-64-v4 --emit=buffers | FileCheck %s --check-prefix=V4
# RUN: tfc compile %s --emit=buffers | FileCheck %s --check-prefix=NATIVE
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --cpu=bogus | FileCheck %s --check-prefix=BOGUS
# RUN: %python %S/Inputs/exit_status.py 2 tfc compile %s --cpu=sandybridge | FileCheck %s --check-prefix=OLD
# RUN: rm -f %t.exe && tfc compile %s --cpu=x86-64-v3 -o %t.exe && %t.exe info | FileCheck %s --check-prefix=INFO
# A CPU with AVX-512 links the kernels built for x86-64-v4, one without them
# x86-64-v3's, native this machine's.
# RUN: tfc compile %s --cpu=skylake-avx512 -o %t.skx -v 2>&1 | FileCheck %s --check-prefix=SKX
# RUN: tfc compile %s --cpu=znver2 -o %t.zen2 -v 2>&1 | FileCheck %s --check-prefix=ZEN2
# RUN: tfc compile %s -o %t.native -v 2>&1 | FileCheck %s --check-prefix=LINK-NATIVE

# V3: llvm.mlir.global external constant @tfc_manifest
# V3-SAME: \22cpu\22:{\22features\22:[\22sse3\22,\22ssse3\22,\22cx16\22,\22sse4.1\22,\22sse4.2\22,\22crc32\22,\22popcnt\22,\22sahf\22,\22avx\22,\22avx2\22,\22bmi\22,\22bmi2\22,\22f16c\22,\22fma\22,\22lzcnt\22,\22movbe\22,\22xsave\22],\22name\22:\22x86-64-v3\22,\22target\22:\22x86-64-v3\22}

# V4: \22cpu\22:{\22features\22:[\22sse3\22,{{.*}}\22xsave\22,\22avx512f\22,\22avx512dq\22,\22avx512cd\22,\22avx512bw\22,\22avx512vl\22],\22name\22:\22x86-64-v4\22,\22target\22:\22x86-64-v4\22}

# NATIVE: \22cpu\22:{\22features\22:[{{.*}}],\22name\22:\22native\22,\22target\22:\22{{[a-z0-9_-]+}}\22}

# BOGUS: tfc: error: --cpu=bogus: not a CPU LLVM knows; use native (this machine's CPU), x86-64-v3
# BOGUS-NEXT: tfc: note: --cpu takes native {{.*}} x86-64-v3 x86-64-v4 {{.*}}znver4

# OLD: tfc: error: --cpu=sandybridge: sandybridge lacks avx2, bmi, bmi2, f16c, fma, lzcnt, movbe, which the runtime's portable kernels need (they are built for x86-64-v3 at least)

# SKX: tfc: code for skylake-avx512; linking {{.*}}/lib/libtfc_runtime_x86-64-v4.a
# ZEN2: tfc: code for znver2; linking {{.*}}/lib/libtfc_runtime_x86-64-v3.a
# LINK-NATIVE: tfc: code for this machine's CPU, {{.*}}; linking {{.*}}/lib/libtfc_runtime.a

# INFO: compiled for x86-64-v3 (--cpu=x86-64-v3)
# INFO-NEXT: runtime kernels built with -march=x86-64-v3
# INFO-NEXT: needs sse3 ssse3 cx16 sse4.1 sse4.2 crc32 popcnt sahf avx avx2 bmi bmi2 f16c
# INFO-NEXT: fma lzcnt movbe xsave
# INFO-NEXT: this CPU:

model cpu {
  input x: f32[batch, 3]
  output y = softmax(linear(x, 2, name: "out"), axis: -1)
}

train cpu {
  batch 4
}
