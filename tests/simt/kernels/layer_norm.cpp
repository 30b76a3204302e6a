//===- layer_norm.cpp - layer_norm.cu on the SIMT emulator ------------------===//
//
// The kernel file's own source compiled for the host (tests/simt/Simt.h),
// in a namespace of its own, and its kernels registered by name.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

namespace tfc_simt_layer_norm {
#include "runtime/cuda/kernels/layer_norm.cu"
} // namespace tfc_simt_layer_norm

TFC_SIMT_KERNEL(tfc_simt_layer_norm, tfc_cuda_layer_norm_forward_kernel)
TFC_SIMT_KERNEL(tfc_simt_layer_norm, tfc_cuda_layer_norm_backward_kernel)
TFC_SIMT_KERNEL(tfc_simt_layer_norm, tfc_cuda_layer_norm_backward_reduce_kernel)
