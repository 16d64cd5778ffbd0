//===- Json.cpp - A small JSON reader and string quoting ------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements a strict recursive-descent JSON parser (RFC 8259:
// no comments, no trailing commas, no NaN) with a nesting limit so hostile
// input cannot exhaust the stack, and the string quoter used by writers.
//
//===----------------------------------------------------------------------===//

#include "fa/Json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace fa;

const JsonValue *JsonValue::find(std::string_view key) const {
  if (kind_ != Kind::Object)
    return nullptr;
  for (const auto &member : object_)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

const char *JsonValue::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

namespace fa {
/// Recursive-descent parser over one document.
class JsonParser {
public:
  explicit JsonParser(std::string_view text) : text(text) {}

  Status parseDocument(JsonValue &out) {
    skipSpace();
    if (Status s = parseValue(out, 0); !s.ok())
      return s;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the JSON value");
    return Status::success();
  }

private:
  static constexpr int maxDepth = 64;
  std::string_view text;
  size_t pos = 0;

  Status fail(const std::string &what) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Status::error(ErrorCode::ManifestError,
                         "line " + std::to_string(line) + ", column " +
                             std::to_string(column) + ": " + what);
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }

  Status parseValue(JsonValue &out, int depth) {
    if (depth > maxDepth)
      return fail("nesting deeper than " + std::to_string(maxDepth));
    if (pos >= text.size())
      return fail("unexpected end of input");
    char c = text[pos];
    if (c == '{')
      return parseObject(out, depth);
    if (c == '[')
      return parseArray(out, depth);
    if (c == '"') {
      out.kind_ = JsonValue::Kind::String;
      return parseString(out.string_);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    if (consume("true")) {
      out.kind_ = JsonValue::Kind::Bool;
      out.bool_ = true;
      return Status::success();
    }
    if (consume("false")) {
      out.kind_ = JsonValue::Kind::Bool;
      out.bool_ = false;
      return Status::success();
    }
    if (consume("null")) {
      out.kind_ = JsonValue::Kind::Null;
      return Status::success();
    }
    return fail(std::string("unexpected character '") + c + "'");
  }

  Status parseObject(JsonValue &out, int depth) {
    out.kind_ = JsonValue::Kind::Object;
    ++pos; // '{'
    skipSpace();
    if (consume("}"))
      return Status::success();
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a string key");
      std::string key;
      if (Status s = parseString(key); !s.ok())
        return s;
      skipSpace();
      if (!consume(":"))
        return fail("expected ':' after key \"" + key + "\"");
      skipSpace();
      JsonValue value;
      if (Status s = parseValue(value, depth + 1); !s.ok())
        return s;
      if (out.find(key))
        return fail("duplicate key \"" + key + "\"");
      out.object_.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (consume("}"))
        return Status::success();
      if (!consume(","))
        return fail("expected ',' or '}' in object");
    }
  }

  Status parseArray(JsonValue &out, int depth) {
    out.kind_ = JsonValue::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (consume("]"))
      return Status::success();
    while (true) {
      skipSpace();
      JsonValue value;
      if (Status s = parseValue(value, depth + 1); !s.ok())
        return s;
      out.array_.push_back(std::move(value));
      skipSpace();
      if (consume("]"))
        return Status::success();
      if (!consume(","))
        return fail("expected ',' or ']' in array");
    }
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  bool parseHex4(uint32_t &cp) {
    if (pos + 4 > text.size())
      return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text[pos++];
      cp <<= 4;
      if (h >= '0' && h <= '9')
        cp |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f')
        cp |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        cp |= uint32_t(h - 'A' + 10);
      else
        return false;
    }
    return true;
  }

  Status parseString(std::string &out) {
    ++pos; // '"'
    while (true) {
      if (pos >= text.size())
        return fail("unterminated string");
      char c = text[pos++];
      if (c == '"')
        return Status::success();
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        return fail("unterminated escape");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!parseHex4(cp))
          return fail("bad \\u escape");
        if (cp >= 0xD800 && cp < 0xDC00) {
          uint32_t low;
          if (!consume("\\u") || !parseHex4(low) || low < 0xDC00 ||
              low >= 0xE000)
            return fail("unpaired surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return fail("unpaired surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  Status parseNumber(JsonValue &out) {
    size_t start = pos;
    bool integral = true;
    if (text[pos] == '-')
      ++pos;
    auto digits = [&] {
      size_t from = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos - from;
    };
    if (pos < text.size() && text[pos] == '0') {
      ++pos;
    } else if (digits() == 0) {
      return fail("bad number");
    }
    if (pos < text.size() && text[pos] == '.') {
      integral = false;
      ++pos;
      if (digits() == 0)
        return fail("bad number: digits expected after '.'");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      integral = false;
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (digits() == 0)
        return fail("bad number: digits expected in exponent");
    }
    std::string literal(text.substr(start, pos - start));
    out.kind_ = JsonValue::Kind::Number;
    out.number_ = std::strtod(literal.c_str(), nullptr);
    if (!std::isfinite(out.number_))
      return fail("number " + literal + " out of range");
    if (integral) {
      errno = 0;
      long long v = std::strtoll(literal.c_str(), nullptr, 10);
      if (errno != ERANGE) {
        out.isInteger_ = true;
        out.integer_ = v;
      }
    }
    return Status::success();
  }
};
} // namespace fa

Expected<JsonValue> fa::parseJson(std::string_view text) {
  JsonValue value;
  JsonParser parser(text);
  if (Status s = parser.parseDocument(value); !s.ok())
    return s;
  return value;
}

std::string fa::jsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}
