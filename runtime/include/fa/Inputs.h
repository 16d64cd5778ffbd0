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

} // namespace fa

#endif // FA_INPUTS_H
