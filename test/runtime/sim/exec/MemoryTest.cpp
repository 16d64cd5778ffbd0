//===- MemoryTest.cpp - LDS, global and scratch semantics, memcheck -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The memory instructions against the ISA's definitions (ds_read2/write2
// offsets in element units, st64 in units of 64 elements, d16 halves,
// ds_swizzle_b32's bit-mask and quad-permute lane maps, ds_bpermute_b32 /
// ds_permute_b32 (HIP's shuffles: inactive lanes, collisions), global
// addressing with and without saddr, MUBUF scratch), and the checks around
// them: an access outside every region, a store to the kernarg segment, LDS out
// of range, and s_waitcnt hazards.
//
//===----------------------------------------------------------------------===//

#include "SimTest.h"

using namespace fa;
using namespace fa::sim;
using namespace fa::sim::test;

TEST(SimDs, Read2Write2Offsets) {
  WaveRun r({
      0xd81c0301, 0x00020100, // ds_write2_b32 v0, v1, v2 offset0:1 offset1:3
      0xd86e0301, 0x04000000, // ds_read2_b32 v[4:5], v0 offset0:1 offset1:3
      0xd8ee0200, 0x06000000, // ds_read2_b64 v[6:9], v0 offset1:2
      0xd81e0100, 0x00020100, // ds_write2st64_b32 v0, v1, v2 offset1:1
  });
  r.w.setExec(0xffffull); // lanes 0-15: 16 bytes each in the first 256
  r.setV(0, [](unsigned l) { return l * 16; });
  r.setV(1, [](unsigned l) { return 0x100 + l; });
  r.setV(2, [](unsigned l) { return 0x200 + l; });
  ASSERT_TRUE(r.run().ok()) << r.ctx.error.message();
  for (unsigned l = 0; l < 16; ++l) {
    uint32_t at4, at12, st64First, st64Second;
    std::memcpy(&at4, &r.lds[l * 16 + 4], 4);          // offset0 1 * 4 bytes
    std::memcpy(&at12, &r.lds[l * 16 + 12], 4);        // offset1 3 * 4 bytes
    std::memcpy(&st64First, &r.lds[l * 16], 4);        // st64: offset0 0
    std::memcpy(&st64Second, &r.lds[l * 16 + 256], 4); // 1 * 64 * 4 bytes
    EXPECT_EQ(at4, 0x100 + l);
    EXPECT_EQ(at12, 0x200 + l);
    EXPECT_EQ(st64First, 0x100 + l);
    EXPECT_EQ(st64Second, 0x200 + l);
    EXPECT_EQ(r.v(4, l), 0x100 + l);
    EXPECT_EQ(r.v(5, l), 0x200 + l);
    // read2_b64 offset1:2 reads bytes 16..23 past the address: the next
    // lane's first 8 bytes (0 then its 0x100 + l + 1 at +4).
    EXPECT_EQ(r.v(6, l), 0u);
    EXPECT_EQ(r.v(7, l), 0x100 + l);
    EXPECT_EQ(r.v(9, l), l < 15 ? 0x100 + l + 1 : 0u);
  }
}

TEST(SimDs, D16Halves) {
  WaveRun r({
      0xd83e0002, 0x00000100, // ds_write_b16 v0, v1 offset:2
      0xd8aa0006, 0x00000100, // ds_write_b16_d16_hi v0, v1 offset:6
      0xd8b60002, 0x03000000, // ds_read_u16_d16_hi v3, v0 offset:2
  });
  r.w.setExec(1);
  r.setV(0, 0);
  r.setV(1, 0xbeef1234);
  r.setV(3, 0x00005678);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.lds[2] | r.lds[3] << 8, 0x1234);
  EXPECT_EQ(r.lds[6] | r.lds[7] << 8, 0xbeef);
  EXPECT_EQ(r.v(3, 0), 0x12345678u); // high half loaded, low half kept
}

