//===- Backend.h - the targets tfc compiles for ---------------------------===//
//
// `tfc compile --target=NAME` picks one entry of this table. A backend
// brings the passes that take the fused tf entries (tf-fuse's output, the
// same for every target) down to its code: from tf to loops and kernel calls
// (linalg), to buffers and its runtime's calls, for a GPU to kernels and
// their PTX, to the LLVM dialect. A new target is one entry here, its passes
// in compiler/lowering/<name>/ and its device in runtime/<name>/.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_BACKEND_H
#define TFC_COMPILER_LOWERING_BACKEND_H

#include "compiler/lowering/cuda/Pipeline.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace tfc {

/// The command line's choices the backends' passes take.
struct CodegenOptions {
  bool winograd = true; // cpu: convolutions of 5 taps by Winograd's filtering
  CudaTarget cuda;      // cuda: the toolkit, the image, the GPUs, the GEMMs' precision
};

struct Backend {
  llvm::StringRef name;    // --target=NAME
  llvm::StringRef summary; // for --help and errors
  /// Why this build of tfc cannot compile for the target; empty when it can.
  llvm::StringRef unavailable;
  /// tf entries (tf.fusion regions) to linalg on tensors and kernel calls.
  void (*addLinalgPasses)(mlir::OpPassManager &pm, const CodegenOptions &options) = nullptr;
  /// linalg on tensors to buffers: the runtime's calls and the memory plan
  /// (on the CPU also the entries' C ABI and the manifest).
  void (*addBufferPasses)(mlir::OpPassManager &pm, const CodegenOptions &options) = nullptr;
  /// A GPU's: buffers to kernels (gpu.func) and the host's launches of them.
  void (*addKernelPasses)(mlir::OpPassManager &pm, const CodegenOptions &options) = nullptr;
  /// A GPU's: the kernels assembled to PTX.
  void (*addPtxPasses)(mlir::OpPassManager &pm, const CodegenOptions &options) = nullptr;
  /// To the LLVM dialect (the host's code).
  void (*addLLVMDialectPasses)(mlir::OpPassManager &pm, const CodegenOptions &options) = nullptr;
  /// The runtime archive a model links, BIN/../lib/lib<runtime>.a (the CPU
  /// picks a portable one by --cpu).
  llvm::StringRef runtime;
  /// Whether its runtime trains data-parallel (mpirun): then tf-autodiff
  /// also builds grad_step and apply_step.
  bool dataParallel = false;
  /// Whether it runs tf.cross_entropy_grad as a kernel (CUDA's
  /// tfc_cuda_cross_entropy_backward); else tf-decompose spells it out.
  bool crossEntropyGradKernel = false;
  /// Whether it maps loop nests to GPU kernels (tf-map-to-gpu), so that the
  /// GPU mapping's switches apply (--persistent-kernels).
  bool gpuMapping = false;
};

/// Every target, the default (cpu) first.
llvm::ArrayRef<Backend> backends();
/// The backend named `name`, or null.
const Backend *findBackend(llvm::StringRef name);

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_BACKEND_H
