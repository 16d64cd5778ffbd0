//===- DynamicLibrary.h - Foreign libraries opened with dlopen --*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The vendor runtimes (libamdhip64, libcuda; lib/gpu) and the
// run-time compilers of the device reference (NVRTC, hiprtc;
// lib/validate) are opened with dlopen and resolved through one X-macro
// symbol table each, and a failed call is reported alike: the call, the
// vendor's error name and string, what was being done. This is that
// pattern, once.
//
// Header-only with hidden visibility, so that fa::validate (which reaches
// only fa::runtime's public API) compiles its own copy and neither shared
// object exports it.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_CORE_DYNAMICLIBRARY_H
#define FA_LIB_CORE_DYNAMICLIBRARY_H

#include "fa/Status.h"

#include <dlfcn.h>

#include <string>
#include <vector>

#pragma GCC visibility push(hidden)

namespace fa {
namespace detail {

/// dlopens the first of `names` that loads (RTLD_NOW | RTLD_LOCAL); on
/// failure an Unavailable error "device '<kind>' unavailable: <names[0]> not
/// found (dlopen: <dlerror of the first name>)".
inline Status openVendorLibrary(const char *kind,
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

/// dlsym, or null.
inline void *lookupVendorSymbol(void *handle, const char *symbol) {
  return ::dlsym(handle, symbol);
}

/// Unavailable: "the vendor runtime lacks '<symbol>' (too old?)".
inline Status missingVendorSymbol(const char *kind, const char *symbol) {
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
#define FA_DECLARE_SYMBOL(NAME, RET, ARGS) RET(*NAME) ARGS = nullptr;
#define FA_RESOLVE_REQUIRED(NAME, RET, ARGS)                                   \
  if (void *sym = ::fa::detail::lookupVendorSymbol(handle, #NAME))             \
    api.NAME = reinterpret_cast<RET(*) ARGS>(sym);                             \
  else                                                                         \
    return ::fa::detail::missingVendorSymbol(kind, #NAME);
#define FA_RESOLVE_OPTIONAL(NAME, RET, ARGS)                                   \
  api.NAME = reinterpret_cast<RET(*) ARGS>(                                    \
      ::fa::detail::lookupVendorSymbol(handle, #NAME));

/// A failed foreign call:
///   "<what>: <call> returned <NAME> (<rc>): <description>[ (<hint>)]"
/// with `withCall(call, NAME)` and `withDevice(device)`. `errorName` and
/// `description` may be null (the number stands in).
inline Status vendorCallError(ErrorCode code, const std::string &device,
                              const std::string &what, const char *call, int rc,
                              const char *errorName, const char *description,
                              const std::string &hint = {}) {
  std::string name =
      errorName && *errorName ? errorName : "error " + std::to_string(rc);
  std::string message = what + ": " + call + " returned " + name + " (" +
                        std::to_string(rc) + ")";
  if (description && *description && name != description)
    message += std::string(": ") + description;
  if (!hint.empty())
    message += " (" + hint + ")";
  return Status::error(code, std::move(message))
      .withCall(call, name)
      .withDevice(device);
}

} // namespace detail
} // namespace fa

#pragma GCC visibility pop

#endif // FA_LIB_CORE_DYNAMICLIBRARY_H
