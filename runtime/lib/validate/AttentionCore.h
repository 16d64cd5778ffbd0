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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace fa {
namespace detail {

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
  double scale = 0;
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
/// with Lq > Lk, or Lk = 0) gets O = 0 and LSE = -inf.
template <typename T>
void attentionRows(const HeadTask<T> &t, DType roundType,
                   std::vector<T> &scores) {
  const int64_t D = t.headDim, Lq = t.lq, Lk = t.lk;
  const T scale = T(t.scale);
  const bool round16 = roundType != DType::F32;

  for (int64_t i = 0; i < Lq; ++i) {
    // Keys 0 .. visible-1 are visible (bottom-right aligned causal mask).
    int64_t visible = t.causal ? std::min(Lk, i + Lk - Lq + 1) : Lk;
    const float *qRow = t.q + i * t.qStride;
    T *oRow = t.o + i * t.oStride;
    if (visible <= 0) {
      for (int64_t c = 0; c < D; ++c)
        oRow[c] = T(0);
      t.lse[i * t.lseStride] = -std::numeric_limits<T>::infinity();
      continue;
    }
    T rowMax = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < visible; ++j) {
      const float *kRow = t.k.row(j);
      T dot = 0;
      for (int64_t c = 0; c < D; ++c)
        dot += T(qRow[c]) * T(kRow[c]);
      scores[j] = dot * scale;
      rowMax = std::max(rowMax, scores[j]);
    }
    T sum = 0;
    for (int64_t j = 0; j < visible; ++j) {
      scores[j] = std::exp(scores[j] - rowMax);
      sum += scores[j];
    }
    for (int64_t j = 0; j < visible; ++j) {
      scores[j] /= sum; // P
      if (round16)
        scores[j] = T(roundTo(roundType, float(scores[j])));
    }
    for (int64_t c = 0; c < D; ++c)
      oRow[c] = 0;
    for (int64_t j = 0; j < visible; ++j) {
      const float *vRow = t.v.row(j);
      for (int64_t c = 0; c < D; ++c)
        oRow[c] += scores[j] * T(vRow[c]);
    }
    if (t.magnitude) {
      T *aRow = t.magnitude + i * t.oStride;
      for (int64_t j = 0; j < visible; ++j) {
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
