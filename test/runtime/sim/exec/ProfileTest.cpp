//===- ProfileTest.cpp - The gfx906-sim execution profile -----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The execution profile (sim/Profile.h) of a hand-assembled snippet with a
// known number of instructions of each class, global bytes and DS accesses
// whose bank-conflict degrees are worked out by hand from
// docs/bank-conflicts.md's model (32 banks of 4 bytes; phases of 32 lanes
// for b32, 16 for b64, 8 for b128; the degree is the largest number of
// distinct dwords one bank serves in a phase); and the occupancy formula.
//
//===----------------------------------------------------------------------===//

#include "sim/Profile.h"
#include "SimTest.h"

using namespace fa;
using namespace fa::sim;
using namespace fa::sim::test;

namespace {

unsigned classCount(const SimProfile &p, ProfileClass c) {
  return unsigned(p.classes[unsigned(c)]);
}

const SimProfile::Conflicts *conflictsOf(const SimProfile &p,
                                         const std::string &mnemonic) {
  for (const SimProfile::Conflicts &k : p.conflicts)
    if (k.mnemonic == mnemonic)
      return &k;
  return nullptr;
}

} // namespace

TEST(SimProfile, CountsClassesBytesConflictsAndTheLoop) {
  // Words from llvm-mc -arch=amdgcn -mcpu=gfx906 -show-encoding.
  WaveRun r(
      {
          0xbe800080, // s_mov_b32 s0, 0
          0x80018100, // s_add_u32 s1, s0, 1
          0xd86c0000,
          0x02000000, // ds_read_b32 v2, v0
          0xd86c0000,
          0x04000003, // ds_read_b32 v4, v3
          0xd9fe0000,
          0x0800000c, // ds_read_b128 v[8:11], v12
          0xd81c2000,
          0x00070603, // ds_write2_b32 v3, v6, v7 offset1:32
          0xd87a401f,
          0x0d000003, // ds_swizzle_b32 v13, v3 offset:swizzle(SWAP,16)
          0xbf8cc07f, // s_waitcnt lgkmcnt(0)
          0xd3a34014,
          0x1c522d15, // v_dot2_f32_f16 v20, v21, v22, v20
          0xd38f4017,
          0x18022d15, // v_pk_add_f16 v23, v21, v22
          0x7e304115, // v_exp_f32_e32 v24, v21
          0x02322d15, // v_add_f32_e32 v25, v21, v22
          0xdc508000,
          0x1e7f001f, // global_load_dword v30, v[31:32], off
          0xdc748000,
          0x007f211f, // global_store_dwordx2 v[31:32], v[33:34], off
          0xbf8c0f70, // s_waitcnt vmcnt(0)
          0xbefe0183, // s_mov_b64 exec, 3
          0xd86c0000,
          0x05000000, // ds_read_b32 v5, v0
          0xbefe01c1, // s_mov_b64 exec, -1
          0xbf8cc07f, // s_waitcnt lgkmcnt(0)
          0xbe820083, // s_mov_b32 s2, 3
          0x80828102, // loop: s_sub_u32 s2, s2, 1
          0xbf078002, // s_cmp_lg_u32 s2, 0
          0xbf85fffd, // s_cbranch_scc1 loop
          0xbf8a0000, // s_barrier
      },
      40, 16384);
  // v0: one lane per 32-word row (every lane in bank 0); v3: contiguous
  // words; v12: a b128 per 64 bytes.
  r.setV(0, [](unsigned l) { return l * 128; });
  r.setV(3, [](unsigned l) { return l * 4; });
  r.setV(12, [](unsigned l) { return l * 64; });
  std::vector<uint64_t> buffer(64, 0);
  r.addRegion(buffer.data(), buffer.size() * 8);
  uint64_t base = uint64_t(reinterpret_cast<uintptr_t>(buffer.data()));
  r.setV(31, [&](unsigned l) { return uint32_t(base + 8 * l); });
  r.setV(32, [&](unsigned l) { return uint32_t((base + 8 * l) >> 32); });

  ProfileCounters counters;
  counters.reset(r.program.insts.size());
  counters.waves = 1;
  r.ctx.profile = &counters;
  ASSERT_TRUE(r.run().ok()) << r.ctx.error.toString();
  ASSERT_EQ(r.w.state, Wave::State::AtBarrier);
  r.w.state = Wave::State::Running;
  ASSERT_TRUE(r.run().ok()) << r.ctx.error.toString();
  ASSERT_EQ(r.w.state, Wave::State::Ended);

  SimProfile p = summarizeProfile(r.program, counters);
  EXPECT_EQ(p.waves, 1u);
  EXPECT_EQ(p.instructions, 31u);
  EXPECT_EQ(p.instructions, r.w.executed);
  EXPECT_EQ(classCount(p, ProfileClass::ValuDot2), 1u);
  EXPECT_EQ(classCount(p, ProfileClass::ValuPk), 1u);
  EXPECT_EQ(classCount(p, ProfileClass::ValuExp), 1u);
  EXPECT_EQ(classCount(p, ProfileClass::ValuOther), 1u);
  EXPECT_EQ(classCount(p, ProfileClass::Salu), 5u + 3 * 2);
  EXPECT_EQ(classCount(p, ProfileClass::Branch), 3u);
  EXPECT_EQ(classCount(p, ProfileClass::Barrier), 1u);
  EXPECT_EQ(classCount(p, ProfileClass::Waitcnt), 3u);
  EXPECT_EQ(classCount(p, ProfileClass::SoppOther), 1u); // s_endpgm
  EXPECT_EQ(classCount(p, ProfileClass::Smem), 0u);
  EXPECT_EQ(classCount(p, ProfileClass::LdsRead), 4u);
  EXPECT_EQ(classCount(p, ProfileClass::LdsWrite), 1u);
  EXPECT_EQ(classCount(p, ProfileClass::LdsSwizzle), 1u);
  EXPECT_EQ(classCount(p, ProfileClass::GlobalLoad), 1u);
  EXPECT_EQ(classCount(p, ProfileClass::GlobalStore), 1u);
  EXPECT_EQ(p.globalBytesRead, 64u * 4);
  EXPECT_EQ(p.globalBytesWritten, 64u * 8);

  // ds_read_b32: v0 (lane * 128 bytes): each 32-lane phase puts 32
  // distinct dwords in bank 0, degree 32; v3 (lane * 4): one dword per bank,
  // 1; v0 with EXEC = lanes 0 and 1: dwords 0 and 32, both bank 0, 2
  // (inactive lanes do not count).
  const SimProfile::Conflicts *b32 = conflictsOf(p, "ds_read_b32");
  ASSERT_NE(b32, nullptr);
  EXPECT_EQ(b32->executed, 3u);
  EXPECT_EQ(b32->histogram[1], 1u);
  EXPECT_EQ(b32->histogram[2], 1u);
  EXPECT_EQ(b32->histogram[32], 1u);
  // ds_read_b128 at lane * 64 bytes: a phase of 8 lanes, lane l's dwords
  // 16l .. 16l+3; the even lanes hit banks 0-3, the odd ones 16-19: four
  // distinct dwords per bank, degree 4.
  const SimProfile::Conflicts *b128 = conflictsOf(p, "ds_read_b128");
  ASSERT_NE(b128, nullptr);
  EXPECT_EQ(b128->histogram[4], 1u);
  // ds_write2_b32 at lane * 4 and lane * 4 + 128 (offset1:32 dwords): 8
  // bytes per lane, phases of 16 lanes; dwords l and l + 32 share bank l,
  // degree 2.
  const SimProfile::Conflicts *w2 = conflictsOf(p, "ds_write2_b32");
  ASSERT_NE(w2, nullptr);
  EXPECT_EQ(w2->histogram[2], 1u);
  // ds_swizzle_b32 touches no bank.
  EXPECT_EQ(conflictsOf(p, "ds_swizzle_b32"), nullptr);

  // The backward branch: three iterations of s_sub, s_cmp, s_cbranch.
  ASSERT_TRUE(p.haveLoop);
  EXPECT_EQ(p.loopBranchPc, p.loopHeadPc + 8);
  EXPECT_EQ(p.loopIterations, 3u);
  EXPECT_EQ(p.loopClasses[unsigned(ProfileClass::Salu)], 6u);
  EXPECT_EQ(p.loopClasses[unsigned(ProfileClass::Branch)], 3u);
  // The loops list: the one backward branch, taken twice; its head ran 3
  // times (one entry, two back edges), the iterations.
  ASSERT_EQ(p.loops.size(), 1u);
  const SimProfile::Loop &l = p.loops[0];
  EXPECT_EQ(l.headPc, p.loopHeadPc);
  EXPECT_EQ(l.branchPc, p.loopBranchPc);
  EXPECT_EQ(l.iterations, 3u);
  EXPECT_EQ(l.branchExecutions, 3u);
  EXPECT_EQ(l.taken, 2u);
  EXPECT_EQ(l.classes[unsigned(ProfileClass::Salu)], 6u);
  EXPECT_EQ(l.classes[unsigned(ProfileClass::Branch)], 3u);
  EXPECT_EQ(l.classes[unsigned(ProfileClass::Barrier)], 0u);
  EXPECT_NE(
      p.json().find("\"loops\": [{\"head_pc\": " + std::to_string(l.headPc) +
                    ", \"branch_pc\": " + std::to_string(l.branchPc) +
                    ", \"iterations\": 3, \"branch_executions\": 3, "
                    "\"taken\": 2, \"classes\": {"),
      std::string::npos)
      << p.json();
  EXPECT_NE(p.text().find("  loops "), std::string::npos);

  std::string text = p.text();
  EXPECT_NE(text.find("execution counts from the gfx906 simulator (not "
                      "timing)"),
            std::string::npos);
  EXPECT_NE(p.json().find("\"ds_read_b32\": {\"executed\": 3, \"degrees\": "
                          "{\"1\": 1, \"2\": 1, \"32\": 1}}"),
            std::string::npos)
      << p.json();

  // Per DS instruction (by pc, swizzles left out): the bytes touched and
  // the lanes' address pattern (address less lane 0's).
  ASSERT_EQ(p.ds.size(), 5u);
  const SimProfile::DsInstruction &first = p.ds[0];
  EXPECT_EQ(first.pc, 8u);
  EXPECT_EQ(first.mnemonic, "ds_read_b32");
  EXPECT_EQ(first.executed, 1u);
  EXPECT_EQ(first.lowest, 0u);
  EXPECT_EQ(first.highest, 63u * 128 + 3);
  EXPECT_EQ(first.maxDegree(), 32u);
  ASSERT_EQ(first.lanes.size(), 64u);
  EXPECT_EQ(first.lanes[5], 5 * 128);
  EXPECT_TRUE(first.active[63]);
  // ds_write2_b32 v3 offset1:32: elements at +0 and +128 bytes.
  const SimProfile::DsInstruction &w2i = p.ds[3];
  EXPECT_EQ(w2i.mnemonic, "ds_write2_b32");
  EXPECT_EQ(w2i.elementBytes, 4u);
  EXPECT_EQ(w2i.elementOffsets, (std::vector<uint32_t>{0, 128}));
  EXPECT_EQ(w2i.lowest, 0u);
  EXPECT_EQ(w2i.highest, 63u * 4 + 128 + 3);
  EXPECT_EQ(w2i.maxDegree(), 2u);
  // ds_read_b32 v5, v0 with EXEC = lanes 0 and 1: two active lanes.
  const SimProfile::DsInstruction &masked = p.ds[4];
  EXPECT_EQ(masked.highest, 128u + 3);
  ASSERT_EQ(masked.lanes.size(), 64u);
  EXPECT_TRUE(masked.active[1]);
  EXPECT_FALSE(masked.active[2]);
  EXPECT_EQ(masked.lanes[1], 128);
  EXPECT_NE(p.json().find("\"ds\": [{\"pc\": 8, \"mnemonic\": "
                          "\"ds_read_b32\", \"element_bytes\": 4, "
                          "\"element_offsets\": [0], \"executed\": 1, "
                          "\"lds_lowest\": 0, \"lds_highest\": 8067, "
                          "\"max_degree\": 32, \"degrees\": {\"32\": 1}, "
                          "\"lanes\": [0, 128, 256"),
            std::string::npos)
      << p.json();
  EXPECT_NE(text.find("  lds by pc "), std::string::npos) << text;
}

