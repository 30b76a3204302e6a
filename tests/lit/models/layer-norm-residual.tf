# A post-norm layer's residual sum and its dropout made by the layer norm
# forward's kernel (tf-lower-to-linalg's layer-norm-residual; with
# --no-layer-norm-residual a loop nest after the GEMM): set_anomaly's 8 of
# its 9 layer norms, encoder_decoder's 10 of 12, the medium encoder's 12
# of 13. Under --target=cuda-emulated the CPU twin makes the sum with
# Philox.h's masks as the loop nest does, and the GEMM adds the bias as its
# epilogue did: the same bytes either way, in fp32 and with every GEMM on
# bf16 copies.
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated -o %t/sa.kernel
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --no-layer-norm-residual -o %t/sa.nest
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/sa.nest --cuda %t/sa.kernel --work %t/sa --exact \
# RUN:   | FileCheck %s
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all -o %t/sa16.kernel
# RUN: tfc compile %models/set_anomaly.tf --batch 16 --target=cuda-emulated --bf16-operands=all --no-layer-norm-residual -o %t/sa16.nest
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/sa16.nest --cuda %t/sa16.kernel --work %t/sa16 --exact \
# RUN:   | FileCheck %s
# RUN: tfc compile %models/encoder_decoder.tf --target=cuda-emulated -o %t/ed.kernel
# RUN: tfc compile %models/encoder_decoder.tf --target=cuda-emulated --no-layer-norm-residual -o %t/ed.nest
# RUN: %python %S/../../../tools/gpu/parity.py --cpu %t/ed.nest --cuda %t/ed.kernel --work %t/ed --exact \
# RUN:   | FileCheck %s
# CHECK-COUNT-3: PASS {{.*}} the same bits
# CHECK-NOT: FAIL
# Which calls make it: 12 of the medium encoder's train_step's 13 (each with
# its residual, its sum's buffer, its dropout's sample size 256 x 512, its
# key and the threshold ceil(0.1 x 2^32)); the 13th, the output net's,
# follows a GEMM without dropout. Outside training (predict) none.
# RUN: tfc compile %models/medium_encoder.tf --target=cuda-emulated --emit=buffers \
# RUN:   | FileCheck %s --check-prefix=MEDIUM
# MEDIUM-LABEL: func.func @train_step(
# MEDIUM-COUNT-12: call @tfc_cuda_layer_norm_forward({{([^,]+, )+}}%c131072{{(_[0-9]+)?}}, %c{{[0-9]+(_[0-9]+)?}}, %c429496736{{(_[0-9]+)?}}, %cst
# MEDIUM-NOT: call @tfc_cuda_layer_norm_forward({{.*}}, %c429496736
# MEDIUM-LABEL: func.func @predict(
# MEDIUM-NOT: call @tfc_cuda_layer_norm_forward({{.*}}, %c429496736
# MEDIUM-LABEL: func.func @evaluate(
# A train step's launches of generated kernels, without and with (the
# medium encoder's 12 loop nests of bias, dropout and residual go).
# RUN: tfc compile %models/medium_encoder.tf --target=cuda --precision bf16 --emit=gpu --cuda-path=%t.no-cuda \
# RUN:   | %python %S/Inputs/weight_copies.py | FileCheck %s --check-prefix=LAUNCHES
# RUN: tfc compile %models/medium_encoder.tf --target=cuda --precision bf16 --no-layer-norm-residual --emit=gpu --cuda-path=%t.no-cuda \
# RUN:   | %python %S/Inputs/weight_copies.py | FileCheck %s --check-prefix=NESTS
# LAUNCHES: launches 18 weights
# NESTS: launches 30 weights
