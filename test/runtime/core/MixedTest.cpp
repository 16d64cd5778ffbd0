//===- MixedTest.cpp - Mixed prefill/decode launches ----------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's side of a mixed batch (ABI version 4 with paged and varlen,
// KernelAbi.h) on the hand-written mixed kernels of
// kernels/paged_attention_host.cpp (FA_MIXED): the 77 words (55-66 the
// paged words, 67-71 cu_seqlens_q, 72-76 a null cu_seqlens_k) by hand, the
// host checks of the cache, cu_seqlens_q and Lq_b <= cache_seqlens[b] (each
// message), the trusting enqueue and checkMetadata, the split plan, the
// kernels validated against the fp64 mixed reference, the planted kernel
// bug (queries aligned to the start of their sequence) caught, and the C
// API.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"
#include "fa/fa_runtime.h"

#include <cmath>
#include <cstring>

using namespace fa;
using test::failures;
using test::loadKernel;

namespace {

//===----------------------------------------------------------------------===//
// Kernels against the fp64 mixed reference
//===----------------------------------------------------------------------===//

Expected<ValidationReport>
mixedTryValidate(const Kernel &kernel, AttentionShape shape,
                 std::vector<int32_t> queries = {},
                 std::vector<int32_t> keys = {}, uint64_t seed = 1,
                 int64_t kvSplits = 0, int64_t pageSize = 16) {
  ValidationOptions o;
  o.shape = shape;
  o.seed = seed;
  PagedCacheOptions cache;
  cache.pageSize = pageSize;
  cache.cacheSeqlens = std::move(keys);
  o.paged = cache;
  VarlenOptions varlen;
  varlen.seqlensQ = std::move(queries);
  o.varlen = varlen;
  o.launch.kvSplits = kvSplits;
  o.launch.checkRaces = true;
  return validateKernel(kernel, o);
}

ValidationReport mixedValidate(const Kernel &kernel, AttentionShape shape,
                               std::vector<int32_t> queries = {},
                               std::vector<int32_t> keys = {},
                               uint64_t seed = 1, int64_t kvSplits = 0,
                               int64_t pageSize = 16) {
  Expected<ValidationReport> r =
      mixedTryValidate(kernel, shape, std::move(queries), std::move(keys), seed,
                       kvSplits, pageSize);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r ? r.take() : ValidationReport();
}

// Drawn batches (decode rows, prefill chunks, the edge lengths), GQA,
// several seeds and page sizes; given lengths.
TEST(MixedTest, F32MatchesTheMixedReference) {
  Kernel k = loadKernel("mixed_f32");
  for (AttentionShape shape :
       {AttentionShape{6, 8, 2, 40, 200}, AttentionShape{4, 2, 1, 1, 300},
        AttentionShape{5, 4, 4, 17, 17}})
    for (uint64_t seed : {1, 2}) {
      SCOPED_TRACE(shape.toString() + " seed " + std::to_string(seed));
      ValidationReport r = mixedValidate(k, shape, {}, {}, seed);
      EXPECT_TRUE(r.verdict.pass) << failures(r);
      EXPECT_LT(r.ours.maxAbsDiff, 1e-5);
      ASSERT_TRUE(r.mixed);
      EXPECT_FALSE(r.paged);
      EXPECT_FALSE(r.varlen);
      const MixedProblem &p = *r.mixed;
      EXPECT_EQ(p.cache.seqQ, shape.seqQ);
      bool empty = false, whole = false;
      for (int64_t b = 0; b < shape.batch; ++b) {
        const int64_t lk = p.cache.cacheSeqlens[size_t(b)];
        EXPECT_LE(p.queries(b), lk);
        EXPECT_LE(lk, shape.seqK);
        empty |= p.queries(b) == 0;
        whole |= p.queries(b) > 0 && p.queries(b) == lk;
      }
      EXPECT_TRUE(empty);
      EXPECT_TRUE(whole);
    }
  // Given lengths: a decode row, no queries, a whole prompt, a chunk over a
  // history; page sizes 1 and 7.
  for (int64_t pageSize : {1, 7, 16}) {
    ValidationReport r = mixedValidate(k, {4, 4, 2, 20, 50}, {1, 0, 20, 13},
                                       {50, 9, 20, 33}, 3, 0, pageSize);
    EXPECT_TRUE(r.verdict.pass) << pageSize << "\n" << failures(r);
    EXPECT_EQ(r.mixed->cuSeqlensQ, (std::vector<int32_t>{0, 1, 1, 21, 34}));
    EXPECT_EQ(r.mixed->totalQ, 34);
  }
}

// Causal bottom-right within each sequence: its queries are the last rows
// of its keys.
TEST(MixedTest, F16CausalQueriesAreTheLastRows) {
  Kernel k = loadKernel("mixed_f16_causal");
  for (uint64_t seed : {3, 4}) {
    ValidationReport r = mixedValidate(k, {6, 4, 2, 37, 120}, {}, {}, seed);
    EXPECT_TRUE(r.verdict.pass) << seed << "\n" << failures(r);
  }
  ValidationReport r =
      mixedValidate(k, {3, 2, 1, 30, 90}, {30, 1, 7}, {30, 90, 60});
  EXPECT_TRUE(r.verdict.pass) << failures(r);
}

// Split-KV (GQA-packed, causal): given and automatic split counts; decode
// rows over long histories are where splits pay.
TEST(MixedTest, SplitKvPairs) {
  Kernel k = loadKernel("mixed_split_f16_packed_causal");
  for (int64_t splits : {0, 1, 3, 7}) {
    ValidationReport r = mixedValidate(k, {5, 8, 2, 9, 150}, {}, {}, 5, splits);
    EXPECT_TRUE(r.verdict.pass) << splits << "\n" << failures(r);
    if (splits) {
      EXPECT_EQ(r.kvSplits, splits);
    }
  }
  // Every sequence a decode row: the automatic plan splits.
  ValidationReport r = mixedValidate(k, {2, 8, 2, 1, 600}, {1, 1}, {600, 333});
  EXPECT_TRUE(r.verdict.pass) << failures(r);
  EXPECT_GT(r.kvSplits, 1);
}

// A kernel that aligns each sequence's queries to its first key: the
// validation fails it (decode rows over a history see one key).
TEST(MixedTest, CatchesQueriesAlignedToTheStart) {
  Kernel k = loadKernel("mixed_bug_queries_at_start");
  ValidationReport r =
      mixedValidate(k, {4, 2, 2, 8, 60}, {1, 8, 3, 0}, {40, 20, 3, 5});
  EXPECT_FALSE(r.verdict.pass);
  // With every sequence's queries all its keys, start and end agree.
  r = mixedValidate(k, {3, 2, 2, 8, 8}, {8, 3, 1}, {8, 3, 1});
  EXPECT_TRUE(r.verdict.pass) << failures(r);
}

//===----------------------------------------------------------------------===//
// The words and the host checks
//===----------------------------------------------------------------------===//

/// A mixed launch's buffers and host metadata, on the host device: B = 3
/// sequences of (Lq, Lk) = (1, 9), (0, 5), (3, 3) over pages of 4 rows
/// (sequence 0 on pages 5, 2, 7; 1 on 0, 3; 2 on 6; 1 and 4 unused), Hq =
/// 4, Hkv = 2, D = 64: total_q 4, max_seqlen_q 3, Lk 9.
struct MixedBuffers {
  Buffer q, k, v, o, lse, table, lengths, cuQ;
  std::vector<int32_t> hostTable{5, 2, 7, 0, 3, -1, 6, -1, -1};
  std::vector<int32_t> hostLengths{9, 5, 3};
  std::vector<int32_t> hostCuQ{0, 1, 1, 4};

