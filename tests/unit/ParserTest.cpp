//===- ParserTest.cpp - the .tf lexer and parser --------------------------===//
//
// Tokens, precedence, the train block, and inputs that are not programs
// (built sanitized too: TfcParserTestSanitized in tests/fuzz).
//
//===----------------------------------------------------------------------===//

#include "compiler/frontend/Lexer.h"
#include "compiler/frontend/Parser.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

using namespace tfc;

// LLVM's BumpPtrAllocator poisons and unpoisons its slabs from inline code
// when compiled with ASan; libMLIR.so is not, so memory it hands out from a
// slab our code poisoned reads as "use-after-poison". Ignore manual poisoning.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_odr_violation=0";
}

namespace {

std::vector<Token> lexAll(llvm::StringRef source) {
  Lexer lexer(source);
  std::vector<Token> tokens;
  do
    tokens.push_back(lexer.next());
  while (!tokens.back().is(TokenKind::Eof) && !tokens.back().is(TokenKind::Error));
  return tokens;
}

std::vector<TokenKind> kinds(llvm::StringRef source) {
  std::vector<TokenKind> out;
  for (const Token &t : lexAll(source))
    out.push_back(t.kind);
  return out;
}

/// Parses `source`, collecting the diagnostics instead of printing them.
struct Parsed {
  mlir::MLIRContext context;
  FrontendResult result;
  std::vector<std::string> errors;
  std::vector<std::string> notes;

  explicit Parsed(llvm::StringRef source, FrontendOptions options = {})
      : context(mlir::MLIRContext::Threading::DISABLED) {
    context.loadDialect<tf::TFDialect, mlir::func::FuncDialect>();
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      (d.getSeverity() == mlir::DiagnosticSeverity::Error ? errors : notes)
          .push_back(d.str());
      return mlir::success();
    });
    result = parseTfSource(source, "test.tf", context, options);
  }
  mlir::func::FuncOp func() {
    return *result.module->getBody()->getOps<mlir::func::FuncOp>().begin();
  }
  std::string firstError() const { return errors.empty() ? "" : errors.front(); }
};

/// The dimension an integer constant expression gives an input.
int64_t evalDim(const std::string &expr) {
  Parsed p("model m {\n  param a = 2\n  input x: f32[" + expr + "]\n  output x\n}\n");
  EXPECT_TRUE(p.result.module) << expr << ": " << p.firstError();
  if (!p.result.module)
    return -1;
  auto type = llvm::cast<mlir::RankedTensorType>(p.func().getArgumentTypes()[0]);
  return type.getDimSize(0);
}

/// The names of the ops the model's body creates, in order.
std::vector<std::string> opNames(const std::string &body) {
  Parsed p("model m {\n  input a: f32[4, 4]\n  input b: f32[4, 4]\n  input c: f32[4, 4]\n"
           "  output y = " + body + "\n}\n");
  EXPECT_TRUE(p.result.module) << body << ": " << p.firstError();
  std::vector<std::string> names;
  if (p.result.module)
    p.func().walk([&](mlir::Operation *op) {
      llvm::StringRef name = op->getName().getStringRef();
      if (name != "tf.broadcast_in_dim" && name != "tf.constant" &&
          name != "func.return" && name != "func.func")
        names.push_back(name.str());
    });
  return names;
}

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

TEST(Lexer, TokensAndPositions) {
  std::vector<Token> t = lexAll("let x = a @ b  # comment\n  x <= 1.5e-3");
  std::vector<TokenKind> expected = {
      TokenKind::KwLet, TokenKind::Identifier, TokenKind::Equal,   TokenKind::Identifier,
      TokenKind::At,    TokenKind::Identifier, TokenKind::Newline, TokenKind::Identifier,
      TokenKind::LessEq, TokenKind::Float,     TokenKind::Eof};
  ASSERT_EQ(t.size(), expected.size());
  for (size_t i = 0; i < t.size(); ++i)
    EXPECT_EQ(t[i].kind, expected[i]) << i;
  EXPECT_EQ(t[1].text, "x");
  EXPECT_EQ(t[7].line, 2u);
  EXPECT_EQ(t[7].col, 3u);
  EXPECT_DOUBLE_EQ(t[9].number, 1.5e-3);
}

TEST(Lexer, Operators) {
  EXPECT_EQ(kinds("== != < <= > >= + - * / @ : ,"),
            (std::vector<TokenKind>{TokenKind::EqEq, TokenKind::NotEq, TokenKind::Less,
                                    TokenKind::LessEq, TokenKind::Greater,
                                    TokenKind::GreaterEq, TokenKind::Plus, TokenKind::Minus,
                                    TokenKind::Star, TokenKind::Slash, TokenKind::At,
                                    TokenKind::Colon, TokenKind::Comma, TokenKind::Eof}));
}

