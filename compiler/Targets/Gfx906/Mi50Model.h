//===- Mi50Model.h - occupancy and MI50 estimate ----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// gfx906's occupancy rules and a static throughput estimate of the KV loop
// on an MI50 (docs/mi50-throughput-model.md), with the report text.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TARGETS_GFX906_MI50_MODEL_H
#define FA_COMPILER_TARGETS_GFX906_MI50_MODEL_H

#include "compiler/Targets/Gfx906/CodeObject.h"

#include <cstdint>
#include <string>

namespace mlir::fa {

/// A static, VALU- and LDS-bandwidth-bound throughput estimate of the KV
/// loop on an MI50 (docs/mi50-throughput-model.md). Per KV iteration and
/// workgroup: 4 BLOCK_M BLOCK_N D FLOP, 4 cycles per wave64 VALU
/// instruction on a CU's 4 SIMDs, 128 LDS bytes per cycle per CU.
struct Mi50Estimate {
  static constexpr int64_t cus = 60, simdsPerCu = 4, lanesPerSimd = 16;
  static constexpr double clockHz = 1.725e9;
  static constexpr int64_t valuCyclesPerOp = 4, ldsBytesPerCycle = 128;
  /// v_dot2_f32_f16: 2 MACs = 4 FLOP per lane and cycle (26.5 TFLOP/s);
  /// v_fma_f32: 2 FLOP (13.2 TFLOP/s).
  static constexpr double dot2PeakTflops =
      cus * simdsPerCu * lanesPerSimd * 4 * clockHz / 1e12;
  static constexpr double fp32PeakTflops = dot2PeakTflops / 2;

  int64_t wavesPerGroup = 0, simdsBusy = 0;
  int64_t flopsPerIteration = 0;
  /// The share of flopsPerIteration that the loop's counted MAC
  /// instructions can do: below 1, the estimate is not valid.
  double macCoverage = 0;
  /// CU cycles per workgroup iteration for its VALU issue and its LDS
  /// traffic, and the TFLOP/s each bound allows.
  double valuCycles = 0, ldsCycles = 0;
  double valuBoundTflops = 0, ldsBoundTflops = 0;
  /// The lower of the two bounds, and which one it is.
  double tflops = 0;
  bool ldsBound = false;
};
Mi50Estimate estimateMi50Throughput(const AmdgpuLoopStats &loop, int64_t blockM,
                                    int64_t blockN, int64_t headDim,
                                    int64_t threads, int64_t wavesPerSimd);

/// Waves per SIMD that gfx906 can keep resident for a kernel with these
/// resources and `threads` per workgroup, with the limit that binds.
int64_t gfx906WavesPerSimd(const AmdgpuResources &r, int64_t threads,
                           std::string *limitedBy = nullptr);

/// Workgroups of `threads` one CU holds at a time by the same limits (the
/// VGPR and SGPR files of its 4 SIMDs, its 64 KiB of LDS, 40 waves).
int64_t gfx906WorkgroupsPerCu(const AmdgpuResources &r, int64_t threads);

/// A human-readable report, estimates labelled as such. The tile shape
/// (BLOCK_M, BLOCK_N, head dimension D) gives the KV loop's FLOPs.
std::string formatAmdgpuResources(const AmdgpuResources &r, int64_t threads,
                                  int64_t blockM, int64_t blockN,
                                  int64_t headDim);

} // namespace mlir::fa

#endif // FA_COMPILER_TARGETS_GFX906_MI50_MODEL_H
