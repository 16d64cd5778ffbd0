//===- PagedKvTest.cpp - Paged K/V launches: metadata, words, kernels -----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's side of ABI version 3 (KernelAbi.h), on the hand-written
// paged kernels of kernels/paged_attention_host.cpp: the host-side checks of
// the block table and lengths, the 67 words (55-66 by hand), the caches'
// sizes and strides, Lk = the longest sequence, the kernels validated
// against the fp64 paged reference (page sizes 1 to 256, shuffled and
// shared pages, lengths 0 and 1 and partial pages, GQA, causal, split-KV),
// the planted kernel bugs the validation catches, the C API, and the
// errors.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"
#include "fa/fa_runtime.h"
#include "gpu/Vendor.h"

#include <cmath>
#include <cstring>
#include <iterator>

using namespace fa;
using test::failures;
using test::loadKernel;
using test::loadModule;

namespace {

PagedCacheOptions paging(int64_t pageSize, std::vector<int32_t> lengths = {},
                         bool shuffle = true, bool share = false) {
  PagedCacheOptions p;
  p.pageSize = pageSize;
  p.cacheSeqlens = std::move(lengths);
  p.shufflePages = shuffle;
  p.sharePages = share;
  return p;
}

Expected<ValidationReport> tryValidate(const Kernel &kernel,
                                       AttentionShape shape,
                                       const PagedCacheOptions &paged,
                                       uint64_t seed = 1, int64_t kvSplits = 0,
                                       Distribution dist = Distribution::Normal,
                                       AttentionLayout layout = {}) {
  ValidationOptions o;
  o.shape = shape;
  o.seed = seed;
  o.dist = dist;
  o.layout = layout;
  o.paged = paged;
  o.launch.kvSplits = kvSplits;
  o.launch.checkRaces = true;
  return validateKernel(kernel, o);
}

ValidationReport validate(const Kernel &kernel, AttentionShape shape,
                          const PagedCacheOptions &paged, uint64_t seed = 1,
                          int64_t kvSplits = 0,
                          Distribution dist = Distribution::Normal,
                          AttentionLayout layout = {}) {
  Expected<ValidationReport> r =
      tryValidate(kernel, shape, paged, seed, kvSplits, dist, layout);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r ? r.take() : ValidationReport();
}

int64_t longest(const PagedProblem &p) {
  int64_t m = 0;
  for (int32_t l : p.cacheSeqlens)
    m = std::max<int64_t>(m, l);
  return m;
}

//===----------------------------------------------------------------------===//
// Kernels against the fp64 paged reference
//===----------------------------------------------------------------------===//

// Page sizes 16, 64 and 256 (and 1 and 7), pages shuffled or in order,
// shared prefixes, drawn lengths (a 0, a 1, partial last pages), GQA,
// decode and prefill rows.
TEST(PagedKvTest, F32MatchesThePagedReference) {
  Kernel k = loadKernel("paged_f32");
  for (int64_t ps : {16, 64, 256, 1, 7})
    for (AttentionShape shape :
         {AttentionShape{4, 8, 2, 1, 300}, AttentionShape{3, 2, 1, 21, 70}})
      for (bool share : {false, true}) {
        SCOPED_TRACE("page size " + std::to_string(ps) + " " +
                     shape.toString() + (share ? " shared" : ""));
        ValidationReport r = validate(k, shape, paging(ps, {}, true, share));
        EXPECT_TRUE(r.verdict.pass) << failures(r);
        EXPECT_LT(r.ours.maxAbsDiff, 1e-5);
        EXPECT_LT(r.ours.lseMaxAbsDiff, 1e-5);
        ASSERT_TRUE(r.paged);
        EXPECT_EQ(r.paged->pageSize, ps);
        EXPECT_EQ(r.paged->maxPages, (shape.seqK + ps - 1) / ps);
        // The drawn lengths put in a 0, the longest, and a 1 (B = 4).
        const std::vector<int32_t> &l = r.paged->cacheSeqlens;
        const int64_t full = shape.seqK - (ps > 1 && shape.seqK % ps == 0);
        EXPECT_NE(std::find(l.begin(), l.end(), 0), l.end());
        EXPECT_NE(std::find(l.begin(), l.end(), full), l.end());
        if (shape.batch >= 4)
          EXPECT_NE(std::find(l.begin(), l.end(), 1), l.end());
        for (int32_t len : l) {
          EXPECT_LE(len, shape.seqK);
          if (ps > 1 && len > 0)
            EXPECT_NE(len % ps, 0) << len; // a partly filled last page
        }
      }
  // Pages in order, given lengths (a full last page too).
  ValidationReport r =
      validate(k, {3, 4, 2, 5, 64}, paging(16, {64, 17, 0}, /*shuffle=*/false));
  EXPECT_TRUE(r.verdict.pass) << failures(r);
  EXPECT_EQ(r.paged->cacheSeqlens, (std::vector<int32_t>{64, 17, 0}));
  EXPECT_EQ(r.paged->blockTable[0], 0); // in order
  EXPECT_EQ(r.paged->blockTable[4], 4);
}

// Causal bottom-right within each sequence's own length: rows of a short
// sequence that see no key (Lq > len_b) are O = 0, LSE = -inf.
TEST(PagedKvTest, F16CausalWithinEachSequence) {
  Kernel k = loadKernel("paged_f16_causal");
  for (int64_t ps : {16, 64, 256})
    for (Distribution dist : {Distribution::Normal, Distribution::Outliers}) {
      ValidationReport r = validate(k, {4, 4, 2, 37, 200},
                                    paging(ps, {}, true, ps == 64), 3, 0, dist);
      EXPECT_TRUE(r.verdict.pass) << ps << "\n" << failures(r);
    }
  // Lengths shorter and longer than Lq, and one of 0.
  ValidationReport r =
      validate(k, {4, 2, 1, 30, 90}, paging(16, {5, 90, 0, 31}), 4);
  EXPECT_TRUE(r.verdict.pass) << failures(r);
}

// GQA-packed rows, no LSE, bf16, distinct row padding of every tensor.
TEST(PagedKvTest, Bf16PackedWithPaddedRows) {
  Kernel k = loadKernel("paged_bf16_packed");
  ValidationReport r =
      validate(k, {3, 8, 2, 3, 150}, paging(32, {}, true, true), 7, 0,
               Distribution::Outliers, AttentionLayout::distinct());
  EXPECT_TRUE(r.verdict.pass) << failures(r);
  EXPECT_FALSE(r.ours.lseCompared);
  // The caches' strides: (page, head, row) of [pages, 32, 2, 32 + pad].
  EXPECT_EQ(r.strides.k, (TensorStrides{32 * 2 * 34, 34, 2 * 34}));
  EXPECT_EQ(r.strides.v, (TensorStrides{32 * 2 * 35, 35, 2 * 35}));
  EXPECT_EQ(r.layout.k.order, TensorLayout::Blhd);
  EXPECT_EQ(r.layout.v.order, TensorLayout::Blhd);
}

// A paged split-KV pair: S over the longest sequence's K/V blocks, the
// combine kernel merging them; forced, automatic, more splits than blocks.
TEST(PagedKvTest, SplitKvPairs) {
  Kernel k = loadKernel("paged_split_f32");
  for (int64_t splits : {int64_t(1), int64_t(3), int64_t(0), int64_t(50)})
    for (int64_t ps : {16, 64, 256}) {
      ValidationReport r = validate(k, {4, 4, 2, 1, 300},
                                    paging(ps, {}, true, ps == 16), 2, splits);
      SCOPED_TRACE("S=" + std::to_string(splits) + " page size " +
                   std::to_string(ps));
      EXPECT_TRUE(r.verdict.pass) << failures(r);
      EXPECT_LT(r.ours.lseMaxAbsDiff, 1e-5);
      AttentionShape planned{4, 4, 2, 1, longest(*r.paged)};
      Expected<KvSplitPlan> plan =
          planKvSplits(k.info(), planned, k.device().limits(), splits);
      FA_ASSERT_OK(plan);
      EXPECT_EQ(r.kvSplits, plan->kvSplits);
    }
  Kernel packed = loadKernel("paged_split_f16_packed_causal");
  for (int64_t splits : {int64_t(0), int64_t(2), int64_t(17)}) {
    ValidationReport r = validate(packed, {3, 8, 2, 5, 120},
                                  paging(16, {}, true, true), 5, splits);
    EXPECT_TRUE(r.verdict.pass) << splits << "\n" << failures(r);
  }
}

// Every sequence empty: Lk = 0, every row O = 0 and LSE = -inf, for the
// plain and the split kernel (which plans S over 0 blocks).
TEST(PagedKvTest, EverySequenceEmpty) {
  for (const char *name : {"paged_f32", "paged_split_f32"}) {
    Kernel k = loadKernel(name);
    ValidationReport r = validate(k, {2, 2, 1, 3, 40}, paging(16, {0, 0}));
    EXPECT_TRUE(r.verdict.pass) << name << "\n" << failures(r);
    EXPECT_EQ(r.kvSplits, 1);
  }
}

// Kernel bugs the paged validation catches: reading the poisoned tail of
// the last page, the table's row stride taken from Lk, the causal diagonal
// from Lk.
TEST(PagedKvTest, CatchesPlantedKernelBugs) {
  ValidationReport tail = validate(loadKernel("paged_bug_reads_tail"),
                                   {3, 2, 1, 4, 100}, paging(16));
  EXPECT_FALSE(tail.verdict.pass);
  EXPECT_GT(tail.ours.nonFinite, 0u);
  // The same kernel passes where no page is partly filled: the poison is
  // what catches it.
  ValidationReport whole = validate(loadKernel("paged_bug_reads_tail"),
                                    {2, 2, 1, 4, 64}, paging(16, {64, 32}));
  EXPECT_TRUE(whole.verdict.pass) << failures(whole);

  // Lk = 150: a stride of 10 entries where the table has 19.
  ValidationReport stride =
      validate(loadKernel("paged_bug_table_stride"), {3, 2, 1, 4, 300},
               paging(16, {0, 150, 77}));
  EXPECT_FALSE(stride.verdict.pass);
  ValidationReport causal =
      validate(loadKernel("paged_bug_causal_lk"), {3, 2, 1, 8, 100},
               paging(16, {5, 100, 37}));
  EXPECT_FALSE(causal.verdict.pass);
}

//===----------------------------------------------------------------------===//
// The words and their checks
//===----------------------------------------------------------------------===//

/// A paged launch's buffers and host metadata, on the host device.
struct PagedBuffers {
  Buffer q, k, v, o, lse, table, lengths;
  std::vector<int32_t> hostTable, hostLengths;
  int64_t pageSize, maxPages, numPages;

