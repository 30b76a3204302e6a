//===- gemm_small.cpp - gemm_small.cu on the SIMT emulator ------------------===//
//
// The kernel file's own source compiled for the host (tests/simt/Simt.h),
// in a namespace of its own, and its kernels registered by name.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

namespace tfc_simt_gemm_small {
#include "runtime/cuda/kernels/gemm_small.cu"
} // namespace tfc_simt_gemm_small

TFC_SIMT_KERNEL(tfc_simt_gemm_small, tfc_cuda_small_gemm_kernel)
TFC_SIMT_KERNEL(tfc_simt_gemm_small, tfc_cuda_small_gemm_finish_kernel)
TFC_SIMT_KERNEL(tfc_simt_gemm_small, tfc_cuda_column_sums_kernel)
