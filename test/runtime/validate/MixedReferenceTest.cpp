//===- MixedReferenceTest.cpp - Mixed prefill/decode batches --------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa::validate's mixed batches (PagedVarlen.h): the fp64 and naive
// references against results computed by hand on a two-sequence batch
// whose keys' values name their softmax weights (a decode row over three
// keys, two query rows over two keys; causal, not, and with a window), and
// bit for bit against the dense reference of each sequence gathered into
// dense tensors (GQA, causal, window, softcap, ALiBi, sinks); the host
// checks (every message); the seeded generator (determinism, the edge
// lengths, decode rows and prefill chunks, shuffled, shared and padding
// pages); mixedProblemFor's errors; the poisoning of unread cache rows;
// the FLOP count.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/PagedVarlen.h"
#include "fa/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

using namespace fa;

namespace {

constexpr double kMixedInf = std::numeric_limits<double>::infinity();

std::string mixedMessage(const Status &s) {
  return s.ok() ? "ok" : s.message();
}

//===----------------------------------------------------------------------===//
// By hand
//===----------------------------------------------------------------------===//

/// B = 2, Hq = Hkv = 1, D = 1, scale 1, pages of 2 rows. Sequence 0: one
/// decode row over 3 keys on pages 2, 0; sequence 1: two query rows over 2
/// keys on page 3; page 1 and page 0's second row unused (NaN). Every query
/// is 1, so a score is its key: sequence 0's keys 0, ln 2, ln 3 weigh 1, 2,
/// 3, its values 6, 12, 18; sequence 1's keys 0, ln 3 weigh 1, 3, its
/// values 4, 8.
struct MixedByHand {
  MixedProblem p;
  AttentionData d;

  explicit MixedByHand(bool causal) {
    PagedProblem c;
    c.batch = 2;
    c.headsQ = c.headsKv = 1;
    c.headDim = 1;
    c.numPages = 4;
    c.pageSize = 2;
    c.maxPages = 2;
    c.causal = causal;
    c.scale = 1;
    c.blockTable = {2, 0, 3, -1};
    c.cacheSeqlens = {3, 2};
    p = MixedProblem::fromLengths(c, {1, 2});
    const float nan = std::numeric_limits<float>::quiet_NaN();
    d.q = {1, 1, 1};
    // Cache row page * 2 + slot.
    d.k = {float(std::log(3.0)), nan, nan, nan, 0, float(std::log(2.0)), 0,
           float(std::log(3.0))};
    d.v = {18, nan, nan, nan, 6, 12, 4, 8};
  }
};

void expectMixedNear(const std::vector<double> &got,
                     const std::vector<double> &want, double tolerance,
                     const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tolerance) << what << " " << i;
}

