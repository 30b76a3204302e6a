//===- Gemm.h - the GEMM entry point generated code calls -----------------===//
//
// tf-gemm-to-runtime lowers every tf.matmul to one call of tfc_sgemm, so the
// GEMM can be tuned (micro-kernels, packing, threads) without touching code
// generation. Row-major; every argument is an index (pointers included) as
// generated code passes them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_GEMM_H
#define TFC_RUNTIME_GEMM_H

#include <cstdint>

extern "C" {
/// For b < batch: C[b] = op(A[b]) op(B[b]) (+ C[b] when `accumulate`), where
/// op(X) is X or X^T by the trans flags, op(A) is M x K, op(B) K x N, C is
/// M x N; X[b] starts at X + b * strideX; ldX is the row pitch of X as stored.
///
/// strideC == 0 with batch > 1 is a batch reduction (a convolution's weight
/// gradient): C = sum_b op(A[b]) op(B[b]) (+ C when `accumulate`).
///
/// Every element of C is one chain of float FMAs, from 0 or from C, over k in
/// order, and in a reduction over b and then k in order. So the result has
/// the same bits for any thread count and kernel set (AVX2 or AVX-512), and a
/// reduction equals the GEMM over batch * K of its items laid side by side.
///
/// A transpose flag may also carry abi::gemm::kBf16 (tfc_sgemm, _fused and
/// _bias_grad: the twins of the CUDA calls): that operand is stored as bf16,
/// widened to fp32 (exactly) before the product, so the result is the
/// products of the bf16 values summed as above. And tfc_sgemm's and
/// _fused's accumulate may carry kBf16 too: C is stored as bf16, each
/// element of that result rounded to nearest even (the twin of cuBLASLt's
/// bf16 D), a bias of _fused's then bf16 bits too.
void tfc_sgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
               intptr_t a, intptr_t lda, intptr_t strideA, intptr_t transA,
               intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB,
               intptr_t c, intptr_t ldc, intptr_t strideC, intptr_t accumulate);

/// C = act(op(A) op(B) + bias[n] + R) for batch 1 and accumulate 0: the
/// CPU twin of tfc_cuda_sgemm_fused (cuBLASLt's epilogues), which
/// --target=cuda-emulated calls. activation is abi::gemm::FusedActivation;
/// bias (n floats) and R (m x n, row pitch ldResidual; C itself when it is
/// the same matrix) are 0 when absent. The sum goes as cuBLASLt's: (product
/// + R) + bias. With a ReLU mask aux (abi::gemm::FusedArg's layout, ldAux
/// bits a row of C), kRelu writes it (the sum > 0) and kReluGrad multiplies
/// the product by it (cuBLASLt's RELU_AUX and DRELU).
void tfc_sgemm_fused(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                     intptr_t a, intptr_t lda, intptr_t strideA, intptr_t transA,
                     intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB,
                     intptr_t c, intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                     intptr_t activation, intptr_t bias, intptr_t residual, intptr_t ldResidual,
                     intptr_t aux, intptr_t ldAux);

/// C = op(A) op(B) and the bias gradient of one operand, for batch 1 and
/// accumulate 0: the CPU twin of tfc_cuda_sgemm_bias_grad (cuBLASLt's
/// BGRADB and BGRADA), which --target=cuda-emulated calls. operand
/// abi::gemm::kBiasGradOfA: biasGrad[i] = sum over p of A[p][i] (A stored K
/// x M, transA 1); kBiasGradOfB: biasGrad[j] = sum over p of B[p][j] (B
/// stored K x N, transB 0). Each sum in p's order, overwriting biasGrad.
void tfc_sgemm_bias_grad(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                         intptr_t a, intptr_t lda, intptr_t strideA, intptr_t transA,
                         intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB,
                         intptr_t c, intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                         intptr_t operand, intptr_t biasGrad);

/// tfc_sgemm whose B has rows in two levels: row p of op(B) (transB must be
/// 0) is at b + (p / kInner) * ldb + (p % kInner) * ldbInner. A 1-d
/// convolution is one such GEMM per sample, K = channels x taps: row (c, j)
/// is the input's channel c shifted by j (ldb the channel pitch, ldbInner
/// 1), so the windows are never copied out (the GEMM packs them as it packs
/// any B). With width > 0 the input is not padded: row (c, j)'s column t
/// is x[c][t + j - pad] where 0 <= t + j - pad < width, else 0, so neither
/// a padded copy nor its zero fill is ever written. Every C element is one
/// FMA chain over p in order (the padding's zeros included: the bits of the
/// padded product).
void tfc_sgemm_windows(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                       intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b, intptr_t ldb,
                       intptr_t strideB, intptr_t transB, intptr_t c, intptr_t ldc,
                       intptr_t strideC, intptr_t accumulate, intptr_t kInner,
                       intptr_t ldbInner, intptr_t pad, intptr_t width);

