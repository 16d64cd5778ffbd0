//===- CompileTest.cpp - fa::compile, the compiler as a library
//------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa::compile holds what fac does: these tests call it directly and check
// that a parsed module and its text compile alike, that the backend-judged
// retries of gfx906 happen inside the library and say so in its
// diagnostics, and that option names map to the fields fac sets.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Compile.h"
#include "compiler/Driver/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace mlir;

namespace {

std::string exampleSource() {
  std::ifstream in(std::string(FA_TEST_SOURCE_DIR) +
                   "/examples/attention.mlir");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A D=128 kernel with dynamic sizes: on gfx906, K of block n+1 kept in
/// registers across P*V spills, and fac falls back to fetch-ahead=in-block.
const char *d128Source =
    "func.func @attention(%q: tensor<?x?x?x128xf16>, %k: "
    "tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> "
    "tensor<?x?x?x128xf16> {\n"
    "  %o = fa.attention %q, %k, %v : tensor<?x?x?x128xf16>, "
    "tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>\n"
    "  return %o : tensor<?x?x?x128xf16>\n}\n";

TEST(Compile, AParsedModuleCompilesLikeItsText) {
  fa::CompileOptions options;
  options.target = "host";
  std::string source = exampleSource();
  fa::CompileResult fromText = fa::compile(source, "attention.mlir", options);
  ASSERT_TRUE(fromText.ok) << fromText.firstError();

  DialectRegistry registry;
  fa::registerFaDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  ASSERT_TRUE(module);
  fa::CompileResult fromModule = fa::compile(*module, source, options);
  ASSERT_TRUE(fromModule.ok) << fromModule.firstError();
  EXPECT_TRUE(fromModule.output == fromText.output);
  EXPECT_EQ(fromModule.manifest, fromText.manifest);
  EXPECT_EQ(fromModule.format, "elf-shared-object");
}

TEST(Compile, Gfx906RetriesAreTheLibrarysAndSaySo) {
  fa::CompileOptions options;
  options.target = "gfx906";
  options.report = true;
  // Without share-rows (which needs fewer registers) next-block spills at
  // D=128 and the library retries with in-block.
  options.shareRows = "off";
  fa::CompileResult r = fa::compile(d128Source, "d128.mlir", options);
  ASSERT_TRUE(r.ok) << r.firstError();
  bool inBlock = false;
  for (const fa::CompileDiagnostic &d : r.diagnostics)
    if (!d.located && d.severity == fa::CompileDiagnostic::Severity::Remark &&
        d.text.find("trying fetch-ahead=in-block") != std::string::npos)
      inBlock = true;
  EXPECT_TRUE(inBlock);
  EXPECT_NE(r.report.find("fetch-ahead=in-block"), std::string::npos)
      << r.report;

  // An explicit fetch distance is kept: no retry, no remark.
  options.fetchAhead = "next-block";
  options.report = false;
  fa::CompileResult kept = fa::compile(d128Source, "d128.mlir", options);
  ASSERT_TRUE(kept.ok) << kept.firstError();
  for (const fa::CompileDiagnostic &d : kept.diagnostics)
    EXPECT_EQ(d.text.find("trying fetch-ahead"), std::string::npos) << d.text;
}

TEST(Compile, LateOptionErrorsAndPlantedBugWarning) {
  fa::CompileOptions options;
  options.target = "host";
  options.fetchAhead = "sideways";
  fa::CompileResult r = fa::compile(exampleSource(), "a.mlir", options);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.firstError(), "--fetch-ahead must be auto, next-block or "
                            "in-block, got 'sideways'");

  options.fetchAhead = "auto";
  options.plantBug = "no-scale";
  fa::CompileResult bug = fa::compile(exampleSource(), "a.mlir", options);
  ASSERT_TRUE(bug.ok) << bug.firstError();
  ASSERT_FALSE(bug.diagnostics.empty());
  EXPECT_EQ(bug.diagnostics.front().severity,
            fa::CompileDiagnostic::Severity::Warning);
  EXPECT_EQ(
      bug.diagnostics.front().text.rfind("planting test bug 'no-scale'", 0),
      0u);
}

TEST(Compile, OptionNamesAreFacs) {
  fa::CompileOptions o;
  ASSERT_FALSE(bool(fa::setCompileOption(o, "block-m", "32")));
  ASSERT_FALSE(bool(fa::setCompileOption(o, "pad-lds", "false")));
  ASSERT_FALSE(bool(fa::setCompileOption(o, "index-bits", "64")));
  ASSERT_FALSE(bool(fa::setCompileOption(o, "fetch-ahead", "in-block")));
  ASSERT_FALSE(bool(fa::setCompileOption(o, "name", "k.hsaco")));
  EXPECT_EQ(o.blockM, 32);
  EXPECT_FALSE(o.padLds);
  EXPECT_EQ(o.indexBits, 64u);
  EXPECT_EQ(o.fetchAhead, "in-block");
  EXPECT_EQ(o.codeObjectName, "k.hsaco");
  llvm::Error e = fa::setCompileOption(o, "o", "x");
  ASSERT_TRUE(bool(e));
  EXPECT_EQ(llvm::toString(std::move(e)), "unknown option 'o'");
}

} // namespace
