//===- VectorTest.cpp - VALU integer, carry and compare semantics ---------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The vector integer instructions against the ISA's definitions: carries
// through VCC and an SGPR pair, v_mad_u64_u32's 64-bit carry, v_perm_b32's
// byte selectors, 64-bit shifts, compares writing 0 for lanes outside EXEC,
// v_cndmask with a VOP3 neg, SDWA word selects, v_mbcnt_lo/hi (HIP's lane
// id and a lane's rank in a mask).
//
//===----------------------------------------------------------------------===//

#include "SimTest.h"

using namespace fa;
using namespace fa::sim;
using namespace fa::sim::test;

TEST(SimValu, AddCarryChain) {
  WaveRun r({
      0x32040300, // v_add_co_u32_e32 v2, vcc, v0, v1
      0x38060880, // v_addc_co_u32_e32 v3, vcc, 0, v4, vcc
  });
  // Odd lanes: 0xffffffff + 1 carries. Lanes >= 32: v4 = 0xffffffff, so
  // v_addc carries again where a carry comes in.
  r.setV(0, [](unsigned l) { return l & 1 ? 0xffffffffu : 10u; });
  r.setV(1, 1);
  r.setV(4, [](unsigned l) { return l >= 32 ? 0xffffffffu : 5u; });
  ASSERT_TRUE(r.run().ok());
  uint64_t expectVcc = 0;
  for (unsigned l = 0; l < 64; ++l) {
    uint32_t cin = l & 1;
    EXPECT_EQ(r.v(2, l), cin ? 0u : 11u) << "lane " << l;
    uint64_t sum = uint64_t(l >= 32 ? 0xffffffffu : 5u) + cin;
    EXPECT_EQ(r.v(3, l), uint32_t(sum)) << "lane " << l;
    expectVcc |= uint64_t(sum >> 32) << l;
  }
  EXPECT_EQ(r.w.vcc(), expectVcc);
  EXPECT_EQ(expectVcc, 0xaaaaaaaa00000000ull);
}

TEST(SimValu, SubBorrowIntoSgprPair) {
  WaveRun r({0xd11a0802, 0x00020300}); // v_sub_co_u32_e64 v2, s[8:9], v0, v1
  r.setV(0, [](unsigned l) { return l; });
  r.setV(1, 32);
  ASSERT_TRUE(r.run().ok());
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(r.v(2, l), uint32_t(l - 32));
  EXPECT_EQ(r.w.sgpr64(8), 0x00000000ffffffffull); // borrow where l < 32
}

TEST(SimValu, MadU64U32Carry) {
  WaveRun r({0xd1e80a02,
             0x04120300}); // v_mad_u64_u32 v[2:3], s[10:11], v0, v1, v[4:5]
  r.setV(0, [](unsigned l) { return l == 0 ? 0xffffffffu : l == 1 ? 3u : 0u; });
  r.setV(1, [](unsigned l) { return l == 0 ? 0xffffffffu : 5u; });
  r.setV(4, [](unsigned l) { return l == 0 ? 0xffffffffu : 7u; });
  r.setV(5, [](unsigned l) { return l == 0 ? 0xffffffffu : 0u; });
  ASSERT_TRUE(r.run().ok());
  // (2^32-1)^2 + (2^64-1) = 2^65 - 2^33: low 64 bits 0xfffffffe00000000,
  // carry out.
  EXPECT_EQ(r.v(2, 0), 0u);
  EXPECT_EQ(r.v(3, 0), 0xfffffffeu);
  EXPECT_EQ(r.v(2, 1), 22u); // 3 * 5 + 7
  EXPECT_EQ(r.v(3, 1), 0u);
  EXPECT_EQ(r.v(2, 2), 7u);
  EXPECT_EQ(r.w.sgpr64(10), 1u);
}