  AttentionArgs args(const AttentionShape &shape) {
    AttentionArgs a{&q, &k, &v, &o, &lse, shape, std::nullopt, std::nullopt};
    PagedKvArgs p;
    p.blockTable = &table;
    p.cacheSeqlens = &lengths;
    p.pageSize = pageSize;
    p.maxPages = maxPages;
    p.numPages = numPages;
    p.hostBlockTable = hostTable;
    p.hostCacheSeqlens = hostLengths;
    a.paged = p;
    return a;
  }
};

/// B = 3, Hq = 4, Hkv = 2, Lq = 5, D = 64, pages of 16, 4 per sequence, 9
/// pages; lengths 40, 7, 0 (the longest 40).
PagedBuffers pagedBuffers(const Device &d) {
  const size_t D = 64, B = 3, Hq = 4, Hkv = 2, Lq = 5;
  PagedBuffers b{d.allocate(B * Hq * Lq * D * 4).take(),
                 d.allocate(9 * 16 * Hkv * D * 4).take(),
                 d.allocate(9 * 16 * Hkv * D * 4).take(),
                 d.allocate(B * Hq * Lq * D * 4).take(),
                 d.allocate(B * Hq * Lq * 4).take(),
                 d.allocate(B * 4 * 4).take(),
                 d.allocate(B * 4).take(),
                 {5, 2, 8, -1, 3, -1, -1, -1, 99, 99, 99, 99},
                 {40, 7, 0},
                 16,
                 4,
                 9};
  return b;
}

// Words 55..66: the table and lengths descriptors (data pointer twice,
// offset 0, size in int32 elements, stride 1), the page size, the table's
// row stride; a plain paged kernel's workspace is null and S = 1; Lk is the
// longest sequence; K and V take the caches' strides.
TEST(PagedKvTest, PacksWordsFiftyFiveToSixtySix) {
  Device d = test::hostDevice();
  KernelInfo info = test::fixtureManifest("paged_f32").kernels[0];
  ASSERT_TRUE(info.paged);
  ASSERT_EQ(info.abiVersion, 3);
  PagedBuffers b = pagedBuffers(d);
  const AttentionShape shape{3, 4, 2, 5, 40};
  Expected<PackedLaunch> p = packAttentionArgs(info, b.args(shape), d.limits());
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->numWords, 67u);
  const uint64_t *w = p->words.data();
  const uint64_t expected[12] = {b.table.address(),
                                 b.table.address(),
                                 0,
                                 b.table.size() / 4,
                                 1,
                                 b.lengths.address(),
                                 b.lengths.address(),
                                 0,
                                 b.lengths.size() / 4,
                                 1,
                                 16,
                                 4};
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(w[FA_ABI_BLOCK_TABLE + i], expected[i]) << "word " << 55 + i;
  EXPECT_EQ(w[FA_ABI_BLOCK_TABLE + 3], 12u);
  EXPECT_EQ(w[FA_ABI_CACHE_SEQLENS + 3], 3u);
  EXPECT_EQ(w[FA_ABI_SIZES + 4], 40u); // Lk = max(cache_seqlens)
  // Not split: null workspace descriptors (stride 1, as a missing LSE's)
  // and S = 1.
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(w[FA_ABI_WS_O + i], i % 5 == 4 ? 1u : 0u) << "word " << 44 + i;
  EXPECT_EQ(w[FA_ABI_SPLITS], 1u);
  // K and V: (page, head, row within a page) of [9, 16, 2, 64].
  const uint64_t cache[3] = {16 * 2 * 64, 64, 2 * 64};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(w[FA_ABI_STRIDES + 3 + i], cache[i]) << "K stride " << i;
    EXPECT_EQ(w[FA_ABI_STRIDES + 6 + i], cache[i]) << "V stride " << i;
  }
  EXPECT_EQ(w[FA_ABI_STRIDES + 0], uint64_t(4 * 5 * 64)); // Q batch
  // Grid (ceil(Lq / 16), Hq, B).
  EXPECT_EQ(p->geometry.grid[0], 1u);
  EXPECT_EQ(p->geometry.grid[1], 4u);
  EXPECT_EQ(p->geometry.grid[2], 3u);
  EXPECT_FALSE(p->combineGeometry);
  EXPECT_EQ(p->split.kvSplits, 1);

  // Words 0..43 are a dense kernel's with the caches as K and V.
  KernelInfo dense = info;
  dense.paged = false;
  dense.abiVersion = 1;
  AttentionArgs denseArgs = b.args({3, 4, 2, 5, 40});
  denseArgs.paged.reset();
  AttentionStrides st = AttentionStrides::contiguous({3, 4, 2, 5, 40}, 64);
  st.k = st.v = pagedCacheStrides(16, 2, 64);
  denseArgs.strides = st;
  denseArgs.shape.seqK = 16; // within the cache buffers
  Expected<PackedLaunch> v1 = packAttentionArgs(dense, denseArgs, d.limits());
  FA_ASSERT_OK(v1);
  for (int i = 0; i < FA_ABI_V1_NUM_WORDS; ++i)
    if (i != FA_ABI_SIZES + 4)
      EXPECT_EQ(p->words[i], v1->words[i]) << "word " << i;

  // A paged split-KV kernel: S from Lk = 40 and its workspace, the combine
  // kernel's grid.
  KernelInfo split = test::fixtureManifest("paged_split_f32").kernels[0],
             combine = test::fixtureManifest("paged_split_f32").kernels[1];
  ASSERT_TRUE(split.splitKv && split.paged && combine.isCombine());
  EXPECT_EQ(combine.abiVersion, 3);
  p = packAttentionArgs(split, b.args(shape), d.limits(), &combine, 3);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->numWords, 67u);
  EXPECT_EQ(p->words[FA_ABI_SPLITS], 3u);
  EXPECT_EQ(p->words[FA_ABI_PAGE_SIZE], 16u);
  EXPECT_EQ(p->words[FA_ABI_BLOCK_TABLE_STRIDE], 4u);
  EXPECT_EQ(p->geometry.grid[0], 3u); // 1 Q tile x 3 splits
  ASSERT_TRUE(p->combineGeometry);
  EXPECT_EQ(p->combineGeometry->grid[0], 1u);
  Buffer wsO = d.allocate(p->split.workspaceOBytes).take();
  Buffer wsLse = d.allocate(p->split.workspaceLseBytes).take();
  FA_ASSERT_OK(bindWorkspace(*p, split, wsO, wsLse));
  EXPECT_EQ(p->words[FA_ABI_WS_O + 1], wsO.address());
  EXPECT_EQ(p->words[FA_ABI_BLOCK_TABLE + 1], b.table.address());
  // Automatic S: n = ceil(40 / 16) = 3 blocks, W = 12 workgroups, one
  // round: 4 x (ceil(3/S) + 1) + S is 17, 14, 11 for S = 1, 2, 3.
  p = packAttentionArgs(split, b.args(shape), d.limits(), &combine, 0);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->split.kvSplits, 3);

  // 32-bit index arithmetic: the size words fit in int32.
  info.indexBits = 32;
  p = packAttentionArgs(info, b.args(shape), d.limits());
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->words[FA_ABI_BLOCK_TABLE + 3], 12u);
}

