//===- ConcurrencyTest.cpp - Runtime objects shared across threads --------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// What runtime/README.md promises under "Threads": devices, modules and
// kernels may be shared by threads that launch at the same time, each with
// its own buffers, and every result is right.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"

#include <atomic>
#include <thread>
#include <vector>

using namespace fa;

namespace {

constexpr int threadCount = 8;
constexpr int roundsPerThread = 3;

/// Validates kernels[t % size] from thread t on a shape and seed of its own
/// per round, all threads at once; returns what failed, one line each.
std::string validateConcurrently(const std::vector<Kernel> &kernels) {
  std::vector<std::string> failures(threadCount);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int t = 0; t < threadCount; ++t)
    threads.emplace_back([&, t] {
      // Start together, so the launches overlap.
      ++ready;
      while (ready.load() < threadCount)
        std::this_thread::yield();
      for (int round = 0; round < roundsPerThread; ++round) {
        ValidationOptions o;
        o.shape = {1 + round % 2, 2, 1, 9 + 7 * t + round, 13 + 5 * t};
        o.seed = uint64_t(100 * t + round);
        o.launch.checkRaces = round == 1;
        if (t % 2)
          o.layout = AttentionLayout::distinct();
        const Kernel &kernel = kernels[size_t(t) % kernels.size()];
        // Split-KV: workspaces of many sizes at once (0: the runtime's S).
        if (kernel.info().splitKv)
          o.launch.kvSplits = (t + round) % 4 * 3;
        Expected<ValidationReport> r = validateKernel(kernel, o);
        std::string where = "thread " + std::to_string(t) + " round " +
                            std::to_string(round) + " " + o.shape.toString() +
                            ": ";
        if (!r)
          failures[t] += where + r.status().toString() + "\n";
        else if (!r->verdict.pass)
          failures[t] += where + "validation failed\n";
      }
    });
  for (std::thread &t : threads)
    t.join();
  std::string all;
  for (const std::string &f : failures)
    all += f;
  return all;
}

// One Device, Module and Kernel shared by all threads.
TEST(ConcurrencyTest, SharedKernelLaunchesFromManyThreads) {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath("attn_f16_causal"));
  ASSERT_TRUE(m.ok()) << m.status().toString();
  Expected<Kernel> k = m->kernel();
  ASSERT_TRUE(k.ok()) << k.status().toString();
  EXPECT_EQ(validateConcurrently({*k}), "");
}

// A split-KV kernel's launches from all threads at once: each holds a
// workspace of its own while others are taken and given back.
TEST(ConcurrencyTest, SharedSplitKvKernelLaunchesFromManyThreads) {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath("split_f16_causal"));
  ASSERT_TRUE(m.ok()) << m.status().toString();
  Expected<Kernel> k = m->kernel();
  ASSERT_TRUE(k.ok()) << k.status().toString();
  EXPECT_EQ(validateConcurrently({*k}), "");
}

// Each thread opens the device and loads a module itself, all at once.
TEST(ConcurrencyTest, ConcurrentOpenAndLoad) {
  std::vector<Expected<Kernel>> loaded(
      threadCount, Expected<Kernel>(Status::error(ErrorCode::Internal, "?")));
  std::vector<std::thread> threads;
  for (int t = 0; t < threadCount; ++t)
    threads.emplace_back([&, t] {
      Expected<Device> d = Device::open("host");
      if (!d) {
        loaded[t] = d.takeStatus();
        return;
      }
      const char *name = t % 2 ? "attn_f32" : "attn_f16_causal";
      Expected<Module> m = Module::load(*d, test::fixturePath(name));
      if (!m) {
        loaded[t] = m.takeStatus();
        return;
      }
      loaded[t] = m->kernel();
    });
  for (std::thread &t : threads)
    t.join();
  std::vector<Kernel> kernels;
  for (Expected<Kernel> &k : loaded) {
    ASSERT_TRUE(k.ok()) << k.status().toString();
    kernels.push_back(k.take());
  }
  EXPECT_EQ(validateConcurrently(kernels), "");
}

} // namespace
