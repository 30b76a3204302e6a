# models/medium_encoder.tf, issue 28's medium encoder: 20,203,496 parameters
# (tools/bench/peers.py's PyTorch and JAX twins must have as many), reverse.tf's
# layers at sizes 1,000 / 256 / 512 / 8 heads / 6 layers / 2,048, on the reverse
# task of 1,000 classes. A small batch keeps the compile quick.
# RUN: rm -f %t && tfc compile %models/medium_encoder.tf --batch 2 -o %t
# RUN: %t info | FileCheck %s

# CHECK: model medium_encoder, compiled for batch 2
# CHECK: tokens{{ +}}i32[2, 256]
# CHECK: logits{{ +}}f32[2, 256, 1000]
# CHECK: input_net{{ +}}weight[512, 1000]
# CHECK: encoder.5.linear2{{ +}}weight[512, 2048]
# CHECK-NOT: encoder.6
# CHECK: output{{ +}}weight[1000, 512]
# CHECK: total{{ +}}20,203,496
# CHECK: data reverse_sequences(classes: 1000, seq: 256,
# CHECK: optimizer adam(
# CHECK: schedule cosine_warmup(
# CHECK: clip_grad_norm 5
