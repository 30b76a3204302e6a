# Sizes that would exhaust memory or time are errors, not aborts or hangs.
# RUN: not tfc compile %s --model pe 2>&1 | FileCheck %s --check-prefix=PE
# RUN: not tfc compile %s --model mask 2>&1 | FileCheck %s --check-prefix=MASK
# RUN: not tfc compile %s --model layers 2>&1 | FileCheck %s --check-prefix=LAYERS
# RUN: not tfc compile %s --model reshape 2>&1 | FileCheck %s --check-prefix=RESHAPE
# RUN: not tfc compile %s --model big_input 2>&1 | FileCheck %s --check-prefix=INPUT

model pe {
  input x: f32[2, 4, 16]
  # PE: err-size-limits.tf:[[@LINE+1]]:15: error: positional_encoding(100000000000, 1000) needs a positive length and a positive even dimension, at most 2^26 values in all
  let y = x + positional_encoding(100000000000, 1000)
  output y
}

model mask {
  # MASK: err-size-limits.tf:[[@LINE+1]]:11: error: causal_mask(10000000) needs a size in [1, 8192]
  let m = causal_mask(10000000)
  output m
}

model layers {
  input x: f32[2, 4, 16]
  # LAYERS: err-size-limits.tf:[[@LINE+1]]:11: error: encoder: 1000000000 layers is outside [1, 1024]
  let y = encoder(x, layers: 1000000000)
  output y
}

model reshape {
  input x: f32[2, 4, 16]
  # RESHAPE: err-size-limits.tf:[[@LINE+1]]:11: error: reshape to [4611686018427387904, 4, 16]: dimensions must be positive (one may be -1) and the size at most 2^31 elements
  let y = reshape(x, [4611686018427387904, 4, 16])
  output y
}

model big_input {
  # INPUT: err-size-limits.tf:[[@LINE+1]]:9: error: input 'x' has shape [65536, 65536, 4]
  input x: f32[65536, 65536, 4]
  output x
}
