/*===- fa_compile.h - C API of the fa compiler ---------------------*- C -*-===*
 *
 * Part of the fa project.
 *
 *===----------------------------------------------------------------------===*
 *
 * Compiles attention IR (MLIR text, the input of `fac`) to a code object
 * and its manifest, in process: what a Python binding or an AOT tool calls.
 * libfa_compile.so; no MLIR or LLVM headers are needed to call it. Handles
 * are opaque, every string is NUL-terminated UTF-8 owned by its handle, and
 * nothing is printed.
 *
 *   fa_compile_options *o = fa_compile_options_create();
 *   fa_compile_options_set(o, "target", "gfx906");     // fac's option names
 *   fa_compile_result *r = fa_compile(text, strlen(text), "attn.mlir", o);
 *   if (fa_compile_result_ok(r)) {
 *     size_t n; const void *code = fa_compile_result_output(r, &n);
 *     const char *manifest = fa_compile_result_manifest(r);
 *     ...
 *   } else {
 *     fprintf(stderr, "%s\n", fa_compile_result_error(r));
 *   }
 *   fa_compile_result_destroy(r);
 *   fa_compile_options_destroy(o);
 *
 *===----------------------------------------------------------------------===*/

#ifndef FA_COMPILE_H
#define FA_COMPILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fa_compile_options fa_compile_options;
typedef struct fa_compile_result fa_compile_result;

/* Severities of fa_compile_result_diagnostic. */
enum {
  FA_COMPILE_NOTE = 0,
  FA_COMPILE_REMARK = 1,
  FA_COMPILE_WARNING = 2,
  FA_COMPILE_ERROR = 3
};

/* The compiler's version ("0.1.0"). */
const char *fa_compile_version(void);

/* Options with fac's defaults (target gfx906, the code object); NULL only
 * when memory is exhausted. */
fa_compile_options *fa_compile_options_create(void);
void fa_compile_options_destroy(fa_compile_options *options);

/* Sets the option fac spells --NAME to VALUE: "target", "emit", "block-m",
 * "block-n", "waves", "stages", "fetch-ahead", "index-bits", "pad-lds",
 * "kv-shared", "pair-rhs", "widen-lds", "dot2", "share-rows", "kv-splits",
 * "gqa-pack", "allow-bf16", "report", "trace" (validation layer 2),
 * and "name" (the code object's file name the manifest records). Returns
 * 0, or -1 with the reason in fa_compile_options_error. */
int fa_compile_options_set(fa_compile_options *options, const char *name,
                           const char *value);
/* Why the last fa_compile_options_set failed; "" after a success. */
const char *fa_compile_options_error(const fa_compile_options *options);

/* Compiles SIZE bytes of MLIR text (diagnostics name SOURCE_NAME; NULL:
 * "<source>"). Returns a result to inspect and destroy, also on failure;
 * NULL only when memory is exhausted or an argument is NULL. */
fa_compile_result *fa_compile(const char *source, size_t size,
                              const char *source_name,
                              const fa_compile_options *options);
void fa_compile_result_destroy(fa_compile_result *result);

/* 1 if a code object (or the --emit output) was produced, else 0. */
int fa_compile_result_ok(const fa_compile_result *result);
/* The first error (a located one with its source line and caret);
 * "" when there is none. */
const char *fa_compile_result_error(const fa_compile_result *result);
/* The code object bytes (or the --emit output); *SIZE gets their count. */
const void *fa_compile_result_output(const fa_compile_result *result,
                                     size_t *size);
/* elf-shared-object, hsaco, cubin, ptx, or the --emit value. */
const char *fa_compile_result_format(const fa_compile_result *result);
/* The manifest JSON; "" for an --emit output. */
const char *fa_compile_result_manifest(const fa_compile_result *result);
/* The backend's report (option "report"); "" without it. */
const char *fa_compile_result_report(const fa_compile_result *result);
/* The remarks, warnings and errors, in order: the text of diagnostic
 * INDEX (NULL past the end) and, if SEVERITY is not NULL, its
 * FA_COMPILE_* severity. A located diagnostic's text starts with
 * "file:line:col: <severity>: "; the driver's own are the bare message. */
size_t fa_compile_result_diagnostic_count(const fa_compile_result *result);
const char *fa_compile_result_diagnostic(const fa_compile_result *result,
                                         size_t index, int *severity);

#ifdef __cplusplus
}
#endif

#endif /* FA_COMPILE_H */
