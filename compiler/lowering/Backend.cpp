//===- Backend.cpp - the targets tfc compiles for -------------------------===//

#include "compiler/lowering/Backend.h"
#include "compiler/lowering/cpu/Pipeline.h"

namespace tfc {

llvm::ArrayRef<Backend> backends() {
  static const Backend table[] = {
      {"cpu", "native code for the host CPU (or --cpu=NAME) through LLVM", "",
       addCpuLinalgPasses, addCpuBufferPasses, addCpuLLVMDialectPasses},
      {"cuda", "CUDA code for NVIDIA GPUs",
       "this tfc has no CUDA backend yet (issue 26); compile with --target=cpu"},
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
