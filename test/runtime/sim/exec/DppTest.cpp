//===- DppTest.cpp - DPP forms of VOP1/VOP2 instructions
//-------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The DPP (data-parallel primitives) forms against the rules of the Vega ISA's
// DPP_CTRL table (runtime/lib/sim/ExecDpp.cpp names the sources): every
// dpp_ctrl class on one wave with lane-distinct inputs, row_mask and
// bank_mask disabling lanes, bound_ctrl on and off at invalid source lanes,
// VOP2 forms where only src0 is permuted (with neg/abs), EXEC-masked lanes,
// the inclusive scan of row_shr:1,2,3,4,8 and row_bcast:15/31 (GPUOpen's
// "AMD GCN Assembly: Cross-Lane Operations"), a row_ror row reduction, and
// the forms gfx906-sim refuses. The expected source lane of each control is
// written here on its own, from the table, as a formula or a literal row.
//
// Words from `llvm-mc -arch=amdgcn -mcpu=gfx906 -show-encoding`; LLVM 22
// prints the assembler's bound_ctrl:0 as bound_ctrl:1 (both set the bit).
//
//===----------------------------------------------------------------------===//

#include "SimTest.h"

#include "fa/Half.h"

#include <algorithm>

using namespace fa;
using namespace fa::sim;
using namespace fa::sim::test;

namespace {

constexpr int kNone = -1; // an invalid source lane

uint32_t input(unsigned l) { return 1000 + 17 * l; }
uint32_t oldValue(unsigned l) { return 0xdead0000u + l; }

/// Lanes that row_mask / bank_mask enable, from the ISA's lane lists:
/// row r = lanes 16r..16r+15, bank b = lanes 4b..4b+3 of every row.
bool maskEnabled(unsigned l, unsigned rowMask, unsigned bankMask) {
  unsigned row = l / 16, bank = (l % 16) / 4;
  return ((rowMask >> row) & 1) && ((bankMask >> bank) & 1);
}

struct MovCase {
  const char *text;
  uint32_t w0, w1;
  int (*source)(unsigned lane); ///< kNone where the source is invalid
  bool boundCtrl;
  unsigned rowMask = 0xf, bankMask = 0xf;
};

/// v_mov_b32_dpp v1, v0 <ctrl>: v0 = input(lane), v1 = oldValue(lane)
/// before; each lane of v1 after is the source lane's input, 0 (bound_ctrl,
/// invalid source) or its old value (not written).
void checkMov(const MovCase &c, uint64_t exec = ~uint64_t(0)) {
  SCOPED_TRACE(c.text);
  WaveRun r({c.w0, c.w1});
  r.w.setExec(exec);
  r.setV(0, input);
  r.setV(1, oldValue);
  ASSERT_TRUE(r.run().ok()) << r.ctx.error.toString();
  for (unsigned l = 0; l < 64; ++l) {
    uint32_t want = oldValue(l);
    int from = c.source(l);
    bool active = (exec >> l) & 1;
    bool valid = from != kNone && ((exec >> from) & 1);
    if (active && maskEnabled(l, c.rowMask, c.bankMask)) {
      if (valid)
        want = input(unsigned(from));
      else if (c.boundCtrl)
        want = 0;
    }
    EXPECT_EQ(r.v(1, l), want) << "lane " << l;
    EXPECT_EQ(r.v(0, l), input(l)) << "src0 changed, lane " << l;
  }
}

} // namespace

TEST(SimDpp, QuadPerm) {
  // Lane 4q + j reads lane 4q + sel[j], sel[j] = ctrl bits 2j+1:2j.
  checkMov({"v_mov_b32_dpp v1, v0 quad_perm:[1,0,3,2] row_mask:0xf "
            "bank_mask:0xf",
            0x7e0202fa, 0xff00b100,
            [](unsigned l) {
              const int sel[4] = {1, 0, 3, 2};
              return int(l / 4 * 4) + sel[l % 4];
            },
            false});
  checkMov({"v_mov_b32_dpp v1, v0 quad_perm:[3,3,0,1] row_mask:0xf "
            "bank_mask:0xf",
            0x7e0202fa, 0xff004f00,
            [](unsigned l) {
              const int sel[4] = {3, 3, 0, 1};
              return int(l / 4 * 4) + sel[l % 4];
            },
            false});
}

