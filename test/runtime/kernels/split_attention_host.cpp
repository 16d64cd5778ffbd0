//===- split_attention_host.cpp - Hand-written split-KV kernel pair -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A test fixture standing in for what `fac --kv-splits=runtime` will emit for
// the host target: the two kernels of a split-KV attention (KernelAbi.h, ABI
// version 2, 55 words), written by hand so that the runtime's side of the
// ABI (S, the workspace, both grids, the two launches) is tested without the
// compiler. One thread per query row; no LDS, no barriers.
//
// Split kernel, grid (ceil(R / BLOCK_M) * S, Hg, B): grid x = m * S + s is
// split s of Q tile m. Its rows are Q rows m*BLOCK_M.. of head y, or, with
// FA_GQA_PACKED, packed rows p of KV head y (query head y*G + p / Lq,
// position p mod Lq, G = Hq/Hkv). The tile sees keys [0, kvEnd) (causal:
// up to its last row's diagonal), n = ceil(kvEnd / BLOCK_N) K/V blocks;
// split s visits blocks [s*c, min((s+1)*c, n)) with c = ceil(n / S), runs
// online softmax in f32 over the keys its row may see, and writes
// O_s = acc / l and lse_s = m + ln l (0 and -inf when it saw no key) to the
// workspace at batch index s*B + b.
//
// Combine kernel, grid (ceil(Lq / COMBINE_BLOCK_M), Hq, B): CombineSplits.h
// (shared with the paged fixture).
//
// Compile-time configuration (the CMake function passes the same values to
// the manifest): FA_KERNEL_NAME, FA_COMBINE_NAME, FA_ELEM (0 f32, 1 f16,
// 2 bf16), FA_HEAD_DIM, FA_CAUSAL, FA_HAS_LSE, FA_SCALE, FA_BLOCK_M,
// FA_BLOCK_N, FA_COMBINE_BLOCK_M, FA_GQA_PACKED, FA_WAVE_SIZE, and
// FA_HOST_ABI_VERSION, the split kernel's fa_host_info version (2; 1 plants
// a code object whose record disagrees with its manifest).
//
//===----------------------------------------------------------------------===//

#include "CombineSplits.h"
#include "FixtureElem.h"
#include "fa/KernelAbi.h"

#include <math.h>
#include <stdint.h>

#define FA_CAT2(a, b) a##b
#define FA_CAT(a, b) FA_CAT2(a, b)
#define FA_SPLIT_ENTRY FA_CAT(FA_KERNEL_NAME, _host)
#define FA_COMBINE_ENTRY FA_CAT(FA_COMBINE_NAME, _host)

