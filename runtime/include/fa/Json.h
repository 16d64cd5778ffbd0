//===- Json.h - JSON string quoting for writers -----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Writers of JSON reports (fa-run --json) quote strings with jsonQuote. The
// runtime reads JSON with nlohmann-json behind its own API (manifests:
// fa/Manifest.h, golden cases: fa/Golden.h), so this header stays free of it.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_JSON_H
#define FA_JSON_H

#include <string>
#include <string_view>

namespace fa {

/// Returns `s` as a JSON string literal, quotes included. Bytes that are not
/// valid UTF-8 become U+FFFD.
std::string jsonQuote(std::string_view s);

} // namespace fa

#endif // FA_JSON_H
