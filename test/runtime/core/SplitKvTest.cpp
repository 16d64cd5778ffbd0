//===- SplitKvTest.cpp - Split-KV launches: S, workspace, two kernels -----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's side of ABI version 2 (KernelAbi.h), on the hand-written
// split-KV fixture pairs of kernels/split_attention_host.cpp: the split
// count (forced and automatic), the 55 words and both grids, the
// workspace (its size, its descriptors, its reuse), the two launches
// validated against the fp64 reference, and the errors.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"
#include "fa/fa_runtime.h"

#include <cmath>

using namespace fa;
using test::failures;
using test::loadKernel;
using test::loadModule;

namespace {

ValidationReport validate(const Kernel &kernel, AttentionShape shape,
                          int64_t kvSplits, uint64_t seed = 1,
                          Distribution dist = Distribution::Normal) {
  ValidationOptions o;
  o.shape = shape;
  o.seed = seed;
  o.dist = dist;
  o.launch.kvSplits = kvSplits;
  o.launch.checkRaces = true;
  Expected<ValidationReport> r = validateKernel(kernel, o);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r ? r.take() : ValidationReport();
}

/// The split count the runtime chooses on the host device.
int64_t autoSplits(const Kernel &kernel, const AttentionShape &shape) {
  Expected<KvSplitPlan> plan =
      planKvSplits(kernel.info(), shape, kernel.device().limits(), 0);
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  return plan ? plan->kvSplits : -1;
}

// The module's default kernel is the split kernel, wherever the combine
// kernel is listed; the combine kernel is still there by name.
TEST(SplitKvTest, DefaultKernelIsNotTheCombineKernel) {
  Module m = loadModule("split_f32");
  Expected<Kernel> k = m.kernel();
  FA_ASSERT_OK(k);
  EXPECT_EQ(k->name(), "split_f32");
  Expected<Kernel> c = m.kernel("split_f32_combine");
  FA_ASSERT_OK(c);
  EXPECT_TRUE(c->info().isCombine());

  test::ScratchDir dir;
  Manifest manifest = test::fixtureManifest("split_f32");
  std::swap(manifest.kernels[0], manifest.kernels[1]);
  std::string path = test::writeCodeObject(
      dir, "split.so", test::readBytes(test::fixturePath("split_f32")),
      manifest);
  Expected<Module> swapped = Module::load(test::hostDevice(), path);
  FA_ASSERT_OK(swapped);
  EXPECT_EQ(swapped->kernel()->name(), "split_f32");
}

// Against the fp64 reference: one split, a few, the runtime's choice, and
// more splits than K/V blocks (the extra ones are empty); GQA, a decode
// row, partial blocks.
TEST(SplitKvTest, MatchesFp64ReferenceForEverySplitCount) {
  Kernel k = loadKernel("split_f32");
  for (AttentionShape shape :
       {AttentionShape{1, 2, 1, 40, 100}, AttentionShape{2, 4, 2, 1, 300},
        AttentionShape{1, 1, 1, 17, 5}}) {
    for (int64_t splits : {int64_t(1), int64_t(3), int64_t(0), int64_t(50)}) {
      ValidationReport r = validate(k, shape, splits);
      SCOPED_TRACE(shape.toString() + " S=" + std::to_string(splits));
      EXPECT_TRUE(r.verdict.pass) << failures(r);
      EXPECT_EQ(r.kvSplits, splits ? splits : autoSplits(k, shape));
      EXPECT_LT(r.ours.maxAbsDiff, 1e-5);
      EXPECT_TRUE(r.ours.lseCompared);
      EXPECT_LT(r.ours.lseMaxAbsDiff, 1e-5);
    }
  }
  // The automatic choice splits a decode problem and leaves a large one
  // (host: 60 CUs x 2 = 120 slots; cost 16 x rounds x (ceil(n/S) + 1) + S).
  // W = 8, n = 19 blocks, one round up to S = 15: S = 10 is 16 x (2 + 1) +
  // 10 = 58; S = 7..9 16 x 4 + S >= 71, S <= 6 more; S = 11..15 48 + S >=
  // 59; S = 16..19 two rounds, 32 x 3 + 16 = 112.
  EXPECT_EQ(autoSplits(k, {2, 4, 2, 1, 300}), 10);
  // W = 64 x 32 x 4 = 32768, n = 256: S = 1 is 16 x 274 x 257 + 1 =
  // 1126689 (274 = ceil(32768 / 120)); any S >= 2 at least 16 x 32768 x
  // (256 + S) / 120 >= 1127219.
  EXPECT_EQ(autoSplits(k, {4, 32, 8, 4096, 4096}), 1);
}

// Causal: a tile's splits cover its own K/V blocks only; Lq > Lk leaves
// rows that see no key at all (every split empty: O = 0, LSE = -inf).
TEST(SplitKvTest, CausalWithEmptySplitsAndRows) {
  Kernel k = loadKernel("split_f16_causal");
  for (AttentionShape shape :
       {AttentionShape{2, 2, 2, 37, 50}, AttentionShape{1, 4, 1, 45, 20}})
    for (int64_t splits : {int64_t(1), int64_t(4), int64_t(0), int64_t(64)})
      for (Distribution dist : {Distribution::Normal, Distribution::Outliers}) {
        ValidationReport r = validate(k, shape, splits, 3, dist);
        EXPECT_TRUE(r.verdict.pass)
            << shape.toString() << " S=" << splits << "\n"
            << failures(r);
      }
}

// GQA-packed rows: grid y over Hkv, each tile the rows of G query heads.
TEST(SplitKvTest, GqaPackedRows) {
  Kernel causal = loadKernel("split_f32_packed_causal");
  for (AttentionShape shape :
       {AttentionShape{2, 8, 2, 5, 70}, AttentionShape{1, 4, 1, 1, 33},
        AttentionShape{1, 6, 3, 9, 4}})
    for (int64_t splits : {int64_t(0), int64_t(2), int64_t(17)}) {
      ValidationReport r = validate(causal, shape, splits);
      EXPECT_TRUE(r.verdict.pass) << shape.toString() << " S=" << splits << "\n"
                                  << failures(r);
      EXPECT_LT(r.ours.lseMaxAbsDiff, 1e-5);
    }
  Kernel noLse = loadKernel("split_bf16_packed");
  ValidationReport r =
      validate(noLse, {1, 8, 2, 3, 90}, 0, 7, Distribution::Outliers);
  EXPECT_TRUE(r.verdict.pass) << failures(r);
  EXPECT_FALSE(r.ours.lseCompared);
}

KernelInfo splitInfo(const std::string &fixture, size_t kernel = 0) {
  return test::fixtureManifest(fixture).kernels[kernel];
}

// S of least 16 * ceil(W * S / (k * CUs)) * (ceil(n / S) + 1) + S, W = Q
// tiles * Hg * B, n = K/V blocks, k the resident workgroups per CU (2
// without an occupancy estimate), S in [1, min(128, n)], the smallest on a
// tie. The values are worked out by hand in the comments ("cost" is that
// sum; "rounds" the ceil).
TEST(SplitKvTest, AutomaticSplitCount) {
  KernelInfo k = splitInfo("split_f32"); // block_m 16, block_n 16
  DeviceLimits limits;
  limits.computeUnits = 60;
  auto plan = [&](AttentionShape shape, int64_t requested = 0) {
    Expected<KvSplitPlan> p = planKvSplits(k, shape, limits, requested);
    EXPECT_TRUE(p.ok()) << p.status().toString();
    return p ? p->kvSplits : -1;
  };
  // 120 slots. W = 6, n = 7: one round up to S = 20; cost 16 x (ceil(7/S)
  // + 1) + S: S = 7 is 16 x 2 + 7 = 39; S = 4..6 16 x 3 + S >= 52, S = 3
  // 16 x 4 + 3 = 67.
  EXPECT_EQ(plan({1, 2, 1, 40, 100}), 7);
  // W = 32, n = 512: rounds 1 to S = 3, 2 to 7, 3 to 11 (352 <= 360), 4 to
  // 15, 5 to 18, 6 to 22 (704 <= 720). Up to S = 22, 512 / S drops by at
  // least 1 from S to S + 1 (512 / (22 x 23) >= 1), so in one count of
  // rounds r the largest S is cheapest (16r less, 1 more). Those: S = 3
  // 16 x (171 + 1) + 3 = 2755, S = 7 16 x 2 x (74 + 1) + 7 = 2407, S = 11
  // 16 x 3 x (47 + 1) + 11 = 2315, S = 15 16 x 4 x (35 + 1) + 15 = 2319,
  // S = 18 16 x 5 x (29 + 1) + 18 = 2418, S = 22 16 x 6 x (24 + 1) + 22 =
  // 2422. From S = 20 any cost is at least 16 x (32 S / 120) x (512 / S +
  // 1) + S = 2184.5 + 5.27 S > 2315.
  EXPECT_EQ(plan({1, 32, 8, 1, 8192}), 11);
  // W = 1, n = 65536: one round up to S = 120, 16 x (ceil(65536/S) + 1) +
  // S falls to there (S = 120: 16 x 547 + 120 = 8872 + 120 = 8888; S = 119
  // 16 x 552 + 119 = 8951); S = 121..128 two rounds, at least 32 x 513 +
  // 121 = 16537 (capped at 128).
  EXPECT_EQ(plan({1, 1, 1, 1, 1 << 20}), 120);
  EXPECT_EQ(plan({1, 1, 1, 1, 10}), 1); // one K/V block
  // The grid fills the device: W = 64 x 32 x 8 = 16384, n = 64: S = 1 is
  // 16 x 137 x 65 + 1 = 142481; S >= 2 at least 16 x 16384 x 66 / 120 =
  // 144179.2.
  EXPECT_EQ(plan({8, 32, 8, 1024, 1024}), 1);
  // The combine's term: W = 3, n = 63, one round up to S = 40; with c =
  // ceil(63/S), the cost 16 x (c + 1) + S is least at each c's smallest S:
  // c = 2 from S = 32, 16 x 3 + 32 = 80; c = 3 from 21, 85; c = 4 from 16,
  // 96; c = 5 from 13, 109; S <= 12 at least 16 x (63 / 12 + 1) = 100;
  // S = 41..63 two rounds, at least 32 x 3 + 41 = 137. (Under the S / 4
  // term of before 2026-12-04 it was 16.)
  EXPECT_EQ(plan({1, 3, 1, 16, 1000}), 32);
  k.gqaPacked = true; // 32 query heads over 8 KV heads: 4 rows per tile
  // W = 8, n = 512: S = 15 fills one round (120), 16 x (35 + 1) + 15 =
  // 591; below it the cost rises (S = 14: 16 x 38 + 14 = 622; 512 / S
  // drops by at least 1 per step). r rounds cost at least 16r (512 / S +
  // 1) + S, falling with S in each count of rounds: 2 rounds (16..30) 628
  // at S = 30 (638 as ceil'd), 3 (31..45) 45 + 48 x 12.4 = 640.8, 4
  // (46..60) 60 + 64 x 9.53 = 670.1, more rounds more.
  EXPECT_EQ(plan({1, 32, 8, 1, 8192}), 15);
  limits.computeUnits = 0; // unknown: one CU, 2 slots
  // W = 8: S = 1 is 16 x 4 rounds x 513 + 1 = 32833; S >= 2 at least
  // 16 x (8 S / 2) x (512 / S + 1) + S = 32768 + 65 S >= 32898.
  EXPECT_EQ(plan({1, 32, 8, 1, 8192}), 1);
  // W = 1: S = 2 is 16 x 1 x 257 + 2 = 4114; S = 1 16 x 513 + 1 = 8209;
  // S >= 3 at least 16 x (S / 2) x (512 / S + 1) + S = 4096 + 9 S >=
  // 4123.
  EXPECT_EQ(plan({1, 1, 1, 1, 8192}), 2);
  // The manifest's occupancy sets the resident workgroups per CU: sm_90's
  // blocks per SM (6 on 132 SMs: 792 slots). W = 64 (8 KV heads x B = 8),
  // n = 512: S = 12 fills one round (768), 16 x (43 + 1) + 12 = 716 (S =
  // 11: 16 x 48 + 11 = 779, and more below); 2 rounds (13..24) cost at
  // least 32 x (512 / 24 + 1) + 24 = 738.7, 3 (25..37) 48 x (512 / 37 + 1)
  // + 37 = 749.2, 4 (38..49) 64 x (512 / 49 + 1) + 49 = 781.7, and more
  // rounds more (r rounds: at least 16r x 512 / (12r) = 682.7 + 16r + S).
  limits.computeUnits = 132;
  k.resources = {{"registers", 48}, {"blocks_per_sm_estimate", 6}};
  EXPECT_EQ(residentPerComputeUnit(k), 6);
  EXPECT_EQ(plan({8, 32, 8, 1, 8192}), 12);
  // gfx906: 4 SIMDs x 2 waves per SIMD over 4-wave workgroups: 2 per CU;
  // over 1-wave workgroups: 8.
  k.resources = {{"vgprs", 128}, {"waves_per_simd_estimate", 2}};
  k.waveSize = 64;
  k.threads = 256;
  EXPECT_EQ(residentPerComputeUnit(k), 2);
  k.threads = 64;
  EXPECT_EQ(residentPerComputeUnit(k), 8);
  k.resources = {{"vgprs", 128}};
  EXPECT_EQ(residentPerComputeUnit(k), 2);
  // Forced: any count up to maxKvSplits, past the K/V blocks too.
  EXPECT_EQ(plan({1, 1, 1, 1, 10}, 1024), 1024);
  Expected<KvSplitPlan> p = planKvSplits(k, {2, 3, 1, 5, 7}, limits, 9);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->workspaceOBytes, uint64_t(9 * 2 * 3 * 5 * 64 * 4));
  EXPECT_EQ(p->workspaceLseBytes, uint64_t(9 * 2 * 3 * 5 * 4));

