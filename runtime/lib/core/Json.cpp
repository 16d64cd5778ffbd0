//===- Json.cpp - JSON string quoting -------------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements jsonQuote (fa/Json.h) with the strict reader's dump
// (core/JsonParse.h, header-only).
//
//===----------------------------------------------------------------------===//

#include "fa/Json.h"
#include "core/JsonParse.h"

using namespace fa;
using namespace fa::detail;

std::string fa::jsonQuote(std::string_view s) {
  return jsonDump(Json(std::string(s)));
}
