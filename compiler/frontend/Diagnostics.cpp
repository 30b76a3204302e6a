//===- Diagnostics.cpp - diagnostics that are safe to print on a terminal -===//

#include "compiler/frontend/Diagnostics.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Unicode.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <vector>

namespace tfc {
namespace {

constexpr unsigned kTabStop = 8;
constexpr unsigned kMinLineWidth = 40;
constexpr llvm::StringLiteral kCut = "...";

/// The character at text[i]: its bytes and its display width. A width < 0:
/// not printable, and `length` is 1 (the byte is escaped, and the scan
/// resynchronises on the next byte).
struct Char {
  unsigned length;
  int width;
};

Char scanChar(llvm::StringRef text, size_t i) {
  auto b = static_cast<unsigned char>(text[i]);
  if (b < 0x80)
    return {1, b >= 0x20 && b < 0x7f ? 1 : -1};
  const auto *p = reinterpret_cast<const llvm::UTF8 *>(text.data() + i);
  const auto *end = reinterpret_cast<const llvm::UTF8 *>(text.data() + text.size());
  unsigned n = llvm::getUTF8SequenceSize(p, end); // 0: invalid or truncated
  if (n < 2 || n > 4)
    return {1, -1};
  int width = llvm::sys::unicode::columnWidthUTF8(text.substr(i, n));
  if (width < 0) // a control, format or separator character
    return {1, -1};
  return {n, width};
}

void appendEscaped(std::string &out, char c) {
  static const char hex[] = "0123456789abcdef";
  auto b = static_cast<unsigned char>(c);
  out += "\\x";
  out += hex[b >> 4];
  out += hex[b & 15];
}

constexpr unsigned kEscapeWidth = 4; // "\xNN"

/// One character of a source line as shown: its bytes, its first display
/// column (tabs expanded) and its width.
struct Cell {
  size_t offset = 0;
  unsigned length = 0;
  size_t col = 0;
  unsigned width = 0;
  enum Kind { Text, Tab, Escape } kind = Text;
};

/// The cells of a line, left to right.
class Cells {
public:
  explicit Cells(llvm::StringRef line) : line_(line) {}

  bool next(Cell &cell) {
    if (offset_ >= line_.size())
      return false;
    cell.offset = offset_;
    cell.col = col_;
    if (line_[offset_] == '\t') {
      cell.kind = Cell::Tab;
      cell.length = 1;
      cell.width = kTabStop - col_ % kTabStop;
    } else {
      Char c = scanChar(line_, offset_);
      cell.length = c.length;
      cell.kind = c.width < 0 ? Cell::Escape : Cell::Text;
      cell.width = c.width < 0 ? kEscapeWidth : static_cast<unsigned>(c.width);
    }
    offset_ += cell.length;
    col_ += cell.width;
    return true;
  }
  size_t col() const { return col_; }

private:
  llvm::StringRef line_;
  size_t offset_ = 0;
  size_t col_ = 0;
};

} // namespace

std::string escapeForTerminal(llvm::StringRef text, bool keepLayout) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (keepLayout && (c == '\n' || c == '\t')) {
      out += c;
      ++i;
      continue;
    }
    Char ch = scanChar(text, i);
    if (ch.width < 0)
      appendEscaped(out, c);
    else
      out.append(text.data() + i, ch.length);
    i += ch.length;
  }
  return out;
}

