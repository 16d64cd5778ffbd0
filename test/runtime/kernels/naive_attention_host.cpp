//===- naive_attention_host.cpp - Hand-written host-target test kernel ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A test fixture standing in for what `fac` will emit for the host target: an
// attention kernel that follows KernelAbi.h exactly and computes with the
// fa_host_env the emulator provides. One workgroup handles BLOCK_M query rows
// of one (batch, head); each row belongs to LANES consecutive threads. Per
// KV tile of BLOCK_N keys:
//   1. all threads copy the K and V tile to LDS (as f32);   barrier
//   2. each lane scores its keys (j = lane, lane + LANES, ...) against its
//      row; row max and row sum by xor shuffles across the row's lanes; the
//      online-softmax statistics rescale the accumulator first; P goes to
//      LDS;                                                  barrier
//   3. each lane accumulates P·V for its D / LANES columns;  barrier
// Every LDS access is announced through env->lds_access.
//
// Compile-time configuration (the CMake function that builds the variants
// passes the same values to the manifest):
//   FA_KERNEL_NAME, FA_ELEM (0 f32, 1 f16, 2 bf16), FA_HEAD_DIM, FA_CAUSAL,
//   FA_HAS_LSE, FA_SCALE, FA_BLOCK_M, FA_BLOCK_N, FA_THREADS, FA_WAVE_SIZE,
//   FA_WINDOW_LEFT, FA_WINDOW_RIGHT (the sliding window, -1 unbounded, the
//   default), FA_SOFTCAP (0 none, the default), FA_ALIBI and FA_SINKS (1:
//   the kernel takes the head-parameter words, KernelAbi.h, and applies
//   ALiBi's slopes / the attention sinks; 0 the default),
//   FA_BUG (0 none; 1 drops the barrier after the tile copy: an LDS race;
//   2 lets rows past Lq return before the barriers: barrier divergence;
//   3 the causal loop over K/V stops one key short of the block's last row's
//   end, so the last visible key of that row is missing; 4 writes O with Q's
//   strides; 5 reads V with K's strides; 6 writes LSE contiguously, ignoring
//   its strides; 7 does not apply the softmax scale; 8 also writes the
//   element after the last row of the last (batch, head) of O: one past the
//   end of a contiguous O; 9 also writes the element before LSE's first;
//   10-13, thread 1 of the last workgroup, before anything else: 10 reads a
//   byte 64 MiB past the end of K, 11 the byte 4 bytes past the end of K,
//   12 the byte 4 bytes before the start of V; 13 writes a byte 1 MiB past
//   the end of O; 14 the window's left edge one key too far left, so that
//   each row whose window starts past key 0 sees one key too many; 15 does
//   not apply the softcap; 16 measures ALiBi's distance from the start,
//   |i - j|, not from the end, |i + Lk - Lq - j|; 17 adds the sink to the
//   denominator once per K/V block, not once per row; 18 leaves the sink
//   out of LSE).
//
// No heap allocation: the emulator may abandon a misbehaving thread.
//
//===----------------------------------------------------------------------===//

#include "FixtureElem.h"
#include "fa/KernelAbi.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef FA_WINDOW_LEFT
#define FA_WINDOW_LEFT -1
#endif
#ifndef FA_WINDOW_RIGHT
#define FA_WINDOW_RIGHT -1
#endif
#ifndef FA_ALIBI
#define FA_ALIBI 0
#endif
#ifndef FA_SINKS
#define FA_SINKS 0
#endif
#ifndef FA_SOFTCAP
#define FA_SOFTCAP 0
#endif

#define FA_CAT2(a, b) a##b
#define FA_CAT(a, b) FA_CAT2(a, b)
#define FA_ENTRY FA_CAT(FA_KERNEL_NAME, _host)

namespace {

constexpr int64_t D = FA_HEAD_DIM;
constexpr int64_t BLOCK_M = FA_BLOCK_M;
constexpr int64_t BLOCK_N = FA_BLOCK_N;
constexpr uint32_t THREADS = FA_THREADS;
constexpr uint32_t LANES = FA_THREADS / FA_BLOCK_M;
constexpr int64_t COLS = D / LANES;
static_assert(LANES * BLOCK_M == THREADS, "threads must be a multiple of rows");
static_assert((LANES & (LANES - 1)) == 0, "lanes per row: a power of two");
static_assert(D % LANES == 0 && BLOCK_N % LANES == 0, "tiles split by lanes");

inline float shuffleXor(fa_host_env *env, float value, uint32_t offset) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  bits = env->shuffle(env->emu, bits, offset, env->wave_size, FA_SHUFFLE_XOR);
  memcpy(&value, &bits, 4);
  return value;
}

