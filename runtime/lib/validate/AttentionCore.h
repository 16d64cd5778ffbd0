//===- AttentionCore.h - One head of the CPU references ---------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The row math of the CPU references (Reference.h), for one
// (sequence, query head): scores, row max, exp, sum, normalize, P·V, the
// conditioning magnitude, LSE. The dense, paged and variable-length
// references (Reference.cpp, PagedVarlen.cpp) differ only in where the rows
// of Q, K, V, O and LSE are; they describe that with a HeadTask and share
// this one routine, so their arithmetic is the same operation for operation
// (a paged or varlen result is bit-identical to the dense reference of the
// gathered sequence).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_VALIDATE_ATTENTIONCORE_H
#define FA_LIB_VALIDATE_ATTENTIONCORE_H

#include "fa/DType.h"
#include "fa/Half.h"
#include "fa/Status.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace fa {
namespace detail {

/// The keys [lo, hi) query row i of a sequence of lq queries and lk keys
/// sees (none when hi <= lo): FlashAttention 2's mask, bottom-right aligned
/// (shift = lk - lq): j >= i + shift - windowLeft where windowLeft >= 0,
/// j <= i + shift + windowRight where windowRight >= 0, j <= i + shift when
/// causal; the intersection of those is one range. Every reference (CPU and
/// device), the FLOP counts and the trace's reference use this rule, so they
/// cannot disagree about a row's keys. Bounds up to INT64_MAX do not
/// overflow.
struct KeyRange {
  int64_t lo = 0, hi = 0;
  int64_t count() const { return hi > lo ? hi - lo : 0; }
};

inline KeyRange visibleKeys(int64_t i, int64_t lq, int64_t lk, bool causal,
                            int64_t windowLeft, int64_t windowRight) {
  const int64_t diagonal = i + lk - lq; // the key aligned with row i
  KeyRange r{0, lk};
  if (windowLeft >= 0 && windowLeft < diagonal)
    r.lo = diagonal - windowLeft;
  // Causal is a right bound of 0, tighter than any window_right.
  const int64_t right = causal ? 0 : windowRight;
  // diagonal + right + 1 < lk, written so that a large bound cannot
  // overflow.
  if (right >= 0 && right < lq - i - 1)
    r.hi = diagonal + right + 1;
  return r;
}

/// InvalidArgument unless both window bounds are at least -1 (-1:
/// unbounded) and the softcap is finite and at least 0 (0: none), as the
/// manifest requires; the checks of the dense, paged and varlen problems
/// share it (`kind` names the problem).
inline Status checkWindowSoftcap(const char *kind, int64_t windowLeft,
                                 int64_t windowRight, double softcap) {
  for (const auto &[name, bound] :
       {std::pair<const char *, int64_t>{"window_left", windowLeft},
        {"window_right", windowRight}})
    if (bound < -1)
      return Status::error(
          ErrorCode::InvalidArgument,
          std::string("invalid ") + kind + " problem: " + name + " = " +
              std::to_string(bound) + " (at least -1; -1: unbounded)");
  if (!(softcap >= 0) || !std::isfinite(softcap)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", softcap);
    return Status::error(ErrorCode::InvalidArgument,
                         std::string("invalid ") + kind +
                             " problem: softcap = " + buf +
                             " (a finite number of at least 0; 0: none)");
  }
  return Status::success();
}

/// InvalidArgument unless `slopes` and `sinks` are each empty (none) or
/// `heads` finite values (one per query head), as the kernel's f32 [Hq]
/// operands; shared by the checks of the dense, paged and varlen problems.
inline Status checkHeadParams(const char *kind, int64_t heads,
                              const std::vector<float> &slopes,
                              const std::vector<float> &sinks) {
  for (const auto &[name, values] :
       {std::pair<const char *, const std::vector<float> *>{"alibi_slopes",
                                                            &slopes},
        {"sinks", &sinks}}) {
    if (values->empty())
      continue;
    if (int64_t(values->size()) != heads)
      return Status::error(ErrorCode::InvalidArgument,
                           std::string("invalid ") + kind + " problem: " +
                               name + " has " + std::to_string(values->size()) +
                               " values, Hq = " + std::to_string(heads) +
                               " (one per query head)");
    for (size_t h = 0; h < values->size(); ++h)
      if (!std::isfinite((*values)[h])) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", double((*values)[h]));
        return Status::error(ErrorCode::InvalidArgument,
                             std::string("invalid ") + kind +
                                 " problem: " + name + "[" + std::to_string(h) +
                                 "] = " + buf + " (finite values)");
      }
  }
  return Status::success();
}

/// The capped score softcap * tanh(s / softcap) (s itself when softcap is
/// 0), in the arithmetic type of the caller.
template <typename T> inline T capScore(T s, T softcap) {
  return softcap > T(0) ? softcap * std::tanh(s / softcap) : s;
}

/// Where the rows of one (sequence, head) of K or V are: row r at
/// base + r * rowStride, or, with a page table, at
/// base + pages[r / pageSize] * pageStride + (r % pageSize) * rowStride.
struct KeyRows {
  const float *base = nullptr;
  int64_t rowStride = 0;
  const int32_t *pages = nullptr; ///< nullptr: not paged
  int64_t pageSize = 0;
  int64_t pageStride = 0;

