# The CUDA backend's kernels, checked where there is no GPU: every seed model
# compiled with --target=cuda-emulated (the same tf-map-to-gpu kernels, each
# gpu.launch run as a parallel loop over its blocks and threads on the CPU)
# against the CPU build, on the same parameters and feeds, with the issue's
# GPU tolerances (tools/gpu/parity.py: predict 1e-5, train_step and evaluate
# 1e-4 relative to each result's largest magnitude; train_step twice, the
# same bytes). Small batches keep it quick.
# RUN: rm -rf %t && mkdir -p %t
# RUN: for m in reverse set_anomaly fleuret_cnn fleuret_attention encoder_decoder; do \
# RUN:   tfc compile %models/$m.tf --batch 4 -o %t/$m.cpu && \
# RUN:   tfc compile %models/$m.tf --batch 4 --target=cuda-emulated -o %t/$m.emulated && \
# RUN:   %python %S/../../../tools/gpu/parity.py --cpu %t/$m.cpu --cuda %t/$m.emulated --work %t/$m --repeat || exit 1; \
# RUN: done | FileCheck %s
# CHECK-COUNT-20: PASS {{.*}}
# CHECK-NOT: FAIL
# Merging independent launches (tf-merge-launches) changes no bit: each
# block runs exactly its member's block.
# RUN: for m in reverse set_anomaly fleuret_cnn fleuret_attention encoder_decoder; do \
# RUN:   tfc compile %models/$m.tf --batch 4 --target=cuda-emulated --no-merge-launches -o %t/$m.separate && \
# RUN:   %python %S/../../../tools/gpu/parity.py --cpu %t/$m.separate --cuda %t/$m.emulated --work %t/$m.exact --exact || exit 1; \
# RUN: done | FileCheck %s --check-prefix=EXACT
# EXACT-COUNT-15: PASS {{.*}} the same bits
# EXACT-NOT: FAIL
# Each entry's launches and calls run in another order their graph
# dependencies allow (tf-graph-dependencies' reorder: always the latest
# ready op first), which would let an op read or overwrite bytes too early
# if the pass missed a dependency (it fails when write-after-read hazards
# are ignored): the same bits. The train steps are reordered; a forward is a
# chain. gpt_bytes' prefill and decode too.
# RUN: for m in reverse set_anomaly fleuret_cnn fleuret_attention encoder_decoder; do \
# RUN:   tfc compile %models/$m.tf --batch 4 --target=cuda-emulated --graph-order-check -o %t/$m.reordered && \
# RUN:   %python %S/../../../tools/gpu/parity.py --cpu %t/$m.reordered --cuda %t/$m.emulated --work %t/$m.reordered-exact --exact || exit 1; \
# RUN: done | FileCheck %s --check-prefix=REORDERED
# REORDERED-COUNT-15: PASS {{.*}} the same bits
# REORDERED-NOT: FAIL
# RUN: tfc compile %models/gpt_bytes.tf --batch 2 --target=cuda-emulated -o %t/gpt.emulated
# RUN: tfc compile %models/gpt_bytes.tf --batch 2 --target=cuda-emulated --graph-order-check -o %t/gpt.reordered
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/gpt.reordered --cuda %t/gpt.emulated --work %t/gpt.reordered-exact --exact \
# RUN:   | FileCheck %s --check-prefix=REORDERED-GPT
# REORDERED-GPT-COUNT-5: PASS {{.*}} the same bits
# REORDERED-GPT-NOT: FAIL
# RUN: tfc compile %models/reverse.tf --batch 4 --target=cuda-emulated --graph-order-check --dump-ir=%t/reordered-ir -o %t/reverse.reordered-again
# RUN: cat %t/reordered-ir/*-tf-graph-dependencies.mlir | FileCheck %s --check-prefix=REORDERED-IR
# REORDERED-IR: tfc.entry = "train_step", tfc.graph = {{[{][^}]*[}]}}, tfc.graph_reordered = true
# A train step writes its new parameters and optimizer state over the
# arguments (tf-updates-in-place; the runtime passes one buffer for both)
# and gives the bits of spares the runtime swaps (--no-updates-in-place):
# every update in place, encoder_decoder's and the Fleuret models' (no
# clipping) moved after the last reader of their parameter.
# RUN: for m in reverse set_anomaly fleuret_cnn fleuret_attention encoder_decoder; do \
# RUN:   tfc compile %models/$m.tf --batch 4 --target=cuda-emulated --no-updates-in-place -o %t/$m.spares && \
# RUN:   %python %S/../../../tools/gpu/parity.py --cpu %t/$m.spares --cuda %t/$m.emulated --work %t/$m.spares-exact --exact || exit 1; \
# RUN: done | FileCheck %s --check-prefix=IN-PLACE
# IN-PLACE-COUNT-15: PASS {{.*}} the same bits
# IN-PLACE-NOT: FAIL
# `run` of a train step on a device whose memory is not the host's writes
# over a copy of each parameter (twice: the same bytes, the parameters'
# device copies untouched).
# RUN: env TFC_DEVICE=cpu-copied %python %S/../../../tools/gpu/parity.py --cpu %t/encoder_decoder.spares \
# RUN:   --cuda %t/encoder_decoder.emulated --work %t/encoder_decoder.copied --exact --repeat \
# RUN:   | FileCheck %s --check-prefix=IN-PLACE-COPIED
# IN-PLACE-COPIED: PASS encoder_decoder train_step the same bits
# IN-PLACE-COPIED: PASS encoder_decoder train_step twice on the GPU: the same bytes
# IN-PLACE-COPIED-NOT: FAIL
# RUN: for m in reverse set_anomaly fleuret_cnn fleuret_attention encoder_decoder; do \
# RUN:   tfc compile %models/$m.tf --batch 4 --target=cuda-emulated --emit=buffers -o - | \
# RUN:     %python -c "import re,sys; r=[x for e in re.findall(r'results = \[(.*?)\]\}', sys.stdin.read()) for x in re.findall(r'\{[^}]*\}', e) if re.search(r'kind = \"(param|state)\"', x)]; print(sys.argv[1], len(r), 'updates,', sum('in_place_of' in x for x in r), 'in place')" $m; \
# RUN: done | FileCheck %s --check-prefix=COUNTS
# COUNTS: reverse 60 updates, 60 in place
# COUNTS: set_anomaly 168 updates, 168 in place
# COUNTS: fleuret_cnn 30 updates, 30 in place
# COUNTS: fleuret_attention 33 updates, 33 in place
# COUNTS: encoder_decoder 216 updates, 216 in place
# A train step's loss and its gradient in one call (tfc_cross_entropy_fused,
# the twin of tfc_cuda_cross_entropy_fused) against the two calls of
# --no-fused-cross-entropy: the same operations in the same order, the same
# bits (the models whose loss is tf.cross_entropy).
# RUN: for m in reverse set_anomaly; do \
# RUN:   tfc compile %models/$m.tf --batch 4 --target=cuda-emulated --no-fused-cross-entropy -o %t/$m.pair && \
# RUN:   %python %S/../../../tools/gpu/parity.py --cpu %t/$m.pair --cuda %t/$m.emulated --work %t/$m.pair-exact --exact || exit 1; \
# RUN: done | FileCheck %s --check-prefix=FUSED-LOSS
# FUSED-LOSS-COUNT-6: PASS {{.*}} the same bits
# FUSED-LOSS-NOT: FAIL

