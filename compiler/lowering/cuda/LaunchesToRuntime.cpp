//===- LaunchesToRuntime.cpp - kernel launches call the CUDA runtime ------===//
//
// MLIR's own host lowering loads and unloads the module, creates a stream
// and synchronises on every launch, through wrappers Debian does not ship
// (CUDA.md §4). tfc's runtime loads the kernels once and captures an entry's
// launches as one CUDA graph, so each `gpu.launch_func` of an entry becomes
//
//   tfc_cuda_launch(kernel, gridX, gridY, gridZ, blockX, blockY, blockZ,
//                   sharedBytes, argc, args)
//
// with `args` the address of a stack array of 8-byte slots, one per kernel
// parameter: a buffer's aligned pointer (the bare-pointer convention: the
// kernel adds the static offset itself) or an index (its low 4 bytes are
// the kernel's 32-bit index). The kernels' module (gpu-module-to-binary's
// PTX) becomes `tfc_cuda_image`: the PTX itself (image=ptx), or a fatbin of
// SASS for each of `archs` and the PTX for newer GPUs (image=fatbin, by the
// toolkit's ptxas and fatbinary; the SASS of sm_90 and later from the PTX
// with tf-await-previous-kernel's markers made griddepcontrol waits); the
// module's `tfc.cuda` attribute records what the manifest says of it, the
// GEMMs' precision and the archs whose SASS waits (runtime/Abi.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/lowering/cuda/Pipeline.h"
#include "runtime/Abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

namespace tfc {
#define GEN_PASS_DEF_TFLAUNCHESTORUNTIME
#include "compiler/Passes.h.inc"
} // namespace tfc

using namespace mlir;
namespace abi = tfc::abi;

namespace {

constexpr llvm::StringLiteral kKernelPrefix = "tfc_k";

/// A temporary file removed when this goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  std::optional<llvm::FileRemover> remover;
  bool create(StringRef stem, StringRef suffix, std::string &error) {
    int fd;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(stem, suffix, fd, path)) {
      error = "cannot create a temporary file: " + ec.message();
      return false;
    }
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    remover.emplace(path);
    return true;
  }
};

/// Runs the toolkit's `tool` with `args`; false with `error` set (its
/// messages included) when it fails.
bool runTool(StringRef toolkit, StringRef tool, ArrayRef<std::string> args, std::string &error) {
  llvm::SmallString<128> program(toolkit);
  llvm::sys::path::append(program, "bin", tool);
  if (!llvm::sys::fs::can_execute(program)) {
    error = "the CUDA toolkit has no " + tool.str() + " ('" + program.str().str() +
            "'); set --cuda-path or CUDA_HOME";
    return false;
  }
  TempFile log;
  if (!log.create("tfc-" + tool.str(), "log", error))
    return false;
  SmallVector<StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<StringRef> redirects[] = {std::nullopt, log.path.str(), log.path.str()};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0, 0, &message);
  if (rc == 0)
    return true;
  error = tool.str() + " failed" + (message.empty() ? "" : " (" + message + ")");
  if (auto text = llvm::MemoryBuffer::getFile(log.path))
    error += ": " + (*text)->getBuffer().trim().str();
  return false;
}

/// The number of `arch` ("sm_90": 90), 0 for none.
unsigned archNumber(StringRef arch) {
  unsigned number = 0;
  return arch.consume_front("sm_") && !arch.getAsInteger(10, number) ? number : 0;
}

/// Writes `text` to a new temporary file.
bool writeTemp(TempFile &file, StringRef prefix, StringRef text, std::string &error) {
  if (!file.create(prefix, "ptx", error))
    return false;
  std::error_code ec;
  llvm::raw_fd_ostream os(file.path, ec);
  if (ec) {
    error = "cannot write '" + file.path.str().str() + "': " + ec.message();
    return false;
  }
  os << text;
  return true;
}

