//===- CApiTest.cpp - The compiler's C API against fac
//---------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa_compile.h is what a binding or an AOT tool calls; fac is what users
// run. This test compiles the example through the C API and checks that the
// code object and the manifest are byte for byte what fac writes, for the
// host, gfx906 and sm_90 targets; then the C API's errors.
//
//===----------------------------------------------------------------------===//

#include "fa/fa_compile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

extern "C" int fa_compile_c_check(const char *source, unsigned long size);

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Options {
  fa_compile_options *o = fa_compile_options_create();
  ~Options() { fa_compile_options_destroy(o); }
};
struct Result {
  fa_compile_result *r;
  ~Result() { fa_compile_result_destroy(r); }
};

std::string exampleSource() {
  return readFile(std::string(FA_TEST_SOURCE_DIR) + "/examples/attention.mlir");
}

/// fac's code object and manifest for `target`, in a scratch folder.
void runFac(const std::string &target, const std::string &name,
            std::string &code, std::string &manifest) {
  std::string dir = std::string(FA_TEST_WORK_DIR) + "/capi-" + target;
  std::string out = dir + "/" + name;
  std::string cmd = "mkdir -p '" + dir + "' && '" FA_TEST_FAC "' '" +
                    FA_TEST_SOURCE_DIR +
                    "/examples/attention.mlir' --target=" + target + " -o '" +
                    out + "' 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  code = readFile(out);
  manifest = readFile(out + ".json");
}

class CApiMatchesFac : public ::testing::TestWithParam<const char *> {};

TEST_P(CApiMatchesFac, SameCodeObjectAndManifest) {
  std::string target = GetParam();
  std::string name = "attention-" + target + ".bin";
  std::string facCode, facManifest;
  runFac(target, name, facCode, facManifest);
  ASSERT_FALSE(facCode.empty());

  Options options;
  ASSERT_EQ(fa_compile_options_set(options.o, "target", target.c_str()), 0);
  ASSERT_EQ(fa_compile_options_set(options.o, "name", name.c_str()), 0);
  std::string source = exampleSource();
  Result result{fa_compile(source.data(), source.size(),
                           FA_TEST_SOURCE_DIR "/examples/attention.mlir",
                           options.o)};
  ASSERT_TRUE(result.r);
  ASSERT_EQ(fa_compile_result_ok(result.r), 1)
      << fa_compile_result_error(result.r);
  size_t size = 0;
  const void *bytes = fa_compile_result_output(result.r, &size);
  std::string code(static_cast<const char *>(bytes), size);
  EXPECT_EQ(code.size(), facCode.size());
  EXPECT_TRUE(code == facCode) << "code object differs from fac's";
  EXPECT_EQ(std::string(fa_compile_result_manifest(result.r)), facManifest);
  EXPECT_STREQ(fa_compile_result_error(result.r), "");
}

INSTANTIATE_TEST_SUITE_P(Targets, CApiMatchesFac,
                         ::testing::Values("host", "gfx906", "sm_90"));

TEST(CApi, ReportAndRemarksAreReturnedNotPrinted) {
  Options options;
  ASSERT_EQ(fa_compile_options_set(options.o, "target", "gfx906"), 0);
  ASSERT_EQ(fa_compile_options_set(options.o, "report", "true"), 0);
  std::string source = exampleSource();
  Result result{
      fa_compile(source.data(), source.size(), "attention.mlir", options.o)};
  ASSERT_EQ(fa_compile_result_ok(result.r), 1);
  EXPECT_STREQ(fa_compile_result_format(result.r), "hsaco");
  std::string report = fa_compile_result_report(result.r);
  EXPECT_NE(report.find("VGPRs"), std::string::npos) << report;
  ASSERT_GT(fa_compile_result_diagnostic_count(result.r), 0u);
  int severity = -1;
  std::string first = fa_compile_result_diagnostic(result.r, 0, &severity);
  EXPECT_EQ(severity, FA_COMPILE_REMARK);
  EXPECT_EQ(first.rfind("attention.mlir:", 0), 0u) << first;
  EXPECT_NE(first.find("remark: tile config for gfx906"), std::string::npos);
  EXPECT_EQ(
      fa_compile_result_diagnostic(
          result.r, fa_compile_result_diagnostic_count(result.r), nullptr),
      nullptr);
}

