//===- Pipeline.cpp - the CPU code generation pipeline --------------------===//
//
// The only translation unit that includes the upstream conversion passes and
// LLVM's target machinery (they are slow to compile: see TOOLCHAIN.md).
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/cpu/Pipeline.h"
#include "compiler/Passes.h"
#include "runtime/CpuCheck.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include <mutex>

using namespace mlir;

void tfc::registerCpuCodegen(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, LLVM::LLVMDialect, memref::MemRefDialect,
                  scf::SCFDialect>();
  // Without these external models one-shot bufferization silently does nothing.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void tfc::addCpuLinalgPasses(OpPassManager &pm) {
  pm.addPass(createTfLowerToLinalg());
  pm.nest<func::FuncOp>().addPass(createCanonicalizerPass());
}

void tfc::addCpuBufferPasses(OpPassManager &pm, bool winograd) {
  addBufferizationPasses(pm);
  // The CPU's own: GEMMs as runtime calls, independent loops merged.
  pm.addPass(createTfGemmToRuntime(TfGemmToRuntimeOptions{winograd}));
  pm.addPass(createTfHorizontalLoops());
  addMemoryPlanAndEntryAbiPasses(pm);
}

void tfc::addCpuLLVMDialectPasses(OpPassManager &pm) {
  // exp, log, tanh, erf as arithmetic, so their loops vectorise.
  pm.addPass(createTfApproximateMath());
  // Reductions keep their accumulators in registers; the other generics'
  // parallel dims become scf.parallel; the big loops run on the pool.
  pm.addPass(createTfReductionsToLoops());
  pm.nest<func::FuncOp>().addPass(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createTfParallelLoopsToRuntime());
  // From here on a train step is a hundred functions (its entries, one per
  // distinct loop nest): the passes that work within one function run on
  // every core, one function at a time (MLIR's pass manager threads nested
  // pipelines).
  OpPassManager &perFunction = pm.nest<func::FuncOp>();
  perFunction.addPass(createConvertSCFToCFPass());
  perFunction.addPass(memref::createExpandStridedMetadataPass());
  perFunction.addPass(createLowerAffinePass());
  perFunction.addPass(createConvertMathToLLVMPass());
  // cuda-emulated: the vectors of tf-map-to-gpu's long elementwise kernels.
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  // What tf-approximate-math and convert-math-to-llvm leave becomes calls to
  // libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.nest<func::FuncOp>().addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// The host's target and triple (what every CPU --cpu names must be for).
static const llvm::Target *hostTarget(std::string &triple, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  triple = llvm::sys::getDefaultTargetTriple();
  return llvm::TargetRegistry::lookupTarget(triple, error);
}

/// The features of runtime/CpuCheck.h's table (those a compiled model can
/// test) that `subtarget` has, in the table's order (the x86-64 levels first).
static std::vector<std::string> checkableFeatures(const llvm::MCSubtargetInfo &subtarget) {
  llvm::StringMap<unsigned> bits;
  for (const llvm::SubtargetFeatureKV &kv : subtarget.getAllProcessorFeatures())
    bits[kv.Key] = kv.Value;
  std::vector<std::string> features;
  for (const tfc::cpu::Feature &f : tfc::cpu::kFeatures) {
    auto it = bits.find(llvm::StringRef(f.name.data(), f.name.size()));
    if (it != bits.end() && subtarget.getFeatureBits().test(it->second))
      features.emplace_back(f.name);
  }
  return features;
}

std::vector<std::string> tfc::knownCpuNames() {
  std::string triple, error;
  const llvm::Target *target = hostTarget(triple, error);
  if (!target)
    return {};
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, "", ""));
  std::vector<std::string> names;
  for (const llvm::SubtargetSubTypeKV &cpu : info->getAllProcessorDescriptions())
    names.emplace_back(cpu.Key);
  return names;
}