TEST(SimValu, PermBytes) {
  WaveRun r({0xd1ed0003, 0x040a0300}); // v_perm_b32 v3, v0, v1, v2
  r.setV(0, 0x11223344);               // S0: bytes 7..4
  r.setV(1, [](unsigned l) { return l & 1 ? 0x5566f788u : 0x55667788u; });
  r.setV(2, [](unsigned l) { return l & 1 ? 0x0d0a0900u : 0x0c080704u; });
  ASSERT_TRUE(r.run().ok());
  // Even: sel 4 -> S0 byte 0 (0x44), 7 -> S0 byte 3 (0x11), 8 -> sign of
  // byte 1 (0x77: 0x00), 12 -> 0x00.
  EXPECT_EQ(r.v(3, 0), 0x00001144u);
  // Odd: sel 0 -> S1 byte 0 (0x88), 9 -> sign of byte 3 (0x55: 0x00),
  // 10 -> sign of byte 5 (0x33: 0x00), 13 -> 0xff.
  EXPECT_EQ(r.v(3, 1), 0xff000088u);
}

TEST(SimValu, Shift64) {
  WaveRun r({0xd28f0002, 0x00020900}); // v_lshlrev_b64 v[2:3], v0, v[4:5]
  r.setV(0, [](unsigned l) { return l; });
  r.setV(4, 1);
  r.setV(5, 0);
  ASSERT_TRUE(r.run().ok());
  for (unsigned l = 0; l < 64; ++l) {
    uint64_t got = r.v(2, l) | uint64_t(r.v(3, l)) << 32;
    EXPECT_EQ(got, uint64_t(1) << l) << "lane " << l;
  }
}

TEST(SimValu, CompareClearsInactiveLanes) {
  WaveRun r({
      0x7d880300,             // v_cmp_gt_i32_e32 vcc, v0, v1
      0xd0c4000e, 0x00020300, // v_cmp_gt_i32_e64 s[14:15], v0, v1
  });
  r.w.setExec(0x00000000ffffffffull);
  r.w.setVcc(~uint64_t(0));
  r.w.setSgpr64(14, ~uint64_t(0));
  r.setV(0, [](unsigned l) { return l; });
  r.setV(1, 10);
  ASSERT_TRUE(r.run().ok());
  // True for 11 <= lane; lanes 32-63 are outside EXEC and get 0.
  EXPECT_EQ(r.w.vcc(), 0x00000000fffff800ull);
  EXPECT_EQ(r.w.sgpr64(14), 0x00000000fffff800ull);
}

TEST(SimValu, CndmaskWithNeg) {
  WaveRun r(
      {0xd1000003, 0x40320300}); // v_cndmask_b32_e64 v3, v0, -v1, s[12:13]
  r.setV(0, f32(1.0f));
  r.setV(1, f32(2.0f));
  r.w.setSgpr64(12, 0x5555555555555555ull);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), f32(-2.0f)); // mask bit set: -S1
  EXPECT_EQ(r.v(3, 1), f32(1.0f));  // clear: S0
}

TEST(SimValu, CndmaskWithAbs) {
  // VOP3 abs/neg apply to the selected source only.
  WaveRun r(
      {0xd1000303, 0x40320300}); // v_cndmask_b32_e64 v3, |v0|, -|v1|, s[12:13]
  r.setV(0, f32(-1.0f));
  r.setV(1, f32(-2.0f));
  r.w.setSgpr64(12, 0x5555555555555555ull);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), f32(-2.0f)); // mask bit set: -|S1|
  EXPECT_EQ(r.v(3, 1), f32(1.0f));  // clear: |S0|
}

TEST(SimValu, ExecMasksWrites) {
  WaveRun r({0x7e020280}); // v_mov_b32_e32 v1, 0
  r.setV(1, 9);
  r.w.setExec(0x8000000000000001ull);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(1, 0), 0u);
  EXPECT_EQ(r.v(1, 1), 9u);
  EXPECT_EQ(r.v(1, 63), 0u);
}

