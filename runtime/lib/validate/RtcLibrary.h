//===- RtcLibrary.h - The device reference's compilers ----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal to fa::validate. The device reference compiles its kernel with
// NVRTC or hiprtc, opened and resolved like the GPU backends' vendor
// runtimes (core/DynamicLibrary.h, header-only, so fa::validate needs none
// of fa::runtime's internal symbols); this adds what only the compilers
// need. Header-only with hidden visibility.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_VALIDATE_RTCLIBRARY_H
#define FA_LIB_VALIDATE_RTCLIBRARY_H

#include "core/DynamicLibrary.h"

#include <string>
#include <string_view>
#include <vector>

#pragma GCC visibility push(hidden)

namespace fa {
namespace detail {

/// True if `target` is spelled "sm_XY", "sm_XYa" or "sm_XYZ" (what NVRTC's
/// --gpu-architecture takes after "sm_" / "compute_").
inline bool isSmTarget(std::string_view target) {
  if (target.substr(0, 3) != "sm_")
    return false;
  std::string_view rest = target.substr(3);
  if (!rest.empty() && rest.back() == 'a')
    rest.remove_suffix(1);
  if (rest.size() < 2 || rest.size() > 3)
    return false;
  for (char c : rest)
    if (c < '0' || c > '9')
      return false;
  return true;
}

} // namespace detail
} // namespace fa

#pragma GCC visibility pop

#endif // FA_LIB_VALIDATE_RTCLIBRARY_H