// Version 3's kernarg segment: 67 words of 8 bytes with 64-bit indices; with
// 32-bit indices the table and lengths descriptors narrow like the others
// (offset, size, stride as 4 bytes), page size and stride stay 8 bytes.
TEST(PagedKvTest, KernargSegmentOfVersionThree) {
  uint64_t words[FA_ABI_MAX_WORDS];
  for (int i = 0; i < FA_ABI_MAX_WORDS; ++i)
    words[i] = 0x1000 + i;
  std::vector<uint8_t> wide = detail::packKernargSegment(words, 67, 64);
  ASSERT_EQ(wide.size(), 536u);
  EXPECT_EQ(std::memcmp(wide.data(), words, 536), 0);
  std::vector<uint8_t> narrow = detail::packKernargSegment(words, 67, 32);
  ASSERT_EQ(narrow.size(), 464u);
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, narrow.data() + at, 8);
    return v;
  };
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, narrow.data() + at, 4);
    return v;
  };
  // 7 descriptors of 32 bytes and 20 words of 8 (sizes, strides, S) = 384:
  // then block_table, cache_seqlens, page size, stride.
  for (int d = 0; d < 2; ++d) {
    const size_t base = 384 + 32 * size_t(d);
    const int first = FA_ABI_BLOCK_TABLE + 5 * d;
    EXPECT_EQ(u64(base), words[first]);
    EXPECT_EQ(u64(base + 8), words[first + 1]);
    EXPECT_EQ(u32(base + 16), uint32_t(words[first + 2]));
    EXPECT_EQ(u32(base + 20), uint32_t(words[first + 3]));
    EXPECT_EQ(u32(base + 24), uint32_t(words[first + 4]));
  }
  EXPECT_EQ(u64(448), words[FA_ABI_PAGE_SIZE]);
  EXPECT_EQ(u64(456), words[FA_ABI_BLOCK_TABLE_STRIDE]);
  for (int i = 55; i < 67; ++i)
    EXPECT_EQ(detail::isDescriptorIndexWord(size_t(i)),
              (i - 55) % 5 >= 2 && i < 65)
        << i;
  EXPECT_GE(detail::kMaxKernelParams, size_t(67));
}

