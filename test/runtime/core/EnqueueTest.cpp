//===- EnqueueTest.cpp - The engine's launch: wrapped memory, streams -----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Kernel::enqueue and its C API (fa_module_enqueue), on the host emulator's
// fixture kernels: buffers over the caller's memory (Device::wrap), the
// caller's workspace (Kernel::workspaceSize), trusted paged and varlen
// metadata and the check of the device copies (Kernel::checkMetadata), and
// launches from many threads. The blocking launch is validated against the
// fp64 references elsewhere (SplitKvTest, PagedKvTest, VarlenTest); an
// enqueue of the same problem must write the same bits.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/fa_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

using namespace fa;
using test::failures;
using test::loadKernel;
using test::loadModule;

namespace {

/// Deterministic f32 values in [-1, 1).
std::vector<float> values(size_t count, uint64_t seed) {
  std::vector<float> v(count);
  for (float &x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = float(double(seed >> 11) / double(1ull << 53) * 2.0 - 1.0);
  }
  return v;
}

Buffer wrap(const Device &device, void *data, size_t bytes) {
  Expected<Buffer> b = device.wrap(data, bytes);
  EXPECT_TRUE(b.ok()) << b.status().toString();
  return b.take();
}

/// A buffer fa allocates, holding `bytes` of `data`.
Buffer upload(const Device &device, const void *data, size_t bytes) {
  Expected<Buffer> b = device.allocate(bytes);
  EXPECT_TRUE(b.ok()) << b.status().toString();
  EXPECT_TRUE(b->copyFromHost(data, bytes).ok());
  return b.take();
}

template <typename T> std::vector<T> download(const Buffer &b) {
  std::vector<T> out(b.size() / sizeof(T));
  Status s = b.copyToHost(out.data(), out.size() * sizeof(T));
  EXPECT_TRUE(s.ok()) << s.toString();
  return out;
}

/// The caller's memory of one f32 problem: Q, K, V, O and LSE as host
/// vectors (what an engine holds), contiguous BHLD.
struct Problem {
  AttentionShape shape;
  int64_t d;
  std::vector<float> q, k, v, o, lse;
  Problem(AttentionShape shape, int64_t d, uint64_t seed)
      : shape(shape), d(d),
        q(values(size_t(shape.batch * shape.headsQ * shape.seqQ * d), seed)),
        k(values(size_t(shape.batch * shape.headsKv * shape.seqK * d),
                 seed + 1)),
        v(values(k.size(), seed + 2)), o(q.size(), -7.0f),
        lse(size_t(shape.batch * shape.headsQ * shape.seqQ), -7.0f) {}
};

/// O and LSE of the blocking launch (fa's own buffers) on `p`.
std::pair<std::vector<float>, std::vector<float>>
blockingResult(const Kernel &kernel, const Problem &p, int64_t kvSplits) {
  Device dev = kernel.device();
  Buffer q = upload(dev, p.q.data(), p.q.size() * 4);
  Buffer k = upload(dev, p.k.data(), p.k.size() * 4);
  Buffer v = upload(dev, p.v.data(), p.v.size() * 4);
  Buffer o = upload(dev, p.o.data(), p.o.size() * 4);
  Buffer lse = upload(dev, p.lse.data(), p.lse.size() * 4);
  AttentionArgs a{&q, &k, &v, &o, &lse, p.shape, {}, {}, {}};
  LaunchOptions options;
  options.kvSplits = kvSplits;
  Status s = kernel.launch(a, options);
  EXPECT_TRUE(s.ok()) << s.toString();
  return {download<float>(o), download<float>(lse)};
}

TEST(EnqueueTest, WrapRefusesNullAndEmptyAndNeverFrees) {
  Device dev = test::hostDevice();
  std::vector<float> data(16, 1.0f);
  EXPECT_EQ(dev.wrap(nullptr, 64).status().message(),
            "cannot wrap a null pointer: a wrapped buffer is memory the "
            "caller allocated, at least 1 byte");
  EXPECT_EQ(dev.wrap(data.data(), 0).status().message(),
            "cannot wrap 0 bytes: a wrapped buffer is memory the caller "
            "allocated, at least 1 byte");
  {
    Expected<Buffer> b = Buffer::wrap(dev, data.data(), 64);
    ASSERT_TRUE(b.ok()) << b.status().toString();
    EXPECT_FALSE(b->owned());
    EXPECT_EQ(b->guardBytes(), 0u);
    EXPECT_EQ(b->address(), uint64_t(reinterpret_cast<uintptr_t>(data.data())));
    float two = 2.0f;
    ASSERT_TRUE(b->copyFromHost(&two, 4, 8).ok());
  }
  // The buffer is gone, the memory is the caller's and still holds the
  // copy (a free would have poisoned or unmapped it under ASan).
  EXPECT_EQ(data[2], 2.0f);
  EXPECT_EQ(data[3], 1.0f);
}

// A dense kernel enqueued over the caller's memory writes what the blocking
// launch writes, and needs no workspace.
TEST(EnqueueTest, DenseOverWrappedMemoryMatchesTheBlockingLaunch) {
  Kernel kernel = loadKernel("attn_f32");
  Device dev = kernel.device();
  Problem p({2, 4, 2, 33, 70}, 64, 11);
  Buffer q = wrap(dev, p.q.data(), p.q.size() * 4);
  Buffer k = wrap(dev, p.k.data(), p.k.size() * 4);
  Buffer v = wrap(dev, p.v.data(), p.v.size() * 4);
  Buffer o = wrap(dev, p.o.data(), p.o.size() * 4);
  Buffer lse = wrap(dev, p.lse.data(), p.lse.size() * 4);
  Expected<uint64_t> ws = kernel.workspaceSize(p.shape);
  ASSERT_TRUE(ws.ok()) << ws.status().toString();
  EXPECT_EQ(*ws, 0u);
  auto [o0, lse0] = blockingResult(kernel, p, 0);
  AttentionArgs a{&q, &k, &v, &o, &lse, p.shape, {}, {}, {}};
  LaunchInfo info;
  Status s = kernel.enqueue(a, /*stream=*/nullptr, nullptr, {}, &info);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(info.kvSplits, 1);
  EXPECT_EQ(std::memcmp(p.o.data(), o0.data(), o0.size() * 4), 0);
  EXPECT_EQ(std::memcmp(p.lse.data(), lse0.data(), lse0.size() * 4), 0);
}

// The split kernel and its combine kernel over the caller's workspace, as
// large as workspaceSize says: the blocking launch's bits, for the
// automatic split count and a forced one. Too small, missing, foreign or
// aliased workspaces are refused by name.
TEST(EnqueueTest, SplitKvUsesTheCallersWorkspace) {
  Kernel kernel = loadKernel("split_f32");
  Device dev = kernel.device();
  Problem p({2, 4, 4, 3, 300}, 64, 21);
  Buffer q = wrap(dev, p.q.data(), p.q.size() * 4);
  Buffer k = wrap(dev, p.k.data(), p.k.size() * 4);
  Buffer v = wrap(dev, p.v.data(), p.v.size() * 4);
  Buffer o = wrap(dev, p.o.data(), p.o.size() * 4);
  Buffer lse = wrap(dev, p.lse.data(), p.lse.size() * 4);
  AttentionArgs a{&q, &k, &v, &o, &lse, p.shape, {}, {}, {}};
  for (int64_t splits : {0, 5}) {
    SCOPED_TRACE("kv_splits " + std::to_string(splits));
    Expected<uint64_t> bytes = kernel.workspaceSize(p.shape, splits);
    ASSERT_TRUE(bytes.ok()) << bytes.status().toString();
    Expected<KvSplitPlan> plan =
        planKvSplits(kernel.info(), p.shape, dev.limits(), splits);
    ASSERT_TRUE(plan.ok());
    // O [S*B, Hq, Lq, D] f32, then LSE [S*B, Hq, Lq] at a 256-byte offset.
    const uint64_t S = uint64_t(plan->kvSplits);
    const uint64_t oBytes = S * 2 * 4 * 3 * 64 * 4;
    EXPECT_EQ(*bytes, (oBytes + 255) / 256 * 256 + S * 2 * 4 * 3 * 4);
    std::vector<uint8_t> workspace(*bytes);
    Buffer ws = wrap(dev, workspace.data(), workspace.size());
    LaunchOptions options;
    options.kvSplits = splits;
    LaunchInfo info;
    Status s = kernel.enqueue(a, nullptr, &ws, options, &info);
    ASSERT_TRUE(s.ok()) << s.toString();
    EXPECT_EQ(info.kvSplits, int64_t(S));
    EXPECT_FALSE(info.workspaceAllocated);
    auto [o0, lse0] = blockingResult(kernel, p, splits);
    EXPECT_EQ(std::memcmp(p.o.data(), o0.data(), o0.size() * 4), 0);
    EXPECT_EQ(std::memcmp(p.lse.data(), lse0.data(), lse0.size() * 4), 0);

    Buffer small = wrap(dev, workspace.data(), workspace.size() - 4);
    EXPECT_EQ(kernel.enqueue(a, nullptr, &small, options).message(),
              "the workspace holds " + std::to_string(*bytes - 4) +
                  " bytes but " + std::to_string(S) + " K/V splits need " +
                  std::to_string(*bytes) +
                  " (Kernel::workspaceSize, fa_module_workspace_size)");
    EXPECT_EQ(kernel.enqueue(a, nullptr, nullptr, options).message(),
              "kernel 'split_f32' is a split-KV kernel: its " +
                  std::to_string(S) + " K/V splits need a workspace of " +
                  std::to_string(*bytes) +
                  " bytes (Kernel::workspaceSize, fa_module_workspace_size)");
  }
  EXPECT_EQ(kernel.enqueue(a, nullptr, &o).message(),
            "the workspace is also passed as O: the split kernel writes it");
  Expected<Device> sim = Device::open("gfx906-sim");
  ASSERT_TRUE(sim.ok());
  Expected<Buffer> foreign = sim->allocate(1 << 20);
  ASSERT_TRUE(foreign.ok());
  EXPECT_EQ(kernel.enqueue(a, nullptr, &*foreign).message(),
            "the workspace was not allocated on device 'host'");
  EXPECT_EQ(kernel.workspaceSize(p.shape, 2000).status().code(),
            ErrorCode::InvalidArgument);
}

/// A paged problem over the caller's memory: caches of `numPages` pages,
/// sequence b's pages at table[b][j] = (b * maxPages + j) * 7 % numPages
/// (shuffled, never shared), lengths `lengths`.
struct PagedProblem {
  AttentionShape shape;
  int64_t d, pageSize, maxPages, numPages;
  std::vector<int32_t> table, lengths;
  std::vector<float> q, kc, vc, o, lse;
  PagedProblem(AttentionShape s, int64_t d, int64_t pageSize,
               std::vector<int32_t> lens, int64_t maxPages)
      : shape(s), d(d), pageSize(pageSize), maxPages(maxPages),
        numPages(s.batch * maxPages), lengths(std::move(lens)) {
    for (int64_t i = 0; i < shape.batch * maxPages; ++i)
      table.push_back(int32_t(i * 7 % numPages));
    q = values(size_t(shape.batch * shape.headsQ * shape.seqQ * d), 5);
    kc = values(size_t(numPages * pageSize * shape.headsKv * d), 6);
    vc = values(kc.size(), 7);
    o.assign(q.size(), -7.0f);
    lse.assign(size_t(shape.batch * shape.headsQ * shape.seqQ), -7.0f);
  }
};

// Trusted paged metadata (no host copies): the device buffers are read by
// the kernel, Lk only bounds the lengths (a captured launch keeps it), and
// the result is the blocking launch's, which checked its host copies.
// checkMetadata then finds what the trusting launch did not look at.
TEST(EnqueueTest, PagedTrustsTheDeviceMetadataAndCheckMetadataReadsIt) {
  Kernel kernel = loadKernel("paged_split_f32");
  Device dev = kernel.device();
  PagedProblem p({3, 4, 2, 1, 0}, 64, 16, {37, 0, 100}, 8);
  p.shape.seqK = 100; // the blocking launch: the longest sequence
  Buffer q = wrap(dev, p.q.data(), p.q.size() * 4);
  Buffer kc = wrap(dev, p.kc.data(), p.kc.size() * 4);
  Buffer vc = wrap(dev, p.vc.data(), p.vc.size() * 4);
  Buffer table = wrap(dev, p.table.data(), p.table.size() * 4);
  Buffer lengths = wrap(dev, p.lengths.data(), p.lengths.size() * 4);
  std::vector<float> o0(p.o), lse0(p.lse);
  Buffer o = wrap(dev, o0.data(), o0.size() * 4);
  Buffer lse = wrap(dev, lse0.data(), lse0.size() * 4);
  PagedKvArgs pg;
  pg.blockTable = &table;
  pg.cacheSeqlens = &lengths;
  pg.pageSize = p.pageSize;
  pg.maxPages = p.maxPages;
  pg.numPages = p.numPages;
  pg.hostBlockTable = Int32Span(p.table);
  pg.hostCacheSeqlens = Int32Span(p.lengths);
  AttentionArgs blocking{&q, &kc, &vc, &o, &lse, p.shape, {}, pg, {}};
  Status s = kernel.launch(blocking, {});
  ASSERT_TRUE(s.ok()) << s.toString();

  // The engine's call: no host copies, Lk the cache's capacity.
  AttentionShape bound = p.shape;
  bound.seqK = p.maxPages * p.pageSize;
  PagedKvArgs trusted = pg;
  trusted.hostBlockTable = {};
  trusted.hostCacheSeqlens = {};
  Buffer o2 = wrap(dev, p.o.data(), p.o.size() * 4);
  Buffer lse2 = wrap(dev, p.lse.data(), p.lse.size() * 4);
  AttentionArgs a{&q, &kc, &vc, &o2, &lse2, bound, {}, trusted, {}};
  // The same split count as the blocking launch, whose Lk was smaller.
  LaunchInfo used;
  ASSERT_TRUE(kernel.launch(blocking, {}, &used).ok());
  Expected<uint64_t> bytes = kernel.workspaceSize(bound, used.kvSplits);
  ASSERT_TRUE(bytes.ok()) << bytes.status().toString();
  std::vector<uint8_t> workspace(*bytes);
  Buffer ws = wrap(dev, workspace.data(), workspace.size());
  LaunchOptions options;
  options.kvSplits = used.kvSplits;
  // Lk the longest sequence: the blocking launch's bits.
  AttentionArgs exact = a;
  exact.shape.seqK = p.shape.seqK;
  s = kernel.enqueue(exact, nullptr, &ws, options);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(std::memcmp(p.o.data(), o0.data(), o0.size() * 4), 0);
  EXPECT_EQ(std::memcmp(p.lse.data(), lse0.data(), lse0.size() * 4), 0);
  // Lk the capacity: the splits may cut the keys elsewhere (the fixture
  // divides ceil(Lk / block_n) blocks), so the same values up to rounding.
  std::fill(p.o.begin(), p.o.end(), -7.0f);
  s = kernel.enqueue(a, nullptr, &ws, options);
  ASSERT_TRUE(s.ok()) << s.toString();
  for (size_t i = 0; i < o0.size(); ++i)
    ASSERT_NEAR(p.o[i], o0[i], 1e-5) << i;
  for (size_t i = 0; i < lse0.size(); ++i)
    if (std::isinf(lse0[i]))
      ASSERT_EQ(p.lse[i], lse0[i]) << i;
    else
      ASSERT_NEAR(p.lse[i], lse0[i], 1e-5) << i;
  FA_ASSERT_OK(kernel.checkMetadata(a));

  // Lk past the table's capacity is refused without reading anything.
  AttentionArgs tooLong = a;
  tooLong.shape.seqK = bound.seqK + 1;
  EXPECT_EQ(kernel.enqueue(tooLong, nullptr, &ws, options).message(),
            "invalid shape: Lk is 129, more keys than max_pages * page_size "
            "= 8 * 16 (a paged enqueue's Lk bounds cache_seqlens)");
  // Host copies, when given, are checked: Lk must bound them.
  AttentionArgs hosted = a;
  hosted.paged->hostBlockTable = Int32Span(p.table);
  hosted.paged->hostCacheSeqlens = Int32Span(p.lengths);
  hosted.shape.seqK = 99;
  EXPECT_EQ(kernel.enqueue(hosted, nullptr, &ws, options).message(),
            "invalid shape: Lk is 99, but cache_seqlens[2] = 100 (a paged "
            "enqueue's Lk bounds cache_seqlens)");

  // A bad entry in the device table: the trusting enqueue cannot see it,
  // checkMetadata reads the device copy and names it.
  p.table[1 * 8 + 0] = int32_t(p.numPages); // sequence 1 has no keys: unread
  FA_ASSERT_OK(kernel.checkMetadata(a));
  p.table[2 * 8 + 6] = int32_t(p.numPages);
  EXPECT_EQ(kernel.checkMetadata(a).message(),
            "block_table[2][6] = 24 is out of range: the cache has 24 pages");
  p.table[2 * 8 + 6] = 3;
  p.lengths[0] = 129;
  EXPECT_EQ(kernel.checkMetadata(a).message(),
            "cache_seqlens[0] = 129 needs 9 pages of 16, block_table has 8 "
            "per sequence");
  p.lengths[0] = 37;
  AttentionArgs shortBound = a;
  shortBound.shape.seqK = 50;
  EXPECT_EQ(kernel.checkMetadata(shortBound).message(),
            "cache_seqlens[2] = 100 is more than Lk = 50, the bound the launch "
            "passes");
  AttentionArgs dense = a;
  dense.paged.reset();
  EXPECT_EQ(kernel.checkMetadata(dense).message(),
            "kernel 'paged_split_f32' takes a paged K/V cache, the arguments "
            "describe a dense batch");
}

// Trusted cu_seqlens: the blocking launch's bits; checkMetadata finds a
// sequence longer than max_seqlen.
TEST(EnqueueTest, VarlenTrustsTheDeviceMetadata) {
  Kernel kernel = loadKernel("varlen_split_f32");
  Device dev = kernel.device();
  std::vector<int32_t> cuQ = {0, 5, 5, 12}, cuK = {0, 40, 41, 140};
  const int64_t hq = 4, hkv = 2, d = 64, totalQ = 12, totalK = 140;
  AttentionShape shape{3, hq, hkv, 7, 100};
  std::vector<float> q = values(size_t(totalQ * hq * d), 1),
                     k = values(size_t(totalK * hkv * d), 2),
                     v = values(size_t(totalK * hkv * d), 3);
  std::vector<float> o0(q.size(), -7.0f), lse0(size_t(hq * totalQ), -7.0f);
  std::vector<float> o1(o0), lse1(lse0);
  Buffer bq = wrap(dev, q.data(), q.size() * 4);
  Buffer bk = wrap(dev, k.data(), k.size() * 4);
  Buffer bv = wrap(dev, v.data(), v.size() * 4);
  Buffer bcq = wrap(dev, cuQ.data(), cuQ.size() * 4);
  Buffer bck = wrap(dev, cuK.data(), cuK.size() * 4);
  Buffer bo0 = wrap(dev, o0.data(), o0.size() * 4);
  Buffer bl0 = wrap(dev, lse0.data(), lse0.size() * 4);
  Buffer bo1 = wrap(dev, o1.data(), o1.size() * 4);
  Buffer bl1 = wrap(dev, lse1.data(), lse1.size() * 4);
  VarlenArgs vl;
  vl.cuSeqlensQ = &bcq;
  vl.cuSeqlensK = &bck;
  vl.totalQ = totalQ;
  vl.totalK = totalK;
  vl.hostCuSeqlensQ = Int32Span(cuQ);
  vl.hostCuSeqlensK = Int32Span(cuK);
  AttentionArgs blocking{&bq, &bk, &bv, &bo0, &bl0, shape, {}, {}, vl};
  LaunchInfo used;
  Status s = kernel.launch(blocking, {}, &used);
  ASSERT_TRUE(s.ok()) << s.toString();
  VarlenArgs trusted = vl;
  trusted.hostCuSeqlensQ = {};
  trusted.hostCuSeqlensK = {};
  AttentionArgs a{&bq, &bk, &bv, &bo1, &bl1, shape, {}, {}, trusted};
  Expected<uint64_t> bytes = kernel.workspaceSize(shape, used.kvSplits);
  ASSERT_TRUE(bytes.ok());
  std::vector<uint8_t> workspace(*bytes);
  Buffer ws = wrap(dev, workspace.data(), workspace.size());
  LaunchOptions options;
  options.kvSplits = used.kvSplits;
  s = kernel.enqueue(a, nullptr, &ws, options);
  ASSERT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(std::memcmp(o1.data(), o0.data(), o0.size() * 4), 0);
  EXPECT_EQ(std::memcmp(lse1.data(), lse0.data(), lse0.size() * 4), 0);
  FA_ASSERT_OK(kernel.checkMetadata(a));
  cuQ[2] = 13; // sequence 1 now 8 rows, sequence 2 -1
  EXPECT_EQ(kernel.checkMetadata(a).message(),
            "cu_seqlens_q is not non-decreasing: cu_seqlens_q[3] = 12 < "
            "cu_seqlens_q[2] = 13");
  cuQ[2] = 5;
  AttentionArgs negative = a;
  negative.varlen->totalK = -1;
  EXPECT_EQ(kernel.enqueue(negative, nullptr, &ws, options).message(),
            "total_k = -1 is negative");
}

// One module, many threads, each with its own outputs and workspace: every
// result is the serial one.
TEST(EnqueueTest, ConcurrentEnqueuesOfOneModule) {
  Kernel kernel = loadKernel("split_f32");
  constexpr int threads = 6;
  std::vector<Problem> problems;
  for (int t = 0; t < threads; ++t)
    problems.emplace_back(AttentionShape{1, 4, 2, 1 + t, 200 + 37 * t}, 64,
                          100 + uint64_t(t));
  std::vector<std::string> failures(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      Problem &p = problems[size_t(t)];
      Device dev = kernel.device();
      Expected<Buffer> q = dev.wrap(p.q.data(), p.q.size() * 4),
                       k = dev.wrap(p.k.data(), p.k.size() * 4),
                       v = dev.wrap(p.v.data(), p.v.size() * 4),
                       o = dev.wrap(p.o.data(), p.o.size() * 4),
                       lse = dev.wrap(p.lse.data(), p.lse.size() * 4);
      Expected<uint64_t> bytes = kernel.workspaceSize(p.shape);
      std::vector<uint8_t> workspace(bytes ? *bytes : 1);
      Expected<Buffer> ws = dev.wrap(workspace.data(), workspace.size());
      AttentionArgs a{&*q, &*k, &*v, &*o, &*lse, p.shape, {}, {}, {}};
      for (int round = 0; round < 3; ++round)
        if (Status s = kernel.enqueue(a, nullptr, &*ws); !s.ok())
          failures[size_t(t)] = s.toString();
    });
  for (std::thread &t : pool)
    t.join();
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(failures[size_t(t)], "");
    const Problem &p = problems[size_t(t)];
    auto [o0, lse0] = blockingResult(kernel, p, 0);
    EXPECT_EQ(std::memcmp(p.o.data(), o0.data(), o0.size() * 4), 0) << t;
    EXPECT_EQ(std::memcmp(p.lse.data(), lse0.data(), lse0.size() * 4), 0) << t;
  }
}

