//===- JsonTest.cpp - The JSON reader -------------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "fa/Json.h"
#include "TestUtil.h"

using namespace fa;

namespace {

TEST(JsonTest, ParsesValues) {
  Expected<JsonValue> v = parseJson(
      R"( {"a": [1, -2.5e3, true, false, null],
           "s": "x\"\\\/\n\u00e9\ud83d\ude00",
           "big": 9007199254740993, "o": {}} )");
  FA_ASSERT_OK(v);
  ASSERT_TRUE(v->isObject());
  const JsonValue *a = v->find("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->getArray().size(), 5u);
  EXPECT_TRUE(a->getArray()[0].isInteger());
  EXPECT_EQ(a->getArray()[0].getInteger(), 1);
  EXPECT_FALSE(a->getArray()[1].isInteger());
  EXPECT_EQ(a->getArray()[1].getNumber(), -2500.0);
  EXPECT_TRUE(a->getArray()[2].getBool());
  EXPECT_FALSE(a->getArray()[3].getBool());
  EXPECT_TRUE(a->getArray()[4].isNull());
  EXPECT_EQ(v->find("s")->getString(), "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(v->find("big")->getInteger(), 9007199254740993LL); // exact
  EXPECT_TRUE(v->find("o")->isObject());
  EXPECT_EQ(v->find("missing"), nullptr);
  // Members keep source order.
  EXPECT_EQ(v->getObject()[0].first, "a");
  EXPECT_EQ(v->getObject()[3].first, "o");
}

TEST(JsonTest, ReportsLineAndColumn) {
  Expected<JsonValue> v = parseJson("{\n  \"a\": 1,\n  \"b\": tru\n}");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), ErrorCode::ManifestError);
  EXPECT_EQ(v.status().message(), "line 3, column 8: unexpected character 't'");
}

TEST(JsonTest, RejectsMalformedInput) {
  const char *bad[] = {"",          "{",           "[1,]",    "{\"a\":1,}",
                       "{'a': 1}",  "01",          "1.",      "-",
                       "\"\\x\"",   "\"abc",       "[1] [2]", "nan",
                       "{\"a\" 1}", "\"\\ud800\"", "1e999",   "\"a\nb\""};
  for (const char *text : bad)
    EXPECT_FALSE(parseJson(text).ok()) << "accepted: " << text;
  Expected<JsonValue> dup = parseJson("{\"a\": 1, \"a\": 2}");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("duplicate key \"a\""),
            std::string::npos);
}

TEST(JsonTest, LimitsNesting) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  Expected<JsonValue> v = parseJson(deep);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("nesting deeper than 64"),
            std::string::npos);
  std::string ok(60, '[');
  ok += std::string(60, ']');
  EXPECT_TRUE(parseJson(ok).ok());
}

TEST(JsonTest, QuoteRoundTrips) {
  std::string s = "tab\there \"quoted\" back\\slash\nnew \x01 end";
  Expected<JsonValue> v = parseJson(jsonQuote(s));
  FA_ASSERT_OK(v);
  EXPECT_EQ(v->getString(), s);
}

} // namespace
