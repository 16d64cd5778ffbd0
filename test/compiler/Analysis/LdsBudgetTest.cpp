//===- LdsBudgetTest.cpp - Unit tests of the LDS budget model -------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The seed's budget formula, the thread grid and the automatic choice, with
// the numbers worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/LdsBudget.h"
#include "compiler/Analysis/TargetDesc.h"

#include <gtest/gtest.h>

#include <optional>

using namespace mlir::fa;

TEST(TargetTest, Lookup) {
  const TargetDesc *gfx906 = lookupTarget("gfx906");
  ASSERT_NE(gfx906, nullptr);
  EXPECT_EQ(gfx906->waveSize, 64);
  EXPECT_EQ(gfx906->ldsBytes, 65536);
  EXPECT_FALSE(gfx906->nativeBf16);
  const TargetDesc *sm90 = lookupTarget("sm_90");
  ASSERT_NE(sm90, nullptr);
  EXPECT_EQ(sm90->waveSize, 32);
  EXPECT_EQ(sm90->ldsBytes, 227 * 1024);
  EXPECT_EQ(lookupTarget("gfx908"), nullptr);
  EXPECT_EQ(knownTargetNames(), "gfx906, sm_90, sm_80, host");
  EXPECT_FALSE(sm90->registerEstimateBinds);
  EXPECT_TRUE(gfx906->registerEstimateBinds);
}

/// The thread grid (TR x TC) and each thread's S rows, S columns and D
/// columns of mapping `m`.
static void expectMapping(const std::optional<ThreadMapping> &m, int64_t tr,
                          int64_t tc, int64_t rm, int64_t rn, int64_t dc) {
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tr, tr);
  EXPECT_EQ(m->tc, tc);
  EXPECT_EQ(m->rm, rm);
  EXPECT_EQ(m->rn, rn);
  EXPECT_EQ(m->dc, dc);
}

TEST(ThreadMappingTest, SplitsTilesOverThreads) {
  // 256 threads over a 64x64 S tile and a 64x128 O tile: 16x16 threads,
  // 4x4 of S and 4x8 of O each.
  expectMapping(chooseThreadMapping(64, 64, 128, 256, 64), 16, 16, 4, 4, 8);
  // The lanes of a row never exceed the wave for prefill tiles.
  auto w32 = chooseThreadMapping(128, 128, 128, 256, 32);
  ASSERT_TRUE(w32);
  EXPECT_LE(w32->tc, 32);
  EXPECT_EQ(w32->tr * w32->tc, 256);
  // 16x16 tiles cannot feed 256 threads when D = 40 (no TC divides all).
  EXPECT_FALSE(chooseThreadMapping(16, 16, 40, 256, 64));
}

TEST(ThreadMappingTest, DecodeRowsSpanTheWaves) {
  // sm_90's decode tiles, 4 x 64 over 2 warps: one thread row of 64, each
  // thread all 4 rows of one key column and of 2 D columns (each K and V
  // element read by one thread); the rows span 2 waves.
  auto m = chooseThreadMapping(4, 64, 128, 64, 32);
  ASSERT_NO_FATAL_FAILURE(expectMapping(m, 1, 64, 4, 1, 2));
  EXPECT_EQ(m->wavesPerRow(32), 2);
  // The budget holds the waves' partial maxima and sums: 4 rows x 2 waves.
  const TargetDesc &t = *lookupTarget("sm_90");
  Budget b = computeBudget(t, TileConfig{4, 64, 2, 2, 0, true}, 128, 2);
  ASSERT_FALSE(b.terms.empty());
  EXPECT_EQ(b.terms.back().name, "row reduction across waves (f32)");
  EXPECT_EQ(b.terms.back().bytes, 4 * 2 * 4);
  // One warp (sm_90's decode tiles, 4 x 32): the same grid, 1 x 32, within
  // the wave.
  auto warp = chooseThreadMapping(4, 32, 128, 32, 32);
  ASSERT_NO_FATAL_FAILURE(expectMapping(warp, 1, 32, 4, 1, 4));
  EXPECT_EQ(warp->wavesPerRow(32), 1);
  // Not where the threads do not divide BLOCK_N (gfx906's 4 x 16 of one
  // wave: thread grid 4 x 16) or D, or for prefill rows (over 16).
  auto oneWave = chooseThreadMapping(4, 16, 128, 64, 64);
  ASSERT_TRUE(oneWave);
  EXPECT_EQ(oneWave->tr, 4);
  EXPECT_EQ(oneWave->wavesPerRow(64), 1);
  EXPECT_EQ(chooseThreadMapping(4, 128, 64, 128, 32)->wavesPerRow(32), 1);
  EXPECT_EQ(chooseThreadMapping(4, 32, 128, 128, 32)->wavesPerRow(32), 1);
  EXPECT_EQ(chooseThreadMapping(32, 128, 128, 128, 32)->wavesPerRow(32), 1);
}

