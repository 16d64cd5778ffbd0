//===- JsonTest.cpp - Strict JSON reading and quoting ---------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "fa/Json.h"
#include "core/JsonParse.h"
#include "TestUtil.h"

using namespace fa;
using namespace fa::detail;

namespace {

std::string parseErrorOf(const std::string &text) {
  Expected<JsonDocument> v = parseJson(text);
  EXPECT_FALSE(v.ok()) << "accepted: " << text;
  if (v)
    return "";
  EXPECT_EQ(v.status().code(), ErrorCode::ManifestError);
  return v.status().message();
}

TEST(JsonTest, ParsesValues) {
  Expected<JsonDocument> v = parseJson(
      R"( {"a": [1, -2.5e3, true, false, null],
           "s": "x\"\\\/\n\u00e9\ud83d\ude00",
           "big": 9007199254740993, "huge": 9223372036854775808,
           "o": {}} )");
  FA_ASSERT_OK(v);
  ASSERT_TRUE(v->is_object());
  const Json *a = jsonFind(*v, "a");
  ASSERT_TRUE(a && a->is_array());
  ASSERT_EQ(a->size(), 5u);
  int64_t i = 0;
  EXPECT_TRUE(jsonInteger((*a)[0], i));
  EXPECT_EQ(i, 1);
  EXPECT_FALSE(jsonInteger((*a)[1], i));
  EXPECT_EQ((*a)[1].get<double>(), -2500.0);
  EXPECT_TRUE((*a)[2].get<bool>());
  EXPECT_FALSE((*a)[3].get<bool>());
  EXPECT_TRUE((*a)[4].is_null());
  EXPECT_EQ(jsonFind(*v, "s")->get<std::string>(),
            "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(jsonInteger(*jsonFind(*v, "big"), i));
  EXPECT_EQ(i, 9007199254740993LL);                    // exact
  EXPECT_FALSE(jsonInteger(*jsonFind(*v, "huge"), i)); // above INT64_MAX
  EXPECT_TRUE(jsonFind(*v, "o")->is_object());
  EXPECT_EQ(jsonFind(*v, "missing"), nullptr);
  EXPECT_EQ(jsonFind(*a, "a"), nullptr); // not an object
  // Members keep source order.
  EXPECT_EQ(v->begin().key(), "a");
  EXPECT_STREQ(jsonKindName(*a), "an array");
  EXPECT_STREQ(jsonKindName((*a)[1]), "a number");
}

TEST(JsonTest, ReportsLineAndColumn) {
  EXPECT_EQ(parseErrorOf("{\n  \"a\": 1,\n  \"b\": [1 2]\n}"),
            "line 3, column 11: syntax error while parsing array - unexpected "
            "number literal; expected ']'");
  EXPECT_EQ(parseErrorOf("{\"fa_manifest_version\": 1,"),
            "line 1, column 27: syntax error while parsing object key - "
            "unexpected end of input; expected string literal");
}

TEST(JsonTest, RejectsMalformedInput) {
  const char *bad[] = {"",          "{",           "[1,]",    "{\"a\":1,}",
                       "{'a': 1}",  "01",          "1.",      "-",
                       "\"\\x\"",   "\"abc",       "[1] [2]", "nan",
                       "{\"a\" 1}", "\"\\ud800\"", "1e999",   "\"a\nb\"",
                       "\"\xff\"",  "// c\n1",     "[1]]"};
  for (const char *text : bad)
    parseErrorOf(text);
  EXPECT_EQ(parseErrorOf("1e999"), "number overflow parsing '1e999'");
}

// nlohmann keeps the last of two equal keys; a manifest must not say two
// things at once.
TEST(JsonTest, RejectsDuplicateKeys) {
  EXPECT_EQ(parseErrorOf("{\"a\": 1, \"a\": 2}"), "duplicate key \"a\"");
  EXPECT_EQ(parseErrorOf("{\"o\": {\"b\": 1, \"c\": 2, \"b\": 3}}"),
            "duplicate key \"b\"");
  // The same key in different objects is fine.
  FA_ASSERT_OK(
      parseJson("{\"a\": {\"a\": 1}, \"b\": [{\"a\": 1}, {\"a\": 2}]}"));
}

TEST(JsonTest, LimitsNesting) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_EQ(parseErrorOf(deep), "nesting deeper than 64");
  std::string deepObjects;
  for (int i = 0; i < 100; ++i)
    deepObjects += "{\"a\":";
  EXPECT_EQ(parseErrorOf(deepObjects), "nesting deeper than 64");
  std::string ok(60, '[');
  ok += std::string(60, ']');
  FA_ASSERT_OK(parseJson(ok));
}

TEST(JsonTest, QuoteRoundTrips) {
  std::string s = "tab\there \"quoted\" back\\slash\nnew \x01 end \xc3\xa9";
  Expected<JsonDocument> v = parseJson(jsonQuote(s));
  FA_ASSERT_OK(v);
  EXPECT_EQ(v->get<std::string>(), s);
  // Not UTF-8: replaced, not thrown.
  EXPECT_EQ(jsonQuote("a\xff"), "\"a\xef\xbf\xbd\"");
}

} // namespace
