//===- VectorUtil.h - Lane loops and bit helpers for the VALU ---*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. Small pure functions the vector semantics share: the loop over
// EXEC lanes, the integer bit operations whose definitions the ISA gives
// (24-bit operands, bitfield extract, byte permute) and the f16 <-> f32
// conversions of the hardware (round to nearest even, denormals kept).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_VECTORUTIL_H
#define FA_LIB_SIM_VECTORUTIL_H

#include "fa/Half.h"
#include "sim/Wave.h"

#include <algorithm>
#include <cstdint>

namespace fa {
namespace sim {

/// Calls f(lane) for each lane set in `exec`; a full wave is a plain loop
/// the compiler can unroll.
template <typename F> inline void forLanes(uint64_t exec, F &&f) {
  if (exec == ~uint64_t(0)) {
    for (unsigned l = 0; l < kWaveLanes; ++l)
      f(l);
    return;
  }
  for (uint64_t m = exec; m; m &= m - 1)
    f(unsigned(__builtin_ctzll(m)));
}

inline int32_t sext24(uint32_t x) { return int32_t(x << 8) >> 8; }

inline uint32_t bitReverse(uint32_t a) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i)
    r |= ((a >> i) & 1) << (31 - i);
  return r;
}

/// v_bfe_*: `width` bits of `a` from bit `off`; a width of 0 gives 0.
inline uint32_t bfe(uint32_t a, uint32_t off, uint32_t width, bool sign) {
  if (width == 0)
    return 0;
  uint32_t field = uint32_t((uint64_t(a) >> off) & ((1ull << width) - 1));
  if (sign && width < 32 && ((field >> (width - 1)) & 1))
    field |= ~uint32_t((1ull << width) - 1);
  return field;
}

template <typename T> inline T med3(T a, T b, T c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

/// v_perm_b32: each byte of the result selected from the 8 bytes of
/// {S0, S1} (S0 the high dword) by the corresponding byte of S2; selectors
/// 8-11 replicate the sign bit of bytes 1, 3, 5, 7; 12 gives 0x00; 13 and
/// above 0xff.
inline uint32_t bytePerm(uint32_t s0, uint32_t s1, uint32_t sel) {
  uint64_t data = (uint64_t(s0) << 32) | s1;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    uint32_t s = (sel >> (8 * i)) & 0xff, byte;
    if (s < 8)
      byte = uint32_t(data >> (8 * s)) & 0xff;
    else if (s < 12)
      byte = ((data >> (16 * (s - 8) + 15)) & 1) ? 0xff : 0x00;
    else if (s == 12)
      byte = 0;
    else
      byte = 0xff;
    r |= byte << (8 * i);
  }
  return r;
}

/// f16 bits to f32, exactly (every f16 value, denormals and NaN payloads
/// included, is an f32 value): a table, since the conversion is the inner
/// loop of v_dot2_f32_f16 and v_fma_mix*.
inline float f16ToF32(uint16_t h) {
  static const struct Table {
    float f[65536];
    Table() {
      for (uint32_t i = 0; i < 65536; ++i)
        f[i] = halfToFloat(uint16_t(i));
    }
  } table;
  return table.f[h];
}

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_VECTORUTIL_H
