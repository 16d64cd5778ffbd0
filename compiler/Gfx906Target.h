//===- Gfx906Target.h - The gfx906 backend ----------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// gfx906 (AMD MI50/MI60): the Level 2 gpu.module goes through the upstream
// ROCDL lowering to LLVM, the AMDGPU backend and ld.lld to an .hsaco. The
// backend's own figures (VGPRs, SGPRs, LDS, scratch, spills, instruction
// mix, the KV loop's instructions) are read back from its output: on gfx906
// these compile-time figures, and a static throughput estimate built on
// them, are what we can report, since no MI50 is available.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_GFX906TARGET_H
#define FA_COMPILER_GFX906TARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fa {

/// The kernels of `module`'s gpu.modules as an LLVM-dialect module with
/// ROCDL ops, ready for translation. math.exp2/log2/fma become LLVM
/// intrinsics (v_exp_f32, v_log_f32, v_fma_f32), so no device library is
/// needed. With `indexBits` = 32, index arithmetic and the memref
/// descriptors' offset/size/stride kernel arguments are 32-bit (the runtime
/// packs the kernarg segment accordingly: KernelAbi.h). With `dot2`, the
/// Q·Kᵀ products over contiguous f16 pairs become v_dot2_f32_f16
/// (llvm.amdgcn.fdot2, f32 accumulation).
FailureOr<OwningOpRef<ModuleOp>> lowerToRocdl(ModuleOp module,
                                              unsigned indexBits, bool dot2);

/// A loop nested in the KV loop (a dot or copy loop the backend did not
/// unroll): its header and its trip count, 0 where that is not static.
struct AmdgpuInnerLoop {
  std::string header;
  int64_t trips = 0;
};

/// The instructions of one iteration of a kernel's KV loop, counted in the
/// assembly: every instruction of the loop body once, those of an inner loop
/// times its trip count (once where that is not static).
struct AmdgpuLoopStats {
  /// The loop header's label (`.LBB0_42`).
  std::string header;
  /// The loops nested inside it, in the order of the code.
  std::vector<AmdgpuInnerLoop> inner;
  /// The instruction classes of AmdgpuResources::mix, in the loop only.
  std::map<std::string, int64_t> mix;
  /// All VALU (`v_*`) instructions and the v_dot2_f32_f16 among them.
  int64_t valu = 0, dot2 = 0;
  /// Scalar instructions (`s_*`: SALU, branches, s_waitcnt, s_barrier).
  int64_t salu = 0, barriers = 0;
  /// LDS instructions (`ds_*`), the reads and writes among them and the
  /// bytes these move per lane.
  int64_t lds = 0, ldsReads = 0, ldsWrites = 0;
  int64_t ldsReadBytes = 0, ldsWriteBytes = 0;
  /// Vector memory instructions (`global_*`, `buffer_*`, `flat_*`).
  int64_t global = 0;
  /// The FLOP per lane its multiply-accumulate instructions can do (v_dot2:
  /// 4, v_fma_mix: 2, ...): less than an iteration's GEMMs need means the
  /// counts miss work (inner loops whose trip count is not static).
  int64_t macFlopsPerLane = 0;
};

/// What the AMDGPU backend reports for one kernel.
struct AmdgpuResources {
  std::string kernel;
  int64_t vgprs = 0, sgprs = 0, vgprSpills = 0, sgprSpills = 0;
  int64_t ldsBytes = 0, scratchBytes = 0, wavefrontSize = 0;
  /// Instruction classes counted in the kernel's code.
  std::map<std::string, int64_t> mix;
  /// The KV loop: of the outermost loops with multiply-accumulate
  /// instructions (v_dot2, v_fma_mix, v_fmac, v_mac, v_pk_fma), the one with
  /// the most MAC FLOP per iteration; on a tie, the one with the fewest inner
  /// loops without a static trip count, then the fewest VALU instructions.
  std::optional<AmdgpuLoopStats> kvLoop;
  /// The other outermost loops with multiply-accumulate instructions (other
  /// versions of the KV loop: the scalar-copy fallback, a causal kernel's
  /// diagonal blocks), in the same order.
  std::vector<AmdgpuLoopStats> otherMacLoops;
};

/// Parses the backend's assembly output (`.amdhsa_*` directives and the
/// code object metadata) into one entry per kernel, with its instruction
/// mix and KV loop (natural loops of the kernel's control-flow graph).
std::vector<AmdgpuResources> parseAmdgpuResources(llvm::StringRef assembly);

/// Bytes per lane an LDS read or write moves (`ds_read2_b64`: 2 x 8), from
/// its mnemonic; 0 for other instructions.
int64_t ldsBytesPerLane(llvm::StringRef mnemonic);

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

/// Reads each kernel's resources from an AMDGPU ELF (relocatable object or
/// .hsaco) itself: the NT_AMDGPU_METADATA note's msgpack `amdhsa.kernels`
/// (.vgpr_count, .sgpr_count, spill counts, .group_segment_fixed_size,
/// .private_segment_fixed_size, .wavefront_size). No instruction mix.
llvm::Expected<std::vector<AmdgpuResources>>
readAmdgpuCodeObject(llvm::StringRef elf);

/// Waves per SIMD that gfx906 can keep resident for a kernel with these
/// resources and `threads` per workgroup, with the limit that binds.
int64_t gfx906WavesPerSimd(const AmdgpuResources &r, int64_t threads,
                           std::string *limitedBy = nullptr);

/// A human-readable report, estimates labelled as such. The tile shape
/// (BLOCK_M, BLOCK_N, head dimension D) gives the KV loop's FLOPs.
std::string formatAmdgpuResources(const AmdgpuResources &r, int64_t threads,
                                  int64_t blockM, int64_t blockN,
                                  int64_t headDim);

} // namespace mlir::fa

#endif // FA_COMPILER_GFX906TARGET_H