TEST(SimProfile, DsPatternThatVariesAndWorkersAdded) {
  // A lane whose offset from the lowest active lane changes between
  // executions has no pattern; two workers' records add up.
  WaveRun r({}, 8, 16384);
  Instruction in;
  in.enc = Encoding::DS;
  in.op = Op::DS_READ_B32;
  in.pc = 0;
  in.src[0].kind = OperandKind::VGPR;
  in.src[0].index = 0;
  ProfileCounters a, b;
  a.reset(1);
  b.reset(1);
  r.setV(0, [](unsigned l) { return 256 + l * 4; });
  profileInstruction(a, r.w, in, 0);
  r.setV(0, [](unsigned l) { return 1024 + l * 4; });
  profileInstruction(b, r.w, in, 0);
  ProfileCounters sum;
  sum.add(a);
  sum.add(b);
  Program program;
  program.insts.push_back(in);
  SimProfile p = summarizeProfile(program, sum);
  ASSERT_EQ(p.ds.size(), 1u);
  EXPECT_EQ(p.ds[0].executed, 2u);
  EXPECT_EQ(p.ds[0].lowest, 256u);
  EXPECT_EQ(p.ds[0].highest, 1024u + 63 * 4 + 3);
  ASSERT_EQ(p.ds[0].lanes.size(), 64u); // the same pattern, shifted
  EXPECT_EQ(p.ds[0].lanes[63], 63 * 4);
  r.setV(0, [](unsigned l) { return l * 8; });
  profileInstruction(sum, r.w, in, 0);
  p = summarizeProfile(program, sum);
  EXPECT_TRUE(p.ds[0].lanes.empty());
  EXPECT_NE(p.json().find("\"lanes\": null"), std::string::npos);
}

