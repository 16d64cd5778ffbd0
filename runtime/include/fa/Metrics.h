//===- Metrics.h - Error metrics and pass criteria --------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Metrics of an output against the fp64 reference and the pass criteria
// (docs/validation.md explains the choices and gives the measurements):
//
//   1. no NaN or infinity in the output;
//   2. cosine similarity >= 0.999;
//   3. N(0,1) inputs only: max_abs_diff <= T, with T = 5e-5 (f32), 1e-2
//      (f16), 5e-2 (bf16). Not applied to the outlier mix: no one absolute
//      threshold fits outputs whose scale varies with the outliers;
//   4. the scaled error: max over elements of |O - O_ref| / max(A, floor)
//      <= S, with A_id = sum_j p_ij |v_jd| from the fp64 reference (the
//      scale of the rounding error of a weighted sum) and floor = max|V| x
//      2^-13; S = 1.5e-5 (f32), 3.6e-3 (f16), 2.8e-2 (bf16), 4x the worst
//      value a correct implementation showed in the survey
//      (test/runtime/validate/ValidationSurvey.cpp);
//   5. FlashAttention's criterion: max_abs_diff <= 2 x (max_abs_diff of the
//      naive same-precision reference) + 1e-5;
//   6. if the kernel writes LSE: max LSE difference <= 1e-4 x max(1, max
//      |LSE_ref|) (rows where both are -inf are skipped; -inf against a
//      finite value fails);
//   7. with strided layouts: no element of the output buffers' padding was
//      written.
//
// Library: fa::validate (libfa_validate.so, over fa::runtime).
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
  /// Largest |O - O_ref| / max(A, floor) over elements, A the conditioning
  /// magnitude sum_j p_ij |v_jd| (compareScaled); meaningful only when
  /// scaledCompared. `worstScaled` is the flat [B, Hq, Lq, D] index where it
  /// occurs.
  double maxScaledDiff = 0;
  size_t worstScaled = 0;
  bool scaledCompared = false;
  /// Elements of the output buffers outside the tensors (row and LSE
  /// padding) that the kernel changed; meaningful only when paddingChecked.
  size_t paddingWrites = 0;
  bool paddingChecked = false;
};

/// Compares `got` with `ref` element-wise (same length).
OutputMetrics compareOutputs(const std::vector<float> &got,
                             const std::vector<double> &ref);

/// Adds the LSE comparison to `metrics`.
void compareLse(OutputMetrics &metrics, const std::vector<float> &got,
                const std::vector<double> &ref);

/// The floor of the scaled error's denominator: max|V| x 2^-13 (about
/// 1.2e-4 x max|V|). It only matters where A is tiny (rows with no visible
/// key have A = 0): there the error is measured against the floor.
double magnitudeFloor(double maxAbsV);

/// Adds the scaled comparison to `metrics`: the largest
/// |got - ref| / max(magnitude, floor); an element with a zero denominator
/// counts 0 if it matches exactly, infinity otherwise; non-finite outputs
/// count infinity.
void compareScaled(OutputMetrics &metrics, const std::vector<float> &got,
                   const std::vector<double> &ref,
                   const std::vector<double> &magnitude, double floor);

/// Cosine similarity; 1 if both vectors are zero, 0 if only one is.
double cosineSimilarity(const std::vector<float> &got,
                        const std::vector<double> &ref);

/// Pass thresholds for one validation.
struct Criteria {
  double minCosine = 0.999;
  /// Absolute threshold T; applied only when applyMaxAbs (N(0,1) inputs).
  double maxAbs = 0;
  bool applyMaxAbs = true;
  double maxScaled = 0;     ///< threshold on maxScaledDiff
  double naiveFactor = 2;   ///< FA criterion: factor on the naive error
  double naiveSlack = 1e-5; ///< FA criterion: additive slack
  double lseMaxAbs = 0;     ///< LSE threshold (already scaled)
};

/// The scaled-error threshold of `dtype` (docs/validation.md: 4x the worst
/// value a correct implementation showed in the survey, keys up to 512).
/// For f32 the error is the fp32 accumulation's, which grows like the
/// square root of the number of keys: above 512 keys the threshold grows by
/// sqrt(seqK / 512) (measured on the H200 up to 8192 keys). f16 and bf16
/// errors are dominated by the rounding of P and the inputs, not the length.
double scaledThreshold(DType dtype, int64_t seqK = 0);

/// The documented criteria for `dtype` and `dist`; `maxAbsV` is max |V| of
/// the inputs, `maxAbsLse` max |finite LSE| of the reference, `seqK` the
/// number of keys (f32 thresholds grow with it: scaledThreshold).
Criteria defaultCriteria(DType dtype, Distribution dist, double maxAbsV,
                         double maxAbsLse, int64_t seqK = 0);

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

/// Applies `criteria` to `ours`, using `naive` for the FA criterion. The
/// scaled and padding checks are made only when `ours` has them.
Verdict judge(const OutputMetrics &ours, const OutputMetrics &naive,
              const Criteria &criteria);

} // namespace fa

#endif // FA_METRICS_H
