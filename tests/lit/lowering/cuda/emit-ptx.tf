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
# CHECK: .visible .entry tfc_k0(
# CHECK-NEXT: .param .u64 tfc_k0_param_0,
# CHECK-NEXT: .param .u64 tfc_k0_param_1,
# CHECK-NEXT: .param .u64 tfc_k0_param_2,
# CHECK-NEXT: .param .u64 tfc_k0_param_3,
# CHECK-NEXT: .param .u64 tfc_k0_param_4
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
# The softmax's sum and its division, one kernel of one block: a barrier
# between them.
# CHECK: .visible .entry tfc_k1(
# CHECK-NOT: ld.global
# CHECK: // tfc: await the previous kernel
# CHECK: bar.sync 0;
# CHECK-NOT: .entry
# CHECK-NOT: .extern .func
# CHECK-NOT: call

# NO-TOOLKIT: tfc: error: --target=cuda needs the CUDA toolkit: no CUDA toolkit at '{{.*}}.no-cuda' (install it, or name it with --cuda-path or CUDA_HOME)
