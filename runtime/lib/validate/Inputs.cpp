//===- Inputs.cpp - Seeded random attention inputs ------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the input distributions of Inputs.h with a portable
// Box-Muller transform over std::mt19937_64 (validate/Sampler.h).
//
//===----------------------------------------------------------------------===//

#include "fa/Inputs.h"
#include "validate/Sampler.h"

#include <algorithm>
#include <cmath>

using namespace fa;
using namespace fa::detail;

const char *fa::distributionName(Distribution dist) {
  return dist == Distribution::Normal ? "normal" : "outliers";
}

std::optional<Distribution> fa::parseDistribution(std::string_view name) {
  if (name == "normal")
    return Distribution::Normal;
  if (name == "outliers")
    return Distribution::Outliers;
  return std::nullopt;
}

AttentionData fa::generateInputs(const AttentionProblem &problem, DType dtype,
                                 Distribution dist, uint64_t seed) {
  AttentionData data;
  // Empty for a problem checkShape refuses: its sizes may not even fit in
  // size_t (checkProblem then reports the shape).
  if (!checkShape(problem).ok())
    return data;
  Sampler sampler(seed);
  fillValues(data.q, problem.qElements(), dtype, dist, sampler);
  fillValues(data.k, problem.kvElements(), dtype, dist, sampler);
  fillValues(data.v, problem.kvElements(), dtype, dist, sampler);
  return data;
}

std::vector<float> fa::bloomAlibiSlopes(int64_t heads) {
  std::vector<float> slopes;
  for (int64_t h = 0; h < heads; ++h)
    slopes.push_back(float(std::exp2(-8.0 * double(h + 1) / double(heads))));
  return slopes;
}

/// The head parameters' generators are seeded apart from the inputs'.
static constexpr uint64_t kAlibiStream = 0xa11b1a11b1a11b1aull;
static constexpr uint64_t kSinkStream = 0x5111c5111c5111c5ull;

std::vector<float> fa::drawAlibiSlopes(int64_t heads, uint64_t seed) {
  Sampler sampler(seed ^ kAlibiStream);
  std::vector<float> slopes = bloomAlibiSlopes(heads);
  for (float &slope : slopes)
    slope = float(double(slope) * std::exp2(2.0 * sampler.uniform() - 1.0));
  return slopes;
}

std::vector<float> fa::drawSinks(int64_t heads, int64_t seqK, uint64_t seed) {
  Sampler sampler(seed ^ kSinkStream);
  std::vector<float> sinks;
  for (int64_t h = 0; h < heads; ++h)
    sinks.push_back(float(8.0 * sampler.uniform() - 4.0));
  if (heads >= 2) {
    const int64_t dominant = sampler.integer(0, heads - 1);
    sinks[size_t(dominant)] =
        float(std::log(double(std::max<int64_t>(1, seqK))) + 4.0 +
              2.0 * sampler.uniform());
  }
  return sinks;
}
