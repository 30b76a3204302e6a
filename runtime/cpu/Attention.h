//===- Attention.h - fused attention kernels generated code calls ---------===//
//
// Scaled dot-product attention, forward and backward, as one call each
// instead of a chain of GEMMs and softmax loops: the per-head score matrix
// (tq x tk) is never written to memory, keys go by blocks with an online
// softmax (flash attention). Row-major f32; every argument is an index
// (pointers included) as generated code passes them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_ATTENTION_H
#define TFC_RUNTIME_ATTENTION_H

#include <cstdint>

extern "C" {
/// For every head b = (o, i), o < outer, i < inner: with Q = q[b] (tq x d),
/// K = k[b] (tk x d), V = v[b] (tk x dv),
///   S = scale Q K^T, S_ij = -9e15 where mask[b]_ij == 0 (masked_fill, so a
///   fully masked row gets uniform weights), P = softmax(S) along j,
///   out[b] = P V (tq x dv).
/// Inputs are strided, so generated code reads q, k and v where the QKV
/// projection wrote them (no transposed copies): X[b] starts at
/// X + o * xOuter + i * xInner elements, its rows xRow apart, each row
/// contiguous; any stride may be 0 (a broadcast). `mask` is 0 (none) or
/// bytes (0 or 1: an i1 buffer) laid out the same way. Outputs are strided
/// too (no stride 0), so out can be written straight into the layout its
/// readers want (the heads merged back, [batch, seq, heads x dv]).
///
/// Every b is computed by one thread in a fixed order, so the result has the
/// same bits for any thread count.
///
/// `stats` is 0, or room for 16 bytes a (head, query row) where the GPU
/// kernels (runtime/cuda/kernels/) leave the rows' softmax statistics for
/// their backward; the CPU kernels ignore it (their backward recomputes
/// them), and take it so that a GPU kernel's CPU twin has its C type.
/// `out16` is 0, or where out's bf16 bits (KernelMath.h bf16Bits) go
/// beside it, at out's strides counted in 2-byte elements
/// (tf-bf16-gemm-operands: the copy a GEMM reads). `inputsBf16` is 0, or
/// abi::attention::kQkvBf16: q, k and v are bf16 bits, 2-byte elements at
/// their strides (the kernel reads them widened).
void tfc_attention_forward(intptr_t outer, intptr_t inner, intptr_t tq, intptr_t tk, intptr_t d,
                           intptr_t dv, float scale, intptr_t q, intptr_t qOuter, intptr_t qInner,
                           intptr_t qRow, intptr_t k, intptr_t kOuter, intptr_t kInner,
                           intptr_t kRow, intptr_t v, intptr_t vOuter, intptr_t vInner,
                           intptr_t vRow, intptr_t mask, intptr_t maskOuter, intptr_t maskInner,
                           intptr_t maskRow, intptr_t out, intptr_t outOuter, intptr_t outInner,
                           intptr_t outRow, intptr_t stats, intptr_t out16, intptr_t inputsBf16);

/// The gradients of tfc_attention_forward given dO = dout[b] (tq x dv,
/// strided like the inputs), P recomputed from q and k:
///   dV = P^T dO, dP = dO V^T, dS = P o (dP - rowsum(dP o P)) (0 where masked),
///   dQ = scale dS K, dK = scale dS^T Q,
/// written (never added) through their strides over dq (tq x d per head),
/// dk (tk x d) and dvOut (tk x dv): into one concatenation [.., 3 x d] when
/// the three are the adjoint of one QKV projection.
///
/// `out` (pointer and strides) and `stats` are 0, or the forward's out and
/// stats of the same q, k, v and mask: with them the GPU kernels read each
/// row's maximum and sum instead of recomputing them, and take
/// D = rowsum(dP o P) as rowsum(dO o out), FlashAttention-2's identity. The
/// CPU kernel ignores stats and, given out, takes D so too (it is the GPU
/// kernels' twin under --target=cuda-emulated, which so checks the compiled
/// code's out); compiled CPU code passes 0. `dS` is 0, or room for
/// heads x tq rows of abi::attention::dsRow(tk) bf16 where the GPU's
/// tensor-core kernels pass dS from dkv to dq; the CPU ignores it.
/// `gradsBf16` says which of dq, dk and dv (runtime/Abi.h's
/// attention::kDqBf16, kDkBf16, kDvBf16) are stored as their bf16 bits
/// alone, 2-byte elements at their strides, instead of f32; `inputsBf16`
/// as the forward's, plus abi::attention::kDoBf16 where dout is bf16 bits
/// too (widened as q, k and v are).
void tfc_attention_backward(intptr_t outer, intptr_t inner, intptr_t tq, intptr_t tk, intptr_t d,
                            intptr_t dv, float scale, intptr_t q, intptr_t qOuter, intptr_t qInner,
                            intptr_t qRow, intptr_t k, intptr_t kOuter, intptr_t kInner,
                            intptr_t kRow, intptr_t v, intptr_t vOuter, intptr_t vInner,
                            intptr_t vRow, intptr_t mask, intptr_t maskOuter, intptr_t maskInner,
                            intptr_t maskRow, intptr_t dout, intptr_t doutOuter, intptr_t doutInner,
                            intptr_t doutRow, intptr_t dq, intptr_t dqOuter, intptr_t dqInner,
                            intptr_t dqRow, intptr_t dk, intptr_t dkOuter, intptr_t dkInner,
                            intptr_t dkRow, intptr_t dvOut, intptr_t dvOuter, intptr_t dvInner,
                            intptr_t dvRow, intptr_t out, intptr_t outOuter, intptr_t outInner,
                            intptr_t outRow, intptr_t stats, intptr_t dS, intptr_t gradsBf16,
                            intptr_t inputsBf16);
}

#endif // TFC_RUNTIME_ATTENTION_H
