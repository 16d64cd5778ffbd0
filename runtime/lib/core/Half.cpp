//===- Half.cpp - float <-> f16 / bf16 conversions ------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the element-type helpers: DType names and sizes, and
// round-to-nearest-even conversions done on the bit patterns.
//
//===----------------------------------------------------------------------===//

#include "fa/Half.h"

#include <cmath>
#include <cstring>

using namespace fa;

const char *fa::dtypeName(DType type) {
  switch (type) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  }
  return "?";
}

std::optional<DType> fa::parseDType(std::string_view name) {
  if (name == "f16")
    return DType::F16;
  if (name == "bf16")
    return DType::BF16;
  if (name == "f32")
    return DType::F32;
  return std::nullopt;
}

size_t fa::dtypeBytes(DType type) { return type == DType::F32 ? 4 : 2; }

static uint32_t floatBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}

static float bitsFloat(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t fa::floatToHalf(float value) {
  uint32_t x = floatBits(value);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000) // infinity stays, NaN stays NaN (made quiet)
    return uint16_t(
        sign | (absx > 0x7f800000 ? 0x7e00 | ((absx >> 13) & 0x3ff) : 0x7c00));
  if (absx >= 0x477ff000) // >= 65520: rounds past 65504 to infinity
    return uint16_t(sign | 0x7c00);
  if (absx < 0x38800000) {  // below 2^-14: half subnormal or zero
    if (absx <= 0x33000000) // <= 2^-25: rounds (ties to even) to zero
      return uint16_t(sign);
    uint32_t exp = absx >> 23;
    uint32_t mant = (absx & 0x7fffff) | 0x800000;
    // value = mant * 2^(exp-150); in units of 2^-24 that is mant >> shift.
    uint32_t shift = 126 - exp;
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q;
    return uint16_t(sign | q);
  }
  uint32_t h = (absx - 0x38000000) >> 13; // rebias 127 -> 15
  uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    ++h; // a carry into the exponent is the correct rounding
  return uint16_t(sign | h);
}

float fa::halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exp = (bits >> 10) & 0x1f;
  uint32_t mant = bits & 0x3ff;
  if (exp == 0) {
    float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31)
    return bitsFloat(sign | 0x7f800000 | (mant << 13));
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t fa::floatToBf16(float value) {
  uint32_t x = floatBits(value);
  if ((x & 0x7fffffff) > 0x7f800000)
    return uint16_t((x >> 16) | 0x40); // quiet NaN
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

float fa::bf16ToFloat(uint16_t bits) { return bitsFloat(uint32_t(bits) << 16); }

float fa::roundTo(DType type, float value) {
  switch (type) {
  case DType::F16:
    return halfToFloat(floatToHalf(value));
  case DType::BF16:
    return bf16ToFloat(floatToBf16(value));
  case DType::F32:
    return value;
  }
  return value;
}

std::vector<uint8_t> fa::encodeElements(DType type,
                                        const std::vector<float> &values) {
  std::vector<uint8_t> out(values.size() * dtypeBytes(type));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DType::F32) {
      std::memcpy(&out[i * 4], &values[i], 4);
      continue;
    }
    uint16_t h =
        type == DType::F16 ? floatToHalf(values[i]) : floatToBf16(values[i]);
    out[i * 2] = uint8_t(h & 0xff);
    out[i * 2 + 1] = uint8_t(h >> 8);
  }
  return out;
}

std::vector<float> fa::decodeElements(DType type, const uint8_t *bytes,
                                      size_t count) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    if (type == DType::F32) {
      std::memcpy(&out[i], bytes + i * 4, 4);
      continue;
    }
    uint16_t h = uint16_t(bytes[i * 2] | (bytes[i * 2 + 1] << 8));
    out[i] = type == DType::F16 ? halfToFloat(h) : bf16ToFloat(h);
  }
  return out;
}