/// The fatbin of `ptx`: SASS for each of `archs`, and the PTX itself. The
/// SASS of sm_90 and later from the PTX with every kernel waiting for the
/// one before (ptxAwaitingPreviousKernel); those archs go in `awaiting`.
bool assembleFatbin(StringRef ptx, StringRef ptxArch, ArrayRef<std::string> archs,
                    StringRef toolkit, std::string &image, SmallVectorImpl<std::string> &awaiting,
                    std::string &error) {
  TempFile ptxFile, awaitingFile, fatbin;
  if (!writeTemp(ptxFile, "tfc-kernels", ptx, error) ||
      !fatbin.create("tfc-kernels", "fatbin", error))
    return false;
  const std::string awaitingPtx = tfc::ptxAwaitingPreviousKernel(ptx.str());
  if (!awaitingPtx.empty() && !writeTemp(awaitingFile, "tfc-kernels-sm90", awaitingPtx, error))
    return false;
  std::vector<TempFile> cubins(archs.size());
  std::vector<std::string> fatbinArgs = {"-64", "--create=" + fatbin.path.str().str()};
  for (auto [arch, cubin] : llvm::zip(archs, cubins)) {
    const bool waits = !awaitingPtx.empty() && archNumber(arch) >= 90;
    if (!cubin.create("tfc-kernels-" + arch, "cubin", error) ||
        !runTool(toolkit, "ptxas",
                 {"-arch=" + arch, "-O3", (waits ? awaitingFile : ptxFile).path.str().str(), "-o",
                  cubin.path.str().str()},
                 error))
      return false;
    if (waits)
      awaiting.push_back(arch);
    fatbinArgs.push_back("--image3=kind=elf,sm=" + arch.substr(3) + ",file=" +
                         cubin.path.str().str());
  }
  fatbinArgs.push_back("--image3=kind=ptx,sm=" + ptxArch.drop_front(3).str() + ",file=" +
                       ptxFile.path.str().str());
  if (!runTool(toolkit, "fatbinary", fatbinArgs, error))
    return false;
  auto bytes = llvm::MemoryBuffer::getFile(fatbin.path, /*IsText=*/false);
  if (!bytes) {
    error = "cannot read the fatbin: " + bytes.getError().message();
    return false;
  }
  image = (*bytes)->getBuffer().str();
  return true;
}

/// The aligned pointer of `buffer` as an index: the bare-pointer convention's
/// kernel parameter (the kernel adds the static offset of the buffer's type).
/// A memref.view moves the aligned pointer by its byte shift, which
/// expand-strided-metadata's fold of extract_aligned_pointer_as_index through
/// view-like ops drops (MLIR 19): the shift is added here, explicitly. Every
/// other view keeps its source's aligned pointer.
Value alignedPointer(OpBuilder &b, Location loc, Value buffer) {
  if (auto view = buffer.getDefiningOp<memref::ViewOp>())
    return b.create<arith::AddIOp>(loc, alignedPointer(b, loc, view.getSource()),
                                   view.getByteShift());
  if (auto viewLike = buffer.getDefiningOp<ViewLikeOpInterface>())
    if (isa<MemRefType>(viewLike.getViewSource().getType()))
      return alignedPointer(b, loc, viewLike.getViewSource());
  return b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
}

/// The kernel index of `name` ("tfc_k12": 12), as tf-merge-gpu-modules named it.
std::optional<unsigned> kernelIndex(StringRef name) {
  unsigned index;
  if (!name.consume_front(kKernelPrefix) || name.getAsInteger(10, index))
    return std::nullopt;
  return index;
}

struct TfLaunchesToRuntimePass : tfc::impl::TfLaunchesToRuntimeBase<TfLaunchesToRuntimePass> {
  using TfLaunchesToRuntimeBase::TfLaunchesToRuntimeBase;