TEST(LdsBudgetTest, SeedExampleOverflowsGfx906) {
  // D=128, BLOCK_M = BLOCK_N = 128, f16: Q 32 KiB + K 32 KiB + V 32 KiB +
  // P 32 KiB = 128 KiB of LDS; the f32 S block alone is 64 KiB.
  const TargetDesc &t = *lookupTarget("gfx906");
  Budget b = computeBudget(t, TileConfig{128, 128, 4, 1, 0}, 128, 2);
  EXPECT_EQ(b.ldsBytes, 131072);
  EXPECT_EQ(b.ldsWithMargin, 144180); // ceil(131072 * 1.1)
  EXPECT_FALSE(b.fitsLds);
  bool sFound = false;
  for (const BudgetTerm &term : b.terms)
    if (term.name == "S block (f32)") {
      sFound = true;
      EXPECT_EQ(term.bytes, 65536);
      EXPECT_FALSE(term.inLds);
    }
  EXPECT_TRUE(sFound);
}

TEST(LdsBudgetTest, SeedRecommendationFitsGfx906) {
  // The seed's gfx906 choice for D=128: 64x64 (Q 16 KiB, K 16, V 16, P 8).
  const TargetDesc &t = *lookupTarget("gfx906");
  Budget b = computeBudget(t, TileConfig{64, 64, 4, 1, 0}, 128, 2);
  EXPECT_EQ(b.ldsBytes, 57344);
  EXPECT_TRUE(b.fitsLds);
  EXPECT_TRUE(b.fitsRegs);
  // Live values: S 4x4 + O 4x8 + m/l/alpha 3x4 + 4 K operands = 64;
  // calibrated: 2 x 64 + 8 = 136 registers, one wave per SIMD; the 56 KiB
  // of LDS also leave one workgroup per CU, one wave per SIMD.
  EXPECT_EQ(b.regsPerThread, 136);
  EXPECT_EQ(b.regWavesPerSimd, 1);
  EXPECT_EQ(b.ldsWavesPerSimd, 1);
  EXPECT_EQ(b.wavesPerSimd, 1);
}

TEST(LdsBudgetTest, SharedKvSlotHalvesTheKvTerm) {
  const TargetDesc &t = *lookupTarget("gfx906");
  TileConfig apart{64, 32, 4, 1, 2};
  TileConfig shared = apart;
  shared.kvShared = true;
  Budget a = computeBudget(t, apart, 128, 2);
  Budget s = computeBudget(t, shared, 128, 2);
  // One 32x128 f16 block (8 KiB) and its 32 rows of padding less.
  EXPECT_EQ(a.ldsBytes - s.ldsBytes, 32 * 128 * 2 + 32 * 2 * 2);
  // Q 16 KiB + K 8 + V 8 + P 4 + padding: over 32 KiB, one workgroup per
  // CU; with one K/V slot two fit, 2 waves per SIMD.
  EXPECT_EQ(a.ldsWavesPerSimd, 1);
  EXPECT_EQ(s.ldsWavesPerSimd, 2);
}

TEST(LdsBudgetTest, LdsOccupancyModel) {
  const TargetDesc &gfx906 = *lookupTarget("gfx906");
  // 64 KiB per CU, 4 SIMDs: 256-thread groups of 32 KiB -> 2 per CU.
  EXPECT_EQ(ldsWavesPerSimd(gfx906, 32768, 256), 2);
  EXPECT_EQ(ldsWavesPerSimd(gfx906, 32769, 256), 1);
  EXPECT_EQ(ldsWavesPerSimd(gfx906, 16384, 256), 4);
  // NVIDIA: not modelled.
  EXPECT_EQ(ldsWavesPerSimd(*lookupTarget("sm_90"), 32768, 256), 0);
}

