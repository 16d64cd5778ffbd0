//===- LoopAnalysisTest.cpp - gfx906 assembly analysis --------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Gfx906/LoopAnalysis.h"
#include "compiler/Targets/Gfx906/Mi50Model.h"

#include <gtest/gtest.h>

using namespace mlir::fa;

/// A kernel `k` in the backend's assembly format: `body` between its label
/// and .Lfunc_end0, and the metadata parseAmdgpuResources reads.
static std::string kernelAssembly(const std::string &body) {
  return "\t.text\n\t.globl\tk\nk:\n" + body +
         ".Lfunc_end0:\n"
         "\t.amdgpu_metadata\n---\namdhsa.kernels:\n"
         "  - .args: []\n"
         "    .name: k\n"
         "    .vgpr_count: 40\n"
         "    .wavefront_size: 64\n"
         "...\n\t.end_amdgpu_metadata\n";
}

/// A loop (.LBB0_1 ... s_cbranch_scc1 .LBB0_1) with an if inside, and MACs,
/// LDS and global memory instructions before and after it.
static const char *loopBody =
    "\ts_load_dwordx4 s[0:3], s[4:5], 0x0\n"
    "\tv_fma_mix_f32 v0, v1, v2, v0 op_sel_hi:[1,1,0]\n"
    "\tds_read_b128 v[40:43], v8\n"
    "\tglobal_load_dword v3, v[4:5], off\n"
    "\ts_cbranch_scc1 .LBB0_3\n"
    ".LBB0_1:                                ; loop header\n"
    "\tds_read_b64 v[6:7], v8\n"
    "\tds_read2_b32 v[10:11], v8 offset1:32\n"
    "\tds_read_u16 v12, v8\n"
    "\ts_waitcnt lgkmcnt(0)\n"
    "\tv_dot2_f32_f16 v20, v6, v7, v20\n"
    "\tv_dot2_f32_f16 v21, v6, v10, v21\n"
    "\tv_dot2_f32_f16 v22, v7, v11, v22\n"
    "\tv_fma_mix_f32 v23, v12, v6, v23 op_sel_hi:[1,1,0]\n"
    "\tv_exp_f32_e32 v24, v24\n"
    "\ts_cbranch_execz .LBB0_2\n"
    "; %bb.4:\n"
    "\tds_write_b128 v8, v[20:23]\n"
    "\tglobal_load_dwordx4 v[30:33], v[4:5], off\n"
    ".LBB0_2:\n"
    "\ts_barrier\n"
    "\ts_add_u32 s6, s6, 1\n"
    "\ts_cmp_lg_u32 s6, s7\n"
    "\ts_cbranch_scc1 .LBB0_1\n"
    ".LBB0_3:\n"
    "\tv_exp_f32_e32 v0, v0\n"
    "\tv_fmac_f32_e32 v1, v2, v3\n"
    "\tglobal_store_dword v[4:5], v0, off\n"
    "\ts_endpgm\n";

TEST(Gfx906LoopAnalysis, CountsTheKvLoopBodyOnly) {
  auto kernels = parseAmdgpuResources(kernelAssembly(loopBody));
  ASSERT_EQ(kernels.size(), 1u);
  const AmdgpuResources &r = kernels[0];
  EXPECT_EQ(r.kernel, "k");
  EXPECT_EQ(r.vgprs, 40);
  // The whole kernel still counts everything.
  EXPECT_EQ(r.mix.at("v_fma_mix"), 2);
  EXPECT_EQ(r.mix.at("global_load"), 2);
  EXPECT_EQ(r.mix.at("ds_read"), 4);
  ASSERT_TRUE(r.kvLoop.has_value());
  const AmdgpuLoopStats &l = *r.kvLoop;
  EXPECT_EQ(l.header, ".LBB0_1");
  EXPECT_TRUE(l.inner.empty());
  // 3 v_dot2, 1 v_fma_mix, 1 v_exp: the prologue's v_fma_mix and the
  // epilogue's v_exp and v_fmac are outside.
  EXPECT_EQ(l.valu, 5);
  EXPECT_EQ(l.dot2, 3);
  EXPECT_EQ(l.mix.at("v_dot2"), 3);
  EXPECT_EQ(l.mix.at("v_fma_mix"), 1);
  EXPECT_EQ(l.mix.at("v_exp_f32"), 1);
  EXPECT_EQ(l.mix.count("v_fmac_f32"), 0u);
  EXPECT_EQ(l.mix.count("global_store"), 0u);
  // s_waitcnt, s_cbranch_execz, s_barrier, s_add, s_cmp, s_cbranch_scc1.
  EXPECT_EQ(l.salu, 6);
  EXPECT_EQ(l.barriers, 1);
  // Reads b64 + read2_b32 + u16 = 8 + 8 + 2 bytes per lane; the b128 read
  // before the loop is not counted. The write inside the if is.
  EXPECT_EQ(l.lds, 4);
  EXPECT_EQ(l.ldsReads, 3);
  EXPECT_EQ(l.ldsReadBytes, 18);
  EXPECT_EQ(l.ldsWrites, 1);
  EXPECT_EQ(l.ldsWriteBytes, 16);
  EXPECT_EQ(l.global, 1);
  // 3 v_dot2 x 4 + 1 v_fma_mix x 2 FLOP per lane.
  EXPECT_EQ(l.macFlopsPerLane, 14);
}

