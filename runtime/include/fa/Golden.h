//===- Golden.h - Independent golden attention vectors ----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Loads one case of test/data/golden/: float64-computed outputs from an
// independent implementation (PyTorch), which guard against a convention bug
// shared by our kernels and our reference. A case folder holds meta.json,
// q.bin, k.bin, v.bin (inputs in the case's dtype, contiguous BHLD,
// little-endian), o_ref_f32.bin and lse_ref_f32.bin.
//
// Library: fa::validate (libfa_validate.so, over fa::runtime).
//
//===----------------------------------------------------------------------===//

#ifndef FA_GOLDEN_H
#define FA_GOLDEN_H

#include "fa/Inputs.h"
#include "fa/Reference.h"

#include <string>
#include <vector>

namespace fa {

struct GoldenCase {
  std::string name;
  std::string folder;
  DType dtype = DType::F32;
  AttentionProblem problem;
  Distribution dist = Distribution::Normal;
  uint64_t seed = 0;
  /// Rows with no visible key, as meta.json states.
  int64_t emptyRows = 0;
  AttentionData inputs;
  std::vector<float> oRef;   ///< [B, Hq, Lq, D]
  std::vector<float> lseRef; ///< [B, Hq, Lq], -inf for empty rows
};

/// Reads and checks the case in `folder`: fields present and sane, every
/// file exactly the size the shape implies.
Expected<GoldenCase> loadGoldenCase(const std::string &folder);

} // namespace fa

#endif // FA_GOLDEN_H
