# A post-norm layer's dropout gradient stored by the layer norm backward's
# kernel as it writes dx (tf-lower-to-linalg's layer-norm-dropout; with
# --no-layer-norm-dropout a loop nest after the call): set_anomaly's 8 of
# its 9 layer norm backwards, encoder_decoder's 2 of 12, the medium
# encoder's 12 of 13. Under --target=cuda-emulated the CPU twin applies
# Philox.h's masks as the loop nest does: the same bytes either way, in
# fp32 and with every GEMM on bf16 copies (the dropout's bits alone).
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated -o %t/sa.kernel
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --no-layer-norm-dropout -o %t/sa.nest
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/sa.nest --cuda %t/sa.kernel --work %t/sa --exact \
# RUN:   | FileCheck %s
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all -o %t/sa16.kernel
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all --no-layer-norm-dropout -o %t/sa16.nest
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/sa16.nest --cuda %t/sa16.kernel --work %t/sa16 --exact \
# RUN:   | FileCheck %s
# RUN: tfc compile %models/encoder_decoder.tf --target=cuda-emulated -o %t/ed.kernel
# RUN: tfc compile %models/encoder_decoder.tf --target=cuda-emulated --no-layer-norm-dropout -o %t/ed.nest
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/ed.nest --cuda %t/ed.kernel --work %t/ed --exact \
# RUN:   | FileCheck %s
# CHECK-COUNT-3: PASS {{.*}} the same bits
# CHECK-NOT: FAIL
# Which calls store it: 12 of the medium encoder's train_step's 13 (each
# with its dropout's sample size, 256 x 512, its key and the threshold
# ceil(0.1 x 2^32)); the 13th, the output net's, has no dropout after it.
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --emit=buffers \
# RUN:   | FileCheck %s --check-prefix=MEDIUM
# MEDIUM-LABEL: func.func @train_step(
# MEDIUM-COUNT-12: call @tfc_cuda_layer_norm_backward({{.*}}, %c131072{{(_[0-9]+)?}}, %c{{[0-9]+(_[0-9]+)?}}, %c429496736{{(_[0-9]+)?}}, %cst
# MEDIUM-NOT: call @tfc_cuda_layer_norm_backward({{.*}}, %c429496736
# MEDIUM-LABEL: func.func @predict(