SourceExcerpt formatSourceExcerpt(llvm::StringRef line, size_t column,
                                  llvm::ArrayRef<std::pair<unsigned, unsigned>> ranges,
                                  unsigned maxColumns) {
  // Pass 1: the display column of the caret and of the ranges' ends, and the
  // width of the whole line. A byte inside a character maps to the start of
  // the character, or for the end of a range to its end.
  struct Query {
    size_t offset;
    bool roundUp;
    size_t col;
  };
  std::vector<Query> queries;
  queries.push_back({column, false, 0});
  for (const auto &[first, second] : ranges) {
    queries.push_back({first, false, 0});
    queries.push_back({second, true, 0});
  }
  for (Query &q : queries)
    q.col = SIZE_MAX;
  Cells cells(line);
  Cell cell;
  while (cells.next(cell))
    for (Query &q : queries)
      if (q.offset >= cell.offset && q.offset < cell.offset + cell.length)
        q.col = cell.col + (q.roundUp && q.offset > cell.offset ? cell.width : 0);
  const size_t total = cells.col();
  for (Query &q : queries)
    q.col = std::min(q.col, total); // at or past the end of the line
  const size_t caretCol = queries.front().col;

  // The window [lo, hi) of display columns to show: all of the line if it
  // fits, else maxColumns in all with the cut sides' "...", the caret in the
  // middle unless the window meets an end of the line.
  const size_t width = std::max(maxColumns, kMinLineWidth);
  size_t lo = 0, hi = total;
  if (total > width) {
    const size_t both = width - 2 * kCut.size(); // cut on both sides
    lo = caretCol > both / 2 ? caretCol - both / 2 : 0;
    hi = lo + both;
    if (lo == 0)
      hi = width - kCut.size();
    if (hi >= total) {
      hi = total;
      lo = total - (width - kCut.size());
    }
  }

  // Pass 2: the characters wholly inside the window.
  SourceExcerpt out;
  std::string shown;
  bool cutLeft = false, cutRight = false;
  size_t shownStart = SIZE_MAX, shownEnd = lo;
  Cells again(line);
  while (again.next(cell)) {
    if (cell.col < lo) {
      cutLeft = true;
      continue;
    }
    if (cell.col + cell.width > hi) {
      cutRight = true;
      break;
    }
    shownStart = std::min(shownStart, cell.col);
    shownEnd = cell.col + cell.width;
    switch (cell.kind) {
    case Cell::Text:
      shown.append(line.data() + cell.offset, cell.length);
      break;
    case Cell::Tab:
      shown.append(cell.width, ' ');
      break;
    case Cell::Escape:
      appendEscaped(shown, line[cell.offset]);
      break;
    }
  }
  if (shownStart == SIZE_MAX)
    shownStart = shownEnd;
  const size_t prefix = cutLeft ? kCut.size() : 0;
  if (cutLeft)
    out.line += kCut;
  out.line += shown;
  if (cutRight)
    out.line += kCut;

  // The caret line, in the same columns.
  auto position = [&](size_t col) {
    return prefix + (std::clamp(col, shownStart, shownEnd) - shownStart);
  };
  out.caret.assign(position(shownEnd) + 1, ' ');
  for (size_t r = 0; r < ranges.size(); ++r) {
    size_t from = position(queries[1 + 2 * r].col), to = position(queries[2 + 2 * r].col);
    for (size_t c = from; c < to; ++c)
      out.caret[c] = '~';
  }
  out.caret[position(caretCol)] = '^';
  out.caret.erase(out.caret.find_last_not_of(' ') + 1);
  return out;
}

void printDiagnostic(llvm::raw_ostream &os, const llvm::SMDiagnostic &diag,
                     unsigned maxColumns) {
  // The prefix, label and colours of SMDiagnostic::print.
  llvm::StringRef filename = diag.getFilename();
  int line = diag.getLineNo(), column = diag.getColumnNo();
  {
    llvm::WithColor s(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true);
    if (!filename.empty()) {
      s << (filename == "-" ? std::string("<stdin>") : escapeForTerminal(filename));
      if (line != -1) {
        s << ':' << line;
        if (column != -1)
          s << ':' << (column + 1);
      }
      s << ": ";
    }
  }
  switch (diag.getKind()) {
  case llvm::SourceMgr::DK_Error:
    llvm::WithColor::error(os);
    break;
  case llvm::SourceMgr::DK_Warning:
    llvm::WithColor::warning(os);
    break;
  case llvm::SourceMgr::DK_Note:
    llvm::WithColor::note(os);
    break;
  case llvm::SourceMgr::DK_Remark:
    llvm::WithColor::remark(os);
    break;
  }
  llvm::WithColor(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true)
      << escapeForTerminal(diag.getMessage(), /*keepLayout=*/true) << '\n';

  if (line == -1 || column == -1 || diag.getLineContents().empty())
    return;
  SourceExcerpt excerpt = formatSourceExcerpt(diag.getLineContents(), column,
                                              diag.getRanges(), maxColumns);
  os << excerpt.line << '\n';
  llvm::WithColor(os, llvm::raw_ostream::GREEN, /*Bold=*/true) << excerpt.caret << '\n';
}

void installDiagnosticPrinter(llvm::SourceMgr &mgr, llvm::raw_ostream &os) {
  mgr.setDiagHandler(
      [](const llvm::SMDiagnostic &diag, void *context) {
        printDiagnostic(*static_cast<llvm::raw_ostream *>(context), diag);
      },
      &os);
}

TerminalSafeStream::TerminalSafeStream(llvm::raw_ostream &out)
    : raw_ostream(/*unbuffered=*/true), out_(out) {}

TerminalSafeStream::~TerminalSafeStream() { flush(); }

void TerminalSafeStream::write_impl(const char *ptr, size_t size) {
  out_ << escapeForTerminal(llvm::StringRef(ptr, size), /*keepLayout=*/true);
  pos_ += size;
}

llvm::raw_ostream &TerminalSafeStream::changeColor(enum Colors color, bool bold, bool bg) {
  out_.changeColor(color, bold, bg);
  return *this;
}
llvm::raw_ostream &TerminalSafeStream::resetColor() {
  out_.resetColor();
  return *this;
}
llvm::raw_ostream &TerminalSafeStream::reverseColor() {
  out_.reverseColor();
  return *this;
}
bool TerminalSafeStream::is_displayed() const { return out_.is_displayed(); }
bool TerminalSafeStream::has_colors() const { return out_.has_colors(); }
void TerminalSafeStream::enable_colors(bool enable) { out_.enable_colors(enable); }

} // namespace tfc
