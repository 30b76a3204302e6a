//===- LayerNorm.h - the fused layer-norm backward generated code calls ---===//
//
// tf.layer_norm_grad as one pass over the rows instead of the dozen loops
// and reductions of its formulas (TfOps.td). Row-major f32, rows
// contiguous; every argument but epsilon is an index (pointers included) as
// generated code passes them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_LAYERNORM_H
#define TFC_RUNTIME_LAYERNORM_H

#include <cstdint>

extern "C" {
/// tf.layer_norm over rows x[r] of d floats (r < rows): y = (x - mean) rstd
/// gamma + beta, rstd = 1 / sqrt(var + eps), the biased variance, with the
/// per-element math of the CUDA kernel (runtime/cuda/kernels/KernelMath.h).
/// With relu != 0, y = relu of that (KernelMath.h reluOf, tf.relu's bits).
/// With y16 != 0, y's bf16 bits (KernelMath.h bf16Bits) go there too, the
/// same layout: a GEMM's bf16 operand made beside its producer; y may
/// then be 0 (the bits alone).
/// With pre != 0, the norm is of the rows written there first: residual +
/// tf.dropout(x) (runtime/Abi.h's layer_norm; no sum where residual is 0,
/// no dropout where seed is 0), a post-norm layer's residual sum.
/// The CPU build generates this loop itself; this is the twin of
/// tfc_cuda_layer_norm_forward, which --target=cuda-emulated calls.
void tfc_layer_norm_forward(intptr_t rows, intptr_t d, float eps, intptr_t x, intptr_t gamma,
                            intptr_t beta, intptr_t y, intptr_t relu, intptr_t y16,
                            intptr_t residual, intptr_t pre, intptr_t seed, intptr_t sampleOffset,
                            intptr_t sampleSize, intptr_t key, intptr_t threshold, float keep);
/// For rows x[r] (d floats each, r < rows) and their adjoints g[r]: with
/// x̂ = (x - mean) rstd, rstd = 1 / sqrt(var + eps) (biased variance) and
/// dx̂ = g gamma,
///   dx[r] = rstd (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂)),
///   dgamma = Σ_r g x̂,  dbeta = Σ_r g.
/// The rows go in blocks of `blockRows`, one thread a block; each block
/// sums its rows' dgamma and dbeta terms in order into `scratch` (2 x
/// blocks x d floats), and the blocks' sums are added in block order: the
/// result has the same bits for any thread count. With a gate (not 0: a
/// ReLU's output, rows x d floats, or with gateBits 1 their bf16 bits) the
/// adjoint is g where gate > 0, else 0 (KernelMath.h gatedGrad and
/// gatedGradBits, relu's gradient); the CPU build passes none,
/// the CUDA twin's emulation does. So with `dropout`: dx's tf.dropout
/// there too (f32, or its bf16 bits alone with dropoutBits 1; seed 0: no
/// mask, dx's copy), dx itself where dx is not 0 (runtime/Abi.h's
/// layer_norm_backward); the CPU build passes 0.
void tfc_layer_norm_backward(intptr_t rows, intptr_t d, intptr_t blockRows, float eps, intptr_t x,
                             intptr_t gamma, intptr_t g, intptr_t gate, intptr_t dx,
                             intptr_t dgamma, intptr_t dbeta, intptr_t scratch, intptr_t dropout,
                             intptr_t dropoutBits, intptr_t seed, intptr_t sampleOffset,
                             intptr_t sampleSize, intptr_t key, intptr_t threshold, float keep,
                             intptr_t gateBits);
}

#endif // TFC_RUNTIME_LAYERNORM_H