TEST(SimValu, SdwaWordSelect) {
  // v_mul_u32_u24_sdwa v1, v3, s10 dst_sel:DWORD dst_unused:UNUSED_PAD
  //   src0_sel:WORD_1 src1_sel:DWORD
  WaveRun r({0x100214f9, 0x86050603});
  r.setV(3, 0x00070011); // WORD_1 = 7
  r.w.s[10] = 6;
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(1, 0), 42u);
}

TEST(SimValu, VgprOutsideTheAllocationIsAnError) {
  WaveRun r({0x7e0a0300}, /*vgprs=*/4); // v_mov_b32_e32 v5, v0
  Status s = r.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("uses v5 but the kernel descriptor allocates 4 "
                             "VGPRs"),
            std::string::npos)
      << s.message();
}

// v_mbcnt_lo/hi_u32_b32 (the lane id of every HIP shuffle): D = the number
// of set bits of S0 among the lanes below this one (mask bits 31:0 for _lo,
// 63:32 for _hi) + S1. Expected counts worked out from the mask's bits.
TEST(SimValu, MbcntCountsMaskBitsBelowTheLane) {
  WaveRun r({
      0xd28c0002, 0x00020300, // v_mbcnt_lo_u32_b32 v2, v0, v1
      0xd28d0003, 0x00020300, // v_mbcnt_hi_u32_b32 v3, v0, v1
  });
  // S0 = 0xf0f0f0f0: bits 4-7, 12-15, 20-23, 28-31. S1 = 1000 + lane.
  r.setV(0, 0xf0f0f0f0u);
  r.setV(1, [](unsigned l) { return 1000 + l; });
  r.setV(2, 0xdeadbeefu);
  r.setV(3, 0xdeadbeefu);
  r.w.setExec(~((uint64_t(1) << 5) | (uint64_t(1) << 48)));
  ASSERT_TRUE(r.run().ok());
  // _lo: lane 0 has no lane below it; lane 4: bits 0-3, none set; lane 6:
  // bits 0-5, bit 4 and 5; lane 16: bits 0-15, 8 set; lane 31: bits 0-30,
  // 15 set; lanes 32 and up: all 32 bits, 16 set.
  EXPECT_EQ(r.v(2, 0), 1000u);
  EXPECT_EQ(r.v(2, 4), 1004u);
  EXPECT_EQ(r.v(2, 6), 1006u + 2);
  EXPECT_EQ(r.v(2, 16), 1016u + 8);
  EXPECT_EQ(r.v(2, 31), 1031u + 15);
  EXPECT_EQ(r.v(2, 32), 1032u + 16);
  EXPECT_EQ(r.v(2, 63), 1063u + 16);
  // _hi: the mask is lanes 32-63; lanes 0-32 have none of them below.
  // Lane 37: lanes 32-36 = mask bits 0-4, bit 4 set; lane 63: bits 0-30.
  EXPECT_EQ(r.v(3, 0), 1000u);
  EXPECT_EQ(r.v(3, 31), 1031u);
  EXPECT_EQ(r.v(3, 32), 1032u);
  EXPECT_EQ(r.v(3, 37), 1037u + 1);
  EXPECT_EQ(r.v(3, 47), 1047u + 7); // bits 0-14: 4-7 and 12-14
  EXPECT_EQ(r.v(3, 63), 1063u + 15);
  // Lanes outside EXEC keep their value.
  EXPECT_EQ(r.v(2, 5), 0xdeadbeefu);
  EXPECT_EQ(r.v(3, 48), 0xdeadbeefu);
}

