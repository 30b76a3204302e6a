//===- MergeGpuModules.cpp - one GPU module for every kernel of a model ---===//
//
// gpu-kernel-outlining makes one gpu.module per kernel; assembled one by
// one they cost 2x (PTX) to 3x (cubin) the compile time of one module
// (CUDA.md §3b), and the runtime would load hundreds of modules. Here every
// kernel moves into one module, `tfc_kernels`, renamed tfc_k0, tfc_k1, ...
// in the order the entries first launch them: the index of a kernel in
// the manifest's list, which tfc_cuda_launch takes. Globals the kernels read
// (constant tables), cloned into each module by outlining, are kept once.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace tfc {
#define GEN_PASS_DEF_TFMERGEGPUMODULES
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

struct TfMergeGpuModulesPass : tfc::impl::TfMergeGpuModulesBase<TfMergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPoint(modules.front());
    auto merged = b.create<gpu::GPUModuleOp>(module.getLoc(), "tfc_kernels");
    Block *body = merged.getBody();
    auto append = [&](Operation *op) {
      if (body->mightHaveTerminator())
        op->moveBefore(body->getTerminator());
      else
        op->moveBefore(body, body->end());
    };
    // Kernels numbered in launch order; each old (module, kernel) renamed.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    unsigned next = 0;
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto key = std::make_pair(launch.getKernelModuleName(), launch.getKernelName());
      auto [it, inserted] = renamed.try_emplace(key);
      if (inserted) {
        auto source = module.lookupSymbol<gpu::GPUModuleOp>(key.first);
        auto kernel = source ? source.lookupSymbol<gpu::GPUFuncOp>(key.second) : nullptr;
        if (!kernel) {
          launch.emitError("tf-merge-gpu-modules: the kernel launched is not defined");
          return WalkResult::interrupt();
        }
        it->second = b.getStringAttr("tfc_k" + std::to_string(next++));
        kernel.setName(it->second.getValue());
        append(kernel);
      }
      launch.setKernelAttr(SymbolRefAttr::get(merged.getSymNameAttr(),
                                              {FlatSymbolRefAttr::get(it->second)}));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // The rest of each module (the globals outlining cloned in) once.
    for (gpu::GPUModuleOp old : modules) {
      for (Operation &op : llvm::make_early_inc_range(old.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (isa<gpu::GPUFuncOp>(op) || !symbol || merged.lookupSymbol(symbol.getName()))
          continue;
        append(&op);
      }
      old.erase();
    }
  }
};

} // namespace
