// tf-merge-launches' limit on a merged launch's captured values (4,000, a
// kernel parameter each) holds for chains: two dependent one-block launches
// that capture the same two buffers and 1,999 indices each (4,000 in all)
// chain, with 2,000 indices each (4,002) they stay apart.
// RUN: %python %S/Inputs/chain_captures.py 1999 > %t.within.mlir
// RUN: tf-opt %t.within.mlir --tf-merge-launches | FileCheck %s --check-prefix=WITHIN
// RUN: %python %S/Inputs/chain_captures.py 2000 > %t.over.mlir
// RUN: tf-opt %t.over.mlir --tf-merge-launches | FileCheck %s --check-prefix=OVER

// WITHIN-COUNT-1: gpu.launch blocks
// WITHIN: gpu.barrier
// WITHIN-NOT: gpu.launch blocks

// OVER-COUNT-2: gpu.launch blocks
// OVER-NOT: gpu.barrier
