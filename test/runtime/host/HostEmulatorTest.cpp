//===- HostEmulatorTest.cpp - Fibers, barriers, shuffles, divergence ------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Probe kernels run directly on a HostEmulator. The first argument word of
// each probe points at its output array; the others carry parameters.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <atomic>
#include <cstring>

using namespace fa;

namespace {

uint32_t linearThread(const fa_host_env *env) {
  return env->thread_id[0] +
         env->block_dim[0] *
             (env->thread_id[1] + env->block_dim[1] * env->thread_id[2]);
}

uint32_t linearBlock(const fa_host_env *env) {
  return env->block_id[0] +
         env->grid_dim[0] *
             (env->block_id[1] + env->grid_dim[1] * env->block_id[2]);
}

HostLaunch probe(fa_host_kernel_fn fn, const uint64_t *args, uint32_t threads,
                 uint32_t wave, uint64_t lds = 64) {
  HostLaunch l;
  l.entry = fn;
  l.args = args;
  l.kernelName = "probe";
  l.block[0] = threads;
  l.waveSize = wave;
  l.ldsBytes = lds;
  return l;
}

enum { EnvWords = 16 };

void envKernel(const uint64_t *args, fa_host_env *env) {
  uint32_t *out = reinterpret_cast<uint32_t *>(args[0]);
  uint32_t threads = env->block_dim[0] * env->block_dim[1] * env->block_dim[2];
  uint32_t *rec =
      out + (linearBlock(env) * threads + linearThread(env)) * EnvWords;
  for (int i = 0; i < 3; ++i) {
    rec[i] = env->thread_id[i];
    rec[3 + i] = env->block_id[i];
    rec[6 + i] = env->block_dim[i];
    rec[9 + i] = env->grid_dim[i];
  }
  rec[12] = env->wave_size;
  rec[13] = uint32_t(reinterpret_cast<uintptr_t>(env->lds) % 16);
  rec[14] = env->lds[linearThread(env)];
  rec[15] = 1;
}

TEST(HostEmulatorTest, EveryThreadGetsItsEnvironment) {
  HostEmulator emu(2);
  const uint32_t grid[3] = {2, 3, 2}, block[3] = {4, 2, 2};
  const uint32_t threads = 16, blocks = 12;
  std::vector<uint32_t> out(blocks * threads * EnvWords, 0xdead);
  uint64_t args[1] = {uint64_t(reinterpret_cast<uintptr_t>(out.data()))};
  HostLaunch l = probe(&envKernel, args, 0, 8);
  for (int i = 0; i < 3; ++i) {
    l.grid[i] = grid[i];
    l.block[i] = block[i];
  }
  for (bool poison : {false, true}) {
    LaunchOptions o;
    o.poisonLds = poison;
    FA_ASSERT_OK(emu.run(l, o));
    for (uint32_t bz = 0; bz < 2; ++bz)
      for (uint32_t by = 0; by < 3; ++by)
        for (uint32_t bx = 0; bx < 2; ++bx)
          for (uint32_t t = 0; t < threads; ++t) {
            uint32_t b = bx + 2 * (by + 3 * bz);
            const uint32_t *r = &out[(b * threads + t) * EnvWords];
            uint32_t expect[16] = {
                t % 4, (t / 4) % 2, t / 8, bx, by,
                bz,    4,           2,     2,  2,
                3,     2,           8,     0,  poison ? 0xffu : 0u,
                1};
            for (int i = 0; i < 16; ++i)
              ASSERT_EQ(r[i], expect[i])
                  << "block " << b << " thread " << t << " word " << i;
          }
  }
}

/// Each thread writes, waits, reads its neighbour's value; twice.
void barrierKernel(const uint64_t *args, fa_host_env *env) {
  uint32_t *out = reinterpret_cast<uint32_t *>(args[0]);
  uint32_t n = env->block_dim[0], t = env->thread_id[0];
  uint32_t *lds = reinterpret_cast<uint32_t *>(env->lds);
  for (uint32_t round = 0; round < 2; ++round) {
    env->lds_access(env->emu, &lds[t], 4, 1);
    lds[t] = (round + 1) * 1000 + t;
    env->barrier(env->emu);
    uint32_t next = (t + 1) % n;
    env->lds_access(env->emu, &lds[next], 4, 0);
    out[round * n + t] = lds[next];
    env->barrier(env->emu);
  }
}

TEST(HostEmulatorTest, BarriersOrderLdsTraffic) {
  HostEmulator emu(1);
  std::vector<uint32_t> out(2 * 48);
  uint64_t args[1] = {uint64_t(reinterpret_cast<uintptr_t>(out.data()))};
  LaunchOptions o;
  o.checkRaces = true;
  FA_ASSERT_OK(emu.run(probe(&barrierKernel, args, 48, 16, 48 * 4), o));
  for (uint32_t round = 0; round < 2; ++round)
    for (uint32_t t = 0; t < 48; ++t)
      EXPECT_EQ(out[round * 48 + t], (round + 1) * 1000 + (t + 1) % 48);
}

/// out[t] = shuffle(100 + t, offset, width, mode), parameters in args[1..3].
void shuffleKernel(const uint64_t *args, fa_host_env *env) {
  uint32_t *out = reinterpret_cast<uint32_t *>(args[0]);
  uint32_t t = env->thread_id[0];
  out[t] = env->shuffle(env->emu, 100 + t, uint32_t(args[1]), uint32_t(args[2]),
                        uint32_t(args[3]));
}

std::vector<uint32_t> shuffled(uint32_t mode, uint32_t offset, uint32_t width,
                               uint32_t threads = 8, uint32_t wave = 8) {
  HostEmulator emu(1);
  std::vector<uint32_t> out(threads);
  uint64_t args[4] = {uint64_t(reinterpret_cast<uintptr_t>(out.data())), offset,
                      width, mode};
  Status s = emu.run(probe(&shuffleKernel, args, threads, wave));
  EXPECT_TRUE(s.ok()) << s.toString();
  for (uint32_t &x : out)
    x -= 100; // report source lanes
  return out;
}

using Lanes = std::vector<uint32_t>;

TEST(HostEmulatorTest, ShuffleModesFollowGpuShuffle) {
  // Full-wave width.
  EXPECT_EQ(shuffled(FA_SHUFFLE_XOR, 1, 8), (Lanes{1, 0, 3, 2, 5, 4, 7, 6}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_XOR, 5, 8), (Lanes{5, 4, 7, 6, 1, 0, 3, 2}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_DOWN, 1, 8), (Lanes{1, 2, 3, 4, 5, 6, 7, 7}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_UP, 2, 8), (Lanes{0, 1, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_IDX, 3, 8), (Lanes{3, 3, 3, 3, 3, 3, 3, 3}));
  // Out-of-range sources return the caller's own value.
  EXPECT_EQ(shuffled(FA_SHUFFLE_IDX, 9, 8), (Lanes{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_DOWN, 8, 8), (Lanes{0, 1, 2, 3, 4, 5, 6, 7}));
  // Width 4: two independent segments.
  EXPECT_EQ(shuffled(FA_SHUFFLE_DOWN, 1, 4), (Lanes{1, 2, 3, 3, 5, 6, 7, 7}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_UP, 1, 4), (Lanes{0, 0, 1, 2, 4, 4, 5, 6}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_IDX, 1, 4), (Lanes{1, 1, 1, 1, 5, 5, 5, 5}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_XOR, 2, 4), (Lanes{2, 3, 0, 1, 6, 7, 4, 5}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_XOR, 4, 4), (Lanes{0, 1, 2, 3, 4, 5, 6, 7}));
  // Two waves of 4 with width 4 behave like segments, but independently.
  EXPECT_EQ(shuffled(FA_SHUFFLE_DOWN, 2, 4, 8, 4),
            (Lanes{2, 3, 2, 3, 6, 7, 6, 7}));
  // A partial last wave: lanes past the end are out of range.
  EXPECT_EQ(shuffled(FA_SHUFFLE_DOWN, 1, 8, 6, 8), (Lanes{1, 2, 3, 4, 5, 5}));
  EXPECT_EQ(shuffled(FA_SHUFFLE_IDX, 7, 8, 12, 8),
            (Lanes{7, 7, 7, 7, 7, 7, 7, 7, 8, 9, 10, 11}));
}

void badShuffleKernel(const uint64_t *, fa_host_env *env) {
  env->shuffle(env->emu, 1, 1, env->thread_id[0] == 3 ? 0 : 8, FA_SHUFFLE_XOR);
}

TEST(HostEmulatorTest, RejectsInvalidShuffleArguments) {
  HostEmulator emu(1);
  Status s = emu.run(probe(&badShuffleKernel, nullptr, 8, 8));
  EXPECT_EQ(s.code(), ErrorCode::LaunchFailed);
  EXPECT_EQ(s.message(), "invalid shuffle in workgroup (0,0,0) of kernel "
                         "'probe': thread 3 passed width 0 and mode 0 (width "
                         "must be in [1, 8], mode in [0, 3])");
}

/// Threads below args[0] return after args[1] barriers; the rest wait at
/// one more.
void divergentKernel(const uint64_t *args, fa_host_env *env) {
  for (uint64_t i = 0; i < args[1]; ++i)
    env->barrier(env->emu);
  if (env->thread_id[0] < args[0])
    return;
  env->barrier(env->emu);
}

TEST(HostEmulatorTest, ReportsBarrierDivergenceInsteadOfHanging) {
  HostEmulator emu(2);
  uint64_t args[2] = {4, 2};
  HostLaunch l = probe(&divergentKernel, args, 8, 8);
  l.grid[0] = 3;
  Status s = emu.run(l);
  EXPECT_EQ(s.code(), ErrorCode::BarrierDivergence);
  EXPECT_NE(s.message().find("threads [4-7] at barrier 2, threads [0-3] "
                             "exited"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().rfind("barrier divergence in workgroup (", 0), 0u);
  // The emulator stays usable after abandoning the fibers.
  uint64_t fine[2] = {0, 1};
  FA_ASSERT_OK(emu.run(probe(&divergentKernel, fine, 8, 8)));
}

void deadlockKernel(const uint64_t *, fa_host_env *env) {
  if (env->thread_id[0] % 2 == 0)
    env->barrier(env->emu);
  else
    env->shuffle(env->emu, 0, 1, 8, FA_SHUFFLE_XOR);
}

TEST(HostEmulatorTest, ReportsBarrierShuffleDeadlock) {
  HostEmulator emu(1);
  // A wider launch first: its fibers must not show up in the next report.
  uint64_t none[2] = {0, 1};
  FA_ASSERT_OK(emu.run(probe(&divergentKernel, none, 64, 8)));
  Status s = emu.run(probe(&deadlockKernel, nullptr, 8, 8));
  EXPECT_EQ(s.code(), ErrorCode::BarrierDivergence);
  EXPECT_EQ(s.message(),
            "barrier divergence (deadlock) in workgroup (0,0,0) of kernel "
            "'probe': threads [0,2,4,6] at barrier 0, threads [1,3,5,7] in a "
            "shuffle");
}

void shuffleExitKernel(const uint64_t *, fa_host_env *env) {
  if (env->thread_id[0] % env->wave_size < 2)
    return;
  env->shuffle(env->emu, 0, 1, 8, FA_SHUFFLE_XOR);
}

TEST(HostEmulatorTest, ReportsShuffleWithExitedLanes) {
  HostEmulator emu(1);
  Status s = emu.run(probe(&shuffleExitKernel, nullptr, 16, 8));
  EXPECT_EQ(s.code(), ErrorCode::BarrierDivergence);
  EXPECT_NE(s.message().find("threads [2-7,10-15] in a shuffle, threads "
                             "[0-1,8-9] exited"),
            std::string::npos)
      << s.message();
}

std::atomic<uint64_t> counted{0};

void countKernel(const uint64_t *args, fa_host_env *env) {
  uint32_t *out = reinterpret_cast<uint32_t *>(args[0]);
  counted.fetch_add(1);
  env->barrier(env->emu);
  if (env->thread_id[0] == 0)
    out[linearBlock(env)] += 1;
}

TEST(HostEmulatorTest, RunsEveryWorkgroupOnceWithAnyWorkerCount) {
  for (unsigned workers : {1u, 3u}) {
    HostEmulator emu(workers);
    std::vector<uint32_t> out(5 * 7 * 3, 0);
    uint64_t args[1] = {uint64_t(reinterpret_cast<uintptr_t>(out.data()))};
    HostLaunch l = probe(&countKernel, args, 32, 32);
    l.grid[0] = 5;
    l.grid[1] = 7;
    l.grid[2] = 3;
    counted = 0;
    FA_ASSERT_OK(emu.run(l));
    EXPECT_EQ(counted.load(), 5u * 7 * 3 * 32);
    EXPECT_EQ(out, std::vector<uint32_t>(out.size(), 1u));
    LaunchOptions one;
    one.workers = 1;
    FA_ASSERT_OK(emu.run(l, one));
    EXPECT_EQ(out, std::vector<uint32_t>(out.size(), 2u));
  }
}

/// Uses ~200 KiB of stack.
void deepStackKernel(const uint64_t *args, fa_host_env *env) {
  volatile uint8_t big[200 * 1024];
  for (size_t i = 0; i < sizeof(big); i += 4096)
    big[i] = uint8_t(i);
  env->barrier(env->emu);
  reinterpret_cast<uint32_t *>(args[0])[env->thread_id[0]] = big[4096];
}

TEST(HostEmulatorTest, FiberStackSizeIsConfigurable) {
  HostEmulator emu(1);
  std::vector<uint32_t> out(4, 0);
  uint64_t args[1] = {uint64_t(reinterpret_cast<uintptr_t>(out.data()))};
  LaunchOptions o;
  o.fiberStackBytes = 512 * 1024;
  FA_ASSERT_OK(emu.run(probe(&deepStackKernel, args, 4, 4), o));
  EXPECT_EQ(out, std::vector<uint32_t>(4, 0u)); // 4096 % 256 == 0
  o.fiberStackBytes = 8192;
  Status small = emu.run(probe(&deepStackKernel, args, 4, 4), o);
  EXPECT_EQ(small.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(small.message(),
            "fiber stack of 8192 bytes is too small (at least 16384)");
}

} // namespace