  for (int64_t bad : {int64_t(1025), int64_t(-1)}) {
    Expected<KvSplitPlan> e = planKvSplits(k, {1, 1, 1, 1, 1}, limits, bad);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(e.status().message(),
              "K/V split count " + std::to_string(bad) +
                  " is outside [1, 1024] (0: chosen by the runtime)");
  }
  Expected<KvSplitPlan> huge =
      planKvSplits(k, {1 << 20, 1 << 20, 1, 1 << 20, 1}, limits, 1024);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("does not fit in 64 bits"),
            std::string::npos)
      << huge.status().message();
  KernelInfo dense = test::fixtureManifest("attn_f32").kernels[0];
  EXPECT_EQ(planKvSplits(dense, {1, 1, 1, 1, 1}, limits, 1)->kvSplits, 1);
  Expected<KvSplitPlan> e = planKvSplits(dense, {1, 1, 1, 1, 1}, limits, 4);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "kernel 'attn_f32' is not a split-KV kernel: it takes no K/V "
            "split count (asked for 4)");
}

// The combine kernel's term (S / 16 blocks), on a decode kernel of H200's
// tile (4 x 32, GQA-packed, 6 blocks per SM on 132 SMs: 792 slots) with
// Hq = 32, Hkv = 8, Lq = 1: W = 8 B, n = Lk / 32. Without the term (rounds
// x (ceil(n/S) + 1)) the rule took S = 32 at B = 1, Lk = 1024 (1 round x
// 2), whose combine (grid (1, 32, 1), each row's S partials in turn) cost
// more than the splits saved; with S / 4 (the combine before 2026-12-04,
// 4 times as slow per split) it took 11 there and 32 at Lk = 8192, where
// the H200 measured 16 and 64 best with today's combine.
TEST(SplitKvTest, AutomaticSplitCountWeighsTheCombine) {
  KernelInfo k = splitInfo("split_f32");
  k.blockM = 4;
  k.blockN = 32;
  k.gqaPacked = true;
  k.resources = {{"registers", 48}, {"blocks_per_sm_estimate", 6}};
  DeviceLimits limits;
  limits.computeUnits = 132;
  auto plan = [&](AttentionShape shape) {
    Expected<KvSplitPlan> p = planKvSplits(k, shape, limits, 0);
    EXPECT_TRUE(p.ok()) << p.status().toString();
    return p ? p->kvSplits : -1;
  };
  // B = 1, Lk = 1024: W = 8, n = 32, one round for every S (256 <= 792).
  // Cost 16 x (c + 1) + S, c = ceil(32/S), least at each c's smallest S:
  // c = 2 from S = 16, 16 x 3 + 16 = 64; c = 1 at 32, 16 x 2 + 32 = 64
  // (the tie goes to 16); c = 3 from 11, 75; c = 4 from 8, 88; S <= 7 at
  // least 512 / S + 16 + S > 88.
  EXPECT_EQ(plan({1, 32, 8, 1, 1024}), 16);
  // B = 1, Lk = 8192: W = 8, n = 256, one round up to S = 99 (792). With
  // c = ceil(256/S), each c's smallest S: c = 4 from 64, 16 x 5 + 64 =
  // 144; c = 5 from 52, 148; c = 3 from 86, 150; c = 6 from 43, 155; c = 7
  // from 37, 165; S <= 36 at least 4096 / S + 16 + S >= 144.8; S = 100..128
  // two rounds, at least 32 x 3 + 100 = 196.
  EXPECT_EQ(plan({1, 32, 8, 1, 8192}), 64);
  // B = 1, Lk = 32768: n = 1024, one round up to S = 99: 16 x (ceil(1024/S)
  // + 1) + S, 16 x 12 + 94 = 286 at S = 94 (c = 11); c = 12 from 86,
  // 16 x 13 + 86 = 294; c = 10 from 103, two rounds; S <= 85 at least
  // 16384 / S + 16 + S >= 293.8; S >= 100 two rounds, at least 32 x 9 +
  // 100 = 388.
  EXPECT_EQ(plan({1, 32, 8, 1, 32768}), 94);
  // B = 8, Lk = 32768: W = 64, n = 1024. One round up to S = 12: 16 x (86
  // + 1) + 12 = 1404 (S <= 11 at least 16384 / 11 + 16 + 11 = 1516.5); 2
  // rounds (13..24) at least 32 x (1024 / 24 + 1) + 24 = 1421.3, 3
  // (25..37) 48 x (1024 / 37 + 1) + 37 = 1413.4 (as ceil'd: 48 x 29 + 37
  // = 1429), 4 (38..49) 64 x (1024 / 49 + 1) + 49 = 1450.4, more rounds
  // more.
  EXPECT_EQ(plan({8, 32, 8, 1, 32768}), 12);
  // gfx906's decode kernel (the same tile, 3 workgroups per CU on 60 CUs:
  // 180 slots), B = 1, Lk = 1024: one round up to S = 22 (176), the same
  // costs as above to there (S = 16: 64); S = 23..32 two rounds, 32 x 3 +
  // 23 = 119.
  k.resources = {{"vgprs", 181}, {"workgroups_per_cu_estimate", 3}};
  limits.computeUnits = 60;
  EXPECT_EQ(residentPerComputeUnit(k), 3);
  EXPECT_EQ(plan({1, 32, 8, 1, 1024}), 16);
}

