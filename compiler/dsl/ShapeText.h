//===- ShapeText.h - how the DSL's messages write a shape: [64, 8] --------===//

#ifndef TFC_COMPILER_DSL_SHAPETEXT_H
#define TFC_COMPILER_DSL_SHAPETEXT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tfc {

/// "[64, 8]".
inline std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

} // namespace tfc

#endif // TFC_COMPILER_DSL_SHAPETEXT_H
