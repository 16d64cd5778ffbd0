//===- GoldenTest.cpp - Our reference and kernels vs independent vectors --===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The golden vectors come from an independent float64 implementation; they
// pin the conventions (causal alignment, GQA mapping, empty rows, LSE) that
// our reference and our kernels could otherwise share a bug in.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"

#include <cmath>

using namespace fa;

namespace {

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, Fp64ReferenceMatchesGoldenVectors) {
  Expected<GoldenCase> g = loadGoldenCase(test::goldenPath(GetParam()));
  FA_ASSERT_OK(g);
  EXPECT_EQ(g->name, GetParam());
  AttentionResult<double> ref = referenceAttentionF64(g->problem, g->inputs);
  ASSERT_EQ(ref.o.size(), g->oRef.size());
  // The golden outputs are float64 results rounded to float32: ours must
  // agree to float32 rounding.
  for (size_t i = 0; i < ref.o.size(); ++i)
    ASSERT_NEAR(ref.o[i], g->oRef[i], 1e-6 * std::max(1.0, std::fabs(ref.o[i])))
        << "output element " << i;
  int64_t empty = 0;
  for (size_t i = 0; i < ref.lse.size(); ++i) {
    bool refEmpty = std::isinf(ref.lse[i]);
    ASSERT_EQ(refEmpty, std::isinf(g->lseRef[i])) << "row " << i;
    if (refEmpty) {
      ++empty;
      EXPECT_LT(ref.lse[i], 0);
      EXPECT_LT(g->lseRef[i], 0);
      continue;
    }
    ASSERT_NEAR(ref.lse[i], g->lseRef[i],
                1e-6 * std::max(1.0, std::fabs(ref.lse[i])))
        << "row " << i;
  }
  EXPECT_EQ(empty, g->emptyRows);
}

/// The fixture kernel compiled with each case's dtype, D, causal and scale.
std::string fixtureFor(const std::string &golden) {
  if (golden == "f16_d128_causal_l256_scale0.5_outliers")
    return "attn_f16_d128_causal_s05";
  if (golden == "f16_d128_gqa_causal_lq77_lk203_outliers")
    return "attn_f16_d128_causal";
  if (golden == "f16_d64_causal_lq203_lk77_masked_rows")
    return "attn_f16_causal";
  if (golden == "f16_d64_l128")
    return "attn_f16";
  if (golden == "f32_d128_decode_lq1_lk300")
    return "attn_f32_d128";
  return "attn_f32";
}

TEST_P(GoldenTest, FixtureKernelPassesOnGoldenCase) {
  Expected<GoldenCase> g = loadGoldenCase(test::goldenPath(GetParam()));
  FA_ASSERT_OK(g);
  Expected<Module> m = Module::load(test::hostDevice(),
                                    test::fixturePath(fixtureFor(GetParam())));
  FA_ASSERT_OK(m);
  ValidationOptions o;
  o.golden = &*g;
  Expected<ValidationReport> r = validateKernel(m->kernel().take(), o);
  FA_ASSERT_OK(r);
  EXPECT_EQ(r->golden, GetParam());
  for (const Check &c : r->verdict.checks)
    EXPECT_TRUE(c.pass) << c.text;
}

INSTANTIATE_TEST_SUITE_P(AllCases, GoldenTest,
                         ::testing::ValuesIn(test::goldenCases()),
                         [](const auto &info) {
                           std::string n = info.param;
                           for (char &c : n)
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return n;
                         });

TEST(GoldenLoaderTest, MismatchedKernelIsRefused) {
  Expected<GoldenCase> g = loadGoldenCase(test::goldenPath("f16_d64_l128"));
  FA_ASSERT_OK(g);
  Status s = checkGoldenMatchesKernel(
      *g, test::fixtureManifest("attn_f32").kernels[0]);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message(),
            "golden case 'f16_d64_l128' (dtype f16, D=64, causal=false, "
            "scale=0.125) does not match kernel 'attn_f32' (dtype f32, D=64, "
            "causal=false, scale=0.125)");
}

TEST(GoldenLoaderTest, ReportsMissingAndShortFiles) {
  Expected<GoldenCase> missing = loadGoldenCase("/nonexistent/case");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::NotFound);

  test::ScratchDir dir;
  std::string src = test::goldenPath("f32_d64_gqa_l100");
  for (const char *f :
       {"meta.json", "k.bin", "v.bin", "o_ref_f32.bin", "lse_ref_f32.bin"})
    test::writeBytes(dir.file(f), test::readBytes(src + "/" + f));
  std::vector<uint8_t> q = test::readBytes(src + "/q.bin");
  q.resize(q.size() - 4);
  test::writeBytes(dir.file("q.bin"), q);
  Expected<GoldenCase> shortQ = loadGoldenCase(dir.path());
  ASSERT_FALSE(shortQ.ok());
  EXPECT_EQ(shortQ.status().message(),
            "golden tensor '" + dir.file("q.bin") +
                "' has 204796 bytes, the shape needs 204800 (51200 f32)");

  test::writeText(dir.file("meta.json"), "{\"name\": \"x\"}");
  Expected<GoldenCase> badMeta = loadGoldenCase(dir.path());
  ASSERT_FALSE(badMeta.ok());
  EXPECT_NE(badMeta.status().message().find("'dtype' missing or not a string"),
            std::string::npos);
}

} // namespace