struct Buffers {
  Buffer q, k, v, o, lse;
  AttentionArgs args(AttentionShape shape) {
    return {&q, &k, &v, &o, &lse, shape, std::nullopt};
  }
};

Buffers allocate(const Device &d, const AttentionShape &s, int64_t D) {
  auto bytes = [&](int64_t heads, int64_t rows) {
    return size_t(s.batch * heads * rows * D * 4);
  };
  return {d.allocate(bytes(s.headsQ, s.seqQ)).take(),
          d.allocate(bytes(s.headsKv, s.seqK)).take(),
          d.allocate(bytes(s.headsKv, s.seqK)).take(),
          d.allocate(bytes(s.headsQ, s.seqQ)).take(),
          d.allocate(size_t(s.batch * s.headsQ * s.seqQ * 4)).take()};
}

// Version 2's words: version 1's 44, the workspace descriptors once bound,
// and S; the split grid x is Q tiles x S, the combine grid its own.
TEST(SplitKvTest, PacksVersionTwoWordsAndBothGrids) {
  Device d = test::hostDevice();
  KernelInfo split = splitInfo("split_f32"),
             combine = splitInfo("split_f32", 1);
  ASSERT_TRUE(combine.isCombine());
  const AttentionShape shape{3, 4, 2, 33, 70};
  const int64_t D = split.headDim;
  Buffers b = allocate(d, shape, D);
  Expected<PackedLaunch> p =
      packAttentionArgs(split, b.args(shape), d.limits(), &combine, 3);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->numWords, 55u);
  EXPECT_EQ(p->split.kvSplits, 3);
  EXPECT_EQ(p->words[FA_ABI_SPLITS], 3u);
  EXPECT_EQ(p->split.workspaceOBytes, uint64_t(3 * 3 * 4 * 33 * D * 4));
  EXPECT_EQ(p->split.workspaceLseBytes, uint64_t(3 * 3 * 4 * 33 * 4));
  for (int i = FA_ABI_WS_O; i < FA_ABI_SPLITS; ++i)
    EXPECT_EQ(p->words[i], 0u) << "word " << i << " before bindWorkspace";

  // Words 0..43 are the dense kernel's.
  KernelInfo dense = split;
  dense.abiVersion = 1;
  dense.splitKv = false;
  dense.combine.clear();
  Expected<PackedLaunch> v1 =
      packAttentionArgs(dense, b.args(shape), d.limits());
  FA_ASSERT_OK(v1);
  EXPECT_EQ(v1->numWords, 44u);
  for (int i = 0; i < FA_ABI_V1_NUM_WORDS; ++i)
    EXPECT_EQ(p->words[i], v1->words[i]) << "word " << i;
  for (int i = FA_ABI_V1_NUM_WORDS; i < FA_ABI_MAX_WORDS; ++i)
    EXPECT_EQ(v1->words[i], 0u) << "word " << i;

  // (ceil(33 / 16) * 3, Hq, B) x (16, 1, 1); combine (ceil(33 / 8), Hq, B) x
  // (8, 1, 1).
  const LaunchGeometry &g = p->geometry;
  EXPECT_EQ(g.grid[0], 9u);
  EXPECT_EQ(g.grid[1], 4u);
  EXPECT_EQ(g.grid[2], 3u);
  EXPECT_EQ(g.block[0], 16u);
  ASSERT_TRUE(p->combineGeometry);
  const LaunchGeometry &c = *p->combineGeometry;
  EXPECT_EQ(c.grid[0], 5u);
  EXPECT_EQ(c.grid[1], 4u);
  EXPECT_EQ(c.grid[2], 3u);
  EXPECT_EQ(c.block[0], 8u);
  EXPECT_EQ(c.block[1], 1u);
  EXPECT_EQ(c.ldsBytes, uint64_t(combine.ldsBytes));

  // The workspace descriptors: data pointer twice, offset 0, size in f32
  // elements, stride 1.
  Buffer wsO = d.allocate(p->split.workspaceOBytes + 8).take();
  Buffer wsLse = d.allocate(p->split.workspaceLseBytes).take();
  FA_ASSERT_OK(bindWorkspace(*p, split, wsO, wsLse));
  const uint64_t expected[10] = {
      wsO.address(),   wsO.address(),   0, wsO.size() / 4,   1,
      wsLse.address(), wsLse.address(), 0, wsLse.size() / 4, 1};
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(p->words[FA_ABI_WS_O + i], expected[i]) << "word " << 44 + i;
  Buffer small = d.allocate(p->split.workspaceLseBytes - 4).take();
  Status s = bindWorkspace(*p, split, wsO, small);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message(), "workspace LSE holds 4748 bytes but 3 splits need "
                         "4752");
  EXPECT_EQ(bindWorkspace(*v1, dense, wsO, wsLse).message(),
            "kernel 'split_f32' is not a split-KV kernel: its launch has no "
            "workspace");

  // GQA-packed: R = Lq * Hq/Hkv rows over Hkv; the combine grid stays over
  // Hq.
  split.gqaPacked = true;
  p = packAttentionArgs(split, b.args(shape), d.limits(), &combine, 3);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->geometry.grid[0], 15u); // ceil(33 * 2 / 16) * 3
  EXPECT_EQ(p->geometry.grid[1], 2u);
  EXPECT_EQ(p->geometry.grid[2], 3u);
  EXPECT_EQ(p->combineGeometry->grid[0], 5u);
  EXPECT_EQ(p->combineGeometry->grid[1], 4u);
  EXPECT_EQ(p->combineGeometry->grid[2], 3u);
}

