//===- HalfTest.cpp - f16 and bf16 rounding -------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>
#include <cstring>

using namespace fa;

namespace {

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(0.1f), 0x2e66);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // ties to even: infinity
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xfc00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400); // smallest normal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000); // tie to even: 0
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -26)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002); // tie to even: 2
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie: even
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02); // tie: even
  uint16_t nan = floatToHalf(NAN);
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0xfbff), -65504.0f);
}

// Every finite half survives float and back; every midpoint between two
// neighbouring halves rounds to the even one, and anything off the midpoint
// to the nearer one.
TEST(HalfTest, ExhaustiveRoundTripAndTies) {
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    for (uint16_t sign : {0, 0x8000}) {
      uint16_t bits = uint16_t(h | sign);
      ASSERT_EQ(floatToHalf(halfToFloat(bits)), bits) << std::hex << bits;
    }
    if (h == 0x7bff)
      break;
    double lo = halfToFloat(uint16_t(h)), hi = halfToFloat(uint16_t(h + 1));
    float mid = float((lo + hi) / 2); // exact: needs 12 significant bits
    ASSERT_EQ(double(mid), (lo + hi) / 2);
    uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
    ASSERT_EQ(floatToHalf(mid), even) << std::hex << h;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, 0.0f)), h) << std::hex << h;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, INFINITY)), h + 1)
        << std::hex << h;
  }
}

TEST(HalfTest, Bf16) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(-3.0f), 0xc040);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(3.0f, -8)), 0x3f82);
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
            0x3f81);
  EXPECT_EQ(floatToBf16(3.4e38f), 0x7f80); // rounds up to infinity
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
  for (uint32_t b = 0; b < 0x7f80; ++b)
    ASSERT_EQ(floatToBf16(bf16ToFloat(uint16_t(b))), b);
}

TEST(HalfTest, EncodeDecodeByDType) {
  std::vector<float> v = {1.0f, -0.5f, 0.1f, 3.0f};
  for (DType t : {DType::F16, DType::BF16, DType::F32}) {
    std::vector<uint8_t> bytes = encodeElements(t, v);
    EXPECT_EQ(bytes.size(), v.size() * dtypeBytes(t));
    std::vector<float> back = decodeElements(t, bytes.data(), v.size());
    for (size_t i = 0; i < v.size(); ++i)
      EXPECT_EQ(back[i], roundTo(t, v[i])) << dtypeName(t);
  }
  std::vector<uint8_t> f16 = encodeElements(DType::F16, {1.0f});
  EXPECT_EQ(f16, (std::vector<uint8_t>{0x00, 0x3c})); // little-endian
  EXPECT_EQ(parseDType("bf16"), DType::BF16);
  EXPECT_FALSE(parseDType("f64").has_value());
}

} // namespace