// What clang emits for HIP's __lane_id() and for a lane's rank in a ballot:
// v_mbcnt_hi(mask.hi, v_mbcnt_lo(mask.lo, 0)).
TEST(SimValu, MbcntLaneIdAndRank) {
  WaveRun r({
      0xd28c0004, 0x000100c1, // v_mbcnt_lo_u32_b32 v4, -1, 0
      0xd28d0004, 0x000208c1, // v_mbcnt_hi_u32_b32 v4, -1, v4
      0xd28c0005, 0x00010004, // v_mbcnt_lo_u32_b32 v5, s4, 0
      0xd28d0005, 0x00020a05, // v_mbcnt_hi_u32_b32 v5, s5, v5
  });
  // The ballot {0, 31, 32, 33}.
  r.w.s[4] = 0x80000001u;
  r.w.s[5] = 0x00000003u;
  ASSERT_TRUE(r.run().ok());
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(r.v(4, l), l) << "lane " << l;
  EXPECT_EQ(r.v(5, 0), 0u);
  EXPECT_EQ(r.v(5, 1), 1u);
  EXPECT_EQ(r.v(5, 31), 1u);
  EXPECT_EQ(r.v(5, 32), 2u);
  EXPECT_EQ(r.v(5, 33), 3u);
  EXPECT_EQ(r.v(5, 34), 4u);
  EXPECT_EQ(r.v(5, 63), 4u);
}

// The integer dot products (v_dot4_i32_i8 is HIP's __dp4a, which ggml's
// quantized matrix products use): D = S2 + sum of S0[i] * S1[i] over the
// packed elements, modulo 2^32. Sums worked out by hand from the bytes.
TEST(SimValu, IntegerDotProducts) {
  WaveRun r({
      0xd3a84003, 0x1c0a0300, // v_dot4_i32_i8 v3, v0, v1, v2
      0xd3a94004, 0x1c0a0300, // v_dot4_u32_u8 v4, v0, v1, v2
      0xd3aa4005, 0x1c0a0300, // v_dot8_i32_i4 v5, v0, v1, v2
      0xd3ab4006, 0x1c0a0300, // v_dot8_u32_u4 v6, v0, v1, v2
      0xd3a64007, 0x1c0a0300, // v_dot2_i32_i16 v7, v0, v1, v2
      0xd3a74008, 0x1c0a0300, // v_dot2_u32_u16 v8, v0, v1, v2
  });
  // Lane 0: S0 bytes (low first) 127, 1, 0xff, 0x80; S1 bytes 5, 4, 3, 2.
  // Lane 1: 4 x 127 * 127 added to 0x7fffffff wraps.
  r.setV(0, [](unsigned l) { return l == 0 ? 0x80ff017fu : 0x7f7f7f7fu; });
  r.setV(1, [](unsigned l) { return l == 0 ? 0x02030405u : 0x7f7f7f7fu; });
  r.setV(2, [](unsigned l) { return l == 0 ? 1000u : 0x7fffffffu; });
  ASSERT_TRUE(r.run().ok());
  // 127*5 + 1*4 + (-1)*3 + (-128)*2 + 1000; unsigned: 255*3 + 128*2.
  EXPECT_EQ(r.v(3, 0), 1380u);
  EXPECT_EQ(r.v(4, 0), 2660u);
  // Nibbles of S0 (low first) f 7 1 0 f f 0 8, of S1 5 0 4 0 3 0 2 0:
  // signed -5 + 4 - 3, unsigned 75 + 4 + 45.
  EXPECT_EQ(r.v(5, 0), 996u);
  EXPECT_EQ(r.v(6, 0), 1124u);
  // Halves 0x017f = 383, 0x80ff = -32513 (33023), 0x0405 = 1029, 0x0203 =
  // 515: 383*1029 - 32513*515 + 1000 = -16349088; unsigned 17401952.
  EXPECT_EQ(r.v(7, 0), uint32_t(-16349088));
  EXPECT_EQ(r.v(8, 0), 17401952u);
  EXPECT_EQ(r.v(3, 1), 0x8000fc03u); // 0x7fffffff + 64516
}