// A split_direct kernel at S = 1 writes O itself: one launch, no workspace
// (null descriptors, S = 1); at S > 1 it packs as any split kernel.
TEST(SplitKvTest, DirectKernelAtOneSplit) {
  Device d = test::hostDevice();
  KernelInfo split = splitInfo("split_f32"),
             combine = splitInfo("split_f32", 1);
  split.splitDirect = true;
  const AttentionShape shape{3, 4, 2, 33, 70};
  Buffers b = allocate(d, shape, split.headDim);
  Expected<PackedLaunch> one =
      packAttentionArgs(split, b.args(shape), d.limits(), &combine, 1);
  FA_ASSERT_OK(one);
  EXPECT_EQ(one->numWords, 55u);
  EXPECT_EQ(one->split.kvSplits, 1);
  EXPECT_EQ(one->split.workspaceOBytes, 0u);
  EXPECT_EQ(one->split.workspaceLseBytes, 0u);
  EXPECT_EQ(workspaceBytes(one->split), 0u);
  EXPECT_FALSE(one->combineGeometry);
  EXPECT_EQ(one->geometry.grid[0], 3u); // ceil(33 / 16) * 1
  const uint64_t nullDescriptor[5] = {0, 0, 0, 0, 1};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(one->words[FA_ABI_WS_O + i], nullDescriptor[i]) << i;
    EXPECT_EQ(one->words[FA_ABI_WS_LSE + i], nullDescriptor[i]) << i;
  }
  EXPECT_EQ(one->words[FA_ABI_SPLITS], 1u);
  Buffer ws = d.allocate(1024).take();
  EXPECT_EQ(bindWorkspace(*one, split, ws).message(),
            "kernel 'split_f32' writes O itself at one K/V split: its launch "
            "has no workspace");

  Expected<PackedLaunch> two =
      packAttentionArgs(split, b.args(shape), d.limits(), &combine, 2);
  FA_ASSERT_OK(two);
  EXPECT_TRUE(two->combineGeometry);
  EXPECT_EQ(two->split.workspaceLseBytes, uint64_t(2 * 3 * 4 * 33 * 4));
  // Without split_direct S = 1 still runs the combine over a workspace.
  split.splitDirect = false;
  one = packAttentionArgs(split, b.args(shape), d.limits(), &combine, 1);
  FA_ASSERT_OK(one);
  EXPECT_TRUE(one->combineGeometry);
  EXPECT_EQ(one->split.workspaceLseBytes, uint64_t(3 * 4 * 33 * 4));
}

