# tools/gpu/parity.py on a result that differs in one unit's slice (what a
# pre-activation rounded to the other side of a ReLU does to its unit's
# gradients, seen on an H200 in the sixteenth session): it says so, names
# the unit, and checks the entry again on fresh feeds, which must pass
# outright. A difference spread over rows, or one that comes back on fresh
# feeds, fails. The "GPU" side is the CPU binary with one result moved
# (Inputs/parity_flip.py).
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %models/reverse.tf --batch 4 -o %t/cpu
# RUN: %python %S/Inputs/parity_flip.py make %t/cpu row %t/row
# RUN: %python %S/Inputs/parity_flip.py make %t/cpu spread %t/spread
# RUN: %python %S/Inputs/parity_flip.py make %t/cpu always %t/always
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/cpu --cuda %t/row --work %t/w-row --repeat \
# RUN:   | FileCheck %s --check-prefix=ROW
# RUN: not %python %S/../../../tools/gpu/parity.py --cpu %t/cpu --cuda %t/spread --work %t/w-spread \
# RUN:   | FileCheck %s --check-prefix=SPREAD
# RUN: not %python %S/../../../tools/gpu/parity.py --cpu %t/cpu --cuda %t/always --work %t/w-always \
# RUN:   | FileCheck %s --check-prefix=ALWAYS

# ROW: reverse train_step: worst relative error 3.00e-04 (state.encoder.0.linear1.weight.exp_avg.npy)
# ROW-NEXT: reverse train_step: every result over the tolerance is one unit's slice (state.encoder.0.linear1.weight.exp_avg.npy axis 0 index 5): a ReLU that one pre-activation near zero takes on one side only
# ROW-NEXT: reverse train_step: again on fresh feeds
# ROW-NEXT: reverse train_step.fresh: worst relative error 0.00e+00
# ROW-NEXT: PASS reverse train_step GPU vs CPU
# ROW-NEXT: PASS reverse train_step twice on the GPU: the same bytes
# ROW: PASS reverse predict GPU vs CPU

# SPREAD: reverse train_step: worst relative error 3.00e-04
# SPREAD-NOT: one unit's slice
# SPREAD: FAIL reverse train_step GPU vs CPU: worst relative error 3.00e-04 (state.encoder.0.linear1.weight.exp_avg.npy) > 0.0001

# ALWAYS: one unit's slice
# ALWAYS-NEXT: reverse train_step: again on fresh feeds
# ALWAYS-NEXT: reverse train_step.fresh: worst relative error 3.00e-04
# ALWAYS-NEXT: reverse train_step.fresh: again one unit's slice (state.encoder.0.linear1.weight.exp_avg.npy axis 0 index 5)
# ALWAYS-NEXT: FAIL reverse train_step GPU vs CPU: worst relative error 3.00e-04 (state.encoder.0.linear1.weight.exp_avg.npy) > 0.0001 (fresh feeds, after a ReLU flip on the first)
