# `MODEL bench`: the output format of the timing subcommand (never a time).
# A model with a train block is fed a batch of its dataset:
# RUN: rm -f %t.reverse && tfc compile %models/reverse.tf --batch 2 -o %t.reverse
# RUN: %t.reverse --threads 1 bench --steps 2 --warmup 1 | FileCheck %s --check-prefix=REVERSE
# RUN: %t.reverse bench --entry predict --steps 1 --warmup 0 | FileCheck %s --check-prefix=PREDICT
# RUN: not %t.reverse bench --entry nothing 2>&1 | FileCheck %s --check-prefix=BADENTRY
# --min-seconds times calls past --steps (a call of this batch-2 model takes
# microseconds: a third is due long before 0.2 s) and reports the same loss,
# the one after --steps; a negative value is refused.
# RUN: %t.reverse --threads 1 bench --entry train_step --steps 2 --warmup 1 | grep -o 'loss=.*' > %t.loss.fixed
# RUN: %t.reverse --threads 1 bench --entry train_step --steps 2 --warmup 1 --min-seconds 0.2 > %t.longer
# RUN: grep -o 'loss=.*' %t.longer | diff - %t.loss.fixed
# RUN: FileCheck %s --check-prefix=LONGER < %t.longer
# RUN: not %t.reverse bench --min-seconds -1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
# --save-batch writes the batch's inputs, one .npy each, into an existing
# directory (tools/bench hands them to the peers); a missing one is refused.
# RUN: rm -rf %t.batch && mkdir %t.batch
# RUN: %t.reverse bench --entry predict --steps 1 --warmup 0 --save-batch %t.batch
# RUN: ls %t.batch | FileCheck %s --check-prefix=SAVED
# RUN: od -A n -c -N 6 %t.batch/tokens.npy | FileCheck %s --check-prefix=NPY
# RUN: not %t.reverse bench --save-batch %t.batch/missing 2>&1 | FileCheck %s --check-prefix=NODIR
# --profile times each operation of a GPU binary; a CPU binary's entry is one
# host function, so it says so before timing anything.
# RUN: not %t.reverse bench --profile 2>&1 | FileCheck %s --check-prefix=PROFILE
# This file's model has no train block: synthetic inputs.
# RUN: rm -f %t.synthetic && tfc compile %s --batch 3 -o %t.synthetic
# RUN: %t.synthetic bench --steps 3 --warmup 0 --entry all | FileCheck %s --check-prefix=SYNTHETIC

# PROFILE-NOT: bench model=
# PROFILE: error: bench --profile times each kernel of a GPU binary; device 'cpu' runs an entry as one host function (compile with --target=cuda)

# REVERSE: bench model=reverse batch=2 threads=1 data=reverse_sequences
# REVERSE-NEXT: bench train_step median_ms={{[0-9]+\.[0-9]+}} min_ms={{[0-9]+\.[0-9]+}} mean_ms={{[0-9]+\.[0-9]+}} steps=2 warmup=1 threads=1 arena_bytes={{[1-9][0-9]*}} max_rss_kib={{[1-9][0-9]*}} loss={{[0-9.e+-]+}}{{$}}
# REVERSE-NEXT: bench predict median_ms={{[0-9]+\.[0-9]+}} min_ms={{[0-9]+\.[0-9]+}} mean_ms={{[0-9]+\.[0-9]+}} steps=2 warmup=1 threads=1 arena_bytes={{[1-9][0-9]*}} max_rss_kib={{[1-9][0-9]*}}{{$}}
# REVERSE-NOT: bench

# PREDICT: bench model=reverse batch=2
# PREDICT-NOT: train_step
# PREDICT: bench predict median_ms={{[0-9.]+}} min_ms={{[0-9.]+}} {{.*}} steps=1 warmup=0
# PREDICT-NOT: bench

# BADENTRY: --entry: nothing not in {train_step,predict,evaluate,all}

# SAVED: labels.npy
# SAVED-NEXT: tokens.npy
# SAVED-NOT: .npy

# NPY: 223   N   U   M   P   Y

# NODIR: --save-batch: Directory does not exist

# LONGER: bench train_step {{.*}} steps={{([3-9]|[1-9][0-9]+)}} warmup=1 {{.*}} loss={{[0-9.e+-]+}}{{$}}

# NEGATIVE: --min-seconds: Value -1 not in range 0{{.*}} to 3600

# SYNTHETIC: bench model=bench_synthetic batch=3 threads={{[0-9]+}} data=synthetic
# SYNTHETIC-NEXT: bench train_step median_ms={{[0-9.]+}} min_ms={{[0-9.]+}} mean_ms={{[0-9.]+}} steps=3 warmup=0 {{.*}} loss={{[0-9.e+-]+}}{{$}}
# SYNTHETIC-NEXT: bench predict median_ms={{[0-9.]+}} min_ms={{[0-9.]+}} mean_ms={{[0-9.]+}} steps=3 warmup=0

model bench_synthetic {
  input x: f32[batch, 4]
  input y: i32[batch]
  let logits = linear(x, 3, name: "out")
  loss cross_entropy(logits, y)
  output logits
}