TEST(Gfx906LoopAnalysis, ReportsTheKvLoopsValuShare) {
  auto kernels = parseAmdgpuResources(kernelAssembly(loopBody));
  ASSERT_EQ(kernels.size(), 1u);
  // A 2x4 tile with D=8: 256 FLOP per iteration, which the loop's MACs
  // (14 FLOP per lane x 256 lanes) can do. VALU: 4 waves x 5 x 4 cycles /
  // 4 SIMDs = 20 cycles; LDS: 4 waves x 64 lanes x 34 B / 128 = 68 cycles.
  std::string text = formatAmdgpuResources(kernels[0], /*threads=*/256,
                                           /*blockM=*/2, /*blockN=*/4,
                                           /*headDim=*/8);
  EXPECT_NE(text.find("instruction mix (whole kernel):"), std::string::npos)
      << text;
  EXPECT_NE(text.find("KV loop body (per iteration, loop .LBB0_1): VALU 5 "
                      "(v_dot2 3 = 60% of VALU issue slots), SALU 6, LDS 4 "
                      "(reads 3: 18 B per lane, writes 1: 16 B per lane), "
                      "global 1, s_barrier 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("KV loop mix: ds_read=3 ds_write=1 global_load=1 "
                      "s_barrier=1 v_dot2=3 v_exp_f32=1 v_fma_mix=1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("MI50 throughput (static estimate"), std::string::npos)
      << text;
  EXPECT_NE(text.find("VALU 20 cycles per CU"), std::string::npos) << text;
  EXPECT_NE(text.find("LDS 68 cycles"), std::string::npos) << text;
  EXPECT_NE(text.find("LDS-limited"), std::string::npos) << text;
  EXPECT_EQ(text.find("not valid"), std::string::npos) << text;
  EXPECT_EQ(text.find("no KV loop"), std::string::npos) << text;
}

TEST(Gfx906LoopAnalysis, ABackwardJumpThatIsNotALoopIsNotTheKvLoop) {
  // .LBB0_9, laid out last, jumps back to .LBB0_5, which does not dominate
  // it: no loop, although it holds more MACs than the real loop .LBB0_1.
  auto kernels =
      parseAmdgpuResources(kernelAssembly("\ts_cbranch_scc0 .LBB0_9\n"
                                          ".LBB0_1:\n"
                                          "\tv_dot2_f32_f16 v20, v6, v7, v20\n"
                                          "\ts_cbranch_scc1 .LBB0_1\n"
                                          "\ts_branch .LBB0_6\n"
                                          ".LBB0_5:\n"
                                          "\tv_fma_mix_f32 v0, v1, v2, v0\n"
                                          "\tv_fma_mix_f32 v0, v1, v2, v0\n"
                                          "\tv_fma_mix_f32 v0, v1, v2, v0\n"
                                          ".LBB0_6:\n"
                                          "\ts_endpgm\n"
                                          ".LBB0_9:\n"
                                          "\ts_cbranch_execnz .LBB0_5\n"
                                          "\ts_branch .LBB0_6\n"));
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_TRUE(kernels[0].kvLoop.has_value());
  EXPECT_EQ(kernels[0].kvLoop->header, ".LBB0_1");
  EXPECT_EQ(kernels[0].kvLoop->valu, 1);
  EXPECT_EQ(kernels[0].kvLoop->dot2, 1);
}

TEST(Gfx906LoopAnalysis, CountsInnerLoopsWithoutAStaticTripCountOnce) {
  // Two inner loops that branch on VCC: their trip counts are not static.
  auto kernels =
      parseAmdgpuResources(kernelAssembly("\ts_mov_b32 s6, 0\n"
                                          ".LBB0_1:\n"
                                          "\ts_barrier\n"
                                          ".LBB0_2:\n"
                                          "\tv_dot2_f32_f16 v20, v6, v7, v20\n"
                                          "\ts_cbranch_vccnz .LBB0_2\n"
                                          "\tv_exp_f32_e32 v24, v24\n"
                                          ".LBB0_3:\n"
                                          "\tv_fma_mix_f32 v0, v1, v2, v0\n"
                                          "\ts_cbranch_vccnz .LBB0_3\n"
                                          "\ts_cbranch_scc1 .LBB0_1\n"
                                          "\tv_fma_mix_f32 v0, v1, v2, v0\n"
                                          "\ts_endpgm\n"));
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_TRUE(kernels[0].kvLoop.has_value());
  const AmdgpuLoopStats &l = *kernels[0].kvLoop;
  EXPECT_EQ(l.header, ".LBB0_1");
  ASSERT_EQ(l.inner.size(), 2u);
  EXPECT_EQ(l.inner[0].header, ".LBB0_2");
  EXPECT_EQ(l.inner[0].trips, 0);
  EXPECT_EQ(l.inner[1].header, ".LBB0_3");
  EXPECT_EQ(l.inner[1].trips, 0);
  EXPECT_EQ(l.valu, 3);
  EXPECT_EQ(l.dot2, 1);
  EXPECT_EQ(l.mix.at("v_fma_mix"), 1);
  EXPECT_EQ(l.salu, 4);
  std::string text = formatAmdgpuResources(kernels[0], 256, 64, 64, 64);
  EXPECT_NE(text.find("inner loops .LBB0_2 x?, .LBB0_3 x?; x?: trip count "
                      "not static, counted once"),
            std::string::npos)
      << text;
  // 1 v_dot2 and 1 v_fma_mix, counted once, cannot do a 64x64x64 iteration.
  EXPECT_NE(text.find("not valid"), std::string::npos) << text;
}

/// A KV loop (.LBB0_1) around a dot loop (.LBB0_2) that `init` enters and
/// `latch` closes, with `extra` in the dot loop's body.
static std::string dotLoopKernel(const std::string &init,
                                 const std::string &latch,
                                 const std::string &extra = "") {
  return kernelAssembly("\ts_mov_b32 s6, 0\n"
                        ".LBB0_1:\n"
                        "\ts_barrier\n" +
                        init +
                        ".LBB0_2:\n"
                        "\tds_read_b64 v[6:7], v8\n"
                        "\tv_dot2_f32_f16 v20, v6, v7, v20\n" +
                        extra + latch +
                        "\tv_exp_f32_e32 v24, v24\n"
                        "\ts_add_i32 s6, s6, 1\n"
                        "\ts_cmp_lg_u32 s6, s7\n"
                        "\ts_cbranch_scc1 .LBB0_1\n"
                        "\ts_endpgm\n");
}

/// The dot loop's trip count as the KV loop's analysis finds it.
static int64_t dotLoopTrips(const std::string &assembly) {
  auto kernels = parseAmdgpuResources(assembly);
  if (kernels.size() != 1 || !kernels[0].kvLoop ||
      kernels[0].kvLoop->inner.size() != 1)
    return -1;
  return kernels[0].kvLoop->inner[0].trips;
}

TEST(Gfx906LoopAnalysis, CountsACountedInnerLoopTimesItsTripCount) {
  // The backend's dot loops: s2 = 6, 14, ..., 62, so 8 trips.
  auto kernels = parseAmdgpuResources(
      dotLoopKernel("\ts_mov_b32 s2, -2\n", "\ts_add_i32 s2, s2, 8\n"
                                            "\ts_waitcnt lgkmcnt(0)\n"
                                            "\ts_cmp_lt_u32 s2, 62\n"
                                            "\ts_cbranch_scc1 .LBB0_2\n"));
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_TRUE(kernels[0].kvLoop.has_value());
  const AmdgpuLoopStats &l = *kernels[0].kvLoop;
  EXPECT_EQ(l.header, ".LBB0_1");
  ASSERT_EQ(l.inner.size(), 1u);
  EXPECT_EQ(l.inner[0].header, ".LBB0_2");
  EXPECT_EQ(l.inner[0].trips, 8);
  // 8 x (v_dot2) + v_exp; 8 x 8 B of LDS reads; s_barrier, s_mov, 8 x 4
  // in the dot loop, 3 in the latch.
  EXPECT_EQ(l.valu, 9);
  EXPECT_EQ(l.dot2, 8);
  EXPECT_EQ(l.mix.at("v_dot2"), 8);
  EXPECT_EQ(l.mix.at("ds_read"), 8);
  EXPECT_EQ(l.ldsReads, 8);
  EXPECT_EQ(l.ldsReadBytes, 64);
  EXPECT_EQ(l.salu, 37);
  EXPECT_EQ(l.macFlopsPerLane, 32);
  // 8 x 4 FLOP x 64 lanes = 2048 = 4 x 8 x 8 x 8: exactly one iteration.
  std::string text = formatAmdgpuResources(kernels[0], 64, 8, 8, 8);
  EXPECT_NE(text.find("inner loops .LBB0_2 x8):"), std::string::npos) << text;
  EXPECT_NE(text.find("VALU 9 (v_dot2 8 = 88% of VALU issue slots)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("not valid"), std::string::npos) << text;
  EXPECT_EQ(text.find("counted once"), std::string::npos) << text;
}

TEST(Gfx906LoopAnalysis, ReadsTripCountsOfTheCountedLoopForms) {
  // Count up to an equality (branch back while not equal).
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, 0\n",
                                       "\ts_add_u32 s2, s2, 1\n"
                                       "\ts_cmp_eq_u32 s2, 16\n"
                                       "\ts_cbranch_scc0 .LBB0_2\n")),
            16);
  // Count down, signed, from a hex literal; s_movk and s_cmpk.
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_movk_i32 s2, 0x10\n",
                                       "\ts_sub_i32 s2, s2, 1\n"
                                       "\ts_cmpk_gt_i32 s2, 0\n"
                                       "\ts_cbranch_scc1 .LBB0_2\n")),
            16);
  // The literal first: `62 > s2` is `s2 < 62`; s_addk.
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, -2\n",
                                       "\ts_addk_i32 s2, 0x8\n"
                                       "\ts_cmp_gt_u32 62, s2\n"
                                       "\ts_cbranch_scc1 .LBB0_2\n")),
            8);
  // The start set a block up, on a chain with one predecessor each.
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, -2\n"
                                       "\ts_branch .LBB0_9\n"
                                       ".LBB0_9:\n"
                                       "\tv_mov_b32_e32 v1, 0\n",
                                       "\ts_add_i32 s2, s2, 8\n"
                                       "\ts_cmp_lt_u32 s2, 62\n"
                                       "\ts_cbranch_scc1 .LBB0_2\n")),
            8);
}