  AttentionArgs args(const AttentionShape &shape = {3, 4, 2, 3, 9}) {
    AttentionArgs a{&q, &k, &v, &o, &lse, shape, std::nullopt, std::nullopt};
    PagedKvArgs pg;
    pg.blockTable = &table;
    pg.cacheSeqlens = &lengths;
    pg.pageSize = 4;
    pg.maxPages = 3;
    pg.numPages = 8;
    pg.hostBlockTable = hostTable;
    pg.hostCacheSeqlens = hostLengths;
    a.paged = pg;
    VarlenArgs vl;
    vl.cuSeqlensQ = &cuQ;
    vl.totalQ = 4;
    vl.hostCuSeqlensQ = hostCuQ;
    a.varlen = vl;
    return a;
  }
};

MixedBuffers mixedBuffers(const Device &d) {
  const size_t D = 64, Hq = 4, Hkv = 2;
  return MixedBuffers{d.allocate(4 * Hq * D * 4).take(),
                      d.allocate(8 * 4 * Hkv * D * 4).take(),
                      d.allocate(8 * 4 * Hkv * D * 4).take(),
                      d.allocate(4 * Hq * D * 4).take(),
                      d.allocate(Hq * 4 * 4).take(),
                      d.allocate(9 * 4).take(),
                      d.allocate(3 * 4).take(),
                      d.allocate(4 * 4).take()};
}

KernelInfo mixedInfo() {
  KernelInfo info = test::fixtureManifest("mixed_f32").kernels[0];
  EXPECT_TRUE(info.paged && info.varlen);
  EXPECT_EQ(info.abiVersion, 4);
  return info;
}

// Words 55..66 the paged words, 67..71 cu_seqlens_q, 72..76 a null
// cu_seqlens_k; the sizes B, Hq, Hkv, max_seqlen_q, max(cache_seqlens);
// the packed Q/O/LSE strides and the caches' (page, head, row); the grid
// over max_seqlen_q; a split pair's workspace [S*B, Hq, max_seqlen_q, D].
TEST(MixedTest, PacksWordsFiftyFiveToSeventySix) {
  Device d = test::hostDevice();
  KernelInfo info = mixedInfo();
  MixedBuffers b = mixedBuffers(d);
  Expected<PackedLaunch> p = packAttentionArgs(info, b.args(), d.limits());
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->numWords, 77u);
  const uint64_t *w = p->words.data();
  const uint64_t expected[22] = {b.table.address(),
                                 b.table.address(),
                                 0,
                                 9,
                                 1, // block_table
                                 b.lengths.address(),
                                 b.lengths.address(),
                                 0,
                                 3,
                                 1, // cache_seqlens
                                 4,
                                 3, // page size, stride
                                 b.cuQ.address(),
                                 b.cuQ.address(),
                                 0,
                                 4,
                                 1, // cu_seqlens_q
                                 0,
                                 0,
                                 0,
                                 0,
                                 1}; // cu_seqlens_k
  for (int i = 0; i < 22; ++i)
    EXPECT_EQ(w[55 + i], expected[i]) << "word " << 55 + i;
  for (int i = 44; i < 54; ++i)
    EXPECT_EQ(w[i], i == 48 || i == 53 ? 1u : 0u) << "word " << i;
  EXPECT_EQ(w[54], 1u); // S
  const uint64_t sizes[5] = {3, 4, 2, 3, 9};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(w[25 + i], sizes[i]) << "size " << i;
  // q_b q_h q_l k_b k_h k_l v_b v_h v_l o_b o_h o_l lse_b lse_h
  const uint64_t strides[14] = {0,  64,  256, 512, 64,  128, 512,
                                64, 128, 0,   64,  256, 0,   4};
  for (int i = 0; i < 14; ++i)
    EXPECT_EQ(w[30 + i], strides[i]) << "stride " << i;
  EXPECT_EQ(w[FA_ABI_Q + 3], 4u * 4 * 64);
  EXPECT_EQ(w[FA_ABI_K + 3], 8u * 4 * 2 * 64);
  EXPECT_EQ(w[FA_ABI_LSE + 3], 16u);
  EXPECT_EQ(p->geometry.grid[0], 1u);
  EXPECT_EQ(p->geometry.grid[1], 4u);
  EXPECT_EQ(p->geometry.grid[2], 3u);
  EXPECT_EQ(p->geometry.periodX, 1u); // no splits along x
  EXPECT_FALSE(p->combineGeometry);