TEST(MixedReferenceTest, ByHand) {
  MixedByHand causal(true);
  EXPECT_EQ(causal.p.cuSeqlensQ, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(causal.p.totalQ, 3);
  EXPECT_EQ(causal.p.cache.seqQ, 2); // max_seqlen_q
  FA_ASSERT_OK(checkMixedData(causal.p, causal.d));
  AttentionResult<double> r = referenceMixedAttentionF64(causal.p, causal.d);
  // The decode row is the last of its 3 keys: it sees all of them, (6 + 24
  // + 54) / 6 = 14. Sequence 1's rows are its 2 keys: row 0 sees key 0, row
  // 1 both, (4 + 24) / 4 = 7.
  expectMixedNear(r.o, {14, 4, 7}, 1e-6, "causal O");
  expectMixedNear(r.lse, {std::log(6.0), 0, std::log(4.0)}, 1e-6, "causal LSE");
  expectMixedNear(r.magnitude, {14, 4, 7}, 1e-6, "causal magnitude");
  AttentionResult<float> n =
      naiveMixedAttention(causal.p, DType::F32, causal.d);
  expectMixedNear(std::vector<double>(n.o.begin(), n.o.end()), {14, 4, 7}, 1e-5,
                  "naive O");
  expectMixedNear(std::vector<double>(n.lse.begin(), n.lse.end()),
                  {std::log(6.0), 0, std::log(4.0)}, 1e-5, "naive LSE");

  MixedByHand full(false);
  r = referenceMixedAttentionF64(full.p, full.d);
  expectMixedNear(r.o, {14, 7, 7}, 1e-6, "O");
  expectMixedNear(r.lse, {std::log(6.0), std::log(4.0), std::log(4.0)}, 1e-6,
                  "LSE");

  // A window of one key to the left, shifted by Lk_b - Lq_b: the decode
  // row sees keys 1 and 2, (24 + 54) / 5; sequence 1's row 0 key 0, row 1
  // keys 0 and 1.
  MixedByHand window(true);
  window.p.cache.windowLeft = 1;
  r = referenceMixedAttentionF64(window.p, window.d);
  expectMixedNear(r.o, {15.6, 4, 7}, 1e-6, "window O");
  expectMixedNear(r.lse, {std::log(5.0), 0, std::log(4.0)}, 1e-6, "window LSE");

  // The unread cache rows: page 0's second row and page 1.
  AttentionData poisoned = causal.d;
  poisoned.k.assign(8, 1.f);
  poisoned.v.assign(8, 1.f);
  Expected<int64_t> rows = poisonUnreadCacheRows(causal.p, poisoned);
  FA_ASSERT_OK(rows);
  EXPECT_EQ(*rows, 3);
  for (size_t i : {1, 2, 3})
    EXPECT_TRUE(std::isnan(poisoned.k[i]) && std::isnan(poisoned.v[i])) << i;
  for (size_t i : {0, 4, 5, 6, 7})
    EXPECT_EQ(poisoned.k[i], 1.f) << i;

  // FLOPs: 4 * Hq * D * the pairs seen, 3 + (1 + 2).
  EXPECT_EQ(mixedAttentionFlops(causal.p), 24.0);
  EXPECT_EQ(mixedAttentionFlops(full.p), 4.0 * (3 + 4));
}

//===----------------------------------------------------------------------===//
// Against the dense reference of each gathered sequence
//===----------------------------------------------------------------------===//

/// Sequence b's rows of a mixed result (packed [total_q, Hq, D], LSE [Hq,
/// total_q]) against the dense result of the gathered sequence ([1, Hq,
/// Lq_b, D]), bit for bit; without a dense result (no keys) O = 0 and LSE =
/// -inf or the sink.
template <typename T>
void expectMixedSequence(const MixedProblem &p, const AttentionResult<T> &got,
                         int64_t b, const AttentionResult<T> *dense,
                         const std::string &what) {
  const int64_t Hq = p.cache.headsQ, D = p.cache.headDim;
  const int64_t q0 = p.cuSeqlensQ[size_t(b)], lq = p.queries(b);
  for (int64_t h = 0; h < Hq; ++h)
    for (int64_t i = 0; i < lq; ++i) {
      const T lse = got.lse[size_t(h * p.totalQ + q0 + i)];
      const T want =
          dense ? dense->lse[size_t(h * lq + i)]
                : (p.cache.sinks.empty() ? T(-kMixedInf)
                                         : T(p.cache.sinks[size_t(h)]));
      ASSERT_EQ(std::memcmp(&lse, &want, sizeof(T)), 0)
          << what << " b " << b << " h " << h << " i " << i;
      for (int64_t c = 0; c < D; ++c) {
        const T o = got.o[size_t(((q0 + i) * Hq + h) * D + c)];
        const T w = dense ? dense->o[size_t((h * lq + i) * D + c)] : T(0);
        ASSERT_EQ(std::memcmp(&o, &w, sizeof(T)), 0)
            << what << " b " << b << " h " << h << " i " << i << " c " << c;
      }
    }
}

TEST(MixedReferenceTest, EqualsTheGatheredDenseSequences) {
  int cases = 0, decode = 0, chunks = 0, empty = 0, whole = 0;
  struct Variant {
    int64_t group;
    bool causal;
    int64_t windowLeft, windowRight;
    double softcap;
    bool alibi, sinks;
  };
  for (const Variant &v : {Variant{1, false, -1, -1, 0, false, false},
                           Variant{4, true, -1, -1, 0, false, false},
                           Variant{2, true, 20, -1, 0, false, false},
                           Variant{1, false, 7, 3, 5.0, false, false},
                           Variant{4, true, -1, -1, 0, true, true}}) {
    MixedGeneratorOptions o;
    o.batch = 9;
    o.headsKv = 2;
    o.headsQ = 2 * v.group;
    o.headDim = 8;
    o.pageSize = 8;
    o.maxSeqlenQ = 24;
    o.maxSeqlenK = 70;
    o.causal = v.causal;
    o.windowLeft = v.windowLeft;
    o.windowRight = v.windowRight;
    o.softcap = v.softcap;
    o.sharedPrefixPages = cases % 2;
    if (v.alibi)
      for (int64_t h = 0; h < o.headsQ; ++h)
        o.alibiSlopes.push_back(0.1f * float(h + 1));
    if (v.sinks)
      for (int64_t h = 0; h < o.headsQ; ++h)
        o.sinks.push_back(float(h) - 2.f);
    const uint64_t seed = uint64_t(300 + cases++);
    Expected<MixedProblem> p = generateMixedProblem(o, seed);
    ASSERT_TRUE(p.ok()) << p.status().toString();
    AttentionData d =
        generateMixedInputs(*p, DType::BF16, Distribution::Outliers, seed);
    FA_ASSERT_OK(poisonUnreadCacheRows(*p, d));
    AttentionResult<double> r = referenceMixedAttentionF64(*p, d);
    AttentionResult<float> n = naiveMixedAttention(*p, DType::BF16, d);
    ASSERT_EQ(r.o.size(), p->qElements());
    ASSERT_EQ(r.lse.size(), p->lseElements());
    Expected<std::vector<DenseSequence>> seqs = gatherMixedSequences(*p, d);
    FA_ASSERT_OK(seqs);
    const std::string what = "case " + std::to_string(cases);
    for (int64_t b = 0; b < p->cache.batch; ++b) {
      const DenseSequence &s = (*seqs)[size_t(b)];
      const int64_t lq = p->queries(b), lk = p->cache.cacheSeqlens[size_t(b)];
      EXPECT_EQ(s.problem.shape.seqQ, lq);
      EXPECT_EQ(s.problem.shape.seqK, lk);
      decode += lq == 1;
      chunks += lq > 1;
      whole += lq > 0 && lq == lk;
      if (lq == 0 || lk == 0) {
        empty += lq == 0;
        EXPECT_TRUE(s.data.q.empty());
        expectMixedSequence<double>(*p, r, b, nullptr, what);
        continue;
      }
      AttentionResult<double> dr = referenceAttentionF64(s.problem, s.data);
      AttentionResult<float> dn =
          naiveAttention(s.problem, DType::BF16, s.data);
      ASSERT_FALSE(dr.o.empty()) << what;
      expectMixedSequence(*p, r, b, &dr, what);
      expectMixedSequence(*p, n, b, &dn, what);
    }
  }
  EXPECT_GT(decode, 0);
  EXPECT_GT(chunks, 0);
  EXPECT_GT(empty, 0);
  EXPECT_GT(whole, 0);
}

//===----------------------------------------------------------------------===//
// Host checks
//===----------------------------------------------------------------------===//

TEST(MixedReferenceTest, ChecksNameTheFirstBadEntry) {
  auto edited = [](auto edit) {
    MixedByHand h(true);
    edit(h.p);
    return mixedMessage(checkMixedProblem(h.p));
  };
  EXPECT_EQ(edited([](MixedProblem &) {}), "ok");
  EXPECT_EQ(edited([](MixedProblem &p) {
              p.cache.cacheSeqlens = {3, 1};
            }),
            "sequence 1 has 2 queries but only 1 keys: a mixed batch's "
            "queries are the last rows of their sequence (cu_seqlens_q[2] - "
            "cu_seqlens_q[1] = 2 > cache_seqlens[1] = 1)");
  EXPECT_EQ(edited([](MixedProblem &p) {
              p.cuSeqlensQ = {0, 1};
            }),
            "cu_seqlens_q has 2 entries, B + 1 = 3");
  EXPECT_EQ(edited([](MixedProblem &p) {
              p.cuSeqlensQ = {1, 1, 3};
            }),
            "cu_seqlens_q[0] must be 0");
  EXPECT_EQ(edited([](MixedProblem &p) {
              p.cuSeqlensQ = {0, 2, 1};
            }),
            "cu_seqlens_q is not non-decreasing: cu_seqlens_q[2] = 1 < "
            "cu_seqlens_q[1] = 2");
  EXPECT_EQ(edited([](MixedProblem &p) { p.totalQ = 4; }),
            "cu_seqlens_q[2] = 3 does not match total_q = 4, the rows of "
            "packed Q");
  EXPECT_EQ(edited([](MixedProblem &p) { p.cache.seqQ = 1; }),
            "max_seqlen_q = 1 is less than the length of sequence 1: "
            "cu_seqlens_q[2] - cu_seqlens_q[1] = 2");
  // The cache's checks first.
  EXPECT_EQ(edited([](MixedProblem &p) {
              p.cache.blockTable[1] = 4;
              p.cache.cacheSeqlens = {3, 1};
            }),
            "block_table[0][1] = 4 is out of range: the cache has 4 pages");
  EXPECT_EQ(edited([](MixedProblem &p) { p.cache.seqQ = 0; }),
            "invalid paged problem: B=2 Hq=1 Hkv=1 Lq=0 D=1 num_pages=4 "
            "max_pages=2 (all must be at least 1)");
  EXPECT_EQ(edited([](MixedProblem &p) { p.totalQ = int64_t(1) << 62; }),
            "invalid mixed problem: the byte size of Q and O (total_q*Hq*D "
            "elements) overflows 64 bits");
  MixedByHand h(true);
  AttentionData d = h.d;
  d.q.push_back(0);
  EXPECT_EQ(mixedMessage(checkMixedData(h.p, d)),
            "mixed data has 4/8/8 elements for Q/K cache/V cache, the problem "
            "needs 3/8/8");
  EXPECT_FALSE(gatherMixedSequences(h.p, d).ok());
  EXPECT_TRUE(referenceMixedAttentionF64(h.p, d).o.empty());
}

//===----------------------------------------------------------------------===//
// The generator
//===----------------------------------------------------------------------===//

TEST(MixedGeneratorTest, DrawnLengthsAndTheEdges) {
  MixedGeneratorOptions o;
  o.batch = 12;
  o.headsQ = 4;
  o.headsKv = 2;
  o.headDim = 8;
  o.pageSize = 16;
  o.maxSeqlenQ = 40;
  o.maxSeqlenK = 200;
  for (uint64_t seed : {1, 2, 3, 4}) {
    Expected<MixedProblem> p = generateMixedProblem(o, seed);
    FA_ASSERT_OK(p);
    Expected<MixedProblem> again = generateMixedProblem(o, seed);
    FA_ASSERT_OK(again);
    EXPECT_EQ(p->cuSeqlensQ, again->cuSeqlensQ);
    EXPECT_EQ(p->cache.blockTable, again->cache.blockTable);
    EXPECT_EQ(p->cache.cacheSeqlens, again->cache.cacheSeqlens);
    EXPECT_EQ(p->cache.seqQ, 40);
    EXPECT_EQ(p->cache.maxPages, 13); // ceil(200 / 16)
    int decode = 0, chunks = 0, empty = 0, whole = 0, pageMultiple = 0,
        longestDecode = 0;
    for (int64_t b = 0; b < o.batch; ++b) {
      const int64_t lq = p->queries(b), lk = p->cache.cacheSeqlens[size_t(b)];
      EXPECT_LE(lq, lk);
      EXPECT_LE(lq, 40);
      EXPECT_LE(lk, 200);
      decode += lq == 1;
      chunks += lq > 1;
      empty += lq == 0;
      whole += lq > 0 && lq == lk;
      pageMultiple += lk > 0 && lk % 16 == 0;
      longestDecode += lq == 1 && lk == 200;
    }
    EXPECT_GT(decode, 1) << seed;
    EXPECT_GT(chunks, 1) << seed;
    EXPECT_GE(empty, 1) << seed;
    EXPECT_GE(whole, 1) << seed;
    EXPECT_GE(pageMultiple, 1) << seed;
    EXPECT_GE(longestDecode, 1) << seed;
    // Pages: distinct (no sharing asked), in [0, num_pages); the entries
    // past a sequence's pages name an unused page.
    std::set<int32_t> used;
    int64_t uses = 0;
    for (int64_t b = 0; b < o.batch; ++b) {
      const int64_t lk = p->cache.cacheSeqlens[size_t(b)];
      const int64_t pages = (lk + 15) / 16;
      for (int64_t j = 0; j < 13; ++j) {
        const int32_t page = p->cache.blockTable[size_t(b * 13 + j)];
        ASSERT_GE(page, 0);
        ASSERT_LT(page, p->cache.numPages);
        if (j < pages) {
          used.insert(page);
          ++uses;
        }
      }
    }
    EXPECT_EQ(int64_t(used.size()), uses);
    EXPECT_EQ(p->cache.numPages, uses + 3);
  }
  EXPECT_NE(generateMixedProblem(o, 1)->cuSeqlensQ,
            generateMixedProblem(o, 2)->cuSeqlensQ);
  // Shared prefix pages: every sequence with keys starts on the same page.
  o.sharedPrefixPages = 2;
  o.shufflePages = false;
  Expected<MixedProblem> shared = generateMixedProblem(o, 5);
  FA_ASSERT_OK(shared);
  for (int64_t b = 0; b < o.batch; ++b)
    if (shared->cache.cacheSeqlens[size_t(b)] > 0) {
      EXPECT_EQ(shared->cache.blockTable[size_t(b * 13)], 0) << b;
    }
}

TEST(MixedGeneratorTest, GivenLengthsAndErrors) {
  MixedGeneratorOptions o;
  o.batch = 3;
  o.headsQ = o.headsKv = 1;
  o.headDim = 4;
  o.pageSize = 4;
  o.maxSeqlenQ = 8;
  o.maxSeqlenK = 20;
  o.seqlensQ = {1, 0, 8};
  o.seqlensK = {20, 3, 8};
  Expected<MixedProblem> p = generateMixedProblem(o, 1);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->cuSeqlensQ, (std::vector<int32_t>{0, 1, 1, 9}));
  EXPECT_EQ(p->cache.cacheSeqlens, (std::vector<int32_t>{20, 3, 8}));
  // Keys given, queries drawn: at most the keys.
  o.seqlensQ.clear();
  o.seqlensK = {0, 1, 2};
  p = generateMixedProblem(o, 2);
  FA_ASSERT_OK(p);
  for (int64_t b = 0; b < 3; ++b)
    EXPECT_LE(p->queries(b), b);
  o.seqlensQ = {1, 2, 3};
  o.seqlensK = {5, 1, 5};
  EXPECT_EQ(mixedMessage(generateMixedProblem(o, 1).status()),
            "sequence 1 has 2 queries but only 1 keys: a mixed batch's "
            "queries are the last rows of their sequence (cu_seqlens_q[2] - "
            "cu_seqlens_q[1] = 2 > cache_seqlens[1] = 1)");
  o.seqlensK = {5, 5};
  EXPECT_EQ(mixedMessage(generateMixedProblem(o, 1).status()),
            "mixed generator: cache_seqlens has 2 lengths, B = 3");
  o.seqlensK.clear();
  o.seqlensQ = {1, 9, 1};
  EXPECT_EQ(mixedMessage(generateMixedProblem(o, 1).status()),
            "mixed generator: seqlens_q[1] = 9 is not in [0, max_seqlen_q = "
            "8]");
  o.seqlensQ.clear();
  o.maxSeqlenQ = 21;
  EXPECT_EQ(mixedMessage(generateMixedProblem(o, 1).status()),
            "mixed generator: max_seqlen_q = 21, max_seqlen_k = 20 must "
            "satisfy 1 <= max_seqlen_q <= max_seqlen_k <= 2147483647");
}

