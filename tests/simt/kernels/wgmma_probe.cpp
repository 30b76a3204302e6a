//===- wgmma_probe.cpp - tools/gpu/wgmma_probe.cu on the SIMT emulator -----===//
//
// The probe's kernels on the emulator's model of wgmma: SimtKernelsTest
// runs tfc-kernel-check's probe checks (KernelChecks.h's
// checkWgmmaLayouts) on them, so the emulator's reading of the PTX ISA and
// WgmmaProbe.h's, which the kernels rest on, must agree; a GPU says
// whether both are right.
//
//===----------------------------------------------------------------------===//

#include "tests/simt/Simt.h"

#define __CUDA_ARCH_FEAT_SM90_ALL 1
namespace tfc_simt_wgmma_probe {
#include "tools/gpu/wgmma_probe.cu"
} // namespace tfc_simt_wgmma_probe

TFC_SIMT_KERNEL(tfc_simt_wgmma_probe, tfc_probe_wgmma_ss_k16_kernel)
TFC_SIMT_KERNEL(tfc_simt_wgmma_probe, tfc_probe_wgmma_ss_k64_kernel)
TFC_SIMT_KERNEL(tfc_simt_wgmma_probe, tfc_probe_wgmma_rs_k64_kernel)
TFC_SIMT_KERNEL(tfc_simt_wgmma_probe, tfc_probe_wgmma_ss_k64_mn_kernel)
TFC_SIMT_KERNEL(tfc_simt_wgmma_probe, tfc_probe_wgmma_rs_k64_mn_kernel)
