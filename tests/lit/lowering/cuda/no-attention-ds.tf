# tfc compile --no-attention-ds (cuda): no room for an attention backward's dS
# in the planned memory, and the backward's last argument is 0 (its dq then
# recomputes the scores). By default reverse's train and grad steps (batch
# 4: 64 query rows of 16 keys, fp32: f32 dS) each make room for it and pass
# it to the backward (cuda-kernels.md, "dq from the dS dkv stored").
# RUN: tfc compile %models/reverse.tf --target=cuda --batch 4 --emit=linalg -o - | FileCheck %s
# RUN: tfc compile %models/reverse.tf --target=cuda --batch 4 --emit=linalg --no-attention-ds -o - | FileCheck %s --check-prefix=NONE
# CHECK: %[[BUF:.+]] = memref.alloc() : memref<64x16xf32>
# CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[BUF]]
# CHECK: call @tfc_cuda_attention_backward({{.*}}, %[[P]], %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
# NONE-NOT: memref<64x16xf32>
# NONE: call @tfc_cuda_attention_backward({{.*}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}})
# NONE-NOT: memref<64x16xf32>
