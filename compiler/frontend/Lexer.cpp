//===- Lexer.cpp - tokens of the .tf language -----------------------------===//

#include "compiler/frontend/Lexer.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace tfc {

llvm::StringRef spell(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof: return "end of file";
  case TokenKind::Error: return "an invalid token";
  case TokenKind::Newline: return "end of line";
  case TokenKind::Identifier: return "a name";
  case TokenKind::Integer: return "an integer";
  case TokenKind::Float: return "a number";
  case TokenKind::String: return "a string";
  case TokenKind::KwDef: return "'def'";
  case TokenKind::KwModel: return "'model'";
  case TokenKind::KwTrain: return "'train'";
  case TokenKind::KwLet: return "'let'";
  case TokenKind::KwReturn: return "'return'";
  case TokenKind::KwTrue: return "'true'";
  case TokenKind::KwFalse: return "'false'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::Comma: return "','";
  case TokenKind::Colon: return "':'";
  case TokenKind::Equal: return "'='";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::StarStar: return "'**'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::At: return "'@'";
  case TokenKind::EqEq: return "'=='";
  case TokenKind::NotEq: return "'!='";
  case TokenKind::Less: return "'<'";
  case TokenKind::LessEq: return "'<='";
  case TokenKind::Greater: return "'>'";
  case TokenKind::GreaterEq: return "'>='";
  }
  return "a token";
}

static bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool isDigit(char c) { return c >= '0' && c <= '9'; }
static bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

/// "'x'" for a printable byte, "byte 0x07" otherwise.
static std::string describeByte(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f)
    return std::string("'") + c + "'";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "byte " << llvm::format_hex(u, 4);
  return s;
}

void Lexer::advance() {
  if (atEnd())
    return;
  if (buffer_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

Token Lexer::make(TokenKind kind, size_t start, unsigned line, unsigned col) const {
  Token t;
  t.kind = kind;
  t.text = buffer_.slice(start, pos_);
  t.line = line;
  t.col = col;
  return t;
}

Token Lexer::error(size_t start, unsigned line, unsigned col,
                   std::string message) const {
  Token t = make(TokenKind::Error, start, line, col);
  t.string = std::move(message);
  return t;
}

Token Lexer::next() {
  // Skip blanks and comments; a run of newlines outside brackets is one token.
  bool sawNewline = false;
  size_t newlineStart = 0;
  unsigned newlineLine = 0, newlineCol = 0;
  while (!atEnd()) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\r') {
      advance();
    } else if (c == '#') {
      while (!atEnd() && peek() != '\n')
        advance();
    } else if (c == '\n') {
      if (!sawNewline && bracketDepth_ == 0) {
        sawNewline = true;
        newlineStart = pos_;
        newlineLine = line_;
        newlineCol = col_;
      }
      advance();
    } else {
      break;
    }
  }
  if (sawNewline) {
    Token t;
    t.kind = TokenKind::Newline;
    t.text = buffer_.slice(newlineStart, newlineStart + 1);
    t.line = newlineLine;
    t.col = newlineCol;
    return t;
  }

  size_t start = pos_;
  unsigned line = line_, col = col_;
  if (atEnd())
    return make(TokenKind::Eof, start, line, col);

  char c = peek();
  if (isIdentStart(c)) {
    while (!atEnd() && isIdentChar(peek()))
      advance();
    Token t = make(TokenKind::Identifier, start, line, col);
    t.kind = llvm::StringSwitch<TokenKind>(t.text)
                 .Case("def", TokenKind::KwDef)
                 .Case("model", TokenKind::KwModel)
                 .Case("train", TokenKind::KwTrain)
                 .Case("let", TokenKind::KwLet)
                 .Case("return", TokenKind::KwReturn)
                 .Case("true", TokenKind::KwTrue)
                 .Case("false", TokenKind::KwFalse)
                 .Default(TokenKind::Identifier);
    return t;
  }
  if (isDigit(c) || (c == '.' && isDigit(peek(1))))
    return lexNumber(start, line, col);
  if (c == '"')
    return lexString(start, line, col);

  advance();
  auto two = [&](char second, TokenKind pair, TokenKind single) {
    if (peek() == second) {
      advance();
      return make(pair, start, line, col);
    }
    return make(single, start, line, col);
  };
  switch (c) {
  case '(':
  case '[':
    ++bracketDepth_;
    return make(c == '(' ? TokenKind::LParen : TokenKind::LBracket, start, line, col);
  case ')':
  case ']':
    if (bracketDepth_ > 0)
      --bracketDepth_;
    return make(c == ')' ? TokenKind::RParen : TokenKind::RBracket, start, line, col);
  case '{': return make(TokenKind::LBrace, start, line, col);
  case '}': return make(TokenKind::RBrace, start, line, col);
  case ',': return make(TokenKind::Comma, start, line, col);
  case ':': return make(TokenKind::Colon, start, line, col);
  case '+': return make(TokenKind::Plus, start, line, col);
  case '-': return make(TokenKind::Minus, start, line, col);
  case '*': return two('*', TokenKind::StarStar, TokenKind::Star);
  case '/': return make(TokenKind::Slash, start, line, col);
  case '@': return make(TokenKind::At, start, line, col);
  case '=': return two('=', TokenKind::EqEq, TokenKind::Equal);
  case '<': return two('=', TokenKind::LessEq, TokenKind::Less);
  case '>': return two('=', TokenKind::GreaterEq, TokenKind::Greater);
  case '!':
    if (peek() == '=') {
      advance();
      return make(TokenKind::NotEq, start, line, col);
    }
    return error(start, line, col, "unexpected character '!' (did you mean '!='?)");
  default:
    return error(start, line, col, "unexpected character " + describeByte(c));
  }
}

