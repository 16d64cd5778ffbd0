//===- PlantedBugs.cpp - Bugs planted on purpose for mutation tests -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the table of plantable bugs (PlantedBugs.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/Testing/PlantedBugs.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::fa;

static const PlantedBugInfo kBugs[] = {
    {PlantedBug::CausalBoundKey, "causal-bound-key", "fa-tile",
     "the causal KV range ends one key before the diagonal"},
    {PlantedBug::CausalBoundBlock, "causal-bound-block", "fa-tile",
     "the causal KV loop runs one block short"},
    {PlantedBug::GqaModulo, "gqa-modulo", "fa-tile",
     "the KV head is h % Hkv instead of h / (Hq / Hkv)"},
    {PlantedBug::RescaleAfter, "rescale-after", "fa-tile",
     "O is rescaled after P·V is accumulated instead of before"},
    {PlantedBug::NoScale, "no-scale", "fa-tile",
     "the scores are not multiplied by the softmax scale"},
    {PlantedBug::LNoRescale, "l-no-rescale", "fa-tile",
     "the running sum l is not rescaled by exp2(m_old - m_new) when the "
     "running max grows"},
    {PlantedBug::CombineNoRescale, "combine-no-rescale", "fa-tile",
     "the split-KV combine sums the splits' outputs and row sums without "
     "rescaling them by the global max"},
    {PlantedBug::CombineTailWeighed, "combine-tail-weighed", "fa-tile",
     "the split-KV combine's trips of several splits pad their loads past "
     "the last split with that split again and weigh it again instead of "
     "giving it lse = -inf"},
    {PlantedBug::SplitShort, "split-short", "fa-tile",
     "split-KV: each split stops one K/V block before its range ends"},
    {PlantedBug::SplitOverlap, "split-overlap", "fa-tile",
     "split-KV: each split after the first also visits the block before its "
     "range (its predecessor's last)"},
    {PlantedBug::SplitNoDirect, "split-no-direct", "fa-tile",
     "split-KV: at S = 1 the split kernel writes its workspace instead of O "
     "and LSE (the runtime runs no combine kernel there)"},
    {PlantedBug::CuSeqlensOffByOne, "cu-seqlens-off-by-one", "fa-tile",
     "varlen: each sequence's keys end one row early, cu_seqlens_k[b+1] - 1 "
     "taken as its end"},
    {PlantedBug::PackedCausalLastRow, "packed-causal-last-row", "fa-tile",
     "GQA packing, causal: the K/V loop bound from the block's last row "
     "where the block spans two query heads"},
    {PlantedBug::WindowSkipsBlock, "window-skips-block", "fa-tile",
     "sliding window: the first K/V block is rounded up, skipping a block "
     "whose last keys the Q block's first row still sees"},
    {PlantedBug::SoftcapAfterMax, "softcap-after-max", "fa-tile",
     "softcap: the online max is taken over the uncapped scores (the "
     "exponentials of capped scores underflow against it)"},
    {PlantedBug::FoldedMaxUnscaled, "folded-max-unscaled", "fa-tile",
     "with the softmax scale folded into the exponent (no softcap, no "
     "ALiBi), the row max of the raw scores is not multiplied by the scale"},
    {PlantedBug::SinkPerBlock, "sink-per-block", "fa-tile",
     "sinks: the sink's exponential is added to the row sum again with "
     "every K/V block instead of once per row"},
    {PlantedBug::MixedQueryAtStart, "mixed-query-at-start", "fa-tile",
     "mixed batch: each sequence's queries are aligned to the start of its "
     "keys instead of the end (the causal diagonal at i, not i + Lk - Lq)"},
    {PlantedBug::NoRaggedMask, "no-ragged-mask", "fa-lower-to-gpu",
     "keys past Lk in the last KV block are not masked"},
    {PlantedBug::MaskSkipsDiagonal, "mask-skips-diagonal", "fa-lower-to-gpu",
     "a K/V block is masked only where the last row's diagonal (not the "
     "first row's) hides one of its keys: causal diagonal blocks unmasked"},
    {PlantedBug::SwapKvStrides, "swap-kv-strides", "fa-lower-to-gpu",
     "K is read with V's strides and V with K's"},
    {PlantedBug::OWithQStrides, "o-with-q-strides", "fa-lower-to-gpu",
     "O is written with Q's strides"},
    {PlantedBug::LseStridesIgnored, "lse-strides-ignored", "fa-lower-to-gpu",
     "LSE is written as if it were contiguous"},
    {PlantedBug::PaddedColumnsRead, "padded-columns-read", "fa-lower-to-gpu",
     "the columns past D of a head dimension padded for the thread grid are "
     "read from memory (the next row's elements) instead of zero-filled"},
    {PlantedBug::ScalarVPairSwapped, "scalar-v-pair-swapped", "fa-lower-to-gpu",
     "the scalar (unaligned) copy path stores the two rows of each "
     "pair-interleaved V unit swapped"},
    {PlantedBug::CopyLastRoundUnguarded, "copy-last-round-unguarded",
     "fa-lower-to-gpu",
     "the last round of a vector copy that does not divide among the "
     "threads is not guarded: idle threads store past the tile"},
    {PlantedBug::UnversionedVectorCopy, "unversioned-vector-copy",
     "fa-lower-to-gpu",
     "the copies take the 16-byte path on every layout, claiming alignment "
     "that misaligned strides do not have"},
    {PlantedBug::ORowPastEnd, "o-row-past-end", "fa-lower-to-gpu",
     "the epilogue stores row Lq of O and LSE too (one row past the end)"},
    {PlantedBug::SharedRowsMisrotated, "shared-rows-misrotated",
     "fa-lower-to-gpu",
     "share-rows: each lane multiplies the lhs pair rotated from lane "
     "(c + r) of its row with the rhs pair of lane (c - r)"},
    {PlantedBug::RowsAcrossWavesOwnWave, "rows-across-waves-own-wave",
     "fa-lower-to-gpu",
     "rows over several waves: each wave keeps its own part of a row's "
     "maximum and sum instead of combining the waves' parts"},
    {PlantedBug::MergeSplitsFirstGroup, "merge-splits-first-group",
     "fa-lower-to-gpu",
     "the split-KV combine's fa.merge_splits keeps the splits of the first "
     "group of threads only and drops the other groups' states"},
    {PlantedBug::GqaPackWrongHead, "gqa-pack-wrong-head", "fa-lower-to-gpu",
     "GQA packing: packed row p goes to query head head + p / Lq instead of "
     "head * (Hq/Hkv) + p / Lq"},
    {PlantedBug::PageIndexOffByOne, "page-index-off-by-one", "fa-lower-to-gpu",
     "paged K/V: row n is read through block table entry n / page_size + 1 "
     "(the next page)"},
    {PlantedBug::PageOffsetWrongStride, "page-offset-wrong-stride",
     "fa-lower-to-gpu",
     "paged K/V: the row within a page is addressed with the head stride "
     "instead of the row stride"},
    {PlantedBug::SeqStartIgnored, "seq-start-ignored", "fa-lower-to-gpu",
     "varlen: every sequence's rows are addressed from row 0 of the packed "
     "tensor (cu_seqlens[b] is not added)"},
    {PlantedBug::WindowLeftOffByOne, "window-left-off-by-one",
     "fa-lower-to-gpu",
     "sliding window: the mask hides the key at distance `left` before the "
     "diagonal, which the window includes"},
    {PlantedBug::WindowRightOffByOne, "window-right-off-by-one",
     "fa-lower-to-gpu",
     "sliding window: the mask hides the key at distance `right` past the "
     "diagonal, which the window includes"},
    {PlantedBug::AlibiWrongEnd, "alibi-wrong-end", "fa-lower-to-gpu",
     "ALiBi: the distance is measured from the start, |i - j|, instead of "
     "from the end, |i + Lk - Lq - j|"},
    {PlantedBug::FullBlockOneRowShort, "full-block-one-row-short",
     "fa-lower-to-gpu",
     "a register-staged fetch takes its version without row guards for a "
     "block one row short of full too (its last row, past L, is read)"},
    {PlantedBug::PipelineNoBarrier, "pipeline-no-barrier", "fa-double-buffer",
     "the barrier before the pipelined loop's first LDS store is removed, so "
     "block n+1 overwrites a slot other threads still read"},
};

llvm::ArrayRef<PlantedBugInfo> mlir::fa::plantedBugs() { return kBugs; }

const PlantedBugInfo *mlir::fa::lookupPlantedBug(llvm::StringRef name) {
  for (const PlantedBugInfo &info : kBugs)
    if (info.name == name)
      return &info;
  return nullptr;
}

std::string mlir::fa::plantedBugNames() {
  std::string names;
  for (const PlantedBugInfo &info : kBugs) {
    if (!names.empty())
      names += ", ";
    names += info.name.str();
  }
  return names;
}

std::string mlir::fa::resolvePlantedBug(llvm::StringRef name,
                                        llvm::StringRef pass, PlantedBug &bug) {
  bug = PlantedBug::None;
  if (name.empty())
    return "";
  const PlantedBugInfo *info = lookupPlantedBug(name);
  if (!info)
    return "unknown planted bug '" + name.str() +
           "'; known: " + plantedBugNames();
  if (info->pass != pass)
    return "planted bug '" + name.str() + "' is planted by " +
           info->pass.str() + ", not " + pass.str();
  bug = info->bug;
  return "";
}
