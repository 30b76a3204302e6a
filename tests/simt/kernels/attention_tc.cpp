//===- attention_tc.cpp - attention_tc.cu on the SIMT emulator --------------===//
//
// The kernel file's own source compiled for the host (tests/simt/Simt.h),
// in a namespace of its own, and its kernels registered by name.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

namespace tfc_simt_attention_tc {
#include "runtime/cuda/kernels/attention_tc.cu"
} // namespace tfc_simt_attention_tc

TFC_SIMT_KERNEL(tfc_simt_attention_tc, tfc_cuda_attention_tc_forward_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_tc, tfc_cuda_attention_tc_backward_dq_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_tc, tfc_cuda_attention_tc_backward_dkv_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_tc, tfc_cuda_attention_tc_forward_lean_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_tc, tfc_cuda_attention_tc_backward_dq_lean_kernel)
