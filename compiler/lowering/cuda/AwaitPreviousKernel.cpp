//===- AwaitPreviousKernel.cpp - kernels that wait for the one before -----===//
//
// Programmatic dependent launch (sm_90 and later) lets a kernel's launch
// overlap the kernel before it on the stream, if the kernel waits for that
// one's results itself, first thing. The kernels' PTX targets sm_80, where
// the instructions do not exist, so each kernel gets a marker here, a PTX
// comment that tf-launches-to-runtime turns into them when it assembles the
// SASS for sm_90 and later (kAwaitPreviousKernelMarker, Pipeline.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/lowering/cuda/Pipeline.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace tfc {
#define GEN_PASS_DEF_TFAWAITPREVIOUSKERNEL
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

struct TfAwaitPreviousKernelPass : tfc::impl::TfAwaitPreviousKernelBase<TfAwaitPreviousKernelPass> {
  void runOnOperation() override {
    getOperation().walk([](gpu::GPUFuncOp kernel) {
      if (!kernel.isKernel() || kernel.getBody().empty())
        return;
      OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
      // The memory clobber keeps every load and store after it.
      b.create<LLVM::InlineAsmOp>(
          kernel.getLoc(), TypeRange(), ValueRange(), tfc::kAwaitPreviousKernelMarker, "~{memory}",
          /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::AsmDialectAttr(), ArrayAttr());
    });
  }
};

} // namespace
