//===- gather.cpp - gather.cu on the SIMT emulator --------------------------===//
//
// The kernel file's own source compiled for the host (tests/simt/Simt.h),
// in a namespace of its own, and its kernels registered by name.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

namespace tfc_simt_gather {
#include "runtime/cuda/kernels/gather.cu"
} // namespace tfc_simt_gather

TFC_SIMT_KERNEL(tfc_simt_gather, tfc_cuda_gather_rows_kernel)
TFC_SIMT_KERNEL(tfc_simt_gather, tfc_cuda_advance_first_kernel)
