//===- Inputs.cpp - Seeded random attention inputs ------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the input distributions of Inputs.h with a portable
// Box-Muller transform over std::mt19937_64.
//
//===----------------------------------------------------------------------===//

#include "fa/Inputs.h"
#include "fa/Half.h"

#include <cmath>
#include <random>

using namespace fa;

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

namespace {
/// Standard normal and uniform draws that are the same on every platform.
class Sampler {
public:
  explicit Sampler(uint64_t seed) : engine(seed) {}

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(engine() >> 11) * 0x1.0p-53; }

  double normal() {
    if (haveSpare) {
      haveSpare = false;
      return spare;
    }
    double u1 = 1.0 - uniform(); // (0, 1]: log is finite
    double u2 = uniform();
    double r = std::sqrt(-2.0 * std::log(u1));
    double t = 6.283185307179586476925286766559 * u2;
    spare = r * std::sin(t);
    haveSpare = true;
    return r * std::cos(t);
  }

private:
  std::mt19937_64 engine;
  double spare = 0;
  bool haveSpare = false;
};
} // namespace

static void fill(std::vector<float> &out, size_t n, DType dtype,
                 Distribution dist, Sampler &sampler) {
  out.resize(n);
  for (float &x : out) {
    double value = sampler.normal();
    if (dist == Distribution::Outliers && sampler.uniform() < 0.001)
      value += 10.0 * sampler.normal();
    x = roundTo(dtype, float(value));
  }
}

AttentionData fa::generateInputs(const AttentionProblem &problem, DType dtype,
                                 Distribution dist, uint64_t seed) {
  AttentionData data;
  // Empty for a problem checkShape refuses: its sizes may not even fit in
  // size_t (checkProblem then reports the shape).
  if (!checkShape(problem).ok())
    return data;
  Sampler sampler(seed);
  fill(data.q, problem.qElements(), dtype, dist, sampler);
  fill(data.k, problem.kvElements(), dtype, dist, sampler);
  fill(data.v, problem.kvElements(), dtype, dist, sampler);
  return data;
}
