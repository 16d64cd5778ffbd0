//===- FloatTest.cpp - VALU floating-point semantics ----------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The floating-point instructions against the ISA's definitions:
// v_dot2_f32_f16 = S2 + f32(a.lo) * f32(b.lo) + f32(a.hi) * f32(b.hi) with
// one rounding, v_fma_mix* source selection and the half they keep, VOP3
// abs/neg/omod/clamp, v_cvt_f32_ubyte*, IEEE-mode v_max_f32 on NaNs,
// v_cvt_f16_f32 rounding to nearest even, v_exp_f32's model, and LLVM's f32
// division sequence (v_div_scale / v_div_fmas / v_div_fixup) giving the
// correctly rounded quotient and the IEEE special cases; v_cmp_class_f16/f32
// on each class, with abs/neg and the SDWA high-word form clang emits.
//
//===----------------------------------------------------------------------===//

#include "SimTest.h"

#include <cmath>
#include <limits>

using namespace fa;
using namespace fa::sim;
using namespace fa::sim::test;

TEST(SimFloat, Dot2F32F16) {
  WaveRun r({0xd3a34003, 0x1c0a0300}); // v_dot2_f32_f16 v3, v0, v1, v2
  // Lane 0: a = (lo 1.5, hi -2.0), b = (lo 4.0, hi 0.25), c = 10:
  //   10 + 1.5 * 4 + (-2) * 0.25 = 15.5.
  // Lane 1: a.lo = b.lo = 1 + 2^-10 (f16 0x3c01), hi 0, c = -1: the
  //   product 1 + 2^-9 + 2^-20 is exact, the sum 2^-9 + 2^-20 too
  //   (0x3b001000). Rounding each product to f16 first would lose 2^-20.
  r.setV(0, [](unsigned l) { return l == 0 ? 0xc0003e00u : 0x00003c01u; });
  r.setV(1, [](unsigned l) { return l == 0 ? 0x34004400u : 0x00003c01u; });
  r.setV(2, [](unsigned l) { return l == 0 ? f32(10.0f) : f32(-1.0f); });
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), f32(15.5f));
  EXPECT_EQ(r.v(3, 1), 0x3b001000u);
}

TEST(SimFloat, FmaMix) {
  WaveRun r({
      0xd3a00003, 0x1c0a0300, // v_fma_mix_f32 v3, v0, v1, v2 op_sel_hi:[1,1,0]
      0xd3a10804, 0x1c0a0300, // v_fma_mixlo_f16 v4, v0, v1, v2
                              //   op_sel:[1,0,0] op_sel_hi:[1,1,0]
      0xd3a20005, 0x1c0a0300, // v_fma_mixhi_f16 v5, v0, v1, v2
                              //   op_sel_hi:[1,1,0]
  });
  r.setV(0, 0xc0003e00); // hi -2.0, lo 1.5
  r.setV(1, 0x7c004400); // hi inf (never selected), lo 4.0
  r.setV(2, f32(0.5f));  // src2 is f32 (op_sel_hi bit 2 clear)
  r.setV(4, 0xabcd1234);
  r.setV(5, 0xabcd1234);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), f32(6.5f)); // 1.5 * 4 + 0.5
  // -2 * 4 + 0.5 = -7.5 = f16 0xc780 into bits 15:0, 31:16 kept.
  EXPECT_EQ(r.v(4, 0), 0xabcdc780u);
  // 6.5 = f16 0x4680 into bits 31:16, 15:0 kept.
  EXPECT_EQ(r.v(5, 0), 0x46801234u);
}

TEST(SimFloat, FmaMixAbs) {
  // The NEG_HI field of v_fma_mix* is abs: |src| before neg.
  WaveRun r({
      0xd3a00103, 0x1c0a0300, // v_fma_mix_f32 v3, |v0|, v1, v2
                              //   op_sel_hi:[1,1,0]
      0xd3a00604, 0x9c0a0300, // v_fma_mix_f32 v4, v0, |v1|, -|v2|
                              //   op_sel_hi:[1,1,0]
  });
  r.setV(0, 0x0000be00); // lo -1.5
  r.setV(1, 0x0000c400); // lo -4.0
  r.setV(2, f32(0.5f));
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), f32(-5.5f)); // |-1.5| * -4 + 0.5
  EXPECT_EQ(r.v(4, 0), f32(-6.5f)); // -1.5 * |-4| - |0.5|
}