  // A split pair: S given, the workspace over max_seqlen_q, the combine
  // grid over max_seqlen_q; the mixed words as before.
  Manifest m = test::fixtureManifest("mixed_split_f16_packed_causal");
  KernelInfo split = m.kernels[0], combine = m.kernels[1];
  ASSERT_TRUE(split.splitKv && split.paged && split.varlen);
  ASSERT_TRUE(combine.isCombine() && combine.paged && combine.varlen);
  p = packAttentionArgs(split, b.args(), d.limits(), &combine, 3);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->words[FA_ABI_SPLITS], 3u);
  EXPECT_EQ(p->split.workspaceOBytes, uint64_t(3 * 3 * 4 * 3 * 32 * 4));
  EXPECT_EQ(p->split.workspaceLseBytes, uint64_t(3 * 3 * 4 * 3 * 4));
  // GQA-packed: ceil(3 * 2 / 8) = 1 tile x 3 splits, Hkv, B.
  EXPECT_EQ(p->geometry.grid[0], 3u);
  EXPECT_EQ(p->geometry.grid[1], 2u);
  EXPECT_EQ(p->geometry.periodX, 3u); // x = tile * S + split
  ASSERT_TRUE(p->combineGeometry);
  EXPECT_EQ(p->combineGeometry->grid[0], 1u); // ceil(3 / 4)
  EXPECT_EQ(p->combineGeometry->periodX, 1u);
  EXPECT_EQ(p->words[FA_ABI_CU_SEQLENS_K + 4], 1u);
  EXPECT_EQ(p->words[FA_ABI_CU_SEQLENS_K + 1], 0u);
  EXPECT_EQ(p->words[FA_ABI_PAGE_SIZE], 4u);
  // The automatic plan: decode rows over a long history split.
  Expected<KvSplitPlan> plan =
      planKvSplits(split, {2, 8, 2, 1, 4096}, d.limits(), 0);
  FA_ASSERT_OK(plan);
  EXPECT_GT(plan->kvSplits, 1);
  // Every sequence empty: Lk 0, one split.
  b.hostLengths = {0, 0, 0};
  b.hostCuQ = {0, 0, 0, 0};
  AttentionArgs empty = b.args({3, 4, 2, 1, 0});
  empty.varlen->totalQ = 0;
  p = packAttentionArgs(split, empty, d.limits(), &combine, 0);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->split.kvSplits, 1);
}