TEST(SplitKvTest, PackingErrors) {
  Device d = test::hostDevice();
  KernelInfo split = splitInfo("split_f32"),
             combine = splitInfo("split_f32", 1);
  const AttentionShape shape{1, 2, 1, 40, 50};
  Buffers b = allocate(d, shape, split.headDim);
  auto error = [&](const KernelInfo &k, const KernelInfo *c, int64_t s = 0,
                   DeviceLimits limits = test::hostDevice().limits()) {
    Expected<PackedLaunch> p =
        packAttentionArgs(k, b.args(shape), limits, c, s);
    EXPECT_FALSE(p.ok());
    EXPECT_EQ(p.status().code(), ErrorCode::InvalidArgument);
    return p ? std::string() : p.status().message();
  };
  EXPECT_EQ(error(split, nullptr),
            "kernel 'split_f32' is a split-KV kernel: its launch needs its "
            "combine kernel 'split_f32_combine'");
  EXPECT_EQ(error(combine, nullptr),
            "kernel 'split_f32_combine' is a combine kernel: it runs after "
            "its split kernel, not on its own");
  KernelInfo dense = test::fixtureManifest("attn_f32").kernels[0];
  EXPECT_EQ(error(dense, &combine),
            "kernel 'attn_f32' is not a split-KV kernel: it has no combine "
            "kernel");
  EXPECT_EQ(error(split, &combine, 2000),
            "K/V split count 2000 is outside [1, 1024] (0: chosen by the "
            "runtime)");
  // Both grids within the device's: the split grid is Q tiles x S.
  DeviceLimits limits = d.limits();
  limits.maxGrid[0] = 8;
  EXPECT_EQ(error(split, &combine, 3, limits),
            "grid (9, 2, 1) exceeds the device's limit (8, 65535, 65535) (3 "
            "Q tiles x 3 K/V splits)");
  limits.maxGrid[0] = 4; // the split grid is 3, the combine grid 5
  EXPECT_EQ(error(split, &combine, 1, limits),
            "combine kernel 'split_f32_combine': grid (5, 2, 1) exceeds the "
            "device's limit (4, 65535, 65535)");
}

