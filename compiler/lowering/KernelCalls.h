//===- KernelCalls.h - tf ops the CPU runtime has fused kernels for -------===//

#ifndef TFC_COMPILER_LOWERING_CPU_KERNELCALLS_H
#define TFC_COMPILER_LOWERING_CPU_KERNELCALLS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace tfc {

/// Replaces every tf.attention without stored weights, tf.attention_grad
/// and tf.layer_norm_grad in `module` by a call of the CPU runtime's fused
/// kernel (declared in `module` on first use), on buffers.
void lowerToCpuKernelCalls(mlir::ModuleOp module);

/// tf.dropout as the CPU runtime's mask kernel and an elementwise select.
void populateCpuKernelCallPatterns(mlir::RewritePatternSet &patterns);

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_CPU_KERNELCALLS_H
