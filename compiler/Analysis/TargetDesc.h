//===- Target.h - Target descriptions ---------------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The one place that describes the machines fa generates code for. Passes
// read limits (LDS, registers, wave size) and capabilities (native bf16,
// dot instructions) from here, never from target names.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_ANALYSIS_TARGET_DESC_H
#define FA_COMPILER_ANALYSIS_TARGET_DESC_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::fa {

struct TargetDesc {
  const char *name;        ///< As spelled in options: "gfx906".
  const char *description; ///< Human-readable: "AMD MI50/MI60 (gfx906)".
  int64_t waveSize;        ///< Lanes per wave / warp.
  int64_t ldsBytes;        ///< Shared memory one workgroup may use.
  int64_t ldsBanks;        ///< Number of LDS banks.
  int64_t bankBytes;       ///< Width of one bank.
  int64_t maxRegsPerLane;  ///< VGPRs (AMD) or registers (NVIDIA) per thread.
  int64_t regGranule;      ///< Register allocation granule.
  int64_t maxWavesPerSimd; ///< Occupancy ceiling per SIMD (AMD) / SM partition.
  int64_t computeUnits;    ///< CUs or SMs.
  int64_t maxThreads;      ///< Largest workgroup.
  bool nativeBf16;         ///< bf16 arithmetic in hardware.
  bool hasMatrixUnits;     ///< Tensor/matrix cores.
  bool hasDot2F16;         ///< fp16x2 dot with f32 accumulate (v_dot2_f32_f16).
  /// Whether an explicit tile configuration over the register estimate is
  /// an error. The estimate was fitted to gfx906; on sm_90 ptxas judges
  /// (its spills go to the report and the manifest).
  bool registerEstimateBinds = true;
  /// Waves per SIMD the tile chooser aims for (counting the register
  /// estimate and, on AMD targets, the LDS each workgroup takes). The seed
  /// asks for 2 on gfx906 so that one wave's LDS and memory waits are
  /// covered by another's arithmetic.
  int64_t occupancyGoal = 1;
  /// Largest BLOCK_M and BLOCK_N the chooser considers (0: no cap). On
  /// sm_90 the register estimate (fitted to gfx906) does not bind; 128x64
  /// is what the H200 benchmark measured best (bench/results run 6: +12-25%
  /// over 64x64, ahead of 64x32 and a shared K/V slot).
  int64_t maxBlockM = 0, maxBlockN = 0;
  /// Keep 16-bit tiles in LDS as f32 (fa-promote widen=auto): the SIMT
  /// products then convert nothing per step. For targets with LDS to spare
  /// and no packed 16-bit dot product.
  bool widenLds = false;
  /// Asynchronous global -> shared copies (cp.async, sm_80+): a fetched
  /// K/V tile of fa-double-buffer waits in a shared staging area instead of
  /// registers. gfx906 has none: its fetches are register-staged.
  bool asyncCopy = false;
  /// K/V stages fa-tile's stages=0 (auto) starts from. 2 on gfx906 (and
  /// the host emulation of its kernel); 1 on NVIDIA, where the H200
  /// measured double buffering no faster (bench/results run 12: within 1%
  /// at D=128, slower at D=64): its L2 hides the K/V loads that the seed's
  /// gfx906 does not, and the fetch costs registers or shared memory.
  int64_t defaultStages = 2;
  /// fa-lower-to-gpu's share-rows=auto: the lhs rows of P·V (P), which the
  /// 16 lanes of a thread row all need, are read from LDS once per row (a
  /// sixteenth per lane) and passed around the row by lane rotations
  /// (gfx906: DPP row_ror, VALU work), instead of each lane reading them
  /// all: fewer registers live per step, more VALU. Off on every target:
  /// the calibrated MI50 timing model v2 finds gfx906's K/V loop VALU-bound
  /// and LDS broadcasts cheap (docs/gfx906-timing.md); fac turns it on for
  /// gfx906 where the backend spills without it (retryOnGfx906).
  bool shareRows = false;
  /// fa-tile's automatic tiles for a split-KV kernel (kv-splits=runtime,
  /// decode): a Q tile of a few rows (GQA packing puts the Hq/Hkv query
  /// heads of one KV head there) and small workgroups, so that each K/V
  /// row reaches few threads through LDS. gfx906 (and the host target,
  /// which emulates its kernel): 4 x 32, one wave: under the MI50 timing
  /// model v2 (2026-12-04, bench/results/2026-12-04-gfx906-decode-tiles-v2)
  /// 4-17% faster than 4 x 16 at B = 1 and within 5% of it at B >= 8
  /// (4 x 16 had been chosen under v1, +16-20% at B >= 8); the budget
  /// model still checks them. sm_90: 4 x 32, one
  /// warp, K and V in one slot (decodeKvShared): each lane holds all four
  /// rows of its key column (thread grid 1 x 32), so each K/V element is
  /// read from shared memory once, and 8 blocks fit an SM (H200,
  /// 2026-12-04, bench/results/2026-12-04-h200-decode-tiles: 69.9-79% of
  /// the copy bandwidth at B >= 8, Lk >= 8k, against 64-74% for 4 x 64
  /// over 2 warps and 56-66% for 4 x 32 over 4 warps).
  int64_t decodeBlockM = 4, decodeBlockN = 32, decodeWaves = 1;
  /// For split-KV kernels: K/V stages fa-tile's stages=0 starts from, and
  /// whether fa-promote's widen=auto keeps 16-bit tiles as f32 in LDS. The
  /// H200 measured f16 in shared memory and double-buffered fastest for
  /// decode (bench/results, decode.py).
  int64_t decodeStages = 2;
  bool decodeWidenLds = false;
  /// fa-tile's kv-splits=auto (fac's default): split-KV with the dense
  /// (prefill) tiles, for a dense attention (not paged, varlen or traced).
  /// At S = 1 such a kernel writes O itself, so a full grid costs nothing
  /// more, and a small one (a 512-row chunk over a long history: a few
  /// dozen workgroups for 60 CUs) splits its keys. gfx906: the MI50 timing
  /// model v2 gives D=128 causal +11% at 1,8,8,4096,4096 (S = 3) and +53%
  /// at 1,8,8,512,4096 (S = 13) over the dense build
  /// (bench/results/2026-12-03-gfx906-split-default). Off elsewhere.
  bool prefillKvSplits = false;
  /// Whether the decode tiles keep K and V in one LDS slot (fa-tile's
  /// kv-shared=auto for them). sm_90: on (the H200, 2026-12-04,
  /// bench/results/2026-12-04-h200-decode-tiles: 8 blocks per SM instead
  /// of 6 for 4 x 32 of one warp, +10% to +22% at B >= 8).
  bool decodeKvShared = false;
  /// fa-pad-lds pads LDS rows by multiples of this many bytes (0: of two
  /// elements, so that pair loads stay aligned). gfx906 (and the host
  /// target, which emulates its kernel): 16, so that a padded row stays
  /// aligned for ds_read_b128, which the backend forms from four
  /// consecutive pairs of a thread's row; at 2 elements (4 bytes) it
  /// forms ds_read2_b32 pairs instead. MI50 timing model v2, f16 causal,
  /// 1,8,8,512,4096 and 1,32,8,512,4096: D=64 +2.1-2.6%, D=128 +7%,
  /// D=256 +2.2% (docs/gfx906-timing.md).
  int64_t ldsPadBytes = 0;
  /// fa-merge-guards in the kernel pipeline: the scf.if guards of a block
  /// that test one condition become one (fewer exec-mask branches on AMD).
  /// gfx906 and host: on (MI50 timing model v2: the split-KV combine
  /// 1,32,8,1,4096 3.59 -> 3.42 us, prefill within 0.1%). sm_90: on (the
  /// H200, 2026-12-05: decode within 0.3% at B 1-32, Lk 1k-32k; prefill in
  /// bench/results/2026-12-05-h200-merge-splits). sm_80: off (unmeasured).
  bool mergeGuards = false;
  /// The split-KV combine merges a block's splits with fa.merge_splits:
  /// groups of threads walk disjoint splits at once and merge through LDS,
  /// where fa.combine's loop walks every split in every thread (one wave's
  /// serial walk was most of a B = 1 decode combine). gfx906 and host: on
  /// (docs/gfx906-timing.md). sm_90: on (the H200, 2026-12-05,
  /// bench/results/2026-12-05-h200-merge-splits: B = 1 decode 24.9 -> 22.4
  /// us at Lk = 8k, 55.1 -> 49.8 at 32k; B >= 8 within 0.3%). sm_80: off
  /// (unmeasured).
  bool mergeSplits = false;
  /// fa-tile carries the softmax's row sum l as each thread's partial sum
  /// (fa.row_reduce add partial), summed across the row's threads once
  /// after the loop (fa.row_combine), instead of reducing it across the
  /// row every K/V block. gfx906 and host: on (MI50 timing model v2: the
  /// D=64 loop 5-6% fewer non-product VALU instructions, prefill 0.4-1.1%
  /// faster; docs/gfx906-timing.md, "Row sums in parts"). sm_90: off (an
  /// H100, 2026-12-05, bench/results/2026-12-05-sm90-partial-sums: ptxas
  /// gave the D=64 dense kernel 199 registers instead of 128, one block
  /// per SM instead of two, -6%; D=128 causal -3%; capped at 128 registers
  /// it still lost 3%). sm_80: off (unmeasured).
  bool partialRowSums = false;
};

/// Returns the description of `name`, or null when unknown.
const TargetDesc *lookupTarget(llvm::StringRef name);

/// "gfx906, sm_90, host": for error messages.
std::string knownTargetNames();

} // namespace mlir::fa

#endif // FA_COMPILER_ANALYSIS_TARGET_DESC_H
