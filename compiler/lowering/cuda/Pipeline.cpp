//===- Pipeline.cpp - the CUDA code generation pipeline -------------------===//
//
// The only translation unit that includes the upstream GPU and NVVM
// conversions (slow to compile, like cpu/Pipeline.cpp's).
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/cuda/Pipeline.h"
#include "compiler/Passes.h"
#include "compiler/lowering/Pipeline.h"
#include "compiler/lowering/cpu/Pipeline.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;

void tfc::registerCudaCodegen(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void tfc::addCudaLinalgPasses(OpPassManager &pm, const CudaTarget &target) {
  // Attention, its gradient and the layer norm's backward call the
  // hand-written kernels (runtime/cuda/kernels/); dropout's masks are drawn
  // in generated code. --target=cuda-emulated runs the same calls on the
  // CPU's kernels (tf-launches-to-loops renames them).
  // A train step's loss and its gradient one call (fused-cross-entropy).
  TfLowerToLinalgOptions options;
  // Persistent kernels call no kernel of the runtime: tf-decompose spelled
  // attention, layer norm and cross-entropy out (tfc's --persistent-kernels).
  options.kernels = target.persistent ? "none" : "cuda";
  options.fusedCrossEntropy = target.fusedCrossEntropy;
  // Room for an attention backward's dS: bf16 on tensor cores (tf32, bf16).
  options.attentionDs = target.attentionDs;
  options.tensorCoreAttention = target.precision != "fp32";
  // A post-norm layer's dropout gradient stored by the layer norm backward.
  options.layerNormDropout = target.layerNormDropout;
  // A post-norm layer's residual sum and its dropout made by the layer norm.
  options.layerNormResidual = target.layerNormResidual;
  pm.addPass(createTfLowerToLinalg(options));
  pm.nest<func::FuncOp>().addPass(createCanonicalizerPass());
}

/// GEMMs as cuBLASLt calls with their epilogues; in a persistent kernel
/// they stay loop nests (a thread an element of the product), phases of it.
static void addCudaGemmPasses(OpPassManager &pm, const tfc::CudaTarget &target) {
  if (target.persistent)
    return;
  tfc::TfGemmToRuntimeOptions gemm;
  gemm.device = "cuda";
  gemm.gradientEpilogues = target.gradientEpilogues;
  pm.addPass(tfc::createTfGemmToRuntime(gemm));
  if (target.bf16Operands != "none") {
    tfc::TfBf16GemmOperandsOptions bf16;
    bf16.minMacs = target.bf16Operands == "all" ? 0 : tfc::kBf16OperandsMinMacs;
    bf16.keepActivationCopies = target.bf16KeepActivationCopies;
    bf16.bf16Activations = target.bf16Activations;
    bf16.attentionOutputs = target.bf16AttentionOutputs;
    bf16.gemmResults = target.bf16GemmResults;
    bf16.attentionInputs = target.bf16AttentionInputs;
    pm.addPass(tfc::createTfBf16GemmOperands(bf16));
  }
}

/// How many ops apart the memory plan keeps independent ops independent:
/// where the graph takes dependencies (a persistent kernel runs its phases
/// in order), tfc::kGraphWindow; else 0.
static int64_t planConcurrent(const tfc::CudaTarget &target) {
  return target.graphDependencies && !target.persistent ? target.graphWindow : 0;
}

void tfc::addCudaBufferPasses(OpPassManager &pm, const CudaTarget &target) {
  addBufferizationPasses(pm, target.updatesInPlace);
  addCudaGemmPasses(pm, target);
  pm.addPass(createTfSplitReductions());
  // The tables a hand-written kernel reads (a causal mask), in device memory.
  pm.addPass(createTfGlobalsToDevice());
  // Independent loop nests side by side, apart in the plan: one launch each
  // group (tf-merge-launches).
  if (target.mergeLaunches)
    pm.addPass(createTfGroupLoops());
  // The plan before mapping: its liveness reads the loop nests in order;
  // with graph dependencies it orders no ops the program leaves independent.
  pm.addPass(createTfPlanMemory(TfPlanMemoryOptions{planConcurrent(target)}));
}

void tfc::addCudaEmulatedBufferPasses(OpPassManager &pm, const CudaTarget &target) {
  addBufferizationPasses(pm, target.updatesInPlace);
  // The CUDA target's GEMM calls, fused epilogues included (tf-launches-to-
  // loops calls their CPU twins).
  addCudaGemmPasses(pm, target);
  pm.addPass(createTfSplitReductions());
  if (target.mergeLaunches)
    pm.addPass(createTfGroupLoops());
  pm.addPass(createTfPlanMemory(TfPlanMemoryOptions{planConcurrent(target)}));
}

void tfc::addCudaEmulatedLLVMDialectPasses(OpPassManager &pm, const CudaTarget &target) {
  pm.addPass(createTfApproximateMath());
  pm.addPass(createTfMapToGpu(TfMapToGpuOptions{target.coarsen}));
  if (target.mergeLaunches || target.persistent)
    pm.addPass(createTfMergeLaunches(TfMergeLaunchesOptions{target.persistent, target.tails}));
  pm.nest<func::FuncOp>().addPass(createCanonicalizerPass());
  if (target.graphOrderCheck && !target.persistent)
    pm.addPass(
        createTfGraphDependencies(TfGraphDependenciesOptions{/*lanes=*/0, /*reorder=*/true}));
  pm.addPass(createTfLaunchesToLoops());
  pm.addPass(createTfPackEntryAbi());
  addCpuLLVMDialectPasses(pm);
}

void tfc::addCudaKernelPasses(OpPassManager &pm, const CudaTarget &target) {
  // exp, log, tanh, erf as the CPU build computes them (the same
  // polynomials: results agree across targets, and no libdevice for them).
  pm.addPass(createTfApproximateMath());
  pm.addPass(createTfMapToGpu(TfMapToGpuOptions{target.coarsen}));
  if (target.mergeLaunches || target.persistent)
    pm.addPass(createTfMergeLaunches(TfMergeLaunchesOptions{target.persistent, target.tails}));
  pm.nest<func::FuncOp>().addPass(createCanonicalizerPass());
  // Constants into the kernels, or each would be a kernel parameter.
  pm.addPass(createGpuLauchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createTfMergeGpuModules());
  // Persistent kernels: the grid barrier's body, cooperative launches; a
  // tail's ticket (tf-merge-launches).
  if (target.mergeLaunches || target.persistent)
    pm.addPass(createTfGridSync());
  // The host's copies of what the kernels now compute themselves.
  pm.nest<func::FuncOp>().addPass(createCanonicalizerPass());
  // What each launch and call waits for, while the kernels' bodies say what
  // they access (a persistent entry is one launch).
  if (target.graphDependencies && !target.persistent)
    pm.addPass(createTfGraphDependencies());
}

void tfc::addCudaPtxPasses(OpPassManager &pm, const CudaTarget &target) {
  // Each kernel waits for the one before itself (on sm_90's SASS), so that
  // the runtime may overlap their launches.
  pm.addPass(createTfAwaitPreviousKernel());
  GpuNVVMAttachTargetOptions attach;
  attach.chip = target.ptxArch;
  // PTX ISA 8.1: kernels take up to 32 KiB of parameters (tf-merge-launches).
  attach.features = "+ptx81";
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  // scf before the NVVM conversion, or the failure shows only at
  // serialisation (CUDA.md §3c, pitfall 7).
  kernels.addPass(createConvertSCFToCFPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  // One pointer a buffer (static shapes), 32-bit indices (every buffer has
  // fewer than 2^31 elements): a third less PTX (CUDA.md §3c, pitfall 5).
  nvvm.indexBitwidth = 32;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // What the conversion leaves to LLVM's intrinsics (math.fma of the
  // approximations' polynomials: fma.rn.f32).
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa"; // PTX: tf-launches-to-runtime assembles it
  binary.toolkitPath = target.toolkit; // libdevice (sqrt), CUDA.md pitfall 6
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void tfc::addCudaLLVMDialectPasses(OpPassManager &pm, const CudaTarget &target) {
  TfLaunchesToRuntimeOptions launches;
  launches.imageFormat = target.image;
  launches.archs = target.archs;
  launches.ptxArch = target.ptxArch;
  launches.toolkit = target.toolkit;
  launches.precision = target.precision;
  pm.addPass(createTfLaunchesToRuntime(launches));
  pm.addPass(createTfPackEntryAbi());
  // The host code: views, the launches' argument slots and calls.
  OpPassManager &perFunction = pm.nest<func::FuncOp>();
  perFunction.addPass(createConvertSCFToCFPass());
  perFunction.addPass(memref::createExpandStridedMetadataPass());
  perFunction.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.nest<func::FuncOp>().addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

bool tfc::checkCudaToolkit(const std::string &toolkit, std::string &error) {
  auto path = [&](std::initializer_list<const char *> parts) {
    llvm::SmallString<128> p(toolkit);
    for (const char *part : parts)
      llvm::sys::path::append(p, part);
    return std::string(p);
  };
  if (!llvm::sys::fs::is_directory(toolkit)) {
    error = "no CUDA toolkit at '" + toolkit + "'";
    return false;
  }
  for (const std::string &tool : {path({"bin", "ptxas"}), path({"bin", "fatbinary"})})
    if (!llvm::sys::fs::can_execute(tool)) {
      error = "the CUDA toolkit at '" + toolkit + "' has no " + tool;
      return false;
    }
  std::string libdevice = path({"nvvm", "libdevice", "libdevice.10.bc"});
  if (!llvm::sys::fs::exists(libdevice)) {
    error = "the CUDA toolkit at '" + toolkit + "' has no " + libdevice;
    return false;
  }
  return true;
}