bool tfc::resolveCpuTarget(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> runtimes,
                           CpuTarget &out, std::string &error) {
  std::string triple;
  const llvm::Target *target = hostTarget(triple, error);
  if (!target)
    return false;
  out = CpuTarget();
  out.name = name.str();
  llvm::SubtargetFeatures features;
  if (out.native()) {
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature, enabled);
    out.cpu = llvm::sys::getHostCPUName().str();
  } else {
    std::unique_ptr<llvm::MCSubtargetInfo> generic(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!generic->isCPUStringValid(name)) {
      error = "not a CPU LLVM knows";
      return false;
    }
    out.cpu = name.str();
  }
  // On AMD's Zen a vector gather costs more than the loads and shuffles the
  // vectoriser uses without it: a row loop over 10 classes, unrolled, had
  // gathered its 16 positions' elements 10 floats apart (the reverse task's
  // cross-entropy loop 28% faster without, its step 1% on 1 thread).
  if (llvm::StringRef(out.cpu).starts_with("znver"))
    features.AddFeature("prefer-no-gather", true);
  out.features = features.getString();
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, out.cpu, out.features));
  out.needs = checkableFeatures(*info);
  if (out.native())
    return true;
  // A named CPU links the newest portable runtime whose kernels' CPU it has
  // every feature of.
  std::string missing;
  for (llvm::StringRef runtime : runtimes) {
    std::unique_ptr<llvm::MCSubtargetInfo> kernels(
        target->createMCSubtargetInfo(triple, runtime, ""));
    std::string lacks;
    for (const std::string &feature : checkableFeatures(*kernels))
      if (!llvm::is_contained(out.needs, feature))
        lacks += (lacks.empty() ? "" : ", ") + feature;
    if (lacks.empty())
      out.runtime = runtime.str();
    else if (missing.empty())
      missing = lacks;
  }
  if (out.runtime.empty()) {
    error = runtimes.empty()
                ? "this tfc has no portable runtime (only --cpu=native)"
                : name.str() + " lacks " + missing + ", which the runtime's portable kernels " +
                      "need (they are built for " + runtimes.front().str() + " at least)";
    return false;
  }
  return true;
}

std::unique_ptr<llvm::TargetMachine> tfc::createTargetMachine(const CpuTarget &cpu,
                                                             std::string &error,
                                                             llvm::CodeGenOptLevel level) {
  std::string triple;
  const llvm::Target *target = hostTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu.cpu, cpu.features, options, llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    error = "cannot create a target machine for " + triple;
  return machine;
}

std::unique_ptr<llvm::TargetMachine> tfc::createHostTargetMachine(std::string &error,
                                                                 llvm::CodeGenOptLevel level) {
  CpuTarget native;
  if (!resolveCpuTarget("native", {}, native, error))
    return nullptr;
  return createTargetMachine(native, error, level);
}

/// An entry function is one long block of calls (one per loop nest and
/// GEMM), and SelectionDAG's time grows faster than linearly with a block's
/// size: cut blocks after every call once they are `kMaxBlock` instructions
/// long, so instruction selection stays linear in the size of the model.
static void splitLongBlocks(llvm::Module &module) {
  constexpr unsigned kMaxBlock = 64;
  for (llvm::Function &function : module) {
    SmallVector<llvm::BasicBlock *> worklist;
    for (llvm::BasicBlock &block : function)
      worklist.push_back(&block);
    while (!worklist.empty()) {
      llvm::BasicBlock *block = worklist.pop_back_val();
      unsigned count = 0;
      for (llvm::Instruction &inst : *block) {
        if (++count < kMaxBlock || !llvm::isa<llvm::CallInst>(inst))
          continue;
        llvm::Instruction *next = inst.getNextNode();
        if (!next || next->isTerminator())
          break;
        worklist.push_back(block->splitBasicBlock(next));
        break;
      }
    }
  }
}

/// LLVM IR's PHIs name a value by its predecessor, so a terminator may not
/// reach one block twice with arguments: each repeat goes through a block of
/// its own that forwards them. The translation does this itself
/// (LLVM::ensureDistinctSuccessors), but in the order of a map keyed by
/// block addresses, so the new blocks' order, and the printed IR's block
/// numbers, changed from run to run (`--emit=llvm` of the same model
/// differed). Here they are made in the order of the blocks and successor
/// positions; the translation then finds nothing to do.
static void makeSuccessorsDistinct(ModuleOp module) {
  module.walk([](LLVM::LLVMFuncOp func) {
    if (func.getBody().empty())
      return;
    SmallVector<Block *> blocks;
    for (Block &block : func.getBody())
      blocks.push_back(&block);
    OpBuilder builder(func.getContext());
    for (Block *block : blocks) {
      Operation *terminator = block->getTerminator();
      SmallPtrSet<Block *, 8> seen;
      for (unsigned i = 0, e = terminator->getNumSuccessors(); i < e; ++i) {
        Block *successor = terminator->getSuccessor(i);
        if (successor->getNumArguments() == 0 || seen.insert(successor).second)
          continue;
        Block *forward = builder.createBlock(&func.getBody());
        for (BlockArgument arg : successor->getArguments())
          forward->addArgument(arg.getType(), arg.getLoc());
        builder.create<LLVM::BrOp>(terminator->getLoc(), forward->getArguments(), successor);
        terminator->setSuccessor(forward, i);
      }
    }
  });
}