// A launch reports S and both grids; the workspace is allocated by the
// first launch and reused by the next ones that fit in it.
TEST(SplitKvTest, ReportsTheLaunchAndReusesTheWorkspace) {
  Kernel k = loadKernel("split_f32");
  LaunchOptions lo;
  lo.kvSplits = 5;
  LaunchInfo info;
  FA_ASSERT_OK(launchOnInputs(k, {1, 2, 1, 40, 100}, lo, &info));
  EXPECT_EQ(info.kvSplits, 5);
  EXPECT_EQ(info.geometry.grid[0], 15u);
  ASSERT_TRUE(info.combineGeometry);
  EXPECT_EQ(info.combineGeometry->grid[0], 5u);
  EXPECT_TRUE(info.workspaceAllocated);
  FA_ASSERT_OK(launchOnInputs(k, {1, 2, 1, 40, 100}, lo, &info));
  EXPECT_FALSE(info.workspaceAllocated);
  lo.kvSplits = 2; // smaller: reused
  FA_ASSERT_OK(launchOnInputs(k, {1, 2, 1, 40, 100}, lo, &info));
  EXPECT_FALSE(info.workspaceAllocated);
  lo.kvSplits = 6; // larger: a new one
  FA_ASSERT_OK(launchOnInputs(k, {1, 2, 1, 40, 100}, lo, &info));
  EXPECT_TRUE(info.workspaceAllocated);
  // Results stay right in a reused, larger workspace with other strides of
  // its own layout.
  ValidationReport r = validate(k, {1, 1, 1, 7, 30}, 3);
  EXPECT_TRUE(r.verdict.pass) << failures(r);
  r = validate(k, {1, 2, 1, 40, 100}, 6);
  EXPECT_TRUE(r.verdict.pass) << failures(r);

  // A dense kernel: S = 1, no combine launch, no workspace.
  Kernel dense = loadKernel("attn_f32");
  FA_ASSERT_OK(launchOnInputs(dense, {1, 2, 1, 40, 100}, {}, &info));
  EXPECT_EQ(info.kvSplits, 1);
  EXPECT_FALSE(info.combineGeometry);
  EXPECT_FALSE(info.workspaceAllocated);
}