TEST(SimFloat, CvtF32Ubyte) {
  // D.f32 = (float)S0[8n+7:8n]; clamp and omod apply to the float result.
  WaveRun r({
      0x7e022300,             // v_cvt_f32_ubyte0_e32 v1, v0
      0x7e042500,             // v_cvt_f32_ubyte1_e32 v2, v0
      0x7e062700,             // v_cvt_f32_ubyte2_e32 v3, v0
      0x7e082900,             // v_cvt_f32_ubyte3_e32 v4, v0
      0xd1510005, 0x08000100, // v_cvt_f32_ubyte0_e64 v5, v0 mul:2
      0xd1548006, 0x00000100, // v_cvt_f32_ubyte3_e64 v6, v0 clamp
  });
  r.setV(0, [](unsigned l) { return l == 0 ? 0xff80017fu : 0x00000000u; });
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(1, 0), f32(127.0f));
  EXPECT_EQ(r.v(2, 0), f32(1.0f));
  EXPECT_EQ(r.v(3, 0), f32(128.0f));
  EXPECT_EQ(r.v(4, 0), f32(255.0f)); // unsigned: 0xff is 255, not -1
  EXPECT_EQ(r.v(5, 0), f32(254.0f));
  EXPECT_EQ(r.v(6, 0), f32(1.0f));
  EXPECT_EQ(r.v(6, 1), f32(0.0f));
}

TEST(SimFloat, Vop3Modifiers) {
  WaveRun r({
      0xd1050103, 0x48020300, // v_mul_f32_e64 v3, |v0|, -v1 mul:2
      0xd1018004, 0x00020300, // v_add_f32_e64 v4, v0, v1 clamp
  });
  r.setV(0, [](unsigned l) { return f32(l == 0 ? -3.0f : 0.75f); });
  r.setV(1, [](unsigned l) { return f32(l == 0 ? 0.5f : 0.5f); });
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), f32(-3.0f)); // |−3| * −0.5 * 2
  EXPECT_EQ(r.v(4, 0), f32(0.0f));  // −2.5 clamped to 0
  EXPECT_EQ(r.v(4, 1), f32(1.0f));  // 1.25 clamped to 1
}

TEST(SimFloat, MaxIeeeNans) {
  WaveRun r({0x16060300}); // v_max_f32_e32 v3, v0, v1
  r.setV(0, [](unsigned l) { return l == 0 ? 0x7fc00000u : 0x7f800001u; });
  r.setV(1, f32(3.0f));
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), f32(3.0f));   // quiet NaN: the other operand
  EXPECT_EQ(r.v(3, 1), 0x7fc00001u); // signalling NaN: quieted (IEEE mode)
}

TEST(SimFloat, CvtF16RoundsToNearestEven) {
  WaveRun r({0x7e061500}); // v_cvt_f16_f32_e32 v3, v0
  r.setV(0, [](unsigned l) {
    switch (l) {
    case 0:
      return 0x3f801000u; // 1 + 2^-11: a tie, to even 1.0
    case 1:
      return 0x3f803000u; // 1 + 3 * 2^-11: a tie, to even 1 + 2^-9
    case 2:
      return f32(65520.0f); // rounds past the largest f16: inf
    default:
      return f32(-0.0f);
    }
  });
  r.setV(3, 0xffffffff);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), 0x3c00u);
  EXPECT_EQ(r.v(3, 1), 0x3c02u);
  EXPECT_EQ(r.v(3, 2), 0x7c00u);
  EXPECT_EQ(r.v(3, 3), 0x8000u); // bits 31:16 zeroed
}

TEST(SimFloat, ExpModel) {
  WaveRun r({0x7e064100}); // v_exp_f32_e32 v3, v0
  const float in[] = {3.0f, 0.5f, -150.0f,
                      -std::numeric_limits<float>::infinity(), 128.0f};
  r.setV(0, [&](unsigned l) { return f32(in[l % 5]); });
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), f32(8.0f));
  EXPECT_EQ(r.v(3, 1), 0x3fb504f3u); // sqrt(2) rounded to f32
  EXPECT_EQ(r.v(3, 2), 0u);          // 2^-150: denormal result flushed
  EXPECT_EQ(r.v(3, 3), 0u);
  EXPECT_EQ(r.v(3, 4), f32(std::numeric_limits<float>::infinity()));
}