std::unique_ptr<llvm::Module> tfc::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                                                    llvm::TargetMachine &machine,
                                                    std::string &error) {
  makeSuccessorsDistinct(module);
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, context);
  if (!llvmModule) {
    error = "cannot translate the LLVM dialect to LLVM IR";
    return nullptr;
  }
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple().getTriple());
  return llvmModule;
}

/// Runs the pipeline `build` makes on `module`, with analyses for `machine`.
static void runPipeline(
    llvm::Module &module, llvm::TargetMachine &machine, const llvm::PipelineTuningOptions &tuning,
    llvm::function_ref<llvm::ModulePassManager(llvm::PassBuilder &)> build) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgsccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgsccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgsccs, modules);
  build(builder).run(module, modules);
}

namespace {
/// Marks each innermost loop of a few iterations that whole vectors of 8 do
/// not cover (a row of 10 classes, a set of 10, the encoder-decoder's widths
/// of 6 to 18) for the loop vectoriser to fold its tail into masked vector
/// operations: one vector and a scalar remainder of 2 had left the
/// remainder most of the time of the reverse task's softmax and
/// cross-entropy rows. Longer loops keep their scalar remainder: masking
/// every step of a row of 100 (the Fleuret models) cost them 2-3%.
struct PredicateShortLoops : llvm::PassInfoMixin<PredicateShortLoops> {
  static constexpr unsigned kMaxTrips = 32, kLanes = 8;
  llvm::PreservedAnalyses run(llvm::Function &function, llvm::FunctionAnalysisManager &analyses) {
    auto &loops = analyses.getResult<llvm::LoopAnalysis>(function);
    auto &evolution = analyses.getResult<llvm::ScalarEvolutionAnalysis>(function);
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      const unsigned trips = loop->isInnermost() ? evolution.getSmallConstantTripCount(loop) : 0;
      if (trips > 1 && trips < kMaxTrips && trips % kLanes != 0)
        llvm::addStringMetadataToLoop(loop, "llvm.loop.vectorize.predicate.enable", 1);
    }
    return llvm::PreservedAnalyses::all(); // metadata only
  }
};
} // namespace

void tfc::optimizeModule(llvm::Module &llvmModule, llvm::TargetMachine &machine) {
  // LLVM's loop vectoriser leaves loops of fewer than 16 iterations scalar;
  // here that is every row of 10 classes (softmax, log-softmax and the
  // cross-entropy's gradient, their exp polynomials included: a tenth of
  // the reverse task's step). From 8 iterations on, one vector of 8 floats
  // pays (reverse train step, 1 thread: 4.05 -> 3.72 ms, medians of 400).
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("vectorizer-min-trip-count");
    if (it != options.end())
      it->second->addOccurrence(0, it->first(), "8");
  });
  // O3 without loop unrolling: every trip count is a small constant here, so
  // full unrolling turns a model into megabytes of straight-line code (and
  // seconds of codegen) for no gain; the vectorisers still interleave.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  runPipeline(llvmModule, machine, tuning, [](llvm::PassBuilder &builder) {
    builder.registerVectorizerStartEPCallback(
        [](llvm::FunctionPassManager &passes, llvm::OptimizationLevel) {
          passes.addPass(PredicateShortLoops());
        });
    return builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  });
  splitLongBlocks(llvmModule);
}

void tfc::optimizeStraightLine(llvm::Module &llvmModule, llvm::TargetMachine &machine) {
  runPipeline(llvmModule, machine, llvm::PipelineTuningOptions(), [](llvm::PassBuilder &) {
    llvm::FunctionPassManager cleanups;
    cleanups.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    cleanups.addPass(llvm::EarlyCSEPass());
    cleanups.addPass(llvm::InstCombinePass());
    cleanups.addPass(llvm::SimplifyCFGPass());
    llvm::ModulePassManager passes;
    passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(cleanups)));
    return passes;
  });
}

bool tfc::emitObjectFile(llvm::Module &module, llvm::TargetMachine &machine,
                         llvm::raw_pwrite_stream &os, std::string &error) {
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return false;
  }
  codegen.run(module);
  return true;
}
