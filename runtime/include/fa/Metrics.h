//===- Metrics.h - Error metrics and pass criteria --------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Metrics of an output against the fp64 reference and the pass criteria
// (docs/validation.md explains the choices):
//
//   1. cosine similarity >= 0.999;
//   2. max_abs_diff <= T, with T = 5e-5 (f32), 1e-2 (f16), 5e-2 (bf16) on
//      N(0,1) inputs; for the outlier mix T is multiplied by max |V|, since
//      outputs (convex combinations of V rows) scale with it;
//   3. FlashAttention's criterion: max_abs_diff <= 2 x (max_abs_diff of the
//      naive same-precision reference) + 1e-5;
//   4. if the kernel writes LSE: max LSE difference <= 1e-4 x max(1, max
//      |LSE_ref|) (rows where both are -inf are skipped; -inf against a
//      finite value fails);
//   5. no NaN or infinity in the output.
//
//===----------------------------------------------------------------------===//

#ifndef FA_METRICS_H
#define FA_METRICS_H

#include "fa/DType.h"
#include "fa/Inputs.h"

#include <string>
#include <vector>

namespace fa {

/// How far an output is from a reference.
struct OutputMetrics {
  double maxAbsDiff = 0;
  double meanAbsDiff = 0;
  double rmse = 0;
  double cosine = 1;
  /// Largest |LSE - LSE_ref| over rows not -inf in both; meaningful only
  /// when lseCompared.
  double lseMaxAbsDiff = 0;
  bool lseCompared = false;
  /// NaN or infinite output elements (they also make maxAbsDiff infinite).
  size_t nonFinite = 0;
  size_t count = 0;
};

/// Compares `got` with `ref` element-wise (same length).
OutputMetrics compareOutputs(const std::vector<float> &got,
                             const std::vector<double> &ref);

/// Adds the LSE comparison to `metrics`.
void compareLse(OutputMetrics &metrics, const std::vector<float> &got,
                const std::vector<double> &ref);

/// Cosine similarity; 1 if both vectors are zero, 0 if only one is.
double cosineSimilarity(const std::vector<float> &got,
                        const std::vector<double> &ref);

/// Pass thresholds for one validation.
struct Criteria {
  double minCosine = 0.999;
  double maxAbs = 0;        ///< absolute threshold T (already scaled)
  double naiveFactor = 2;   ///< FA criterion: factor on the naive error
  double naiveSlack = 1e-5; ///< FA criterion: additive slack
  double lseMaxAbs = 0;     ///< LSE threshold (already scaled)
};

/// The documented criteria for `dtype` and `dist`; `maxAbsV` is max |V| of
/// the inputs, `maxAbsLse` max |finite LSE| of the reference.
Criteria defaultCriteria(DType dtype, Distribution dist, double maxAbsV,
                         double maxAbsLse);

/// One check of a verdict, readable: "cosine 0.99999 >= 0.999".
struct Check {
  std::string name;
  bool pass = false;
  double value = 0;
  double limit = 0;
  std::string text;
};

struct Verdict {
  bool pass = true;
  std::vector<Check> checks;
};

/// Applies `criteria` to `ours`, using `naive` for the FA criterion.
Verdict judge(const OutputMetrics &ours, const OutputMetrics &naive,
              const Criteria &criteria);

} // namespace fa

#endif // FA_METRICS_H