inline void announce(fa_host_env *env, const void *p, uint32_t bytes,
                     bool write) {
  env->lds_access(env->emu, p, bytes, write ? 1 : 0);
}

} // namespace

// What the runtime checks the manifest against (KernelAbi.h).
#define FA_INFO FA_CAT(FA_ENTRY, _info)
extern "C" __attribute__((visibility("default"))) const fa_host_info FA_INFO = {
    /*abi_version=*/1, // dense: FA_ABI_V1_NUM_WORDS words
    /*info_bytes=*/sizeof(fa_host_info),
    /*num_words=*/FA_ABI_V1_NUM_WORDS +
        (FA_ALIBI || FA_SINKS ? FA_ABI_HEAD_WORDS : 0),
    /*env_bytes=*/sizeof(fa_host_env),
    /*lds_bytes=*/4 * (2 * BLOCK_N * D + BLOCK_M * BLOCK_N),
    /*threads=*/THREADS,
    /*wave_size=*/FA_WAVE_SIZE,
    /*dtype=*/FA_ELEM == 0 ? FA_HOST_DTYPE_F32
    : FA_ELEM == 1         ? FA_HOST_DTYPE_F16
                           : FA_HOST_DTYPE_BF16,
    /*head_dim=*/D,
    /*block_m=*/BLOCK_M,
    /*block_n=*/BLOCK_N,
    /*has_lse=*/FA_HAS_LSE,
    /*index_bits=*/64,
    /*static_sizes=*/{-1, -1, -1, -1, -1}};