TEST(SimDs, SwizzleModes) {
  WaveRun r({
      0xd87a401f, 0x01000000, // ds_swizzle_b32 v1, v0 offset:swizzle(SWAP,16)
      0xd87a801b, 0x02000000, // ds_swizzle_b32 v2, v0
                              //   offset:swizzle(QUAD_PERM,3,2,1,0)
      0xd87a0064, 0x03000000, // ds_swizzle_b32 v3, v0
                              //   offset:swizzle(BITMASK_PERM,"00p11")
  });
  r.setV(0, [](unsigned l) { return 1000 + l; });
  ASSERT_TRUE(r.run().ok());
  for (unsigned l = 0; l < 64; ++l) {
    // Bit-mask mode, offset 0x401f: and 0x1f, or 0, xor 0x10, per 32 lanes.
    EXPECT_EQ(r.v(1, l), 1000 + ((l & 32) | ((l & 31) ^ 16))) << l;
    // Quad-permute 0x801b: lane i of a quad reads lane (0x1b >> 2i) & 3.
    EXPECT_EQ(r.v(2, l), 1000 + ((l & ~3u) | ((0x1bu >> (2 * (l & 3))) & 3)))
        << l;
    // Offset 0x0064: and_mask 4, or_mask 3, xor_mask 0.
    EXPECT_EQ(r.v(3, l), 1000 + ((l & 32) | (((l & 31) & 4) | 3))) << l;
  }
}

TEST(SimDs, OutOfRangeIsAnError) {
  WaveRun r({0xd81afffc, 0x00000001}, 32,
            /*ldsBytes=*/1024); // ds_write_b32 v1, v0 offset:65532
  r.setV(1, 0);
  Status s = r.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("out-of-bounds lds access: lane 0 writes 4 bytes "
                             "at lds address 65532, outside the 1024 bytes of "
                             "lds: ds_write_b32 at pc 0x0"),
            std::string::npos)
      << s.message();
}

namespace {
void setAddress(WaveRun &r, unsigned reg, const void *base, unsigned stride) {
  uint64_t a = uint64_t(reinterpret_cast<uintptr_t>(base));
  r.setV(reg, [=](unsigned l) { return uint32_t(a + l * stride); });
  r.setV(reg + 1, [=](unsigned l) { return uint32_t((a + l * stride) >> 32); });
}
} // namespace

TEST(SimGlobal, LoadStoreWithAndWithoutSaddr) {
  std::vector<uint32_t> buf(64), out(64, 0);
  for (unsigned i = 0; i < 64; ++i)
    buf[i] = 0x5000 + i;
  WaveRun r({
      0xdc509ffc, 0x01020000, // global_load_dword v1, v0, s[2:3] offset:-4
      0xbf8c0f70,             // s_waitcnt vmcnt(0)
      0xdc708000, 0x007f0102, // global_store_dword v[2:3], v1, off
  });
  r.addRegion(buf.data(), buf.size() * 4, false);
  r.addRegion(out.data(), out.size() * 4);
  // saddr form: s[2:3] + zext(v0) + offset; the -4 cancels the +4 below.
  r.w.setSgpr64(2, uint64_t(reinterpret_cast<uintptr_t>(buf.data())) + 4);
  r.setV(0, [](unsigned l) { return 4 * l; });
  setAddress(r, 2, out.data(), 4);
  ASSERT_TRUE(r.run().ok()) << r.ctx.error.message();
  EXPECT_EQ(out, buf);
}

TEST(SimGlobal, OutOfBoundsNamesLaneAndAddress) {
  std::vector<uint32_t> buf(8);
  WaveRun r({0xdc508000, 0x017f0002}); // global_load_dword v1, v[2:3], off
  r.addRegion(buf.data(), buf.size() * 4);
  setAddress(r, 2, buf.data(), 4);
  r.w.setExec(0x3ff); // lanes 0-9: lanes 8 and 9 read past the end
  Status s = r.run();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::LaunchFailed);
  EXPECT_NE(s.message().find("out-of-bounds global access: lane 8 reads 4 "
                             "bytes at "),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("offset 32 of the 32-byte buffer"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("global_load_dword at pc 0x0 (wave 0"),
            std::string::npos)
      << s.message();
}

TEST(SimGlobal, StoreToTheKernargSegmentIsAnError) {
  std::vector<uint32_t> kernarg(4);
  WaveRun r({0xdc708000, 0x007f0102}); // global_store_dword v[2:3], v1, off
  r.addRegion(kernarg.data(), 16, /*writable=*/false, "kernarg segment");
  setAddress(r, 2, kernarg.data(), 0);
  r.w.setExec(1);
  Status s = r.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("write to the read-only kernarg segment: lane 0"),
            std::string::npos)
      << s.message();
}