TEST(Lexer, KeywordsAndContextualNames) {
  std::vector<Token> t = lexAll("def model train let return true false param batch input");
  EXPECT_EQ(t[0].kind, TokenKind::KwDef);
  EXPECT_EQ(t[4].kind, TokenKind::KwReturn);
  EXPECT_EQ(t[6].kind, TokenKind::KwFalse);
  for (size_t i = 7; i < 10; ++i)
    EXPECT_EQ(t[i].kind, TokenKind::Identifier);
}

TEST(Lexer, NewlinesInsideBracketsAreSkipped) {
  EXPECT_EQ(kinds("f(a,\n b)\n[1,\n2]\n\n\nx"),
            (std::vector<TokenKind>{TokenKind::Identifier, TokenKind::LParen,
                                    TokenKind::Identifier, TokenKind::Comma,
                                    TokenKind::Identifier, TokenKind::RParen,
                                    TokenKind::Newline, TokenKind::LBracket,
                                    TokenKind::Integer, TokenKind::Comma,
                                    TokenKind::Integer, TokenKind::RBracket,
                                    TokenKind::Newline, TokenKind::Identifier,
                                    TokenKind::Eof}));
}

TEST(Lexer, Numbers) {
  std::vector<Token> t = lexAll("0 42 9223372036854775807 .5 5e-4 1E3 2.0");
  EXPECT_EQ(t[0].integer, 0);
  EXPECT_EQ(t[1].integer, 42);
  EXPECT_EQ(t[2].integer, INT64_MAX);
  EXPECT_EQ(t[3].kind, TokenKind::Float);
  EXPECT_DOUBLE_EQ(t[3].number, 0.5);
  EXPECT_DOUBLE_EQ(t[4].number, 5e-4);
  EXPECT_DOUBLE_EQ(t[5].number, 1000.0);
  EXPECT_EQ(t[6].kind, TokenKind::Float);
}

TEST(Lexer, Strings) {
  std::vector<Token> t = lexAll(R"("a \"b\" \\ \n")");
  ASSERT_EQ(t[0].kind, TokenKind::String);
  EXPECT_EQ(t[0].string, "a \"b\" \\ \n");
}