Token Lexer::lexNumber(size_t start, unsigned line, unsigned col) {
  bool isFloat = false;
  while (isDigit(peek()))
    advance();
  if (peek() == '.') {
    isFloat = true;
    advance();
    if (!isDigit(peek())) {
      while (isIdentChar(peek()))
        advance();
      return error(start, line, col,
                   "invalid number '" + buffer_.slice(start, pos_).str() +
                       "': expected a digit after '.'");
    }
    while (isDigit(peek()))
      advance();
  }
  if (peek() == 'e' || peek() == 'E') {
    isFloat = true;
    advance();
    if (peek() == '+' || peek() == '-')
      advance();
    if (!isDigit(peek())) {
      while (isIdentChar(peek()))
        advance();
      return error(start, line, col,
                   "invalid number '" + buffer_.slice(start, pos_).str() +
                       "': expected digits in the exponent");
    }
    while (isDigit(peek()))
      advance();
  }
  if (isIdentChar(peek()) || peek() == '.') {
    while (isIdentChar(peek()) || peek() == '.')
      advance();
    return error(start, line, col,
                 "invalid number '" + buffer_.slice(start, pos_).str() + "'");
  }

  Token t = make(isFloat ? TokenKind::Float : TokenKind::Integer, start, line, col);
  if (!isFloat) {
    int64_t value = 0;
    for (char d : t.text) {
      int64_t digit = d - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
        return error(start, line, col,
                     "integer literal is too large (the largest is "
                     "9223372036854775807)");
      value = value * 10 + digit;
    }
    t.integer = value;
    return t;
  }
  std::string text = t.text.str(); // NUL-terminated for strtod
  double value = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(value))
    return error(start, line, col, "number '" + text + "' is out of range");
  t.number = value;
  return t;
}

Token Lexer::lexString(size_t start, unsigned line, unsigned col) {
  advance(); // opening quote
  std::string value;
  while (true) {
    if (atEnd() || peek() == '\n')
      return error(start, line, col, "unterminated string");
    char c = peek();
    if (c == '"') {
      advance();
      break;
    }
    if (c == '\\') {
      unsigned escLine = line_, escCol = col_;
      size_t escStart = pos_;
      advance();
      char e = peek();
      switch (e) {
      case '"': value += '"'; break;
      case '\\': value += '\\'; break;
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      default:
        if (atEnd() || e == '\n')
          return error(start, line, col, "unterminated string");
        return error(escStart, escLine, escCol,
                     "unknown escape sequence: backslash then " +
                         describeByte(e) + " (known: \\\" \\\\ \\n \\t)");
      }
      advance();
      continue;
    }
    value += c;
    advance();
  }
  Token t = make(TokenKind::String, start, line, col);
  t.string = std::move(value);
  return t;
}

} // namespace tfc
