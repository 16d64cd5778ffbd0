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
// Header-only, so that fa::runtime (manifests) and fa::validate (golden
// metadata) each compile their own copy: fa::validate links no internal
// symbol of fa::runtime. The functions have hidden visibility, so neither
// shared object exports them and each uses its own.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_JSONPARSE_H
#define FA_RUNTIME_JSONPARSE_H

#include "fa/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#pragma GCC visibility push(hidden)

namespace fa::detail {

/// Objects keep their members in source order (written back the same way).
using Json = nlohmann::ordered_json;

/// Empties `value` bottom-up, so that destroying it allocates nothing.
/// nlohmann's destructor moves a non-empty container's children to a heap
/// stack; under allocation failure that throws from a noexcept destructor
/// (std::terminate) instead of reaching the caller as an error.
inline void jsonRelease(Json &value) noexcept;

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
inline Expected<JsonDocument> parseJson(std::string_view text);

/// Names the kind of `value` for diagnostics ("a number", "an object").
inline const char *jsonKindName(const Json &value);

/// Member `key` of `object`, or nullptr if absent or not an object.
inline const Json *jsonFind(const Json &object, std::string_view key);

/// True, with `out` set, for an integer that fits int64 (a number written
/// with a fraction or exponent is not an integer).
inline bool jsonInteger(const Json &value, int64_t &out);

/// `value` as JSON text on one line; invalid UTF-8 in strings becomes U+FFFD
/// instead of an exception.
inline std::string jsonDump(const Json &value);

//===----------------------------------------------------------------------===//
// Implementation
//===----------------------------------------------------------------------===//

/// Thrown from parseJson's parser callback; carries a finished message.
struct JsonRejected {
  std::string message;
};

inline constexpr int maxJsonDepth = 64;

inline void jsonRelease(Json &value) noexcept {
  // Depth is bounded: parseJson refuses nesting deeper than maxJsonDepth.
  if (value.is_object()) {
    auto &members = value.get_ref<Json::object_t &>();
    for (auto &member : members)
      jsonRelease(member.second);
    members.clear();
  } else if (value.is_array()) {
    auto &elements = value.get_ref<Json::array_t &>();
    for (Json &element : elements)
      jsonRelease(element);
    elements.clear();
  }
}

inline Expected<JsonDocument> parseJson(std::string_view text) {
  // Keys seen in each open object, innermost last.
  std::vector<std::set<std::string>> keys;
  auto check = [&](int depth, Json::parse_event_t event, Json &parsed) {
    switch (event) {
    case Json::parse_event_t::object_start:
    case Json::parse_event_t::array_start:
      if (depth > maxJsonDepth)
        throw JsonRejected{"nesting deeper than " +
                           std::to_string(maxJsonDepth)};
      if (event == Json::parse_event_t::object_start)
        keys.emplace_back();
      break;
    case Json::parse_event_t::key:
      if (!keys.back().insert(parsed.get<std::string>()).second)
        throw JsonRejected{"duplicate key " + jsonDump(parsed)};
      break;
    case Json::parse_event_t::object_end:
      keys.pop_back();
      break;
    default:
      break;
    }
    return true;
  };
  // The tree is built into `doc`, which outlives the try: whatever is
  // thrown, the partial tree is released without allocating.
  JsonDocument doc;
  try {
    nlohmann::detail::json_sax_dom_callback_parser<Json> builder(doc, check);
    Json::sax_parse(text.begin(), text.end(), &builder);
    return Expected<JsonDocument>(std::move(doc));
  } catch (const JsonRejected &e) {
    return Status::error(ErrorCode::ManifestError, e.message);
  } catch (const Json::exception &e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 27:
    // syntax error ..." -> "line 1, column 27: syntax error ...".
    std::string what = e.what();
    for (std::string_view prefix : {"] ", "parse error at "}) {
      size_t at = what.find(prefix);
      if (at != std::string::npos)
        what.erase(0, at + prefix.size());
    }
    return Status::error(ErrorCode::ManifestError, what);
  } catch (const std::exception &e) { // std::bad_alloc on huge input
    return Status::error(ErrorCode::ManifestError, e.what());
  }
}

inline const char *jsonKindName(const Json &value) {
  switch (value.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::boolean:
    return "a boolean";
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
  case Json::value_t::number_float:
    return "a number";
  case Json::value_t::string:
    return "a string";
  case Json::value_t::array:
    return "an array";
  case Json::value_t::object:
    return "an object";
  default:
    return "a value";
  }
}

inline const Json *jsonFind(const Json &object, std::string_view key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

inline bool jsonInteger(const Json &value, int64_t &out) {
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > uint64_t(INT64_MAX))
      return false;
    out = int64_t(u);
    return true;
  }
  if (!value.is_number_integer())
    return false;
  out = value.get<int64_t>();
  return true;
}

inline std::string jsonDump(const Json &value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace fa::detail

#pragma GCC visibility pop

#endif // FA_RUNTIME_JSONPARSE_H
