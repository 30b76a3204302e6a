# --bf16-operands (tf-bf16-gemm-operands), checked without a GPU:
# --target=cuda-emulated rounds the GEMMs' operands to bf16 as the GPU's
# copies do (the same integer rounding in generated code) and multiplies
# the rounded values in fp32, exactly as bf16 tensor cores do (only the
# order of the sums differs). Reverse with every GEMM on bf16 copies still
# trains to 100% test accuracy (issue 28: bf16 matches fp32's accuracy).
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %models/reverse.tf --target=cuda-emulated --bf16-operands=all -o %t/reverse
# RUN: %t/reverse train --run-dir %t/run | FileCheck %s --check-prefix=TRAIN
# TRAIN: test (best checkpoint): loss {{[0-9.]+}}  accuracy 1.0000
# Reverse's products are small: `large` (--precision bf16's default on the
# GPU) copies none of them.
# RUN: tfc compile %models/reverse.tf --target=cuda-emulated --bf16-operands=large --emit=buffers \
# RUN:   | FileCheck %s --check-prefix=SMALL
# SMALL-NOT: tfc.bf16_cast
# The medium encoder's are all large: each of train_step's 79 GEMM calls
# reads bf16 A and B (flags 2 or 3), from 86 copies (a linear layer's output
# gradient is copied once for both of its products, a weight once for the
# forward and the backward, a layer norm's output too, since only the
# weight gradient's product reads it in the backward, or that and the
# norm's ReLU gradient reading its gate from the bits; attention's output
# again in the backward, where attention's backward reads it in fp32): 13
# written by the generated loop nest that produced them (a ReLU's gradient,
# the one-hot tokens that only the input layer's weight gradient reads, at
# the step's end), 13 by the layer norms' kernel (its y16), 13 by the layer
# norm backwards' kernel (12 their dx's dropout, the post-norm layers'
# dropout gradients, and the output net's dx itself, as bits alone; with
# --no-layer-norm-dropout 12 more loop nests), 12 by the attention kernels
# (each forward its output's bits beside it, each backward the QKV
# projection's gradient as bits alone), 1 by the loss's kernel (dlogits as
# bits alone), 33 by copy nests of their own.
# Those 13 nests write the copy alone: the
# one-hot tokens and 6 gradients of the backward, whose fp32 values nothing
# else reads, and the FFN's 6 ReLU outputs, which the backward reads only as its
# weight gradient's operand (no copy nest: 6 fewer) and its ReLU gradient's
# sign test (6 loop nests reading bits, widened); and the output net's
# activation, whose y16 its forward stores alone (no f32 y) for the
# classifier's products and its backward's ReLU gate (GateBits: 1 gate).
# And 12 products only such nests read are stored in bf16 by cuBLASLt (the
# FFN's first products before their bias, ReLU and dropout, and their
# activations' gradients before the dropout's and ReLU's): 12 results, the
# 6 forward nests reading them widened too (the backward's already read
# bits). --no-bf16-gemm-results keeps them fp32 (widened 6).
# And the 6 QKV projections, which only attention reads, are stored in bf16
# with their bias's bf16 copy (6 more copies, made beside the weights'),
# and the 12 attention calls read the bits (inputs 12); and so are the 6
# out projections' input gradients, which only the attention backwards
# read, as their dO (6 more results, dout 6);
# --no-bf16-attention-inputs keeps them all fp32 (86 copies, 33 nests,
# results 12). --no-bf16-gemm-results keeps the 12 fp32 (results 6, dO's).
# --no-bf16-activations keeps those 7 in fp32 too: 99 copies, 46 nests, the
# output net's activation copied again for its weight gradient, 12 results;
# --no-bf16-attention-outputs leaves attention's 12 to copy nests: 51;
# --no-layer-norm-dropout the dropout gradients' 12 to the loop nests that
# apply the dropout (25 alone).
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --bf16-operands=large --emit=buffers \
# RUN:   | FileCheck %s --check-prefix=MEDIUM
# MEDIUM-LABEL: func.func @train_step(
# MEDIUM-COUNT-79: call @tfc_cuda_sgemm{{(_fused|_bias_grad)?}}(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c{{[23]}}{{(_[0-9]+)?}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c{{[23]}}{{(_[0-9]+)?}},
# MEDIUM-NOT: call @tfc_cuda_sgemm
# MEDIUM-LABEL: func.func @predict(
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --bf16-operands=large --emit=buffers \
# RUN:   | %python %S/Inputs/bf16_copies.py | FileCheck %s --check-prefix=COPIES
# COPIES: copies 92 nests 39 norms 13 dropouts 13 attention 12 losses 1 alone 13 widened 12 gates 1 from 1 results 18 qkv 6 inputs 12 dout 6
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --bf16-operands=large --no-bf16-gemm-results --emit=buffers \
# RUN:   | %python %S/Inputs/bf16_copies.py | FileCheck %s --check-prefix=FP32-RESULTS
# FP32-RESULTS: copies 92 nests 39 norms 13 dropouts 13 attention 12 losses 1 alone 13 widened 6 gates 1 from 1 results 6 qkv 6 inputs 12 dout 6
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --bf16-operands=large --no-bf16-attention-inputs --emit=buffers \
# RUN:   | %python %S/Inputs/bf16_copies.py | FileCheck %s --check-prefix=FP32-QKV
# FP32-QKV: copies 86 nests 33 norms 13 dropouts 13 attention 12 losses 1 alone 13 widened 12 gates 1 from 1 results 12 qkv 0 inputs 0 dout 0
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --bf16-operands=large --no-bf16-activations --emit=buffers \
# RUN:   | %python %S/Inputs/bf16_copies.py | FileCheck %s --check-prefix=FP32-ACTIVATIONS
# FP32-ACTIVATIONS: copies 99 nests 46 norms 13 dropouts 13 attention 12 losses 1 alone 7 widened 6 gates 0 from 0 results 12 qkv 6 inputs 12 dout 6
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --bf16-operands=large --no-bf16-attention-outputs --emit=buffers \
# RUN:   | %python %S/Inputs/bf16_copies.py | FileCheck %s --check-prefix=ATTENTION-NESTS
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --bf16-operands=large --no-layer-norm-dropout --emit=buffers \
# RUN:   | %python %S/Inputs/bf16_copies.py | FileCheck %s --check-prefix=DROPOUT-NESTS
# DROPOUT-NESTS: copies 92 nests 39 norms 13 dropouts 1 attention 12 losses 1 alone 25 widened 12 gates 1 from 1 results 18 qkv 6 inputs 12 dout 6
# ATTENTION-NESTS: copies 92 nests 51 norms 13 dropouts 13 attention 0 losses 1 alone 13 widened 12 gates 1 from 1 results 18 qkv 6 inputs 12 dout 6
# The weights' copies are made at the step's start, side by side (each
# before its first product, they were a launch apiece), and a copy of an
# activation beside the loop nest before its products (attention's output
# in the backward, beside the ReLU's gradient): the medium encoder's 26
# copied weights take one launch, its step 18 launches (69 with a launch a
# weight, each attention output's copy a launch of its own, the dropout
# gradients in loop nests after the layer norm backwards, the residual
# sums in loop nests before the layer norms and the output net's activation
# copied again for its weight gradient).
# RUN: tfc compile %models/medium_encoder.tf --target=cuda --precision bf16 --emit=gpu --cuda-path=%t.no-cuda \
# RUN:   | %python %S/Inputs/weight_copies.py | FileCheck %s --check-prefix=WEIGHTS
# WEIGHTS: launches 18 weights 26 in 1
# The copies' 2-byte results take 4 elements a thread like 4-byte ones
# (tf-map-to-gpu's coarsening, vector<4xi16> where aligned): set_anomaly at
# batch 16 with every GEMM on copies gives the same bytes as with one
# element a thread.
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all -o %t/sa.wide
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all --no-thread-coarsening -o %t/sa.one
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/sa.one --cuda %t/sa.wide --work %t/sa --exact \
# RUN:   | FileCheck %s --check-prefix=WIDE
# WIDE-COUNT-3: PASS {{.*}} the same bits
# WIDE-NOT: FAIL
# The attention kernels' bf16 outputs (their CPU twins here) are the bits
# the copy nests would make: set_anomaly and encoder_decoder (whose cross
# attention's dq and dk, dv lie in buffers of their own) with every GEMM on
# copies give the same bytes with and without them.
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all --no-bf16-attention-outputs -o %t/sa.nests
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/sa.nests --cuda %t/sa.wide --work %t/sa-nests --exact \
# RUN:   | FileCheck %s --check-prefix=ATTENTION
# RUN: tfc compile %models/encoder_decoder.tf --target=cuda-emulated --bf16-operands=all -o %t/ed.kernels
# RUN: tfc compile %models/encoder_decoder.tf --target=cuda-emulated --bf16-operands=all --no-bf16-attention-outputs -o %t/ed.nests
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/ed.nests --cuda %t/ed.kernels --work %t/ed-nests --exact \
# RUN:   | FileCheck %s --check-prefix=ATTENTION
# ATTENTION-COUNT-3: PASS {{.*}} the same bits
# ATTENTION-NOT: FAIL
# --bf16-keep-activation-copies: every forward activation's copy serves the
# backward's weight gradients too (the medium encoder: 86 copies, 33 nests
# of their own, 13 by the layer norms and 12 by the attention kernels,
# against 92, 39, 13 and 12); a copy made
# earlier holds the same bits,
# so set_anomaly's entries give the same bytes with and without.
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --bf16-operands=large --bf16-keep-activation-copies --emit=buffers \
# RUN:   | %python %S/Inputs/bf16_copies.py | FileCheck %s --check-prefix=KEEP-COPIES
# KEEP-COPIES: copies 86 nests 33 norms 13 dropouts 13 attention 12 losses 1 alone 13 widened 12 gates 1 from 1 results 18 qkv 6 inputs 12 dout 6
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all --bf16-keep-activation-copies -o %t/sa.keep
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/sa.keep --cuda %t/sa.wide --work %t/sa-keep --exact \
# RUN:   | FileCheck %s --check-prefix=KEEP
# KEEP-COUNT-3: PASS {{.*}} the same bits
# KEEP-NOT: FAIL
# Activations kept as their bits alone (set_anomaly with every GEMM on
# copies: its ReLU outputs' gradients test the widened bits) give the bytes
# of the fp32 activations beside their copies (--no-bf16-activations): the
# same values, since no output of a ReLU lies in (0, 2^-134] (rounded to a
# bf16 zero) on these feeds. (Both with their products in fp32: with fp32
# activations a product's epilogue nest writes the activation in its
# buffer, so fewer products are stored in bf16, 5 of set_anomaly's 9.)
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all --no-bf16-gemm-results -o %t/sa.nores
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all --no-bf16-gemm-results --no-bf16-activations -o %t/sa.fp32
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/sa.fp32 --cuda %t/sa.nores --work %t/sa-fp32 --exact \
# RUN:   | FileCheck %s --check-prefix=BITS
# BITS-COUNT-3: PASS {{.*}} the same bits
# BITS-NOT: FAIL
# So does reverse's output net, whose ReLU gate its layer norm backward
# reads from the bits the forward stores alone (GateBits): the bytes of the
# f32 gate's build.
# RUN: tfc compile %models/reverse.tf --target=cuda-emulated --bf16-operands=all --emit=buffers \
# RUN:   | %python %S/Inputs/bf16_copies.py | FileCheck %s --check-prefix=REVERSE-GATE
# REVERSE-GATE: gates 1 from 1
# RUN: tfc compile %models/reverse.tf --target=cuda-emulated --bf16-operands=all --no-bf16-activations -o %t/reverse.fp32
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/reverse.fp32 --cuda %t/reverse --work %t/rev-fp32 --exact \
# RUN:   | FileCheck %s --check-prefix=BITS
# encoder_decoder with every GEMM on copies (11 producers writing the copy
# alone, 4 ReLU gradients testing the bits) trains as its fp32 build does:
# a validation loss of 0.0133 against 0.0128 after the file's 50 epochs
# (0.60 after the first), checked below 0.02.
# RUN: tfc compile %models/encoder_decoder.tf --target=cuda-emulated --bf16-operands=all -o %t/ed
# RUN: %t/ed train --run-dir %t/ed-run | FileCheck %s --check-prefix=ED
# ED: epoch 50/50 train: loss {{[0-9.]+}} | val: loss 0.01{{[0-9]+}}
