//===- FixtureElem.h - Element types of the host fixture kernels -*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// `Elem`, the element type FA_ELEM selects (0 f32, 1 f16, 2 bf16), and its
// conversions to and from float (round to nearest even), for the
// hand-written host-target kernels of test/runtime/kernels (one translation
// unit each, so the definitions are in an anonymous namespace).
//
//===----------------------------------------------------------------------===//

#ifndef FA_TEST_RUNTIME_KERNELS_FIXTUREELEM_H
#define FA_TEST_RUNTIME_KERNELS_FIXTUREELEM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

namespace {

#if FA_ELEM == 0
typedef float Elem;
inline float toFloat(Elem x) { return x; }
inline Elem fromFloat(float x) { return x; }
#else
typedef uint16_t Elem;
inline uint32_t bitsOf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return x;
}
inline float floatOf(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}
#if FA_ELEM == 1
inline float toFloat(Elem h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff;
  if (exp == 0)
    return floatOf(sign | bitsOf(ldexpf(float(mant), -24)));
  if (exp == 31)
    return floatOf(sign | 0x7f800000 | (mant << 13));
  return floatOf(sign | ((exp + 112) << 23) | (mant << 13));
}
inline Elem fromFloat(float f) { // round to nearest even, no NaN inputs
  uint32_t x = bitsOf(f), sign = (x >> 16) & 0x8000, a = x & 0x7fffffff;
  if (a >= 0x477ff000)
    return Elem(sign | 0x7c00);
  if (a < 0x38800000) { // subnormal: let the FPU round (2^-24 units)
    float scaled = floatOf(a) * 16777216.0f;
    return Elem(sign | uint32_t(nearbyintf(scaled)));
  }
  uint32_t h = (a - 0x38000000) >> 13, rem = a & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    ++h;
  return Elem(sign | h);
}
#else
inline float toFloat(Elem h) { return floatOf(uint32_t(h) << 16); }
inline Elem fromFloat(float f) {
  uint32_t x = bitsOf(f);
  return Elem((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
#endif
#endif

} // namespace

#endif // FA_TEST_RUNTIME_KERNELS_FIXTUREELEM_H