TEST(SimFloat, DivisionSequence) {
  // LLVM's f32 division (as in fac's kernels), v0 / v1.
  WaveRun r({
      0xd1e00002, 0x04020301, // v_div_scale_f32 v2, s[0:1], v1, v1, v0
      0xd1e06a03, 0x04020300, // v_div_scale_f32 v3, vcc, v0, v1, v0
      0x7e084502,             // v_rcp_f32_e32 v4, v2
      0xd1cb0005, 0x23ca0902, // v_fma_f32 v5, -v2, v4, 1.0
      0x76080905,             // v_fmac_f32_e32 v4, v5, v4
      0x0a0a0903,             // v_mul_f32_e32 v5, v3, v4
      0xd1cb0006, 0x240e0b02, // v_fma_f32 v6, -v2, v5, v3
      0x760a0906,             // v_fmac_f32_e32 v5, v6, v4
      0xd1cb0002, 0x240e0b02, // v_fma_f32 v2, -v2, v5, v3
      0xd1e20002, 0x04160902, // v_div_fmas_f32 v2, v2, v4, v5
      0xd1de0002, 0x04020302, // v_div_fixup_f32 v2, v2, v1, v0
  });
  auto num = [](unsigned l) -> float {
    switch (l) {
    case 60:
      return 1e-40f; // denormal quotient: the numerator is scaled
    case 61:
      return 3e38f; // overflows to inf
    case 62:
      return 1.0f; // / 0
    case 63:
      return 0.0f; // 0 / 0
    default:
      return float(l + 1);
    }
  };
  auto den = [](unsigned l) -> float {
    return l == 61 ? 1e-3f : l >= 62 ? 0.0f : 3.0f;
  };
  r.setV(0, [&](unsigned l) { return f32(num(l)); });
  r.setV(1, [&](unsigned l) { return f32(den(l)); });
  ASSERT_TRUE(r.run().ok());
  for (unsigned l = 0; l < 62; ++l)
    EXPECT_EQ(r.v(2, l), f32(float(double(num(l)) / double(den(l)))))
        << "lane " << l << ": " << num(l) << " / " << den(l) << " gave "
        << asF32(r.v(2, l));
  EXPECT_EQ(r.v(2, 62), f32(std::numeric_limits<float>::infinity()));
  EXPECT_TRUE(std::isnan(asF32(r.v(2, 63))));
}

namespace {
/// One f16 of each class of v_cmp_class, in class order: signalling NaN,
/// quiet NaN, -inf, -normal, -denormal, -0, +0, +denormal, +normal, +inf.
constexpr uint16_t kF16OfClass[10] = {0x7c01, 0x7e00, 0xfc00, 0xbc00, 0x8001,
                                      0x8000, 0x0000, 0x03ff, 0x3c00, 0x7c00};
} // namespace

TEST(SimFloat, CmpClassF16) {
  WaveRun r({0x7c280300}); // v_cmp_class_f16_e32 vcc, v0, v1
  // Lanes 0-9: the value of class l (bits 31:16 an infinity, to be
  // ignored) tested for class l; lanes 10-19: for every other class.
  r.setV(0, [](unsigned l) {
    return 0x7c000000u | (l < 20 ? kF16OfClass[l % 10] : 0);
  });
  r.setV(1, [](unsigned l) {
    return l < 10 ? 1u << l : l < 20 ? 0x3ffu & ~(1u << (l - 10)) : 0u;
  });
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.w.vcc(), 0x3ffull);
}

