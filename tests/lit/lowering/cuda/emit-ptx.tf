# tfc compile --target=cuda --emit=ptx: the one module's PTX, for the oldest
# GPU it runs on (sm_80): one .entry a kernel, named as the manifest names
# them, and no call out of a kernel (exp, tanh and log are inline, as on the
# CPU; no libdevice function left unresolved for the driver).
# REQUIRES: cuda-toolkit
# RUN: tfc compile %S/Inputs/softmax.tf --target=cuda --batch 2 --emit=ptx --cuda-path=%cuda | FileCheck %s
# A toolkit that is not there is named, exit 1 (PTX needs its libdevice).
# RUN: not tfc compile %S/Inputs/softmax.tf --target=cuda --emit=ptx --cuda-path=%t.no-cuda 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NO-TOOLKIT

# CHECK-NOT: .extern .func
# CHECK: .target sm_80
# CHECK: .address_size 64
# The ticket of the last block (tf-grid-sync): one word of global memory.
# CHECK: .global .align 4 .u32 tfc_last_block_ticket;
# CHECK: .visible .entry tfc_k0(
# CHECK-NEXT: .param .u64 tfc_k0_param_0,
# CHECK-NEXT: .param .u64 tfc_k0_param_1,
# CHECK-NEXT: .param .u64 tfc_k0_param_2,
# CHECK-NEXT: .param .u64 tfc_k0_param_3,
# CHECK-NEXT: .param .u64 tfc_k0_param_4,
# CHECK-NEXT: .param .u64 tfc_k0_param_5,
# CHECK-NEXT: .param .u64 tfc_k0_param_6
# CHECK-NEXT: )
# Each kernel starts with tf-await-previous-kernel's marker before any load
# of global memory (its parameters may come first), a comment here (sm_80
# has no programmatic dependent launch; sm_90's SASS gets the instructions
# in its place).
# CHECK: {
# CHECK-NOT: ld.global
# CHECK: // tfc: await the previous kernel
# CHECK-NOT: griddepcontrol
# CHECK-NOT: bar.sync
# The softmax's row max (beside z) on two blocks, then its sum and its
# division as their tail (tf-merge-launches): each block's writes fenced,
# its barrier, thread 0's ticket, the barrier that gives the block its
# answer, the last block's fence before it reads the others' maxima, and a
# barrier between the sum and the division. The function is inlined, no
# copy of it left.
# CHECK: st.global.f32
# CHECK: membar.gl;
# CHECK: bar.sync 0;
# CHECK: membar.gl;
# CHECK-NEXT: atom.global.add.u32 %tfc_ticket, [%rd{{[0-9]+}}], 1;
# CHECK: @%tfc_drew_last st.volatile.global.u32 [%rd{{[0-9]+}}], 0;
# CHECK: bar.red.or.pred
# CHECK-NOT: ld.global
# CHECK: membar.gl;
# CHECK: ld.global.f32
# CHECK: bar.sync 0;
# CHECK: ld.global.f32
# CHECK-NOT: bar.sync
# CHECK-NOT: .entry
# CHECK-NOT: .func
# CHECK-NOT: .extern .func
# CHECK-NOT: call

# NO-TOOLKIT: tfc: error: --target=cuda needs the CUDA toolkit: no CUDA toolkit at '{{.*}}.no-cuda' (install it, or name it with --cuda-path or CUDA_HOME)
