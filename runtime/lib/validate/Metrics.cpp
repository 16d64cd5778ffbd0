//===- Metrics.cpp - Error metrics and pass criteria ----------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the metrics and criteria of Metrics.h. Sums run in
// double; NaN anywhere counts as an infinite difference so it cannot pass.
//
//===----------------------------------------------------------------------===//

#include "fa/Metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace fa;

static const double inf = std::numeric_limits<double>::infinity();

double fa::cosineSimilarity(const std::vector<float> &got,
                            const std::vector<double> &ref) {
  double dot = 0, ng = 0, nr = 0;
  for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
    dot += double(got[i]) * ref[i];
    ng += double(got[i]) * got[i];
    nr += ref[i] * ref[i];
  }
  if (std::isnan(dot) || std::isnan(ng) || std::isinf(ng))
    return 0;
  if (ng == 0 && nr == 0)
    return 1;
  if (ng == 0 || nr == 0)
    return 0;
  return dot / (std::sqrt(ng) * std::sqrt(nr));
}

OutputMetrics fa::compareOutputs(const std::vector<float> &got,
                                 const std::vector<double> &ref) {
  OutputMetrics m;
  m.count = ref.size();
  if (got.size() != ref.size()) {
    m.maxAbsDiff = m.meanAbsDiff = m.rmse = inf;
    m.cosine = 0;
    return m;
  }
  double sumAbs = 0, sumSq = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double diff = std::fabs(double(got[i]) - ref[i]);
    if (!std::isfinite(got[i])) {
      ++m.nonFinite;
      diff = inf;
    }
    m.maxAbsDiff = std::max(m.maxAbsDiff, diff);
    sumAbs += diff;
    sumSq += diff * diff;
  }
  if (!got.empty()) {
    m.meanAbsDiff = sumAbs / double(got.size());
    m.rmse = std::sqrt(sumSq / double(got.size()));
  }
  m.cosine = cosineSimilarity(got, ref);
  return m;
}

void fa::compareLse(OutputMetrics &m, const std::vector<float> &got,
                    const std::vector<double> &ref) {
  m.lseCompared = true;
  m.lseMaxAbsDiff = 0;
  if (got.size() != ref.size()) {
    m.lseMaxAbsDiff = inf;
    return;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    bool gotEmpty = std::isinf(got[i]) && got[i] < 0;
    bool refEmpty = std::isinf(ref[i]) && ref[i] < 0;
    if (gotEmpty && refEmpty)
      continue;
    double diff = std::fabs(double(got[i]) - ref[i]);
    if (std::isnan(diff))
      diff = inf;
    m.lseMaxAbsDiff = std::max(m.lseMaxAbsDiff, diff);
  }
}

double fa::magnitudeFloor(double maxAbsV) { return std::ldexp(maxAbsV, -13); }

void fa::compareScaled(OutputMetrics &m, const std::vector<float> &got,
                       const std::vector<double> &ref,
                       const std::vector<double> &magnitude, double floor) {
  m.scaledCompared = true;
  m.maxScaledDiff = 0;
  m.worstScaled = 0;
  if (got.size() != ref.size() || magnitude.size() != ref.size()) {
    m.maxScaledDiff = inf;
    return;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    double diff = std::fabs(double(got[i]) - ref[i]);
    double denom = std::max(magnitude[i], floor);
    double scaled;
    if (!std::isfinite(got[i]) || std::isnan(diff))
      scaled = inf;
    else if (denom > 0)
      scaled = diff / denom;
    else
      scaled = diff == 0 ? 0 : inf;
    if (scaled > m.maxScaledDiff) {
      m.maxScaledDiff = scaled;
      m.worstScaled = i;
    }
  }
}

double fa::scaledThreshold(DType dtype, int64_t seqK) {
  switch (dtype) {
  case DType::F32:
    return 1.5e-5 * std::max(1.0, std::sqrt(double(seqK) / 512.0));
  case DType::F16:
    return 3.6e-3;
  case DType::BF16:
    return 2.8e-2;
  }
  return 0;
}

Criteria fa::defaultCriteria(DType dtype, Distribution dist, double maxAbsV,
                             double maxAbsLse, int64_t seqK) {
  Criteria c;
  switch (dtype) {
  case DType::F32:
    c.maxAbs = 5e-5 * std::max(1.0, std::sqrt(double(seqK) / 512.0));
    break;
  case DType::F16:
    c.maxAbs = 1e-2;
    break;
  case DType::BF16:
    c.maxAbs = 5e-2;
    break;
  }
  (void)maxAbsV;
  c.applyMaxAbs = dist == Distribution::Normal;
  c.maxScaled = scaledThreshold(dtype, seqK);
  c.lseMaxAbs = 1e-4 * std::max(1.0, maxAbsLse);
  return c;
}

static std::string format(const char *fmt, double a, double b) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), fmt, a, b);
  return buf;
}

Verdict fa::judge(const OutputMetrics &ours, const OutputMetrics &naive,
                  const Criteria &c) {
  Verdict v;
  auto add = [&](const char *name, bool pass, double value, double limit,
                 std::string text) {
    v.checks.push_back({name, pass, value, limit, std::move(text)});
    v.pass = v.pass && pass;
  };
  add("finite", ours.nonFinite == 0, double(ours.nonFinite), 0,
      format("non-finite outputs %.0f == %.0f", double(ours.nonFinite), 0));
  add("cosine", ours.cosine >= c.minCosine, ours.cosine, c.minCosine,
      format("cosine %.7f >= %g", ours.cosine, c.minCosine));
  if (c.applyMaxAbs)
    add("max_abs", ours.maxAbsDiff <= c.maxAbs, ours.maxAbsDiff, c.maxAbs,
        format("max_abs %.3e <= %.3e", ours.maxAbsDiff, c.maxAbs));
  if (ours.scaledCompared)
    add("scaled", ours.maxScaledDiff <= c.maxScaled, ours.maxScaledDiff,
        c.maxScaled,
        format("max |err| / sum p|v| %.3e <= %.3e", ours.maxScaledDiff,
               c.maxScaled));
  double faLimit = c.naiveFactor * naive.maxAbsDiff + c.naiveSlack;
  add("fa_criterion", ours.maxAbsDiff <= faLimit, ours.maxAbsDiff, faLimit,
      format("max_abs %.3e <= 2 x naive %.3e + 1e-5", ours.maxAbsDiff,
             naive.maxAbsDiff));
  if (ours.lseCompared)
    add("lse", ours.lseMaxAbsDiff <= c.lseMaxAbs, ours.lseMaxAbsDiff,
        c.lseMaxAbs,
        format("lse max_abs %.3e <= %.3e", ours.lseMaxAbsDiff, c.lseMaxAbs));
  if (ours.paddingChecked)
    add("padding", ours.paddingWrites == 0, double(ours.paddingWrites), 0,
        format("padding elements written %.0f == %.0f",
               double(ours.paddingWrites), 0));
  return v;
}
