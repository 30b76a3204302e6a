//===- RuntimeFunctions.h - what generated CUDA host code calls -----------===//
//
// The functions of runtime/Abi.h's TFC_ABI_CUDA_RUNTIME_FUNCTIONS, defined in
// RuntimeFunctions.cpp on the device running the entry (CudaDevice::active()),
// but for the hand-written kernels' (LayerKernels.h).
// Every pointer and size is an intptr_t, as generated code passes them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CUDA_RUNTIMEFUNCTIONS_H
#define TFC_RUNTIME_CUDA_RUNTIMEFUNCTIONS_H

#include <cstdint>

extern "C" {
/// Launches kernel `kernel` (an index into the manifest's "cuda" "kernels")
/// on grid x block with `sharedBytes` of dynamic shared memory. `args` is
/// the address of `argc` 8-byte host slots, one per kernel parameter: a
/// device pointer, or an integer whose low bytes are the parameter. The
/// slots may be reused as soon as this returns. A failure (a kernel index
/// out of range, an empty grid, a block over 1024 threads, the driver's
/// refusal) is kept and returned by the entry's run; the launches after it
/// are skipped.
void tfc_cuda_launch(intptr_t kernel, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                     intptr_t blockX, intptr_t blockY, intptr_t blockZ, intptr_t sharedBytes,
                     intptr_t argc, intptr_t args);

/// tfc_cuda_launch of a persistent kernel (tfc compile --persistent-kernels):
/// its blocks wait for each other at grid barriers, so all must run at once.
/// Launched cooperatively with at most gridX blocks, as many as the GPU holds
/// at once (the kernel loops over its work by the grid it gets).
void tfc_cuda_launch_cooperative(intptr_t kernel, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                                 intptr_t sharedBytes, intptr_t argc, intptr_t args);

/// Before each launch and call of an entry, and once after the last
/// (tf-graph-dependencies; runtime/Abi.h's abi::graph): the next op's lane
/// (its share of the cuBLASLt workspace, scratch and last-block counter),
/// and, while the entry is captured with TFC_GRAPH_DEPENDENCIES=1, what it
/// waits for: the `count` earlier ops whose int32 indices are at `deps`.
void tfc_cuda_graph_node(intptr_t index, intptr_t lane, intptr_t deps, intptr_t count);

/// tfc_sgemm (runtime/cpu/Gemm.h) on device memory, through cuBLASLt: for
/// b < batch, C[b] = op(A[b]) op(B[b]) (+ C[b] when `accumulate`),
/// row-major fp32; strideC 0 with batch > 1 sums the items into one C.
void tfc_cuda_sgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                    intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b, intptr_t ldb,
                    intptr_t strideB, intptr_t transB, intptr_t c, intptr_t ldc,
                    intptr_t strideC, intptr_t accumulate);

/// tfc_cuda_sgemm and its epilogue (runtime/Abi.h gemm::FusedArg): C =
/// act(op(A) op(B) + bias[n] + R), one cublasLtMatmul; with a ReLU mask,
/// RELU_AUX(_BIAS) writes it and DRELU reads it.
void tfc_cuda_sgemm_fused(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                          intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                          intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                          intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                          intptr_t activation, intptr_t bias, intptr_t residual,
                          intptr_t ldResidual, intptr_t aux, intptr_t ldAux);

/// tfc_cuda_sgemm and the bias gradient of one operand (runtime/Abi.h
/// gemm::BiasGradArg; the CPU twin is tfc_sgemm_bias_grad): one
/// cublasLtMatmul with BGRADB (A's) or BGRADA (B's).
void tfc_cuda_sgemm_bias_grad(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                              intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                              intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                              intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                              intptr_t operand, intptr_t biasGrad);
}

#endif // TFC_RUNTIME_CUDA_RUNTIMEFUNCTIONS_H