TEST(SimDpp, RowShifts) {
  // row_shl:k: lane i of a row reads lane i + k of the row; the last k
  // lanes of each row have no source.
  checkMov({"v_mov_b32_dpp v1, v0 row_shl:1 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff010100,
            [](unsigned l) { return l % 16 + 1 < 16 ? int(l + 1) : kNone; },
            false});
  // row_shl:15: only lane 0 of each row reads (lane 15); bound_ctrl gives
  // the other lanes 0.
  checkMov({"v_mov_b32_dpp v1, v0 row_shl:15 row_mask:0xf bank_mask:0xf "
            "bound_ctrl:1",
            0x7e0202fa, 0xff090f00,
            [](unsigned l) { return l % 16 == 0 ? int(l + 15) : kNone; },
            true});
  // row_shr:k: lane i reads lane i - k of its row (data moves to higher
  // lanes, as in a prefix scan); the first k lanes have no source.
  auto shr3 = [](unsigned l) { return l % 16 >= 3 ? int(l - 3) : kNone; };
  checkMov({"v_mov_b32_dpp v1, v0 row_shr:3 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff011300, shr3, false});
  checkMov({"v_mov_b32_dpp v1, v0 row_shr:3 row_mask:0xf bank_mask:0xf "
            "bound_ctrl:1",
            0x7e0202fa, 0xff091300, shr3, true});
}

TEST(SimDpp, RowRotate) {
  // row_ror:k: lane i of a row reads lane (i - k) mod 16 of the row.
  checkMov({"v_mov_b32_dpp v1, v0 row_ror:1 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff012100,
            [](unsigned l) { return int(l / 16 * 16 + (l % 16 + 15) % 16); },
            false});
  // row_ror:5, as a literal row: the source of lanes 0..15 of each row.
  static const int kRor5[16] = {11, 12, 13, 14, 15, 0, 1, 2,
                                3,  4,  5,  6,  7,  8, 9, 10};
  checkMov({"v_mov_b32_dpp v1, v0 row_ror:5 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff012500,
            [](unsigned l) { return int(l / 16 * 16) + kRor5[l % 16]; },
            false});
  // row_ror:15 is a rotate left by one: lane i reads lane i + 1 (15: 0).
  checkMov({"v_mov_b32_dpp v1, v0 row_ror:15 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff012f00,
            [](unsigned l) { return int(l / 16 * 16 + (l % 16 + 1) % 16); },
            false});
}

TEST(SimDpp, WaveShiftsAndRotates) {
  auto shl = [](unsigned l) { return l < 63 ? int(l + 1) : kNone; };
  auto shr = [](unsigned l) { return l > 0 ? int(l - 1) : kNone; };
  checkMov({"v_mov_b32_dpp v1, v0 wave_shl:1 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff013000, shl, false});
  checkMov({"v_mov_b32_dpp v1, v0 wave_shl:1 row_mask:0xf bank_mask:0xf "
            "bound_ctrl:1",
            0x7e0202fa, 0xff093000, shl, true});
  checkMov({"v_mov_b32_dpp v1, v0 wave_rol:1 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff013400,
            [](unsigned l) { return l == 63 ? 0 : int(l + 1); }, false});
  checkMov({"v_mov_b32_dpp v1, v0 wave_shr:1 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff013800, shr, false});
  checkMov({"v_mov_b32_dpp v1, v0 wave_shr:1 row_mask:0xf bank_mask:0xf "
            "bound_ctrl:1",
            0x7e0202fa, 0xff093800, shr, true});
  checkMov({"v_mov_b32_dpp v1, v0 wave_ror:1 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff013c00,
            [](unsigned l) { return l == 0 ? 63 : int(l - 1); }, false});
}

TEST(SimDpp, Mirrors) {
  checkMov({"v_mov_b32_dpp v1, v0 row_mirror row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff014000,
            [](unsigned l) { return int(l / 16 * 16 + 15 - l % 16); }, false});
  checkMov({"v_mov_b32_dpp v1, v0 row_half_mirror row_mask:0xf "
            "bank_mask:0xf",
            0x7e0202fa, 0xff014100,
            [](unsigned l) { return int(l / 8 * 8 + 7 - l % 8); }, false});
}

TEST(SimDpp, RowBroadcasts) {
  // row_bcast:15: rows 1-3 read lane 15 of the row before; row 0 has no
  // source. With row_mask 0xa (its use in scans) rows 1 and 3 are written.
  auto b15 = [](unsigned l) { return l >= 16 ? int(l / 16 * 16 - 1) : kNone; };
  checkMov({"v_mov_b32_dpp v1, v0 row_bcast:15 row_mask:0xa bank_mask:0xf",
            0x7e0202fa, 0xaf014200, b15, false, 0xa});
  checkMov({"v_mov_b32_dpp v1, v0 row_bcast:15 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff014200, b15, false});
  checkMov({"v_mov_b32_dpp v1, v0 row_bcast:15 row_mask:0xf bank_mask:0xf "
            "bound_ctrl:1",
            0x7e0202fa, 0xff094200, b15, true});
  // row_bcast:31: rows 2 and 3 read lane 31; rows 0 and 1 have no source.
  auto b31 = [](unsigned l) { return l >= 32 ? 31 : kNone; };
  checkMov({"v_mov_b32_dpp v1, v0 row_bcast:31 row_mask:0xc bank_mask:0xf",
            0x7e0202fa, 0xcf014300, b31, false, 0xc});
  checkMov({"v_mov_b32_dpp v1, v0 row_bcast:31 row_mask:0xf bank_mask:0xf "
            "bound_ctrl:1",
            0x7e0202fa, 0xff094300, b31, true});
}

TEST(SimDpp, RowAndBankMasks) {
  // The identity permutation, rows 0 and 2, banks 1 and 2 (lanes 4-11 of a
  // row) written: lanes 4-11 and 36-43.
  checkMov({"v_mov_b32_dpp v1, v0 quad_perm:[0,1,2,3] row_mask:0x5 "
            "bank_mask:0x6",
            0x7e0202fa, 0x5600e400, [](unsigned l) { return int(l); }, false,
            0x5, 0x6});
  // The masks select the lanes written, not the lanes read: row 0's lanes
  // of banks 1 and 3 (4-7, 12-15) read lanes 0-3 and 8-11 of row 0, whose
  // bank is disabled.
  checkMov({"v_mov_b32_dpp v1, v0 row_ror:4 row_mask:0x9 bank_mask:0xa "
            "bound_ctrl:1",
            0x7e0202fa, 0x9a092400,
            [](unsigned l) { return int(l / 16 * 16 + (l % 16 + 12) % 16); },
            true, 0x9, 0xa});
  // Spelled out for row 0 and row 1 (disabled):
  WaveRun r({0x7e0202fa, 0x9a092400});
  r.setV(0, input);
  r.setV(1, oldValue);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(1, 4), input(0));
  EXPECT_EQ(r.v(1, 12), input(8));
  EXPECT_EQ(r.v(1, 0), oldValue(0));
  EXPECT_EQ(r.v(1, 20), oldValue(20));
  EXPECT_EQ(r.v(1, 52), input(48));
}

TEST(SimDpp, ExecMaskedLanes) {
  // Lanes outside EXEC are never written; an active lane whose source lane
  // is outside EXEC has an invalid source (bound_ctrl: 0, else not
  // written).
  const uint64_t exec = 0x0ff0f00f3c3cc3c3ull;
  auto shr1 = [](unsigned l) { return l % 16 >= 1 ? int(l - 1) : kNone; };
  checkMov({"v_mov_b32_dpp v1, v0 row_shr:1 row_mask:0xf bank_mask:0xf",
            0x7e0202fa, 0xff011100, shr1, false},
           exec);
  checkMov({"v_mov_b32_dpp v1, v0 row_shr:3 row_mask:0xf bank_mask:0xf "
            "bound_ctrl:1",
            0x7e0202fa, 0xff091300,
            [](unsigned l) { return l % 16 >= 3 ? int(l - 3) : kNone; }, true},
           exec);
  checkMov({"v_mov_b32_dpp v1, v0 quad_perm:[1,0,3,2] row_mask:0xf "
            "bank_mask:0xf",
            0x7e0202fa, 0xff00b100,
            [](unsigned l) {
              const int sel[4] = {1, 0, 3, 2};
              return int(l / 4 * 4) + sel[l % 4];
            },
            false},
           exec);
  // Two lanes by hand: EXEC lanes 0, 1 set, 2 clear, 6, 7 set (0xc3).
  // Lane 1 reads lane 0 (active); lane 6 reads lane 5 (inactive): with
  // bound_ctrl 0 it is not written; lane 2 is inactive, never written.
  WaveRun r({0x7e0202fa, 0xff011100}); // row_shr:1
  r.w.setExec(exec);
  r.setV(0, input);
  r.setV(1, oldValue);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(1, 1), input(0));
  EXPECT_EQ(r.v(1, 6), oldValue(6));
  EXPECT_EQ(r.v(1, 7), input(6));
  EXPECT_EQ(r.v(1, 2), oldValue(2));
  EXPECT_EQ(r.v(1, 0), oldValue(0)); // row start, no bound_ctrl
}

TEST(SimDpp, SourceIsDestination) {
  // v_mov_b32_dpp v0, v0 row_shr:1: every lane reads v0 as it was before.
  WaveRun r({0x7e0002fa, 0xff011100});
  r.setV(0, input);
  ASSERT_TRUE(r.run().ok());
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(r.v(0, l), l % 16 ? input(l - 1) : input(l)) << "lane " << l;
}

TEST(SimDpp, Vop2PermutesSrc0Only) {
  auto a = [](unsigned l) { return float(l + 1); };
  auto b = [](unsigned l) { return 100.0f * float(l); };
  {
    // v_add_f32_dpp v2, v0, v1 row_shr:1: lane i (i > 0 in its row) adds
    // v0 of lane i - 1 to its own v1; lane 0 of each row is not written.
    WaveRun r({0x020402fa, 0xff011100});
    r.setV(0, [&](unsigned l) { return f32(a(l)); });
    r.setV(1, [&](unsigned l) { return f32(b(l)); });
    r.setV(2, oldValue);
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l)
      EXPECT_EQ(r.v(2, l), l % 16 ? f32(a(l - 1) + b(l)) : oldValue(l))
          << "lane " << l;
  }
  {
    // The same with bound_ctrl: lane 0 of each row adds 0 to its v1.
    WaveRun r({0x020402fa, 0xff091100});
    r.setV(0, [&](unsigned l) { return f32(a(l)); });
    r.setV(1, [&](unsigned l) { return f32(b(l)); });
    r.setV(2, oldValue);
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l)
      EXPECT_EQ(r.v(2, l), f32((l % 16 ? a(l - 1) : 0.0f) + b(l)))
          << "lane " << l;
  }
  {
    // v_add_f32_dpp v2, -v0, |v1| row_ror:2 bound_ctrl:1: the modifiers act
    // on the permuted src0 and the unpermuted src1.
    WaveRun r({0x020402fa, 0xff992200});
    r.setV(0, [&](unsigned l) { return f32(a(l)); });
    r.setV(1, [&](unsigned l) { return f32(-b(l)); });
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l) {
      unsigned from = l / 16 * 16 + (l % 16 + 14) % 16;
      EXPECT_EQ(r.v(2, l), f32(-a(from) + b(l))) << "lane " << l;
    }
  }
  {
    // v_add_u32_dpp v2, v0, v1 wave_shr:1: lane 0 is not written.
    WaveRun r({0x680402fa, 0xff013800});
    r.setV(0, input);
    r.setV(1, [](unsigned l) { return 5u * l; });
    r.setV(2, oldValue);
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l)
      EXPECT_EQ(r.v(2, l), l ? input(l - 1) + 5u * l : oldValue(0))
          << "lane " << l;
  }
  {
    // v_sub_u32_dpp v2, v0, v1 quad_perm:[2,3,0,1]: the permuted src0 is
    // the minuend.
    WaveRun r({0x6a0402fa, 0xff004e00});
    r.setV(0, input);
    r.setV(1, [](unsigned l) { return l; });
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l)
      EXPECT_EQ(r.v(2, l), input(l ^ 2) - l) << "lane " << l;
  }
  {
    // v_mac_f32_dpp v2, v0, v1 row_mirror: v2 += v0[mirror] * v1.
    WaveRun r({0x2c0402fa, 0xff014000});
    r.setV(0, [&](unsigned l) { return f32(a(l)); });
    r.setV(1, f32(2.0f));
    r.setV(2, [](unsigned l) { return f32(float(l) * 0.5f); });
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l) {
      unsigned from = l / 16 * 16 + 15 - l % 16;
      EXPECT_EQ(r.v(2, l), f32(a(from) * 2.0f + float(l) * 0.5f))
          << "lane " << l;
    }
  }
  {
    // v_cndmask_b32_dpp v2, v0, v1, vcc row_ror:8: VCC set -> v1 (not
    // permuted), clear -> v0 of lane i ^ 8 of the row.
    WaveRun r({0x000402fa, 0xff012800});
    r.setV(0, input);
    r.setV(1, oldValue);
    r.w.setVcc(0xf0f0f0f00ff00ff0ull);
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l)
      EXPECT_EQ(r.v(2, l),
                (0xf0f0f0f00ff00ff0ull >> l) & 1 ? oldValue(l) : input(l ^ 8))
          << "lane " << l;
  }
  {
    // v_add_f16_dpp v2, v0, v1 row_shl:2 bound_ctrl:1: lane i adds the f16
    // of lane i + 2; the last two lanes of each row add 0.
    WaveRun r({0x3e0402fa, 0xff090200});
    r.setV(0, [](unsigned l) { return uint32_t(floatToHalf(float(l))); });
    r.setV(1, [](unsigned l) { return uint32_t(floatToHalf(0.25f * l)); });
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l) {
      float s0 = l % 16 < 14 ? float(l + 2) : 0.0f;
      EXPECT_EQ(r.v(2, l) & 0xffff, floatToHalf(s0 + 0.25f * l))
          << "lane " << l;
    }
  }
}