TEST(SplitKvTest, CombineKernelAloneIsRefused) {
  Module m = loadModule("split_f32");
  Expected<Kernel> c = m.kernel("split_f32_combine");
  FA_ASSERT_OK(c);
  Status s = launchOnInputs(*c, {1, 1, 1, 4, 4});
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message(), "kernel 'split_f32_combine' is the combine kernel of "
                         "split-KV kernel 'split_f32': launch 'split_f32', "
                         "which runs both");
  EXPECT_EQ(s.kernel(), "split_f32_combine");
}

TEST(SplitKvTest, SplitCountErrors) {
  Kernel k = loadKernel("split_f32");
  LaunchOptions lo;
  lo.kvSplits = 1025;
  Status s = launchOnInputs(k, {1, 1, 1, 4, 4}, lo);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message(), "K/V split count 1025 is outside [1, 1024] (0: "
                         "chosen by the runtime)");
  lo.kvSplits = 4;
  s = launchOnInputs(loadKernel("attn_f32"), {1, 1, 1, 4, 4}, lo);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message(), "kernel 'attn_f32' is not a split-KV kernel: it "
                         "takes no K/V split count (asked for 4)");
}

// The code object's record says version 1 where the manifest says 2.
TEST(SplitKvTest, VersionMismatchIsRefused) {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath("split_bad_abi"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::ManifestError);
  EXPECT_EQ(m.status().message(),
            "kernel 'split_bad_abi': the manifest says abi_version 2, the code "
            "object says 1 (the manifest does not describe this code object)");
}

