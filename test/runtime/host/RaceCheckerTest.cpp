//===- RaceCheckerTest.cpp - LDS race detection ---------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Probe kernels with one planted conflict each, then the fixture kernels: the
// planted missing barrier is caught, the correct kernel raises nothing, the
// planted early exit is reported as divergence.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"

using namespace fa;

namespace {

/// A script of LDS accesses: {thread, offset, bytes, isWrite, barrierAfter}.
struct Access {
  uint32_t thread, offset, bytes, write;
};

/// args[0]: Access array, args[1]: count, args[2]: accesses before the
/// barrier (the rest come after it), args[3]: workgroup y to run in (others
/// skip the script), args[4]: 1 = shuffle between write and read phase.
void scriptKernel(const uint64_t *args, fa_host_env *env) {
  const Access *script = reinterpret_cast<const Access *>(args[0]);
  uint64_t n = args[1], split = args[2];
  bool active = env->block_id[1] == args[3];
  auto run = [&](uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; ++i)
      if (active && script[i].thread == env->thread_id[0])
        env->lds_access(env->emu, env->lds + script[i].offset, script[i].bytes,
                        script[i].write);
  };
  run(0, split);
  if (args[4])
    env->shuffle(env->emu, 0, 1, env->wave_size, FA_SHUFFLE_XOR);
  else
    env->barrier(env->emu);
  run(split, n);
  env->barrier(env->emu);
  env->barrier(env->emu);
}

Status runScript(const std::vector<Access> &script, uint64_t split,
                 uint64_t gridY = 1, uint64_t activeY = 0,
                 uint64_t shuffleInstead = 0, size_t maxReports = 16) {
  HostEmulator emu(2);
  uint64_t args[5] = {uint64_t(reinterpret_cast<uintptr_t>(script.data())),
                      script.size(), split, activeY, shuffleInstead};
  HostLaunch l;
  l.entry = &scriptKernel;
  l.args = args;
  l.kernelName = "probe";
  l.grid[1] = uint32_t(gridY);
  l.block[0] = 8;
  l.waveSize = 8;
  l.ldsBytes = 64;
  LaunchOptions o;
  o.checkRaces = true;
  o.maxRaceReports = maxReports;
  return emu.run(l, o);
}

// Threads run in id order between synchronizations, so "after" below is
// program order as the emulator executes it.
TEST(RaceCheckerTest, ReadAfterWrite) {
  Status s = runScript({{1, 4, 4, 1}, {2, 4, 4, 0}}, 2);
  EXPECT_EQ(s.code(), ErrorCode::RaceDetected);
  EXPECT_EQ(s.message(),
            "1 lds race detected, first: lds race in kernel 'probe' "
            "workgroup (0,0,0) barrier epoch 0: thread 2 reads lds byte 4 "
            "(4-byte access) after thread 1 wrote it, with no barrier between");
  EXPECT_EQ(s.kernel(), "probe");
}

TEST(RaceCheckerTest, WriteAfterRead) {
  Status s = runScript({{1, 8, 4, 0}, {3, 8, 4, 1}}, 2);
  EXPECT_EQ(s.code(), ErrorCode::RaceDetected);
  EXPECT_NE(s.message().find("thread 3 writes lds byte 8 (4-byte access) "
                             "after thread 1 read it"),
            std::string::npos)
      << s.message();
}

TEST(RaceCheckerTest, WriteAfterWriteAtFirstOverlappingByte) {
  Status s = runScript({{0, 16, 8, 1}, {5, 20, 4, 1}}, 2);
  EXPECT_NE(s.message().find("thread 5 writes lds byte 20 (4-byte access) "
                             "after thread 0 wrote it"),
            std::string::npos)
      << s.message();
}

TEST(RaceCheckerTest, BarrierSeparatesAndEpochsCount) {
  // Write before the barrier, read after it: fine. Own accesses: fine.
  FA_ASSERT_OK(runScript(
      {{1, 4, 4, 1}, {1, 4, 4, 0}, {1, 4, 4, 1}, {2, 4, 4, 0}, {3, 4, 4, 0}},
      3));
  // Two readers, then a write by one of them: conflicts with the other.
  Status s = runScript({{2, 0, 4, 0}, {6, 0, 4, 0}, {6, 0, 4, 1}}, 0);
  EXPECT_NE(s.message().find("barrier epoch 1: thread 6 writes lds byte 0 "
                             "(4-byte access) after thread 2 read it"),
            std::string::npos)
      << s.message();
}