TEST(SimFloat, CmpF16) {
  // The IEEE predicates on the low halves (bits 31:16 ignored): lane l
  // compares a[l] with b[l]; lanes 10 and up compare +0 with +0.
  // 0: 1 < 2; 1: 2 > 1; 2: 1 == 1; 3: NaN vs 1 (unordered); 4: -0 == +0;
  // 5: -inf < 65504; 6: the least denormal > +0; 7: 1.0 == 1.0 with
  // 0xffff above a; 8: -1 == -1; 9: 1 > -1.
  const uint32_t a[10] = {0x3c00, 0x4000, 0x3c00, 0x7e00, 0x8000,
                          0xfc00, 0x0001, 0xffff3c00, 0xbc00, 0x3c00};
  const uint32_t b[10] = {0x4000, 0x3c00, 0x3c00, 0x3c00, 0x0000,
                          0x7bff, 0x0000, 0x3c00, 0xbc00, 0xbc00};
  auto cmp = [&](std::vector<uint32_t> code) {
    WaveRun r(code);
    r.setV(0, [&](unsigned l) { return l < 10 ? a[l] : 0u; });
    r.setV(1, [&](unsigned l) { return l < 10 ? b[l] : 0u; });
    EXPECT_TRUE(r.run().ok());
    return code.size() == 1 ? r.w.vcc() : r.w.sgpr64(4);
  };
  const uint64_t rest = ~uint64_t(0) << 10;
  EXPECT_EQ(cmp({0x7c420300}), 0x021ull); // v_cmp_lt_f16: lanes 0, 5
  // v_cmp_eq_f16: 2, 4, 7, 8 and +0 == +0
  EXPECT_EQ(cmp({0x7c440300}), rest | 0x194ull);
  EXPECT_EQ(cmp({0x7c5c0300}), ~0x021ull);     // v_cmp_nlt_f16: not lt
  EXPECT_EQ(cmp({0x7c500300}), 0x008ull);      // v_cmp_u_f16: the NaN
  EXPECT_EQ(cmp({0x7c5a0300}), 0x26bull);      // v_cmp_neq_f16: 0 1 3 5 6 9
  EXPECT_EQ(cmp({0x7c4a0300}), 0x263ull);      // v_cmp_lg_f16: neq, ordered
  // v_cmp_eq_f16_e64 s[4:5], -v0, |v1|: -(-0) == |+0| (4), -(-1) == |-1|
  // (8), -0 == |+0| (10 and up); -1 == |1| at lane 2 is false.
  EXPECT_EQ(cmp({0xd0220204, 0x20020300}), rest | 0x110ull);
}

TEST(SimFloat, CmpClassModifiers) {
  // |x| of each class, tested for the NaN and positive classes: all true.
  // Lanes 10 and up: |-1| tested for -normal, false.
  WaveRun abs({0xd0140104, 0x00020300}); // v_cmp_class_f16_e64 s[4:5], |v0|, v1
  abs.setV(0, [](unsigned l) { return l < 10 ? kF16OfClass[l] : 0xbc00u; });
  abs.setV(1, [](unsigned l) { return l < 10 ? 0x3c3u : 0x008u; });
  ASSERT_TRUE(abs.run().ok());
  EXPECT_EQ(abs.w.sgpr64(4), 0x3ffull);

  // -x tested for -normal: only +1.0 (lane 8) of the ten classes; lanes 10
  // and up hold +1.0.
  WaveRun neg({0xd0140006, 0x20020300}); // v_cmp_class_f16_e64 s[6:7], -v0, v1
  neg.setV(0, [](unsigned l) { return l < 10 ? kF16OfClass[l] : 0x3c00u; });
  neg.setV(1, 0x008);
  ASSERT_TRUE(neg.run().ok());
  EXPECT_EQ(neg.w.sgpr64(6), (~uint64_t(0) << 10) | (1u << 8));

  // The f32 form with -|x|: 2.0 is -normal, -inf stays -inf, +0 becomes -0,
  // a quiet NaN stays one.
  WaveRun f32(
      {0xd0100104, 0x20020300}); // v_cmp_class_f32_e64 s[4:5], -|v0|, v1
  f32.setV(0, [](unsigned l) {
    return l == 0   ? 0x40000000u
           : l == 1 ? 0xff800000u
           : l == 2 ? 0u
                    : 0x7fc00000u;
  });
  f32.setV(1, [](unsigned l) {
    return l == 0 ? 0x8u : l == 1 ? 0x4u : l == 2 ? 0x20u : 0x2u;
  });
  ASSERT_TRUE(f32.run().ok());
  EXPECT_EQ(f32.w.sgpr64(4), ~uint64_t(0));
}

