//===- Pipeline.h - the CUDA code generation pipeline ---------------------===//
//
// The CUDA backend's stages after the shared ones (compiler/lowering/Pipeline.h),
// as `tfc compile --target=cuda --emit=` exposes them:
//   linalg   tf ops to linalg on tensors; attention, its gradient and the
//            layer norm's backward calls of the hand-written kernels
//   buffers  bufferization, cuBLASLt GEMM calls, the memory plan
//   gpu      every other loop nest a kernel (tf-map-to-gpu), outlined into
//            one gpu.module, the entries launching them
//   ptx      the kernels' PTX (NVVM, assembled by LLVM's NVPTX backend)
//   llvm     the host code: tfc_cuda_launch calls, the image, the entry ABI
//   obj/exe  as on the CPU; the driver links the CUDA runtime
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_CUDA_PIPELINE_H
#define TFC_COMPILER_LOWERING_CUDA_PIPELINE_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace tfc {

/// What `tfc compile --target=cuda` compiles for.
struct CudaTarget {
  /// The CUDA toolkit (ptxas, fatbinary, libdevice): --cuda-path, CUDA_HOME,
  /// or /usr/local/cuda.
  std::string toolkit = "/usr/local/cuda";
  /// tfc_cuda_image: "fatbin" (SASS for `archs` and PTX) or "ptx".
  std::string image = "fatbin";
  std::vector<std::string> archs = {"sm_80", "sm_90"};
  /// The PTX's target: the oldest GPU the model runs on.
  std::string ptxArch = "sm_80";
  /// The GEMMs' precision (--precision): "fp32", or "tf32" (cuBLASLt on TF32
  /// tensor cores); the generated and hand-written kernels are fp32 either
  /// way. The manifest's "cuda" record carries it to the runtime.
  std::string precision = "fp32";
  /// Which GEMMs read bf16 copies of A and B (tf-bf16-gemm-operands;
  /// --bf16-operands): "none", "large" (at least kBf16OperandsMinMacs
  /// multiply-adds; --precision bf16's default) or "all".
  std::string bf16Operands = "none";
  /// An activation's bf16 copy kept from the forward's product to the
  /// backward's (tf-bf16-gemm-operands' keep-activation-copies;
  /// --bf16-keep-activation-copies): less traffic, a higher peak.
  bool bf16KeepActivationCopies = false;
  /// An activation kept as its bf16 copy alone where every later reader
  /// copies it again or compares it with zero (tf-bf16-gemm-operands'
  /// bf16-activations); --no-bf16-activations keeps the fp32 too.
  bool bf16Activations = true;
  /// A product that only loop nests read stored in bf16 by cuBLASLt
  /// (tf-bf16-gemm-operands' gemm-results); --no-bf16-gemm-results: fp32.
  bool bf16GemmResults = true;
  /// A QKV projection that only attention reads stored in bf16, which the
  /// kernels read, and the out projection's input gradient, their
  /// backward's dO (tf-bf16-gemm-operands' attention-inputs);
  /// --no-bf16-attention-inputs: fp32.
  bool bf16AttentionInputs = true;
  /// The attention kernels store the copies of their outputs
  /// (tf-bf16-gemm-operands' attention-outputs); --no-bf16-attention-outputs:
  /// copy nests after them.
  bool bf16AttentionOutputs = true;
  /// Adjacent independent loop nests as one kernel launch (tf-group-loops,
  /// tf-merge-launches); --no-merge-launches: a launch each.
  bool mergeLaunches = true;
  /// Weight gradients' bias gradients and ReLU's gradients in their GEMM
  /// calls (cuBLASLt's BGRADB/BGRADA, DRELU); --no-gemm-epilogues: a loop
  /// nest each.
  bool gradientEpilogues = true;
  /// A train step's cross-entropy loss and its gradient of the same logits
  /// as one kernel call (tfc_cuda_cross_entropy_fused); --no-fused-cross-entropy:
  /// two calls, each reading the logits.
  bool fusedCrossEntropy = true;
  /// Small launches after a launch run as its tail, by its last block
  /// (tf-merge-launches' tails); --no-launch-tails: launches of their own.
  bool tails = true;
  /// Room in the planned memory for an attention backward's dS, which its
  /// dkv stores for its dq (cuda-kernels.md); --no-attention-ds: none, and
  /// dq recomputes the scores.
  bool attentionDs = true;
  /// The layer norm backward's kernel stores the dropout of its dx where a
  /// training tf.dropout reads dx (a post-norm layer's dropout gradient),
  /// and dx only where another op reads it; --no-layer-norm-dropout: a loop
  /// nest after the call.
  bool layerNormDropout = true;
  /// The layer norm forward's kernel makes its x where it is a post-norm
  /// layer's residual + training dropout of a GEMM's epilogue;
  /// --no-layer-norm-residual: a loop nest after the GEMM.
  bool layerNormResidual = true;
  /// A long elementwise kernel's thread computes 4 consecutive elements with
  /// 16-byte accesses (tf-map-to-gpu's coarsen); --no-thread-coarsening: one.
  bool coarsen = true;
  /// A train step writes its new parameters and optimizer state over the
  /// arguments (tf-updates-in-place), so the device holds them once;
  /// --no-updates-in-place: into spares the runtime swaps with them.
  bool updatesInPlace = true;
  /// Each launch and call tells the runtime which earlier ones it waits for
  /// (tf-graph-dependencies), so that a captured graph may run independent
  /// ones at once (TFC_GRAPH_DEPENDENCIES=1); --no-graph-dependencies: none.
  bool graphDependencies = true;
  /// How many memory-touching ops apart the memory plan keeps independent
  /// ops independent (tf-plan-memory's concurrent-window): more overlap
  /// against more memory.
  int64_t graphWindow = 6;
  /// cuda-emulated, a test (--graph-order-check): the device ops run in
  /// another order those dependencies allow (tf-graph-dependencies' reorder).
  bool graphOrderCheck = false;
  /// --persistent-kernels: each entry one cooperative kernel of grid-wide
  /// phases (tf-merge-launches' grid chains, tf-grid-sync): every GEMM and
  /// layer generated code (no cuBLASLt, no hand-written kernels), for steps
  /// that launches, not kernels, bound.
  bool persistent = false;
};