TEST(SimProfile, ConflictDegreeOfWideAndPaddedAccesses) {
  WaveRun r({}, 8, 16384);
  Instruction in;
  in.enc = Encoding::DS;
  in.src[0].kind = OperandKind::VGPR;
  in.src[0].index = 0;
  // A column read with a 33-word stride (one dword of padding per 32-word
  // row): lane l in bank l mod 32, conflict-free.
  in.op = Op::DS_READ_B32;
  r.setV(0, [](unsigned l) { return l * 132; });
  EXPECT_EQ(ldsConflictDegree(r.w, in), 1);
  // Every lane the same dword: a broadcast, 1.
  r.setV(0, 64u);
  EXPECT_EQ(ldsConflictDegree(r.w, in), 1);
  // ds_read_b64 at lane * 128 bytes: 16 lanes per phase, each 2 dwords in
  // banks 0 and 1: 16 distinct dwords per bank.
  in.op = Op::DS_READ_B64;
  r.setV(0, [](unsigned l) { return l * 128; });
  EXPECT_EQ(ldsConflictDegree(r.w, in), 16);
  // Contiguous b128 (16 bytes per lane): 8 lanes cover the 32 banks once.
  in.op = Op::DS_READ_B128;
  r.setV(0, [](unsigned l) { return l * 16; });
  EXPECT_EQ(ldsConflictDegree(r.w, in), 1);
  // No active lane: degree 0.
  r.w.setExec(0);
  EXPECT_EQ(ldsConflictDegree(r.w, in), 0);
  // ds_bpermute_b32 touches no bank.
  in.op = Op::DS_BPERMUTE_B32;
  EXPECT_EQ(ldsConflictDegree(r.w, in), -1);
}

