//===- tfc.cpp - the tfc compiler driver ----------------------------------===//
//
//   tfc compile FILE [-o OUT] [--emit=STAGE] [--dump-ir=DIR] [--batch N]
//                    [--model NAME] [--cpu=NAME] [-v]
//   tfc interpret FILE ENTRY --params P --feed KIND:NAME=F.npy ... --output-dir DIR
//                            one entry through the reference interpreter (Interpret.h)
//   tfc builtins [-o OUT]    the reference of the .tf built-ins, in Markdown
//
// Without --emit, tfc links a native executable (the model's name, or -o):
// the object file generated through MLIR and LLVM plus the runtime library,
// found beside tfc (../lib/libtfc_runtime.a, in the build tree and installed;
// ../lib/libtfc_runtime_x86-64-v3.a or _v4.a for a --cpu other than native).
//
// FILE is a .tf model file (parsed by compiler/frontend) or a .mlir file in
// the tf dialect (parsed and verified); both go through the same pipeline.
// As in the Toy tutorial's toyc, `--emit` is one ordered list of stages and
// a stage's passes run when `emit >= Stage`: a new stage is one enum value
// plus one `if` in buildPipeline.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Registration.h"
#include "compiler/frontend/Diagnostics.h"
#include "compiler/frontend/Parser.h"
#include "compiler/lowering/Backend.h"
#include "compiler/lowering/cpu/Pipeline.h"
#include "tools/tfc/Interpret.h"
#include "runtime/Abi.h"
#include "runtime/TrainBlock.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Program.h"
#include "llvm/Target/TargetMachine.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>

#ifndef TFC_VERSION
#define TFC_VERSION "unknown"
#endif
// The CPUs the portable runtimes' kernels are built for, oldest first, comma
// separated (a --cpu other than native links one; runtime/cpu/CMakeLists.txt).
#ifndef TFC_PORTABLE_CPUS
#define TFC_PORTABLE_CPUS ""
#endif

namespace cl = llvm::cl;
using namespace mlir;

static cl::OptionCategory tfcCategory("tfc options");
static cl::SubCommand compileCommand(
    "compile", "Compile a .tf model file (or a .mlir file in the tf dialect)");
static cl::SubCommand interpretCommand(
    "interpret", "Run one entry of a model through the reference interpreter in double "
                 "precision, on the compiled binary's `run` feeds (the oracle)");
static cl::SubCommand builtinsCommand(
    "builtins", "Print the reference of the .tf language's built-in functions and train "
                "block names, in Markdown (build/docs/Builtins.md)");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.tf | file.mlir>"),
                                      cl::sub(compileCommand), cl::sub(interpretCommand),
                                      cl::cat(tfcCategory));
static cl::opt<std::string> entryName(cl::Positional, cl::Required,
                                      cl::desc("<entry: predict, train_step, grad_step, ...>"),
                                      cl::sub(interpretCommand), cl::cat(tfcCategory));
static cl::opt<std::string> paramsFile(
    "params", cl::desc("The parameters, a safetensors file (e.g. the binary's init --out)"),
    cl::value_desc("P.safetensors"), cl::sub(interpretCommand), cl::cat(tfcCategory));
static cl::list<std::string> feedFiles(
    "feed", cl::desc("An argument that is not a parameter, as the binary's run takes it"),
    cl::value_desc("KIND:NAME=FILE.npy"), cl::sub(interpretCommand), cl::cat(tfcCategory));
