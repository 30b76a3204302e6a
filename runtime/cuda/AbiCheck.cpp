//===- AbiCheck.cpp - the CUDA runtime's functions against runtime/Abi.h --===//
//
// As runtime/cpu/AbiCheck.cpp: each function of TFC_ABI_CUDA_RUNTIME_FUNCTIONS
// is looked up by its symbol among RuntimeFunctions.h's and LayerKernels.h's
// declarations and its type compared, so a renamed function or a changed
// parameter list on either side fails to compile.
//
//===----------------------------------------------------------------------===//

#include "runtime/Abi.h"
#include "runtime/cuda/LayerKernels.h"
#include "runtime/cuda/RuntimeFunctions.h"

#include <type_traits>

namespace tfc::abi {
#define TFC_ABI_CHECK(id, sym, type)                                           \
  static_assert(std::is_same_v<decltype(::sym), type>,                         \
                #sym " differs from its type in runtime/Abi.h");
TFC_ABI_CUDA_RUNTIME_FUNCTIONS(TFC_ABI_CHECK)
#undef TFC_ABI_CHECK
} // namespace tfc::abi