// The C API forces S and says which S ran. All keys equal: every output row
// is the mean of the V rows, whatever the split.
TEST(SplitKvTest, CApiForcesTheSplitCount) {
  fa_device *d = nullptr;
  ASSERT_EQ(fa_device_open("host", &d), FA_OK);
  fa_module *m = nullptr;
  ASSERT_EQ(fa_module_load(d, test::fixturePath("split_f32").c_str(), &m),
            FA_OK)
      << fa_last_error();
  enum { L = 40, D = 64 };
  std::vector<float> q(L * D, 0.25f), k(L * D, 0.5f), v(L * D), o(L * D);
  for (int i = 0; i < L * D; ++i)
    v[i] = float(i / D);
  fa_buffer *b[5] = {};
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(fa_buffer_alloc(d, i < 4 ? sizeof(float) * L * D : 4 * L, &b[i]),
              FA_OK);
  ASSERT_EQ(fa_buffer_write(b[0], 0, q.data(), 4 * L * D), FA_OK);
  ASSERT_EQ(fa_buffer_write(b[1], 0, k.data(), 4 * L * D), FA_OK);
  ASSERT_EQ(fa_buffer_write(b[2], 0, v.data(), 4 * L * D), FA_OK);
  fa_attention_args args = {};
  args.q = b[0];
  args.k = b[1];
  args.v = b[2];
  args.o = b[3];
  args.lse = b[4];
  args.batch = args.heads_q = args.heads_kv = 1;
  args.seq_q = args.seq_k = L;
  fa_launch_options options = {};
  options.kv_splits = 5;
  ASSERT_EQ(fa_module_launch_with_options(m, nullptr, &args, &options), FA_OK)
      << fa_last_error();
  EXPECT_EQ(options.kv_splits_used, 5);
  ASSERT_EQ(fa_buffer_read(b[3], 0, o.data(), 4 * L * D), FA_OK);
  for (int i = 0; i < L * D; ++i)
    ASSERT_NEAR(o[i], (L - 1) / 2.0, 1e-4) << i;
  options.kv_splits = 0;
  ASSERT_EQ(fa_module_launch_with_options(m, nullptr, &args, &options), FA_OK);
  // W = 3 tiles, n = 3 blocks, one round: 4 x (ceil(3/S) + 1) + S is 17,
  // 14, 11 for S = 1, 2, 3.
  EXPECT_EQ(options.kv_splits_used, 3);
  EXPECT_EQ(fa_module_launch(m, nullptr, &args), FA_OK);
  options.kv_splits = 2000;
  EXPECT_EQ(fa_module_launch_with_options(m, nullptr, &args, &options),
            FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("K/V split count 2000"),
            std::string::npos)
      << fa_last_error();
  EXPECT_EQ(fa_module_launch(m, "split_f32_combine", &args),
            FA_ERROR_INVALID_ARGUMENT);
  fa_module_unload(m);
  for (fa_buffer *buffer : b)
    fa_buffer_free(buffer);
  fa_device_close(d);
}

} // namespace
