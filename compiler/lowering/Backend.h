//===- Backend.h - the targets tfc compiles for ---------------------------===//
//
// `tfc compile --target=NAME` picks one entry of this table. A backend
// brings the passes that take the fused tf entries (tf-fuse's output, the
// same for every target) down to its code: from tf to loops and kernel calls
// (linalg), to buffers and its runtime's calls, to the LLVM dialect. A new
// target is one entry here, its passes in compiler/lowering/<name>/ and its
// device in runtime/<name>/.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_LOWERING_BACKEND_H
#define TFC_COMPILER_LOWERING_BACKEND_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace tfc {

struct Backend {
  llvm::StringRef name;    // --target=NAME
  llvm::StringRef summary; // for --help and errors
  /// Why this build of tfc cannot compile for the target; empty when it can.
  llvm::StringRef unavailable;
  /// tf entries (tf.fusion regions) to linalg on tensors and kernel calls.
  void (*addLinalgPasses)(mlir::OpPassManager &pm) = nullptr;
  /// linalg on tensors to buffers: the runtime's calls, the memory plan, the
  /// entries' C ABI and the manifest.
  void (*addBufferPasses)(mlir::OpPassManager &pm, bool winograd) = nullptr;
  /// Buffers to the LLVM dialect.
  void (*addLLVMDialectPasses)(mlir::OpPassManager &pm) = nullptr;
};

/// Every target, the default (cpu) first.
llvm::ArrayRef<Backend> backends();
/// The backend named `name`, or null.
const Backend *findBackend(llvm::StringRef name);

} // namespace tfc

#endif // TFC_COMPILER_LOWERING_BACKEND_H