TEST(SimProfile, WavesPerSimdFromTheDescriptor) {
  // The committed example kernel's descriptor: 128 VGPRs, 104 SGPRs, 25600
  // bytes of LDS, 256 threads: 256/128 = 2 by VGPRs, 800/112 = 7 by SGPRs,
  // 65536/25600 = 2 workgroups x 4 waves / 4 SIMDs = 2 by LDS.
  SimProfile p;
  setOccupancy(p, 128, 104, 25600, 256);
  EXPECT_EQ(p.byVgpr, 2u);
  EXPECT_EQ(p.bySgpr, 7u);
  EXPECT_EQ(p.byLds, 2u);
  EXPECT_EQ(p.wavesPerSimd, 2u);
  EXPECT_EQ(p.limitedBy, "VGPRs");
  // Small kernels hit the 10-wave limit; LDS can bind first.
  setOccupancy(p, 16, 16, 0, 256);
  EXPECT_EQ(p.wavesPerSimd, 10u);
  EXPECT_EQ(p.limitedBy, "the 10-wave limit");
  setOccupancy(p, 16, 16, 32768, 64);
  EXPECT_EQ(p.byLds, 0u); // 2 one-wave workgroups per CU: 4 SIMDs, 2 busy
  EXPECT_EQ(p.limitedBy, "LDS");
}
