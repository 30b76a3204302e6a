# What tf-graph-dependencies finds in the seed models' CUDA entries
# (`tfc.graph`: their device ops, and the most on one path of ops that wait
# for each other): a train step branches (its weight gradients are off the
# path to the next layer's input gradient), as does encoder_decoder's
# forward (the encoder beside the target's embedding); reverse's forward is
# a chain. --no-graph-dependencies leaves every entry a chain, uncounted.
# RUN: for m in reverse set_anomaly encoder_decoder; do \
# RUN:   tfc compile %models/$m.tf --target=cuda --emit=gpu --cuda-path=%t.no-cuda -o - | \
# RUN:     %python -c "import re,sys; [print(sys.argv[1], e, 'branches' if int(l) < int(n) else 'a chain') for e,l,n in re.findall(r'tfc.entry = \"(\w+)\", tfc.graph = \{longest_path = (\d+) : i64, ops = (\d+)', sys.stdin.read())]" $m; \
# RUN: done | FileCheck %s
# CHECK: reverse train_step branches
# CHECK: reverse predict a chain
# CHECK: set_anomaly train_step branches
# CHECK: encoder_decoder train_step branches
# CHECK: encoder_decoder predict branches
# RUN: tfc compile %models/reverse.tf --target=cuda --emit=gpu --cuda-path=%t.no-cuda --no-graph-dependencies -o - \
# RUN:   | FileCheck %s --check-prefix=NONE --implicit-check-not=tfc_cuda_graph_node --implicit-check-not=tfc.graph
# NONE: func.func @train_step
# `info` says what each entry has (the manifest's "graph"), or that a model
# compiled without them captures chains.
# RUN: tfc compile %models/reverse.tf --target=cuda --cuda-path=%cuda --cuda-image=ptx -o %t.reverse
# RUN: %t.reverse info | FileCheck %s --check-prefix=INFO
# INFO: graph dependencies (TFC_GRAPH_DEPENDENCIES=1, off by default): a captured entry's independent launches and calls at once: train_step {{[0-9]+}} ops, {{[0-9]+}} on the longest path; grad_step
# RUN: tfc compile %models/reverse.tf --target=cuda --cuda-path=%cuda --cuda-image=ptx --no-graph-dependencies -o %t.chain
# RUN: %t.chain info | FileCheck %s --check-prefix=INFO-NONE
# INFO-NONE: graph dependencies: none compiled in, a captured entry is a chain