TEST(Gfx906LoopAnalysis, LeavesTripCountsThatAreNotStaticUnknown) {
  const std::string latch = "\ts_add_i32 s2, s2, 8\n"
                            "\ts_cmp_lt_u32 s2, 62\n"
                            "\ts_cbranch_scc1 .LBB0_2\n";
  // The reference: 8 trips.
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, -2\n", latch)), 8);
  // The start comes from a register.
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, s5\n", latch)), 0);
  // Two ways in, with two starts.
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, -2\n"
                                       "\ts_cbranch_scc0 .LBB0_9\n"
                                       "\ts_mov_b32 s2, 6\n"
                                       ".LBB0_9:\n",
                                       latch)),
            0);
  // The bound is a register.
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, -2\n",
                                       "\ts_add_i32 s2, s2, 8\n"
                                       "\ts_cmp_lt_u32 s2, s9\n"
                                       "\ts_cbranch_scc1 .LBB0_2\n")),
            0);
  // Something that writes SCC between the compare and the branch.
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, -2\n",
                                       "\ts_add_i32 s2, s2, 8\n"
                                       "\ts_cmp_lt_u32 s2, 62\n"
                                       "\ts_and_b32 s4, s4, 1\n"
                                       "\ts_cbranch_scc1 .LBB0_2\n")),
            0);
  // The counter is also written in the loop: by an SALU instruction, or as
  // a VALU carry-out.
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, -2\n", latch,
                                       "\ts_lshl_b32 s2, s2, 1\n")),
            0);
  EXPECT_EQ(
      dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, -2\n", latch,
                                 "\tv_add_co_u32_e64 v1, s[2:3], v1, v2\n")),
      0);
  // The counter stepped twice (not the one step the analysis reads).
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, -2\n",
                                       "\ts_add_i32 s2, s2, 4\n" + latch)),
            0);
  // A loop that would not end (the counter steps away from the bound).
  EXPECT_EQ(dotLoopTrips(dotLoopKernel("\ts_mov_b32 s2, 0\n",
                                       "\ts_add_i32 s2, s2, 8\n"
                                       "\ts_cmp_lg_u32 s2, 7\n"
                                       "\ts_cbranch_scc1 .LBB0_2\n")),
            0);
}