// Global atomics (HIP's atomicAdd, atomicCAS, atomicMax, atomicInc...):
// the old value returned with glc, lanes on one address applied in lane
// order (gfx906-sim's choice; the ISA leaves the order open).
TEST(SimGlobal, AtomicAddFromEveryLane) {
  std::vector<uint32_t> mem(4, 0);
  mem[0] = 100;
  WaveRun r({0xdd098000, 0x037f0200, // global_atomic_add v3, v[0:1], v2, off
                                     //   glc
             0xbf8c0f70});           // s_waitcnt vmcnt(0)
  r.addRegion(mem.data(), mem.size() * 4);
  setAddress(r, 0, mem.data(), 0);
  r.setV(2, 1);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(mem[0], 164u);
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(r.v(3, l), 100 + l) << l;
}

TEST(SimGlobal, AtomicOperations) {
  WaveRun r({
      0xdd058000, 0x037f0400, // global_atomic_cmpswap v3, v[0:1], v[4:5], off
                              //   glc
      0xdd058000, 0x0c7f0f00, // global_atomic_cmpswap v12, v[0:1], v[15:16],
                              //   off glc
      0xdd118000, 0x0b7f0e00, // global_atomic_smin v11, v[0:1], v14, off glc
      0xdd1d8004, 0x087f0200, // global_atomic_umax v8, v[0:1], v2, off
                              //   offset:4 glc
      0xdd2d8008, 0x097f0d00, // global_atomic_inc v9, v[0:1], v13, off
                              //   offset:8 glc
      0xdd31800c, 0x0a7f0200, // global_atomic_dec v10, v[0:1], v2, off
                              //   offset:12 glc
      0xdd898010, 0x067f0400, // global_atomic_add_x2 v[6:7], v[0:1], v[4:5],
                              //   off offset:16 glc
      0xdd080018, 0x00000200, // flat_atomic_add v[0:1], v2 offset:24
      0xbf8c0f70,             // s_waitcnt vmcnt(0)
  });
  std::vector<uint32_t> mem = {100, 5, 3, 0, 0xffffffff, 0, 10, 0};
  r.addRegion(mem.data(), mem.size() * 4);
  r.w.setExec(1);
  setAddress(r, 0, mem.data(), 0);
  r.setV(2, 9);
  r.setV(4, 7); // cmpswap: src 7, cmp 100; add_x2: 100 << 32 | 7
  r.setV(5, 100);
  r.setV(13, 3);
  r.setV(14, 0xfffffffe); // -2
  r.setV(15, 1);          // cmpswap: src 1, cmp 2 (no match)
  r.setV(16, 2);
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(3, 0), 100u); // cmpswap: 100 == cmp, 7 written
  EXPECT_EQ(r.v(12, 0), 7u);  // 7 != 2: unchanged
  EXPECT_EQ(r.v(11, 0), 7u);  // smin(7, -2) = -2
  EXPECT_EQ(mem[0], 0xfffffffeu);
  EXPECT_EQ(r.v(8, 0), 5u); // umax(5, 9)
  EXPECT_EQ(mem[1], 9u);
  EXPECT_EQ(r.v(9, 0), 3u); // inc: 3 >= 3 wraps to 0
  EXPECT_EQ(mem[2], 0u);
  EXPECT_EQ(r.v(10, 0), 0u); // dec: 0 wraps to 9
  EXPECT_EQ(mem[3], 9u);
  EXPECT_EQ(r.v(6, 0), 0xffffffffu); // add_x2: old 0x00000000ffffffff
  EXPECT_EQ(r.v(7, 0), 0u);
  EXPECT_EQ(mem[4], 6u); // + 0x64_00000007 = 0x65_00000006
  EXPECT_EQ(mem[5], 0x65u);
  EXPECT_EQ(mem[6], 19u); // flat_atomic_add, no return
  EXPECT_EQ(r.v(0, 0), uint32_t(uintptr_t(mem.data()))); // v0 not written
}

TEST(SimGlobal, MisalignedAtomicIsAnError) {
  std::vector<uint32_t> mem(4, 0);
  WaveRun r({0xdd098000, 0x037f0200}); // global_atomic_add v3, v[0:1], v2,
                                       //   off glc
  r.addRegion(mem.data(), mem.size() * 4);
  r.w.setExec(1);
  setAddress(r, 0, reinterpret_cast<uint8_t *>(mem.data()) + 2, 0);
  Status s = r.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("misaligned atomic: lane 0"), std::string::npos)
      << s.message();
}