TEST(PagedKvTest, MetadataErrorsNameTheFirstBadEntry) {
  Device d = test::hostDevice();
  KernelInfo info = test::fixtureManifest("paged_f32").kernels[0];
  const AttentionShape shape{3, 4, 2, 5, 40};
  auto edited = [&](auto edit) {
    PagedBuffers b = pagedBuffers(d);
    AttentionArgs a = b.args(shape);
    edit(b, a);
    a.paged->hostBlockTable = b.hostTable;
    a.paged->hostCacheSeqlens = b.hostLengths;
    return test::packError(info, a);
  };
  EXPECT_EQ(
      edited([](PagedBuffers &b, AttentionArgs &) { b.hostTable[4] = 9; }),
      "block_table[1][0] = 9 is out of range: the cache has 9 pages");
  EXPECT_EQ(
      edited([](PagedBuffers &b, AttentionArgs &) { b.hostTable[0] = -1; }),
      "block_table[0][0] = -1 is out of range: the cache has 9 pages");
  // Entries past a sequence's pages are not checked: sequence 2 is empty
  // and its row is 99s, sequence 0's fourth entry -1.
  EXPECT_EQ(
      edited([](PagedBuffers &b, AttentionArgs &) { b.hostLengths[1] = -2; }),
      "cache_seqlens[1] = -2 is negative");
  EXPECT_EQ(edited([](PagedBuffers &b, AttentionArgs &a) {
              b.hostLengths[2] = 65;
              a.shape.seqK = 65;
            }),
            "cache_seqlens[2] = 65 needs 5 pages of 16, block_table has 4 "
            "per sequence");
  EXPECT_EQ(
      edited([](PagedBuffers &b, AttentionArgs &) { b.hostTable.pop_back(); }),
      "block_table has 11 entries, B * max_pages = 12");
  EXPECT_EQ(edited([](PagedBuffers &b, AttentionArgs &) {
              b.hostLengths.push_back(1);
            }),
            "cache_seqlens has 4 entries, B = 3");
  EXPECT_EQ(
      edited([](PagedBuffers &, AttentionArgs &a) { a.paged->pageSize = 0; }),
      "page_size = 0 must be at least 1");
  EXPECT_EQ(
      edited([](PagedBuffers &, AttentionArgs &a) { a.paged->maxPages = 0; }),
      "max_pages = 0 must be at least 1 (block_table's columns)");
  EXPECT_EQ(
      edited([](PagedBuffers &, AttentionArgs &a) { a.paged->numPages = 0; }),
      "num_pages = 0 must be at least 1 (the pages of the K and V "
      "caches)");
  // Lk is the longest sequence.
  EXPECT_EQ(edited([](PagedBuffers &, AttentionArgs &a) {
              a.shape.seqK = 64; // the capacity, not the longest
            }),
            "invalid shape: Lk is 64, but a paged launch's Lk is the longest "
            "sequence, max(cache_seqlens) = 40 (cache_seqlens[0])");
  EXPECT_EQ(edited([](PagedBuffers &b, AttentionArgs &) {
              b.hostLengths = {0, 0, 0};
            }),
            "invalid shape: Lk is 40, but a paged launch's Lk is the longest "
            "sequence, max(cache_seqlens) = 0 (every sequence is empty)");
  EXPECT_EQ(edited([](PagedBuffers &, AttentionArgs &a) { a.shape.seqK = -1; }),
            "invalid shape: Lk is -1, must be at least 0");
  // The buffers: the metadata's, the caches'.
  EXPECT_EQ(edited([](PagedBuffers &, AttentionArgs &a) {
              a.paged->blockTable = nullptr;
            }),
            "buffer block_table is missing (needs 48 bytes)");
  EXPECT_EQ(edited([](PagedBuffers &b, AttentionArgs &) {
              b.table = test::hostDevice().allocate(44).take();
            }),
            "buffer block_table holds 44 bytes but [B=3, max_pages=4] of i32 "
            "needs 48 bytes");
  EXPECT_EQ(edited([](PagedBuffers &b, AttentionArgs &) {
              b.lengths = test::hostDevice().allocate(8).take();
            }),
            "buffer cache_seqlens holds 8 bytes but [B=3] of i32 needs 12 "
            "bytes");
  EXPECT_EQ(edited([](PagedBuffers &, AttentionArgs &a) {
              a.paged->numPages = 10; // one more than the buffers hold
            }),
            "buffer K holds 73728 bytes but the cache [num_pages=10, "
            "page_size=16, Hkv=2, D=64] of f32 with strides (2048, 64, 128, "
            "1) needs 81920 bytes");
  EXPECT_EQ(edited([](PagedBuffers &, AttentionArgs &a) {
              a.paged->blockTable = a.o;
            }),
            "buffer O is also passed as block_table: an output must not share "
            "memory with another operand");
  // Paged arguments exactly for a paged kernel.
  EXPECT_EQ(edited([](PagedBuffers &, AttentionArgs &a) { a.paged.reset(); }),
            "kernel 'paged_f32' reads a paged K/V cache (ABI version 3): its "
            "launch needs the block table, cache_seqlens and page size "
            "(AttentionArgs::paged)");
  KernelInfo dense = test::fixtureManifest("attn_f32").kernels[0];
  PagedBuffers b = pagedBuffers(d);
  EXPECT_EQ(test::packError(dense, b.args(shape)),
            "kernel 'attn_f32' reads a dense K/V (its manifest does not say "
            "\"paged\"): it takes no block table (AttentionArgs::paged)");
  KernelInfo wrong = info;
  wrong.abiVersion = 2;
  EXPECT_EQ(test::packError(wrong, b.args(shape)),
            "kernel 'paged_f32' has kernel ABI version 2, not 3 (paged K/V)");
}

