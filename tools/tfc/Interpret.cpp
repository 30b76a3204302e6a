//===- Interpret.cpp - `tfc interpret`: one entry through the oracle ------===//

#include "tools/tfc/Interpret.h"

#include "compiler/Passes.h"
#include "compiler/frontend/Diagnostics.h"
#include "compiler/interpreter/Interpreter.h"
#include "runtime/Abi.h"
#include "runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;

namespace tfc {
namespace {

int fail(const std::string &message) {
  llvm::errs() << "tfc: error: " << escapeForTerminal(message) << "\n";
  return 1;
}

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// What the binary's manifest calls an element type.
const char *dtypeName(Type element) {
  return element.isF32() ? "f32" : element.isInteger(32) ? "i32" : "bool";
}

rt::DType runtimeDtype(Type element) {
  return element.isF32()         ? rt::DType::F32
         : element.isInteger(32) ? rt::DType::I32
                                 : rt::DType::Bool;
}

/// `t` as the interpreter's argument of tensor type `type`, or "" and an
/// error naming `what`.
bool toHost(const rt::Tensor &t, RankedTensorType type, const std::string &what, HostTensor &out,
            std::string &error) {
  if (t.dtype != runtimeDtype(type.getElementType()) ||
      ArrayRef<int64_t>(t.shape) != type.getShape()) {
    error = what + " is " +
            std::string(t.dtype == rt::DType::F32   ? "f32"
                        : t.dtype == rt::DType::I32 ? "i32"
                                                    : "bool") +
            " " + shapeText(t.shape) + ", but the argument is " + dtypeName(type.getElementType()) +
            " " + shapeText(type.getShape());
    return false;
  }
  out.type = t.dtype == rt::DType::F32   ? ElementType::f32
             : t.dtype == rt::DType::I32 ? ElementType::i32
                                         : ElementType::i1;
  out.shape = t.shape;
  out.data.resize(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    out.data[size_t(i)] = t.dtype == rt::DType::F32   ? double(t.f32()[i])
                          : t.dtype == rt::DType::I32 ? double(t.i32()[i])
                                                      : double(t.bytes[size_t(i)] != 0);
  return true;
}

std::string attrString(DictionaryAttr dict, const char *key) {
  auto s = dyn_cast_or_null<StringAttr>(dict.get(key));
  return s ? s.str() : std::string();
}

} // namespace

LogicalResult buildEntries(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(createTfAutodiff(TfAutodiffOptions{/*splitStep=*/true}));
  pm.addPass(createTfEntryPoints());
  return pm.run(module);
}

int interpretEntry(ModuleOp module, const InterpretRequest &request) {
  func::FuncOp func;
  std::string names;
  module.walk([&](func::FuncOp f) {
    auto entry = f->getAttrOfType<StringAttr>(kEntryAttr);
    if (!entry)
      return;
    names += (names.empty() ? "" : ", ") + entry.str();
    if (entry.getValue() == request.entry)
      func = f;
  });
  if (!func)
    return fail("no entry '" + request.entry + "' (this model has: " + names + ")");
  auto abi = func->getAttrOfType<DictionaryAttr>(kAbiAttr);
  auto argInfo = cast<ArrayAttr>(abi.get(abi::key::kArgs)).getAsRange<DictionaryAttr>();
  auto resultInfo = cast<ArrayAttr>(abi.get(abi::key::kResults)).getAsRange<DictionaryAttr>();

  std::string error;
  std::map<std::string, rt::Tensor> params;
  if (!request.params.empty()) {
    std::vector<std::pair<std::string, rt::Tensor>> file;
    if (!rt::readSafetensors(request.params, file, error))
      return fail(error);
    for (auto &[name, t] : file)
      params[name] = std::move(t);
  }
  // Feeds by KIND:NAME; an input may be fed as NAME alone, as for the binary.
  std::map<std::string, std::pair<rt::Tensor, std::string>> feeds;
  for (const std::string &arg : request.feeds) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("--feed expects KIND:NAME=FILE.npy, got '" + arg + "'");
    std::string key = arg.substr(0, eq), path = arg.substr(eq + 1);
    if (key.find(':') == std::string::npos)
      key = "input:" + key;
    rt::Tensor t;
    if (!rt::readNpy(path, t, error))
      return fail(error);
    feeds[key] = {std::move(t), path};
  }

  // A feed no argument takes is a mistake in the command line: said first.
  std::vector<std::pair<std::string, std::string>> kinds; // of each argument
  for (DictionaryAttr a : argInfo)
    kinds.push_back({attrString(a, abi::key::kKind), attrString(a, abi::key::kName)});
  for (const auto &[key, feed] : feeds)
    if (llvm::none_of(kinds,
                      [&, &key = key](const auto &k) { return k.first + ":" + k.second == key; }))
      return fail("'" + request.entry + "' has no argument " + key + " (fed from '" + feed.second +
                  "')");

  std::vector<HostTensor> args;
  for (auto [type, kindName] : llvm::zip(func.getArgumentTypes(), kinds)) {
    const auto &[kind, name] = kindName;
    auto tensorType = cast<RankedTensorType>(type);
    HostTensor host;
    if (kind == abi::kindName(abi::ValueKind::Param)) {
      auto it = params.find(name);
      if (it == params.end())
        return fail(request.params.empty()
                        ? "'" + request.entry + "' takes the parameters: name a file with --params"
                        : "'" + request.params + "' has no parameter '" + name + "'");
      if (!toHost(it->second, tensorType, "parameter '" + name + "'", host, error))
        return fail(error);
    } else if (auto it = feeds.find(kind + ":" + name); it != feeds.end()) {
      if (!toHost(it->second.first, tensorType, "'" + it->second.second + "' (" + it->first + ")",
                  host, error))
        return fail(error);
    } else if (kind == abi::kindName(abi::ValueKind::SampleOffset)) {
      host = HostTensor::zeros(tensorType); // one process: the batch is the global batch
    } else {
      return fail("'" + request.entry + "' needs " + dtypeName(tensorType.getElementType()) + " " +
                  shapeText(tensorType.getShape()) + " " + kind + ":" + name +
                  ": feed it as --feed " + kind + ":" + name + "=FILE.npy");
    }
    args.push_back(std::move(host));
  }

  FailureOr<std::vector<HostTensor>> results = interpret(func, args, &error);
  if (failed(results))
    return fail("the interpreter: " + error);
  if (std::error_code ec = llvm::sys::fs::create_directories(request.outputDir))
    return fail("cannot create '" + request.outputDir + "': " + ec.message());
  size_t r = 0;
  for (DictionaryAttr info : resultInfo) {
    const HostTensor &result = (*results)[r++];
    const std::string path = request.outputDir + "/" + attrString(info, abi::key::kKind) + "." +
                             attrString(info, abi::key::kName) + ".npy";
    bool written;
    if (result.type == ElementType::f32) {
      written = rt::writeNpyF64(path, result.shape, result.data, error);
    } else {
      rt::Tensor t(result.type == ElementType::i32 ? rt::DType::I32 : rt::DType::Bool,
                   result.shape);
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (t.dtype == rt::DType::I32)
          t.i32()[i] = int32_t(result.data[size_t(i)]);
        else
          t.bytes[size_t(i)] = result.data[size_t(i)] != 0;
      }
      written = rt::writeNpy(path, t, error);
    }
    if (!written)
      return fail(error);
  }
  llvm::outs() << "wrote " << r << " results of '" << request.entry << "' to "
               << escapeForTerminal(request.outputDir) << " (float64: the reference interpreter)\n";
  return 0;
}

} // namespace tfc
