//===- Backend.cpp - the targets tfc compiles for -------------------------===//

#include "compiler/lowering/Backend.h"
#include "compiler/lowering/cpu/Pipeline.h"
#include "compiler/lowering/cuda/Pipeline.h"

namespace tfc {

llvm::ArrayRef<Backend> backends() {
  static const Backend table[] = {
      {"cpu", "native code for the host CPU (or --cpu=NAME) through LLVM", "",
       [](mlir::OpPassManager &pm, const CodegenOptions &) { addCpuLinalgPasses(pm); },
       [](mlir::OpPassManager &pm, const CodegenOptions &o) { addCpuBufferPasses(pm, o.winograd); },
       nullptr, nullptr,
       [](mlir::OpPassManager &pm, const CodegenOptions &) { addCpuLLVMDialectPasses(pm); },
       "tfc_runtime", /*dataParallel=*/true},
      {"cuda", "CUDA kernels for NVIDIA GPUs (sm_80 and newer), host code for this CPU", "",
       [](mlir::OpPassManager &pm, const CodegenOptions &o) { addCudaLinalgPasses(pm, o.cuda); },
       [](mlir::OpPassManager &pm, const CodegenOptions &o) { addCudaBufferPasses(pm, o.cuda); },
       [](mlir::OpPassManager &pm, const CodegenOptions &o) { addCudaKernelPasses(pm, o.cuda); },
       [](mlir::OpPassManager &pm, const CodegenOptions &o) { addCudaPtxPasses(pm, o.cuda); },
       [](mlir::OpPassManager &pm, const CodegenOptions &o) {
         addCudaLLVMDialectPasses(pm, o.cuda);
       },
       "tfc_runtime_cuda", /*dataParallel=*/true, // NCCL (runtime/cuda/Nccl.h)
       /*crossEntropyGradKernel=*/true, /*gpuMapping=*/true},
      {"cuda-emulated",
       "the CUDA target's kernels run as loops on this CPU (to check the GPU mapping without "
       "a GPU; slow)",
       "",
       [](mlir::OpPassManager &pm, const CodegenOptions &o) { addCudaLinalgPasses(pm, o.cuda); },
       [](mlir::OpPassManager &pm, const CodegenOptions &o) {
         addCudaEmulatedBufferPasses(pm, o.cuda);
       },
       nullptr, nullptr,
       [](mlir::OpPassManager &pm, const CodegenOptions &o) {
         addCudaEmulatedLLVMDialectPasses(pm, o.cuda);
       },
       "tfc_runtime", /*dataParallel=*/false, /*crossEntropyGradKernel=*/true,
       /*gpuMapping=*/true},
  };
  return table;
}

const Backend *findBackend(llvm::StringRef name) {
  for (const Backend &backend : backends())
    if (backend.name == name)
      return &backend;
  return nullptr;
}

} // namespace tfc
