//===- Inputs.h - Seeded random attention inputs ----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Reproducible inputs for validation: std::mt19937_64 with our own
// Box-Muller transform (std::normal_distribution differs between standard
// libraries), rounded to the kernel's element type.
//
// Distributions:
//   normal   : N(0, 1)
//   outliers : N(0, 1) + N(0, 100) * Bernoulli(0.001) -- FlashAttention 3's
//              mix; N(0, 100) has variance 100 (standard deviation 10), as
//              FA3's torch.randn(...) * 10.
//
// Library: fa::validate (libfa_validate.so, over fa::runtime).
//
//===----------------------------------------------------------------------===//

#ifndef FA_INPUTS_H
#define FA_INPUTS_H

#include "fa/Reference.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fa {

enum class Distribution { Normal, Outliers };

/// "normal" or "outliers".
const char *distributionName(Distribution dist);
std::optional<Distribution> parseDistribution(std::string_view name);

/// Q, then K, then V drawn from one generator seeded with `seed`, each value
/// rounded to `dtype`. Empty when checkShape(problem) fails. Allocates
/// 4 * (qElements + 2 * kvElements) bytes: check a large problem's memory
/// first (validateKernel does, see checkValidationMemory).
AttentionData generateInputs(const AttentionProblem &problem, DType dtype,
                             Distribution dist, uint64_t seed);

/// BLOOM's ALiBi slopes for `heads` query heads: slope h = 2^(-8 (h + 1) /
/// Hq), the geometric series of the ALiBi paper (exact for a power of two
/// heads, which is what BLOOM and MPT use).
std::vector<float> bloomAlibiSlopes(int64_t heads);

/// ALiBi slopes drawn from `seed`: bloomAlibiSlopes times a factor in
/// [0.5, 2] per head (2^u, u uniform in [-1, 1]), so that no kernel can
/// pass by assuming the series. A generator of its own (the inputs drawn
/// from the same seed do not change).
std::vector<float> drawAlibiSlopes(int64_t heads, uint64_t seed);

/// Attention sinks drawn from `seed`: uniform in [-4, 4] per head, except
/// that with two or more heads one head (drawn) gets a sink that dominates
/// its rows, log(max(1, seqK)) + 4 plus uniform [0, 2] (a row of N(0, 1)
/// inputs has a log-sum-exp near log(Lk) + 0.5), so both regimes are
/// checked. A generator of its own, as drawAlibiSlopes'.
std::vector<float> drawSinks(int64_t heads, int64_t seqK, uint64_t seed);

} // namespace fa

#endif // FA_INPUTS_H
