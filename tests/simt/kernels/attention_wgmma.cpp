//===- attention_wgmma.cpp - attention_wgmma.cu on the SIMT emulator --------===//
//
// The kernel file's own source compiled for the host (tests/simt/Simt.h)
// as nvcc compiles it for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL: its wgmma
// bodies, on the emulator's model of wgmma), in a namespace of its own.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

#define __CUDA_ARCH_FEAT_SM90_ALL 1
namespace tfc_simt_attention_wgmma {
#include "runtime/cuda/kernels/attention_wgmma.cu"
} // namespace tfc_simt_attention_wgmma

TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_forward_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_forward_bf16_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_forward_serial_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_forward_wide_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_backward_dq_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_backward_dq_bf16_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_backward_dq_serial_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_backward_dq_wide_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_backward_dkv_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_backward_dkv_bf16_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_backward_dkv_serial_kernel)
TFC_SIMT_KERNEL(tfc_simt_attention_wgmma, tfc_cuda_attention_wgmma_backward_dkv_wide_kernel)