TEST(Lexer, Errors) {
  auto errorOf = [](llvm::StringRef s) {
    Token t = lexAll(s).back();
    EXPECT_EQ(t.kind, TokenKind::Error) << s.str();
    return t.string;
  };
  EXPECT_EQ(errorOf("a $ b"), "unexpected character '$'");
  EXPECT_EQ(errorOf("\"abc"), "unterminated string");
  EXPECT_EQ(errorOf("\"abc\ndef\""), "unterminated string");
  EXPECT_NE(errorOf("9223372036854775808").find("too large"), std::string::npos);
  EXPECT_NE(errorOf("1e999").find("out of range"), std::string::npos);
  EXPECT_NE(errorOf("12abc").find("invalid number"), std::string::npos);
  EXPECT_NE(errorOf("1.").find("expected a digit"), std::string::npos);
  EXPECT_NE(errorOf("1e+").find("exponent"), std::string::npos);
  EXPECT_NE(errorOf(llvm::StringRef("a\0b", 3)).find("byte 0x00"), std::string::npos);
  EXPECT_NE(errorOf("\"\\q\"").find("escape"), std::string::npos);
  EXPECT_NE(errorOf("a ! b").find("!="), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Precedence: unary > '@' > '* /' > '+ -' > comparisons
//===----------------------------------------------------------------------===//

TEST(Precedence, Constants) {
  EXPECT_EQ(evalDim("1 + 2 * 3"), 7);
  EXPECT_EQ(evalDim("(1 + 2) * 3"), 9);
  EXPECT_EQ(evalDim("10 - 4 - 3"), 3);       // left-associative
  EXPECT_EQ(evalDim("24 / 4 / 2"), 3);
  EXPECT_EQ(evalDim("2 * -3 + 10"), 4);      // unary minus binds tightest
  EXPECT_EQ(evalDim("- - 5"), 5);
  EXPECT_EQ(evalDim("a * a * a"), 8);        // params
  EXPECT_EQ(evalDim("batch + 1"), 2);        // batch is 1 by default
  EXPECT_EQ(evalDim("a +\n 1"), 3);          // continued after an operator
}

TEST(Precedence, Tensors) {
  // '@' before '+', '*' before '+', unary before '@', comparisons last.
  EXPECT_EQ(opNames("a + b @ c"), (std::vector<std::string>{"tf.matmul", "tf.add"}));
  EXPECT_EQ(opNames("a @ b + c"), (std::vector<std::string>{"tf.matmul", "tf.add"}));
  EXPECT_EQ(opNames("a - b * c"), (std::vector<std::string>{"tf.mul", "tf.sub"}));
  EXPECT_EQ(opNames("a * b @ c"), (std::vector<std::string>{"tf.matmul", "tf.mul"}));
  EXPECT_EQ(opNames("-a @ b"), (std::vector<std::string>{"tf.neg", "tf.matmul"}));
  EXPECT_EQ(opNames("a + b > c * a"),
            (std::vector<std::string>{"tf.add", "tf.mul", "tf.compare"}));
  EXPECT_EQ(opNames("(a + b) * c"), (std::vector<std::string>{"tf.add", "tf.mul"}));
  EXPECT_EQ(opNames("a / b / c"), (std::vector<std::string>{"tf.div", "tf.div"}));
}

TEST(Precedence, ComparisonsDoNotChain) {
  Parsed p("model m {\n  param x = 1 < 2 < 3\n}\n");
  EXPECT_FALSE(p.result.module);
  EXPECT_NE(p.firstError().find("do not chain"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Models, defs and the train block
//===----------------------------------------------------------------------===//

TEST(Parser, TrainBlock) {
  Parsed p(R"(model m {
  input x: f32[batch, 2]
  output x
}
train m {
  data npy(dir: "d")
  batch 8
  epochs 2
  optimizer sgd(lr: 0.1, momentum: 0.9)
  schedule cosine_warmup(warmup: 5)
  clip_grad_norm 1
  seed 7
})");
  ASSERT_TRUE(p.result.module) << p.firstError();
  ASSERT_TRUE(p.result.train);
  const TrainConfig &c = *p.result.train;
  EXPECT_EQ(c.model, "m");
  EXPECT_EQ(c.data->name, "npy");
  EXPECT_EQ(std::get<std::string>(*c.data->get("dir")), "d");
  EXPECT_EQ(*c.batch, 8);
  EXPECT_EQ(*c.epochs, 2);
  EXPECT_EQ(c.optimizer->name, "sgd");
  EXPECT_DOUBLE_EQ(std::get<double>(*c.optimizer->get("momentum")), 0.9);
  EXPECT_EQ(std::get<int64_t>(*c.schedule->get("warmup")), 5);
  EXPECT_DOUBLE_EQ(*c.clipGradNorm, 1.0);
  EXPECT_EQ(*c.seed, 7);
  EXPECT_EQ(p.result.batch, 8);
  EXPECT_TRUE((*p.result.module)->hasAttr(tf::TFDialect::kTrainAttr));
}

TEST(Parser, BatchOverrideAndNote) {
  const char *src = "model m {\n  input x: f32[batch]\n  output x\n}\n";
  Parsed plain(src);
  ASSERT_TRUE(plain.result.module);
  EXPECT_EQ(plain.result.batch, 1);
  ASSERT_EQ(plain.notes.size(), 1u);
  EXPECT_NE(plain.notes[0].find("batch is 1"), std::string::npos);
  FrontendOptions options;
  options.batch = 5;
  Parsed flag(src, options);
  ASSERT_TRUE(flag.result.module);
  EXPECT_EQ(flag.result.batch, 5);
  EXPECT_TRUE(flag.notes.empty());
}

TEST(Parser, ModelSelection) {
  const char *src = "model a {\n  input x: f32[1]\n  output x\n}\n"
                    "model b {\n  input x: f32[2]\n  output x\n}\n";
  Parsed first(src);
  ASSERT_TRUE(first.result.module);
  EXPECT_EQ(first.func().getName(), "a");
  FrontendOptions options;
  options.model = "b";
  Parsed second(src, options);
  ASSERT_TRUE(second.result.module);
  EXPECT_EQ(second.func().getName(), "b");
  options.model = "c";
  Parsed missing(src, options);
  EXPECT_FALSE(missing.result.module);
  EXPECT_NE(missing.firstError().find("no model named 'c'"), std::string::npos);
}

TEST(Parser, DefScopes) {
  Parsed p(R"(def proj(x) {
  return linear(x, 2)
}
model m {
  input x: f32[1, 2]
  let a = proj(x)
  let b = proj(a)
  output y = proj(b, name: "head")
})");
  ASSERT_TRUE(p.result.module) << p.firstError();
  std::vector<std::string> params;
  mlir::func::FuncOp f = p.func();
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (auto name = f.getArgAttrOfType<mlir::StringAttr>(i, "tf.param"))
      params.push_back(name.str());
  EXPECT_EQ(params, (std::vector<std::string>{"proj.linear.weight", "proj.linear.bias",
                                              "proj_1.linear.weight", "proj_1.linear.bias",
                                              "head.linear.weight", "head.linear.bias"}));
}

//===----------------------------------------------------------------------===//
// Inputs that are not programs: one error, no crash, bounded time
//===----------------------------------------------------------------------===//

void expectError(llvm::StringRef source, llvm::StringRef message) {
  auto start = std::chrono::steady_clock::now();
  Parsed p(source);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(p.result.module);
  ASSERT_EQ(p.errors.size(), 1u) << "exactly one error";
  EXPECT_NE(p.errors[0].find(message.str()), std::string::npos) << p.errors[0];
  EXPECT_LT(seconds, 20.0);
}

TEST(Robustness, Empty) { expectError("", "expected a 'model' block"); }

TEST(Robustness, BinaryGarbage) {
  std::string s;
  for (int i = 0; i < 4096; ++i)
    s += static_cast<char>((i * 131) & 0xff);
  expectError(s, "unexpected character");
}

TEST(Robustness, NulBytes) {
  expectError(llvm::StringRef("model m {\n\0\0\n}", 14), "byte 0x00");
}

TEST(Robustness, DeepParentheses) {
  expectError("model m {\n  let x = " + std::string(200000, '(') + "1" +
                  std::string(200000, ')') + "\n}\n",
              "nest deeper than 256");
}

TEST(Robustness, DeepLists) {
  expectError("model m {\n  let x = " + std::string(200000, '[') + "\n}\n",
              "nest deeper than 256");
}

TEST(Robustness, LongRunOfMinuses) {
  Parsed p("model m {\n  param x = " + std::string(1000000, '-') + "1\n  input y: f32[x]\n  output y\n}\n");
  EXPECT_TRUE(p.result.module) << p.firstError();
}

TEST(Robustness, MegabyteIdentifier) {
  std::string name(1 << 20, 'a');
  expectError("model m {\n  let " + name + " = 1\n  output " + name.substr(1) + "\n}\n",
              "unknown name");
}

TEST(Robustness, UnterminatedString) {
  expectError("model m {\n  param s = \"abc", "unterminated string");
}

TEST(Robustness, HugeIntegers) {
  expectError("model m {\n  param n = 99999999999999999999999999\n}\n", "too large");
  expectError("model m {\n  param n = 4611686018427387904 * 2\n}\n", "integer overflow");
  expectError("model m {\n  param n = -9223372036854775807 - 2\n}\n", "integer overflow");
  expectError("model m {\n  param n = 1 / 0\n}\n", "division by zero");
}

TEST(Robustness, DeepDefChain) {
  // 300 defs, each calling the next: deeper than the nesting limit.
  std::string s;
  for (int i = 0; i < 300; ++i)
    s += "def f" + std::to_string(i) + "(x) {\n  return f" + std::to_string(i + 1) +
         "(x)\n}\n";
  s += "def f300(x) {\n  return x\n}\nmodel m {\n  input x: f32[2]\n  output y = f0(x)\n}\n";
  expectError(s, "nest deeper than 256");
}

TEST(Robustness, ExponentialInlining) {
  // Each def calls the next twice: 2^40 calls unless bounded.
  std::string s;
  for (int i = 0; i < 40; ++i)
    s += "def f" + std::to_string(i) + "(x) {\n  return f" + std::to_string(i + 1) +
         "(x) + f" + std::to_string(i + 1) + "(x)\n}\n";
  s += "def f40(x) {\n  return x\n}\nmodel m {\n  input x: f32[2]\n  output y = f0(x)\n}\n";
  expectError(s, "statements through def calls");
}

TEST(Robustness, ManyDuplicateNames) {
  std::string names;
  for (int i = 0; i < 100000; ++i)
    names += "a" + std::to_string(i) + ", ";
  expectError("model m {\n  let " + names + "a0 = 1\n}\n", "bound twice");
}

TEST(Robustness, Recursion) {
  expectError("def f(x) {\n  return f(x)\n}\nmodel m {\n  input x: f32[2]\n"
              "  output y = f(x)\n}\n",
              "recursive call: 'f' -> 'f'");
}

} // namespace
