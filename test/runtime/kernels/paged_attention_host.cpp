//===- paged_attention_host.cpp - Hand-written paged K/V kernels ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A test fixture standing in for what `fac` will emit for the host target
// from an `fa.attention ... paged(%block_table, %cache_seqlens)`: a kernel
// of ABI version 3 (KernelAbi.h, 67 words) over a paged K/V cache, written
// by hand so that the runtime's side of the ABI (the table and length
// descriptors, the page size and table stride words, Lk = the longest
// sequence, the host-side checks) is tested without the compiler. One
// thread per query row; no LDS, no barriers.
//
// Semantics: K and V are caches [num_pages, page_size, Hkv, D] addressed
// through their stride words (page, head, row within a page); key n of
// sequence b is row n % page_size of page block_table[b * table_stride +
// n / page_size] (words 65, 66); sequence b has len_b = cache_seqlens[b]
// keys, and query i sees key j iff j < len_b and, causal, j <= i + len_b -
// Lq (bottom-right within the sequence's own length). A row that sees no
// key has O = 0, LSE = -inf. The key loop is bounded by the Lk word too (a
// kernel may: Lk is max(cache_seqlens)), so a launch whose Lk is short of
// the longest sequence loses keys.
//
// FA_SPLIT 0: one kernel, grid (ceil(R / BLOCK_M), Hg, B), the workspace
// words null and S = 1 (checked: a kernel given S != 1 writes NaN).
// FA_SPLIT 1: a split-KV pair (version 3 with kv_splits): the split kernel,
// grid (ceil(R / BLOCK_M) * S, Hg, B), split s of Q tile m at grid x m * S
// + s, visits key blocks [s*c, (s+1)*c) with c = ceil(ceil(Lk / BLOCK_N) /
// S) and writes O_s, lse_s to the workspace; its combine kernel is
// CombineSplits.h's. R, Hg = Lq, Hq, or with FA_GQA_PACKED Lq * Hq/Hkv,
// Hkv (packed row p: query head y*G + p / Lq, position p mod Lq).
//
// FA_MIXED 1: a mixed prefill/decode kernel (ABI version 4, manifest paged
// and varlen; KernelAbi.h): Q, O packed [total_q, Hq, D] and LSE [Hq,
// total_q] cut by cu_seqlens_q (word 67), Lq the max_seqlen_q word;
// sequence b's Lq_b = cu_seqlens_q[b+1] - cu_seqlens_q[b] queries are the
// last rows of its len_b keys (causal: j <= i + len_b - Lq_b); rows past
// Lq_b store nothing. It checks that cu_seqlens_k (words 72-76) is null
// (else NaN).
//
// Compile-time configuration (the CMake function passes the same values to
// the manifest): FA_KERNEL_NAME, FA_COMBINE_NAME, FA_SPLIT, FA_ELEM (0 f32,
// 1 f16, 2 bf16), FA_HEAD_DIM, FA_CAUSAL, FA_HAS_LSE, FA_SCALE, FA_BLOCK_M,
// FA_BLOCK_N, FA_COMBINE_BLOCK_M, FA_GQA_PACKED, FA_WAVE_SIZE,
// FA_HOST_ABI_VERSION (3; 2 plants a record that disagrees with the
// manifest), and FA_BUG, kernel bugs the validation must catch: 1 reads the
// whole last page of each sequence, masking the rows past its length with
// p = 0 (the poisoned rows make O NaN); 2 reads block_table with a row
// stride of ceil(Lk / page_size) entries instead of word 66; 3 aligns the
// causal diagonal to the Lk word instead of the sequence's own length; 4
// (mixed) aligns a sequence's queries to its first key instead of its last
// (causal: j <= i).
//
//===----------------------------------------------------------------------===//

#include "CombineSplits.h"
#include "FixtureElem.h"
#include "fa/KernelAbi.h"

#include <math.h>
#include <stdint.h>

#ifndef FA_MIXED
#define FA_MIXED 0
#endif

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
constexpr uint32_t hostWords = FA_HOST_ABI_VERSION == 4   ? FA_ABI_V4_NUM_WORDS
                               : FA_HOST_ABI_VERSION == 3 ? FA_ABI_V3_NUM_WORDS
                                                          : FA_ABI_V2_NUM_WORDS;

/// The ABI words the kernel reads.
struct Words {
  int64_t B, Hq, Hkv, Lq, Lk, S, pageSize, tableStride;
  const int64_t *st; // the 14 strides; K's and V's are (page, head, row)
  const Elem *Q, *K, *V;
  Elem *O;
  float *LSE, *wsO, *wsLse;
  const int32_t *table, *seqlens;
  /// A mixed kernel: cu_seqlens_q, and whether cu_seqlens_k is null.
  const int32_t *cuQ = nullptr;
  bool cuKNull = true;

