# tfc compile --target=cuda --precision tf32|bf16: the manifest's "cuda"
# record says "precision": "tf32" or "bf16" and the binary's `info` says what
# it changes (the cuBLASLt GEMMs' compute type) and what it does not (every
# other kernel);
# the default is fp32. `info` needs no GPU. The flag's errors:
# tests/lit/frontend/precision.tf.
# REQUIRES: cuda-toolkit
# RUN: rm -rf %t && mkdir -p %t
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --precision tf32 --cuda-path=%cuda -o %t/tf32
# RUN: %t/tf32 info | FileCheck %s --check-prefix=TF32
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --precision bf16 --cuda-path=%cuda -o %t/bf16
# RUN: %t/bf16 info | FileCheck %s --check-prefix=BF16
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --cuda-path=%cuda -o %t/fp32
# RUN: %t/fp32 info | FileCheck %s --check-prefix=FP32
# --bf16-operands on the GPU is bf16 arithmetic: it needs --precision bf16.
# RUN: %python %S/../../frontend/Inputs/exit_status.py 2 tfc compile %S/Inputs/softmax.tf --target=cuda --bf16-operands=all --cuda-path=%cuda \
# RUN:   | FileCheck %s --check-prefix=OPERANDS-FP32
# OPERANDS-FP32: tfc: error: --bf16-operands=all rounds the GEMMs' operands to bf16: it needs --precision bf16
# The manifest as tf-pack-entry-abi embeds it (the module's tfc.cuda).
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --precision tf32 --cuda-path=%cuda --cuda-image=ptx --emit=llvm | FileCheck %s --check-prefix=MANIFEST
# A fatbin's sm_90 SASS waits for the kernel before (tf-await-previous-kernel):
# the manifest says so, for the runtime's programmatic dependent launches.
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --cuda-path=%cuda --emit=llvm | FileCheck %s --check-prefix=FATBIN

# TF32: runs on device cuda:0
# TF32: kernels {{[0-9]+}}, a fatbin image with SASS for sm_80, sm_90
# TF32-NEXT: precision tf32: cuBLASLt GEMMs on TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32), every other kernel fp32
# TF32-NEXT: attention on tensor cores (heads up to 64 wide, multiples of 16): mma.sync; TFC_ATTENTION_LEAN=1 the lean forward and dq; TFC_ATTENTION_WGMMA=1 wgmma for heads of 64 (sm_90a SASS: {{.*}}); with it, TFC_ATTENTION_WIDE=1 its forward, dq and dkv on two warpgroups a block
# TF32-NEXT: programmatic dependent launch (TFC_DEPENDENT_LAUNCH=1, off by default): the hand-written kernels on sm_90 and later, the generated ones on sm_90
# BF16: kernels {{[0-9]+}}, a fatbin image
# BF16-NEXT: precision bf16: cuBLASLt GEMMs on bf16 tensor cores (CUBLAS_COMPUTE_32F_FAST_16BF, or bf16 copies of A and B where tfc compile's --bf16-operands made them), every other kernel fp32, parameters, their gradients and the optimizer's state stored fp32, as is every other tensor but those only GEMMs read (or a ReLU's gradient tests): their bf16 copies alone, the products only loop nests read (--no-bf16-gemm-results: fp32), and the QKV projections only attention reads, with a bf16 copy of their bias, and the out projections' input gradients, its backward's dO, which its mma.sync kernels read as bf16 (--no-bf16-attention-inputs: fp32)
# FP32: kernels {{[0-9]+}}, a fatbin image
# FP32-NEXT: precision fp32: cuBLASLt GEMMs (CUBLAS_COMPUTE_32F) and every kernel in full FP32
# FP32-NOT: attention on tensor cores
# Each kernel's source beside its name (bench --profile): the entry and the
# file's lines of its operations (lines 6 and 7 are the two outputs; one
# kernel: the softmax's sum and division are the tail of its row max,
# tf-merge-launches).
# MANIFEST: @tfc_manifest{{.*}}\22cuda\22:{\22arch\22:[],\22image\22:\22ptx\22,\22kernel_sources\22:[\22predict: softmax.tf:6,7\22],\22kernels\22:[\22tfc_k0\22],\22precision\22:\22tf32\22}
# FATBIN: @tfc_manifest{{.*}}\22cuda\22:{\22arch\22:[\22sm_80\22,\22sm_90\22],\22dependent_launch\22:[\22sm_90\22],\22image\22:\22fatbin\22
