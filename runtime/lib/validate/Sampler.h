//===- Sampler.h - Portable seeded random draws -----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. std::mt19937_64 with our own uniform, normal (Box-Muller) and
// integer draws and shuffle: std::normal_distribution,
// std::uniform_int_distribution and std::shuffle differ between standard
// libraries, these do not. Shared by the dense inputs (Inputs.cpp) and the
// paged / variable-length generators (PagedVarlen.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_VALIDATE_SAMPLER_H
#define FA_LIB_VALIDATE_SAMPLER_H

#include "fa/Half.h"
#include "fa/Inputs.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace fa {
namespace detail {

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

  /// Uniform in [lo, hi] (lo <= hi, hi - lo < 2^53).
  int64_t integer(int64_t lo, int64_t hi) {
    return lo + int64_t(uniform() * double(hi - lo + 1));
  }

  /// Fisher-Yates.
  template <typename T> void shuffle(std::vector<T> &values) {
    for (size_t i = values.size(); i > 1; --i)
      std::swap(values[i - 1], values[size_t(integer(0, int64_t(i) - 1))]);
  }

private:
  std::mt19937_64 engine;
  double spare = 0;
  bool haveSpare = false;
};

/// `n` values of `dist`, each rounded to `dtype`.
inline void fillValues(std::vector<float> &out, size_t n, DType dtype,
                       Distribution dist, Sampler &sampler) {
  out.resize(n);
  for (float &x : out) {
    double value = sampler.normal();
    if (dist == Distribution::Outliers && sampler.uniform() < 0.001)
      value += 10.0 * sampler.normal();
    x = roundTo(dtype, float(value));
  }
}

} // namespace detail
} // namespace fa

#endif // FA_LIB_VALIDATE_SAMPLER_H
