/*===- CApiCheck.c - The C API used from C ---------------------------------===*
 *
 * Part of the fa project.
 *
 *===----------------------------------------------------------------------===*
 *
 * Compiled as C to prove fa_runtime.h is a C header. Runs the f32 fixture
 * kernel on a 1x1x1x4x4 problem whose answer is known without a reference:
 * all keys equal, so every query row's output is the mean of the V rows.
 * Then a varlen launch (fa_module_launch_varlen) worked the same way.
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

/* The varlen f32 fixture on 3 sequences of (Lq, Lk) = (2, 3), (0, 2), (1, 0)
 * packed into Q [3, 1, 64] and K, V [5, 1, 64]: all keys equal, so
 * sequence 0's rows are the mean of V rows 0..2 (row r holds r), 1; its LSE
 * is the equal score q.k * scale = 64 * 0.25 * 0.5 * 0.125 = 1 plus ln 3;
 * sequence 1 gives nothing; sequence 2's row sees no key: O = 0, LSE =
 * -inf. Nonzero: the failures, or a negative step that failed. */
int faCApiRunsVarlenKernel(const char *path) {
  enum { TQ = 3, TK = 5, D = 64, B = 3 };
  static float q[TQ * D], k[TK * D], v[TK * D], o[TQ * D], lse[TQ];
  static const int32_t cuQ[B + 1] = {0, 2, 2, 3}, cuK[B + 1] = {0, 3, 5, 5};
  static const int32_t badCuK[B + 1] = {0, 3, 6, 5};
  fa_device *device = 0;
  fa_module *module = 0;
  fa_buffer *bq = 0, *bk = 0, *bv = 0, *bo = 0, *blse = 0, *bcq = 0, *bck = 0;
  fa_attention_args args = {0};
  fa_varlen varlen = {0};
  fa_launch_options options = {0};
  int i, c, failures = 0;

  for (i = 0; i < TQ * D; ++i)
    q[i] = 0.25f;
  for (i = 0; i < TK * D; ++i) {
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
      fa_buffer_alloc(device, sizeof(cuQ), &bcq) != FA_OK ||
      fa_buffer_alloc(device, sizeof(cuK), &bck) != FA_OK ||
      fa_buffer_write(bq, 0, q, sizeof(q)) != FA_OK ||
      fa_buffer_write(bk, 0, k, sizeof(k)) != FA_OK ||
      fa_buffer_write(bv, 0, v, sizeof(v)) != FA_OK ||
      fa_buffer_write(bcq, 0, cuQ, sizeof(cuQ)) != FA_OK ||
      fa_buffer_write(bck, 0, cuK, sizeof(cuK)) != FA_OK)
    return -1;
  args.q = bq;
  args.k = bk;
  args.v = bv;
  args.o = bo;
  args.lse = blse;
  args.batch = B;
  args.heads_q = args.heads_kv = 1;
  args.seq_q = 2; /* max_seqlen_q */
  args.seq_k = 3; /* max_seqlen_k */
  args.check_races = 1;
  varlen.cu_seqlens_q = bcq;
  varlen.cu_seqlens_k = bck;
  varlen.total_q = TQ;
  varlen.total_k = TK;
  varlen.host_cu_seqlens_q = cuQ;
  varlen.host_cu_seqlens_k = cuK;
  if (fa_module_launch_varlen(module, 0, &args, &varlen, &options) != FA_OK ||
      fa_buffer_read(bo, 0, o, sizeof(o)) != FA_OK ||
      fa_buffer_read(blse, 0, lse, sizeof(lse)) != FA_OK)
    return -2;
  failures += options.kv_splits_used != 1;
  for (i = 0; i < TQ; ++i)
    for (c = 0; c < D; ++c)
      failures += fabsf(o[i * D + c] - (i < 2 ? 1.0f : 0.0f)) > 1e-5f;
  failures += fabsf(lse[0] - (1.0f + logf(3.0f))) > 1e-5f;
  failures += fabsf(lse[1] - (1.0f + logf(3.0f))) > 1e-5f;
  failures += !(isinf(lse[2]) && lse[2] < 0);
  /* A dense launch of a varlen kernel, a host copy that is not
   * non-decreasing, a null host copy: errors. */
  failures += fa_module_launch(module, 0, &args) != FA_ERROR_INVALID_ARGUMENT;
  varlen.host_cu_seqlens_k = badCuK;
  failures += fa_module_launch_varlen(module, 0, &args, &varlen, 0) !=
              FA_ERROR_INVALID_ARGUMENT;
  varlen.host_cu_seqlens_k = 0;
  failures += fa_module_launch_varlen(module, 0, &args, &varlen, 0) !=
              FA_ERROR_INVALID_ARGUMENT;
  fa_buffer_free(bq);
  fa_buffer_free(bk);
  fa_buffer_free(bv);
  fa_buffer_free(bo);
  fa_buffer_free(blse);
  fa_buffer_free(bcq);
  fa_buffer_free(bck);
  fa_module_unload(module);
  fa_device_close(device);
  return failures;
}
