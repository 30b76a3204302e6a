//===- Lexer.h - tokens of the .tf language -------------------------------===//
//
// The lexer turns a .tf buffer into tokens with 1-based line and column
// (bytes). Newlines end statements, except inside `(...)` and `[...]`, where
// they are skipped so a call or a list may span lines. `#` starts a comment.
// Any byte sequence lexes to tokens or to one Error token: nothing here can
// overflow (integer literals are range-checked) or recurse.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_FRONTEND_LEXER_H
#define TFC_COMPILER_FRONTEND_LEXER_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace tfc {

enum class TokenKind {
  Eof,
  Error, // `text` is the offending bytes, `string` the message
  Newline,
  Identifier,
  Integer,
  Float,
  String,
  // Keywords (everything else, e.g. `param` or `batch`, is contextual).
  KwDef,
  KwModel,
  KwTrain,
  KwLet,
  KwReturn,
  KwTrue,
  KwFalse,
  // Punctuation and operators.
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Equal,
  Plus,
  Minus,
  Star,
  StarStar, // '**'
  Slash,
  At,
  EqEq,
  NotEq,
  Less,
  LessEq,
  Greater,
  GreaterEq,
};

/// How a token kind reads in a diagnostic: "'('", "an identifier", ...
llvm::StringRef spell(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef text; // the bytes in the buffer
  unsigned line = 1, col = 1;
  int64_t integer = 0;  // Integer
  double number = 0.0;  // Float
  std::string string;   // String (escapes decoded); Error (the message)

  bool is(TokenKind k) const { return kind == k; }
};

class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer) : buffer_(buffer) {}

  /// The next token; Eof at the end (repeatedly). After an Error token the
  /// lexer goes on with the next byte.
  Token next();

private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < buffer_.size() ? buffer_[pos_ + ahead] : '\0';
  }
  bool atEnd() const { return pos_ >= buffer_.size(); }
  void advance();
  Token make(TokenKind kind, size_t start, unsigned line, unsigned col) const;
  Token error(size_t start, unsigned line, unsigned col, std::string message) const;
  Token lexNumber(size_t start, unsigned line, unsigned col);
  Token lexString(size_t start, unsigned line, unsigned col);

  llvm::StringRef buffer_;
  size_t pos_ = 0;
  unsigned line_ = 1, col_ = 1;
  int bracketDepth_ = 0; // ( and [ nesting: newlines inside are skipped
};

} // namespace tfc

#endif // TFC_COMPILER_FRONTEND_LEXER_H
