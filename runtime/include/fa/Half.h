//===- Half.h - float <-> f16 / bf16 conversions ----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Round-to-nearest-even conversions between float and the 16-bit formats,
// written out in integer arithmetic so the result does not depend on the
// compiler's or CPU's half support; and whole-array encode/decode by DType.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_HALF_H
#define FA_HALF_H

#include "fa/DType.h"

#include <cstdint>
#include <vector>

namespace fa {

/// IEEE binary16, round to nearest even; overflow gives infinity, NaN stays
/// NaN (quiet), subnormals are produced and consumed exactly.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);

/// bfloat16 (the high half of a float), round to nearest even.
uint16_t floatToBf16(float value);
float bf16ToFloat(uint16_t bits);

/// Rounds `value` to the nearest value representable in `type`.
float roundTo(DType type, float value);

/// Encodes `values` as little-endian elements of `type`.
std::vector<uint8_t> encodeElements(DType type,
                                    const std::vector<float> &values);

/// Decodes `count` elements of `type` from `bytes`.
std::vector<float> decodeElements(DType type, const uint8_t *bytes,
                                  size_t count);

} // namespace fa

#endif // FA_HALF_H
