//===- Perturb.h - Known-wrong variants of a problem, for tests -*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the metric tests and the validation survey: the answers a known
// bug would give, computed with the reference on a perturbed problem.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TEST_RUNTIME_PERTURB_H
#define FA_TEST_RUNTIME_PERTURB_H

#include "fa/Validate.h"

namespace fa {
namespace test {

inline /// The problem with the last key removed (K and V truncated to Lk - 1
       /// keys):
    /// for a causal problem every row loses its last visible key, as when the
    /// causal loop stops one key short.
    AttentionData
    dropLastKey(const AttentionProblem &p, const AttentionData &d,
                AttentionProblem &out) {
  out = p;
  out.shape.seqK = p.shape.seqK - 1;
  AttentionData r{d.q, {}, {}};
  const int64_t D = p.headDim, Lk = p.shape.seqK;
  for (int64_t bh = 0; bh < p.shape.batch * p.shape.headsKv; ++bh)
    for (int64_t j = 0; j + 1 < Lk; ++j)
      for (int64_t c = 0; c < D; ++c) {
        r.k.push_back(d.k[(bh * Lk + j) * D + c]);
        r.v.push_back(d.v[(bh * Lk + j) * D + c]);
      }
  return r;
}

} // namespace test
} // namespace fa

#endif // FA_TEST_RUNTIME_PERTURB_H