// The same checks on a real launch, before the kernel sees anything: a table
// entry past the cache would be an out-of-bounds read.
TEST(PagedKvTest, LaunchChecksTheHostCopy) {
  Kernel k = loadKernel("paged_f32");
  Device d = test::hostDevice();
  PagedBuffers b = pagedBuffers(d);
  b.hostTable[1] = 12;
  Status s = k.launch(b.args({3, 4, 2, 5, 40}));
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message(),
            "block_table[0][1] = 12 is out of range: the cache has 9 pages");
  EXPECT_EQ(s.kernel(), "paged_f32");
  // Validation and the launch helpers refuse a paged kernel without paging,
  // and paging for a dense kernel.
  ValidationOptions o;
  o.shape = {1, 1, 1, 1, 8};
  Expected<ValidationReport> r = validateKernel(k, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "kernel 'paged_f32' reads a paged K/V cache (its manifest says "
            "\"paged\": true): its inputs need a page size (fa-run --paged "
            "PAGE_SIZE)");
  EXPECT_EQ(launchOnInputs(k, {1, 1, 1, 1, 8}).message(), r.status().message());
  o.paged = paging(16);
  r = validateKernel(loadKernel("attn_f32"), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "kernel 'attn_f32' reads a dense K/V (its manifest does not say "
            "\"paged\"): it takes no paged cache (fa-run --paged is for paged "
            "kernels)");
  // Lengths past the capacity, of the wrong count.
  r = tryValidate(k, {2, 1, 1, 1, 50}, paging(16, {51, 3}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cache_seqlens[0] = 51 is above the cache's capacity Lk = 50");
  r = tryValidate(k, {2, 1, 1, 1, 50}, paging(16, {5}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "cache_seqlens has 1 lengths, B = 2");
  r = tryValidate(k, {2, 1, 1, 1, 50}, paging(0));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "page_size = 0 must be at least 1");
  // A paged kernel benchmarks and launches on its own inputs.
  PagedCacheOptions pg = paging(16);
  LaunchInfo info;
  FA_ASSERT_OK(launchOnInputs(k, {2, 2, 1, 1, 40}, {}, &info, &pg));
  Expected<BenchResult> bench =
      benchmarkKernel(k, {2, 2, 1, 1, 40}, 1, {}, &pg);
  FA_ASSERT_OK(bench);
  EXPECT_GT(bench->flops, 0);
}

// The code object's record says version 2 where the manifest says 3.
TEST(PagedKvTest, VersionMismatchIsRefused) {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath("paged_bad_abi"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::ManifestError);
  EXPECT_EQ(m.status().message(),
            "kernel 'paged_bad_abi': the manifest says abi_version 3, the "
            "code object says 2 (the manifest does not describe this code "
            "object)");
}

// FLOPs of the (query, key) pairs each sequence's rows see.
TEST(PagedKvTest, Flops) {
  PagedProblem p;
  p.batch = 2;
  p.headsQ = 4;
  p.seqQ = 3;
  p.headDim = 8;
  p.cacheSeqlens = {5, 1};
  EXPECT_EQ(pagedAttentionFlops(p), 4.0 * 4 * 8 * (3 * 5 + 3 * 1));
  p.causal = true; // rows see 3, 4, 5 keys and 0, 0, 1
  EXPECT_EQ(pagedAttentionFlops(p), 4.0 * 4 * 8 * (3 + 4 + 5 + 1));
}

//===----------------------------------------------------------------------===//
// On a CUDA device
//===----------------------------------------------------------------------===//

/// The ABI words the PTX echo kernel stores to O (word 16, O's aligned
/// pointer), in order, as u64s: Lk (word 29, FA_ABI_SIZES + 4), S, the
/// workspace pointers, and words 55..66.
const int echoedWords[] = {29, 54, 44, 49, 55, 56, 57, 58,
                           59, 60, 61, 62, 63, 64, 65, 66};

/// A PTX kernel of the 67 u64 parameters of ABI version 3 whose thread 0
/// stores `echoedWords` to O.
std::string pagedEchoPtx() {
  std::string ptx = ".version 7.0\n.target sm_50\n.address_size 64\n\n"
                    ".visible .entry fa_paged_echo(\n";
  for (int i = 0; i < FA_ABI_V3_NUM_WORDS; ++i)
    ptx += "  .param .u64 w" + std::to_string(i) +
           (i + 1 < FA_ABI_V3_NUM_WORDS ? ",\n" : "\n");
  ptx += ")\n{\n"
         "  .reg .pred %p;\n  .reg .b32 %r1;\n  .reg .b64 %rd<3>;\n"
         "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p, %r1, 0;\n"
         "  @%p bra DONE;\n"
         "  ld.param.u64 %rd1, [w16];\n  cvta.to.global.u64 %rd1, %rd1;\n";
  for (size_t i = 0; i < std::size(echoedWords); ++i)
    ptx += "  ld.param.u64 %rd2, [w" + std::to_string(echoedWords[i]) +
           "];\n  st.global.u64 [%rd1+" + std::to_string(8 * i) + "], %rd2;\n";
  return ptx + "DONE:\n  ret;\n}\n";
}

// The CUDA backend passes a paged kernel its 67 words: one parameter per
// word, the table and lengths descriptors, the page size and stride among
// them.
TEST(PagedKvCudaTest, KernelSeesTheSixtySevenWords) {
  Expected<Device> device = Device::open("cuda");
  if (!device)
    GTEST_SKIP() << "no CUDA device: " << device.status().message();
  std::string ptx = pagedEchoPtx();
  Manifest m;
  m.compiler = "PagedKvTest";
  m.target = "sm_50";
  m.codeObjectFile = "echo.ptx";
  m.codeObjectFormat = "ptx";
  m.codeObjectBytes = ptx.size();
  m.codeObjectHash = formatFnv1a64(fnv1a64(ptx.data(), ptx.size()));
  KernelInfo k;
  k.name = k.symbol = "fa_paged_echo";
  k.abiVersion = 3;
  k.paged = true;
  k.dtype = DType::F32;
  k.headDim = 8;
  k.scale = 1;
  k.hasLse = true;
  k.blockM = 16;
  k.blockN = 16;
  k.threads = 32;
  k.waveSize = 32;
  m.kernels.push_back(k);
  Expected<Module> module = Module::loadFromMemory(
      *device, ptx.data(), ptx.size(), formatManifest(m), "echo.ptx");
  FA_ASSERT_OK(module);
  Expected<Kernel> kernel = module->kernel();
  FA_ASSERT_OK(kernel);

  // B = 2 sequences of 5 and 2 keys over 3 pages of 4 rows.
  std::vector<Buffer> buffers;
  for (size_t bytes : {4096, 4096, 4096, 4096, 4096, 16, 8}) {
    Expected<Buffer> b = device->allocate(bytes);
    FA_ASSERT_OK(b);
    buffers.push_back(b.take());
  }
  const std::vector<int32_t> table = {0, 1, 2, -1}, lengths = {5, 2};
  FA_ASSERT_OK(buffers[5].copyFromHost(table.data(), 16));
  FA_ASSERT_OK(buffers[6].copyFromHost(lengths.data(), 8));
  AttentionArgs args{&buffers[0], &buffers[1],     &buffers[2],  &buffers[3],
                     &buffers[4], {2, 2, 1, 3, 5}, std::nullopt, std::nullopt};
  PagedKvArgs pg;
  pg.blockTable = &buffers[5];
  pg.cacheSeqlens = &buffers[6];
  pg.pageSize = 4;
  pg.maxPages = 2;
  pg.numPages = 3;
  pg.hostBlockTable = table;
  pg.hostCacheSeqlens = lengths;
  args.paged = pg;
  Expected<PackedLaunch> packed =
      packAttentionArgs(kernel->info(), args, device->limits());
  FA_ASSERT_OK(packed);
  FA_ASSERT_OK(kernel->launch(args));
  uint64_t echoed[std::size(echoedWords)] = {};
  FA_ASSERT_OK(buffers[3].copyToHost(echoed, sizeof(echoed)));
  for (size_t i = 0; i < std::size(echoedWords); ++i)
    EXPECT_EQ(echoed[i], packed->words[size_t(echoedWords[i])])
        << "word " << echoedWords[i];
  EXPECT_EQ(echoed[0], 5u);  // Lk
  EXPECT_EQ(echoed[1], 1u);  // S
  EXPECT_EQ(echoed[2], 0u);  // no workspace
  EXPECT_EQ(echoed[14], 4u); // page size
  EXPECT_EQ(echoed[15], 2u); // table stride
}

//===----------------------------------------------------------------------===//
// The C API
//===----------------------------------------------------------------------===//

// Two sequences over shuffled pages of 4 rows; all keys equal, so each row
// is the mean of its sequence's V rows, which name their key index.
TEST(PagedKvTest, CApiLaunchesAPagedKernel) {
  fa_device *d = nullptr;
  ASSERT_EQ(fa_device_open("host", &d), FA_OK);
  fa_module *m = nullptr;
  ASSERT_EQ(fa_module_load(d, test::fixturePath("paged_f32").c_str(), &m),
            FA_OK)
      << fa_last_error();
  enum { D = 64, PS = 4, PAGES = 6, MAXP = 3, B = 2, LQ = 2 };
  // Sequence 0: 10 keys on pages 4, 1, 5; sequence 1: 3 keys on page 0.
  const int32_t table[B * MAXP] = {4, 1, 5, 0, -1, -1};
  const int32_t lengths[B] = {10, 3};
  std::vector<float> q(B * LQ * D, 0.25f), k(PAGES * PS * D, 0.5f),
      v(PAGES * PS * D, NAN), o(B * LQ * D);
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < lengths[b]; ++j)
      for (int c = 0; c < D; ++c)
        v[size_t((table[b * MAXP + j / PS] * PS + j % PS) * D + c)] = float(j);
  fa_buffer *buf[7] = {};
  const size_t bytes[7] = {q.size() * 4,   k.size() * 4, v.size() * 4,
                           o.size() * 4,   B * LQ * 4,   sizeof(table),
                           sizeof(lengths)};
  for (int i = 0; i < 7; ++i)
    ASSERT_EQ(fa_buffer_alloc(d, bytes[i], &buf[i]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[0], 0, q.data(), bytes[0]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[1], 0, k.data(), bytes[1]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[2], 0, v.data(), bytes[2]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[5], 0, table, bytes[5]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[6], 0, lengths, bytes[6]), FA_OK);
  fa_attention_args args = {};
  args.q = buf[0];
  args.k = buf[1];
  args.v = buf[2];
  args.o = buf[3];
  args.lse = buf[4];
  args.batch = B;
  args.heads_q = args.heads_kv = 1;
  args.seq_q = LQ;
  args.seq_k = 10; // the longest sequence
  fa_paged_kv paged = {};
  paged.block_table = buf[5];
  paged.cache_seqlens = buf[6];
  paged.page_size = PS;
  paged.max_pages = MAXP;
  paged.num_pages = PAGES;
  paged.host_block_table = table;
  paged.host_cache_seqlens = lengths;
  fa_launch_options options = {};
  ASSERT_EQ(fa_module_launch_paged(m, nullptr, &args, &paged, &options), FA_OK)
      << fa_last_error();
  EXPECT_EQ(options.kv_splits_used, 1);
  ASSERT_EQ(fa_buffer_read(buf[3], 0, o.data(), bytes[3]), FA_OK);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < LQ * D; ++i)
      ASSERT_NEAR(o[size_t(b * LQ * D + i)], (lengths[b] - 1) / 2.0, 1e-4)
          << b << " " << i;
  ASSERT_EQ(fa_module_launch_paged(m, nullptr, &args, &paged, nullptr), FA_OK);

  // The errors: the host copy checked, Lk, a dense launch of a paged
  // kernel, null host copies.
  const int32_t badTable[B * MAXP] = {4, 1, 6, 0, -1, -1};
  paged.host_block_table = badTable;
  EXPECT_EQ(fa_module_launch_paged(m, nullptr, &args, &paged, nullptr),
            FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error())
                .find("block_table[0][2] = 6 is out of range: the cache has 6 "
                      "pages"),
            std::string::npos)
      << fa_last_error();
  paged.host_block_table = table;
  args.seq_k = 12;
  EXPECT_EQ(fa_module_launch_paged(m, nullptr, &args, &paged, nullptr),
            FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("max(cache_seqlens) = 10"),
            std::string::npos)
      << fa_last_error();
  args.seq_k = 10;
  EXPECT_EQ(fa_module_launch(m, nullptr, &args), FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("reads a paged K/V cache"),
            std::string::npos);
  paged.host_cache_seqlens = nullptr;
  EXPECT_EQ(fa_module_launch_paged(m, nullptr, &args, &paged, nullptr),
            FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("host_cache_seqlens is null"),
            std::string::npos);
  fa_module_unload(m);
  for (fa_buffer *buffer : buf)
    fa_buffer_free(buffer);
  fa_device_close(d);
}

} // namespace