  const float *row(int64_t r) const {
    if (!pages)
      return base + r * rowStride;
    return base + int64_t(pages[r / pageSize]) * pageStride +
           (r % pageSize) * rowStride;
  }
};

/// One (sequence, query head): its sizes and where its rows are. Row i of Q
/// is at q + i * qStride, row i of O (and of the magnitude) at
/// o + i * oStride, its LSE at lse[i * lseStride].
template <typename T> struct HeadTask {
  int64_t lq = 0, lk = 0, headDim = 0;
  bool causal = false;
  int64_t windowLeft = -1, windowRight = -1;
  double scale = 0;
  double softcap = 0;
  /// ALiBi: scores less alibiSlope * |i + lk - lq - j| (0: none).
  double alibiSlope = 0;
  /// An attention sink: exp(sink) joins each row's denominator.
  bool hasSink = false;
  double sink = 0;
  const float *q = nullptr;
  int64_t qStride = 0;
  KeyRows k, v;
  T *o = nullptr;
  int64_t oStride = 0;
  T *lse = nullptr;
  int64_t lseStride = 0;
  T *magnitude = nullptr; ///< nullptr: not computed
};

/// Computes all rows of one (sequence, query head) in arithmetic type T.
/// `roundType` (F16/BF16) rounds P and the output like a plain 16-bit
/// implementation; F32 rounds nothing. `scores` holds at least t.lk values.
/// The caller zero-fills the magnitude rows. A row that sees no key (causal
/// with Lq > Lk, a window that leaves none, or Lk = 0) gets O = 0 and
/// LSE = -inf, or LSE = the sink with a sink (whose exp(sink) is then the
/// whole denominator). ALiBi subtracts slope * |i + Lk - Lq - j| from the
/// capped score; the sink enters the row max and the sum once per row.
template <typename T>
void attentionRows(const HeadTask<T> &t, DType roundType,
                   std::vector<T> &scores) {
  const int64_t D = t.headDim, Lq = t.lq, Lk = t.lk;
  const T scale = T(t.scale), softcap = T(t.softcap);
  const T slope = T(t.alibiSlope), sink = T(t.sink);
  const bool round16 = roundType != DType::F32;

  for (int64_t i = 0; i < Lq; ++i) {
    // Keys lo .. hi-1 are visible (visibleKeys: causal and the window).
    const KeyRange keys =
        visibleKeys(i, Lq, Lk, t.causal, t.windowLeft, t.windowRight);
    const int64_t lo = keys.lo, hi = keys.hi;
    const float *qRow = t.q + i * t.qStride;
    T *oRow = t.o + i * t.oStride;
    if (hi <= lo) {
      for (int64_t c = 0; c < D; ++c)
        oRow[c] = T(0);
      t.lse[i * t.lseStride] =
          t.hasSink ? sink : -std::numeric_limits<T>::infinity();
      continue;
    }
    T rowMax = t.hasSink ? sink : -std::numeric_limits<T>::infinity();
    for (int64_t j = lo; j < hi; ++j) {
      const float *kRow = t.k.row(j);
      T dot = 0;
      for (int64_t c = 0; c < D; ++c)
        dot += T(qRow[c]) * T(kRow[c]);
      scores[j] = capScore(dot * scale, softcap);
      if (t.alibiSlope != 0) {
        const int64_t distance = i + Lk - Lq - j;
        scores[j] -= slope * T(distance < 0 ? -distance : distance);
      }
      rowMax = std::max(rowMax, scores[j]);
    }
    // The sink's term, once per row.
    T sum = t.hasSink ? std::exp(sink - rowMax) : T(0);
    for (int64_t j = lo; j < hi; ++j) {
      scores[j] = std::exp(scores[j] - rowMax);
      sum += scores[j];
    }
    for (int64_t j = lo; j < hi; ++j) {
      scores[j] /= sum; // P
      if (round16)
        scores[j] = T(roundTo(roundType, float(scores[j])));
    }
    for (int64_t c = 0; c < D; ++c)
      oRow[c] = 0;
    for (int64_t j = lo; j < hi; ++j) {
      const float *vRow = t.v.row(j);
      for (int64_t c = 0; c < D; ++c)
        oRow[c] += scores[j] * T(vRow[c]);
    }
    if (t.magnitude) {
      T *aRow = t.magnitude + i * t.oStride;
      for (int64_t j = lo; j < hi; ++j) {
        const float *vRow = t.v.row(j);
        for (int64_t c = 0; c < D; ++c)
          aRow[c] += scores[j] * std::fabs(T(vRow[c]));
      }
    }
    if (round16)
      for (int64_t c = 0; c < D; ++c)
        oRow[c] = T(roundTo(roundType, float(oRow[c])));
    t.lse[i * t.lseStride] = rowMax + std::log(sum);
  }
}

} // namespace detail
} // namespace fa

#endif // FA_LIB_VALIDATE_ATTENTIONCORE_H