extern "C" __attribute__((visibility("default"))) void
FA_ENTRY(const uint64_t *args, fa_host_env *env) {
  const int64_t *sizes = reinterpret_cast<const int64_t *>(args + FA_ABI_SIZES);
  const int64_t *st = reinterpret_cast<const int64_t *>(args + FA_ABI_STRIDES);
  const int64_t Hq = sizes[1], Hkv = sizes[2], Lq = sizes[3], Lk = sizes[4];
  const Elem *Q = reinterpret_cast<const Elem *>(args[FA_ABI_Q + 1]);
  const Elem *K = reinterpret_cast<const Elem *>(args[FA_ABI_K + 1]);
  const Elem *V = reinterpret_cast<const Elem *>(args[FA_ABI_V + 1]);
  Elem *O = reinterpret_cast<Elem *>(args[FA_ABI_O + 1]);
  float *LSE = reinterpret_cast<float *>(args[FA_ABI_LSE + 1]);
  // The head words follow version 1's: slopes and sinks, f32 [Hq].
  const uint64_t *head = args + FA_ABI_V1_NUM_WORDS;
  const float *slopes =
      FA_ALIBI ? reinterpret_cast<const float *>(head[FA_ABI_ALIBI + 1])
               : nullptr;
  const float *sinks =
      FA_SINKS ? reinterpret_cast<const float *>(head[FA_ABI_SINKS + 1])
               : nullptr;

  const uint32_t tid = env->thread_id[0];
#if FA_BUG >= 10 && FA_BUG <= 13
  if (tid == 1 && env->block_id[0] == env->grid_dim[0] - 1 &&
      env->block_id[1] == env->grid_dim[1] - 1 &&
      env->block_id[2] == env->grid_dim[2] - 1) {
    // Planted out-of-bounds accesses (addresses as integers: the pointers
    // would point outside their objects).
    const uintptr_t kEnd = uintptr_t(args[FA_ABI_K + 1]) +
                           uintptr_t(args[FA_ABI_K + 3]) * sizeof(Elem);
#if FA_BUG == 10
    (void)*reinterpret_cast<const volatile char *>(kEnd +
                                                   (uintptr_t(64) << 20));
#elif FA_BUG == 11
    (void)*reinterpret_cast<const volatile char *>(kEnd + 4);
#elif FA_BUG == 12
    (void)*reinterpret_cast<const volatile char *>(
        uintptr_t(args[FA_ABI_V + 1]) - 4);
#else
    *reinterpret_cast<volatile char *>(
        uintptr_t(args[FA_ABI_O + 1]) +
        uintptr_t(args[FA_ABI_O + 3]) * sizeof(Elem) + (uintptr_t(1) << 20)) =
        1;
#endif
    (void)kEnd;
  }
#endif
  const int64_t b = env->block_id[2], h = env->block_id[1];
  const int64_t m0 = int64_t(env->block_id[0]) * BLOCK_M;
  const int64_t hk = h / (Hq / Hkv);
  const int64_t row = tid / LANES, lane = tid % LANES;
  const int64_t i = m0 + row;
  const bool active = i < Lq;
#if FA_BUG == 2
  if (!active)
    return; // planted bug: these threads miss every barrier below
#endif

  float *kTile = reinterpret_cast<float *>(env->lds);
  float *vTile = kTile + BLOCK_N * D;
  float *pTile = vTile + BLOCK_N * D;
  const Elem *kBase = K + b * st[3] + hk * st[4];
#if FA_BUG == 5
  const int64_t *vSt = st + 3; // planted bug: K's strides
#else
  const int64_t *vSt = st + 6;
#endif
  const Elem *vBase = V + b * vSt[0] + hk * vSt[1];

  float q[D];
  for (int64_t c = 0; c < D; ++c)
    q[c] = active ? toFloat(Q[b * st[0] + h * st[1] + i * st[2] + c]) : 0.f;
  float acc[COLS] = {};
  float m = -INFINITY, l = 0;

  // Keys [rowBegin, rowEnd) are visible to row i; the block loops from the
  // first row's window start to the last row's end so every thread meets
  // the same barriers. Causal is a right bound of 0.
  const int64_t shift = Lk - Lq;
  const int64_t right = FA_CAUSAL ? 0 : FA_WINDOW_RIGHT;
  int64_t rowEnd = right >= 0 ? i + shift + right + 1 : Lk;
  int64_t rowBegin = FA_WINDOW_LEFT >= 0 ? i + shift - FA_WINDOW_LEFT : 0;
#if FA_BUG == 14
  rowBegin -= 1; // planted bug: the window's left edge one key early
#endif
  int64_t kvBegin = 0, kvEnd = Lk;
  if (right >= 0) {
    int64_t lastRow = (m0 + BLOCK_M < Lq ? m0 + BLOCK_M : Lq) - 1;
    kvEnd = lastRow + shift + right + 1 < Lk ? lastRow + shift + right + 1 : Lk;
#if FA_BUG == 3
    kvEnd -= 1; // planted bug: one key short
    rowEnd = rowEnd < kvEnd ? rowEnd : kvEnd;
#endif
  }
  if (FA_WINDOW_LEFT >= 0 && m0 + shift - FA_WINDOW_LEFT > 0)
    kvBegin = (m0 + shift - FA_WINDOW_LEFT) / BLOCK_N * BLOCK_N;
#if FA_BUG == 7
  const float scale = 1.0f; // planted bug: scale not applied
#else
  const float scale = float(FA_SCALE);
#endif
  const float slope = slopes ? slopes[h] : 0.f;
  const float sink = sinks ? sinks[h] : -INFINITY;
  (void)slope;
  (void)sink;

  for (int64_t n0 = kvBegin; n0 < kvEnd; n0 += BLOCK_N) {
    for (int64_t e = tid; e < BLOCK_N * D; e += THREADS) {
      int64_t j = n0 + e / D, c = e % D;
      float kv = j < Lk ? toFloat(kBase[j * st[5] + c]) : 0.f;
      float vv = j < Lk ? toFloat(vBase[j * vSt[2] + c]) : 0.f;
      announce(env, &kTile[e], 4, true);
      kTile[e] = kv;
      announce(env, &vTile[e], 4, true);
      vTile[e] = vv;
    }
#if FA_BUG != 1
    env->barrier(env->emu);
#endif

    float s[BLOCK_N / LANES];
    float localMax = -INFINITY;
    for (int64_t t = 0; t < BLOCK_N / LANES; ++t) {
      int64_t jj = lane + t * LANES, j = n0 + jj;
      s[t] = -INFINITY;
      if (active && j < Lk && j >= rowBegin && j < rowEnd) {
        const float *kRow = &kTile[jj * D];
        announce(env, kRow, uint32_t(D * 4), false);
        float dot = 0;
        for (int64_t c = 0; c < D; ++c)
          dot += q[c] * kRow[c];
        s[t] = dot * scale;
#if FA_BUG != 15 // planted bug: the softcap not applied
        if (FA_SOFTCAP > 0)
          s[t] = float(FA_SOFTCAP) * tanhf(s[t] / float(FA_SOFTCAP));
#endif
#if FA_BUG == 16
        const int64_t distance = i - j; // planted bug: from the start
#else
        const int64_t distance = i + shift - j;
#endif
        if (FA_ALIBI)
          s[t] -= slope * float(distance < 0 ? -distance : distance);
      }
      localMax = fmaxf(localMax, s[t]);
    }
    for (uint32_t off = 1; off < LANES; off <<= 1)
      localMax = fmaxf(localMax, shuffleXor(env, localMax, off));
#if FA_BUG == 17
    // Planted bug: the sink joins every block's statistics.
    localMax = fmaxf(localMax, sink);
#endif
    const float mNew = fmaxf(m, localMax);
    float localSum = 0;
#if FA_BUG == 17
    if (lane == 0)
      localSum = expf(sink - mNew);
#endif
    for (int64_t t = 0; t < BLOCK_N / LANES; ++t) {
      int64_t jj = lane + t * LANES;
      float p = s[t] == -INFINITY ? 0.f : expf(s[t] - mNew);
      announce(env, &pTile[row * BLOCK_N + jj], 4, true);
      pTile[row * BLOCK_N + jj] = p;
      localSum += p;
    }
    for (uint32_t off = 1; off < LANES; off <<= 1)
      localSum += shuffleXor(env, localSum, off);
    const float alpha = m == -INFINITY ? 0.f : expf(m - mNew);
    l = alpha * l + localSum;
    for (int64_t c = 0; c < COLS; ++c) // rescale first ...
      acc[c] *= alpha;
    m = mNew;
    env->barrier(env->emu);

    for (int64_t jj = 0; jj < BLOCK_N; ++jj) { // ... then accumulate
      announce(env, &pTile[row * BLOCK_N + jj], 4, false);
      float p = pTile[row * BLOCK_N + jj];
      const float *vRow = &vTile[jj * D + lane * COLS];
      announce(env, vRow, uint32_t(COLS * 4), false);
      for (int64_t c = 0; c < COLS; ++c)
        acc[c] += p * vRow[c];
    }
    env->barrier(env->emu);
  }

  if (!active)
    return;
#if FA_SINKS && FA_BUG != 17
  {
    // The sink, once per row: it joins the max and the sum, not the output.
    const float mNew = fmaxf(m, sink);
    const float alpha = m == -INFINITY ? 0.f : expf(m - mNew);
    for (int64_t c = 0; c < COLS; ++c)
      acc[c] *= alpha;
#if FA_BUG == 18
    // Planted bug: O divides by the sum with the sink, LSE without it.
    const float lNoSink = alpha * l;
    l = lNoSink + expf(sink - mNew);
    m = mNew;
    const float inv = l > 0 ? 1.f / l : 0.f;
    l = lNoSink;
#else
    l = alpha * l + expf(sink - mNew);
    m = mNew;
    const float inv = l > 0 ? 1.f / l : 0.f;
#endif
#else
  {
    const float inv = l > 0 ? 1.f / l : 0.f;
#endif
#if FA_BUG == 4
    const int64_t *oSt = st; // planted bug: Q's strides
#else
    const int64_t *oSt = st + 9;
#endif
    Elem *oRow = O + b * oSt[0] + h * oSt[1] + i * oSt[2] + lane * COLS;
    for (int64_t c = 0; c < COLS; ++c)
      oRow[c] = fromFloat(acc[c] * inv);
#if FA_BUG == 8
    if (b == sizes[0] - 1 && h == Hq - 1 && i == Lq - 1 && lane == LANES - 1)
      oRow[COLS] = fromFloat(1.f); // planted: one element past the row
#endif
#if FA_HAS_LSE
#if FA_BUG == 9
    if (b == 0 && h == 0 && i == 0 && lane == 0)
      LSE[-1] = 1.f; // planted: one element before the buffer
#endif
    if (lane == 0)
#if FA_BUG == 6
      LSE[(b * Hq + h) * Lq + i] = l > 0 ? m + logf(l) : -INFINITY; // planted
#else
      LSE[b * st[12] + h * st[13] + i] = l > 0 ? m + logf(l) : -INFINITY;
#endif
#else
    (void)LSE;
#endif
  }
}