TEST(MixedTest, HostChecksNameTheFirstBadEntry) {
  Device d = test::hostDevice();
  KernelInfo info = mixedInfo();
  auto edited = [&](auto edit) {
    MixedBuffers b = mixedBuffers(d);
    AttentionArgs a = b.args();
    edit(b, a);
    a.paged->hostBlockTable = b.hostTable;
    a.paged->hostCacheSeqlens = b.hostLengths;
    a.varlen->hostCuSeqlensQ = b.hostCuQ;
    return test::packError(info, a);
  };
  using B = MixedBuffers;
  using A = AttentionArgs;
  // The queries are the last rows of their sequence.
  EXPECT_EQ(edited([](B &b, A &) {
              b.hostLengths = {9, 5, 2};
            }),
            "sequence 2 has 3 queries but only 2 keys: a mixed batch's "
            "queries are the last rows of their sequence (cu_seqlens_q[3] - "
            "cu_seqlens_q[2] = 3 > cache_seqlens[2] = 2)");
  EXPECT_EQ(edited([](B &b, A &a) {
              b.hostLengths = {0, 5, 3};
              a.shape.seqK = 5;
            }),
            "sequence 0 has 1 queries but only 0 keys: a mixed batch's "
            "queries are the last rows of their sequence (cu_seqlens_q[1] - "
            "cu_seqlens_q[0] = 1 > cache_seqlens[0] = 0)");
  // cu_seqlens_q as a varlen launch's.
  EXPECT_EQ(edited([](B &b, A &) {
              b.hostCuQ = {1, 1, 1, 4};
            }),
            "cu_seqlens_q[0] must be 0");
  EXPECT_EQ(edited([](B &b, A &) {
              b.hostCuQ = {0, 2, 1, 4};
            }),
            "cu_seqlens_q is not non-decreasing: cu_seqlens_q[2] = 1 < "
            "cu_seqlens_q[1] = 2");
  EXPECT_EQ(edited([](B &b, A &) {
              b.hostCuQ = {0, 1, 1};
            }),
            "cu_seqlens_q has 3 entries, B + 1 = 4");
  EXPECT_EQ(edited([](B &b, A &) {
              b.hostCuQ = {0, 1, 1, 3};
            }),
            "cu_seqlens_q[3] = 3 does not match total_q = 4, the rows of "
            "packed Q");
  EXPECT_EQ(edited([](B &, A &a) { a.shape.seqQ = 2; }),
            "max_seqlen_q = 2 is less than the length of sequence 2: "
            "cu_seqlens_q[3] - cu_seqlens_q[2] = 3");
  // The cache as a paged launch's, first.
  EXPECT_EQ(edited([](B &b, A &) {
              b.hostTable[6] = 8;
              b.hostLengths = {9, 5, 2};
            }),
            "block_table[2][0] = 8 is out of range: the cache has 8 pages");
  EXPECT_EQ(edited([](B &, A &a) { a.shape.seqK = 12; }),
            "invalid shape: Lk is 12, but a paged launch's Lk is the longest "
            "sequence, max(cache_seqlens) = 9 (cache_seqlens[0])");
  // The layouts: packed Q, O and LSE (batch stride 0), caches.
  EXPECT_EQ(edited([](B &, A &a) {
              AttentionStrides st =
                  varlenStrides(a.shape, 64, a.varlen->totalQ);
              st.k = st.v = pagedCacheStrides(4, 2, 64);
              st.q.batch = 256;
              a.strides = st;
            }),
            "invalid stride q.batch = 256: a varlen launch's batch strides "
            "are 0 (its tensors are packed; cu_seqlens locate the "
            "sequences)");
  EXPECT_EQ(edited([](B &b, A &) {
              b.k = test::hostDevice().allocate(8 * 4 * 2 * 64 * 4 - 4).take();
            }),
            "buffer K holds 16380 bytes but the cache [num_pages=8, "
            "page_size=4, Hkv=2, D=64] of f32 with strides (512, 64, 128, 1) "
            "needs 16384 bytes");
  EXPECT_EQ(edited([](B &b, A &) {
              b.o = test::hostDevice().allocate(4 * 4 * 64 * 4 - 4).take();
            }),
            "buffer O holds 4092 bytes but packed [total_q=4, H=4, D=64] of "
            "f32 with strides (0, 64, 256, 1) needs 4096 bytes");
  EXPECT_EQ(edited([](B &, A &a) { a.varlen->cuSeqlensQ = nullptr; }),
            "buffer cu_seqlens_q is missing (needs 16 bytes)");
  // Both arguments exactly for a mixed kernel; no cu_seqlens_k.
  EXPECT_EQ(edited([](B &b, A &a) { a.varlen->cuSeqlensK = &b.cuQ; }),
            "kernel 'mixed_f32' takes a mixed batch, whose keys are "
            "cache_seqlens: it takes no cu_seqlens_k (pass "
            "VarlenArgs::cuSeqlensK null and hostCuSeqlensK empty)");
  MixedBuffers b = mixedBuffers(d);
  AttentionArgs a = b.args();
  a.varlen->hostCuSeqlensK = b.hostCuQ;
  EXPECT_NE(test::packError(info, a).find("takes no cu_seqlens_k"),
            std::string::npos);
  a = b.args();
  a.varlen.reset();
  EXPECT_EQ(test::packError(info, a),
            "kernel 'mixed_f32' takes a mixed prefill/decode batch (its "
            "manifest says \"paged\" and \"varlen\"): its launch needs both "
            "AttentionArgs::paged (the cache) and AttentionArgs::varlen "
            "(cu_seqlens_q)");
  a = b.args();
  a.paged.reset();
  EXPECT_NE(test::packError(info, a).find("needs both"), std::string::npos);
  for (const char *other : {"paged_f32", "varlen_f32", "attn_f32"}) {
    KernelInfo k = test::fixtureManifest(other).kernels[0];
    EXPECT_EQ(test::packError(k, b.args()),
              "kernel '" + std::string(other) +
                  "' does not take a mixed batch (AttentionArgs::paged and "
                  "::varlen together): that needs a kernel whose manifest "
                  "says both \"paged\" and \"varlen\"");
  }
  // A manifest that says both at another version (edited in memory).
  KernelInfo v3 = info;
  v3.abiVersion = 3;
  EXPECT_EQ(test::packError(v3, b.args()),
            "kernel 'mixed_f32' has kernel ABI version 3, not 4 (mixed "
            "batches: paged and varlen)");
}

