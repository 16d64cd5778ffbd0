//===- Json.cpp - Strict JSON reading on nlohmann-json --------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements parseJson (nlohmann's parser plus the checks it does
// not make: duplicate keys and a nesting limit) and the quoting helpers.
//
//===----------------------------------------------------------------------===//

#include "fa/Json.h"
#include "core/JsonParse.h"

#include <set>
#include <vector>

using namespace fa;
using namespace fa::detail;

namespace {
/// Thrown from the parser callback; carries a finished message.
struct JsonRejected {
  std::string message;
};
} // namespace

static constexpr int maxJsonDepth = 64;

void detail::jsonRelease(Json &value) noexcept {
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

Expected<JsonDocument> detail::parseJson(std::string_view text) {
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
    return std::move(doc);
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

const char *detail::jsonKindName(const Json &value) {
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

const Json *detail::jsonFind(const Json &object, std::string_view key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

bool detail::jsonInteger(const Json &value, int64_t &out) {
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

std::string detail::jsonDump(const Json &value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string fa::jsonQuote(std::string_view s) {
  return jsonDump(Json(std::string(s)));
}
