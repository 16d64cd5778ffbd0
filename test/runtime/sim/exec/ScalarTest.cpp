//===- ScalarTest.cpp - SALU and program control semantics ----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The scalar instructions against the Vega 7nm ISA's definitions: SCC as a
// carry, borrow or signed overflow where the ISA says so, the bitfield and
// shift-add forms, saveexec, the sign extension of s_cmpk's constant, and
// s_waitcnt's fields.
//
//===----------------------------------------------------------------------===//

#include "SimTest.h"

using namespace fa;
using namespace fa::sim;
using namespace fa::sim::test;

TEST(SimSalu, AddCarriesIntoScc) {
  WaveRun r({
      0x80020100, // s_add_u32 s2, s0, s1
      0x82030100, // s_addc_u32 s3, s0, s1
  });
  r.w.s[0] = 0xffffffff;
  r.w.s[1] = 2;
  ASSERT_TRUE(r.run().ok());
  // 0xffffffff + 2 = 0x1_00000001: D = 1, SCC = carry = 1.
  EXPECT_EQ(r.w.s[2], 1u);
  // s_addc: 0xffffffff + 2 + SCC(1) = 0x1_00000002.
  EXPECT_EQ(r.w.s[3], 2u);
  EXPECT_TRUE(r.w.scc);
}

TEST(SimSalu, SubBorrowsAndSignedOverflow) {
  WaveRun sub({0x80820100}); // s_sub_u32 s2, s0, s1
  sub.w.s[0] = 1;
  sub.w.s[1] = 2;
  ASSERT_TRUE(sub.run().ok());
  EXPECT_EQ(sub.w.s[2], 0xffffffffu);
  EXPECT_TRUE(sub.w.scc); // borrow: S1 > S0

  WaveRun add({0x81020100}); // s_add_i32 s2, s0, s1
  add.w.s[0] = 0x7fffffff;
  add.w.s[1] = 1;
  ASSERT_TRUE(add.run().ok());
  EXPECT_EQ(add.w.s[2], 0x80000000u);
  EXPECT_TRUE(add.w.scc); // signed overflow
}

TEST(SimSalu, ShiftAddAndBitfields) {
  WaveRun lshl({0x97020100}); // s_lshl1_add_u32 s2, s0, s1
  lshl.w.s[0] = 0x80000001;
  lshl.w.s[1] = 3;
  ASSERT_TRUE(lshl.run().ok());
  // (0x80000001 << 1) + 3 = 0x1_00000005: D = 5, SCC = it overflowed.
  EXPECT_EQ(lshl.w.s[2], 5u);
  EXPECT_TRUE(lshl.w.scc);

  WaveRun bfe({0x92820100}); // s_bfe_u32 s2, s0, s1
  bfe.w.s[0] = 0x12345678;
  bfe.w.s[1] = (8 << 16) | 4; // width 8 at bit 4
  ASSERT_TRUE(bfe.run().ok());
  EXPECT_EQ(bfe.w.s[2], 0x67u);

  WaveRun sbfe({0x93020100}); // s_bfe_i32 s2, s0, s1
  sbfe.w.s[0] = 0x12345f78;
  sbfe.w.s[1] = (4 << 16) | 8; // 0xf: sign bit set
  ASSERT_TRUE(sbfe.run().ok());
  EXPECT_EQ(sbfe.w.s[2], 0xffffffffu);
}

TEST(SimSalu, AndSaveexec) {
  WaveRun r({0xbe842006}); // s_and_saveexec_b64 s[4:5], s[6:7]
  r.w.setExec(0x00000000ffffffffull);
  r.w.setSgpr64(6, 0x0000ffff0000ffffull);
  ASSERT_TRUE(r.run().ok());
  // D = old EXEC; EXEC = S0 & EXEC; SCC = EXEC != 0.
  EXPECT_EQ(r.w.sgpr64(4), 0x00000000ffffffffull);
  EXPECT_EQ(r.w.exec(), 0x000000000000ffffull);
  EXPECT_TRUE(r.w.scc);
}

