//===- AbiCheck.cpp - the CPU runtime's functions against runtime/Abi.h ---===//
//
// Each function generated code calls is named in Abi.h's list by its symbol
// and C type; here each is looked up by that name among the runtime's own
// declarations and its type compared. A function renamed, dropped, or given
// another parameter list on either side fails to compile.
//
//===----------------------------------------------------------------------===//

#include "runtime/Abi.h"
#include "runtime/ThreadPool.h"
#include "runtime/cpu/Attention.h"
#include "runtime/cpu/CrossEntropy.h"
#include "runtime/cpu/Dropout.h"
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/LayerNorm.h"

#include <type_traits>

namespace tfc::abi {
#define TFC_ABI_CHECK(id, sym, type)                                           \
  static_assert(std::is_same_v<decltype(::sym), type>,                         \
                #sym " differs from its type in runtime/Abi.h");
TFC_ABI_RUNTIME_FUNCTIONS(TFC_ABI_CHECK)
#undef TFC_ABI_CHECK
} // namespace tfc::abi
