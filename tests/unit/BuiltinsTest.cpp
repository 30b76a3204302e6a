//===- BuiltinsTest.cpp - the reference of the .tf built-ins --------------===//
//
// `tfc builtins` prints the parser's own table (Parser.cpp), so the
// reference lists exactly what the parser accepts. These tests keep the
// rest of it true: every built-in and argument is described, and every
// example compiles, in a model that declares builtinExampleInputs(), to a
// result of the type the reference says.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontend/Parser.h"
#include "dialect/TfDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace tfc;

namespace {

/// "f32[2, 4, 16]", as the reference writes a type.
std::string typeText(mlir::Type type) {
  auto tensor = llvm::cast<mlir::RankedTensorType>(type);
  mlir::Type element = tensor.getElementType();
  std::string s = element.isF32()                    ? "f32"
                  : element.isInteger(32)            ? "i32"
                  : element.isInteger(1)             ? "bool"
                                                     : "?";
  s += "[";
  for (auto [i, d] : llvm::enumerate(tensor.getShape()))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// Compiles `example` in a model with the example inputs; the type of its
/// result as the reference writes it, or the first error.
std::string compileExample(llvm::StringRef example, llvm::StringRef exampleType,
                           std::string &error) {
  bool tuple = exampleType.starts_with("(");
  std::string source = "model example {\n";
  for (llvm::StringRef line : llvm::split(builtinExampleInputs(), '\n'))
    if (!line.empty())
      source += "  " + line.str() + "\n";
  source += tuple ? "  let r0, r1 = " + example.str() + "\n  output r0\n  output r1\n"
                  : "  output r = " + example.str() + "\n";
  source += "}\n";

  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<tf::TFDialect, mlir::func::FuncDialect>();
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error && error.empty())
      error = d.str();
    return mlir::success();
  });
  FrontendOptions options;
  options.batch = 2;
  FrontendResult result = parseTfSource(source, "example.tf", context, options);
  if (!result.module)
    return "";
  auto func = *result.module->getBody()->getOps<mlir::func::FuncOp>().begin();
  std::vector<std::string> types;
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (func.getResultAttr(i, "tf.output"))
      types.push_back(typeText(type));
  if (!tuple)
    return types.size() == 1 ? types.front() : "";
  std::string s = "(";
  for (auto [i, t] : llvm::enumerate(types))
    s += (i ? ", " : "") + t;
  return s + ")";
}

TEST(Builtins, EveryOneIsDescribed) {
  std::vector<BuiltinDoc> docs = builtinReference();
  ASSERT_GE(docs.size(), 40u);
  llvm::StringSet<> names;
  for (const BuiltinDoc &d : docs) {
    SCOPED_TRACE(d.name.str());
    EXPECT_TRUE(names.insert(d.name).second) << "listed twice";
    EXPECT_FALSE(d.section.empty());
    EXPECT_FALSE(d.description.empty());
    EXPECT_FALSE(d.shape.empty());
    EXPECT_FALSE(d.example.empty());
    EXPECT_FALSE(d.exampleType.empty());
    EXPECT_FALSE(d.args.empty());
    for (const BuiltinArgDoc &a : d.args) {
      SCOPED_TRACE(a.name.str());
      EXPECT_FALSE(a.kind.empty());
      EXPECT_FALSE(a.description.empty());
      // A required argument has no default; an optional one says its own.
      EXPECT_EQ(a.required, a.defaultText.empty());
      EXPECT_EQ(a.defaultText.find("{fn}"), std::string::npos);
    }
  }
}

TEST(Builtins, EveryExampleCallsItsBuiltin) {
  for (const BuiltinDoc &d : builtinReference())
    EXPECT_NE(d.example.find(d.name.str() + "("), llvm::StringRef::npos)
        << d.name.str() << ": " << d.example.str();
}

TEST(Builtins, EveryExampleCompilesToItsType) {
  for (const BuiltinDoc &d : builtinReference()) {
    std::string error;
    std::string type = compileExample(d.example, d.exampleType, error);
    EXPECT_TRUE(error.empty()) << d.name.str() << ": " << d.example.str() << ": " << error;
    EXPECT_EQ(type, d.exampleType.str()) << d.name.str() << ": " << d.example.str();
  }
}

TEST(Builtins, ExamplesCheckTheirTypes) {
  // The check above compares what was built, not what the reference says.
  std::string error;
  EXPECT_EQ(compileExample("linear(x, 16)", "f32[2, 4, 16]", error), "f32[2, 4, 16]");
  EXPECT_EQ(compileExample("argmax(x)", "i32[2, 4]", error), "i32[2, 4]");
  EXPECT_EQ(compileExample("linear(x, 16, bais: false)", "f32[2, 4, 16]", error), "");
  EXPECT_NE(error.find("did you mean 'bias'?"), std::string::npos) << error;
}

TEST(Builtins, BareInitialisers) {
  std::vector<std::string> names;
  for (const auto &[name, draws] : bareInitialisers()) {
    names.push_back(name.str());
    EXPECT_FALSE(draws.empty()) << name.str();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"zeros", "ones", "xavier", "kaiming"}));
}

} // namespace
