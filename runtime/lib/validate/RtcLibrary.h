//===- RtcLibrary.h - Loading NVRTC and hiprtc with dlopen ------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal to fa::validate. The device reference compiles its kernel with
// NVRTC or hiprtc, each opened with dlopen and resolved through one X-macro
// symbol table, and reports failures the way the GPU backends report their
// vendor runtimes' (gpu/Vendor.h): the failing call, its error name and
// string, what was being done. fa::validate reaches only fa::runtime's
// public API, so it has this small copy of that pattern instead of linking
// the backends' internal helpers; the messages are the same.
//
// Header-only with hidden visibility: libfa_validate.so does not export
// these, and they cannot be confused with fa::runtime's own.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_VALIDATE_RTCLIBRARY_H
#define FA_LIB_VALIDATE_RTCLIBRARY_H

#include "fa/Status.h"

#include <dlfcn.h>

#include <string>
#include <string_view>
#include <vector>

#pragma GCC visibility push(hidden)

namespace fa {
namespace detail {

/// dlopens the first of `names` that loads (RTLD_NOW | RTLD_LOCAL); on
/// failure an Unavailable error "device '<kind>' unavailable: <names[0]> not
/// found (dlopen: <dlerror of the first name>)".
inline Status openRtcLibrary(const char *kind,
                             const std::vector<const char *> &names,
                             void *&handle) {
  std::string firstError;
  for (const char *name : names) {
    ::dlerror();
    handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle)
      return Status::success();
    if (firstError.empty()) {
      const char *err = ::dlerror();
      firstError = err ? err : "unknown error";
    }
  }
  return Status::error(ErrorCode::Unavailable,
                       std::string("device '") + kind +
                           "' unavailable: " + names.front() +
                           " not found (dlopen: " + firstError + ")")
      .withCall("dlopen", "")
      .withDevice(kind);
}

/// Unavailable: "the vendor runtime lacks '<symbol>' (too old?)".
inline Status missingRtcSymbol(const char *kind, const char *symbol) {
  return Status::error(ErrorCode::Unavailable,
                       std::string("device '") + kind +
                           "' unavailable: the vendor runtime lacks '" +
                           symbol + "' (too old?)")
      .withCall("dlsym", "")
      .withDevice(kind);
}

// One entry of an X-macro table: X(NAME, RET, ARGS). DECLARE makes the
// member `api.NAME`; the RESOLVE macros fill it, inside a function returning
// Status with `api`, `handle` and `kind` in scope (a missing required
// symbol is an error, a missing optional one stays null).
#define FA_RTC_DECLARE(NAME, RET, ARGS) RET(*NAME) ARGS = nullptr;
#define FA_RTC_RESOLVE_REQUIRED(NAME, RET, ARGS)                               \
  if (void *sym = ::dlsym(handle, #NAME))                                      \
    api.NAME = reinterpret_cast<RET(*) ARGS>(sym);                             \
  else                                                                         \
    return ::fa::detail::missingRtcSymbol(kind, #NAME);
#define FA_RTC_RESOLVE_OPTIONAL(NAME, RET, ARGS)                               \
  api.NAME = reinterpret_cast<RET(*) ARGS>(::dlsym(handle, #NAME));

/// A failed compiler call:
///   "<what>: <call> returned <NAME> (<rc>): <description>"
/// with `withCall(call, NAME)` and `withDevice(device)`. `errorName` and
/// `description` may be null (the number stands in).
inline Status rtcCallError(ErrorCode code, const std::string &device,
                           const std::string &what, const char *call, int rc,
                           const char *errorName, const char *description) {
  std::string name =
      errorName && *errorName ? errorName : "error " + std::to_string(rc);
  std::string message = what + ": " + call + " returned " + name + " (" +
                        std::to_string(rc) + ")";
  if (description && *description && name != description)
    message += std::string(": ") + description;
  return Status::error(code, std::move(message))
      .withCall(call, name)
      .withDevice(device);
}

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
