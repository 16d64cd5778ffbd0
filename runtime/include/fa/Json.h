//===- Json.h - A small JSON reader and string quoting ----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Just enough JSON for manifests and golden-case metadata: a tree of values
// with ordered objects, a strict RFC 8259 parser reporting line:column, and a
// string quoter for writers. No dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef FA_JSON_H
#define FA_JSON_H

#include "fa/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fa {

/// One JSON value. Objects keep their members in source order.
class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  JsonValue() = default;

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isNumber() const { return kind_ == Kind::Number; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }
  /// True for numbers written without fraction or exponent that fit int64.
  bool isInteger() const { return kind_ == Kind::Number && isInteger_; }

  bool getBool() const { return bool_; }
  double getNumber() const { return number_; }
  int64_t getInteger() const { return integer_; }
  const std::string &getString() const { return string_; }
  const std::vector<JsonValue> &getArray() const { return array_; }
  const std::vector<std::pair<std::string, JsonValue>> &getObject() const {
    return object_;
  }

  /// Object member `key`, or nullptr if absent or not an object.
  const JsonValue *find(std::string_view key) const;

  /// Names the kind for diagnostics ("a number", "an object").
  static const char *kindName(Kind kind);

private:
  friend class JsonParser;
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  bool isInteger_ = false;
  double number_ = 0;
  int64_t integer_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::vector<std::pair<std::string, JsonValue>> object_;
};

/// Parses a whole document; trailing non-space text is an error. Errors are
/// ManifestError with "line L, column C: ..." messages.
Expected<JsonValue> parseJson(std::string_view text);

/// Returns `s` as a JSON string literal, quotes included.
std::string jsonQuote(std::string_view s);

} // namespace fa

#endif // FA_JSON_H
