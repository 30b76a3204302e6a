# RUN: not tfc compile %s 2>&1 | FileCheck %s
# A layer given a tensor of the wrong rank is one error, not a crash (found by
# the fuzzer: encoder read the last dimension of a scalar).
model m {
  input x: f32[2, 6, 8]
  # CHECK: err-layer-rank.tf:[[@LINE+1]]:14: error:
  output y = encoder(sum(x))
}
