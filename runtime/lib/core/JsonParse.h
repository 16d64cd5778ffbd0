//===- JsonParse.h - Strict JSON reading on nlohmann-json -------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Manifests and golden-case metadata are read with nlohmann-json, private to
// the runtime (no public header includes it). nlohmann accepts a few things
// untrusted input must not get away with, so parseJson adds: duplicate keys
// are an error (nlohmann keeps the last one), nesting is limited, and every
// failure comes back as a Status instead of an exception. Numbers are parsed
// independently of the C locale.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_JSONPARSE_H
#define FA_RUNTIME_JSONPARSE_H

#include "fa/Status.h"

#include <nlohmann/json.hpp>

#include <string_view>

namespace fa::detail {

/// Objects keep their members in source order (written back the same way).
using Json = nlohmann::ordered_json;

/// Empties `value` bottom-up, so that destroying it allocates nothing.
/// nlohmann's destructor moves a non-empty container's children to a heap
/// stack; under allocation failure that throws from a noexcept destructor
/// (std::terminate) instead of reaching the caller as an error.
void jsonRelease(Json &value) noexcept;

/// A parsed document whose destruction allocates nothing (jsonRelease).
struct JsonDocument : Json {
  JsonDocument() = default;
  JsonDocument(JsonDocument &&) = default;
  JsonDocument &operator=(JsonDocument &&) = default;
  ~JsonDocument() { jsonRelease(*this); }
};

/// Parses a whole document; trailing non-space text is an error. Errors are
/// ManifestError: syntax errors as "line L, column C: ...", and "duplicate
/// key", "nesting deeper than 64", "number overflow". An allocation failure
/// is an error too, at any point (the partial tree is released).
Expected<JsonDocument> parseJson(std::string_view text);

/// Names the kind of `value` for diagnostics ("a number", "an object").
const char *jsonKindName(const Json &value);

/// Member `key` of `object`, or nullptr if absent or not an object.
const Json *jsonFind(const Json &object, std::string_view key);

/// True, with `out` set, for an integer that fits int64 (a number written
/// with a fraction or exponent is not an integer).
bool jsonInteger(const Json &value, int64_t &out);

/// `value` as JSON text on one line; invalid UTF-8 in strings becomes U+FFFD
/// instead of an exception.
std::string jsonDump(const Json &value);

} // namespace fa::detail

#endif // FA_RUNTIME_JSONPARSE_H
