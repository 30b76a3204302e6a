//===- Diagnostics.h - diagnostics that are safe to print on a terminal ---===//
//
// tfc prints a diagnostic as `file:line:col: error: message`, then the source
// line and a caret under the column, as llvm::SMDiagnostic::print does; the
// difference is that source text reaches the terminal only through here:
//
//  - Every byte that is not printable is written as `\xNN` (lower-case hex):
//    control bytes (0x00-0x1f, so ESC too), DEL (0x7f), bytes of invalid
//    UTF-8, and the bytes of UTF-8 characters that are not printable (C1
//    controls, bidirectional overrides and other format characters, line
//    separators). Printable ASCII passes, and so does valid UTF-8 of printable
//    characters: comments and strings may hold UTF-8 text, and it should read
//    as written. In the source line a tab is expanded to the next multiple
//    of 8 columns; in a message, tabs and newlines stay.
//  - A source line wider than `maxColumns` display columns is cut to a window
//    around the caret, with `...` on each side that was cut.
//  - The caret stays under the character it points to: columns are display
//    columns (an escaped byte is 4 wide, a CJK character 2).
//
// An escape reads like the same four characters written in the source (a
// literal `\x1b` in a string): the output is unambiguous about what reaches
// the terminal, not about which of the two the file held.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_FRONTEND_DIAGNOSTICS_H
#define TFC_COMPILER_FRONTEND_DIAGNOSTICS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>

namespace llvm {
class SMDiagnostic;
class SourceMgr;
} // namespace llvm

namespace tfc {

/// The widest source line a diagnostic shows whole, in display columns.
constexpr unsigned kDiagnosticLineWidth = 120;

/// `text` with every byte that is not printable written as `\xNN` (see the
/// file comment). With `keepLayout`, '\n' and '\t' stay as they are.
std::string escapeForTerminal(llvm::StringRef text, bool keepLayout = false);

/// A source line as a diagnostic shows it, and the line with the caret.
struct SourceExcerpt {
  std::string line;  // escaped, tabs expanded, cut to the window
  std::string caret; // '^' under the column, '~' under the ranges; no trailing blanks
};

/// Formats `line` (the raw bytes, without the newline) with the caret under
/// byte `column` (0-based; at or past the end: just after the last
/// character), and '~' under the bytes [first, second) of each range.
/// Lines wider than `maxColumns` (at least 40) are cut around the caret.
SourceExcerpt formatSourceExcerpt(llvm::StringRef line, size_t column,
                                  llvm::ArrayRef<std::pair<unsigned, unsigned>> ranges = {},
                                  unsigned maxColumns = kDiagnosticLineWidth);

/// Prints `diag` as SMDiagnostic::print does (the same location prefix,
/// severity label and colours), with the file name and the message escaped
/// and the source line through formatSourceExcerpt. An empty source line is
/// not shown (a caret under nothing says nothing). Fix-its are not shown.
void printDiagnostic(llvm::raw_ostream &os, const llvm::SMDiagnostic &diag,
                     unsigned maxColumns = kDiagnosticLineWidth);

/// Makes `mgr` print every diagnostic it is given, which includes those of an
/// mlir::SourceMgrDiagnosticHandler on it that have a source location, with
/// printDiagnostic on `os` (which must outlive `mgr`'s use).
void installDiagnosticPrinter(llvm::SourceMgr &mgr, llvm::raw_ostream &os);

/// Writes everything through escapeForTerminal(..., keepLayout=true) to
/// another stream; colours are passed on. For what a diagnostic handler
/// prints without the SourceMgr (mlir::SourceMgrDiagnosticHandler prints a
/// note at the previous note's location, or a location it cannot find in the
/// SourceMgr, straight to its stream). Unbuffered, so a UTF-8 character is
/// whole as long as it is written in one piece.
class TerminalSafeStream : public llvm::raw_ostream {
public:
  explicit TerminalSafeStream(llvm::raw_ostream &out);
  ~TerminalSafeStream() override;

  raw_ostream &changeColor(enum Colors color, bool bold = false, bool bg = false) override;
  raw_ostream &resetColor() override;
  raw_ostream &reverseColor() override;
  bool is_displayed() const override;
  bool has_colors() const override;
  void enable_colors(bool enable) override;

private:
  void write_impl(const char *ptr, size_t size) override;
  uint64_t current_pos() const override { return pos_; }

  llvm::raw_ostream &out_;
  uint64_t pos_ = 0;
};

} // namespace tfc

#endif // TFC_COMPILER_FRONTEND_DIAGNOSTICS_H
