//===- dropout.cpp - dropout.cu on the SIMT emulator ------------------------===//
//
// The kernel file's own source compiled for the host (tests/simt/Simt.h),
// in a namespace of its own, and its kernels registered by name.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

namespace tfc_simt_dropout {
#include "runtime/cuda/kernels/dropout.cu"
} // namespace tfc_simt_dropout

TFC_SIMT_KERNEL(tfc_simt_dropout, tfc_cuda_dropout_mask_kernel)