static cl::opt<std::string> resultDir(
    "output-dir", cl::desc("Where the results go, one KIND.NAME.npy each (f32 ones as float64)"),
    cl::value_desc("DIR"), cl::Required, cl::sub(interpretCommand), cl::cat(tfcCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output file ('-': stdout; default: "
                                                    "stdout for IR, the model's name for "
                                                    "an executable, NAME.o for an object)"),
                                       cl::value_desc("file"),
                                       cl::sub(compileCommand), cl::sub(builtinsCommand),
                                       cl::cat(tfcCategory));

/// The stages of the pipeline, in order; `--emit=X` runs every stage up to X.
enum Stage {
  EmitMLIR,    // the tf dialect, as the front end built it
  EmitGrad,    // after tf-autodiff: the whole train step (forward, backward, optimizer)
  EmitFused,   // entry functions, their ops grouped into tf.fusion regions (tf-fuse)
  EmitLinalg,  // entry functions; linalg/tensor/arith/math on tensors
  EmitBuffers, // bufferized: GEMM calls, the memory plan, the entries' C ABI
  EmitGpu,     // cuda: every loop nest a kernel, outlined; the entries launch them
  EmitPtx,     // cuda: the kernels' PTX
  EmitLLVM,    // LLVM IR after LLVM's O3 for the host CPU
  EmitObj,     // an object file
  EmitExe,     // an executable linked with the runtime (the default)
};
static cl::opt<Stage> emit(
    "emit", cl::desc("The stage to stop after and emit (default: exe)"),
    cl::values(clEnumValN(EmitMLIR, "mlir", "the tf dialect, as parsed"),
               clEnumValN(EmitGrad, "grad", "after autodiff: the train step, all in tf ops"),
               clEnumValN(EmitFused, "fused",
                          "the entry functions after tf-fuse: tf.fusion regions"),
               clEnumValN(EmitLinalg, "linalg", "linalg on tensors (tf-lower-to-linalg)"),
               clEnumValN(EmitBuffers, "buffers",
                          "on buffers, with the memory plan (cpu: and the entries' C ABI)"),
               clEnumValN(EmitGpu, "gpu",
                          "--target=cuda: the kernels (gpu.func) and the entries' launches"),
               clEnumValN(EmitPtx, "ptx", "--target=cuda: the kernels' PTX"),
               clEnumValN(EmitLLVM, "llvm", "LLVM IR of the host code, optimised for the CPU (--cpu)"),
               clEnumValN(EmitObj, "obj", "an object file for the CPU (--cpu)"),
               clEnumValN(EmitExe, "exe", "a native executable (the runtime linked in)")),
    cl::init(EmitExe), cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<std::string> target(
    "target", cl::desc("What to compile for: cpu (the default) or cuda (compiler/lowering/Backend.h)"),
    cl::value_desc("NAME"), cl::init("cpu"), cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("--target=cuda: the CUDA toolkit (ptxas, fatbinary, libdevice; default: $CUDA_HOME, "
             "else /usr/local/cuda)"),
    cl::value_desc("DIR"), cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<std::string> cudaImage(
    "cuda-image",
    cl::desc("--target=cuda: how the kernels ship: fatbin (SASS for sm_80 and sm_90 and PTX for "
             "newer GPUs, the default) or ptx (compiled by the driver when the model starts)"),
    cl::value_desc("fatbin|ptx"), cl::init("fatbin"), cl::sub(compileCommand),
    cl::cat(tfcCategory));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("The GEMMs' precision: fp32 (the default: everything in full FP32), tf32 or bf16 "
             "(--target=cuda: cuBLASLt may use TF32, or bf16, tensor cores for the fp32 GEMMs, "
             "bf16 reading bf16 copies of large GEMMs' operands (--bf16-operands); every other "
             "kernel stays fp32, and every stored tensor but those only the copies' GEMMs read "
             "or a ReLU's gradient tests (--no-bf16-activations); docs/cuda.md)"),
    cl::value_desc("fp32|tf32|bf16"), cl::init("fp32"), cl::sub(compileCommand),
    cl::cat(tfcCategory));
static cl::opt<std::string> bf16Operands(
    "bf16-operands",
    cl::desc("Which GEMMs read their A and B from bf16 copies made before them (twice the "
             "tensor-core rate of fp32 ones): large (--precision bf16's default: products of "
             "at least 2^28 multiply-adds), all, or none (every other precision's). "
             "--target=cuda-emulated takes large and all too, rounding as the GPU would"),
    cl::value_desc("large|all|none"), cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<bool> bf16KeepActivationCopies(
    "bf16-keep-activation-copies",
    cl::desc("cuda: with --bf16-operands, every activation's bf16 copy made for a forward "
             "GEMM is kept for the backward's weight gradient instead of made again; by "
             "default only where nothing else reads the activation after that product (less "
             "traffic; more memory at the step's peak where the activation is read in fp32)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<bool> noBf16Activations(
    "no-bf16-activations",
    cl::desc("cuda: with --bf16-operands, keep each activation in fp32 beside the bf16 copy its "
             "producer writes, even where every later reader copies it again or only compares "
             "it with zero (a ReLU's gradient); by default it is kept as the copy alone"),
    cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<bool> noBf16AttentionOutputs(
    "no-bf16-attention-outputs",
    cl::desc("cuda: with --bf16-operands, the attention kernels write fp32 outputs alone and "
             "loop nests copy them; by default the forward writes its output's bf16 copy "
             "beside it and the backward its gradients as bf16 alone where only copies read "
             "them (the same bits)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<bool> noBf16GemmResults(
    "no-bf16-gemm-results",
    cl::desc("cuda: with --bf16-operands, every product is stored in fp32; by default one of "
             "bf16 operands without an epilogue that only loop nests read (the FFN's first "
             "product and its activation's gradient) is stored in bf16 by cuBLASLt, half the "
             "bytes, and the nests read it widened"),
    cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<bool> noBf16AttentionInputs(
    "no-bf16-attention-inputs",
    cl::desc("cuda: with --bf16-operands, attention reads f32 q, k, v and dO; by default a "
             "QKV projection that only attention reads is stored in bf16 by cuBLASLt (its bias "
             "a bf16 copy), and so is the out projection's input gradient, the backward's dO, "
             "and the tensor-core kernels read the bits, half the bytes"),
    cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<std::string> cpuName(
    "cpu",
    cl::desc("The CPU to compile for: native (this machine's, the default), x86-64-v3 (any "
             "x86-64 CPU with AVX2 and FMA: Haswell, Zen and later), x86-64-v4 (AVX-512), or "
             "one of LLVM's CPU names (znver4, skylake-avx512, sapphirerapids, ...). A binary "
             "for another CPU than native links a portable runtime (kernels for x86-64-v3, or "
             "x86-64-v4 when the CPU has AVX-512); one started on a CPU without what it needs "
             "says so and exits 1"),
    cl::value_desc("NAME"), cl::init("native"), cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<bool> verbose("v", cl::desc("Say what each stage did (entries, peak memory, "
                                           "the time of each phase)"),
                             cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> passTiming("pass-timing",
                                cl::desc("Print the time of every MLIR pass (after the run)"),
                                cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> verifyEach("verify-each",
                                cl::desc("Verify the IR after every pass, not only after the "
                                         "last (slower; finds the pass that broke it)"),
                                cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noFuse("no-fuse",
                            cl::desc("Skip tf-fuse: every op its own loop nest (to rule "
                                     "fusion in or out when chasing a problem)"),
                            cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noGemmEpilogues(
    "no-gemm-epilogues",
    cl::desc("Keep every GEMM's elementwise consumers in a loop of their own instead of "
             "running them on the GEMM's rows as it finishes them (same results); for "
             "--target=cuda also every bias gradient (no cuBLASLt epilogues)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noFusedCrossEntropy(
    "no-fused-cross-entropy",
    cl::desc("cuda: compute a train step's cross-entropy loss and its gradient in two "
             "kernel calls, each reading the logits, instead of one (same results)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noHorizontal(
    "no-horizontal-fusion",
    cl::desc("Update each parameter in a loop of its own instead of all of them in one "
             "pass (same results)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noMergeLaunches(
    "no-merge-launches",
    cl::desc("cuda: launch every loop nest as a kernel of its own instead of running "
             "adjacent independent ones as one launch (same results)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noLaunchTails(
    "no-launch-tails",
    cl::desc("cuda: launch small kernels after a launch on their own instead of as its tail, "
             "run by its last block to finish (same results)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noAttentionDs(
    "no-attention-ds",
    cl::desc("cuda: no room for an attention backward's dS in the planned memory (less "
             "memory; its dq then recomputes the scores)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noLayerNormDropout(
    "no-layer-norm-dropout",
    cl::desc("cuda: a post-norm layer's dropout gradient in a loop nest after the layer norm "
             "backward's call instead of stored by its kernel (same results)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noLayerNormResidual(
    "no-layer-norm-residual",
    cl::desc("cuda: a post-norm layer's residual sum and its dropout in a loop nest after the "
             "GEMM instead of made by the layer norm's kernel (same results)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noThreadCoarsening(
    "no-thread-coarsening",
    cl::desc("cuda: a thread of a long elementwise kernel computes one element instead of 4 "
             "with 16-byte loads and stores (same results)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noUpdatesInPlace(
    "no-updates-in-place",
    cl::desc("cuda: a train step writes its new parameters and optimizer state into spare "
             "buffers that the runtime swaps with the old ones (twice the memory for them) "
             "instead of over the old ones (same results)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noGraphDependencies(
    "no-graph-dependencies",
    cl::desc("cuda: launches and calls do not tell the runtime which earlier ones they wait "
             "for, so a captured step is always one chain (TFC_GRAPH_DEPENDENCIES=1 lets "
             "independent ones run at once; docs/cuda.md)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<int64_t> graphWindow(
    "graph-window",
    cl::desc("cuda: how many ops apart two independent launches or calls may still run at "
             "once (the memory plan shares no bytes between them; more overlap, more "
             "memory; 0: the plan's program order alone; default 6)"),
    cl::init(6), cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> graphOrderCheck(
    "graph-order-check",
    cl::desc("cuda-emulated, a test: run each entry's launches and calls in another order "
             "their dependencies allow (the latest ready first); results must not change"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> persistentKernels(
    "persistent-kernels",
    cl::desc("cuda: run each entry as one persistent kernel, its phases (every GEMM and "
             "layer, in generated code: no cuBLASLt, no hand-written kernels) separated by "
             "grid-wide barriers; one launch a step, for models whose step launches bound "
             "(docs/cuda.md)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noWinograd(
    "no-winograd",
    cl::desc("Run convolutions of 5 taps and their weight gradients as GEMMs over their "
             "windows instead of by Winograd's minimal filtering (2.5x the multiply-adds; "
             "the direct sum's rounding)"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<bool> noRuntimeKernels(
    "no-runtime-kernels",
    cl::desc("Decompose attention and layer norm and compute dropout masks in generated "
             "code instead of calling the runtime's kernels for them (GEMMs still call it); "
             "for comparing the two"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<std::string> dumpDir(
    "dump-ir", cl::desc("Write the IR after every stage and pass to DIR, one numbered file each"),
    cl::value_desc("DIR"), cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<int64_t> batchSize(
    "batch", cl::desc("Batch size (default: the train block's, else 1)"),
    cl::value_desc("N"), cl::init(0), cl::sub(compileCommand), cl::sub(interpretCommand), cl::cat(tfcCategory));
static cl::opt<std::string> modelName(
    "model", cl::desc("The model of the file to compile (default: the first)"),
    cl::value_desc("NAME"), cl::sub(compileCommand), cl::sub(interpretCommand), cl::cat(tfcCategory));
static cl::opt<unsigned> jobs("j",
                              cl::desc("Threads for LLVM's optimisation and code generation "
                                       "(default: the CPUs this process may run on)"),
                              cl::value_desc("N"), cl::init(0), cl::sub(compileCommand),
                              cl::cat(tfcCategory));
static cl::opt<bool> attentionMaps(
    "attention-maps", cl::desc("Return every attention layer's weights as results"),
    cl::sub(compileCommand), cl::sub(interpretCommand), cl::cat(tfcCategory));

namespace {

const char *argv0_ = "tfc";

/// Writes DIR/NN-NAME.mlir: first the front end's module, then the module
/// after each pass (PassManager IR printing with a file per pass).
class IRDumps : public PassManager::IRPrinterConfig {
public:
  explicit IRDumps(std::string dir)
      : IRPrinterConfig(/*printModuleScope=*/true), dir_(std::move(dir)) {}

  LogicalResult create() {
    if (std::error_code ec = llvm::sys::fs::create_directories(dir_)) {
      llvm::errs() << "tfc: error: cannot create '" << tfc::escapeForTerminal(dir_)
                   << "': " << ec.message() << "\n";
      return failure();
    }
    return success();
  }

  LogicalResult dumpStage(StringRef name, Operation *op) {
    return write(name, [&](raw_ostream &os) { op->print(os); });
  }

  void printAfterIfEnabled(Pass *pass, Operation *, PrintCallbackFn print) override {
    (void)write(pass->getArgument().empty() ? pass->getName() : pass->getArgument(),
                print);
  }

private:
  LogicalResult write(StringRef name, llvm::function_ref<void(raw_ostream &)> print) {
    llvm::SmallString<128> path(dir_);
    llvm::sys::path::append(path, llvm::formatv("{0:d2}-{1}.mlir", index_++, name).str());
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      llvm::errs() << "tfc: error: cannot write '" << tfc::escapeForTerminal(path)
                   << "': " << ec.message() << "\n";
      return failure();
    }
    print(os);
    return success();
  }

  std::string dir_;
  int index_ = 0;
};

/// The passes of every stage up to `emit` (the MLIR part of the pipeline):
/// the target-neutral stages, then `backend`'s.
void buildPipeline(PassManager &pm, const tfc::Backend &backend,
                   const tfc::CodegenOptions &options) {
  if (emit >= EmitGrad)
    tfc::addAutodiffPasses(pm, /*splitStep=*/backend.dataParallel);
  if (emit >= EmitFused)
    tfc::addFusionPasses(pm, /*fuse=*/!noFuse, /*gemmEpilogues=*/!noGemmEpilogues,
                         /*horizontal=*/!noHorizontal, /*decompose=*/noRuntimeKernels || persistentKernels,
                         /*crossEntropyGradKernel=*/backend.crossEntropyGradKernel);
  if (emit >= EmitLinalg && noRuntimeKernels)
    tfc::addLinalgPassesWithoutKernels(pm);
  else if (emit >= EmitLinalg)
    backend.addLinalgPasses(pm, options);
  if (emit >= EmitBuffers)
    backend.addBufferPasses(pm, options);
  if (emit >= EmitGpu && backend.addKernelPasses)
    backend.addKernelPasses(pm, options);
  if (emit >= EmitPtx && backend.addPtxPasses)
    backend.addPtxPasses(pm, options);
  if (emit >= EmitLLVM)
    backend.addLLVMDialectPasses(pm, options);
}

/// The runtime library beside this executable: BIN/../lib/libtfc_runtime.a,
/// its kernels built for this machine's CPU (--cpu=native), or
/// BIN/../lib/libtfc_runtime_R.a, for any CPU of level R (x86-64-v3, ...).
std::string findRuntimeLibrary(const char *argv0, const std::string &runtime) {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(path, "lib", "lib" + runtime + ".a");
  return std::string(path);
}

/// Links `object` with the runtime into `output` with the system's C++
/// compiler driver (it knows the platform's crt files and libstdc++).
bool linkExecutable(ArrayRef<std::string> objects, StringRef output, const char *argv0,
                    const std::string &archive) {
  std::string runtime = findRuntimeLibrary(argv0, archive);
  if (!llvm::sys::fs::exists(runtime)) {
    llvm::errs() << "tfc: error: the runtime library is missing: '" << runtime << "' (build the "
                 << archive << " target, or reinstall"
                 << (archive == "tfc_runtime_cuda"
                         ? "; tfc builds it only where the CUDA toolkit's headers were found "
                           "when tfc itself was built: install the toolkit and rebuild tfc"
                         : "")
                 << ")\n";
    return false;
  }
  const char *cxx = std::getenv("CXX");
  auto driver = llvm::sys::findProgramByName(cxx && *cxx ? cxx : "c++");
  if (!driver) {
    llvm::errs() << "tfc: error: no C++ compiler driver to link with ('c++' not found; "
                    "set CXX)\n";
    return false;
  }
  SmallVector<StringRef> args = {*driver};
  // lld links a model in a third of the time of the default linker.
  if (llvm::sys::findProgramByName("ld.lld"))
    args.push_back("-fuse-ld=lld");
  args.append(objects.begin(), objects.end());
  // -ldl: the CUDA runtime loads the driver and cuBLASLt itself (none is a
  // link-time dependency: the binary starts on a machine without them).
  args.append({runtime, "-o", output, "-lpthread", "-lm", "-ldl"});
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    llvm::errs() << "tfc: error: linking '" << tfc::escapeForTerminal(output) << "' failed"
                 << (message.empty() ? "" : ": " + tfc::escapeForTerminal(message)) << "\n";
    return false;
  }
  return true;
}

/// Prints each entry's planned arena (the peak bytes of its buffers), read
/// back from the manifest the pipeline embedded.
void reportEntries(ModuleOp module) {
  auto global = module.lookupSymbol<LLVM::GlobalOp>(tfc::abi::kManifestSymbol);
  auto value = global ? dyn_cast_or_null<StringAttr>(global.getValueOrNull()) : StringAttr();
  if (!value)
    return;
  auto manifest = llvm::json::parse(value.getValue().drop_back());
  if (!manifest) {
    llvm::consumeError(manifest.takeError());
    return;
  }
  if (auto *entries = manifest->getAsObject()->getArray(tfc::abi::key::kEntries))
    for (const llvm::json::Value &entry : *entries) {
      const llvm::json::Object *e = entry.getAsObject();
      llvm::errs() << "tfc: entry '" << e->getString(tfc::abi::key::kName).value_or("?")
                   << "': peak memory " << e->getInteger(tfc::abi::key::kArenaBytes).value_or(0)
                   << " bytes of intermediate buffers\n";
    }
}

OwningOpRef<ModuleOp> loadModule(llvm::SourceMgr &sourceMgr, MLIRContext &context) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef filename = buffer->getBufferIdentifier();
  if (filename.ends_with(".mlir")) {
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (module && failed(verify(*module)))
      return nullptr;
    return module;
  }
  tfc::FrontendOptions options;
  options.model = modelName;
  options.batch = batchSize;
  options.recordAttention = attentionMaps;
  return tfc::parseTfSource(buffer->getBuffer(), filename, context, options).module;
}

/// Wall time of the compiler's phases, reported by -v.
class PhaseClock {
public:
  void lap(const char *phase) {
    auto now = std::chrono::steady_clock::now();
    laps_.push_back({phase, std::chrono::duration<double>(now - last_).count()});
    last_ = now;
  }
  void report() const {
    if (!verbose)
      return;
    llvm::errs() << "tfc: time:";
    double total = 0;
    for (const auto &[phase, seconds] : laps_) {
      llvm::errs() << llvm::formatv(" {0} {1:f2} s,", phase, seconds);
      total += seconds;
    }
    llvm::errs() << llvm::formatv(" total {0:f2} s\n", total);
  }

private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<std::pair<const char *, double>> laps_;
};

/// The exit status of a command line that does not parse (1: any other error),
/// as in the compiled binaries (README, "Exit codes").
constexpr int kUsageError = 2;

/// The input file and the context a command parses it in, every dialect
/// loaded. Diagnostics with a source line go through the SourceMgr to
/// tfc::printDiagnostic: bytes that are not printable escaped, long lines
/// cut around the caret. The few the handler prints itself (a note at the
/// same location as the last, a location not in the SourceMgr) go through
/// TerminalSafeStream, which escapes them too.
class InputSession {
public:
  InputSession() : context_(allDialects()) { context_.loadAllAvailableDialects(); }

  /// Opens `inputFile`: false, having said why, when it cannot be read.
  bool open() {
    std::string errorMessage;
    std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFile, &errorMessage);
    if (!input) {
      llvm::errs() << "tfc: error: " << tfc::escapeForTerminal(errorMessage) << "\n";
      return false;
    }
    sourceMgr_.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    tfc::installDiagnosticPrinter(sourceMgr_, llvm::errs());
    diagnostics_.emplace(sourceMgr_, &context_, safeErrs_);
    return true;
  }
  llvm::SourceMgr &sourceMgr() { return sourceMgr_; }
  MLIRContext &context() { return context_; }

private:
  static DialectRegistry allDialects() {
    DialectRegistry registry;
    tfc::registerAllDialects(registry);
    return registry;
  }

  llvm::SourceMgr sourceMgr_;
  MLIRContext context_;
  tfc::TerminalSafeStream safeErrs_{llvm::errs()};
  std::optional<SourceMgrDiagnosticHandler> diagnostics_;
};

/// `tfc interpret FILE ENTRY --params P --feed KIND:NAME=FILE.npy ...
/// --output-dir DIR`: the entry through the reference interpreter.
int interpretCommandMain() {
  if (batchSize.getNumOccurrences() && batchSize < 1) {
    llvm::errs() << "tfc: error: --batch must be positive, got " << batchSize << "\n";
    return kUsageError;
  }
  InputSession input;
  if (!input.open())
    return 1;
  OwningOpRef<ModuleOp> module = loadModule(input.sourceMgr(), input.context());
  if (!module || failed(tfc::buildEntries(*module)))
    return 1;
  return tfc::interpretEntry(*module, {entryName, paramsFile, feedFiles, resultDir});
}

int compile() {
  PhaseClock clock;
  const tfc::Backend *backend = tfc::findBackend(target);
  if (!backend) {
    std::string names;
    for (const tfc::Backend &b : tfc::backends())
      names += (names.empty() ? "" : ", ") + b.name.str();
    llvm::errs() << "tfc: error: unknown --target=" << tfc::escapeForTerminal(target)
                 << " (known: " << names << ")\n";
    return kUsageError;
  }
  if (!backend->unavailable.empty()) {
    llvm::errs() << "tfc: error: --target=" << backend->name << ": " << backend->unavailable
                 << "\n";
    return 1;
  }
  if ((emit == EmitGpu || emit == EmitPtx) && !backend->addKernelPasses) {
    llvm::errs() << "tfc: error: --emit=" << (emit == EmitGpu ? "gpu" : "ptx")
                 << " is a stage of --target=cuda, not of --target=" << backend->name << "\n";
    return kUsageError;
  }
  // --precision: TF32 and bf16 exist only in the GPU's cuBLASLt
  // (cuda-emulated runs the CPU's fp32 sgemm, and its purpose, parity with
  // the CPU build, would be lost to their rounding).
  if (precision != "fp32" && precision != "tf32" && precision != "bf16") {
    llvm::errs() << "tfc: error: --precision must be fp32, tf32 or bf16, got '"
                 << tfc::escapeForTerminal(precision) << "'\n";
    return kUsageError;
  }
  if (precision != "fp32" && !backend->addKernelPasses) {
    llvm::errs() << "tfc: error: " << (precision == "tf32" ? "TF32" : "bf16")
                 << " is a GPU precision: --precision " << precision << " needs --target=cuda"
                 << (backend->name == "cuda-emulated"
                         ? std::string(" (--target=cuda-emulated runs the CPU's fp32 GEMMs") +
                               (precision == "bf16" ? "; --bf16-operands=all rounds their "
                                                      "operands to bf16 as the GPU does)"
                                                    : ")")
                         : std::string())
                 << "\n";
    return kUsageError;
  }
  // --bf16-operands: large for bf16 on the GPU, unless told; cuda-emulated
  // rounds the copies as the GPU does (and multiplies them in fp32, exactly).
  const bool bf16OperandsGiven = bf16Operands.getNumOccurrences() > 0;
  std::string bf16OperandsChoice = bf16OperandsGiven ? std::string(bf16Operands)
                                   : precision == "bf16" && backend->addKernelPasses ? "large"
                                                                                     : "none";
  if (bf16OperandsChoice != "large" && bf16OperandsChoice != "all" &&
      bf16OperandsChoice != "none") {
    llvm::errs() << "tfc: error: --bf16-operands must be large, all or none, got '"
                 << tfc::escapeForTerminal(bf16OperandsChoice) << "'\n";
    return kUsageError;
  }
  if (bf16OperandsChoice != "none" && !backend->gpuMapping) {
    llvm::errs() << "tfc: error: --bf16-operands=" << bf16OperandsChoice
                 << " is for the GPU's GEMMs: it needs --target=cuda (or cuda-emulated)\n";
    return kUsageError;
  }
  if (bf16OperandsChoice != "none" && backend->addKernelPasses && precision != "bf16") {
    llvm::errs() << "tfc: error: --bf16-operands=" << bf16OperandsChoice
                 << " rounds the GEMMs' operands to bf16: it needs --precision bf16\n";
    return kUsageError;
  }
  if (bf16KeepActivationCopies && bf16OperandsChoice == "none") {
    llvm::errs() << "tfc: error: --bf16-keep-activation-copies keeps the bf16 copies of "
                    "--bf16-operands: it needs --precision bf16 (or --bf16-operands=large|all "
                    "on cuda-emulated)\n";
    return kUsageError;
  }
  if (noBf16Activations && bf16OperandsChoice == "none") {
    llvm::errs() << "tfc: error: --no-bf16-activations keeps fp32 activations beside the bf16 "
                    "copies of --bf16-operands: it needs --precision bf16 (or "
                    "--bf16-operands=large|all on cuda-emulated)\n";
    return kUsageError;
  }
  if (noBf16AttentionOutputs && bf16OperandsChoice == "none") {
    llvm::errs() << "tfc: error: --no-bf16-attention-outputs leaves the attention outputs' bf16 "
                    "copies of --bf16-operands to loop nests: it needs --precision bf16 (or "
                    "--bf16-operands=large|all on cuda-emulated)\n";
    return kUsageError;
  }
  if (noBf16AttentionInputs && bf16OperandsChoice == "none") {
    llvm::errs() << "tfc: error: --no-bf16-attention-inputs keeps the q, k, v and dO that "
                    "--bf16-operands' projections store in fp32: it needs --precision bf16 "
                    "(or --bf16-operands=large|all on cuda-emulated)\n";
    return kUsageError;
  }
  if (noBf16GemmResults && bf16OperandsChoice == "none") {
    llvm::errs() << "tfc: error: --no-bf16-gemm-results keeps the products of --bf16-operands' "
                    "copies in fp32: it needs --precision bf16 (or --bf16-operands=large|all on "
                    "cuda-emulated)\n";
    return kUsageError;
  }
  if (bf16OperandsChoice != "none" && persistentKernels) {
    llvm::errs() << "tfc: error: --persistent-kernels computes every GEMM in generated fp32 "
                    "code (no cuBLASLt): --bf16-operands="
                 << bf16OperandsChoice << " needs the default, graph-replayed step\n";
    return kUsageError;
  }
  if (graphWindow < 0) {
    llvm::errs() << "tfc: error: --graph-window must be 0 or more, got " << graphWindow << "\n";
    return kUsageError;
  }
  if (graphOrderCheck && backend->name != "cuda-emulated") {
    llvm::errs() << "tfc: error: --graph-order-check runs the launches in another order on "
                    "the CPU: it needs --target=cuda-emulated\n";
    return kUsageError;
  }
  if (persistentKernels && !backend->gpuMapping) {
    llvm::errs() << "tfc: error: --persistent-kernels is a GPU mode: it needs --target=cuda "
                    "(or cuda-emulated)\n";
    return kUsageError;
  }
  if (persistentKernels && precision != "fp32") {
    llvm::errs() << "tfc: error: --persistent-kernels computes every GEMM in generated fp32 "
                    "code (no cuBLASLt): --precision "
                 << precision << " needs the default, graph-replayed step\n";
    return kUsageError;
  }
  tfc::CodegenOptions codegen;
  codegen.winograd = !noWinograd;
  codegen.cuda.persistent = persistentKernels;
  codegen.cuda.precision = precision;
  codegen.cuda.bf16Operands = bf16OperandsChoice;
  codegen.cuda.bf16KeepActivationCopies = bf16KeepActivationCopies;
  codegen.cuda.bf16Activations = !noBf16Activations;
  codegen.cuda.bf16AttentionOutputs = !noBf16AttentionOutputs;
  codegen.cuda.bf16GemmResults = !noBf16GemmResults;
  codegen.cuda.bf16AttentionInputs = !noBf16AttentionInputs;
  codegen.cuda.mergeLaunches = !noMergeLaunches;
  codegen.cuda.gradientEpilogues = !noGemmEpilogues;
  codegen.cuda.fusedCrossEntropy = !noFusedCrossEntropy;
  codegen.cuda.coarsen = !noThreadCoarsening;
  codegen.cuda.updatesInPlace = !noUpdatesInPlace;
  codegen.cuda.graphDependencies = !noGraphDependencies;
  codegen.cuda.graphOrderCheck = graphOrderCheck;
  codegen.cuda.graphWindow = graphWindow;
  codegen.cuda.tails = !noLaunchTails;
  codegen.cuda.attentionDs = !noAttentionDs;
  codegen.cuda.layerNormDropout = !noLayerNormDropout;
  codegen.cuda.layerNormResidual = !noLayerNormResidual;
  if (backend->addKernelPasses) {
    if (cudaImage != "fatbin" && cudaImage != "ptx") {
      llvm::errs() << "tfc: error: --cuda-image must be fatbin or ptx, got '"
                   << tfc::escapeForTerminal(cudaImage) << "'\n";
      return kUsageError;
    }
    codegen.cuda.image = cudaImage;
    const char *home = std::getenv("CUDA_HOME");
    codegen.cuda.toolkit = !cudaPath.empty() ? std::string(cudaPath)
                           : home && *home   ? std::string(home)
                                             : std::string("/usr/local/cuda");
    std::string error;
    if (emit >= EmitPtx && !tfc::checkCudaToolkit(codegen.cuda.toolkit, error)) {
      llvm::errs() << "tfc: error: --target=cuda needs the CUDA toolkit: "
                   << tfc::escapeForTerminal(error) << " (install it, or name it with "
                   << "--cuda-path or CUDA_HOME)\n";
      return 1;
    }
  }
  if (batchSize.getNumOccurrences() && batchSize < 1) {
    llvm::errs() << "tfc: error: --batch must be positive, got " << batchSize << "\n";
    return kUsageError;
  }
  SmallVector<StringRef> runtimes;
  StringRef(TFC_PORTABLE_CPUS).split(runtimes, ',', -1, /*KeepEmpty=*/false);
  tfc::CpuTarget cpu;
  // A GPU model's host code only launches: by default it is portable, so a
  // binary compiled on one machine starts on the GPU machine's CPU.
  std::string cpuChoice = cpuName;
  if (backend->addKernelPasses && !cpuName.getNumOccurrences())
    cpuChoice = "x86-64-v3";
  if (std::string error; !tfc::resolveCpuTarget(cpuChoice, runtimes, cpu, error)) {
    llvm::errs() << "tfc: error: --cpu=" << tfc::escapeForTerminal(cpuChoice) << ": " << error
                 << "; use native (this machine's CPU), x86-64-v3 (any x86-64 CPU with AVX2 "
                    "and FMA), x86-64-v4 (AVX-512) or another CPU of LLVM's\n";
    // Those a binary can be compiled for (the portable runtimes' minimum).
    llvm::errs() << "tfc: note: --cpu takes native";
    for (const std::string &name : tfc::knownCpuNames())
      if (tfc::CpuTarget known; tfc::resolveCpuTarget(name, runtimes, known, error))
        llvm::errs() << " " << name;
    llvm::errs() << "\n";
    return kUsageError;
  }
  InputSession input;
  if (!input.open())
    return 1;
  llvm::SourceMgr &sourceMgr = input.sourceMgr();
  MLIRContext &context = input.context();
  std::string errorMessage;

  std::unique_ptr<IRDumps> dumps;
  if (!dumpDir.empty()) {
    dumps = std::make_unique<IRDumps>(dumpDir);
    if (failed(dumps->create()))
      return 1;
  }

  OwningOpRef<ModuleOp> module = loadModule(sourceMgr, context);
  if (!module)
    return 1;
  // What the manifest records of the CPU (tf-pack-entry-abi): the runtime
  // checks the one it runs on at start-up (runtime/CpuCheck.h).
  if (emit >= EmitBuffers) {
    Builder b(&context);
    SmallVector<Attribute> needs;
    for (const std::string &feature : cpu.needs)
      needs.push_back(b.getStringAttr(feature));
    (*module)->setAttr("tfc.cpu", b.getDictionaryAttr({
        b.getNamedAttr(tfc::abi::key::kName, b.getStringAttr(cpu.name)),
        b.getNamedAttr(tfc::abi::key::kCpuTarget, b.getStringAttr(cpu.cpu)),
        b.getNamedAttr(tfc::abi::key::kCpuFeatures, b.getArrayAttr(needs))}));
  }
  if (dumps && failed(dumps->dumpStage("mlir", *module)))
    return 1;

  PassManager pm(&context);
  buildPipeline(pm, *backend, codegen);
  // The IR is verified once, after the pipeline: verifying after every pass
  // took a third of the MLIR time. --verify-each finds the pass at fault.
  pm.enableVerifier(verifyEach);
  if (dumps && pm.size() > 0) {
    context.disableMultithreading();
    pm.enableIRPrinting(std::move(dumps));
  }
  if (passTiming)
    pm.enableTiming();
  if (pm.size() > 0 && failed(pm.run(*module)))
    return 1;
  if (!verifyEach && failed(verify(*module))) {
    llvm::errs() << "tfc: internal error: the pipeline produced invalid IR (--verify-each "
                    "names the pass; please report it)\n";
    return 1;
  }
  clock.lap("mlir");

  if (verbose && emit >= EmitLLVM)
    reportEntries(*module);
  // Text stages go to -o, or stdout.
  auto writeText = [&](llvm::function_ref<void(raw_ostream &)> print) {
    auto output = openOutputFile(outputFile.empty() ? std::string("-") : std::string(outputFile),
                                 &errorMessage);
    if (!output) {
      llvm::errs() << "tfc: error: " << tfc::escapeForTerminal(errorMessage) << "\n";
      return 1;
    }
    print(output->os());
    output->keep();
    return 0;
  };
  if (emit <= EmitGpu)
    return writeText([&](raw_ostream &os) { module->print(os); });
  if (emit == EmitPtx) {
    auto binary = module->lookupSymbol<gpu::BinaryOp>("tfc_kernels");
    auto object = binary && binary.getObjects().size() == 1
                      ? dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0])
                      : gpu::ObjectAttr();
    if (!object) {
      llvm::errs() << "tfc: error: the model has no kernels\n";
      return 1;
    }
    // (NVPTX ends the text with a NUL, which ptxas refuses in a file.)
    return writeText(
        [&](raw_ostream &os) { os << object.getObject().getValue().rtrim(StringRef("\0", 1)); });
  }

  std::unique_ptr<llvm::TargetMachine> machine = tfc::createTargetMachine(cpu, errorMessage);
  if (!machine) {
    llvm::errs() << "tfc: error: " << tfc::escapeForTerminal(errorMessage) << "\n";
    return 1;
  }
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      tfc::translateToLLVMIR(*module, llvmContext, *machine, errorMessage);
  if (!llvmModule) {
    llvm::errs() << "tfc: error: " << tfc::escapeForTerminal(errorMessage) << "\n";
    return 1;
  }
  std::string stem = llvm::sys::path::stem(inputFile).str();
  std::string exePath = outputFile.empty() ? stem : std::string(outputFile);
  if (emit == EmitExe && exePath == "-") {
    llvm::errs() << "tfc: error: an executable cannot go to stdout; use -o FILE or --emit\n";
    return 1;
  }
  // Optimised and compiled in parts on every core; --emit=llvm, --emit=obj
  // and --dump-ir's llvm-o3.ll take the parts' optimised IR joined into one
  // module, so they show the code the executable runs.
  clock.lap("translate");
  tfc::CompiledParts parts;
  parts.wantObjects = emit == EmitExe;
  parts.wantOptimizedIR = emit != EmitExe || !dumpDir.empty();
  unsigned threads = jobs ? jobs : llvm::hardware_concurrency().compute_thread_count();
  if (!tfc::compileInParts(*llvmModule, std::min(threads, 16u), parts, errorMessage, cpu)) {
    llvm::errs() << "tfc: error: " << tfc::escapeForTerminal(errorMessage) << "\n";
    return 1;
  }
  clock.lap(emit == EmitExe ? "llvm-opt+codegen" : "llvm-opt");
  if (parts.wantOptimizedIR) {
    // A context of its own: names of the translated module's types stay free.
    llvm::LLVMContext joinedContext;
    std::unique_ptr<llvm::Module> joined =
        tfc::joinOptimizedParts(parts, *llvmModule, joinedContext, emit == EmitObj, errorMessage);
    if (!joined) {
      llvm::errs() << "tfc: error: " << tfc::escapeForTerminal(errorMessage) << "\n";
      return 1;
    }
    if (!dumpDir.empty()) {
      llvm::SmallString<128> path(dumpDir);
      llvm::sys::path::append(path, "llvm-o3.ll");
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      if (!ec)
        joined->print(os, nullptr);
    }
    if (emit == EmitLLVM) {
      int status = writeText([&](raw_ostream &os) { joined->print(os, nullptr); });
      clock.lap("write");
      clock.report();
      return status;
    }
    if (emit == EmitObj) {
      std::string path = outputFile.empty() ? stem + ".o" : std::string(outputFile);
      auto output = openOutputFile(path, &errorMessage);
      if (!output || !tfc::emitObjectFile(*joined, *machine, output->os(), errorMessage)) {
        llvm::errs() << "tfc: error: " << tfc::escapeForTerminal(errorMessage) << "\n";
        return 1;
      }
      output->keep();
      clock.lap("codegen");
      clock.report();
      return 0;
    }
  }
  std::vector<llvm::SmallVector<char, 0>> &objects = parts.objects;

  // The objects as temporary files, linked with the runtime; the output
  // appears only when the link succeeded.
  std::vector<std::unique_ptr<llvm::FileRemover>> removers;
  SmallVector<std::string> objectPaths;
  for (const llvm::SmallVector<char, 0> &bytes : objects) {
    llvm::SmallString<128> object;
    int fd;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tfc-" + stem, "o", fd, object)) {
      llvm::errs() << "tfc: error: cannot create a temporary object file: " << ec.message()
                   << "\n";
      return 1;
    }
    removers.push_back(std::make_unique<llvm::FileRemover>(object));
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(bytes.data(), bytes.size());
    objectPaths.push_back(object.str().str());
  }
  // The CPU's kernels come in portable builds; the CUDA runtime has none.
  std::string archive = backend->runtime.str();
  if (!backend->addKernelPasses && !cpu.runtime.empty())
    archive += "_" + cpu.runtime;
  if (verbose)
    llvm::errs() << "tfc: code for " << (cpu.native() ? "this machine's CPU, " : "")
                 << cpu.cpu << "; linking " << findRuntimeLibrary(argv0_, archive) << "\n";
  if (!linkExecutable(objectPaths, exePath, argv0_, archive))
    return 1;
  clock.lap("link");
  clock.report();
  if (verbose)
    llvm::errs() << "tfc: wrote executable '" << exePath << "'\n";
  return 0;
}

//===----------------------------------------------------------------------===//
// tfc builtins: the reference, from the parser's table and TrainBlock.h
//===----------------------------------------------------------------------===//

/// Whether a default is a value as written (`true`, `-1`, `"post"`,
/// `normal(1.0)`) rather than words ("none", "the optimizer's rule").
bool isWrittenValue(StringRef text) {
  if (text.empty() || text.contains(' '))
    return false;
  return llvm::isDigit(text[0]) || text[0] == '-' || text[0] == '"' || text == "true" ||
         text == "false" || text.contains('(') ||
         llvm::is_contained({"zeros", "ones", "xavier", "kaiming"}, text);
}

/// A Markdown table cell: '|' would end it.
std::string cell(StringRef text) {
  std::string out;
  for (char c : text)
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

template <size_t N>
void printTrainCalls(raw_ostream &os, StringRef what, const tfc::train::CallKind (&kinds)[N]) {
  os << "| " << what << " | settings |\n|---|---|\n";
  for (const tfc::train::CallKind &k : kinds) {
    std::vector<std::string> settings = k.settingNames();
    os << "| `" << k.name.data() << "` | ";
    if (k.anySettings)
      os << "its own (docs/training.md)";
    else if (settings.empty())
      os << "none";
    else
      os << "`" << llvm::join(settings, "`, `") << "`";
    os << " |\n";
  }
  os << "\n";
}

void printBuiltinReference(raw_ostream &os) {
  std::vector<tfc::BuiltinDoc> docs = tfc::builtinReference();
  std::vector<StringRef> sections;
  for (const tfc::BuiltinDoc &d : docs)
    if (!llvm::is_contained(sections, d.section))
      sections.push_back(d.section);

  os << "# The built-in functions of the `.tf` language\n\n"
        "Generated by `tfc builtins` from the table the parser calls them through\n"
        "(`compiler/frontend/Parser.cpp`), so it lists exactly what the parser accepts;\n"
        "`docs/language.md` describes the language. Arguments go by position, in the\n"
        "order listed, or by name as `axis: -1` (a layer's `name:` only by name). In\n"
        "shapes, `...` is any leading dimensions. The examples use these inputs:\n\n```\n"
     << tfc::builtinExampleInputs() << "```\n\n";
  for (StringRef section : sections) {
    os << "- " << section << ":";
    for (const tfc::BuiltinDoc &d : docs)
      if (d.section == section)
        os << " [`" << d.name << "`](#" << d.name << ")";
    os << "\n";
  }
  os << "- [The train block](#the-train-block)\n";

  for (StringRef section : sections) {
    os << "\n## " << section << "\n";
    for (const tfc::BuiltinDoc &d : docs) {
      if (d.section != section)
        continue;
      os << "\n### " << d.name << "\n\n`" << d.name << "(";
      llvm::interleaveComma(d.args, os, [&](const tfc::BuiltinArgDoc &a) { os << a.name; });
      os << ")`: " << d.description << ".\n\n"
         << "- Result: " << d.shape << "\n"
         << "- Example: `" << d.example << "` is `" << d.exampleType << "`\n\n"
         << "| argument | kind | default | |\n|---|---|---|---|\n";
      for (const tfc::BuiltinArgDoc &a : d.args) {
        os << "| `" << a.name << "` | " << cell(a.kind) << " | ";
        if (a.required)
          os << "required";
        else if (isWrittenValue(a.defaultText))
          os << "`" << cell(a.defaultText) << "`";
        else
          os << cell(a.defaultText);
        os << " | " << cell(a.description) << " |\n";
      }
    }
    if (llvm::any_of(docs, [&](const tfc::BuiltinDoc &d) {
          return d.section == section && d.name == "normal";
        })) {
      os << "\n### Initialisers written bare\n\n"
            "`init: xavier`. fan_in and fan_out are PyTorch's: a shape [out, in, k...] has\n"
            "fan_in = in * k... and fan_out = out * k...\n\n"
            "| initialiser | draws |\n|---|---|\n";
      for (const auto &[name, draws] : tfc::bareInitialisers())
        os << "| `" << name << "` | " << cell(draws) << " |\n";
    }
  }

  namespace train = tfc::train;
  os << "\n## The train block\n\n"
        "`train MODEL { KEY value ... }`, described in docs/training.md. Its keys: `";
  std::vector<std::string> keys(std::begin(train::kTrainKeys), std::end(train::kTrainKeys));
  os << llvm::join(keys, "`, `") << "`.\n\n";
  printTrainCalls(os, "`optimizer`", train::kOptimizers);
  printTrainCalls(os, "`schedule`", train::kSchedules);
  printTrainCalls(os, "`data`", train::kDatasets);
}

int printBuiltins() {
  std::string errorMessage;
  auto output = openOutputFile(outputFile.empty() ? std::string("-") : std::string(outputFile),
                               &errorMessage);
  if (!output) {
    llvm::errs() << "tfc: error: " << tfc::escapeForTerminal(errorMessage) << "\n";
    return 1;
  }
  printBuiltinReference(output->os());
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  argv0_ = argv[0];
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tfc " << TFC_VERSION << " (LLVM/MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  cl::HideUnrelatedOptions(tfcCategory);
  cl::HideUnrelatedOptions(tfcCategory, compileCommand);
  cl::HideUnrelatedOptions(tfcCategory, builtinsCommand);
  cl::HideUnrelatedOptions(tfcCategory, interpretCommand);
  // With an error stream given, a command line that does not parse returns
  // false (the message printed) instead of exiting with 1.
  bool parsed = cl::ParseCommandLineOptions(
      argc, argv,
      "tfc: a static-graph compiler for transformer models\n\n"
      "  tfc compile model.tf --emit=mlir       the tf dialect of the model\n"
      "  tfc compile model.tf -o model          a native executable (run ./model --help)\n"
      "  tfc compile model.tf --cpu=x86-64-v3   an executable for any x86-64-v3 CPU (AVX2, FMA)\n"
      "  tfc compile model.tf --emit=grad       after autodiff: the whole train step\n"
      "  tfc compile model.tf --emit=linalg     after lowering to linalg on tensors\n"
      "  tfc compile model.tf --emit=buffers    bufferized, with the memory plan\n"
      "  tfc compile model.tf --emit=llvm       LLVM IR for this CPU (or --cpu's)\n"
      "  tfc interpret model.tf train_step --params P --feed KIND:NAME=F.npy ... --output-dir D\n"
      "                                         one entry in float64 (the reference interpreter)\n"
      "  tfc builtins                           the reference of the .tf built-ins (Markdown)\n",
      &llvm::errs());
  if (!parsed)
    return kUsageError;
  if (compileCommand)
    return compile();
  if (builtinsCommand)
    return printBuiltins();
  if (interpretCommand)
    return interpretCommandMain();
  llvm::errs() << "tfc: error: no command given (try 'tfc compile FILE', 'tfc builtins' or "
                  "'tfc --help')\n";
  return kUsageError;
}