TEST(Gfx906LoopAnalysis, OfTwoLoopsWithMacsTheOneWithMoreIsTheKvLoop) {
  // A causal kernel's two KV loops: the diagonal blocks' loop first, with
  // fewer MACs here; the other is listed, not estimated.
  auto kernels = parseAmdgpuResources(
      kernelAssembly(".LBB0_1:\n"
                     "\tv_dot2_f32_f16 v20, v6, v7, v20\n"
                     "\tv_cndmask_b32_e32 v20, v20, v21, vcc\n"
                     "\ts_cbranch_scc1 .LBB0_1\n"
                     ".LBB0_2:\n"
                     "\tv_dot2_f32_f16 v20, v6, v7, v20\n"
                     "\tv_dot2_f32_f16 v21, v6, v7, v21\n"
                     "\ts_cbranch_scc1 .LBB0_2\n"
                     "\ts_endpgm\n"));
  ASSERT_EQ(kernels.size(), 1u);
  const AmdgpuResources &r = kernels[0];
  ASSERT_TRUE(r.kvLoop.has_value());
  EXPECT_EQ(r.kvLoop->header, ".LBB0_2");
  EXPECT_EQ(r.kvLoop->dot2, 2);
  ASSERT_EQ(r.otherMacLoops.size(), 1u);
  EXPECT_EQ(r.otherMacLoops[0].header, ".LBB0_1");
  EXPECT_EQ(r.otherMacLoops[0].valu, 2);
  std::string text = formatAmdgpuResources(r, 64, 1, 1, 8);
  EXPECT_NE(text.find("another loop with multiply-accumulates (not "
                      "estimated): .LBB0_1: VALU 2 (v_dot2 1 = 50%)"),
            std::string::npos)
      << text;
}

