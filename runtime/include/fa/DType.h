//===- DType.h - Element types of attention tensors -------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The element type of Q, K, V and O as the manifest spells it. LSE is always
// f32.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_DTYPE_H
#define FA_DTYPE_H

#include <cstddef>
#include <optional>
#include <string_view>

namespace fa {

enum class DType { F16, BF16, F32 };

/// "f16", "bf16" or "f32".
const char *dtypeName(DType type);

/// Parses a manifest spelling; nullopt if unknown.
std::optional<DType> parseDType(std::string_view name);

/// Bytes per element.
size_t dtypeBytes(DType type);

} // namespace fa

#endif // FA_DTYPE_H
