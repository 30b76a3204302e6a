//===- tfc.cpp - the tfc compiler driver ----------------------------------===//
//
//   tfc compile FILE [-o OUT] [--emit=STAGE] [--dump-ir=DIR] [--batch N]
//                    [--model NAME]
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
#include "compiler/frontend/Parser.h"

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
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#ifndef TFC_VERSION
#define TFC_VERSION "unknown"
#endif

namespace cl = llvm::cl;
using namespace mlir;

static cl::OptionCategory tfcCategory("tfc compile options");
static cl::SubCommand compileCommand(
    "compile", "Compile a .tf model file (or a .mlir file in the tf dialect)");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.tf | file.mlir>"),
                                      cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output file ('-': stdout)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::sub(compileCommand), cl::cat(tfcCategory));

/// The stages of the pipeline, in order; `--emit=X` runs every stage up to X.
enum Stage {
  EmitMLIR,   // the tf dialect, as the front end built it
  // EmitGrad and EmitFused (autodiff, fusion) will go here.
  EmitLinalg, // linalg/tensor/arith/math on tensors
  // Later stages append here: EmitLLVM, EmitObj.
};
static cl::opt<Stage> emit(
    "emit", cl::desc("The stage to stop after and emit"),
    cl::values(clEnumValN(EmitMLIR, "mlir", "the tf dialect, as parsed"),
               clEnumValN(EmitLinalg, "linalg", "linalg on tensors (tf-lower-to-linalg)")),
    cl::init(EmitMLIR), cl::sub(compileCommand), cl::cat(tfcCategory));

static cl::opt<std::string> dumpDir(
    "dump-ir", cl::desc("Write the IR after every stage and pass to DIR, one numbered file each"),
    cl::value_desc("DIR"), cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<int64_t> batchSize(
    "batch", cl::desc("Batch size (default: the train block's, else 1)"),
    cl::value_desc("N"), cl::init(0), cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<std::string> modelName(
    "model", cl::desc("The model of the file to compile (default: the first)"),
    cl::value_desc("NAME"), cl::sub(compileCommand), cl::cat(tfcCategory));
static cl::opt<bool> attentionMaps(
    "attention-maps", cl::desc("Return every attention layer's weights as results"),
    cl::sub(compileCommand), cl::cat(tfcCategory));

namespace {

/// Writes DIR/NN-NAME.mlir: first the front end's module, then the module
/// after each pass (PassManager IR printing with a file per pass).
class IRDumps : public PassManager::IRPrinterConfig {
public:
  explicit IRDumps(std::string dir)
      : IRPrinterConfig(/*printModuleScope=*/true), dir_(std::move(dir)) {}

  LogicalResult create() {
    if (std::error_code ec = llvm::sys::fs::create_directories(dir_)) {
      llvm::errs() << "tfc: error: cannot create '" << dir_ << "': " << ec.message() << "\n";
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
      llvm::errs() << "tfc: error: cannot write '" << path << "': " << ec.message() << "\n";
      return failure();
    }
    print(os);
    return success();
  }

  std::string dir_;
  int index_ = 0;
};

/// The passes of every stage up to `emit`.
void buildPipeline(PassManager &pm) {
  if (emit >= EmitLinalg) {
    pm.addPass(tfc::createTfLowerToLinalg());
    pm.addPass(createCanonicalizerPass());
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

int compile() {
  if (batchSize < 0) {
    llvm::errs() << "tfc: error: --batch must be positive, got " << batchSize << "\n";
    return 1;
  }
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFile, &errorMessage);
  if (!input) {
    llvm::errs() << "tfc: error: " << errorMessage << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());

  DialectRegistry registry;
  tfc::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  std::unique_ptr<IRDumps> dumps;
  if (!dumpDir.empty()) {
    dumps = std::make_unique<IRDumps>(dumpDir);
    if (failed(dumps->create()))
      return 1;
  }

  OwningOpRef<ModuleOp> module = loadModule(sourceMgr, context);
  if (!module)
    return 1;
  if (dumps && failed(dumps->dumpStage("mlir", *module)))
    return 1;

  PassManager pm(&context);
  buildPipeline(pm);
  if (dumps && pm.size() > 0) {
    context.disableMultithreading();
    pm.enableIRPrinting(std::move(dumps));
  }
  if (pm.size() > 0 && failed(pm.run(*module)))
    return 1;

  auto output = openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << "tfc: error: " << errorMessage << "\n";
    return 1;
  }
  switch (emit) {
  case EmitMLIR:
  case EmitLinalg:
    module->print(output->os());
    break;
  }
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tfc " << TFC_VERSION << " (LLVM/MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  cl::HideUnrelatedOptions(tfcCategory);
  cl::HideUnrelatedOptions(tfcCategory, compileCommand);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tfc: a static-graph compiler for transformer models\n\n"
      "  tfc compile model.tf --emit=mlir       the tf dialect of the model\n"
      "  tfc compile model.tf --emit=linalg     after lowering to linalg on tensors\n");
  if (compileCommand)
    return compile();
  llvm::errs() << "tfc: error: no command given (try 'tfc compile FILE' or 'tfc --help')\n";
  return 1;
}
