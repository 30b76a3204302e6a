//===- cross_entropy.cpp - cross_entropy.cu on the SIMT emulator ------------===//
//
// The kernel file's own source compiled for the host (tests/simt/Simt.h),
// in a namespace of its own, and its kernels registered by name.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

namespace tfc_simt_cross_entropy {
#include "runtime/cuda/kernels/cross_entropy.cu"
} // namespace tfc_simt_cross_entropy

TFC_SIMT_KERNEL(tfc_simt_cross_entropy, tfc_cuda_cross_entropy_forward_kernel)
TFC_SIMT_KERNEL(tfc_simt_cross_entropy, tfc_cuda_cross_entropy_mean_kernel)
TFC_SIMT_KERNEL(tfc_simt_cross_entropy, tfc_cuda_cross_entropy_backward_kernel)
TFC_SIMT_KERNEL(tfc_simt_cross_entropy, tfc_cuda_cross_entropy_fused_kernel)
