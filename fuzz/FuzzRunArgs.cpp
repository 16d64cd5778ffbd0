//===- FuzzRunArgs.cpp - Fuzz target: fa-run's command line ---------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The input is a command line for fa-run, one argument per line (or per NUL
// byte). fa-run's parser must accept it or return a usage error, never
// crash; a command line it accepts also goes through the checks that
// validateKernel runs first on the shape and layout (checkShape,
// checkLayout).
//
// The parser is fa-run's own (tools/fa-run/RunOptions.h), which neither
// prints nor exits.
//
//===----------------------------------------------------------------------===//

#include "tools/fa-run/RunOptions.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using namespace fa;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return -1;
  std::vector<std::string> words = {"fa-run"};
  std::string word;
  for (size_t i = 0; i < size; ++i) {
    char c = char(data[i]);
    if (c == '\n' || c == '\0') {
      words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty())
    words.push_back(word);
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);

  Expected<RunOptions> parsed = fa::parseRunOptions(
      int(words.size()), const_cast<const char *const *>(argv.data()));
  if (!parsed) {
    (void)parsed.status().toString();
    return 0;
  }
  const RunOptions &o = *parsed;
  if (!o.haveShape)
    return 0;

  // What validateKernel checks first.
  for (int64_t headDim : {int64_t(1), int64_t(64), int64_t(256)}) {
    AttentionProblem problem;
    problem.shape = o.shape;
    problem.headDim = headDim;
    (void)checkShape(problem).toString();
  }
  (void)checkLayout(o.layout).toString();
  (void)o.shape.toString();
  (void)o.layout.toString();
  return 0;
}
