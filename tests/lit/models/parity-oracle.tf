# tools/gpu/parity.py lets float64 decide a one-unit miss (a ReLU flip):
# `tfc interpret` runs the entry on the same feeds through the reference
# interpreter. Where the GPU agrees with it, the CPU build took the other
# side and the check passes; where the CPU agrees, the fresh feeds decide as
# before. The sides are the CPU binary and a stand-in that moves one unit's
# slice of train_step's results on every feeds (Inputs/parity_flip.py
# always): as the CPU, float64 sides with the real one, the "GPU"; as the
# GPU, against it. Saved float64 results (--save-oracle, for a GPU machine
# without tfc) are used only for the feeds they were computed from.
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %models/reverse.tf --batch 4 -o %t/cpu
# RUN: %python %S/Inputs/parity_flip.py make %t/cpu always %t/always
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/always --cuda %t/cpu --work %t/w-cpu \
# RUN:   --oracle "tfc interpret %models/reverse.tf --batch 4" | FileCheck %s --check-prefix=CPUFLIP
# RUN: not %python %S/../../../tools/gpu/parity.py --cpu %t/cpu --cuda %t/always --work %t/w-gpu \
# RUN:   --oracle "tfc interpret %models/reverse.tf --batch 4" | FileCheck %s --check-prefix=GPUFLIP

# Saved: the first feeds' results, then with the first feeds' digest spoilt
# (the fresh feeds' results decide), then with none saved (the old rule).
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/cpu --cuda %t/cpu --work %t/w-save \
# RUN:   --oracle "tfc interpret %models/reverse.tf --batch 4" --oracle-dir %t/oracle --save-oracle \
# RUN:   | FileCheck %s --check-prefix=SAVE
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/always --cuda %t/cpu --work %t/w-saved \
# RUN:   --oracle-dir %t/oracle | FileCheck %s --check-prefix=SAVED
# RUN: echo 0 > %t/oracle/train_step/feeds.sha256
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/always --cuda %t/cpu --work %t/w-stale \
# RUN:   --oracle-dir %t/oracle | FileCheck %s --check-prefix=STALE
# RUN: rm -rf %t/oracle/train_step.fresh
# RUN: not %python %S/../../../tools/gpu/parity.py --cpu %t/always --cuda %t/cpu --work %t/w-none \
# RUN:   --oracle-dir %t/oracle | FileCheck %s --check-prefix=NONE

# CPUFLIP: reverse train_step: every result over the tolerance is one unit's slice (state.encoder.0.linear1.weight.exp_avg.npy axis 0 index 5)
# CPUFLIP-NEXT: reverse train_step: float64 (the reference interpreter): the GPU {{.*}} from it ({{.*}}), the CPU 3.{{.*}}: the GPU agrees, the CPU build took the other side
# CPUFLIP-NEXT: PASS reverse train_step GPU vs CPU

# GPUFLIP: reverse train_step: every result over the tolerance is one unit's slice
# GPUFLIP-NEXT: reverse train_step: float64 (the reference interpreter): the GPU 3.{{.*}} from it (state.encoder.0.linear1.weight.exp_avg.npy), the CPU {{.*}}: the CPU agrees, the GPU build took the other side
# GPUFLIP-NEXT: reverse train_step: again on fresh feeds
# GPUFLIP: reverse train_step.fresh: again one unit's slice
# GPUFLIP-NEXT: reverse train_step.fresh: float64 (the reference interpreter): {{.*}} the CPU agrees, the GPU build took the other side
# GPUFLIP-NEXT: FAIL reverse train_step GPU vs CPU: {{.*}} (fresh feeds, after a ReLU flip on the first)

# SAVE: saved reverse train_step: float64 results on the first and the fresh feeds in {{.*}}oracle
# SAVE-NEXT: saved reverse grad_step: float64 results
# SAVE-NOT: PASS
# SAVE-NOT: FAIL

# SAVED: reverse train_step: float64 (the reference interpreter): {{.*}} the GPU agrees, the CPU build took the other side
# SAVED-NEXT: PASS reverse train_step GPU vs CPU

# STALE: reverse train_step: no float64 results for these feeds in {{.*}}oracle
# STALE-NEXT: reverse train_step: again on fresh feeds
# STALE: reverse train_step.fresh: float64 (the reference interpreter): {{.*}} the GPU agrees, the CPU build took the other side
# STALE-NEXT: PASS reverse train_step GPU vs CPU

# NONE: reverse train_step.fresh: no float64 results for these feeds
# NONE-NEXT: FAIL reverse train_step GPU vs CPU