TEST(SimScratch, MubufPrivateSegment) {
  WaveRun r({
      0xe0700004, 0x80000100, // buffer_store_dword v1, off, s[0:3], 0 offset:4
      0xe0500004, 0x80000200, // buffer_load_dword v2, off, s[0:3], 0 offset:4
      0xbf8c0f70,             // s_waitcnt vmcnt(0)
      0xe0501000, 0x80000200, // buffer_load_dword v2, v0, s[0:3], 0 offen
  });
  std::vector<uint8_t> scratch(64 * 8);
  r.ctx.scratch = scratch.data();
  r.ctx.scratchPerLane = 8;
  r.setV(1, [](unsigned l) { return 0x700 + l; });
  r.setV(0, [](unsigned l) { return l == 5 ? 8u : 4u; }); // lane 5: past 8
  Status s = r.run();
  // Each lane has its own 8 bytes: the first load reads back the store.
  for (unsigned l = 0; l < 64; ++l) {
    uint32_t x;
    std::memcpy(&x, &scratch[l * 8 + 4], 4);
    EXPECT_EQ(x, 0x700 + l);
  }
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("out-of-bounds scratch access: lane 5 reads 4 "
                             "bytes at private offset 8, outside the lane's 8 "
                             "bytes: buffer_load_dword at pc 0x14"),
            std::string::npos)
      << s.message();
}

// FLAT addresses in the apertures that src_private_base / src_shared_base
// give (the 64-bit values; a 32-bit read is their low dword) reach the
// lane's private segment and LDS: what clang emits for a generic pointer to
// a local array or a __shared__ variable. The bases are gfx906-sim's choice
// (amdkfd's for GFX9, sim/Exec.h); the offsets are the ISA's.
TEST(SimFlat, PrivateAndSharedApertures) {
  WaveRun r({
      0xbe8601ed,             // s_mov_b64 s[6:7], src_private_base
      0xbe8801eb,             // s_mov_b64 s[8:9], src_shared_base
      0xbe8a00ed,             // s_mov_b32 s10, src_private_base
      0xe0700008, 0x80000100, // buffer_store_dword v1, off, s[0:3], 0 offset:8
      0x7e060207,             // v_mov_b32_e32 v3, s7
      0x7e040288,             // v_mov_b32_e32 v2, 8
      0xdc500000, 0x04000002, // flat_load_dword v4, v[2:3]
      0x7e160209,             // v_mov_b32_e32 v11, s9
      0xdc500000, 0x0500000a, // flat_load_dword v5, v[10:11]
      0xdc700100, 0x0000060a, // flat_store_dword v[10:11], v6 offset:256
      0xbf8c0070,             // s_waitcnt vmcnt(0) lgkmcnt(0)
  });
  std::vector<uint8_t> scratch(64 * 16);
  r.ctx.scratch = scratch.data();
  r.ctx.scratchPerLane = 16;
  r.setV(1, [](unsigned l) { return 0x700 + l; });
  r.setV(6, [](unsigned l) { return 0x600 + l; });
  r.setV(10, [](unsigned l) { return 4 * l; }); // LDS byte address 4l
  for (unsigned l = 0; l < 64; ++l) {
    uint32_t x = 0x500 + l;
    std::memcpy(&r.lds[4 * l], &x, 4);
  }
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.w.sgpr64(6), 0x0002000000000000ull);
  EXPECT_EQ(r.w.sgpr64(8), 0x0001000000000000ull);
  EXPECT_EQ(r.w.s[10], 0u);
  for (unsigned l = 0; l < 64; ++l) {
    // Private offset 8 of each lane: what the lane stored there.
    EXPECT_EQ(r.v(4, l), 0x700 + l) << l;
    // LDS byte 4l, and the store to byte 256 + 4l.
    EXPECT_EQ(r.v(5, l), 0x500 + l) << l;
    uint32_t x;
    std::memcpy(&x, &r.lds[256 + 4 * l], 4);
    EXPECT_EQ(x, 0x600 + l) << l;
  }
}

