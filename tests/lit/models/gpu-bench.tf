# tools/bench/gpu.sh's pipeline (gpu_bench.py) where there is no GPU and no
# peer: --dry-run-cpu on a CPU build of reverse, the peers' interpreter missing.
# tfc's cells are filled (a train step and one epoch), every peer's cell says
# why it is empty, the run succeeds and leaves its three files. Never a time.
# A variant build beside (here copies standing in for reverse.bf16 and
# reverse.persistent, which need --target=cuda) gets its own cell; one that
# is not there a dash.
# RUN: rm -rf %t && mkdir -p %t/cpu
# RUN: tfc compile %models/reverse.tf -o %t/cpu/reverse
# RUN: cp %t/cpu/reverse %t/cpu/reverse.bf16
# RUN: cp %t/cpu/reverse %t/cpu/reverse.persistent
# RUN: %python %S/../../../tools/bench/gpu_bench.py --dry-run-cpu --dir %t --workloads reverse \
# RUN:   --python %t/no-python --steps 1 --warmup 0 2>%t.err | FileCheck %s
# RUN: ls %t/results | FileCheck %s --check-prefix=FILES
# With --tune each build is tuned first (a CPU build has nothing to tune), the
# table says so, and each tfc run notes what tune chose.
# RUN: %python %S/../../../tools/bench/gpu_bench.py --dry-run-cpu --dir %t --workloads reverse \
# RUN:   --no-epochs --tune --out %t/tuned --python %t/no-python --steps 1 --warmup 0 2>%t.err \
# RUN:   | FileCheck %s --check-prefix=TUNED
# RUN: not %python %S/../../../tools/bench/gpu_bench.py --dir %t/nothing 2>&1 | FileCheck %s --check-prefix=UNPREPARED
# The ratio's tfc side: its fastest build at the peers' TF32 or finer (fp32,
# tf32, persistent), never bf16 (times of the sixteenth session's H200 run).
# RUN: %python %S/Inputs/best_ratio.py | FileCheck %s --check-prefix=RATIO

# CHECK: # tfc against PyTorch and JAX on the CPU: a dry run (issue 28)
# CHECK: - tfc: {{.*}}; runtime settings: the defaults
# CHECK: | workload | batch | params | tfc | tfc tf32 | tfc bf16 | tfc persistent | PyTorch eager | torch.compile | torch.compile + CUDA graphs | JAX jit | best peer / best tfc |
# CHECK: | reverse train step | 128 | 10,346 | {{[0-9.]+}} ms | - | {{[0-9.]+}} ms | {{[0-9.]+}} ms | no PyTorch ({{[^|]+}}) | no PyTorch ({{[^|]+}}) | no PyTorch ({{[^|]+}}) | no JAX ({{[^|]+}}) | - |
# CHECK: | reverse, 1 epoch (390 steps) | 128 | 10,346 | {{[0-9.]+}} s | - | - | - | no PyTorch
# CHECK: Every run:
# CHECK: | reverse train step | tfc | {{[0-9.]+}} ms | {{.*}} | loss {{[0-9.]+}} |
# CHECK: | reverse, 1 epoch (390 steps) | tfc | {{[0-9.]+}} s | before the first step {{[0-9.]+}} (the dataset {{[0-9.]+}}), 390 steps {{[0-9.]+}} (the first {{[0-9.]+}}), validation {{[0-9.]+}}, checkpoints {{[0-9.]+}}, test {{[0-9.]+}}, the rest {{[0-9.]+}} | test accuracy {{[0-9.]+}} |

# TUNED: - tfc: {{.*}}; runtime settings: each build's as `tune` chose them just before (--tune)
# TUNED: | reverse train step | tfc | {{[0-9.]+}} ms | {{.*}} | loss {{[0-9.]+}} | tune: nothing to tune |
# TUNED: | reverse train step | tfc bf16 | {{[0-9.]+}} ms | {{.*}} | tune: nothing to tune |

# FILES: logs.txt
# FILES-NEXT: results.json
# FILES-NEXT: table.md

# UNPREPARED: no {{.*}}nothing/cuda: run tools/bench/gpu-prepare.sh on the CPU machine first

# RATIO: 0.88x (torch.compile / tfc tf32)
# RATIO-NEXT: 5.41x (JAX jit / tfc)
# RATIO-NEXT: -
