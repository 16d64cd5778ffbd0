//===- varlen_attention_host.cpp - Hand-written varlen kernels ------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A test fixture standing in for what `fac` emits for the host target from
// an `fa.attention` with `varlen`: a kernel of ABI version 4 (KernelAbi.h,
// 77 words) over a variable-length batch, written by hand so that the
// runtime's side of the ABI (the cu_seqlens descriptors, the packed
// tensors' strides, the null paged words, max_seqlen_q/k as Lq and Lk, the
// host-side checks) is tested without the compiler. One thread per query
// row; no LDS, no barriers.
//
// Semantics: Q, O packed [total_q, Hq, D], K, V [total_k, Hkv, D], LSE [Hq,
// total_q], addressed through their stride words (batch 0, head, row);
// sequence b is rows cu_q[b] .. cu_q[b+1]-1 of Q, O, LSE (Lq_b of them)
// and rows cu_k[b] .. cu_k[b+1]-1 of K, V (Lk_b), with cu_q, cu_k the
// descriptors of words 67 and 72. Query i of sequence b sees key j iff j <
// Lk_b and, causal, j <= i + Lk_b - Lq_b (bottom-right within the
// sequence's own lengths). A row that sees no key has O = 0, LSE = -inf; the
// rows of the grid past Lq_b store nothing. The paged words (55-66) must be
// null and a kernel that is not split-KV must get S = 1 and no workspace:
// otherwise it writes NaN.
//
// FA_SPLIT 0: one kernel, grid (ceil(R / BLOCK_M), Hg, B) with R = the Lq
// word (max_seqlen_q). FA_SPLIT 1: a split-KV pair: the split kernel, grid
// (ceil(R / BLOCK_M) * S, Hg, B), split s of Q tile m at grid x m * S + s,
// visits key blocks [s*c, (s+1)*c) with c = ceil(ceil(Lk / BLOCK_N) / S)
// (Lk the max_seqlen_k word) and writes O_s, lse_s to the workspace [S*B,
// Hq, max_seqlen_q, D] at row i of sequence b; its combine kernel is
// CombineSplits.h's in its varlen form. With FA_GQA_PACKED, R is Lq * Hq/Hkv
// and Hg Hkv; packed row p of sequence b is query head y*G + p / Lq_b,
// position p mod Lq_b (the sequence's own length).
//
// Compile-time configuration (the CMake function passes the same values to
// the manifest): as paged_attention_host.cpp's, FA_HOST_ABI_VERSION (4; 3
// plants a record that disagrees with the manifest), and FA_BUG, kernel
// bugs the validation must catch: 1 reads the keys of sequence b from row
// cu_seqlens_k[b] + 1 on (its offset one row off; clamped to the last row
// of K so that it stays in the buffer); 2 aligns the causal diagonal to the
// Lq and Lk words (max_seqlen_q/k) instead of the sequence's own lengths.
//
//===----------------------------------------------------------------------===//

#include "CombineSplits.h"
#include "FixtureElem.h"
#include "fa/KernelAbi.h"

#include <math.h>
#include <stdint.h>

#define FA_CAT2(a, b) a##b
#define FA_CAT(a, b) FA_CAT2(a, b)
#define FA_ENTRY FA_CAT(FA_KERNEL_NAME, _host)
#define FA_COMBINE_ENTRY FA_CAT(FA_COMBINE_NAME, _host)

namespace {

constexpr int64_t D = FA_HEAD_DIM;
constexpr int64_t BLOCK_M = FA_BLOCK_M;
constexpr int64_t BLOCK_N = FA_BLOCK_N;

constexpr uint32_t hostDtype = FA_ELEM == 0   ? FA_HOST_DTYPE_F32
                               : FA_ELEM == 1 ? FA_HOST_DTYPE_F16
                                              : FA_HOST_DTYPE_BF16;
constexpr uint32_t hostWords =
    FA_HOST_ABI_VERSION == 4 ? FA_ABI_V4_NUM_WORDS : FA_ABI_V3_NUM_WORDS;

/// The ABI words the kernel reads.
struct Words {
  int64_t B, Hq, Hkv, Lq, Lk, S;
  const int64_t *st; // the 14 strides: (0, head, row) of the packed tensors
  const Elem *Q, *K, *V;
  Elem *O;
  float *LSE, *wsO, *wsLse;
  const int32_t *cuQ, *cuK;
  /// Words 55-66 are null, as the ABI says for a varlen kernel.
  bool pagedNull;