// The SDWA form clang emits for isinf/isnan of a half's high word:
// src0_sel WORD_1, an SGPR mask in src1 and an SGPR pair result.
TEST(SimFloat, CmpClassF16SdwaHighWord) {
  // v_cmp_class_f16_sdwa s[8:9], v0, s10 src0_sel:WORD_1 src1_sel:DWORD
  WaveRun r({0x7c2814f9, 0x86058800});
  r.setV(0, [](unsigned l) {
    return (l == 3 || l == 40 ? 0x7c00u : 0x3c00u) << 16 | 0x7c00u;
  });
  r.w.s[10] = 0x200; // +inf
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.w.sgpr64(8), (uint64_t(1) << 3) | (uint64_t(1) << 40));
}

// The 16-bit integer <-> f16 conversions: S0's low half; results in bits
// 15:0 with 31:16 zeroed; to f16 rounding to nearest even, from f16
// truncating toward zero and saturating, NaN giving 0.
TEST(SimFloat, CvtF16Int16) {
  WaveRun r({
      0x7e027300, // v_cvt_f16_u16_e32 v1, v0
      0x7e047500, // v_cvt_f16_i16_e32 v2, v0
      0x7e067700, // v_cvt_u16_f16_e32 v3, v0
      0x7e087900, // v_cvt_i16_f16_e32 v4, v0
  });
  static const uint32_t in[6] = {0xabcd0001, 0x00000801, 0x0000ffff,
                                 0x00008000, 0x00007bff, 0x00007e00};
  r.setV(0, [](unsigned l) { return l < 6 ? in[l] : 0u; });
  ASSERT_TRUE(r.run().ok());
  // u16 -> f16: 1; 2049 is a tie between 2048 and 2050, to even 2048;
  // 65535 is past 65520, +inf; 32768 = 2^15.
  EXPECT_EQ(r.v(1, 0), 0x3c00u);
  EXPECT_EQ(r.v(1, 1), 0x6800u);
  EXPECT_EQ(r.v(1, 2), 0x7c00u);
  EXPECT_EQ(r.v(1, 3), 0x7800u);
  // i16 -> f16: 0xffff is -1, 0x8000 is -32768.
  EXPECT_EQ(r.v(2, 2), 0xbc00u);
  EXPECT_EQ(r.v(2, 3), 0xf800u);
  // f16 -> u16 / i16: 0x0801 is 2^-13 * (1 + 2^-10) (0), 0xffff a NaN
  // (0), 0x7bff is 65504 (i16: 32767), 0x7e00 a NaN (0).
  EXPECT_EQ(r.v(3, 1), 0u);
  EXPECT_EQ(r.v(3, 2), 0u);
  EXPECT_EQ(r.v(3, 4), 65504u);
  EXPECT_EQ(r.v(3, 5), 0u);
  EXPECT_EQ(r.v(4, 4), 0x7fffu);
  EXPECT_EQ(r.v(4, 5), 0u);
}

TEST(SimFloat, CvtF16Int16Truncates) {
  WaveRun r({
      0x7e067700, // v_cvt_u16_f16_e32 v3, v0
      0x7e087900, // v_cvt_i16_f16_e32 v4, v0
  });
  // 1.5, -1.5, -1, +inf, -inf, 1000.5.
  static const uint32_t in[6] = {0x3e00, 0xbe00, 0xbc00,
                                 0x7c00, 0xfc00, 0x63d1};
  r.setV(0, [](unsigned l) { return l < 6 ? in[l] : 0u; });
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), 1u);
  EXPECT_EQ(r.v(3, 1), 0u); // negative: 0
  EXPECT_EQ(r.v(3, 3), 0xffffu);
  EXPECT_EQ(r.v(3, 5), 1000u);
  EXPECT_EQ(r.v(4, 0), 1u);
  EXPECT_EQ(r.v(4, 1), 0xffffu); // -1.5 toward zero: -1
  EXPECT_EQ(r.v(4, 2), 0xffffu);
  EXPECT_EQ(r.v(4, 3), 0x7fffu);
  EXPECT_EQ(r.v(4, 4), 0x8000u);
  EXPECT_EQ(r.v(4, 5), 1000u);
}