  /// Replaces `launch` by a call of `callee` (tfc_cuda_launch, or
  /// tfc_cuda_launch_cooperative) through `slots`.
  LogicalResult lowerLaunch(gpu::LaunchFuncOp launch, func::FuncOp callee, Value slots) {
    std::optional<unsigned> index = kernelIndex(launch.getKernelName().getValue());
    if (!index)
      return launch.emitError("tf-launches-to-runtime: not a kernel of tf-merge-gpu-modules");
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    auto constant = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); };
    for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands())) {
      Value slot;
      if (isa<MemRefType>(operand.getType())) {
        slot = alignedPointer(b, loc, operand);
      } else if (operand.getType().isIndex()) {
        slot = operand;
      } else if (auto integer = dyn_cast<IntegerType>(operand.getType());
                 integer && integer.getWidth() <= 64) {
        slot = b.create<arith::IndexCastOp>(loc, b.getIndexType(), operand);
      } else {
        return launch.emitError("tf-launches-to-runtime: a kernel parameter of type ")
               << operand.getType() << " (only buffers and integers are passed)";
      }
      b.create<memref::StoreOp>(
          loc, b.create<arith::IndexCastOp>(loc, b.getI64Type(), slot), slots,
          ValueRange{constant(i)});
    }
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    Value shared = launch.getDynamicSharedMemorySize();
    SmallVector<Value> args = {constant(*index), grid.x, grid.y, grid.z, block.x, block.y, block.z};
    args.push_back(shared ? Value(b.create<arith::IndexCastOp>(loc, b.getIndexType(), shared))
                          : Value(constant(0)));
    args.push_back(constant(launch.getNumKernelOperands()));
    args.push_back(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, slots));
    b.create<func::CallOp>(loc, callee, args);
    launch.erase();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto binary = module.lookupSymbol<gpu::BinaryOp>("tfc_kernels");
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    if (!binary) {
      if (!launches.empty()) {
        module.emitError("tf-launches-to-runtime: no gpu.binary @tfc_kernels (run "
                         "tf-merge-gpu-modules and gpu-module-to-binary first)");
        signalPassFailure();
      }
      return;
    }
    auto object = binary.getObjects().size() == 1
                      ? dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0])
                      : gpu::ObjectAttr();
    if (!object || object.getFormat() != gpu::CompilationTarget::Assembly) {
      binary.emitError("tf-launches-to-runtime: expected one PTX object "
                       "(gpu-module-to-binary{format=isa})");
      return signalPassFailure();
    }
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto index = b.getIndexType();
    FunctionType type = b.getFunctionType(
        SmallVector<Type>(abi::arity(abi::RuntimeFunction::CudaLaunch), index), {});
    auto callee = b.create<func::FuncOp>(
        module.getLoc(), abi::symbol(abi::RuntimeFunction::CudaLaunch), type);
    callee.setPrivate();
    // Persistent kernels (tf-grid-sync marked their launches).
    func::FuncOp cooperativeCallee;
    if (llvm::any_of(launches, [](gpu::LaunchFuncOp l) { return l->hasAttr(tfc::kCooperativeAttr); })) {
      cooperativeCallee = b.create<func::FuncOp>(
          module.getLoc(), abi::symbol(abi::RuntimeFunction::CudaLaunchCooperative), type);
      cooperativeCallee.setPrivate();
    }

    // One slot array a function, as long as its longest launch needs.
    llvm::MapVector<func::FuncOp, SmallVector<gpu::LaunchFuncOp>> byFunction;
    unsigned kernels = 0;
    for (gpu::LaunchFuncOp launch : launches) {
      byFunction[launch->getParentOfType<func::FuncOp>()].push_back(launch);
      if (auto i = kernelIndex(launch.getKernelName().getValue()))
        kernels = std::max(kernels, *i + 1);
    }
    for (auto &[function, list] : byFunction) {
      int64_t most = 1;
      for (gpu::LaunchFuncOp launch : list)
        most = std::max<int64_t>(most, launch.getNumKernelOperands());
      OpBuilder at = OpBuilder::atBlockBegin(&function.getBody().front());
      Value slots = at.create<memref::AllocaOp>(module.getLoc(),
                                                MemRefType::get({most}, at.getI64Type()));
      for (gpu::LaunchFuncOp launch : list)
        if (failed(lowerLaunch(launch,
                               launch->hasAttr(tfc::kCooperativeAttr) ? cooperativeCallee : callee,
                               slots)))
          return signalPassFailure();
    }

    // The image, and what the manifest says of it.
    // NVPTX ends the text with a NUL, which ptxas refuses in a file.
    std::string ptx = object.getObject().getValue().rtrim(StringRef("\0", 1)).str();
    std::string image;
    SmallVector<std::string> archList, awaitingArchs;
    for (const std::string &arch : archs)
      archList.push_back(arch);
    if (imageFormat == "ptx") {
      image = ptx;
      image.push_back('\0');
      archList.clear();
    } else if (imageFormat == "fatbin") {
      std::string error;
      if (!assembleFatbin(ptx, ptxArch, archList, toolkit, image, awaitingArchs, error)) {
        module.emitError("tfc: ") << error;
        return signalPassFailure();
      }
    } else {
      module.emitError("tf-launches-to-runtime: image must be ptx or fatbin, got '")
          << imageFormat << "'";
      return signalPassFailure();
    }
    if (precision != abi::key::kPrecisionFp32 && precision != abi::key::kPrecisionTf32 &&
        precision != abi::key::kPrecisionBf16) {
      module.emitError("tf-launches-to-runtime: precision must be fp32, tf32 or bf16, got '")
          << precision << "'";
      return signalPassFailure();
    }
    binary.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
    auto bytes = LLVM::LLVMArrayType::get(b.getI8Type(), image.size());
    b.create<LLVM::GlobalOp>(module.getLoc(), bytes, /*isConstant=*/true, LLVM::Linkage::External,
                             abi::kCudaImageSymbol, b.getStringAttr(image));
    b.create<LLVM::GlobalOp>(module.getLoc(), b.getI64Type(), /*isConstant=*/true,
                             LLVM::Linkage::External, abi::kCudaImageSizeSymbol,
                             b.getI64IntegerAttr(image.size()));
    SmallVector<Attribute> names, sass;
    for (unsigned i = 0; i < kernels; ++i)
      names.push_back(b.getStringAttr(kKernelPrefix + std::to_string(i)));
    for (const std::string &arch : archList)
      sass.push_back(b.getStringAttr(arch));
    SmallVector<NamedAttribute> record = {
        b.getNamedAttr(abi::key::kCudaArch, b.getArrayAttr(sass)),
        b.getNamedAttr(abi::key::kCudaImage, b.getStringAttr(imageFormat)),
        b.getNamedAttr(abi::key::kCudaKernels, b.getArrayAttr(names)),
        b.getNamedAttr(abi::key::kCudaPrecision, b.getStringAttr(precision)),
    };
    // tf-merge-gpu-modules' record of each kernel's source, one a kernel.
    if (auto sources = module->getAttrOfType<ArrayAttr>("tfc.kernel_sources")) {
      if (sources.size() == kernels)
        record.push_back(b.getNamedAttr(abi::key::kCudaKernelSources, sources));
      module->removeAttr("tfc.kernel_sources");
    }
    if (cooperativeCallee)
      record.push_back(b.getNamedAttr(abi::key::kCudaPersistent, b.getBoolAttr(true)));
    if (!awaitingArchs.empty()) {
      SmallVector<Attribute> awaiting;
      for (const std::string &arch : awaitingArchs)
        awaiting.push_back(b.getStringAttr(arch));
      record.push_back(b.getNamedAttr(abi::key::kCudaDependentLaunch, b.getArrayAttr(awaiting)));
    }
    module->setAttr("tfc.cuda", b.getDictionaryAttr(record));
  }
};

} // namespace

std::string tfc::ptxAwaitingPreviousKernel(const std::string &ptx) {
  const std::string marker = kAwaitPreviousKernelMarker;
  std::string out;
  out.reserve(ptx.size() + 1024);
  size_t markers = 0, entries = 0, at = 0;
  for (size_t found = ptx.find(".entry"); found != std::string::npos;
       found = ptx.find(".entry", found + 1))
    ++entries;
  for (size_t found; (found = ptx.find(marker, at)) != std::string::npos;
       at = found + marker.size()) {
    out.append(ptx, at, found - at);
    out += "griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;";
    ++markers;
  }
  out.append(ptx, at, std::string::npos);
  if (entries == 0 || markers != entries)
    return "";
  // The instructions need .target sm_90 or later.
  const std::string target = ".target sm_";
  size_t targetAt = out.find(target);
  if (targetAt == std::string::npos)
    return "";
  size_t digits = targetAt + target.size(), end = digits;
  while (end < out.size() && std::isdigit(static_cast<unsigned char>(out[end])))
    ++end;
  unsigned number = 0;
  if (StringRef(out).slice(digits, end).getAsInteger(10, number))
    return "";
  if (number < 90)
    out.replace(digits, end - digits, "90");
  return out;
}