  explicit Words(const uint64_t *args) {
    const int64_t *sizes =
        reinterpret_cast<const int64_t *>(args + FA_ABI_SIZES);
    B = sizes[0], Hq = sizes[1], Hkv = sizes[2], Lq = sizes[3], Lk = sizes[4];
    S = int64_t(args[FA_ABI_SPLITS]);
    st = reinterpret_cast<const int64_t *>(args + FA_ABI_STRIDES);
    Q = reinterpret_cast<const Elem *>(args[FA_ABI_Q + 1]);
    K = reinterpret_cast<const Elem *>(args[FA_ABI_K + 1]);
    V = reinterpret_cast<const Elem *>(args[FA_ABI_V + 1]);
    O = reinterpret_cast<Elem *>(args[FA_ABI_O + 1]);
    LSE = reinterpret_cast<float *>(args[FA_ABI_LSE + 1]);
    wsO = reinterpret_cast<float *>(args[FA_ABI_WS_O + 1]);
    wsLse = reinterpret_cast<float *>(args[FA_ABI_WS_LSE + 1]);
    cuQ = reinterpret_cast<const int32_t *>(args[FA_ABI_CU_SEQLENS_Q + 1]);
    cuK = reinterpret_cast<const int32_t *>(args[FA_ABI_CU_SEQLENS_K + 1]);
    pagedNull = true;
    for (int i = FA_ABI_BLOCK_TABLE; i < FA_ABI_V3_NUM_WORDS; ++i) {
      // The descriptors' stride words are 1, everything else 0.
      const bool strideWord =
          i < FA_ABI_PAGE_SIZE && (i - FA_ABI_BLOCK_TABLE) % 5 == 4;
      if (args[i] != (strideWord ? 1u : 0u))
        pagedNull = false;
    }
  }
  int64_t lq(int64_t b) const { return int64_t(cuQ[b + 1]) - cuQ[b]; }
  int64_t lk(int64_t b) const { return int64_t(cuK[b + 1]) - cuK[b]; }
  /// Packed row j of sequence b, KV head hk, of K or V (stride words at
  /// `cs`).
  const Elem *keyRow(const Elem *t, int64_t cs, int64_t b, int64_t hk,
                     int64_t j) const {
    int64_t row = cuK[b] + j;
    if (FA_BUG == 1) {
      row += 1;
      if (row >= cuK[B])
        row = cuK[B] - 1;
    }
    return t + b * st[cs] + hk * st[cs + 1] + row * st[cs + 2];
  }
};

/// Row `r` of Q tile `m` of sequence b in (query head, position) for grid y
/// `hg`; false past the sequence's rows.
bool rowOf(const Words &w, int64_t b, int64_t m, int64_t r, int64_t hg,
           int64_t &h, int64_t &i) {
  const int64_t p = m * BLOCK_M + r, lq = w.lq(b);
  if (FA_GQA_PACKED) {
    const int64_t G = w.Hq / w.Hkv;
    if (p >= lq * G)
      return false;
    h = hg * G + p / lq;
    i = p % lq;
    return true;
  }
  h = hg;
  i = p;
  return p < lq;
}

/// Online softmax of query row (b, h, i) over its visible keys in [first,
/// last): acc / l in `out`, the row's log-sum-exp (or -inf) returned.
float attendRow(const Words &w, int64_t b, int64_t h, int64_t i, int64_t first,
                int64_t last, float *out) {
  const int64_t hk = h / (w.Hq / w.Hkv);
  const int64_t *st = w.st;
  const int64_t lq = w.lq(b), lk = w.lk(b);
  int64_t end = lk;
  if (FA_CAUSAL) {
    const int64_t diagonal =
        FA_BUG == 2 ? i + w.Lk - w.Lq + 1 : i + lk - lq + 1;
    end = diagonal < end ? diagonal : end;
  }
  if (last > end)
    last = end;

  float q[D], acc[D] = {};
  const Elem *qRow = w.Q + b * st[0] + h * st[1] + (w.cuQ[b] + i) * st[2];
  for (int64_t d = 0; d < D; ++d)
    q[d] = toFloat(qRow[d]);
  float mx = -INFINITY, l = 0;
  for (int64_t j = first; j < last; ++j) {
    const Elem *k = w.keyRow(w.K, 3, b, hk, j);
    const Elem *v = w.keyRow(w.V, 6, b, hk, j);
    float dot = 0;
    for (int64_t d = 0; d < D; ++d)
      dot += q[d] * toFloat(k[d]);
    const float score = dot * float(FA_SCALE);
    const float mNew = fmaxf(mx, score);
    const float alpha = mx == -INFINITY ? 0.f : expf(mx - mNew);
    const float p = expf(score - mNew);
    l = alpha * l + p;
    for (int64_t d = 0; d < D; ++d)
      acc[d] = alpha * acc[d] + p * toFloat(v[d]);
    mx = mNew;
  }
  const float inv = l > 0 ? 1.f / l : 0.f;
  for (int64_t d = 0; d < D; ++d)
    out[d] = acc[d] * inv;
  return l > 0 ? mx + logf(l) : -INFINITY;
}

constexpr fa_host_info info(uint32_t threads, uint32_t blockM) {
  return {/*abi_version=*/FA_HOST_ABI_VERSION,
          /*info_bytes=*/sizeof(fa_host_info),
          /*num_words=*/hostWords,
          /*env_bytes=*/sizeof(fa_host_env),
          /*lds_bytes=*/0,
          /*threads=*/threads,
          /*wave_size=*/FA_WAVE_SIZE,
          /*dtype=*/hostDtype,
          /*head_dim=*/D,
          /*block_m=*/blockM,
          /*block_n=*/BLOCK_N,
          /*has_lse=*/FA_HAS_LSE,
          /*index_bits=*/64,
          /*static_sizes=*/{-1, -1, -1, -1, -1}};
}

} // namespace