TEST(CApi, EmitTextHasNoManifest) {
  Options options;
  ASSERT_EQ(fa_compile_options_set(options.o, "target", "host"), 0);
  ASSERT_EQ(fa_compile_options_set(options.o, "emit", "mlir"), 0);
  std::string source = exampleSource();
  Result result{fa_compile(source.data(), source.size(), "a.mlir", options.o)};
  ASSERT_EQ(fa_compile_result_ok(result.r), 1);
  size_t size = 0;
  const void *bytes = fa_compile_result_output(result.r, &size);
  std::string text(static_cast<const char *>(bytes), size);
  EXPECT_NE(text.find("gpu.func @attention_kernel"), std::string::npos);
  EXPECT_STREQ(fa_compile_result_manifest(result.r), "");
  EXPECT_STREQ(fa_compile_result_format(result.r), "mlir");
}

TEST(CApi, ErrorsCarryTheSourceLocation) {
  Options options;
  ASSERT_EQ(fa_compile_options_set(options.o, "target", "host"), 0);
  const char *bad = "func.func @f(%q: tensor<?x?x?x64xf16>) {\n"
                    "  %o = fa.attention %q, %q : tensor<?x?x?x64xf16>\n"
                    "  return\n}\n";
  Result result{
      fa_compile(bad, std::string(bad).size(), "bad.mlir", options.o)};
  ASSERT_TRUE(result.r);
  EXPECT_EQ(fa_compile_result_ok(result.r), 0);
  std::string error = fa_compile_result_error(result.r);
  EXPECT_EQ(error.rfind("bad.mlir:2:", 0), 0u) << error;
  EXPECT_NE(error.find("error:"), std::string::npos) << error;
  size_t size = 1;
  fa_compile_result_output(result.r, &size);
  EXPECT_EQ(size, 0u);
}

TEST(CApi, OptionErrors) {
  Options options;
  EXPECT_EQ(fa_compile_options_set(options.o, "block-m", "many"), -1);
  EXPECT_STREQ(fa_compile_options_error(options.o),
               "option 'block-m' expects an integer, got 'many'");
  EXPECT_EQ(fa_compile_options_set(options.o, "colour", "blue"), -1);
  EXPECT_STREQ(fa_compile_options_error(options.o), "unknown option 'colour'");
  EXPECT_EQ(fa_compile_options_set(options.o, "index-bits", "16"), -1);
  EXPECT_STREQ(fa_compile_options_error(options.o),
               "--index-bits must be 32 or 64, got 16");
  EXPECT_EQ(fa_compile_options_set(options.o, "pad-lds", "maybe"), -1);
  EXPECT_EQ(fa_compile_options_set(options.o, "target", "gfx1234"), 0);
  EXPECT_STREQ(fa_compile_options_error(options.o), "");
  // An unknown target is the compilation's error, in fac's words.
  std::string source = exampleSource();
  Result result{fa_compile(source.data(), source.size(), "a.mlir", options.o)};
  EXPECT_EQ(fa_compile_result_ok(result.r), 0);
  EXPECT_STREQ(fa_compile_result_error(result.r),
               "unknown target 'gfx1234'; known targets: gfx906, sm_90, "
               "sm_80, host");
  EXPECT_EQ(fa_compile(nullptr, 0, "x", options.o), nullptr);
  EXPECT_EQ(fa_compile("", 0, "x", nullptr), nullptr);
}

TEST(CApi, CallableFromC) {
  std::string source = exampleSource();
  EXPECT_EQ(fa_compile_c_check(source.data(), source.size()), 0);
}

} // namespace