# Long elementwise kernels take 4 elements a thread, with 16-byte loads and
# stores where their buffers are aligned (tf-map-to-gpu's coarsening):
# set_anomaly at batch 16 and gpt_bytes at 2, whose activations, dropouts
# and Adam updates are long enough, give the same bytes as with one element
# a thread (--no-thread-coarsening), and set_anomaly's stay within the
# tolerances of the CPU build.
# RUN: tfc compile %models/set_anomaly.tf --batch 16 -o %t/sa16.cpu
# RUN: for pair in set_anomaly:16 gpt_bytes:2; do m=${pair%%:*} b=${pair##*:}; \
# RUN:   tfc compile %models/$m.tf --batch $b --target=cuda-emulated -o %t/$m.wide && \
# RUN:   tfc compile %models/$m.tf --batch $b --target=cuda-emulated --no-thread-coarsening -o %t/$m.one && \
# RUN:   %python %S/../../../tools/gpu/parity.py --cpu %t/$m.one --cuda %t/$m.wide --work %t/$m.wide-exact --exact || exit 1; \
# RUN: done | FileCheck %s --check-prefix=WIDE
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/sa16.cpu --cuda %t/set_anomaly.wide --work %t/sa16 \
# RUN:   | FileCheck %s --check-prefix=WIDE-CPU
# WIDE-COUNT-8: PASS {{.*}} the same bits
# WIDE-NOT: FAIL
# WIDE-CPU-COUNT-3: PASS set_anomaly {{.*}} GPU vs CPU
# WIDE-CPU-NOT: FAIL
