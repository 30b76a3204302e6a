//===- MergeGpuModules.cpp - one GPU module for every kernel of a model ---===//
//
// gpu-kernel-outlining makes one gpu.module per kernel; assembled one by
// one they cost 2x (PTX) to 3x (cubin) the compile time of one module
// (CUDA.md §3b), and the runtime would load hundreds of modules. Here every
// kernel moves into one module, `tfc_kernels`, renamed tfc_k0, tfc_k1, ...
// in the order the entries first launch them: the index of a kernel in
// the manifest's list, which tfc_cuda_launch takes. Globals the kernels read
// (constant tables), cloned into each module by outlining, are kept once.
// Each kernel's source goes into the module's `tfc.kernel_sources` (kernel
// i's at i): the entry that first launches it and the model file's lines
// its operations come from, "train_step: reverse.tf:12,14", for the
// manifest (tf-launches-to-runtime) and `bench --profile`.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Path.h"

namespace tfc {
#define GEN_PASS_DEF_TFMERGEGPUMODULES
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

/// "ENTRY: FILE:LINE,LINE,..." for `kernel`, launched by `launch`: the file
/// lines of its operations' locations in order (at most 8, then "..."), the
/// file by its base name; "ENTRY" alone where no operation has a line.
std::string kernelSource(gpu::GPUFuncOp kernel, gpu::LaunchFuncOp launch) {
  std::string out;
  if (auto entry = launch->getParentOfType<func::FuncOp>())
    out = entry.getSymName().str();
  llvm::SmallVector<std::pair<std::string, unsigned>> lines;
  kernel.walk([&](Operation *op) {
    op->getLoc()->walk([&](Location loc) {
      if (auto at = dyn_cast<FileLineColLoc>(loc)) {
        std::pair<std::string, unsigned> line{llvm::sys::path::filename(at.getFilename()).str(),
                                              at.getLine()};
        if (line.second > 0 && !llvm::is_contained(lines, line))
          lines.push_back(line);
      }
      return WalkResult::advance();
    });
  });
  llvm::sort(lines);
  std::string file;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 8) {
      out += ",...";
      break;
    }
    out += lines[i].first == file ? "," : (file.empty() ? ": " : " ") + lines[i].first + ":";
    file = lines[i].first;
    out += std::to_string(lines[i].second);
  }
  return out;
}

} // namespace

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
    SmallVector<Attribute> sources;
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
        sources.push_back(b.getStringAttr(kernelSource(kernel, launch)));
        kernel.setName(it->second.getValue());
        append(kernel);
      }
      launch.setKernelAttr(SymbolRefAttr::get(merged.getSymNameAttr(),
                                              {FlatSymbolRefAttr::get(it->second)}));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    module->setAttr("tfc.kernel_sources", b.getArrayAttr(sources));
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
