/*===- CApiCheck.c - fa_compile.h compiles as C and works from C -----------===*
 *
 * Part of the fa project.
 *
 *===----------------------------------------------------------------------===*/

#include "fa/fa_compile.h"

#include <string.h>

/* 0 when the example compiles for the host through the C API; the step
 * that failed otherwise. */
int fa_compile_c_check(const char *source, unsigned long size) {
  fa_compile_options *options = fa_compile_options_create();
  fa_compile_result *result;
  size_t bytes = 0;
  int rc = 0;
  if (!options)
    return 1;
  if (fa_compile_options_set(options, "target", "host") != 0)
    rc = 2;
  result = fa_compile(source, size, "attention.mlir", options);
  if (!rc && (!result || !fa_compile_result_ok(result)))
    rc = 3;
  if (!rc && (!fa_compile_result_output(result, &bytes) || bytes < 64 ||
              strcmp(fa_compile_result_format(result), "elf-shared-object")))
    rc = 4;
  if (!rc && strstr(fa_compile_result_manifest(result), "\"kernels\"") == NULL)
    rc = 5;
  if (!rc && strlen(fa_compile_version()) == 0)
    rc = 6;
  fa_compile_result_destroy(result);
  fa_compile_options_destroy(options);
  return rc;
}