TEST(LdsBudgetTest, StagesAndPaddingCount) {
  const TargetDesc &t = *lookupTarget("gfx906");
  Budget one = computeBudget(t, TileConfig{64, 64, 4, 1, 0}, 64, 2);
  Budget two = computeBudget(t, TileConfig{64, 64, 4, 2, 0}, 64, 2);
  // A second stage is register-staged: no LDS, one K or V tile of block
  // n+1 in registers (64 * 64 * 2 bytes over 256 threads: 8 registers).
  EXPECT_EQ(two.ldsBytes, one.ldsBytes);
  EXPECT_EQ(one.prefetchRegs, 0);
  EXPECT_EQ(two.prefetchRegs, 8);
  EXPECT_EQ(two.regsPerThread - one.regsPerThread, 8);
  // In the source type: a widened (f32 in LDS) f16 tile holds 2 bytes per
  // element in flight.
  Budget widened = computeBudget(t, TileConfig{64, 64, 4, 2, 0}, 64, 4, 2);
  EXPECT_EQ(widened.prefetchRegs, 8);
  EXPECT_EQ(widened.ldsBytes, 2 * one.ldsBytes);
  Budget padded = computeBudget(t, TileConfig{64, 64, 4, 1, 2}, 64, 2);
  // 2 elements per row over Q (64) + K, V (2 x 64) + P (64) rows.
  EXPECT_EQ(padded.ldsBytes - one.ldsBytes, 2 * 2 * (64 + 128 + 64));
}

TEST(LdsBudgetTest, AutomaticChoice) {
  const TargetDesc &gfx906 = *lookupTarget("gfx906");
  const TargetDesc &sm90 = *lookupTarget("sm_90");
  // D=64: the seed's 64x64 reaches 2 waves per SIMD only with K and V in
  // one slot (separate slots plus padding pass 32 KiB); 128x64 would need
  // about 192 registers, one wave.
  auto c = chooseTileConfig(gfx906, 64, 2, 1, 0);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->blockM, 64);
  EXPECT_EQ(c->blockN, 64);
  EXPECT_EQ(c->waves, 4);
  EXPECT_TRUE(c->kvShared);
  EXPECT_EQ(c->ldsPad, 0); // fa-pad-lds decides
  EXPECT_EQ(computeBudget(gfx906, TileConfig{128, 64, 4, 1, 0}, 64, 2)
                .regWavesPerSimd,
            1);
  // D=128: 64x64 is one wave per SIMD by LDS even with one K/V slot; 64x32
  // with one slot is the largest at two.
  c = chooseTileConfig(gfx906, 128, 2, 1, 0);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->blockM, 64);
  EXPECT_EQ(c->blockN, 32);
  EXPECT_TRUE(c->kvShared);
  // Forcing separate slots keeps BLOCK_M at 64 where it can.
  c = chooseTileConfig(gfx906, 128, 2, 1, 0, /*kvShared=*/false);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->kvShared);
  // sm_90: capped at 128x64 (measured best on the H200); the register
  // estimate (fitted to gfx906, 256 here) does not bind there.
  c = chooseTileConfig(sm90, 128, 2, 1, 0);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->blockM, 128);
  EXPECT_EQ(c->blockN, 64);
  EXPECT_FALSE(
      computeBudget(sm90, TileConfig{128, 64, 8, 1, 0}, 128, 2).fitsRegs);
  EXPECT_EQ(c->waves, 8); // 256 threads of 32-lane warps
  // Nothing fits: D = 1024 f32 needs more than 64 KiB even at 16x16.
  EXPECT_FALSE(chooseTileConfig(gfx906, 1024, 4, 1, 0));
}

TEST(LdsBudgetTest, DoubleBufferedChoiceKeepsTheTiles) {
  // gfx906's defaults stay 64x64 (D=64) and 64x32 (D=128), one K/V slot,
  // at 2 waves per SIMD with the registers that hold block n+1 counted.
  const TargetDesc &gfx906 = *lookupTarget("gfx906");
  for (auto [d, bn] : {std::pair<int64_t, int64_t>{64, 64}, {128, 32}}) {
    auto c = chooseTileConfig(gfx906, d, 2, 2, 0);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->blockM, 64);
    EXPECT_EQ(c->blockN, bn);
    EXPECT_EQ(c->stages, 2);
    EXPECT_TRUE(c->kvShared);
    Budget b = computeBudget(gfx906, *c, d, 2);
    EXPECT_EQ(b.prefetchRegs, 8);
    EXPECT_EQ(creditedOccupancy(gfx906, b), 2);
  }
}
