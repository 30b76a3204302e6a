//===- JsonLimits.h - bounding JSON before nlohmann parses it -------------===//
//
// nlohmann-json 3.11 parses iteratively, but copying a value recurses once
// per nesting level, and ordered_json (the safetensors header) copies rather
// than moves an object's members whenever it grows: a header nested some
// 10^5 levels deep, followed by one more key, overflows the stack while it is
// parsed. The JSON the runtime reads nests a few levels (a safetensors header
// 3, the manifest 6), so anything past kMaxJsonDepth is refused before
// nlohmann sees it.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_JSONLIMITS_H
#define TFC_RUNTIME_JSONLIMITS_H

#include <string_view>

namespace tfc::rt::detail {

/// The deepest array/object nesting the runtime accepts in a JSON text.
inline constexpr int kMaxJsonDepth = 64;

/// True when no array or object in `text` nests deeper than `limit`.
/// Brackets inside strings (escapes included) do not count. It does not
/// validate the JSON (the parser does that next); it only bounds how deep
/// the parser's result can be, in one pass and O(1) memory.
inline bool jsonDepthWithin(std::string_view text, int limit = kMaxJsonDepth) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth; // an unbalanced close is the parser's error to report
    }
  }
  return true;
}

} // namespace tfc::rt::detail

#endif // TFC_RUNTIME_JSONLIMITS_H
