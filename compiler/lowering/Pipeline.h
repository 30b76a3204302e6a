//===- Pipeline.h - the stages every backend shares ----------------------===//
//
// `tfc compile --emit=` is one ordered list of stages. Every target runs the
// same tf-level stages (autodiff, entry points, fusion) and the same
// bufferization and entry ABI around its own passes; a backend
// (compiler/lowering/Backend.h) composes its stages from these and its own
// (compiler/lowering/cpu/Pipeline.h for the CPU).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_PIPELINE_H
#define TFC_COMPILER_LOWERING_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace tfc {

/// tf-autodiff: the train step (forward, backward, clipping, schedule and
/// optimizer) as one tf function beside the model.
/// With `splitStep`, also grad_step and apply_step (data-parallel training;
/// a backend whose runtime cannot train data-parallel yet leaves them out).
void addAutodiffPasses(mlir::OpPassManager &pm, bool splitStep = true);
/// tf-entry-points, canonicalize, CSE, tf-fuse: the entries, their ops
/// grouped into tf.fusion regions (still tf, for every backend); without
/// `fuse`, no groups (every op its own loop nest). With `decompose`,
/// tf-decompose first: attention and layer norm (and their gradients) and
/// cross_entropy_grad as plain tf ops, for a backend without kernels for
/// them; without it, cross_entropy_grad alone unless the backend has its
/// kernel (`crossEntropyGradKernel`: CUDA's).
void addFusionPasses(mlir::OpPassManager &pm, bool fuse = true, bool gemmEpilogues = true,
                     bool horizontal = true, bool decompose = false,
                     bool crossEntropyGradKernel = false);
/// tf-lower-to-linalg with kernels=none, canonicalize: every op in generated
/// code, dropout's masks included (after addFusionPasses' `decompose`), for
/// a target whose runtime has no kernels, or the CPU with
/// `--no-runtime-kernels`.
void addLinalgPassesWithoutKernels(mlir::OpPassManager &pm);
/// linalg on tensors -> buffers: one-shot bufferization, results as
/// out-params, written in place where they can be (tf-results-in-place);
/// with `updatesInPlace`, a step's new parameters and optimizer state over
/// the arguments (tf-updates-in-place: the runtime keeps them once).
void addBufferizationPasses(mlir::OpPassManager &pm, bool updatesInPlace = false);
/// The memory plan (one arena an entry, tf-plan-memory) and the entries' C
/// ABI and manifest (tf-pack-entry-abi): after a backend's own passes on
/// buffers.
void addMemoryPlanAndEntryAbiPasses(mlir::OpPassManager &pm);

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_PIPELINE_H