// The shared check, directly: B's range and the trusting form.
TEST(MixedTest, MetadataCheckIsShared) {
  const std::vector<int32_t> cu{0, 2, 3}, keys{2, 1};
  FA_ASSERT_OK(checkMixedMetadata(2, 3, 2, cu, keys));
  // Without the host lengths, only cu_seqlens_q.
  FA_ASSERT_OK(checkMixedMetadata(2, 3, 2, cu, {}));
  EXPECT_EQ(
      checkMixedMetadata(2, 3, 2, cu, std::vector<int32_t>{1, 1}).message(),
      "sequence 0 has 2 queries but only 1 keys: a mixed batch's "
      "queries are the last rows of their sequence (cu_seqlens_q[1] - "
      "cu_seqlens_q[0] = 2 > cache_seqlens[0] = 1)");
  EXPECT_EQ(checkMixedMetadata(0, 0, 1, {}, {}).message(),
            "a mixed batch of B = 0 sequences: B must be in [1, 2147483647]");
  FA_ASSERT_OK(checkMixedMetadata(2, 3, 2, {}, {}, /*entries=*/false));
  EXPECT_EQ(checkMixedMetadata(2, -1, 2, {}, {}, false).message(),
            "total_q = -1 is negative");
}

// Kernel::enqueue trusts absent host copies; given ones are checked;
// checkMetadata reads the device copies.
TEST(MixedTest, EnqueueTrustsAndCheckMetadataReads) {
  Module m = test::loadModule("mixed_f32");
  Kernel k = *m.kernel();
  Device d = test::hostDevice();
  MixedBuffers b = mixedBuffers(d);
  FA_ASSERT_OK(b.table.copyFromHost(b.hostTable.data(), 9 * 4));
  FA_ASSERT_OK(b.lengths.copyFromHost(b.hostLengths.data(), 3 * 4));
  FA_ASSERT_OK(b.cuQ.copyFromHost(b.hostCuQ.data(), 4 * 4));
  FA_ASSERT_OK(k.checkMetadata(b.args()));
  AttentionArgs trusting = b.args({3, 4, 2, 3, 12}); // Lk a bound
  trusting.paged->hostBlockTable = {};
  trusting.paged->hostCacheSeqlens = {};
  trusting.varlen->hostCuSeqlensQ = {};
  FA_ASSERT_OK(k.enqueue(trusting, nullptr, nullptr));
  // A bad host copy of cu_seqlens_q is checked even by an enqueue.
  std::vector<int32_t> bad{0, 2, 1, 4};
  trusting.varlen->hostCuSeqlensQ = bad;
  EXPECT_FALSE(k.enqueue(trusting, nullptr, nullptr).ok());
  // The device lengths say sequence 2 has 2 keys for its 3 queries.
  const int32_t shorter[3] = {9, 5, 2};
  FA_ASSERT_OK(b.lengths.copyFromHost(shorter, sizeof shorter));
  Status s = k.checkMetadata(b.args());
  EXPECT_NE(s.message().find("sequence 2 has 3 queries but only 2 keys"),
            std::string::npos)
      << s.toString();
  AttentionArgs dense = b.args();
  dense.paged.reset();
  EXPECT_NE(k.checkMetadata(dense).message().find(
                "takes a mixed prefill/decode batch, the arguments describe "
                "a variable-length batch"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// The C API
//===----------------------------------------------------------------------===//

// Three sequences over shuffled pages of 4 rows (MixedBuffers' batch); all
// keys equal, so each row is the mean of its sequence's V rows, which name
// their key index: (len_b - 1) / 2.
TEST(MixedTest, CApiLaunchesAMixedKernel) {
  fa_device *d = nullptr;
  ASSERT_EQ(fa_device_open("host", &d), FA_OK);
  fa_module *m = nullptr;
  ASSERT_EQ(fa_module_load(d, test::fixturePath("mixed_f32").c_str(), &m),
            FA_OK)
      << fa_last_error();
  enum { D = 64, PS = 4, PAGES = 8, MAXP = 3, B = 3, TQ = 4 };
  const int32_t table[B * MAXP] = {5, 2, 7, 0, 3, -1, 6, -1, -1};
  const int32_t lengths[B] = {9, 5, 3};
  const int32_t cuQ[B + 1] = {0, 1, 1, 4};
  std::vector<float> q(TQ * D, 0.25f), k(PAGES * PS * D, 0.5f),
      v(PAGES * PS * D, NAN), o(TQ * D);
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < lengths[b]; ++j)
      for (int c = 0; c < D; ++c)
        v[size_t((table[b * MAXP + j / PS] * PS + j % PS) * D + c)] = float(j);
  fa_buffer *buf[8] = {};
  const size_t bytes[8] = {q.size() * 4,    k.size() * 4, v.size() * 4,
                           o.size() * 4,    TQ * 4,       sizeof(table),
                           sizeof(lengths), sizeof(cuQ)};
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(fa_buffer_alloc(d, bytes[i], &buf[i]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[0], 0, q.data(), bytes[0]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[1], 0, k.data(), bytes[1]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[2], 0, v.data(), bytes[2]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[5], 0, table, bytes[5]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[6], 0, lengths, bytes[6]), FA_OK);
  ASSERT_EQ(fa_buffer_write(buf[7], 0, cuQ, bytes[7]), FA_OK);
  fa_attention_args args = {};
  args.q = buf[0];
  args.k = buf[1];
  args.v = buf[2];
  args.o = buf[3];
  args.lse = buf[4];
  args.batch = B;
  args.heads_q = args.heads_kv = 1;
  args.seq_q = 3; // max_seqlen_q
  args.seq_k = 9; // the longest sequence
  fa_paged_kv paged = {};
  paged.block_table = buf[5];
  paged.cache_seqlens = buf[6];
  paged.page_size = PS;
  paged.max_pages = MAXP;
  paged.num_pages = PAGES;
  paged.host_block_table = table;
  paged.host_cache_seqlens = lengths;
  fa_varlen varlen = {};
  varlen.cu_seqlens_q = buf[7];
  varlen.total_q = TQ;
  varlen.host_cu_seqlens_q = cuQ;
  fa_launch_options options = {};
  ASSERT_EQ(
      fa_module_launch_mixed(m, nullptr, &args, &paged, &varlen, &options),
      FA_OK)
      << fa_last_error();
  EXPECT_EQ(options.kv_splits_used, 1);
  ASSERT_EQ(fa_buffer_read(buf[3], 0, o.data(), bytes[3]), FA_OK);
  const int rowSequence[TQ] = {0, 2, 2, 2};
  for (int r = 0; r < TQ; ++r)
    for (int c = 0; c < D; ++c)
      ASSERT_NEAR(o[size_t(r * D + c)], (lengths[rowSequence[r]] - 1) / 2.0,
                  1e-4)
          << r << " " << c;
  // The same launch through the other entry points that take both.
  ASSERT_EQ(fa_module_launch_heads(m, nullptr, &args, &paged, &varlen, nullptr,
                                   nullptr),
            FA_OK)
      << fa_last_error();
  ASSERT_EQ(fa_module_enqueue(m, nullptr, &args, &paged, &varlen, nullptr),
            FA_OK)
      << fa_last_error();
  ASSERT_EQ(fa_module_check_metadata(m, nullptr, &args, &paged, &varlen), FA_OK)
      << fa_last_error();

  // The errors: a sequence with more queries than keys, a cu_seqlens_k,
  // one of the two missing, the paged or varlen calls alone.
  const int32_t shorter[B] = {9, 5, 2};
  paged.host_cache_seqlens = shorter;
  EXPECT_EQ(fa_module_launch_mixed(m, nullptr, &args, &paged, &varlen, nullptr),
            FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error())
                .find("sequence 2 has 3 queries but only 2 keys"),
            std::string::npos)
      << fa_last_error();
  paged.host_cache_seqlens = lengths;
  varlen.host_cu_seqlens_k = cuQ;
  EXPECT_EQ(fa_module_launch_mixed(m, nullptr, &args, &paged, &varlen, nullptr),
            FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("takes no cu_seqlens_k"),
            std::string::npos)
      << fa_last_error();
  varlen.host_cu_seqlens_k = nullptr;
  EXPECT_EQ(
      fa_module_launch_mixed(m, nullptr, &args, nullptr, &varlen, nullptr),
      FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("paged is null"),
            std::string::npos)
      << fa_last_error();
  EXPECT_EQ(fa_module_launch_paged(m, nullptr, &args, &paged, nullptr),
            FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("needs both"), std::string::npos)
      << fa_last_error();
  varlen.host_cu_seqlens_q = nullptr;
  EXPECT_EQ(fa_module_launch_mixed(m, nullptr, &args, &paged, &varlen, nullptr),
            FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("host_cu_seqlens_q is null"),
            std::string::npos)
      << fa_last_error();
  fa_module_unload(m);
  for (fa_buffer *buffer : buf)
    fa_buffer_free(buffer);
  fa_device_close(d);
}

} // namespace
