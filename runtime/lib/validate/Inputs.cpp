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