TEST(Gfx906LoopAnalysis, OfTwoVersionsOfTheKvLoopTheOneCountedBestIsTheKvLoop) {
  // Equal MACs. The first version copies with a loop whose trip count is
  // not static (a scalar fallback): the second, with more VALU, is the KV
  // loop.
  auto versions = parseAmdgpuResources(
      kernelAssembly(".LBB0_1:\n"
                     "\tv_dot2_f32_f16 v20, v6, v7, v20\n"
                     ".LBB0_2:\n"
                     "\tglobal_load_ushort v3, v[4:5], off\n"
                     "\ts_cbranch_vccnz .LBB0_2\n"
                     "\ts_cbranch_scc1 .LBB0_1\n"
                     ".LBB0_3:\n"
                     "\tv_dot2_f32_f16 v20, v6, v7, v20\n"
                     "\tglobal_load_dwordx4 v[8:11], v[4:5], off\n"
                     "\tv_add_u32_e32 v4, 16, v4\n"
                     "\ts_cbranch_scc1 .LBB0_3\n"
                     "\ts_endpgm\n"));
  ASSERT_EQ(versions.size(), 1u);
  ASSERT_TRUE(versions[0].kvLoop.has_value());
  EXPECT_EQ(versions[0].kvLoop->header, ".LBB0_3");
  ASSERT_EQ(versions[0].otherMacLoops.size(), 1u);
  EXPECT_EQ(versions[0].otherMacLoops[0].header, ".LBB0_1");

  // Equal MACs and no inner loops: the one with fewer VALU (the unmasked
  // one), although it comes second.
  auto masked = parseAmdgpuResources(
      kernelAssembly(".LBB0_1:\n"
                     "\tv_dot2_f32_f16 v20, v6, v7, v20\n"
                     "\tv_cndmask_b32_e32 v20, v20, v21, vcc\n"
                     "\ts_cbranch_scc1 .LBB0_1\n"
                     ".LBB0_2:\n"
                     "\tv_dot2_f32_f16 v20, v6, v7, v20\n"
                     "\ts_cbranch_scc1 .LBB0_2\n"
                     "\ts_endpgm\n"));
  ASSERT_EQ(masked.size(), 1u);
  ASSERT_TRUE(masked[0].kvLoop.has_value());
  EXPECT_EQ(masked[0].kvLoop->header, ".LBB0_2");
}

