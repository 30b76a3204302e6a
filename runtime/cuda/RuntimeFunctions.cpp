//===- RuntimeFunctions.cpp - what generated CUDA host code calls ---------===//
//
// Also createDevice() of a CUDA binary: an unopened CudaDevice.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/RuntimeFunctions.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/Abi.h"

#include <cstdio>
#include <cstdlib>

using tfc::rt::cuda::CudaDevice;

extern "C" void tfc_cuda_launch(intptr_t kernel, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                                intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                                intptr_t sharedBytes, intptr_t argc, intptr_t args) {
  const int64_t grid[3] = {gridX, gridY, gridZ}, block[3] = {blockX, blockY, blockZ};
  CudaDevice::activeFor("tfc_cuda_launch")
      .launch(kernel, grid, block, sharedBytes, argc, reinterpret_cast<const intptr_t *>(args));
}

extern "C" void tfc_cuda_launch_cooperative(intptr_t kernel, intptr_t gridX, intptr_t gridY,
                                            intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                                            intptr_t blockZ, intptr_t sharedBytes,
                                            intptr_t argc, intptr_t args) {
  const int64_t grid[3] = {gridX, gridY, gridZ}, block[3] = {blockX, blockY, blockZ};
  CudaDevice::activeFor("tfc_cuda_launch_cooperative")
      .launch(kernel, grid, block, sharedBytes, argc, reinterpret_cast<const intptr_t *>(args),
              /*cooperative=*/true);
}

extern "C" void tfc_cuda_graph_node(intptr_t index, intptr_t lane, intptr_t deps, intptr_t count) {
  CudaDevice::activeFor("tfc_cuda_graph_node")
      .graphNode(index, lane, reinterpret_cast<const int32_t *>(deps), count);
}

extern "C" void tfc_cuda_sgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                               intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                               intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                               intptr_t ldc, intptr_t strideC, intptr_t accumulate) {
  CudaDevice::activeFor("tfc_cuda_sgemm")
      .sgemm({batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
              accumulate});
}

extern "C" void tfc_cuda_sgemm_fused(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                                     intptr_t a, intptr_t lda, intptr_t strideA, intptr_t transA,
                                     intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB,
                                     intptr_t c, intptr_t ldc, intptr_t strideC,
                                     intptr_t accumulate, intptr_t activation, intptr_t bias,
                                     intptr_t residual, intptr_t ldResidual, intptr_t aux,
                                     intptr_t ldAux) {
  tfc::rt::cuda::GemmEpilogue epilogue;
  epilogue.relu = activation == tfc::abi::gemm::kRelu;
  epilogue.reluGrad = activation == tfc::abi::gemm::kReluGrad;
  epilogue.bias = CUdeviceptr(bias);
  epilogue.residual = CUdeviceptr(residual);
  epilogue.ldResidual = ldResidual;
  epilogue.reluMask = CUdeviceptr(aux);
  epilogue.ldReluMask = ldAux;
  CudaDevice::activeFor("tfc_cuda_sgemm_fused")
      .sgemm({batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
              accumulate},
             epilogue);
}

extern "C" void tfc_cuda_sgemm_bias_grad(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                                         intptr_t a, intptr_t lda, intptr_t strideA,
                                         intptr_t transA, intptr_t b, intptr_t ldb,
                                         intptr_t strideB, intptr_t transB, intptr_t c,
                                         intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                                         intptr_t operand, intptr_t biasGrad) {
  tfc::rt::cuda::GemmEpilogue epilogue;
  epilogue.biasGrad = CUdeviceptr(biasGrad);
  epilogue.biasGradOfB = operand == tfc::abi::gemm::kBiasGradOfB;
  CudaDevice::activeFor("tfc_cuda_sgemm_bias_grad")
      .sgemm({batch, m, n, k, a, lda, strideA, transA, b, ldb, strideB, transB, c, ldc, strideC,
              accumulate},
             epilogue);
}

namespace tfc::rt {
// A CUDA binary's device (a CPU binary links runtime/cpu/'s instead).
std::unique_ptr<Device> createDevice() { return std::make_unique<cuda::CudaDevice>(); }
} // namespace tfc::rt