// MUBUF byte and short accesses of the private segment: stores of the
// low byte / short, loads zero- or sign-extending.
TEST(SimScratch, MubufBytesAndShorts) {
  WaveRun r({
      0xe0600005, 0x80000100, // buffer_store_byte v1, off, s[0:3], 0 offset:5
      0xe068000a, 0x80000100, // buffer_store_short v1, off, s[0:3], 0
                              //   offset:10
      0xe0400005, 0x80000200, // buffer_load_ubyte v2, off, s[0:3], 0 offset:5
      0xe0440005, 0x80000300, // buffer_load_sbyte v3, off, s[0:3], 0 offset:5
      0xe048000a, 0x80000400, // buffer_load_ushort v4, off, s[0:3], 0
                              //   offset:10
      0xe04c000a, 0x80000500, // buffer_load_sshort v5, off, s[0:3], 0
                              //   offset:10
      0xbf8c0f70,             // s_waitcnt vmcnt(0)
  });
  std::vector<uint8_t> scratch(64 * 16);
  r.ctx.scratch = scratch.data();
  r.ctx.scratchPerLane = 16;
  r.setV(1, [](unsigned l) { return l == 1 ? 0x12340070u : 0x123480f0u; });
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(scratch[5], 0xf0);
  EXPECT_EQ(scratch[10] | scratch[11] << 8, 0x80f0);
  EXPECT_EQ(scratch[9], 0); // the byte store wrote one byte
  EXPECT_EQ(scratch[12], 0);
  EXPECT_EQ(scratch[16 + 5], 0x70);
  EXPECT_EQ(r.v(2, 0), 0xf0u);
  EXPECT_EQ(r.v(3, 0), 0xfffffff0u);
  EXPECT_EQ(r.v(4, 0), 0x80f0u);
  EXPECT_EQ(r.v(5, 0), 0xffff80f0u);
  EXPECT_EQ(r.v(3, 1), 0x70u);
  EXPECT_EQ(r.v(5, 1), 0x70u);
}

TEST(SimWaitcnt, ReadBeforeTheWaitIsAHazard) {
  std::vector<uint32_t> buf(128, 3);
  auto make = [&](std::vector<uint32_t> words) {
    auto r = std::make_unique<WaveRun>(std::move(words));
    r->addRegion(buf.data(), buf.size() * 4);
    setAddress(*r, 2, buf.data(), 4);
    return r;
  };
  // global_load_dword v1; v_add_u32 v5, v1, v1 with no wait.
  auto early = make({0xdc508000, 0x017f0002, 0x680a0301});
  Status s = early->run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("s_waitcnt hazard: reads v1 while the load at pc "
                             "0x0 that writes it is outstanding (no s_waitcnt "
                             "vmcnt covers it"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("v_add_u32 at pc 0x8"), std::string::npos);

  // Two loads, s_waitcnt vmcnt(1): the first is covered, the second not.
  auto partial = make({
      0xdc508000, 0x017f0002, // global_load_dword v1, v[2:3], off
      0xdc508004, 0x047f0002, // global_load_dword v4, v[2:3], off offset:4
      0xbf8c0f71,             // s_waitcnt vmcnt(1)
      0x680a0301,             // v_add_u32_e32 v5, v1, v1
      0x680a0904,             // v_add_u32_e32 v5, v4, v4
  });
  s = partial->run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("reads v4 while the load at pc 0x8"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("v_add_u32 at pc 0x18"), std::string::npos)
      << s.message();

  auto waited = make({0xdc508000, 0x017f0002, 0xbf8c0f70, 0x680a0301});
  ASSERT_TRUE(waited->run().ok()) << waited->ctx.error.message();
  EXPECT_EQ(waited->v(5, 0), 6u);

  // A second load into the same register returns after the first (vmcnt
  // is in order): no hazard. A VALU write before the wait is one: the load
  // would land on top of it.
  auto twice = make(
      {0xdc508000, 0x017f0002, 0xdc508000, 0x017f0002, 0xbf8c0f70, 0x680a0301});
  EXPECT_TRUE(twice->run().ok()) << twice->ctx.error.message();
  auto clobber = make({0xdc508000, 0x017f0002, 0x7e020280}); // v_mov v1, 0
  s = clobber->run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("s_waitcnt hazard: overwrites v1 while the load "
                             "at pc 0x0"),
            std::string::npos)
      << s.message();
}