TEST(Gfx906LoopAnalysis, SaysSoWhenThereIsNoKvLoop) {
  // Straight-line MACs, and a loop without MACs (a copy loop).
  auto kernels = parseAmdgpuResources(
      kernelAssembly("\tv_dot2_f32_f16 v20, v6, v7, v20\n"
                     ".LBB0_1:\n"
                     "\tglobal_load_dword v3, v[4:5], off\n"
                     "\tds_write_b32 v8, v3\n"
                     "\ts_cbranch_scc1 .LBB0_1\n"
                     "\tv_fma_mix_f32 v0, v1, v2, v0\n"
                     "\ts_endpgm\n"));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_FALSE(kernels[0].kvLoop.has_value());
  EXPECT_EQ(kernels[0].mix.at("v_dot2"), 1);
  std::string text = formatAmdgpuResources(kernels[0], 256, 64, 64, 64);
  EXPECT_NE(text.find("no KV loop found in the assembly"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("KV loop body"), std::string::npos) << text;
  EXPECT_EQ(text.find("MI50 throughput"), std::string::npos) << text;
}

TEST(Gfx906LoopAnalysis, LdsBytesPerLaneFollowTheMnemonic) {
  EXPECT_EQ(ldsBytesPerLane("ds_read_b32"), 4);
  EXPECT_EQ(ldsBytesPerLane("ds_read_b64"), 8);
  EXPECT_EQ(ldsBytesPerLane("ds_read_b128"), 16);
  EXPECT_EQ(ldsBytesPerLane("ds_read2_b32"), 8);
  EXPECT_EQ(ldsBytesPerLane("ds_read2_b64"), 16);
  EXPECT_EQ(ldsBytesPerLane("ds_read2st64_b32"), 8);
  EXPECT_EQ(ldsBytesPerLane("ds_read2st64_b64"), 16);
  EXPECT_EQ(ldsBytesPerLane("ds_read_u16"), 2);
  EXPECT_EQ(ldsBytesPerLane("ds_read_i16"), 2);
  EXPECT_EQ(ldsBytesPerLane("ds_read_u8"), 1);
  EXPECT_EQ(ldsBytesPerLane("ds_read_u16_d16_hi"), 2);
  EXPECT_EQ(ldsBytesPerLane("ds_write_b16"), 2);
  EXPECT_EQ(ldsBytesPerLane("ds_write2_b64"), 16);
  EXPECT_EQ(ldsBytesPerLane("ds_write_b8_d16_hi"), 1);
  EXPECT_EQ(ldsBytesPerLane("ds_swizzle_b32"), 0);
  EXPECT_EQ(ldsBytesPerLane("v_add_u32"), 0);
}

TEST(Gfx906LoopAnalysis, MixLoHiAreConversionsNotMacs) {
  // v_fma_mixlo/hi_f16 write an f16 half (fa converts P with them): their
  // own class in the mix, no MAC FLOPs; v_fma_mix_f32 is a MAC.
  std::vector<AmdgpuResources> kernels =
      parseAmdgpuResources(kernelAssembly(".LBB0_1:\n"
                                          "\tv_fma_mix_f32 v0, v1, v2, v0\n"
                                          "\tv_fma_mixlo_f16 v3, v1, v2, 0\n"
                                          "\tv_fma_mixhi_f16 v3, v1, v2, 0\n"
                                          "\ts_cbranch_scc1 .LBB0_1\n"));
  ASSERT_EQ(kernels.size(), 1u);
  const AmdgpuResources &r = kernels[0];
  EXPECT_EQ(r.mix.at("v_fma_mix"), 1);
  EXPECT_EQ(r.mix.at("v_fma_mixlo/hi (f16 conversion)"), 2);
  ASSERT_TRUE(r.kvLoop.has_value());
  EXPECT_EQ(r.kvLoop->macFlopsPerLane, 2);
}