TEST(RaceCheckerTest, NamesTheWorkgroup) {
  Status s = runScript({{1, 4, 4, 1}, {2, 4, 4, 0}}, 2, 3, 1);
  EXPECT_NE(s.message().find("workgroup (0,1,0) barrier epoch 0"),
            std::string::npos)
      << s.message();
}

// Shuffles synchronize a wave's registers, not LDS.
TEST(RaceCheckerTest, ShuffleIsNoBarrier) {
  Status s = runScript({{0, 0, 4, 1}, {1, 0, 4, 0}}, 1, 1, 0, 1);
  EXPECT_EQ(s.code(), ErrorCode::RaceDetected);
  EXPECT_NE(s.message().find("thread 1 reads lds byte 0"), std::string::npos)
      << s.message();
  FA_ASSERT_OK(runScript({{0, 0, 4, 1}, {1, 0, 4, 0}}, 1, 1, 0, 0));
}

TEST(RaceCheckerTest, OutOfBounds) {
  Status s = runScript({{0, 62, 4, 0}}, 1);
  EXPECT_EQ(s.code(), ErrorCode::LaunchFailed);
  EXPECT_EQ(s.message(),
            "1 out-of-bounds lds access detected, first: lds access out of "
            "bounds in kernel 'probe' workgroup (0,0,0) barrier epoch 0: "
            "thread 0 accesses bytes [62, 66), outside the 64 bytes of lds");
}

TEST(RaceCheckerTest, KeepsTheFirstReportsAndCountsAll) {
  std::vector<Access> script;
  for (uint32_t t = 1; t < 8; ++t)
    script.push_back({t, 0, 4, 1}); // 6 write-after-write conflicts
  Status s = runScript(script, script.size(), 1, 0, 0, 2);
  EXPECT_EQ(s.message().rfind("6 lds races detected, first: ", 0), 0u)
      << s.message();
  size_t lines = 0;
  for (char c : s.log())
    lines += c == '\n';
  EXPECT_EQ(lines, 2u) << s.log();
}

Kernel fixture(const std::string &name) {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath(name));
  EXPECT_TRUE(m.ok()) << m.status().toString();
  return m->kernel().take();
}

Status runFixture(const std::string &name, AttentionShape shape,
                  bool checkRaces) {
  ValidationOptions o;
  o.shape = shape;
  o.launch.checkRaces = checkRaces;
  Expected<ValidationReport> r = validateKernel(fixture(name), o);
  return r ? Status::success() : r.takeStatus();
}

TEST(RaceCheckerTest, CatchesThePlantedMissingBarrier) {
  Status s = runFixture("attn_race", {1, 2, 1, 40, 40}, true);
  EXPECT_EQ(s.code(), ErrorCode::RaceDetected);
  // Without the barrier after the K/V copy, thread 1 overwrites tile bytes
  // thread 0 has already read, in the first epoch of a workgroup.
  EXPECT_NE(s.message().find("lds race in kernel 'attn_race' workgroup (0,0,0) "
                             "barrier epoch 0: thread 1 writes lds byte "),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("after thread 0 read it"), std::string::npos);
  EXPECT_EQ(s.kernel(), "attn_race");
  // Unchecked, the same kernel launches without complaint.
  FA_ASSERT_OK(runFixture("attn_race", {1, 1, 1, 16, 16}, false));
}

TEST(RaceCheckerTest, NoFalsePositivesOnCorrectKernels) {
  FA_ASSERT_OK(runFixture("attn_f32", {2, 2, 1, 35, 47}, true));
  FA_ASSERT_OK(runFixture("attn_f16_causal", {1, 2, 2, 50, 21}, true));
  FA_ASSERT_OK(runFixture("attn_bf16", {1, 2, 1, 13, 29}, true));
}

TEST(RaceCheckerTest, PlantedEarlyExitIsBarrierDivergence) {
  // Lq = 20 with block_m = 16: workgroup 1 has rows 16..19 (threads 0-15);
  // threads 16-63 hold rows past Lq and leave before the first barrier.
  Status s = runFixture("attn_diverge", {1, 1, 1, 20, 20}, false);
  EXPECT_EQ(s.code(), ErrorCode::BarrierDivergence);
  EXPECT_EQ(s.message(),
            "barrier divergence in workgroup (1,0,0) of kernel "
            "'attn_diverge': threads [0-15] at barrier 0, threads [16-63] "
            "exited");
  // With Lq a multiple of block_m no thread leaves early.
  FA_ASSERT_OK(runFixture("attn_diverge", {1, 1, 1, 32, 20}, false));
}

} // namespace