TEST(SimDpp, InclusiveScan) {
  // The wave-wide inclusive prefix sum from GPUOpen's "AMD GCN Assembly:
  // Cross-Lane Operations" (there in f32): row_shr:1, 2, 3 with bound_ctrl
  // sum the last four lanes, row_shr:4 and row_shr:8 with banks masked
  // complete each row, row_bcast:15 (rows 1, 3) and row_bcast:31 (rows 2,
  // 3) carry the rows over. s_nop 1: a DPP read of a VGPR the previous VALU
  // instruction wrote needs two wait states.
  WaveRun r({
      0x680200fa, 0xff091100, // v_add_u32_dpp v1, v0, v0 row_shr:1 row_mask:0xf
                              // bank_mask:0xf bound_ctrl:1
      0x680202fa, 0xff091200, // v_add_u32_dpp v1, v0, v1 row_shr:2 row_mask:0xf
                              // bank_mask:0xf bound_ctrl:1
      0x680202fa, 0xff091300, // v_add_u32_dpp v1, v0, v1 row_shr:3 row_mask:0xf
                              // bank_mask:0xf bound_ctrl:1
      0xbf800001,             // s_nop 1
      0x680202fa, 0xfe011401, // v_add_u32_dpp v1, v1, v1 row_shr:4 row_mask:0xf
                              // bank_mask:0xe
      0xbf800001,             // s_nop 1
      0x680202fa, 0xfc011801, // v_add_u32_dpp v1, v1, v1 row_shr:8 row_mask:0xf
                              // bank_mask:0xc
      0xbf800001,             // s_nop 1
      0x680202fa, 0xaf014201, // v_add_u32_dpp v1, v1, v1 row_bcast:15
                              // row_mask:0xa bank_mask:0xf
      0xbf800001,             // s_nop 1
      0x680202fa, 0xcf014301, // v_add_u32_dpp v1, v1, v1 row_bcast:31
                              // row_mask:0xc bank_mask:0xf
  });
  auto x = [](unsigned l) { return (l * l * 7 + 3) % 1000; };
  r.setV(0, x);
  r.setV(1, 0xffffffffu);
  ASSERT_TRUE(r.run().ok());
  uint32_t sum = 0;
  for (unsigned l = 0; l < 64; ++l) {
    sum += x(l);
    EXPECT_EQ(r.v(1, l), sum) << "lane " << l;
  }
}