// The problem validation gives a mixed kernel (fa-run --paged P --varlen).
TEST(MixedGeneratorTest, MixedProblemForAShape) {
  AttentionProblem dense{{4, 4, 2, 12, 100}, 16, true, 0.25};
  PagedCacheOptions cache;
  cache.pageSize = 16;
  VarlenOptions varlen;
  Expected<MixedProblem> p = mixedProblemFor(dense, cache, varlen, 7);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->cache.seqQ, 12);
  EXPECT_EQ(p->cache.maxPages, 7);
  EXPECT_TRUE(p->cache.causal);
  EXPECT_EQ(p->cache.scale, 0.25);
  varlen.seqlensQ = {12, 1, 0, 5};
  cache.cacheSeqlens = {12, 100, 3, 64};
  cache.sharePages = true;
  p = mixedProblemFor(dense, cache, varlen, 7);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->cuSeqlensQ, (std::vector<int32_t>{0, 12, 13, 13, 18}));
  EXPECT_EQ(p->cache.cacheSeqlens, cache.cacheSeqlens);
  // Shared pages: the first max(1, 7 / 2) = 3 of each sequence's.
  EXPECT_EQ(p->cache.blockTable[0], p->cache.blockTable[7]);
  EXPECT_EQ(p->cache.blockTable[21 + 2], p->cache.blockTable[7 + 2]);

  auto error = [&](auto edit) {
    AttentionProblem d = dense;
    PagedCacheOptions c = cache;
    VarlenOptions v = varlen;
    edit(d, c, v);
    return mixedMessage(mixedProblemFor(d, c, v, 7).status());
  };
  using D = AttentionProblem;
  using C = PagedCacheOptions;
  using V = VarlenOptions;
  EXPECT_EQ(error([](D &, C &, V &v) {
              v.seqlensK = {1, 1, 1, 1};
            }),
            "a mixed batch's key lengths are cache_seqlens (fa-run "
            "--cache-seqlens), not seqlens_k (--seqlens-k is for varlen "
            "kernels)");
  EXPECT_EQ(error([](D &d, C &, V &) { d.shape.seqQ = 101; }),
            "a mixed batch's longest query chunk Lq = 101 and longest "
            "history Lk = 100 must satisfy 1 <= Lq <= Lk <= 2147483647 (a "
            "sequence's queries are the last of its keys)");
  EXPECT_EQ(error([](D &, C &, V &v) {
              v.seqlensQ = {1, 1};
            }),
            "seqlens_q has 2 lengths, B = 4");
  EXPECT_EQ(error([](D &, C &c, V &) {
              c.cacheSeqlens = {12, 1, 0, 5, 5};
            }),
            "cache_seqlens has 5 lengths, B = 4");
  EXPECT_EQ(error([](D &, C &, V &v) { v.seqlensQ[1] = 13; }),
            "seqlens_q[1] = 13 is above max_seqlen_q = 12 (the shape's Lq)");
  EXPECT_EQ(error([](D &, C &c, V &) { c.cacheSeqlens[3] = 101; }),
            "cache_seqlens[3] = 101 is above the cache's capacity Lk = 100 "
            "(the shape's Lk)");
  EXPECT_EQ(error([](D &, C &c, V &) { c.cacheSeqlens[2] = -1; }),
            "cache_seqlens[2] = -1 is negative");
  EXPECT_EQ(error([](D &, C &c, V &) { c.cacheSeqlens[3] = 4; }),
            "cache_seqlens[3] = 4 is below seqlens_q[3] = 5: a mixed batch's "
            "queries are the last rows of their sequence");
}

} // namespace
