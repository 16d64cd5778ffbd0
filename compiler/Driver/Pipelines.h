//===- Pipelines.h - fa pass pipelines and dialect registration -*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_DRIVER_PIPELINES_H
#define FA_COMPILER_DRIVER_PIPELINES_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::fa {

/// Registers the fa dialect and the upstream dialects the pipeline uses.
void registerFaDialects(DialectRegistry &registry);

/// Options shared by `fac` and `fa-opt --fa-pipeline`.
struct PipelineOptions {
  std::string target = "gfx906";
  int64_t blockM = 0, blockN = 0, waves = 0, stages = 0; // 0: auto
  bool allowBf16 = false;
  bool report = false;
  bool fuse = true;
  /// fa-pad-lds: LDS row padding chosen by bank-conflict analysis.
  bool padLds = true;
  /// fa-pad-lds's unit-bytes: paddings in multiples of this many bytes;
  /// -1: the target's (fac's gfx906 retry tries 0, pairs, where the
  /// backend spills).
  int64_t ldsPadBytes = -1;
  /// K and V in one LDS slot: auto, on, off (fa-tile's kv-shared).
  std::string kvShared = "auto";
  /// The split-KV combine's fa.merge_splits: auto, on, off (fa-tile's
  /// merge-splits).
  std::string mergeSplits = "auto";
  /// V stored pair-interleaved for a two-element dot product (fa-promote).
  bool pairRhs = true;
  /// 16-bit tiles kept in LDS as f32: auto (the target's), on, off.
  std::string widenLds = "auto";
  /// fa-double-buffer's `ahead`: next-block or in-block.
  std::string fetchAhead = "next-block";
  /// fa-lower-to-gpu's share-rows: auto, on, off.
  std::string shareRows = "auto";
  std::string kvSplits = "auto"; ///< fa-tile kv-splits
  std::string gqaPack = "off";  ///< fa-tile gqa-pack
  bool trace = false;           ///< fa-tile trace
  /// Test only: a bug to plant (PlantedBugs.h), routed to its pass.
  std::string plantBug;
};

/// Level 0 -> Level 2: fuse, tile, lower to the gpu dialect.
void buildKernelPipeline(OpPassManager &pm, const PipelineOptions &options);

/// Registers every fa pass (Transforms/ and Lowering/) for fa-opt.
void registerFaPasses();

/// Registers `--fa-pipeline`.
void registerFaPipelines();

} // namespace mlir::fa

#endif // FA_COMPILER_DRIVER_PIPELINES_H
