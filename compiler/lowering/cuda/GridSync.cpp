//===- GridSync.cpp - the grid barrier of persistent kernels --------------===//
//
// tf-merge-launches' grid chains run an entry's loop nests as the phases of
// one kernel, a call of `@tfc_grid_sync` between consecutive phases. Here it
// gets its body, in the kernels' module: every block of the grid waits until
// all have arrived, and what any block wrote before is visible to all after
// (CUDA's cooperative groups do the same for grid.sync()):
//
//   func.func private @tfc_grid_sync() {
//     gpu.barrier                 // the block's writes, before its thread 0
//     scf.if %thread_id_x == 0 {  // one arrival a block
//       llvm.inline_asm "..."     // read the generation; membar.gl; count
//     }                           // in; the last one resets the count and
//     gpu.barrier                 // bumps the generation, the others spin
//   }                             // on it; membar.gl
//
// The count and the generation are a global of the module
// (`@tfc_grid_state`, zero when the module loads): the count is back to
// zero after every barrier and the generation only grows, so the state
// needs no reset between launches. A block reads the generation before it
// counts itself in: it cannot change before the last block arrives.
// The barrier is correct only if every block of the grid runs at once: the
// launch is cooperative (`tfc.cooperative` on its `gpu.launch_func`, which
// tf-launches-to-runtime turns into tfc_cuda_launch_cooperative: the runtime
// launches at most the blocks the GPU holds at once, and the driver refuses
// a grid it cannot hold). So the kernel's grid size is the runtime's to
// choose: its `known_grid_size` goes (each phase loops over its blocks by
// the launched grid's size).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tfc {
#define GEN_PASS_DEF_TFGRIDSYNC
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kStateGlobal = "tfc_grid_state";

/// Thread 0 of a block, after the block's barrier: $0 points at the state
/// (count, generation). Registers and labels are the asm's own (`${:uid}`:
/// LLVM makes the labels unique should the call be inlined twice).
constexpr llvm::StringLiteral kArriveAndWait =
    "{\n"
    ".reg .pred %tfc_last, %tfc_same;\n"
    ".reg .b32 %tfc_gen, %tfc_count, %tfc_blocks, %tfc_now;\n"
    "ld.volatile.global.u32 %tfc_gen, [$0+4];\n"
    "membar.gl;\n"
    "atom.global.add.u32 %tfc_count, [$0], 1;\n"
    "mov.u32 %tfc_blocks, %nctaid.x;\n"
    "sub.u32 %tfc_blocks, %tfc_blocks, 1;\n"
    "setp.eq.u32 %tfc_last, %tfc_count, %tfc_blocks;\n"
    "@!%tfc_last bra tfc_wait_${:uid};\n"
    "st.volatile.global.u32 [$0], 0;\n"
    "membar.gl;\n"
    "add.u32 %tfc_now, %tfc_gen, 1;\n"
    "st.volatile.global.u32 [$0+4], %tfc_now;\n"
    "bra.uni tfc_done_${:uid};\n"
    "tfc_wait_${:uid}:\n"
    "ld.volatile.global.u32 %tfc_now, [$0+4];\n"
    "setp.eq.u32 %tfc_same, %tfc_now, %tfc_gen;\n"
    "@%tfc_same bra tfc_wait_${:uid};\n"
    "tfc_done_${:uid}:\n"
    "membar.gl;\n"
    "}";

/// Gives `declaration` (in a kernels' module) the barrier's body.
void defineGridSync(func::FuncOp declaration, gpu::GPUModuleOp kernels) {
  MLIRContext *ctx = declaration.getContext();
  Location loc = declaration.getLoc();
  OpBuilder b(ctx);
  if (!kernels.lookupSymbol(kStateGlobal)) {
    b.setInsertionPointToStart(kernels.getBody());
    auto i32 = b.getI32Type();
    b.create<LLVM::GlobalOp>(loc, LLVM::LLVMArrayType::get(i32, 2), /*isConstant=*/false,
                             LLVM::Linkage::Internal, kStateGlobal,
                             DenseElementsAttr::get(RankedTensorType::get({2}, i32),
                                                    b.getI32IntegerAttr(0).getValue()),
                             /*alignment=*/8, /*addrSpace=*/1);
  }
  Block *body = declaration.addEntryBlock();
  b.setInsertionPointToStart(body);
  b.create<gpu::BarrierOp>(loc);
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                        b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x),
                                        b.create<arith::ConstantIndexOp>(loc, 0));
  auto once = b.create<scf::IfOp>(loc, first, /*withElseRegion=*/false);
  {
    OpBuilder inner = OpBuilder::atBlockBegin(once.thenBlock());
    auto ptr = LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1);
    Value state = inner.create<LLVM::AddressOfOp>(loc, ptr, kStateGlobal);
    inner.create<LLVM::InlineAsmOp>(
        loc, /*resultTypes=*/TypeRange{}, ValueRange{state}, kArriveAndWait, "l,~{memory}",
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), /*operand_attrs=*/ArrayAttr());
  }
  b.create<gpu::BarrierOp>(loc);
  b.create<func::ReturnOp>(loc);
}

bool callsGridSync(Operation *op) {
  return op
      ->walk([](func::CallOp call) {
        return call.getCallee() == tfc::kGridSyncFunction ? WalkResult::interrupt()
                                                           : WalkResult::advance();
      })
      .wasInterrupted();
}

struct TfGridSyncPass : tfc::impl::TfGridSyncBase<TfGridSyncPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    DenseSet<SymbolRefAttr> cooperative;
    for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
      auto sync = kernels.lookupSymbol<func::FuncOp>(tfc::kGridSyncFunction);
      if (!sync)
        continue;
      for (auto kernel : kernels.getOps<gpu::GPUFuncOp>()) {
        if (!callsGridSync(kernel))
          continue;
        kernel->removeAttr(kernel.getKnownGridSizeAttrName());
        cooperative.insert(SymbolRefAttr::get(
            kernels.getNameAttr(), {FlatSymbolRefAttr::get(kernel.getNameAttr())}));
      }
      if (sync.isDeclaration())
        defineGridSync(sync, kernels);
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (cooperative.contains(launch.getKernel()))
        launch->setAttr(tfc::kCooperativeAttr, UnitAttr::get(&getContext()));
    });
    // The host's declaration: the kernels call their module's own.
    if (auto host = module.lookupSymbol<func::FuncOp>(tfc::kGridSyncFunction))
      if (host.isDeclaration() && SymbolTable::symbolKnownUseEmpty(host, module))
        host.erase();
  }
};

} // namespace