// The C API's engine calls: fa_buffer_wrap, fa_module_workspace_size,
// fa_module_enqueue, fa_module_check_metadata.
TEST(EnqueueTest, CApi) {
  fa_device *dev = nullptr;
  ASSERT_EQ(fa_device_open("host", &dev), FA_OK) << fa_last_error();
  fa_module *mod = nullptr;
  ASSERT_EQ(fa_module_load(dev, test::fixturePath("split_f32").c_str(), &mod),
            FA_OK)
      << fa_last_error();
  Problem p({1, 4, 4, 2, 130}, 64, 3);
  fa_buffer *b[5] = {};
  std::vector<float> *data[5] = {&p.q, &p.k, &p.v, &p.o, &p.lse};
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(fa_buffer_wrap(dev, data[i]->data(), data[i]->size() * 4, &b[i]),
              FA_OK)
        << fa_last_error();
  fa_attention_args a = {};
  a.q = b[0], a.k = b[1], a.v = b[2], a.o = b[3], a.lse = b[4];
  a.batch = 1, a.heads_q = 4, a.heads_kv = 4, a.seq_q = 2, a.seq_k = 130;
  size_t bytes = 0;
  ASSERT_EQ(fa_module_workspace_size(mod, nullptr, &a, 3, &bytes), FA_OK)
      << fa_last_error();
  EXPECT_EQ(bytes, size_t((3 * 4 * 2 * 64 * 4 + 255) / 256 * 256 + 3 * 4 * 2 * 4));
  std::vector<uint8_t> workspace(bytes);
  fa_buffer *ws = nullptr;
  ASSERT_EQ(fa_buffer_wrap(dev, workspace.data(), bytes, &ws), FA_OK);
  fa_enqueue_options o = {};
  o.workspace = ws;
  o.kv_splits = 3;
  ASSERT_EQ(fa_module_enqueue(mod, nullptr, &a, nullptr, nullptr, &o), FA_OK)
      << fa_last_error();
  EXPECT_EQ(o.kv_splits_used, 3);
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath("split_f32"));
  auto [o0, lse0] = blockingResult(*m->kernel(), p, 3);
  EXPECT_EQ(std::memcmp(p.o.data(), o0.data(), o0.size() * 4), 0);
  EXPECT_EQ(fa_module_check_metadata(mod, nullptr, &a, nullptr, nullptr),
            FA_OK);
  o.workspace = nullptr;
  EXPECT_EQ(fa_module_enqueue(mod, nullptr, &a, nullptr, nullptr, &o),
            FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("need a workspace of"),
            std::string::npos)
      << fa_last_error();
  fa_paged_kv paged = {};
  fa_varlen varlen = {};
  EXPECT_EQ(fa_module_enqueue(mod, nullptr, &a, &paged, &varlen, &o),
            FA_ERROR_INVALID_ARGUMENT);
  // Both: a mixed launch, which this (dense) kernel does not take.
  EXPECT_NE(std::string(fa_last_error()).find("does not take a mixed batch"),
            std::string::npos)
      << fa_last_error();
  fa_buffer *null = nullptr;
  EXPECT_EQ(fa_buffer_wrap(dev, nullptr, 4, &null), FA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(null, nullptr);
  for (fa_buffer *x : b)
    fa_buffer_free(x);
  fa_buffer_free(ws);
  fa_module_unload(mod);
  fa_device_close(dev);
  // The caller's memory is intact after the handles are gone.
  EXPECT_EQ(std::memcmp(p.o.data(), o0.data(), o0.size() * 4), 0);
}

} // namespace