TEST(SimSalu, CompareAndSelect) {
  WaveRun r({
      0xbf0a0100, // s_cmp_lt_u32 s0, s1
      0x85020100, // s_cselect_b32 s2, s0, s1
  });
  r.w.s[0] = 3;
  r.w.s[1] = 0xfffffffe;
  ASSERT_TRUE(r.run().ok());
  EXPECT_TRUE(r.w.scc);
  EXPECT_EQ(r.w.s[2], 3u);

  // s_cmpk's constant: zero-extended for _u32, sign-extended for _i32.
  WaveRun u({0xb6008000}); // s_cmpk_lt_u32 s0, 0x8000
  u.w.s[0] = 0x7fff;
  ASSERT_TRUE(u.run().ok());
  EXPECT_TRUE(u.w.scc);    // 0x7fff < 0x8000
  WaveRun i({0xb3008000}); // s_cmpk_lt_i32 s0, 0x8000
  i.w.s[0] = 0x7fff;
  ASSERT_TRUE(i.run().ok());
  EXPECT_FALSE(i.w.scc); // 0x7fff < -32768 is false

  WaveRun m({0x83020100}); // s_min_i32 s2, s0, s1
  m.w.s[0] = 5;
  m.w.s[1] = uint32_t(-7);
  ASSERT_TRUE(m.run().ok());
  EXPECT_EQ(m.w.s[2], uint32_t(-7));
  EXPECT_FALSE(m.w.scc); // SCC = S0 < S1
}

TEST(SimSopp, WaitcntFields) {
  // s_waitcnt vmcnt(3) expcnt(2) lgkmcnt(1): simm16 bits 3:0 vmcnt, 6:4
  // expcnt, 11:8 lgkmcnt (vmcnt bits 5:4 in 15:14).
  WaveRun r({0xbf8c0123});
  const Instruction &in = r.program.insts[0];
  EXPECT_EQ(in.op, Op::S_WAITCNT);
  EXPECT_EQ(in.vmcnt, 3);
  EXPECT_EQ(in.expcnt, 2);
  EXPECT_EQ(in.lgkmcnt, 1);
  ASSERT_TRUE(r.run().ok());
}

TEST(SimSopp, BranchesAndBudget) {
  // s_cmp_eq_u32 s0, 0; s_cbranch_scc1 1 (skips the next word);
  // v_mov_b32 v1, 0 (skipped); s_endpgm.
  WaveRun r({0xbf068000, 0xbf850001, 0x7e020280});
  r.setV(1, 7);
  r.w.s[0] = 0;
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(1, 0), 7u);
  EXPECT_EQ(r.w.state, Wave::State::Ended);

  // s_branch -1 jumps to itself: the budget ends it with an error.
  WaveRun loop({0xbf82ffff});
  loop.checks.waveBudget = 1000;
  Status s = loop.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the wave exceeded its budget of 1000 "
                             "instructions"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("s_branch at pc 0x0"), std::string::npos)
      << s.message();
}

TEST(SimSopp, UnimplementedInstructionNamesItAndItsPc) {
  // v_rcp_f16 decodes but has no semantics in the engine.
  WaveRun r({0x7e020280, 0x7e027b00}); // v_mov_b32 v1, 0; v_rcp_f16 v1, v0
  Status s = r.run();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
  EXPECT_NE(s.message().find("instruction not implemented by gfx906-sim: "
                             "v_rcp_f16 at pc 0x4"),
            std::string::npos)
      << s.message();
}

// s_bfe_i64 / s_bfe_u64: S1[5:0] offset, S1[22:16] width; the field of the
// 64-bit S0, sign- or zero-extended; SCC = D != 0.
TEST(SimSalu, Bfe64) {
  auto run = [](uint32_t ctl, uint64_t expectI, uint64_t expectU) {
    WaveRun r({
        0x94040200, // s_bfe_i64 s[4:5], s[0:1], s2
        0x93860200, // s_bfe_u64 s[6:7], s[0:1], s2
    });
    r.w.setSgpr64(0, 0x80000000f0000000ull); // bits 28-31 and 63
    r.w.s[2] = ctl;
    ASSERT_TRUE(r.run().ok());
    EXPECT_EQ(r.w.sgpr64(4), expectI) << std::hex << ctl;
    EXPECT_EQ(r.w.sgpr64(6), expectU) << std::hex << ctl;
    EXPECT_EQ(r.w.scc, expectU != 0) << std::hex << ctl;
  };
  // Bits 28-35: 0x0f, its top bit (35) clear.
  run(28 | 8 << 16, 0x0f, 0x0f);
  // Bits 60-63: 0x8, its top bit set; offset 60 needs S1 bit 5.
  run(60 | 4 << 16, 0xfffffffffffffff8ull, 0x8);
  // Width 0: 0, SCC 0.
  run(60, 0, 0);
  // Bits 32-71: past bit 63 reads 0, so bit 39 of the field is clear.
  run(32 | 40 << 16, 0x80000000ull, 0x80000000ull);
  // Bits 28-63, a field wider than 32 bits whose top bit (63) is set.
  run(28 | 36 << 16, 0xfffffff80000000full, 0x000000080000000full);
}