/// tfc_sgemm whose A has rows in two levels: row r of A (transA must be 0)
/// is at a + (r / mInner) * ldaOuter + (r % mInner) * lda. A convolution's
/// weight gradient is one such GEMM per sample, summed over the batch
/// (strideC 0): row (j, c) of A is the input's channel c shifted by tap j
/// (lda the channel pitch, ldaOuter 1), B the output gradient, C row (j, c)
/// the gradient of every output channel's weight at (c, j); so every tap
/// reads the one packed copy of B. C's rows stay plain (ldc apart).
/// With width > 0 the input is not padded (ldaOuter must then be the shift
/// along its rows): row (j, c)'s column p is x[c][p + j * ldaOuter - pad]
/// where 0 <= p + j * ldaOuter - pad < width, else 0, and `a` points at
/// x[0][0]; each tap's chains then run over its columns inside the input
/// (the padding's zeros add nothing), and no padded copy is ever made.
void tfc_sgemm_taps(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                    intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b, intptr_t ldb,
                    intptr_t strideB, intptr_t transB, intptr_t c, intptr_t ldc,
                    intptr_t strideC, intptr_t accumulate, intptr_t mInner,
                    intptr_t ldaOuter, intptr_t pad, intptr_t width);

/// Two independent tfc_sgemm calls (neither reads or writes what the other
/// writes), with the arguments of each: on two threads, one product a
/// thread, each on its own; else one after the other. The same bits as the
/// two calls.
void tfc_sgemm_pair(intptr_t batch0, intptr_t m0, intptr_t n0, intptr_t k0, intptr_t a0,
                    intptr_t lda0, intptr_t strideA0, intptr_t transA0, intptr_t b0,
                    intptr_t ldb0, intptr_t strideB0, intptr_t transB0, intptr_t c0,
                    intptr_t ldc0, intptr_t strideC0, intptr_t accumulate0, intptr_t batch1,
                    intptr_t m1, intptr_t n1, intptr_t k1, intptr_t a1, intptr_t lda1,
                    intptr_t strideA1, intptr_t transA1, intptr_t b1, intptr_t ldb1,
                    intptr_t strideB1, intptr_t transB1, intptr_t c1, intptr_t ldc1,
                    intptr_t strideC1, intptr_t accumulate1);

/// tfc_sgemm followed by an epilogue: `epilogue(context, i0, i1)` runs
/// generated code (a tf.fusion "gemm"'s elementwise ops) on rows [i0, i1) of
/// the batch's C, row b * m + i being row i of C[b] (of C itself when the
/// batch is a reduction, strideC == 0). Every row is passed exactly once,
/// after its last element is final and before the call returns: as each
/// block of rows is finished, while it is still in cache, by the thread that
/// finished it (a reduction's only after its last item). The epilogue may
/// read and write the rows of C it is given, but no other rows of C and
/// nothing A or B holds.
void tfc_sgemm_epilogue(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                        intptr_t a, intptr_t lda, intptr_t strideA, intptr_t transA,
                        intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB,
                        intptr_t c, intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                        void (*epilogue)(void *context, int64_t i0, int64_t i1),
                        void *context);

/// tfc_sgemm_windows followed by an epilogue, as tfc_sgemm_epilogue (a
/// convolution's bias-free rest: its activation, a backward pass's mask).
void tfc_sgemm_windows_epilogue(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                                intptr_t a, intptr_t lda, intptr_t strideA, intptr_t transA,
                                intptr_t b, intptr_t ldb, intptr_t strideB, intptr_t transB,
                                intptr_t c, intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                                intptr_t kInner, intptr_t ldbInner, intptr_t pad,
                                intptr_t width,
                                void (*epilogue)(void *context, int64_t i0, int64_t i1),
                                void *context);

/// tfc_sgemm_windows for a convolution of 5 taps (kInner 5, ldbInner 1, the
/// weight shared: strideA 0) by Winograd's minimal filtering F(4, 5)
/// (runtime/cpu/Winograd.cpp): eight GEMMs of 2.5x fewer multiply-adds, which
/// round differently from the direct sum (not its bits, but the same bits on
/// any thread count). Any other layout, or TFC_CONV=direct in the
/// environment, runs tfc_sgemm_windows itself.
void tfc_conv1d_winograd(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                         intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b, intptr_t ldb,
                         intptr_t strideB, intptr_t transB, intptr_t c, intptr_t ldc,
                         intptr_t strideC, intptr_t accumulate, intptr_t kInner, intptr_t ldbInner,
                         intptr_t pad, intptr_t width);

/// tfc_conv1d_winograd followed by an epilogue, as tfc_sgemm_epilogue: each
/// chunk of samples' rows once they are final.
void tfc_conv1d_winograd_epilogue(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                                  intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                                  intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                                  intptr_t ldc, intptr_t strideC, intptr_t accumulate,
                                  intptr_t kInner, intptr_t ldbInner, intptr_t pad, intptr_t width,
                                  void (*epilogue)(void *context, int64_t i0, int64_t i1),
                                  void *context);

/// tfc_sgemm_taps for the weight gradient of a convolution of 5 taps
/// (m = 5 x mInner, ldaOuter 1, op(B) = dy^T: transB 1, summed over the
/// batch: strideC 0) by Winograd's F(5, 4) (runtime/cpu/Winograd.cpp), with the
/// same rounding caveat as tfc_conv1d_winograd; any other layout, or
/// TFC_CONV=direct, runs tfc_sgemm_taps itself.
void tfc_conv1d_winograd_taps(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                              intptr_t lda, intptr_t strideA, intptr_t transA, intptr_t b,
                              intptr_t ldb, intptr_t strideB, intptr_t transB, intptr_t c,
                              intptr_t ldc, intptr_t strideC, intptr_t accumulate, intptr_t mInner,
                              intptr_t ldaOuter, intptr_t pad, intptr_t width);
}

#endif // TFC_RUNTIME_GEMM_H
