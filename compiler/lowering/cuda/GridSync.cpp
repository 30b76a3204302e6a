//===- GridSync.cpp - the grid barrier and the last block's ticket --------===//
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
// A launch with a tail (tf-merge-launches: small launches run by the block
// that finishes last, CUDA's threadFenceReduction sample) calls
// `@tfc_last_block` in every thread once its own work is done; it gets its
// body here too:
//
//   func.func private @tfc_last_block() -> i1 {
//     membar.gl                   // this thread's writes, GPU-wide
//     gpu.barrier                 // the block's, before its thread 0
//     scf.if %thread_id_x == 0 {  // membar.gl; old = atom.add ticket, 1;
//       llvm.inline_asm "..."     // last = old == %nctaid.x - 1; the
//     }                           // last block stores 0 back
//     %any = llvm.nvvm.barrier0.or(last)  // bar.red.or: the block's answer
//     scf.if %any { membar.gl }   // acquire, in each thread that reads
//     return %any
//   }
//
// The ticket is a global of its own (`@tfc_last_block_ticket`, zero when the
// module loads), back to zero when the kernel ends: the last block resets it
// after every other block has drawn. Kernels of a stream never overlap (with
// programmatic dependent launch a kernel waits for the one before at its
// start, tf-await-previous-kernel), so one ticket serves every kernel.
// Why the tail sees the other blocks' writes: each writer fences, then its
// block's barrier, then its thread 0 fences again (cumulative: the block's
// writes are ordered before its ticket) and draws, a release; the last
// block's draw reads the count every other draw made (atomics on one word),
// and each of its threads fences after the broadcast, an acquire, before
// any load of the tail. That is the PTX memory model's fence-fence
// synchronization, which holds for the plain (weak, L1-cached) loads the
// tail makes: the L1 is not coherent, and a line of it could hold stale
// bytes of a partial result (read before by this multiprocessor: a line
// shared with an input, say), so the model's guarantee is what makes it
// correct, not the cache's state: an acquire fence makes later loads of
// the thread see what was released to it (CUDA's cooperative groups rely
// on the same for grid.sync()). ptxas (13.0, sm_80 and sm_90) makes each
// membar.gl MEMBAR.SC.GPU then CCTL.IVALL: the L1 is invalidated, the
// tail's loads go to L2. The non-coherent read-only path
// (ld.global.nc) reads only the module's constant tables: no kernel
// parameter is `noalias`.
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

constexpr llvm::StringLiteral kTicketGlobal = "tfc_last_block_ticket";

/// Thread 0 of a block, after the block's barrier: $1 points at the ticket.
/// $0 is 1 in the block that draws the last one (the grid is 1-D: the
/// blocks are %nctaid.x), which stores 0 back for the next launch (every
/// other block has drawn), else 0.
constexpr llvm::StringLiteral kDrawTicket =
    "{\n"
    ".reg .pred %tfc_drew_last;\n"
    ".reg .b32 %tfc_ticket, %tfc_blocks;\n"
    "membar.gl;\n"
    "atom.global.add.u32 %tfc_ticket, [$1], 1;\n"
    "mov.u32 %tfc_blocks, %nctaid.x;\n"
    "sub.u32 %tfc_blocks, %tfc_blocks, 1;\n"
    "setp.eq.u32 %tfc_drew_last, %tfc_ticket, %tfc_blocks;\n"
    "@%tfc_drew_last st.volatile.global.u32 [$1], 0;\n"
    "selp.u32 $0, 1, 0, %tfc_drew_last;\n"
    "}";

/// A fence of this thread's memory accesses, GPU-wide.
void fence(OpBuilder &b, Location loc) {
  MLIRContext *ctx = b.getContext();
  b.create<LLVM::InlineAsmOp>(loc, /*resultTypes=*/TypeRange{}, ValueRange{}, "membar.gl;",
                              "~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
                              LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
                              /*operand_attrs=*/ArrayAttr());
}

/// Gives `declaration` (in a kernels' module) the ticket's body.
void defineLastBlock(func::FuncOp declaration, gpu::GPUModuleOp kernels) {
  MLIRContext *ctx = declaration.getContext();
  Location loc = declaration.getLoc();
  OpBuilder b(ctx);
  auto i32 = b.getI32Type();
  if (!kernels.lookupSymbol(kTicketGlobal)) {
    b.setInsertionPointToStart(kernels.getBody());
    b.create<LLVM::GlobalOp>(loc, i32, /*isConstant=*/false, LLVM::Linkage::Internal, kTicketGlobal,
                             b.getI32IntegerAttr(0), /*alignment=*/4,
                             /*addrSpace=*/1);
  }
  // Internal: inlined into each kernel, no copy of its own left in the PTX.
  declaration->setAttr("llvm.linkage", LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  Block *body = declaration.addEntryBlock();
  b.setInsertionPointToStart(body);
  fence(b, loc);
  b.create<gpu::BarrierOp>(loc);
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                        b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x),
                                        b.create<arith::ConstantIndexOp>(loc, 0));
  auto once = b.create<scf::IfOp>(loc, TypeRange{i32}, first, /*withElseRegion=*/true);
  {
    OpBuilder inner = OpBuilder::atBlockBegin(once.thenBlock());
    auto ptr = LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1);
    Value ticket = inner.create<LLVM::AddressOfOp>(loc, ptr, kTicketGlobal);
    auto draw = inner.create<LLVM::InlineAsmOp>(
        loc, /*resultTypes=*/TypeRange{i32}, ValueRange{ticket}, kDrawTicket, "=r,l,~{memory}",
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), /*operand_attrs=*/ArrayAttr());
    inner.create<scf::YieldOp>(loc, draw.getResult(0));
    OpBuilder otherwise = OpBuilder::atBlockBegin(once.elseBlock());
    otherwise.create<scf::YieldOp>(loc,
                                   otherwise.create<arith::ConstantIntOp>(loc, 0, 32).getResult());
  }
  // bar.red.or.pred: a block barrier that gives every thread thread 0's
  // answer (an intrinsic, so LLVM knows it is convergent).
  Value any = b.create<LLVM::CallIntrinsicOp>(loc, Type(i32), StringRef("llvm.nvvm.barrier0.or"),
                                              ValueRange{once.getResult(0)})
                  .getResult(0);
  Value last = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, any,
                                       b.create<arith::ConstantIntOp>(loc, 0, 32));
  auto acquire = b.create<scf::IfOp>(loc, last, /*withElseRegion=*/false);
  {
    OpBuilder inner = OpBuilder::atBlockBegin(acquire.thenBlock());
    fence(inner, loc);
  }
  b.create<func::ReturnOp>(loc, last);
}

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
      auto lastBlock = kernels.lookupSymbol<func::FuncOp>(tfc::kLastBlockFunction);
      if (lastBlock && lastBlock.isDeclaration())
        defineLastBlock(lastBlock, kernels);
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
    // The host's declarations: the kernels call their module's own.
    for (StringRef name : {tfc::kGridSyncFunction, tfc::kLastBlockFunction})
      if (auto host = module.lookupSymbol<func::FuncOp>(name))
        if (host.isDeclaration() && SymbolTable::symbolKnownUseEmpty(host, module))
          host.erase();
  }
};

} // namespace