TEST(SimSmem, LoadWaitAndBounds) {
  std::vector<uint32_t> kernarg = {11, 22, 33, 44};
  auto make = [&](std::vector<uint32_t> words) {
    auto r = std::make_unique<WaveRun>(std::move(words));
    r->addRegion(kernarg.data(), 16, false, "kernarg segment");
    r->w.setSgpr64(4, uint64_t(reinterpret_cast<uintptr_t>(kernarg.data())));
    return r;
  };
  // s_load_dword s6, s[4:5], 0x8; s_waitcnt lgkmcnt(0); v_mov_b32 v1, s6.
  auto ok = make({0xc0020182, 0x00000008, 0xbf8cc07f, 0x7e020206});
  ASSERT_TRUE(ok->run().ok()) << ok->ctx.error.message();
  EXPECT_EQ(ok->w.s[6], 33u);
  EXPECT_EQ(ok->v(1, 0), 33u);
  // Scalar loads return out of order: only a wait for lgkmcnt(0) covers
  // them, so reading s6 before it is a hazard.
  auto early = make({0xc0020182, 0x00000008, 0x7e020206});
  Status s = early->run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("s_waitcnt hazard: reads s6 while the load at pc "
                             "0x0"),
            std::string::npos)
      << s.message();
  // 16 bytes from offset 8 run past the 16-byte segment.
  auto far =
      make({0xc00a0202, 0x00000008}); // s_load_dwordx4 s[8:11], s[4:5], 0x8
  s = far->run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("out-of-bounds scalar load: 16 bytes at address"),
            std::string::npos)
      << s.message();
}

// ds_bpermute_b32 (HIP's __shfl*): lane l reads data0 of lane
// ((addr[l] + offset) / 4) mod 64, 0 where that lane is inactive; lanes
// outside EXEC are not written. The ISA's pseudocode, worked by hand.
TEST(SimDs, BpermuteReadsTheAddressedLane) {
  auto run = [](uint32_t offsetWord, unsigned shift) {
    WaveRun r({
        0xd87e0000 | offsetWord, 0x02000100, // ds_bpermute_b32 v2, v0, v1
        0xbf8cc07f,                          // s_waitcnt lgkmcnt(0)
    });
    // Lane l addresses lane l ^ 1; bits above the lane index (0x1000 in
    // lanes 32 and up) are ignored.
    r.setV(0, [](unsigned l) { return (l ^ 1) * 4 + (l >= 32 ? 0x1000 : 0); });
    r.setV(1, [](unsigned l) { return 100 + l; });
    r.setV(2, 0xdeadbeefu);
    r.w.setExec(~(uint64_t(1) << 6));
    ASSERT_TRUE(r.run().ok());
    for (unsigned l = 0; l < 64; ++l) {
      unsigned from = ((l ^ 1) + shift) & 63;
      uint32_t want = l == 6 ? 0xdeadbeefu : from == 6 ? 0u : 100 + from;
      EXPECT_EQ(r.v(2, l), want) << "lane " << l << " shift " << shift;
    }
  };
  run(0, 0);
  run(8, 2); // offset:8 = two lanes further
}

// ds_permute_b32: lane l writes its data0 to lane ((addr[l] + offset) / 4)
// mod 64, the highest writing lane winning; a lane nobody writes gets 0; an
// inactive lane writes nothing and is not written.
TEST(SimDs, PermuteWritesTheAddressedLane) {
  WaveRun r({0xd87c0004, 0x02000100, // ds_permute_b32 v2, v0, v1 offset:4
             0xbf8cc07f});           // s_waitcnt lgkmcnt(0)
  // Lane l sends to lane l + 1 (offset:4), lanes 10 and 11 to lane 5 (which
  // lane 4 also sends to).
  r.setV(0, [](unsigned l) { return l == 10 || l == 11 ? 16u : l * 4; });
  r.setV(1, [](unsigned l) { return 100 + l; });
  r.setV(2, 0xdeadbeefu);
  r.w.setExec(~(uint64_t(1) << 40));
  ASSERT_TRUE(r.run().ok());
  EXPECT_EQ(r.v(2, 0), 163u); // from lane 63, wrapping
  EXPECT_EQ(r.v(2, 1), 100u);
  EXPECT_EQ(r.v(2, 5), 111u); // lanes 4, 10, 11: the highest wins
  EXPECT_EQ(r.v(2, 11), 0u);  // lane 10 sent elsewhere
  EXPECT_EQ(r.v(2, 12), 0u);  // so did lane 11
  EXPECT_EQ(r.v(2, 13), 112u);
  EXPECT_EQ(r.v(2, 40), 0xdeadbeefu); // inactive: not written
  EXPECT_EQ(r.v(2, 41), 0u);          // lane 40 is inactive: sends nothing
  EXPECT_EQ(r.v(2, 42), 141u);
}