TEST(SimDpp, RowReductions) {
  {
    // max over each row through row_ror:8, 4, 2, 1: every lane of a row
    // ends with the row's maximum.
    WaveRun r({
        0x160200fa, 0xff012800, // v_max_f32_dpp v1, v0, v0 row_ror:8
                                // row_mask:0xf bank_mask:0xf
        0xbf800001,             // s_nop 1
        0x160202fa, 0xff012401, // v_max_f32_dpp v1, v1, v1 row_ror:4
                                // row_mask:0xf bank_mask:0xf
        0xbf800001,             // s_nop 1
        0x160202fa, 0xff012201, // v_max_f32_dpp v1, v1, v1 row_ror:2
                                // row_mask:0xf bank_mask:0xf
        0xbf800001,             // s_nop 1
        0x160202fa, 0xff012101, // v_max_f32_dpp v1, v1, v1 row_ror:1
                                // row_mask:0xf bank_mask:0xf
    });
    auto x = [](unsigned l) { return float((l * 37 + 11) % 64) - 20.0f; };
    r.setV(0, [&](unsigned l) { return f32(x(l)); });
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l) {
      float m = x(l / 16 * 16);
      for (unsigned j = 1; j < 16; ++j)
        m = std::max(m, x(l / 16 * 16 + j));
      EXPECT_EQ(r.v(1, l), f32(m)) << "lane " << l;
    }
  }
  {
    // The compiler's form (llvm.amdgcn.update.dpp, then the op): a
    // v_mov_b32_dpp row_ror:8 and a plain v_add_f32.
    WaveRun r({
        0x7e0202fa,
        0xff012800, // v_mov_b32_dpp v1, v0 row_ror:8 row_mask:0xf bank_mask:0xf
        0x02020300, // v_add_f32_e32 v1, v0, v1
    });
    r.setV(0, [](unsigned l) { return f32(float(l)); });
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l)
      EXPECT_EQ(r.v(1, l), f32(float(l) + float(l ^ 8))) << "lane " << l;
  }
}

TEST(SimDpp, ScalarResultFormsAreRefused) {
  // How row_mask / bank_mask / bound_ctrl act on a carry-out is not
  // documented: an error naming the instruction, not a guess.
  for (uint32_t w0 : {
           0x320402fau, // v_add_co_u32_dpp v2, vcc, v0, v1 row_shr:1
                        // row_mask:0xf bank_mask:0xf
           0x380402fau, // v_addc_co_u32_dpp v2, vcc, v0, v1, vcc row_shr:1
                        // row_mask:0xf bank_mask:0xf
       }) {
    WaveRun r({w0, 0xff011100});
    Status s = r.run();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), ErrorCode::Unsupported);
    EXPECT_NE(s.message().find("DPP form of an instruction with a VCC/SGPR "
                               "result is not implemented"),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("_co_u32 at pc 0x0"), std::string::npos)
        << s.message();
  }
  // VOPC with DPP: LLVM has none for GFX9; the decoder refuses it and the
  // wave fails if it reaches it (v_cmp_eq_u32 vcc, v0, v1 with src0 = 250).
  WaveRun r({0x7d9402fa, 0xff00b100});
  Status s = r.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("VOPC with DPP is not supported"),
            std::string::npos)
      << s.message();
}