// What the runtime checks the manifest against (KernelAbi.h).
#define FA_INFO FA_CAT(FA_ENTRY, _info)
extern "C" __attribute__((visibility("default"))) const fa_host_info FA_INFO =
    info(uint32_t(BLOCK_M), uint32_t(BLOCK_M));

extern "C" __attribute__((visibility("default"))) void
FA_ENTRY(const uint64_t *args, fa_host_env *env) {
  const Words w(args);
  const int64_t S = FA_SPLIT ? w.S : 1;
  const int64_t m = int64_t(env->block_id[0]) / S;
  const int64_t s = int64_t(env->block_id[0]) % S;
  const int64_t hg = env->block_id[1], b = env->block_id[2];
  int64_t h, i;
  if (!rowOf(w, b, m, env->thread_id[0], hg, h, i))
    return;
  float out[D];
#if FA_SPLIT
  // Split s's key blocks, from the longest sequence's count (max_seqlen_k).
  const int64_t n = (w.Lk + BLOCK_N - 1) / BLOCK_N;
  const int64_t c = (n + S - 1) / S;
  float lse =
      attendRow(w, b, h, i, s * c * BLOCK_N, (s + 1) * c * BLOCK_N, out);
  if (!w.pagedNull)
    lse = out[0] = NAN;
  // The workspace [S*B, Hq, max_seqlen_q, D]: row i of sequence b.
  const int64_t row = ((s * w.B + b) * w.Hq + h) * w.Lq + i;
  for (int64_t d = 0; d < D; ++d)
    w.wsO[row * D + d] = out[d];
  w.wsLse[row] = lse;
#else
  float lse = attendRow(w, b, h, i, 0, w.Lk, out);
  // Not split: the runtime passes S = 1, no workspace, null paged words.
  if (w.S != 1 || w.wsO || w.wsLse || !w.pagedNull)
    lse = out[0] = NAN;
  const int64_t *st = w.st;
  const int64_t row = w.cuQ[b] + i;
  Elem *o = w.O + b * st[9] + h * st[10] + row * st[11];
  for (int64_t d = 0; d < D; ++d)
    o[d] = fromFloat(out[d]);
#if FA_HAS_LSE
  w.LSE[b * st[12] + h * st[13] + row] = lse;
#endif
#endif
}

#if FA_SPLIT
#define FA_COMBINE_INFO FA_CAT(FA_COMBINE_ENTRY, _info)
extern "C" __attribute__((visibility("default")))
const fa_host_info FA_COMBINE_INFO =
    info(uint32_t(FA_COMBINE_BLOCK_M), uint32_t(FA_COMBINE_BLOCK_M));

extern "C" __attribute__((visibility("default"))) void
FA_COMBINE_ENTRY(const uint64_t *args, fa_host_env *env) {
  combineSplits<D>(args, env, FA_COMBINE_BLOCK_M, /*varlen=*/true);
}
#endif
