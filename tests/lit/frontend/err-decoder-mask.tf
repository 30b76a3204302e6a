# RUN: not tfc compile %s 2>&1 | FileCheck %s
# A mask of the wrong size inside a decoder is one error, not a crash (the
# failed attention must not reach the feed-forward block; found by the fuzzer).
model m {
  input src: i32[2, 6]
  input tgt: i32[2, 6]
  let memory = embedding(src, 11, 8)
  # CHECK: err-decoder-mask.tf:[[@LINE+2]]:11: error: cannot broadcast [13, 13] to [2, 2, 6, 6]
  # CHECK-NOT: error:
  let d = decoder(embedding(tgt, 11, 8), memory, heads: 2, mask: causal_mask(13))
  output d
}
