//===- Mi50ModelTest.cpp - occupancy and the MI50 estimate ----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Gfx906/Mi50Model.h"

#include <gtest/gtest.h>

using namespace mlir::fa;

TEST(Mi50Model, Mi50EstimateArithmetic) {
  EXPECT_NEAR(Mi50Estimate::dot2PeakTflops, 26.496, 1e-9);
  EXPECT_NEAR(Mi50Estimate::fp32PeakTflops, 13.248, 1e-9);

  // 64x64 tiles, D=64, 4 waves: 1048576 FLOP per iteration. 1280 VALU per
  // wave: 4 waves x 1280 x 4 cycles / 4 SIMDs = 5120 cycles per CU ->
  // 60 x 1.725e9 x 1048576 / 5120 = 21.1968 TFLOP/s (1024 of the 1280 VALU
  // are v_dot2: 80% of the dot2 peak). 512 B per lane of LDS reads:
  // 4 x 64 x 512 / 128 = 1024 cycles, not the limit.
  AmdgpuLoopStats loop;
  loop.valu = 1280;
  loop.dot2 = 1024;
  loop.ldsReadBytes = 512;
  loop.macFlopsPerLane = 1024 * 4;
  Mi50Estimate e = estimateMi50Throughput(loop, 64, 64, 64, 256, 2);
  EXPECT_DOUBLE_EQ(e.macCoverage, 1.0);
  EXPECT_EQ(e.wavesPerGroup, 4);
  EXPECT_EQ(e.simdsBusy, 4);
  EXPECT_EQ(e.flopsPerIteration, 1048576);
  EXPECT_DOUBLE_EQ(e.valuCycles, 5120);
  EXPECT_DOUBLE_EQ(e.ldsCycles, 1024);
  EXPECT_NEAR(e.valuBoundTflops, 21.1968, 1e-9);
  EXPECT_NEAR(e.ldsBoundTflops, 105.984, 1e-9);
  EXPECT_FALSE(e.ldsBound);
  EXPECT_NEAR(e.tflops, 21.1968, 1e-9);
  EXPECT_NEAR(e.tflops / Mi50Estimate::dot2PeakTflops, 0.8, 1e-12);

  // 2560 B per lane of reads and 512 of writes: 4 x 64 x 3072 / 128 = 6144
  // cycles, LDS-bound at 60 x 1.725e9 x 1048576 / 6144 = 17.664 TFLOP/s.
  loop.ldsReadBytes = 2560;
  loop.ldsWriteBytes = 512;
  e = estimateMi50Throughput(loop, 64, 64, 64, 256, 2);
  EXPECT_DOUBLE_EQ(e.ldsCycles, 6144);
  EXPECT_TRUE(e.ldsBound);
  EXPECT_NEAR(e.tflops, 17.664, 1e-9);

  // One 64-thread workgroup per CU (0 waves per SIMD by the floor rule):
  // one SIMD issues, 1 x 1280 x 4 cycles; 16x64 tiles, D=128.
  loop.ldsReadBytes = loop.ldsWriteBytes = 0;
  e = estimateMi50Throughput(loop, 16, 64, 128, 64, 0);
  EXPECT_EQ(e.simdsBusy, 1);
  EXPECT_EQ(e.flopsPerIteration, 524288);
  EXPECT_DOUBLE_EQ(e.valuCycles, 5120);
  EXPECT_NEAR(e.tflops, 10.5984, 1e-9);
}

// Occupancy from the backend's resources: the least of VGPRs (256 per lane,
// granule 4), SGPRs (800, granule 16), LDS (64 KiB per CU over 4 SIMDs) and
// 10. Values worked out by hand.
TEST(Mi50Model, WavesPerSimd) {
  AmdgpuResources r;
  r.vgprs = 128;      // 256 / 128 = 2
  r.sgprs = 40;       // 800 / 48 = 16
  r.ldsBytes = 25600; // 2 groups of 4 waves on 4 SIMDs: 2
  std::string limit;
  EXPECT_EQ(gfx906WavesPerSimd(r, 256, &limit), 2);
  r.vgprs = 181;      // 256 / 184 = 1
  r.ldsBytes = 20736; // 3 one-wave groups: 1 wave on 3 of the 4 SIMDs
  EXPECT_EQ(gfx906WavesPerSimd(r, 64, &limit), 1);
  r.vgprs = 35; // 7
  r.ldsBytes = 0;
  EXPECT_EQ(gfx906WavesPerSimd(r, 64, &limit), 7);
  EXPECT_EQ(limit, "VGPRs");
  r.ldsBytes = 40000; // one 1-wave group per CU: still 1, not 0
  EXPECT_EQ(gfx906WavesPerSimd(r, 64, &limit), 1);
  EXPECT_EQ(limit, "LDS");
}

// Workgroups per CU: 4 SIMDs x waves per SIMD / waves per group, and the
// LDS: 65536 / bytes. Hand-worked.
TEST(Mi50Model, WorkgroupsPerCu) {
  AmdgpuResources r;
  r.vgprs = 181;      // 1 wave per SIMD: 4 one-wave groups
  r.sgprs = 46;       // 800 / 48 = 16
  r.ldsBytes = 20736; // 3 groups
  EXPECT_EQ(gfx906WorkgroupsPerCu(r, 64), 3);
  r.ldsBytes = 0;
  EXPECT_EQ(gfx906WorkgroupsPerCu(r, 64), 4);
  r.vgprs = 128;      // 2 waves per SIMD: 8 waves = 2 four-wave groups
  r.ldsBytes = 25600; // 2 groups
  EXPECT_EQ(gfx906WorkgroupsPerCu(r, 256), 2);
  r.vgprs = 24; // 10 waves per SIMD (the limit): 40 waves = 40 groups of 1
  r.ldsBytes = 0;
  EXPECT_EQ(gfx906WorkgroupsPerCu(r, 64), 40);
}