namespace {

constexpr int64_t D = FA_HEAD_DIM;
constexpr int64_t BLOCK_M = FA_BLOCK_M;
constexpr int64_t BLOCK_N = FA_BLOCK_N;
constexpr int64_t COMBINE_BLOCK_M = FA_COMBINE_BLOCK_M;

constexpr uint32_t hostDtype = FA_ELEM == 0   ? FA_HOST_DTYPE_F32
                               : FA_ELEM == 1 ? FA_HOST_DTYPE_F16
                                              : FA_HOST_DTYPE_BF16;

/// The ABI words every kernel of the pair reads.
struct Words {
  int64_t B, Hq, Hkv, Lq, Lk, S;
  const int64_t *st; // the 14 strides
  const Elem *Q, *K, *V;
  Elem *O;
  float *LSE, *wsO, *wsLse;

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
  }
  /// Workspace row (split s, batch b, head h, row i): [S*B, Hq, Lq(, D)].
  int64_t wsRow(int64_t s, int64_t b, int64_t h, int64_t i) const {
    return ((s * B + b) * Hq + h) * Lq + i;
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

} // namespace

// What the runtime checks the manifest against (KernelAbi.h).
#define FA_SPLIT_INFO FA_CAT(FA_SPLIT_ENTRY, _info)
#define FA_COMBINE_INFO FA_CAT(FA_COMBINE_ENTRY, _info)
extern "C" __attribute__((visibility("default")))
const fa_host_info FA_SPLIT_INFO = {
    /*abi_version=*/FA_HOST_ABI_VERSION,
    /*info_bytes=*/sizeof(fa_host_info),
    /*num_words=*/FA_HOST_ABI_VERSION == 2 ? FA_ABI_V2_NUM_WORDS
                                           : FA_ABI_V1_NUM_WORDS,
    /*env_bytes=*/sizeof(fa_host_env),
    /*lds_bytes=*/0,
    /*threads=*/uint32_t(BLOCK_M),
    /*wave_size=*/FA_WAVE_SIZE,
    /*dtype=*/hostDtype,
    /*head_dim=*/D,
    /*block_m=*/BLOCK_M,
    /*block_n=*/BLOCK_N,
    /*has_lse=*/FA_HAS_LSE,
    /*index_bits=*/64,
    /*static_sizes=*/{-1, -1, -1, -1, -1}};
extern "C" __attribute__((visibility("default")))
const fa_host_info FA_COMBINE_INFO = {
    /*abi_version=*/2,
    /*info_bytes=*/sizeof(fa_host_info),
    /*num_words=*/FA_ABI_V2_NUM_WORDS,
    /*env_bytes=*/sizeof(fa_host_env),
    /*lds_bytes=*/0,
    /*threads=*/uint32_t(COMBINE_BLOCK_M),
    /*wave_size=*/FA_WAVE_SIZE,
    /*dtype=*/hostDtype,
    /*head_dim=*/D,
    /*block_m=*/COMBINE_BLOCK_M,
    /*block_n=*/BLOCK_N,
    /*has_lse=*/FA_HAS_LSE,
    /*index_bits=*/64,
    /*static_sizes=*/{-1, -1, -1, -1, -1}};

extern "C" __attribute__((visibility("default"))) void
FA_SPLIT_ENTRY(const uint64_t *args, fa_host_env *env) {
  const Words w(args);
  const int64_t S = w.S;
  const int64_t m = int64_t(env->block_id[0]) / S;
  const int64_t s = int64_t(env->block_id[0]) % S;
  const int64_t hg = env->block_id[1], b = env->block_id[2];
  const int64_t r = env->thread_id[0];
  int64_t h, i;
  if (!rowOf(w, m, r, hg, h, i))
    return;
  const int64_t hk = h / (w.Hq / w.Hkv);
  const int64_t *st = w.st;

  // The tile's keys: all, or (causal) up to its last row's diagonal.
  const int64_t shift = w.Lk - w.Lq;
  int64_t kvEnd = w.Lk;
  if (FA_CAUSAL) {
    int64_t lastPos = -1;
    for (int64_t rr = 0; rr < BLOCK_M; ++rr) {
      int64_t hh, ii;
      if (rowOf(w, m, rr, hg, hh, ii) && ii > lastPos)
        lastPos = ii;
    }
    kvEnd = lastPos + shift + 1 < w.Lk ? lastPos + shift + 1 : w.Lk;
    if (kvEnd < 0)
      kvEnd = 0;
  }
  const int64_t n = (kvEnd + BLOCK_N - 1) / BLOCK_N;
  const int64_t c = (n + S - 1) / S;
  const int64_t first = s * c < n ? s * c : n;
  const int64_t last = (s + 1) * c < n ? (s + 1) * c : n;
  int64_t rowEnd = FA_CAUSAL ? i + shift + 1 : w.Lk;
  if (rowEnd > w.Lk)
    rowEnd = w.Lk;

  float q[D], acc[D] = {};
  for (int64_t d = 0; d < D; ++d)
    q[d] = toFloat(w.Q[b * st[0] + h * st[1] + i * st[2] + d]);
  float mx = -INFINITY, l = 0;
  for (int64_t j = first * BLOCK_N; j < last * BLOCK_N && j < rowEnd; ++j) {
    const Elem *k = w.K + b * st[3] + hk * st[4] + j * st[5];
    const Elem *v = w.V + b * st[6] + hk * st[7] + j * st[8];
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
  const int64_t row = w.wsRow(s, b, h, i);
  const float inv = l > 0 ? 1.f / l : 0.f;
  for (int64_t d = 0; d < D; ++d)
    w.wsO[row * D + d] = acc[d] * inv;
  w.wsLse[row] = l > 0 ? mx + logf(l) : -INFINITY;
}

extern "C" __attribute__((visibility("default"))) void
FA_COMBINE_ENTRY(const uint64_t *args, fa_host_env *env) {
  combineSplits<D>(args, env, COMBINE_BLOCK_M);
}
