# RUN: not tfc compile %s 2>&1 | FileCheck %s
# A layer whose parameters fail to be created stops there (found by the
# fuzzer: the attention's projections must not be split when they failed).
model m {
  input x: f32[2, 6, 8]
  let a = encoder(x, heads: 2, name: "enc")
  # CHECK: err-layer-after-error.tf:[[@LINE+1]]:11: error: parameter 'enc.0.self_attn.qkv.weight' is defined twice
  let b = decoder(x, a, heads: 2, name: "enc")
  output b
}
