//===- PlantedBugs.h - Bugs planted on purpose for mutation tests -*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A test suite earns trust by failing on the bugs it guards against. Each
// entry here is such a bug, planted on request by the pass that would make
// it (`test-plant-bug=<name>` on fa-tile or fa-lower-to-gpu, or
// `fac --test-plant-bug=<name>`, which routes it to its pass). The kernels
// produced are wrong on purpose: test/e2e/mutants.py asserts that the e2e
// suite fails on every one of them and names the case that caught it.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TESTING_PLANTED_BUGS_H
#define FA_COMPILER_TESTING_PLANTED_BUGS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::fa {

enum class PlantedBug {
  None,
  // fa-tile (Level 1)
  CausalBoundKey,    ///< causal KV range ends one key before the diagonal
  CausalBoundBlock,  ///< causal KV loop runs one block short
  GqaModulo,         ///< KV head = h % Hkv instead of h / (Hq / Hkv)
  RescaleAfter,      ///< O rescaled after P·V is accumulated (seed rule 3)
  NoScale,           ///< scores not multiplied by the softmax scale
  LNoRescale,        ///< running sum l not rescaled when the max grows
  CombineNoRescale,  ///< split-KV combine adds the splits without rescaling
                     ///< them by the global max
  CombineTailWeighed, ///< split-KV combine: a split index past the last
                      ///< (a trip's loads padded with the last split) weighs
                      ///< that split again instead of 0
  SplitShort,        ///< split-KV: each split stops one K/V block short
  SplitOverlap,      ///< split-KV: each split after the first starts one
                     ///< K/V block early (visits its predecessor's last)
  SplitNoDirect,     ///< split-KV: at S = 1 the split writes the workspace
                     ///< instead of O and LSE (which the runtime, skipping
                     ///< the combine kernel there, never fills)
  CuSeqlensOffByOne, ///< varlen: each sequence's keys end one early
                     ///< (cu_seqlens_k[b+1] - 1 taken as its end)
  PackedCausalLastRow, ///< GQA packing, causal: the K/V bound from the
                       ///< block's last row even where the block spans two
                       ///< query heads (the first head's later rows lose
                       ///< the keys past the second's diagonal)
  WindowSkipsBlock,  ///< sliding window: the first K/V block rounded up
                     ///< (a block whose last keys are visible is skipped)
  SoftcapAfterMax,   ///< softcap: the row max taken over uncapped scores
  FoldedMaxUnscaled, ///< the scale folded into the exponent, the row max of
                     ///< the raw scores not scaled (m in the wrong units)
  SinkPerBlock,      ///< sinks: the sink added to the row sum again with
                     ///< every K/V block
  MixedQueryAtStart, ///< mixed batch (varlen over a paged cache): each
                     ///< sequence's queries masked as its first rows, not
                     ///< its last (causal diagonal at i, not i + Lk - Lq)
  // fa-lower-to-gpu (Level 2)
  NoRaggedMask,           ///< keys past Lk in the last KV block are not masked
  MaskSkipsDiagonal,      ///< a block is masked only where its last row's
                          ///< diagonal (not its first's) hides a key: the
                          ///< diagonal blocks of causal attention unmasked
  SwapKvStrides,          ///< K read with V's strides and V with K's
  OWithQStrides,          ///< O written with Q's strides
  LseStridesIgnored,      ///< LSE written as if contiguous [B, Hq, Lq]
  PaddedColumnsRead,      ///< a padded D's columns past D read from memory
  ScalarVPairSwapped,     ///< the scalar copy path stores V's row pairs swapped
  CopyLastRoundUnguarded, ///< the last copy round's idle threads also store
  UnversionedVectorCopy,  ///< 16-byte copies claimed aligned on any layout
  ORowPastEnd,            ///< the O/LSE store writes row Lq too
  SharedRowsMisrotated,   ///< share-rows: the rhs read at the rotation the
                          ///< other way round from the lhs value's
  RowsAcrossWavesOwnWave, ///< rows over several waves: each wave takes its
                          ///< own part of a row's max and sum (no combine)
  MergeSplitsFirstGroup,  ///< fa.merge_splits: only the first group of
                          ///< threads' splits merged (the others' dropped)
  GqaPackWrongHead,       ///< GQA packing: packed row p read from and
                          ///< written to head + p / Lq (group not applied)
  PageIndexOffByOne,      ///< paged K/V: row n read from page entry
                          ///< n / page_size + 1 of the block table
  PageOffsetWrongStride,  ///< paged K/V: the row within a page addressed
                          ///< with the head stride
  SeqStartIgnored,        ///< varlen: every sequence's rows addressed from
                          ///< row 0 of the packed tensor (cu_seqlens[b]
                          ///< not added)
  WindowLeftOffByOne,     ///< sliding window: the key at distance `left`
                          ///< masked (the window one key short on the left)
  WindowRightOffByOne,    ///< sliding window: the key at distance `right`
                          ///< past the diagonal masked
  AlibiWrongEnd,          ///< ALiBi: distance |i - j| (from the start, not
                          ///< |i + Lk - Lq - j| from the end)
  FullBlockOneRowShort,   ///< a fetch's unguarded version taken for a block
                          ///< one row short of full (reads row L)
  // fa-double-buffer (Level 1b)
  PipelineNoBarrier, ///< a staged K/V tile overwrites its slot unsynchronised
};

struct PlantedBugInfo {
  PlantedBug bug;
  llvm::StringLiteral name;
  /// The pass that plants it: "fa-tile", "fa-double-buffer" or
  /// "fa-lower-to-gpu".
  llvm::StringLiteral pass;
  llvm::StringLiteral description;
};

/// Every plantable bug, in a fixed order.
llvm::ArrayRef<PlantedBugInfo> plantedBugs();

/// The bug called `name`, or nullptr.
const PlantedBugInfo *lookupPlantedBug(llvm::StringRef name);

/// "causal-bound-key, causal-bound-block, ..." for error messages.
std::string plantedBugNames();

/// Resolves the `test-plant-bug` option of `pass`: sets `bug` (None for an
/// empty name) and returns "", or returns why the name is not accepted (an
/// unknown bug, or one that another pass plants).
std::string resolvePlantedBug(llvm::StringRef name, llvm::StringRef pass,
                              PlantedBug &bug);

} // namespace mlir::fa

#endif // FA_COMPILER_TESTING_PLANTED_BUGS_H
