//===- CombineSplits.h - The combine kernel of the split-KV fixtures -*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The body of the hand-written combine kernels (split_attention_host.cpp,
// paged_attention_host.cpp): grid (ceil(Lq / combineBlockM), Hq, B), one
// thread per row. Per row, m = max_s lse_s,
// O = sum_s e^(lse_s - m) O_s / sum_s e^(lse_s - m), LSE = m + ln sum_s
// e^(lse_s - m); O = 0 and LSE = -inf when every split is empty. It reads
// the workspace (split s of batch b at batch index s*B + b, KernelAbi.h) and
// writes O and LSE through their strides; ABI versions 2, 3 and 4 agree on
// every word it reads. For a varlen pair (ABI version 4, `varlen`) row i of
// sequence b is packed row cu_seqlens_q[b] + i of O and LSE, and the rows
// past the sequence's Lq_b store nothing. Needs FixtureElem.h and
// FA_HAS_LSE.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TEST_RUNTIME_KERNELS_COMBINESPLITS_H
#define FA_TEST_RUNTIME_KERNELS_COMBINESPLITS_H

#include "FixtureElem.h"
#include "fa/KernelAbi.h"

#include <math.h>
#include <stdint.h>

namespace {

template <int64_t D>
void combineSplits(const uint64_t *args, fa_host_env *env,
                   int64_t combineBlockM, bool varlen = false) {
  const int64_t *sizes = reinterpret_cast<const int64_t *>(args + FA_ABI_SIZES);
  const int64_t B = sizes[0], Hq = sizes[1], Lq = sizes[3];
  const int64_t S = int64_t(args[FA_ABI_SPLITS]);
  const int64_t *st = reinterpret_cast<const int64_t *>(args + FA_ABI_STRIDES);
  Elem *O = reinterpret_cast<Elem *>(args[FA_ABI_O + 1]);
  float *LSE = reinterpret_cast<float *>(args[FA_ABI_LSE + 1]);
  const float *wsO = reinterpret_cast<const float *>(args[FA_ABI_WS_O + 1]);
  const float *wsLse = reinterpret_cast<const float *>(args[FA_ABI_WS_LSE + 1]);
  const int64_t h = env->block_id[1], b = env->block_id[2];
  const int64_t i =
      int64_t(env->block_id[0]) * combineBlockM + env->thread_id[0];
  if (i >= Lq)
    return;
  // A varlen sequence's rows: packed from cu_seqlens_q[b], Lq_b of them.
  int64_t row0 = 0;
  if (varlen) {
    const int32_t *cu =
        reinterpret_cast<const int32_t *>(args[FA_ABI_CU_SEQLENS_Q + 1]);
    if (i >= int64_t(cu[b + 1]) - cu[b])
      return;
    row0 = cu[b];
  }
  auto wsRow = [&](int64_t s) { return ((s * B + b) * Hq + h) * Lq + i; };
  float mx = -INFINITY;
  for (int64_t s = 0; s < S; ++s)
    mx = fmaxf(mx, wsLse[wsRow(s)]);
  float out[D] = {}, sum = 0;
  if (mx != -INFINITY)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t row = wsRow(s);
      const float weight = expf(wsLse[row] - mx); // 0 for an empty split
      sum += weight;
      for (int64_t d = 0; d < D; ++d)
        out[d] += weight * wsO[row * D + d];
    }
  const float inv = sum > 0 ? 1.f / sum : 0.f;
  Elem *o = O + b * st[9] + h * st[10] + (row0 + i) * st[11];
  for (int64_t d = 0; d < D; ++d)
    o[d] = fromFloat(out[d] * inv);
#if FA_HAS_LSE
  LSE[b * st[12] + h * st[13] + row0 + i] =
      sum > 0 ? mx + logf(sum) : -INFINITY;
#else
  (void)LSE;
#endif
}

} // namespace

#endif // FA_TEST_RUNTIME_KERNELS_COMBINESPLITS_H
