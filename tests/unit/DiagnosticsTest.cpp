//===- DiagnosticsTest.cpp - diagnostics that are safe for a terminal -----===//
//
// compiler/frontend/Diagnostics.h: bytes that are not printable escaped as
// \xNN (valid UTF-8 of printable characters kept), long source lines cut to a
// window around the caret, the caret aligned; and tfc's wiring of it to an
// mlir::SourceMgrDiagnosticHandler.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontend/Diagnostics.h"
#include "compiler/frontend/Parser.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Unicode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

using namespace tfc;

namespace {

/// Every byte of `s` is printable ASCII, or '\n'.
bool isTerminalSafeAscii(const std::string &s) {
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    if (c != '\n' && (b < 0x20 || b >= 0x7f))
      return false;
  }
  return true;
}

/// The column the caret line's '^' is in.
size_t caretAt(const SourceExcerpt &e) { return e.caret.find('^'); }

TEST(EscapeForTerminal, PrintableAsciiUnchanged) {
  std::string ascii;
  for (int c = 0x20; c < 0x7f; ++c)
    ascii += static_cast<char>(c);
  EXPECT_EQ(escapeForTerminal(ascii), ascii);
  EXPECT_EQ(escapeForTerminal(""), "");
}

TEST(EscapeForTerminal, ControlBytes) {
  EXPECT_EQ(escapeForTerminal("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(escapeForTerminal(llvm::StringRef("\0\x07\x7f\r", 4)), "\\x00\\x07\\x7f\\x0d");
  // Newline and tab: escaped in a file name, kept in a message.
  EXPECT_EQ(escapeForTerminal("a\nb\tc"), "a\\x0ab\\x09c");
  EXPECT_EQ(escapeForTerminal("a\nb\tc\x1b", /*keepLayout=*/true), "a\nb\tc\\x1b");
}

TEST(EscapeForTerminal, Utf8) {
  // Printable UTF-8 passes: accents, CJK, emoji.
  EXPECT_EQ(escapeForTerminal("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
  // Invalid: a lone continuation byte, a truncated sequence, an overlong
  // '/', a surrogate, a lead byte past U+10FFFF.
  EXPECT_EQ(escapeForTerminal("\x80"), "\\x80");
  EXPECT_EQ(escapeForTerminal("\xc3"), "\\xc3");
  EXPECT_EQ(escapeForTerminal("\xc3("), "\\xc3(");
  EXPECT_EQ(escapeForTerminal("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(escapeForTerminal("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(escapeForTerminal("\xf8\x88\x80\x80\x80"), "\\xf8\\x88\\x80\\x80\\x80");
  // Valid but not printable: the C1 CSI (U+009B), a right-to-left override
  // (U+202E), a line separator (U+2028).
  EXPECT_EQ(escapeForTerminal("\xc2\x9b"), "\\xc2\\x9b");
  EXPECT_EQ(escapeForTerminal("\xe2\x80\xae"), "\\xe2\\x80\\xae");
  EXPECT_EQ(escapeForTerminal("\xe2\x80\xa8"), "\\xe2\\x80\\xa8");
}

TEST(SourceExcerpt, OrdinaryLineAsBefore) {
  SourceExcerpt e = formatSourceExcerpt("  let y = x $ x", 12);
  EXPECT_EQ(e.line, "  let y = x $ x");
  EXPECT_EQ(e.caret, "            ^");
  // At or past the end: just after the last character.
  EXPECT_EQ(formatSourceExcerpt("abc", 3).caret, "   ^");
  EXPECT_EQ(formatSourceExcerpt("abc", 99).caret, "   ^");
}

TEST(SourceExcerpt, ControlBytesEscapedCaretAligned) {
  llvm::StringRef line = "let y = x \x1b[31m x";
  SourceExcerpt atEsc = formatSourceExcerpt(line, 10);
  EXPECT_EQ(atEsc.line, "let y = x \\x1b[31m x");
  EXPECT_EQ(atEsc.caret, "          ^"); // under the backslash
  // After the escape, the caret moves right by the 3 extra columns.
  SourceExcerpt after = formatSourceExcerpt(line, 16);
  EXPECT_EQ(after.line[caretAt(after)], 'x');
  EXPECT_EQ(caretAt(after), 19u);
  SourceExcerpt nul = formatSourceExcerpt(llvm::StringRef("model m {\0}", 11), 9);
  EXPECT_EQ(nul.line, "model m {\\x00}");
  EXPECT_EQ(nul.caret, "         ^");
}

TEST(SourceExcerpt, TabsExpanded) {
  SourceExcerpt e = formatSourceExcerpt("\tx =\t$", 5);
  EXPECT_EQ(e.line, "        x =     $");
  EXPECT_EQ(e.line[caretAt(e)], '$');
}

TEST(SourceExcerpt, Utf8CaretInDisplayColumns) {
  // "s = "日本" $": the caret goes under '$' at byte 13, display column 11.
  SourceExcerpt e = formatSourceExcerpt("s = \"\xe6\x97\xa5\xe6\x9c\xac\" $", 13);
  EXPECT_EQ(e.line, "s = \"\xe6\x97\xa5\xe6\x9c\xac\" $");
  EXPECT_EQ(caretAt(e), 11u);
  // é is one column.
  EXPECT_EQ(caretAt(formatSourceExcerpt("# caf\xc3\xa9 $", 8)), 7u);
}

TEST(SourceExcerpt, RangesUnderTheirCharacters) {
  std::pair<unsigned, unsigned> range{4, 7};
  SourceExcerpt e = formatSourceExcerpt("a = \x01\x02\x03 + b", 4, range);
  EXPECT_EQ(e.line, "a = \\x01\\x02\\x03 + b");
  EXPECT_EQ(e.caret, "    ^~~~~~~~~~~~"); // 3 escapes: 12 columns
}

TEST(SourceExcerpt, LongLineCutAroundCaret) {
  std::string line = std::string(200000, 'a') + "$" + std::string(200000, 'b');
  SourceExcerpt e = formatSourceExcerpt(line, 200000);
  EXPECT_LE(e.line.size(), kDiagnosticLineWidth);
  EXPECT_GE(e.line.size(), kDiagnosticLineWidth - 8);
  EXPECT_EQ(e.line.substr(0, 6), "...aaa");
  EXPECT_EQ(e.line.substr(e.line.size() - 6), "bbb...");
  EXPECT_EQ(e.line[caretAt(e)], '$');
  EXPECT_EQ(e.caret.size(), caretAt(e) + 1); // no trailing blanks
  // Near the middle of the window.
  EXPECT_NEAR(static_cast<double>(caretAt(e)), kDiagnosticLineWidth / 2.0, 4.0);
}

TEST(SourceExcerpt, LongLineCaretNearAnEnd) {
  std::string line = "x $ " + std::string(1000, 'c');
  SourceExcerpt start = formatSourceExcerpt(line, 2);
  EXPECT_EQ(start.line.size(), kDiagnosticLineWidth);
  EXPECT_EQ(start.line.substr(0, 4), "x $ ");
  EXPECT_EQ(start.line.substr(start.line.size() - 3), "...");
  EXPECT_EQ(start.caret, "  ^");

  std::string tail = std::string(1000, 'c') + " $";
  SourceExcerpt end = formatSourceExcerpt(tail, tail.size() - 1);
  EXPECT_EQ(end.line.size(), kDiagnosticLineWidth);
  EXPECT_EQ(end.line.substr(0, 3), "...");
  EXPECT_EQ(end.line.substr(end.line.size() - 2), " $");
  EXPECT_EQ(end.line[caretAt(end)], '$');
  SourceExcerpt past = formatSourceExcerpt(tail, tail.size());
  EXPECT_EQ(caretAt(past), past.line.size());
}

TEST(SourceExcerpt, LongLineOfControlBytes) {
  std::string line(100000, '\x1b');
  SourceExcerpt e = formatSourceExcerpt(line, 50000);
  EXPECT_TRUE(isTerminalSafeAscii(e.line));
  EXPECT_LE(e.line.size(), kDiagnosticLineWidth);
  EXPECT_EQ(e.line.substr(caretAt(e), 4), "\\x1b");
}

TEST(SourceExcerpt, WidthIsAParameter) {
  std::string line(500, 'a');
  EXPECT_EQ(formatSourceExcerpt(line, 250, {}, 60).line.size(), 60u);
  EXPECT_EQ(formatSourceExcerpt(line, 250, {}, 1).line.size(), 40u); // the least
  EXPECT_EQ(formatSourceExcerpt(line, 250, {}, 1000).line, line);
}

TEST(SourceExcerpt, RandomLinesKeepTheInvariants) {
  // Random bytes (biased to controls, tabs, UTF-8 lead and continuation
  // bytes), random columns, widths and ranges: the excerpt is always safe,
  // within the width, one line, and the caret within it.
  std::mt19937 rng(20240611);
  const char pool[] = {'a', ' ', '\t', '\x1b', '\0', '\x7f', '\xc3', '\xa9', '\xe6',
                       '\x97', '\xa5', '\xe2', '\x80', '\xae', '\xf0', '\x9f', '\xff'};
  for (int iter = 0; iter < 2000; ++iter) {
    std::string line(rng() % 600, ' ');
    for (char &c : line)
      c = pool[rng() % sizeof(pool)];
    size_t column = rng() % (line.size() + 3);
    unsigned width = 20 + rng() % 200;
    std::vector<std::pair<unsigned, unsigned>> ranges;
    if (rng() % 2) {
      unsigned a = rng() % (line.size() + 2), b = rng() % (line.size() + 2);
      ranges.push_back({std::min(a, b), std::max(a, b)});
    }
    SourceExcerpt e = formatSourceExcerpt(line, column, ranges, width);
    // Valid UTF-8 of printable characters only (< 0: a control or invalid).
    int shown = llvm::sys::unicode::columnWidthUTF8(e.line);
    ASSERT_GE(shown, 0) << iter;
    ASSERT_LE(shown, static_cast<int>(std::max(width, 40u))) << iter;
    ASSERT_TRUE(isTerminalSafeAscii(e.caret));
    ASSERT_EQ(std::count(e.caret.begin(), e.caret.end(), '^'), 1);
    ASSERT_LE(caretAt(e), e.line.size() + 1);
    ASSERT_LE(e.caret.size(), e.line.size() + 1);
    if (line.size() <= std::max(width, 40u) && line.find_first_not_of("a ") == std::string::npos) {
      ASSERT_EQ(e.line, line);
    }
  }
}

/// What printDiagnostic writes for an error at byte `offset` of `source`.
std::string printed(llvm::StringRef source, size_t offset, llvm::StringRef message,
                    llvm::StringRef name = "f.tf") {
  llvm::SourceMgr mgr;
  mgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
  llvm::SMLoc loc = llvm::SMLoc::getFromPointer(
      mgr.getMemoryBuffer(mgr.getMainFileID())->getBufferStart() + offset);
  std::string out;
  llvm::raw_string_ostream os(out);
  printDiagnostic(os, mgr.GetMessage(loc, llvm::SourceMgr::DK_Error, message));
  return out;
}

TEST(PrintDiagnostic, SameAsLlvmForOrdinaryInput) {
  llvm::SourceMgr mgr;
  llvm::StringRef source = "model m {\n  let y = x $ x\n}\n";
  mgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "m.tf"), llvm::SMLoc());
  llvm::SMLoc loc = llvm::SMLoc::getFromPointer(
      mgr.getMemoryBuffer(mgr.getMainFileID())->getBufferStart() + 22);
  for (auto kind : {llvm::SourceMgr::DK_Error, llvm::SourceMgr::DK_Note,
                    llvm::SourceMgr::DK_Warning, llvm::SourceMgr::DK_Remark}) {
    llvm::SMDiagnostic diag = mgr.GetMessage(loc, kind, "unexpected character '$'");
    std::string ours, llvms;
    llvm::raw_string_ostream a(ours), b(llvms);
    printDiagnostic(a, diag);
    diag.print(nullptr, b);
    EXPECT_EQ(ours, llvms);
  }
  EXPECT_EQ(printed(source, 22, "unexpected character '$'"),
            "f.tf:2:13: error: unexpected character '$'\n  let y = x $ x\n            ^\n");
}

TEST(PrintDiagnostic, EscapesLineMessageAndFileName) {
  std::string out = printed("let y = x \x1b[2J x\n", 10, "unexpected \x1b[31m\nnext",
                            "a\x1b]0;title\x07.tf");
  EXPECT_EQ(out, "a\\x1b]0;title\\x07.tf:1:11: error: unexpected \\x1b[31m\nnext\n"
                 "let y = x \\x1b[2J x\n"
                 "          ^\n");
}

TEST(PrintDiagnostic, EmptyLineNotShown) {
  EXPECT_EQ(printed("", 0, "expected a 'model' block"),
            "f.tf:1:1: error: expected a 'model' block\n");
}

TEST(PrintDiagnostic, NoLocation) {
  llvm::SMDiagnostic diag("", llvm::SourceMgr::DK_Error, "bad \x1b");
  std::string out;
  llvm::raw_string_ostream os(out);
  printDiagnostic(os, diag);
  EXPECT_EQ(out, "error: bad \\x1b\n");
}

TEST(TerminalSafeStream, EscapesWhatPassesThrough) {
  std::string out;
  llvm::raw_string_ostream inner(out);
  {
    TerminalSafeStream safe(inner);
    safe << "a\x1b[31m" << 'b' << "\n" << "caf\xc3\xa9\x7f";
  }
  EXPECT_EQ(out, "a\\x1b[31mb\ncaf\xc3\xa9\\x7f");
}

/// tfc's wiring: a SourceMgrDiagnosticHandler writing to a TerminalSafeStream
/// on a SourceMgr with installDiagnosticPrinter.
std::string compileErrors(llvm::StringRef source) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<tf::TFDialect, mlir::func::FuncDialect>();
  llvm::SourceMgr mgr;
  mgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "t.tf"), llvm::SMLoc());
  std::string out;
  llvm::raw_string_ostream os(out);
  TerminalSafeStream safe(os);
  installDiagnosticPrinter(mgr, os);
  mlir::SourceMgrDiagnosticHandler handler(mgr, &context, safe);
  (void)parseTfSource(source, "t.tf", context);
  // A note at the location of the last diagnostic: printed by the handler
  // itself, without the SourceMgr.
  mlir::Location loc = mlir::FileLineColLoc::get(&context, "t.tf", 1, 1);
  mlir::InFlightDiagnostic d = mlir::emitError(loc) << "outer";
  d.attachNote(loc) << "inner \x1b[0m";
  d.report();
  return out;
}

TEST(TfcDiagnostics, NothingRawReachesTheStream) {
  std::string out = compileErrors("model m {\n  input x: f32[2]\n  let y = x \x1b[31m x\n}\n");
  EXPECT_TRUE(isTerminalSafeAscii(out)) << out;
  EXPECT_NE(out.find("t.tf:3:13: error: unexpected character byte 0x1b\n"
                     "  let y = x \\x1b[31m x\n"
                     "            ^\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("t.tf:1:1: note: inner \\x1b[0m\n"), std::string::npos) << out;
}

TEST(TfcDiagnostics, BinaryInput) {
  std::string binary;
  for (int i = 0; i < 256 * 64; ++i)
    binary += static_cast<char>(i % 256 == 10 ? 0 : i % 256); // one line
  std::string out = compileErrors(binary);
  EXPECT_TRUE(isTerminalSafeAscii(out)) << out;
  EXPECT_NE(out.find("t.tf:1:1: error: unexpected character byte 0x00\n\\x00\\x01"),
            std::string::npos)
      << out;
  EXPECT_LT(out.size(), 1000u);
}

} // namespace