/// The fewest multiply-adds of a GEMM whose operands --bf16-operands=large
/// copies to bf16 (tf-bf16-gemm-operands' min-macs default).
inline constexpr int64_t kBf16OperandsMinMacs = int64_t(1) << 28;

/// The PTX comment tf-await-previous-kernel starts every kernel with.
inline constexpr const char *kAwaitPreviousKernelMarker = "// tfc: await the previous kernel";

/// `ptx` (whose target is older than sm_90) for assembling the SASS of sm_90
/// and later: its target sm_90, each kernel's marker replaced by
/// griddepcontrol.launch_dependents and griddepcontrol.wait. Empty where
/// some kernel has no marker (the SASS is then assembled from `ptx` as it is).
std::string ptxAwaitingPreviousKernel(const std::string &ptx);

/// Dialects, target interfaces and translations the CUDA stages use.
void registerCudaCodegen(mlir::DialectRegistry &registry);

void addCudaLinalgPasses(mlir::OpPassManager &pm, const CudaTarget &target);
void addCudaBufferPasses(mlir::OpPassManager &pm, const CudaTarget &target);
/// buffers -> gpu: kernels outlined into one gpu.module, entries launching them.
void addCudaKernelPasses(mlir::OpPassManager &pm, const CudaTarget &target);
/// gpu -> the kernels as PTX (a gpu.binary).
void addCudaPtxPasses(mlir::OpPassManager &pm, const CudaTarget &target);
/// ptx -> the LLVM dialect: launches as runtime calls, the image embedded,
/// the entry ABI and manifest, the host code.
void addCudaLLVMDialectPasses(mlir::OpPassManager &pm, const CudaTarget &target);

/// --target=cuda-emulated: the CUDA backend's buffers and kernels, the
/// kernels run as parallel loops on the CPU (tf-launches-to-loops), the GEMMs
/// by the CPU's runtime; the rest as the CPU backend.
void addCudaEmulatedBufferPasses(mlir::OpPassManager &pm, const CudaTarget &target);
void addCudaEmulatedLLVMDialectPasses(mlir::OpPassManager &pm, const CudaTarget &target);

/// Whether `toolkit` has what the CUDA backend needs (ptxas, fatbinary and
/// libdevice); false with `error` saying what is missing.
bool checkCudaToolkit(const std::string &toolkit, std::string &error);

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_CUDA_PIPELINE_H
