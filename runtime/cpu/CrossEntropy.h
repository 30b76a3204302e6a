//===- CrossEntropy.h - tf.cross_entropy as one kernel, the CUDA twin -----===//
//
// The CPU build generates tf.cross_entropy's loops itself (and decomposes
// tf.cross_entropy_grad); these are the CPU twins of the CUDA runtime's
// tfc_cuda_cross_entropy, tfc_cuda_cross_entropy_backward and
// tfc_cuda_cross_entropy_fused (the same arguments), which
// --target=cuda-emulated calls in their place. Every argument but count is an
// index (pointers included) as generated code passes them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_CPU_CROSSENTROPY_H
#define TFC_RUNTIME_CPU_CROSSENTROPY_H

#include <cstdint>

extern "C" {
/// out[0] = Σ_r -log_softmax(logits[o, :, i])[clamp(labels[r])] / count
/// over the rows r = o * inner + i of logits laid out [outer, classes,
/// inner] (i32 labels [outer, inner]); losses (outer x inner floats) holds
/// each row's loss. The per-row math is the CUDA kernel's
/// (runtime/cuda/kernels/KernelMath.h).
void tfc_cross_entropy(intptr_t outer, intptr_t classes, intptr_t inner, float count,
                       intptr_t logits, intptr_t labels, intptr_t losses, intptr_t out);
/// dlogits[o, c, i] = (softmax(logits[o, :, i])_c - [c == clamp(label)]) *
/// (dloss[0] / count): tf.cross_entropy_grad, the CPU twin of
/// tfc_cuda_cross_entropy_backward with its per-row math.
void tfc_cross_entropy_backward(intptr_t outer, intptr_t classes, intptr_t inner, float count,
                                intptr_t logits, intptr_t labels, intptr_t dloss,
                                intptr_t dlogits);
/// Both of the above for the same logits and labels, each row's softmax
/// computed once: losses and out as tfc_cross_entropy's, dlogits as
/// tfc_cross_entropy_backward's, the same bits. With corrects (outer x
/// inner floats of scratch) and accuracy not 0, also the accuracy metric
/// mean(argmax(logits, classes) == labels) into accuracy[0]: each row's
/// first maximum (tf.argmax's: NaN never wins, 0 when no element is above
/// -inf) against its label as given (not clamped), 1 or 0 in corrects, and
/// their sum, exact in any order, over outer x inner. The CPU twin of
/// tfc_cuda_cross_entropy_fused (a train step's loss and its gradient).
/// With dlogitsBits, dlogits holds each value's bf16 bits alone (2 bytes an
/// element, KernelMath.h's bf16Bits).
void tfc_cross_entropy_fused(intptr_t outer, intptr_t classes, intptr_t inner, float count,
                             intptr_t logits, intptr_t labels, intptr_t dloss, intptr_t losses,
                             intptr_t out, intptr_t dlogits, intptr_t corrects, intptr_t accuracy,
                             intptr_t dlogitsBits);
}

#endif // TFC_RUNTIME_CPU_CROSSENTROPY_H
