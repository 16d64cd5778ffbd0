//===- CApi.cpp - C API of the fa compiler --------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements fa_compile.h over fa::compile. No exception leaves
// it: a failure inside (memory, an exception from the runtime's manifest
// writer) is a failed result, or NULL where the result itself cannot be
// made.
//
//===----------------------------------------------------------------------===//

#include "fa/fa_compile.h"

#include "compiler/Driver/Compile.h"

#include <exception>
#include <new>
#include <string>

using namespace mlir;

#ifndef FA_VERSION_STRING
#define FA_VERSION_STRING "0.0.0"
#endif

struct fa_compile_options {
  fa::CompileOptions options;
  std::string error;
};

struct fa_compile_result {
  fa::CompileResult result;
  std::string error;
};

extern "C" const char *fa_compile_version(void) { return FA_VERSION_STRING; }

extern "C" fa_compile_options *fa_compile_options_create(void) {
  return new (std::nothrow) fa_compile_options();
}

extern "C" void fa_compile_options_destroy(fa_compile_options *options) {
  delete options;
}

extern "C" int fa_compile_options_set(fa_compile_options *options,
                                      const char *name, const char *value) {
  if (!options)
    return -1;
  try {
    if (!name || !value) {
      options->error = "fa_compile_options_set: name and value must not be "
                       "NULL";
      return -1;
    }
    if (llvm::Error e = fa::setCompileOption(options->options, name, value)) {
      options->error = llvm::toString(std::move(e));
      return -1;
    }
    options->error.clear();
    return 0;
  } catch (...) {
    return -1;
  }
}

extern "C" const char *
fa_compile_options_error(const fa_compile_options *options) {
  return options ? options->error.c_str() : "";
}

extern "C" fa_compile_result *fa_compile(const char *source, size_t size,
                                         const char *source_name,
                                         const fa_compile_options *options) {
  if (!source || !options)
    return nullptr;
  fa_compile_result *r = new (std::nothrow) fa_compile_result();
  if (!r)
    return nullptr;
  try {
    r->result =
        fa::compile(llvm::StringRef(source, size),
                    source_name ? source_name : "<source>", options->options);
    r->error = r->result.firstError();
  } catch (const std::exception &e) {
    r->result = fa::CompileResult();
    r->error = std::string("internal error: ") + e.what();
  } catch (...) {
    r->result = fa::CompileResult();
    r->error = "internal error: unknown exception";
  }
  if (!r->result.ok && r->error.empty())
    r->error = "compilation failed";
  return r;
}

extern "C" void fa_compile_result_destroy(fa_compile_result *result) {
  delete result;
}

extern "C" int fa_compile_result_ok(const fa_compile_result *result) {
  return result && result->result.ok ? 1 : 0;
}

extern "C" const char *
fa_compile_result_error(const fa_compile_result *result) {
  return result ? result->error.c_str() : "";
}

extern "C" const void *fa_compile_result_output(const fa_compile_result *result,
                                                size_t *size) {
  if (size)
    *size = result ? result->result.output.size() : 0;
  return result ? result->result.output.data() : nullptr;
}

extern "C" const char *
fa_compile_result_format(const fa_compile_result *result) {
  return result ? result->result.format.c_str() : "";
}

extern "C" const char *
fa_compile_result_manifest(const fa_compile_result *result) {
  return result ? result->result.manifest.c_str() : "";
}

extern "C" const char *
fa_compile_result_report(const fa_compile_result *result) {
  return result ? result->result.report.c_str() : "";
}

extern "C" size_t
fa_compile_result_diagnostic_count(const fa_compile_result *result) {
  return result ? result->result.diagnostics.size() : 0;
}

extern "C" const char *
fa_compile_result_diagnostic(const fa_compile_result *result, size_t index,
                             int *severity) {
  if (!result || index >= result->result.diagnostics.size())
    return nullptr;
  const fa::CompileDiagnostic &d = result->result.diagnostics[index];
  if (severity)
    *severity = static_cast<int>(d.severity);
  return d.text.c_str();
}
