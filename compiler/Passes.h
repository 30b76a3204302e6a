//===- Passes.h - tfc's passes --------------------------------------------===//
#ifndef TFC_COMPILER_PASSES_H
#define TFC_COMPILER_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
}
namespace linalg {
class LinalgDialect;
}
namespace affine {
class AffineDialect;
}
namespace math {
class MathDialect;
}
namespace memref {
class MemRefDialect;
}
namespace gpu {
class GPUDialect;
}
namespace func {
class FuncDialect;
class FuncOp;
}
namespace LLVM {
class LLVMDialect;
}
namespace scf {
class SCFDialect;
}
namespace tensor {
class TensorDialect;
}
namespace vector {
class VectorDialect;
}
} // namespace mlir

namespace tfc {
/// Attributes the CPU pipeline passes between its passes.
inline constexpr llvm::StringLiteral kEntryAttr = "tfc.entry";   // an entry's name
inline constexpr llvm::StringLiteral kAbiAttr = "tfc.abi";       // what its args/results are
inline constexpr llvm::StringLiteral kArenaBytesAttr = "tfc.arena_bytes";
/// The arena's buffers (tf-plan-memory): [begin, end) in bytes and the
/// first and last position of their live range, four numbers a buffer.
inline constexpr llvm::StringLiteral kArenaBuffersAttr = "tfc.arena_buffers";
/// On an entry tf-graph-dependencies ordered: {ops, longest_path} (its
/// device ops, the most on one path of ops that wait for each other).
inline constexpr llvm::StringLiteral kGraphAttr = "tfc.graph";
/// On a runtime call of an entry: its position in tf-plan-memory's live ranges.
inline constexpr llvm::StringLiteral kPlanPositionAttr = "tfc.plan_position";
inline constexpr llvm::StringLiteral kMatmulAttr = "tfc.matmul"; // a tf.matmul's generic
/// On the generic of a "gemm" fusion that reads its matmul's result: the
/// epilogue tf-gemm-to-runtime hands to the GEMM (on buffers, the
/// scf.execute_region holding the GEMM call and the epilogue).
inline constexpr llvm::StringLiteral kGemmEpilogueAttr = "tfc.gemm_epilogue";
/// On the generic tf-bf16-gemm-operands makes of a GEMM operand: its fp32
/// values rounded to bf16 (the bits, as i16) for cuBLASLt to read.
inline constexpr llvm::StringLiteral kBf16CastAttr = "tfc.bf16_cast";
/// On the generics of one lowered tf.fusion "horizontal" (the same integer
/// for the loops of one fusion): tf-horizontal-loops runs them as one loop.
inline constexpr llvm::StringLiteral kHorizontalAttr = "tfc.horizontal";
/// On loop nests on buffers that tf-group-loops found independent and put
/// side by side (one integer a group): tf-plan-memory counts the group as
/// one position, so its members share no bytes and may run at once.
inline constexpr llvm::StringLiteral kLaunchGroupAttr = "tfc.launch_group";
/// On an scf.parallel: the work of one iteration, when the loop's body
/// cannot tell (tf-parallel-loops-to-runtime's estimate otherwise).
inline constexpr llvm::StringLiteral kWorkPerIterationAttr = "tfc.work_per_iteration";
/// In a persistent kernel (tf-merge-launches' grid chains): every block of
/// the grid waits in a call of it for all the others, the writes before
/// visible after (tf-grid-sync defines it; tf-launches-to-loops runs the
/// phases between calls one after another).
inline constexpr llvm::StringLiteral kGridSyncFunction = "tfc_grid_sync";
/// In a kernel with a tail (tf-merge-launches): called by every thread of
/// every block once its own work is done, true in the one block that is
/// the last to call it, after which that block sees every block's writes
/// (tf-grid-sync defines it; tf-launches-to-loops runs the tail once after
/// the whole grid).
inline constexpr llvm::StringLiteral kLastBlockFunction = "tfc_last_block";
/// On a `gpu.launch_func` of a persistent kernel: launched cooperatively
/// (tf-grid-sync sets it, tf-launches-to-runtime reads it).
inline constexpr llvm::StringLiteral kCooperativeAttr = "tfc.cooperative";

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"
} // namespace tfc

#endif // TFC_COMPILER_PASSES_H
