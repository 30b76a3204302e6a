//===- attention.cpp - attention.cu on the SIMT emulator --------------------===//
//
// The kernel file's own source compiled for the host (tests/simt/Simt.h),
// in a namespace of its own, and its kernels registered by name.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

namespace tfc_simt_attention {
#include "runtime/cuda/kernels/attention.cu"
} // namespace tfc_simt_attention

TFC_SIMT_KERNEL(tfc_simt_attention, tfc_cuda_attention_forward_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention, tfc_cuda_attention_backward_dq_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention, tfc_cuda_attention_backward_dkv_kernel)