TEST(SimValu, IntegerDotClampIsRefused) {
  WaveRun r({0xd3a8c003, 0x1c0a0300}); // v_dot4_i32_i8 v3, v0, v1, v2 clamp
  Status s = r.run();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::Unsupported);
  EXPECT_NE(s.message().find("v_dot4_i32_i8 at pc 0x0"), std::string::npos)
      << s.message();
}

// v_add_i16 / v_sub_i16 (VOP3): i16 results in bits 15:0 (31:16 zeroed),
// clamp saturating, op_sel choosing source halves and the result's half.
TEST(SimValu, AddSubI16) {
  WaveRun r({
      0xd29f0003, 0x00020300, // v_sub_i16 v3, v0, v1
      0xd29e8004, 0x00020300, // v_add_i16 v4, v0, v1 clamp
      0xd29f4805, 0x00020300, // v_sub_i16 v5, v0, v1 op_sel:[1,0,1]
  });
  // Lane 0: S0 = (hi -32768, lo 32767), S1 = (hi 1, lo -1). Lane 1: S0 =
  // (0, 32767), S1 = (0, 1).
  r.setV(0, [](unsigned l) { return l == 0 ? 0x80007fffu : 0x00007fffu; });
  r.setV(1, [](unsigned l) { return l == 0 ? 0x0001ffffu : 0x00000001u; });
  r.setV(5, 0x1234abcdu);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), 0x00008000u); // 32767 - (-1) wraps to -32768
  EXPECT_EQ(r.v(4, 0), 0x00007ffeu); // 32767 + (-1)
  EXPECT_EQ(r.v(4, 1), 0x00007fffu); // 32767 + 1 clamped
  EXPECT_EQ(r.v(5, 0), 0x8001abcdu); // hi: -32768 - (-1); lo kept
  EXPECT_EQ(r.v(5, 1), 0xffffabcdu); // hi: 0 - 1
}

// The VOP3P integer operations, per 16-bit half, with op_sel / op_sel_hi
// choosing which half of each source feeds each result half.
TEST(SimValu, PackedInt16) {
  WaveRun r({
      0xd3854003, 0x18020300, // v_pk_lshrrev_b16 v3, v0, v1
      0xd3834004, 0x18020300, // v_pk_sub_i16 v4, v0, v1
      0xd3874805, 0x10020300, // v_pk_max_i16 v5, v0, v1 op_sel:[1,0]
                              //   op_sel_hi:[0,1]
      0xd3894006, 0x1c0a0300, // v_pk_mad_u16 v6, v0, v1, v2
      0xd3864007, 0x18020300, // v_pk_ashrrev_i16 v7, v0, v1
      0xd3844008, 0x18020300, // v_pk_lshlrev_b16 v8, v0, v1
  });
  r.setV(0, 0x00038001u); // hi 3, lo 0x8001
  r.setV(1, 0xf0000010u); // hi 0xf000, lo 0x0010
  r.setV(2, 0x00020005u); // hi 2, lo 5
  ASSERT_TRUE(r.run().ok());
  // Shift amounts are S0's halves & 15: lo 1, hi 3.
  EXPECT_EQ(r.v(3, 0), 0x1e000008u); // 0xf000 >> 3, 0x0010 >> 1
  EXPECT_EQ(r.v(4, 0), 0x10037ff1u); // 3 - 0xf000, 0x8001 - 0x10
  // Low: max(S0.hi 3, S1.lo 16); high: max(S0.lo -32767, S1.hi -4096).
  EXPECT_EQ(r.v(5, 0), 0xf0000010u);
  EXPECT_EQ(r.v(6, 0), 0xd0020015u); // 3 * 0xf000 + 2, 0x8001 * 0x10 + 5
  EXPECT_EQ(r.v(7, 0), 0xfe000008u); // -4096 >> 3, 0x10 >> 1
  EXPECT_EQ(r.v(8, 0), 0x80000020u); // 0xf000 << 3, 0x10 << 1
}
