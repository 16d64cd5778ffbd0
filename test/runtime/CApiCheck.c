/*===- CApiCheck.c - The C API used from C ---------------------------------===*
 *
 * Part of the fa project.
 *
 *===----------------------------------------------------------------------===*
 *
 * Compiled as C to prove fa_runtime.h is a C header. Runs the f32 fixture
 * kernel on a 1x1x1x4x4 problem whose answer is known without a reference:
 * all keys equal, so every query row's output is the mean of the V rows.
 *
 *===----------------------------------------------------------------------===*/

#include "fa/fa_runtime.h"

#include <math.h>

int faCApiRunsKernel(const char *path) {
  enum { L = 4, D = 64 };
  static float q[L * D], k[L * D], v[L * D], o[L * D], lse[L];
  fa_device *device = 0;
  fa_module *module = 0;
  fa_buffer *bq = 0, *bk = 0, *bv = 0, *bo = 0, *blse = 0;
  fa_attention_args args = {0};
  int i, c, failures = 0;

  for (i = 0; i < L * D; ++i) {
    q[i] = (float)(i % 7) * 0.25f;
    k[i] = 0.5f;
    v[i] = (float)(i / D); /* row r holds r */
  }
  if (fa_device_open("host", &device) != FA_OK ||
      fa_module_load(device, path, &module) != FA_OK ||
      fa_buffer_alloc(device, sizeof(q), &bq) != FA_OK ||
      fa_buffer_alloc(device, sizeof(k), &bk) != FA_OK ||
      fa_buffer_alloc(device, sizeof(v), &bv) != FA_OK ||
      fa_buffer_alloc(device, sizeof(o), &bo) != FA_OK ||
      fa_buffer_alloc(device, sizeof(lse), &blse) != FA_OK ||
      fa_buffer_write(bq, 0, q, sizeof(q)) != FA_OK ||
      fa_buffer_write(bk, 0, k, sizeof(k)) != FA_OK ||
      fa_buffer_write(bv, 0, v, sizeof(v)) != FA_OK)
    return -1;
  args.q = bq;
  args.k = bk;
  args.v = bv;
  args.o = bo;
  args.lse = blse;
  args.batch = args.heads_q = args.heads_kv = 1;
  args.seq_q = args.seq_k = L;
  args.check_races = 1;
  if (fa_module_launch(module, 0, &args) != FA_OK ||
      fa_buffer_read(bo, 0, o, sizeof(o)) != FA_OK)
    return -2;
  for (i = 0; i < L; ++i)
    for (c = 0; c < D; ++c)
      failures += fabsf(o[i * D + c] - 1.5f) > 1e-5f; /* mean of 0..3 */
  fa_buffer_free(bq);
  fa_buffer_free(bk);
  fa_buffer_free(bv);
  fa_buffer_free(bo);
  fa_buffer_free(blse);
  fa_module_unload(module);
  fa_device_close(device);
  return failures;
}