  explicit Words(const uint64_t *args) {
    const int64_t *sizes =
        reinterpret_cast<const int64_t *>(args + FA_ABI_SIZES);
    B = sizes[0], Hq = sizes[1], Hkv = sizes[2], Lq = sizes[3], Lk = sizes[4];
    S = int64_t(args[FA_ABI_SPLITS]);
    pageSize = int64_t(args[FA_ABI_PAGE_SIZE]);
    tableStride = int64_t(args[FA_ABI_BLOCK_TABLE_STRIDE]);
    st = reinterpret_cast<const int64_t *>(args + FA_ABI_STRIDES);
    Q = reinterpret_cast<const Elem *>(args[FA_ABI_Q + 1]);
    K = reinterpret_cast<const Elem *>(args[FA_ABI_K + 1]);
    V = reinterpret_cast<const Elem *>(args[FA_ABI_V + 1]);
    O = reinterpret_cast<Elem *>(args[FA_ABI_O + 1]);
    LSE = reinterpret_cast<float *>(args[FA_ABI_LSE + 1]);
    wsO = reinterpret_cast<float *>(args[FA_ABI_WS_O + 1]);
    wsLse = reinterpret_cast<float *>(args[FA_ABI_WS_LSE + 1]);
    table = reinterpret_cast<const int32_t *>(args[FA_ABI_BLOCK_TABLE + 1]);
    seqlens = reinterpret_cast<const int32_t *>(args[FA_ABI_CACHE_SEQLENS + 1]);
    if (FA_MIXED) {
      cuQ = reinterpret_cast<const int32_t *>(args[FA_ABI_CU_SEQLENS_Q + 1]);
      const uint64_t *cuK = args + FA_ABI_CU_SEQLENS_K;
      cuKNull = !cuK[0] && !cuK[1] && !cuK[2] && !cuK[3] && cuK[4] == 1;
    }
  }
  /// Sequence b's queries and its first packed row (mixed), or Lq and 0.
  int64_t queries(int64_t b) const {
    return FA_MIXED ? int64_t(cuQ[b + 1]) - cuQ[b] : Lq;
  }
  int64_t firstRow(int64_t b) const { return FA_MIXED ? cuQ[b] : 0; }
  /// Key row j of sequence b, KV head hk, of `cache` (K or V).
  const Elem *row(const Elem *cache, int64_t cs, int64_t b, int64_t hk,
                  int64_t j) const {
    int64_t stride = tableStride;
    if (FA_BUG == 2)
      stride = (Lk + pageSize - 1) / pageSize;
    const int64_t page = table[b * stride + j / pageSize];
    return cache + page * st[cs] + hk * st[cs + 1] +
           (j % pageSize) * st[cs + 2];
  }
};

/// Row `r` of Q tile `m` in (query head, position) for grid y `hg`; false
/// past the last row.
bool rowOf(const Words &w, int64_t m, int64_t r, int64_t hg, int64_t &h,
           int64_t &i) {
  int64_t p = m * BLOCK_M + r;
  if (FA_GQA_PACKED) {
    const int64_t G = w.Hq / w.Hkv;
    if (p >= w.Lq * G)
      return false;
    h = hg * G + p / w.Lq;
    i = p % w.Lq;
    return true;
  }
  h = hg;
  i = p;
  return p < w.Lq;
}

/// Online softmax of query row (b, h, i) over its visible keys in [first,
/// last): acc / l in `out`, the row's log-sum-exp (or -inf) returned.
float attendRow(const Words &w, int64_t b, int64_t h, int64_t i, int64_t first,
                int64_t last, float *out) {
  const int64_t hk = h / (w.Hq / w.Hkv);
  const int64_t *st = w.st;
  const int64_t len = w.seqlens[b];
  // The visible keys: the sequence's own, within Lk, causal up to its
  // diagonal.
  int64_t end = len < w.Lk ? len : w.Lk;
  if (FA_CAUSAL) {
    int64_t diagonal = i + (FA_BUG == 3 ? w.Lk : len) - w.queries(b) + 1;
    if (FA_BUG == 4)
      diagonal = i + 1;
    end = diagonal < end ? diagonal : end;
  }
  // Bug 1 reads every row of the last page, past the sequence's length.
  int64_t readEnd = end;
  if (FA_BUG == 1 && end > 0)
    readEnd = (end + w.pageSize - 1) / w.pageSize * w.pageSize;
  if (last > readEnd)
    last = readEnd;

  float q[D], acc[D] = {};
  for (int64_t d = 0; d < D; ++d)
    q[d] =
        toFloat(w.Q[b * st[0] + h * st[1] + (w.firstRow(b) + i) * st[2] + d]);
  float mx = -INFINITY, l = 0;
  for (int64_t j = first; j < last; ++j) {
    const Elem *k = w.row(w.K, 3, b, hk, j);
    const Elem *v = w.row(w.V, 6, b, hk, j);
    if (j >= end) { // bug 1: a masked key, p = 0
      for (int64_t d = 0; d < D; ++d)
        acc[d] += 0.f * toFloat(v[d]) * toFloat(k[d]);
      continue;
    }
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
  if (!rowOf(w, m, env->thread_id[0], hg, h, i))
    return;
  // A mixed sequence's rows past its queries store nothing.
  if (i >= w.queries(b))
    return;
  float out[D];
#if FA_SPLIT
  // Split s's key blocks, from the longest sequence's count.
  const int64_t n = (w.Lk + BLOCK_N - 1) / BLOCK_N;
  const int64_t c = (n + S - 1) / S;
  const float lse =
      attendRow(w, b, h, i, s * c * BLOCK_N, (s + 1) * c * BLOCK_N, out);
  const int64_t row = ((s * w.B + b) * w.Hq + h) * w.Lq + i;
  for (int64_t d = 0; d < D; ++d)
    w.wsO[row * D + d] = out[d];
  w.wsLse[row] = lse;
#else
  float lse = attendRow(w, b, h, i, 0, w.Lk, out);
  // Not split: the runtime passes S = 1 and no workspace.
  if (w.S != 1 || w.wsO || w.wsLse || !w.cuKNull)
    lse = out[0] = NAN;
  const int64_t *st = w.st;
  const int64_t r = w.firstRow(b) + i;
  Elem *o = w.O + b * st[9] + h * st[10] + r * st[11];
  for (int64_t d = 0; d < D; ++d)
    o[d] = fromFloat(out[d]);
#if FA_HAS_LSE
  w.LSE[b * st[12] + h * st[13] + r] = lse;
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
  combineSplits<D>(args, env, FA_COMBINE_BLOCK_M, FA_MIXED);
}
#endif
