//===- WorkgroupTest.cpp - Launches, initial state, barriers, races -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Whole launches through sim::runLaunch with hand-made kernel descriptors:
// the initial register state the enable bits ask for (AMDGPUUsage: user
// SGPRs, then workgroup IDs at USER_SGPR_COUNT; work-item IDs in v0-v2),
// s_barrier across waves, a barrier some waves skip, and LDS races.
//
//===----------------------------------------------------------------------===//

#include "SimTest.h"

using namespace fa;
using namespace fa::sim;
using namespace fa::sim::test;

namespace {

/// A one-kernel code object made of `words`.
struct TestKernel {
  CodeObject co;
  Program program;
  CodeObjectKernel kernel;

  TestKernel(std::vector<uint32_t> words, uint32_t rsrc2, uint16_t props,
             uint32_t lds = 0) {
    words.push_back(kEndpgm);
    co.image.resize(words.size() * 4);
    std::memcpy(co.image.data(), words.data(), co.image.size());
    co.codeEnd = co.image.size();
    program = Program::decode(co);
    kernel.name = "k";
    kernel.entry = 0;
    kernel.kd.rsrc1 = 3 | (1 << 6) | (3 << 16) | (3 << 18) | (1 << 21) |
                      (1 << 23); // 16 VGPRs, 16 SGPRs, IEEE, DX10, denorms
    kernel.kd.rsrc2 = rsrc2;
    kernel.kd.codeProperties = props;
    kernel.kd.groupSegmentFixedSize = lds;
  }

  SimLaunch launch(const uint32_t grid[3], const uint32_t block[3]) const {
    SimLaunch l;
    l.program = &program;
    l.kernel = &kernel;
    l.kernelName = "k";
    for (int i = 0; i < 3; ++i) {
      l.grid[i] = grid[i];
      l.block[i] = block[i];
    }
    l.ldsBytes = kernel.kd.groupSegmentFixedSize;
    l.workers = 2;
    return l;
  }
};

// rsrc2: USER_SGPR_COUNT 6, workgroup IDs X/Y/Z, work-item IDs X, Y, Z.
constexpr uint32_t kRsrc2 = (6 << 1) | (7 << 7) | (2 << 11);
// kernel_code_properties: private segment buffer, kernarg segment ptr.
constexpr uint16_t kProps = 1 | (1 << 3);

} // namespace

TEST(SimLaunch, InitialRegisterState) {
  TestKernel k(
      {
          0xc0060282, 0x00000000, // s_load_dwordx2 s[10:11], s[4:5], 0x0
          0x24080282,             // v_lshlrev_b32_e32 v4, 2, v1
          0x68080900,             // v_add_u32_e32 v4, v0, v4
          0xd1fd0004, 0x04110902, // v_lshl_add_u32 v4, v2, 4, v4
          0x24080884,             // v_lshlrev_b32_e32 v4, 4, v4
          0x8e0c8807,             // s_lshl_b32 s12, s7, 8
          0x800c0c06,             // s_add_u32 s12, s6, s12
          0x8e0d9008,             // s_lshl_b32 s13, s8, 16
          0x800c0d0c,             // s_add_u32 s12, s12, s13
          0x7e0a0300,             // v_mov_b32_e32 v5, v0
          0x7e0c0301,             // v_mov_b32_e32 v6, v1
          0x7e0e0302,             // v_mov_b32_e32 v7, v2
          0x7e10020c,             // v_mov_b32_e32 v8, s12
          0xbf8cc07f,             // s_waitcnt lgkmcnt(0)
          0xdc7c8000, 0x000a0504, // global_store_dwordx4 v4, v[5:8], s[10:11]
      },
      kRsrc2, kProps);
  const uint32_t grid[3] = {2, 3, 4}, block[3] = {4, 4, 4};
  // Each work-item writes (x, y, z, wg.x + 256 wg.y + 65536 wg.z) at
  // 16 * (x + 4y + 16z): every workgroup writes the same 1 KiB.
  std::vector<uint32_t> out(256);
  uint64_t outAddr = uint64_t(reinterpret_cast<uintptr_t>(out.data()));
  std::vector<uint64_t> kernarg = {outAddr};
  SimLaunch l = k.launch(grid, block);
  l.kernargAddr = uint64_t(reinterpret_cast<uintptr_t>(kernarg.data()));
  l.memory = MemoryMap(
      {Region{l.kernargAddr, l.kernargAddr + 8, false, "kernarg segment"},
       Region{outAddr, outAddr + 1024, true, "buffer"}});
  l.workers = 1; // workgroups in order: the last one's IDs remain
  ASSERT_TRUE(runLaunch(l).ok());
  for (uint32_t t = 0; t < 64; ++t) {
    EXPECT_EQ(out[4 * t + 0], t % 4) << t;
    EXPECT_EQ(out[4 * t + 1], t / 4 % 4) << t;
    EXPECT_EQ(out[4 * t + 2], t / 16) << t;
    EXPECT_EQ(out[4 * t + 3], 1u + 256 * 2 + 65536 * 3) << t; // (1, 2, 3)
  }
}

TEST(SimLaunch, BarrierSomeWavesSkipIsDivergence) {
  TestKernel k(
      {
          0x7e000500, // v_readfirstlane_b32 s0, v0
          0xbf068000, // s_cmp_eq_u32 s0, 0
          0xbf850001, // s_cbranch_scc1 1 (wave 0 skips the barrier)
          0xbf8a0000, // s_barrier
      },
      kRsrc2, kProps);
  const uint32_t grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  Status s = runLaunch(k.launch(grid, block));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::BarrierDivergence);
  EXPECT_EQ(s.message(), "barrier divergence in workgroup (0,0,0) of kernel "
                         "'k': waves [1] wait at s_barrier, waves [0] reached "
                         "s_endpgm");
}

TEST(SimLaunch, LdsRaces) {
  const uint32_t grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  // Every wave writes its own slot, then reads slot 0 (wave 0's lane 0).
  std::vector<uint32_t> body = {
      0x24020082,             // v_lshlrev_b32_e32 v1, 2, v0
      0xd81a0000, 0x00000001, // ds_write_b32 v1, v0
      0x7e020280,             // v_mov_b32_e32 v1, 0
  };
  std::vector<uint32_t> read = {0xd86c0000, 0x02000001}; // ds_read_b32 v2, v1
  std::vector<uint32_t> racy = body, ordered = body;
  racy.insert(racy.end(), read.begin(), read.end());
  ordered.push_back(0xbf8a0000); // s_barrier
  ordered.insert(ordered.end(), read.begin(), read.end());

  TestKernel bad(racy, kRsrc2, kProps, 512);
  SimLaunch l = bad.launch(grid, block);
  l.checks.races = true;
  Status s = runLaunch(l);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::RaceDetected);
  EXPECT_NE(s.message().find("wave 1 (ds_read_b32 at pc 0x10) reads lds byte "
                             "0 after wave 0 (pc 0x4) wrote it, with no "
                             "s_barrier between"),
            std::string::npos)
      << s.message();

  TestKernel good(ordered, kRsrc2, kProps, 512);
  l = good.launch(grid, block);
  l.checks.races = true;
  EXPECT_TRUE(runLaunch(l).ok());
  // Without the checker the racy kernel runs (and on a GPU would read
  // whatever wave 0 had written by then).
  l = bad.launch(grid, block);
  EXPECT_TRUE(runLaunch(l).ok());
}
