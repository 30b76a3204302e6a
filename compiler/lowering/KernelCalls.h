//===- KernelCalls.h - tf ops a runtime has hand-written kernels for ------===//

#ifndef TFC_COMPILER_LOWERING_KERNELCALLS_H
#define TFC_COMPILER_LOWERING_KERNELCALLS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace tfc {

/// Whose kernels generated code calls: the CPU runtime's (runtime/cpu/) or
/// the CUDA runtime's GPU twins of them (runtime/cuda/kernels/, the same C
/// types: runtime/Abi.h).
enum class KernelRuntime { Cpu, Cuda };

/// Replaces every tf.attention without stored weights, tf.attention_grad
/// and tf.layer_norm_grad in `module` by a call of `runtime`'s fused kernel
/// (declared in `module` on first use), on buffers; for CUDA also the layer
/// norm (with a tf.relu that is its only user) and the cross-entropy loss
/// and its gradient, a loss and its gradient of the same logits and labels
/// as one call when `fuseCrossEntropy`, and a layer norm's backward takes
/// relu's gradient of its adjoint (a select on the ReLU's output) along.
/// On CUDA an attention backward reads what its forward saved, and with
/// `attentionDs` gets room for dS: bf16 on the tensor-core kernels' heads
/// when `tensorCoreAttention`, else f32. With `layerNormDropout`, a CUDA
/// layer norm backward also stores the training tf.dropout of its dx (a
/// post-norm layer's dropout gradient), dx itself only where another op
/// reads it. With `layerNormResidual`, a CUDA layer norm whose x a "gemm"
/// fusion makes as residual + tf.dropout (a post-norm layer's residual
/// sum) makes that sum itself, and the fusion stops before the dropout.
void lowerToKernelCalls(mlir::ModuleOp module, KernelRuntime runtime, bool fuseCrossEntropy = true,
                        bool attentionDs = false, bool tensorCoreAttention = false,
                        bool layerNormDropout = false, bool layerNormResidual = false);

/// tf.dropout as the CPU runtime's mask kernel and an elementwise select.
void populateCpuKernelCallPatterns(mlir::RewritePatternSet &patterns);

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_KERNELCALLS_H
