//===- Pipeline.h - the CPU code generation pipeline ----------------------===//
//
// The CPU backend's stages after the shared ones (compiler/lowering/Pipeline.h),
// as `tfc compile --emit=` exposes them:
//   linalg   tf ops to linalg on tensors, the CPU runtime's kernel calls
//   buffers  bufferization, GEMM calls, the memory plan, entry ABI
//   llvm     the LLVM dialect, LLVM IR, LLVM's O3 for the CPU (--cpu)
//   obj      an object file; the driver links it with the runtime
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_CPU_PIPELINE_H
#define TFC_COMPILER_LOWERING_CPU_PIPELINE_H

#include "compiler/lowering/Pipeline.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CodeGen.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace tfc {

/// Dialects, bufferization models and LLVM translations the CPU stages use.
void registerCpuCodegen(mlir::DialectRegistry &registry);

/// tf-lower-to-linalg: each fusion region becomes one loop nest.
void addCpuLinalgPasses(mlir::OpPassManager &pm);
/// linalg on tensors → buffers: GEMM calls (convolutions of 5 taps by
/// Winograd's minimal filtering unless `winograd` is false), one planned
/// arena, C entry ABI.
void addCpuBufferPasses(mlir::OpPassManager &pm, bool winograd = true);
/// buffers → the LLVM dialect.
void addCpuLLVMDialectPasses(mlir::OpPassManager &pm);

/// The CPU generated code is for (`tfc compile --cpu=NAME`).
struct CpuTarget {
  /// What --cpu said: "native" (this machine's CPU, with its own features)
  /// or one of LLVM's CPU names for the host's target (x86-64-v3, znver4, ...).
  std::string name = "native";
  /// The CPU and feature string LLVM gets: the host's name and features for
  /// native, else `name` and no features beyond its own.
  std::string cpu, features;
  /// What the code may use, by runtime/CpuCheck.h's names: the features of
  /// `cpu` a compiled model checks for at start-up (the manifest's cpu record).
  std::vector<std::string> needs;
  /// The portable runtime to link (its kernels' -march, libtfc_runtime_R.a):
  /// the newest of those built that `cpu` has every feature of; "" for
  /// native (libtfc_runtime.a, kernels built for this machine).
  std::string runtime;
  bool native() const { return name == "native"; }
};

/// Resolves --cpu=NAME into `target`; false with `error` set when NAME is
/// neither "native" nor one of LLVM's CPUs for the host's target, or lacks
/// a feature of every CPU in `runtimes`, those the portable runtimes'
/// kernels are built for, oldest first (a named CPU links one of them).
bool resolveCpuTarget(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> runtimes,
                      CpuTarget &target, std::string &error);

/// The CPU names --cpu takes besides "native": LLVM's for the host's target.
std::vector<std::string> knownCpuNames();

/// `target`'s machine, PIC, optimising; null with `error` set when LLVM has
/// no target.
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CpuTarget &target, std::string &error,
                    llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive);

/// The host CPU's target machine (--cpu=native: its own features, AVX2 and
/// AVX-512 where present).
std::unique_ptr<llvm::TargetMachine>
createHostTargetMachine(std::string &error,
                        llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive);

/// Translates a module in the LLVM dialect to LLVM IR for `machine`; null
/// with `error` set on failure.
std::unique_ptr<llvm::Module> translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                                                llvm::TargetMachine &machine, std::string &error);

/// LLVM's O3 pipeline for `machine`, without full unrolling, vectorising
/// loops from 8 iterations on.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine);

/// The entries' pipeline: what folds the memref descriptors' insertvalue and
/// extractvalue chains into plain stores of pointers (SROA, early CSE,
/// instcombine, simplifycfg), and nothing else. An entry is straight-line
/// calls and context stores (every loop outlined), run once a step: O3's SLP
/// vectoriser spent 1.4 s and O1's interprocedural passes 0.6 s on set
/// anomaly's entries for nothing; these take 0.13 s.
void optimizeStraightLine(llvm::Module &module, llvm::TargetMachine &machine);

/// Emits `module` as an object file for `machine`.
bool emitObjectFile(llvm::Module &module, llvm::TargetMachine &machine,
                    llvm::raw_pwrite_stream &os, std::string &error);

/// What compileInParts makes of each part, and what it is asked for.
struct CompiledParts {
  bool wantObjects = true;      // compile each part into an object file
  bool wantOptimizedIR = false; // keep each part's optimised IR, for joinOptimizedParts
  std::vector<llvm::SmallVector<char, 0>> objects; // each part's object file
  std::vector<llvm::SmallVector<char, 0>> bitcode; // each part's optimised IR
  llvm::SmallVector<bool> straight;                // each part: the straight-line entries'
};

/// Optimises and compiles `module` (translated, not yet optimised) on
/// `threads` threads: the functions with loops in parts of about equal size
/// (4 per thread; each with the functions it may inline) at O3, the
/// straight-line entries in one more with a few cleanups and fast
/// instruction selection. Symbols local to the module become hidden ones so
/// the parts link together. False with `error` set on failure. Leaves
/// `module` with its local symbols hidden.
bool compileInParts(llvm::Module &module, unsigned threads, CompiledParts &parts,
                    std::string &error, const CpuTarget &target = CpuTarget());

/// The parts' optimised IR (compileInParts with wantOptimizedIR) linked into
/// one module of `context`: the code the executable's objects are compiled
/// from, for --emit=llvm, --emit=obj and --dump-ir's llvm-o3.ll. With
/// `forOneObject`, the straight-line entries are marked optnone, so that one
/// object compiled at O3 selects their instructions fast, as their own
/// part's object does. Functions keep their order in `original` (the module
/// compileInParts was given). Null with `error` set on failure.
std::unique_ptr<llvm::Module> joinOptimizedParts(const CompiledParts &parts,
                                                 const llvm::Module &original,
                                                 llvm::LLVMContext &context, bool forOneObject,
                                                 std::string &error);

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_CPU_PIPELINE_H
