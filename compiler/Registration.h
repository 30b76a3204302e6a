//===- Registration.h - every dialect and pass tfc uses, in one place -----===//
#ifndef TFC_COMPILER_REGISTRATION_H
#define TFC_COMPILER_REGISTRATION_H

namespace mlir {
class DialectRegistry;
}

namespace tfc {
/// The dialects tfc's tools parse and the passes they run. Kept in one
/// translation unit: MLIR's registration headers are the heaviest to compile.
void registerAllDialects(mlir::DialectRegistry &registry);
void registerAllPasses();
} // namespace tfc

#endif // TFC_COMPILER_REGISTRATION_H
